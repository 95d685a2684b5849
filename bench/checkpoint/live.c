/* SPDX-License-Identifier: MIT */
/*
 * ckpt_bench_live [MB] [ROUNDS]: the live snapshot's cost to the source.
 * The source's compute loop (touching every page ROUNDS times) is timed
 * without and with a snapshot taken just before it; the image goes into a
 * pipe drained by another process (as msgd would).  Extra time is compared
 * with the target: 5 ms + memcpy of the pages it dirtied (here: all).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void loop(unsigned char *p, size_t n, int rounds)
{
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < n; i += 4096)
			p[i + (size_t)(r * 64) % 4096] += 1;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double med(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	return v[n / 2] / 1e6;
}

static pid_t drainer(int *wfd)
{
	int p[2];
	if (pipe(p))
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		static char buf[1 << 20];
		close(p[1]);
		while (read(p[0], buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	close(p[0]);
	*wfd = p[1];
	return pid;
}

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 114, n = mb << 20;
	int rounds = argc > 2 ? atoi(argv[2]) : 1, reps = 5;
	for (int fd = 3; fd < 1024; fd++) /* inherited descriptors would be refused */
		close(fd);
	unsigned char *p = malloc(n), *q = malloc(n);
	memset(p, 1, n);
	memset(q, 2, n);
	uint64_t cpy[5], base[5], with[5], call[5];
	for (int i = 0; i < reps; i++) {
		uint64_t t0 = now_ns();
		memcpy(q, p, n);
		cpy[i] = now_ns() - t0;
		t0 = now_ns();
		loop(p, n, rounds);
		base[i] = now_ns() - t0;
	}
	for (int i = 0; i < reps; i++) {
		int wfd;
		struct ckpt_error e;
		pid_t d = drainer(&wfd);
		uint64_t t0 = now_ns();
		int r = ckpt_snapshot_live(wfd, NULL, &e);
		uint64_t t1 = now_ns();
		if (r == CKPT_RESTORED)
			return 0;
		if (r < 0) {
			fprintf(stderr, "snapshot failed: %s %s\n", ckpt_err_name(r), e.what);
			return 1;
		}
		close(wfd);
		loop(p, n, rounds);
		uint64_t t2 = now_ns();
		call[i] = t1 - t0;
		with[i] = t2 - t0;
		if (ckpt_snapshot_wait(&e) != 0) {
			fprintf(stderr, "snapshot writer failed: %s\n", e.what);
			return 1;
		}
		waitpid(d, NULL, 0);
	}
	double mc = med(cpy, reps), mb_ = med(base, reps), mw = med(with, reps), ms = med(call, reps);
	printf("live snapshot, %zu MB, loop touching every page %d time(s), medians of %d:\n", mb, rounds, reps);
	printf("  memcpy %.2f ms | loop alone %.2f ms | snapshot call %.2f ms | loop+snapshot %.2f ms\n", mc, mb_, ms,
	       mw);
	printf("  source extra time %.2f ms; target 5 ms + memcpy of dirty pages = %.2f ms; ratio %.2f\n", mw - mb_,
	       5 + mc, (mw - mb_) / (5 + mc));
	return 0;
}
