/* SPDX-License-Identifier: MIT */
/* The pre-copy's state, shared by precopy.c and its background-snapshot
 * stop (bgsnap_stop.c). */
#ifndef MSG_CKPT_PRECOPY_INT_H
#define MSG_CKPT_PRECOPY_INT_H

#include <signal.h>
#include <sys/types.h>

#include "capture_int.h"
#include "dirty.h"

#define NVEC 4096
#define HELPER_STACK (64u << 10)

struct bg;

struct track {
	uint64_t start, end, cursor; /* cursor: first pass progress */
	uint64_t *sent;              /* pages sent at least once */
	struct ckpt_vma vma;
};

/* The prepared stop's helper (prepare.c). */
struct prep {
	unsigned char *base;
	size_t len;
	volatile size_t done; /* populated so far */
	volatile int stop, fin;
	pid_t pid;
};

struct pc {
	struct ckpt_ctx *c;
	int uffd;
	struct track *tr;
	uint32_t n_tr, first; /* first: index of the first-pass track */
	struct ckpt_page_region *vec;
	void *zeros;
	unsigned char *sink; /* the stop's output, populated by the steps */
	size_t sink_cap, sink_pop, sink_done; /* to populate, populated */
	struct bg *bg;       /* a background snapshot (bgsnap.c), or NULL */
	int sync;            /* its userfaultfd is synchronous (bgsnap.c says why) */
	pid_t helper;        /* its helper, from begin on */
	int prepare;         /* the prepared stop: nothing tracked, the sink populated by prep */
	struct prep prep;
};

/* Zero sections for the pages of [s,e) inside t that were sent. */
int ckpt_pc_zero_run(struct pc *p, struct track *t, uint64_t s, uint64_t e);

/* prepare.c: the prepared stop's sink. */
size_t ckpt_prep_estimate(void);
void ckpt_prep_start(struct pc *p, size_t len);
size_t ckpt_prep_left(struct pc *p);
void ckpt_prep_reap(struct prep *h);

/* bgsnap_stop.c: the background snapshot's side in the process. */
int ckpt_bg_wanted(const struct ckpt_opts *o);
int ckpt_bg_start(struct pc *p);
void ckpt_bg_stop(struct pc *p);
int ckpt_bg_final(struct pc *p);

#endif
