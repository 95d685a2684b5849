/* SPDX-License-Identifier: MIT */
/*
 * ckpt_bench_live [MB] [DIRTY_PCT]: the live snapshot's cost to the source.
 * The source's compute step (touching DIRTY_PCT % of its pages) is timed
 * alone and around a snapshot; the image goes into a pipe drained by another
 * process (as msgd would).  Two engines:
 *  fork:    ckpt_snapshot_live, then the step (copy-on-write faults);
 *  precopy: ckpt_precopy_begin and the first pass (ckpt_precopy_step) while
 *           the source "waits in msgrecv" (not counted, reported), the step
 *           (write-protect faults), then ckpt_precopy_finish (the stop).
 * Extra time is compared with the target: 5 ms + memcpy of the dirty pages.
 * Since 2026-11-27 the source runs the step a second time right after the
 * snapshot (both engines; extra = the source's time - 2 steps alone): the
 * background snapshot's stop copies nothing, the process pays instead a
 * wait for each page it writes before the helper saved it, and that must
 * be in the figure.  MSG_CKPT_BGSNAP=1: the background snapshot (else the
 * copying stop).  CPU time
 * (LIVE_CPU=1) does not hold time spent waiting for the helper: the wall
 * clock (the default) does, so both are reported.
 * The memcpy term is also measured where the stop finds the pages (after
 * the first pass and the step; memcpy_at_stop), shown beside the target.
 * The image goes to `msg-restore --check-only` reading a pipe (it verifies
 * every checksum: a run whose image is incomplete or damaged fails).  The
 * reader is spawned (posix_spawn, no fork of the source): a forked reader
 * would share every page of the source copy-on-write and charge it a copy
 * per page written, which msgd, a separate process, never does.
 */
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ckpt.h"

#define REPS 5

/* Wall time by default; LIVE_CPU=1 measures the source's own CPU time
 * instead (robust when other jobs load the machine: preemption is not
 * charged, page faults and copies are). */
static clockid_t g_clock = CLOCK_MONOTONIC;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(g_clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t g_n, g_stride;
static uint64_t g_begin;
static unsigned char *g_p;
static uint64_t g_faults, g_wait; /* the last background snapshot's faults after the cut */

static void work(int round)
{
	for (size_t i = 0; i < g_n; i += g_stride)
		g_p[i + (size_t)(round * 64) % 4096] += 1;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static double med(uint64_t *v)
{
	qsort(v, REPS, sizeof(*v), cmp);
	return v[REPS / 2] / 1e6;
}

static char g_restorer[PATH_MAX];

static pid_t drainer(int *wfd)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC))
		exit(1);
	fcntl(p[1], F_SETPIPE_SZ, 1 << 20);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[0], 0);
	if (!getenv("LIVE_VERBOSE")) /* (else: why the reader rejected an image) */
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	char *argv[] = { g_restorer, "--check-only", NULL };
	extern char **environ;
	pid_t pid;
	if (posix_spawn(&pid, g_restorer, &fa, NULL, argv, environ))
		exit(1);
	posix_spawn_file_actions_destroy(&fa);
	close(p[0]);
	*wfd = p[1];
	return pid;
}

/* The reader's verdict: the image was complete and intact. */
static void reader_ok(pid_t d, const char *engine)
{
	int st = 0;
	waitpid(d, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "%s: msg-restore --check-only rejected the image (status %d)\n", engine, st);
		exit(1);
	}
}

static void die(const char *what, const struct ckpt_error *e)
{
	fprintf(stderr, "%s: %s\n", what, e->what);
	exit(1);
}

/* Source time of one step with a fork-based snapshot before it. */
static uint64_t with_fork(int round)
{
	struct ckpt_error e;
	int wfd;
	pid_t d = drainer(&wfd);
	uint64_t t0 = now_ns();
	int r = ckpt_snapshot_live(wfd, NULL, &e);
	if (r == CKPT_RESTORED)
		exit(0);
	if (r < 0)
		die("snapshot", &e);
	close(wfd);
	work(round);
	work(round + 7); /* the next step */
	uint64_t t = now_ns() - t0;
	if (ckpt_snapshot_wait(&e))
		die("snapshot writer", &e);
	reader_ok(d, "fork");
	return t;
}

