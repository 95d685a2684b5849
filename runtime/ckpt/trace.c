/* SPDX-License-Identifier: MIT */
/* MSG_CKPT_TRACE=1: the capture's phases with their CPU and wall time,
 * page faults and sleeps on stderr, like msg-restore -v; how the fixed
 * costs were found and kept small. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "capture_int.h"

void ckpt_trace(const char *phase)
{
	static int on = -1;
	static long long last, last_wall;
	static long last_flt, last_sw;
	struct timespec t, w;
	struct rusage ru;
	if (on < 0) {
		const char *e = getenv("MSG_CKPT_TRACE");
		on = e && *e && *e != '0';
	}
	if (!on)
		return;
	int saved = errno; /* the application's, carried by the image */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	clock_gettime(CLOCK_MONOTONIC, &w);
	long long now = t.tv_sec * 1000000000ll + t.tv_nsec, wall = w.tv_sec * 1000000000ll + w.tv_nsec;
	getrusage(RUSAGE_SELF, &ru); /* page faults: first touches of code and scratch pages */
	if (phase && last)
		fprintf(stderr, "ckpt: %s %lld us (wall %lld), %ld faults, %ld sleeps\n", phase, (now - last) / 1000,
			(wall - last_wall) / 1000, ru.ru_minflt - last_flt, ru.ru_nvcsw - last_sw);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* the printing is not the next phase's */
	clock_gettime(CLOCK_MONOTONIC, &w);
	last = t.tv_sec * 1000000000ll + t.tv_nsec;
	last_wall = w.tv_sec * 1000000000ll + w.tv_nsec;
	last_flt = ru.ru_minflt;
	last_sw = ru.ru_nvcsw;
	errno = saved;
}
