/* SPDX-License-Identifier: MIT */
/*
 * The checkpointed process of the benchmark.
 *   ckpt_bench_subject MB OUT_FD
 * Calls ckpt_prewarm at start (as libmsg does at msgInit; CAP_PREWARM=0:
 * not), fills MB megabytes with incompressible data, records t0, captures
 * itself to OUT_FD.  The original prints "CAPTURED <capture_ns> <cpu_ns>
 * <prewarm cpu_ns>" and exits; the
 * restored copy prints "RESTORED <resume_ns - t0> <resume_ns> <data ok> <process cpu_ns>"
 * (CLOCK_MONOTONIC is machine-wide, so the driver can subtract its own
 * timestamps) and exits.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"

/* The process's CPU time; after a restore, from the start of the process
 * that became this one (msg-restore's fork and exec included). */
static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t sum(const uint64_t *p, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s = s * 31 + p[i];
	return s;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	size_t n = (size_t)atoi(argv[1]) << 20;
	int fd = atoi(argv[2]);
	const char *pw = getenv("CAP_PREWARM");
	uint64_t w0 = cpu_ns();
	if (!pw || atoi(pw))
		ckpt_prewarm(NULL);
	uint64_t wcpu = cpu_ns() - w0;
	uint64_t *p = malloc(n), x = 88172645463325252ull;
	for (size_t i = 0; i < n / 8; i++) { /* xorshift: no zero pages, no compression */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		p[i] = x;
	}
	uint64_t want = sum(p, n / 8);
	struct ckpt_opts o;
	struct ckpt_error e;
	memset(&o, 0, sizeof(o));
	o.compress = argc > 3 && atoi(argv[3]);
	uint64_t c0 = cpu_ns(), t0 = now_ns();
	int r = ckpt_capture(fd, &o, &e);
	uint64_t t1 = now_ns(), c1 = cpu_ns();
	if (r == CKPT_RESTORED) {
		uint64_t rcpu = cpu_ns(); /* the clock msg-restore --ready-fd reports */
		int ok = sum(p, n / 8) == want;
		printf("RESTORED %llu %llu %d %llu\n", (unsigned long long)(t1 - t0), (unsigned long long)t1, ok,
		       (unsigned long long)rcpu);
		return ok ? 0 : 1;
	}
	if (r < 0) {
		fprintf(stderr, "capture failed: %s %s\n", ckpt_err_name(r), e.what);
		return 1;
	}
	printf("CAPTURED %llu %llu %llu\n", (unsigned long long)(t1 - t0), (unsigned long long)(c1 - c0),
	       (unsigned long long)wcpu);
	return 0;
}
