/* SPDX-License-Identifier: MIT */
/*
 * The prepared stop: a live copy in two receives, no tracking.  At the
 * first the stop's sink is sized from the process's anonymous resident
 * memory and a helper populates it (MADV_POPULATE_WRITE) while the process
 * runs on; at the second, the cut, the process copies everything into it
 * at the speed of a warm memcpy and the stop's helper streams it.
 *
 * Why: on a process that rewrites most of its memory between receives
 * (Dirichlet: half its image each sweep) a pre-copy cannot converge and the
 * stop copies the whole image anyway; what made that stop cost more than a
 * memcpy was the sink's fresh memory (its page faults and zeroing: 51 MB
 * into a fresh sink took 10-14 ms of CPU here, into a populated one 8-9, a
 * warm memcpy 7.6-9), and the write-protection of begin (1.7 ms at 51 MB)
 * with its async faults, which buy nothing when everything is copied.
 *
 * The helper is a clone(CLONE_VM) of the process (exit signal 0: the
 * application never sees it): raw system calls only (it shares our TLS), it
 * closes every descriptor of its copy of the table first (the image stream
 * must not outlive the process's own close), and it only touches the sink.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include "precopy_int.h"
#include "restorer/sys.h"

#define PREP_CHUNK (2ul << 20) /* one huge page: the stop request waits for one at most */
#define PREP_STACK (16u << 10)

static int prep_main(void *arg)
{
	struct prep *h = arg;

	sys3(SYS_close_range, 0, 0xffffffffl, 0);
	for (size_t off = 0; off < h->len && !h->stop; off += PREP_CHUNK) {
		size_t n = h->len - off < PREP_CHUNK ? h->len - off : PREP_CHUNK;
		if (sys3(SYS_madvise, h->base + off, n, 23 /* MADV_POPULATE_WRITE */) < 0)
			break; /* the stop takes the faults of the rest */
		h->done = off + n;
	}
	h->fin = 1;
	sys1(SYS_exit, 0);
	return 0;
}

/* The process's anonymous resident memory, from two counters (no walk):
 * what the stop will copy, within the engine's own few pages. */
static size_t anon_resident(void)
{
	char b[128];
	unsigned long size, res, shared;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, b, sizeof(b) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	b[n] = 0;
	if (sscanf(b, "%lu %lu %lu", &size, &res, &shared) != 3 || res < shared)
		return 0;
	return (size_t)(res - shared) * (size_t)sysconf(_SC_PAGESIZE);
}

size_t ckpt_prep_estimate(void)
{
	return anon_resident() + (1ul << 20); /* + the metadata */
}

/* Starts the helper on the sink's [0, len); without one the stop takes the
 * faults itself, as the one-receive copy does. */
void ckpt_prep_start(struct pc *p, size_t len)
{
	struct ckpt_ctx *c = p->c;
	unsigned char *stack = ckpt_alloc(&c->a, PREP_STACK);

	p->prep.base = p->sink;
	p->prep.len = len < p->sink_cap ? len : p->sink_cap;
	p->prep.done = 0;
	p->prep.stop = 0;
	p->prep.fin = 0;
	p->prep.pid = -1;
	if (!stack || !p->prep.len)
		return;
	long pid = clone(prep_main, stack + PREP_STACK, CLONE_VM, &p->prep);
	if (pid > 0)
		p->prep.pid = (pid_t)pid;
}

/* Bytes of the sink still to populate; 0 once the helper is done (joined). */
size_t ckpt_prep_left(struct pc *p)
{
	if (p->prep.pid > 0 && p->prep.fin)
		ckpt_prep_reap(&p->prep);
	return p->prep.pid > 0 ? p->prep.len - p->prep.done : 0;
}

/* Stops the helper after its chunk (at most one huge page) and reaps it. */
void ckpt_prep_reap(struct prep *h)
{
	if (h->pid <= 0)
		return;
	h->stop = 1;
	while (waitpid(h->pid, NULL, __WALL) < 0 && errno == EINTR)
		;
	h->pid = -1;
}