/* begin and the whole first pass into a new reader's pipe (*wfd), as the
 * source does while it waits in msgrecv; *t0, *t1: begin's start and end
 * (the reader's spawn before them). */
static pid_t begin_first_pass(int *wfd, uint64_t *t0, uint64_t *t1)
{
	struct ckpt_error e;
	pid_t d = drainer(wfd);
	*t0 = now_ns();
	if (ckpt_precopy_begin(*wfd, NULL, &e))
		die("precopy begin", &e);
	*t1 = now_ns();
	long left;
	while ((left = ckpt_precopy_step(64u << 20, &e)) > 0)
		;
	if (left < 0)
		die("precopy step", &e);
	return d;
}

/* Source time (step + finish) with pre-copy; *blocked gets begin and the
 * first pass, done while the source would wait in msgrecv anyway. */
static uint64_t with_precopy(int round, uint64_t *blocked)
{
	struct ckpt_error e;
	int wfd;
	uint64_t t0, t1;
	pid_t d = begin_first_pass(&wfd, &t0, &t1);
	uint64_t t2 = now_ns();
	work(round);
	uint64_t tw = now_ns();
	int r = ckpt_precopy_finish(NULL, &e);
	if (r == CKPT_RESTORED)
		exit(0);
	if (r < 0)
		die("precopy finish", &e);
	uint64_t t3 = now_ns();
	work(round + 7); /* the next step, at once: it races the helper */
	uint64_t t4 = now_ns();
	close(wfd);
	if (ckpt_precopy_wait(&e)) /* the helper wrote the stop's bytes */
		die("precopy helper", &e);
	ckpt_precopy_release(); /* where the source would block next */
	struct ckpt_bg_stats st;
	if (ckpt_precopy_stats(&st)) {
		g_faults = st.faults_post, g_wait = st.post_wait_bound_ns;
		if (getenv("LIVE_VERBOSE"))
			fprintf(stderr, "bgsnap: faults before the cut %llu, after %llu (service %.2f ms, wait bound %.2f ms, "
				"%.1f MB saved by faults of %.1f), arm %.2f ms, save all %.2f ms\n",
				(unsigned long long)st.faults_pre, (unsigned long long)st.faults_post, st.post_service_ns / 1e6,
				st.post_wait_bound_ns / 1e6, st.fault_bytes / 1e6, st.saved_bytes / 1e6, st.arm_ns / 1e6,
				st.copy_ns / 1e6);
	}
	reader_ok(d, "precopy");
	*blocked = t2 - t0;
	g_begin = t1 - t0;
	if (getenv("LIVE_VERBOSE"))
		fprintf(stderr, "precopy: begin %.2f first pass %.2f step %.2f finish %.2f next step %.2f ms\n",
			(t1 - t0) / 1e6, (t2 - t1) / 1e6, (tw - t2) / 1e6, (t3 - tw) / 1e6, (t4 - t3) / 1e6);
	return t4 - t2;
}

/* The target's memcpy term measured where the stop finds the pages: after
 * begin, the first pass (which streamed the whole image through the cache)
 * and the step, the dirty pages copied as the stop copies them (from where
 * they are, into a buffer), then the pre-copy abandoned. Shown beside the
 * warm memcpy (repeated back to back, so cached), not the target's term. */
