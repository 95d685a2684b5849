/* SPDX-License-Identifier: MIT */
/* vDSO: clock_gettime/gettimeofday/time after a restore go through the
 * vDSO glibc found at startup, so it must be where the image had it. */
#include <sys/auxv.h>
#include <sys/time.h>
#include <time.h>

#include "subject.h"

static int vdso_mapped_at(unsigned long addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int ok = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && strtoul(line, NULL, 16) == addr)
			ok = 1;
	if (f)
		fclose(f);
	return ok;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR);
	subj_checkpoint(argc, argv);
	clock_gettime(CLOCK_MONOTONIC, &b);
	struct timeval tv;
	gettimeofday(&tv, NULL);
	struct timespec r1, r2;
	clock_gettime(CLOCK_REALTIME, &r1);
	for (volatile int i = 0; i < 100000; i++)
		;
	clock_gettime(CLOCK_REALTIME, &r2);
	int mono = b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec);
	int real = (r2.tv_sec > r1.tv_sec || r2.tv_nsec >= r1.tv_nsec) && labs(tv.tv_sec - r1.tv_sec) <= 1;
	printf("vdso monotonic=%d realtime=%d same_place=%d\n", mono, real, vdso_mapped_at(vdso));
	return 0;
}
