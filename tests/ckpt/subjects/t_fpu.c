/* SPDX-License-Identifier: MIT */
/* x87 control word and MXCSR set to non-defaults before the checkpoint:
 * rounding and precision of later arithmetic must be the same. */
#include "subject.h"

static unsigned short get_cw(void)
{
	unsigned short cw;
	__asm__ volatile("fnstcw %0" : "=m"(cw));
	return cw;
}

static unsigned get_mxcsr(void)
{
	unsigned m;
	__asm__ volatile("stmxcsr %0" : "=m"(m));
	return m;
}

int main(int argc, char **argv)
{
	unsigned short cw = (unsigned short)((get_cw() & ~0x0f00) | 0x0c00 | 0x0000); /* round toward zero, 24-bit */
	__asm__ volatile("fldcw %0" : : "m"(cw));
	unsigned mx = (get_mxcsr() & ~0x6000u) | 0x4000u | 0x8040u; /* round up, FTZ, DAZ */
	__asm__ volatile("ldmxcsr %0" : : "m"(mx));
	volatile long double x = 1.0L;
	x /= 3.0L; /* keeps x87 state non-initial */
	(void)x;
	subj_checkpoint(argc, argv);
	volatile long double l = 2.0L;
	l /= 3.0L;
	volatile double d = 1.0;
	d /= 3.0;
	volatile float tiny = 1e-38f;
	tiny *= 1e-3f; /* flushed to zero under FTZ */
	printf("fpu cw=%04x mxcsr=%08x x87=%La sse=%a ftz=%a\n", get_cw(), get_mxcsr() & ~0x3fu, (long double)l, (double)d,
	       (double)tiny);
	return 0;
}
