/* SPDX-License-Identifier: MIT */
/* MSG_CKPT_TRACE=1: the capture's phases with their CPU time on stderr,
 * like msg-restore -v; how the fixed costs were found and kept small. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "capture_int.h"

void ckpt_trace(const char *phase)
{
	static int on = -1;
	static long long last;
	struct timespec t;
	if (on < 0) {
		const char *e = getenv("MSG_CKPT_TRACE");
		on = e && *e && *e != '0';
	}
	if (!on)
		return;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	long long now = t.tv_sec * 1000000000ll + t.tv_nsec;
	if (phase && last)
		fprintf(stderr, "ckpt: %s %lld us\n", phase, (now - last) / 1000);
	last = now;
}