static uint64_t memcpy_at_stop(int round, unsigned char *q)
{
	int wfd;
	uint64_t tb, t1;
	pid_t d = begin_first_pass(&wfd, &tb, &t1);
	work(round);
	uint64_t t0 = now_ns();
	for (size_t off = 0, k = 0; off < g_n; off += g_stride, k++)
		memcpy(q + k * 4096, g_p + off, 4096);
	uint64_t t = now_ns() - t0;
	ckpt_precopy_abort();
	close(wfd);
	int st;
	waitpid(d, &st, 0); /* (an incomplete image: the reader fails, as it should) */
	return t;
}

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? (size_t)atoi(argv[1]) : 114;
	int pct = argc > 2 ? atoi(argv[2]) : 100;
	for (int fd = 3; fd < 1024; fd++) /* inherited descriptors would be refused */
		close(fd);
	ssize_t ln = readlink("/proc/self/exe", g_restorer, sizeof(g_restorer) - 32);
	if (ln <= 0)
		return 1;
	g_restorer[ln] = 0;
	strcpy(strrchr(g_restorer, '/') + 1, "msg-restore"); /* next to us in bin/ */
	if (getenv("LIVE_CPU") && atoi(getenv("LIVE_CPU")))
		g_clock = CLOCK_PROCESS_CPUTIME_ID;
	g_n = mb << 20;
	g_stride = 4096 * (size_t)(pct > 0 && pct <= 100 ? 100 / pct : 1);
	g_p = malloc(g_n);
	unsigned char *q = malloc(g_n);
	memset(g_p, 1, g_n);
	memset(q, 2, g_n);
	size_t dirty = (g_n / g_stride) * 4096;
	uint64_t cpy[REPS], scat[REPS], base[REPS], fk[REPS], pc[REPS], blk[REPS], beg[REPS], nf[REPS], wt[REPS],
		atstop[REPS];
	for (int i = 0; i < REPS; i++) {
		uint64_t t0 = now_ns();
		memcpy(q, g_p, dirty);
		cpy[i] = now_ns() - t0;
		/* the same bytes copied from where the step dirtied them (every
		 * stride-th page), as any stop must: shown, not the target's term */
		t0 = now_ns();
		for (size_t off = 0, k = 0; off < g_n; off += g_stride, k++)
			memcpy(q + k * 4096, g_p + off, 4096);
		scat[i] = now_ns() - t0;
		t0 = now_ns();
		work(i);
		work(i + 7);
		base[i] = (now_ns() - t0) / 2;
	}
	for (int i = 0; i < REPS; i++)
		fk[i] = with_fork(i);
	for (int i = 0; i < REPS; i++)
		pc[i] = with_precopy(i, &blk[i]), beg[i] = g_begin, nf[i] = g_faults, wt[i] = g_wait;
	for (int i = 0; i < REPS; i++)
		atstop[i] = memcpy_at_stop(i + 3, q);
	double mnf = med(nf) * 1e6, mwt = med(wt);
	double mas = med(atstop), msc = med(scat), mc = med(cpy), mbase = med(base), mf = med(fk), mp = med(pc), mblk = med(blk), mbeg = med(beg);
	double target = 5 + mc;
	double load = 0;
	FILE *la = fopen("/proc/loadavg", "r");
	if (la && fscanf(la, "%lf", &load) != 1)
		load = -1;
	if (la)
		fclose(la);
	printf("live snapshot: %zu MB, step dirties %zu MB (%d%%), medians of %d, ms of %s (load %.1f)\n", mb,
	       dirty >> 20, pct, REPS, g_clock == CLOCK_MONOTONIC ? "wall time" : "source CPU time", load);
	printf("  memcpy(dirty) %.2f (the dirty pages from where they are: %.2f) | step alone %.2f (run twice) | target extra <= 5 + "
	       "memcpy = %.2f\n",
	       mc, msc, mbase, target);
	printf("  fork:    source time %.2f, extra %.2f (%.2fx target)\n", mf, mf - 2 * mbase, (mf - 2 * mbase) / target);
	printf("  precopy: source time %.2f, extra %.2f (%.2fx target; %.2fx of 5 + the scattered copy); while blocked "
	       "in msgrecv: begin + first pass %.2f (begin %.2f)\n",
	       mp, mp - 2 * mbase, (mp - 2 * mbase) / target, (mp - 2 * mbase) / (5 + msc), mblk, mbeg);
	printf("  memcpy(dirty) where the stop finds them (after the first pass and the step) %.2f: the extra is "
	       "%.2fx of 5 + that\n", mas, (mp - 2 * mbase) / (5 + mas));
	if (mnf > 0)
		printf("  background snapshot: %.0f write faults after the cut, the source waited <= %.2f ms (medians)\n",
		       mnf, mwt);
	return 0;
}
