/* SPDX-License-Identifier: MIT */
/* Background snapshot (the pre-copy's stop that copies nothing): shared
 * between the process (precopy.c) and its helper (bgsnap.c).  Everything
 * here lives in the capture's arena: the helper must never write memory
 * that is write-protected, or it would wait for itself. */
#ifndef MSG_CKPT_BGSNAP_H
#define MSG_CKPT_BGSNAP_H

#include <stddef.h>
#include <stdint.h>

#include "capture_int.h"

struct bg_range {
	uint64_t start, end; /* a tracked VMA as registered at begin */
	uint64_t *sent;      /* process: sent by the first pass */
	uint64_t *dirty;     /* helper, before the cut: unprotected by a write fault */
	uint64_t *todo;      /* after the cut: to save before the process may write it */
	int readable;        /* at the cut (set by the process) */
};

#define BG_MAX_CHANGED 64

enum { BG_CMD_NONE, BG_CMD_PROTECT, BG_CMD_CUT, BG_CMD_QUIT };

struct bg {
	int uffd, cmd_fd, out_fd, pagemap_fd, mem_fd;
	int parent, self, no_copy_on_fault;
	int boost;    /* the helper's nice value */
	int hold_ms;  /* tests: after the cut, only faults for this long */
	struct bg_range *tr;
	uint32_t n_tr;
	uint64_t pre_chunk, chunk; /* bytes unprotected per fault before / after the cut */
	unsigned char *sink;
	size_t sink_cap, pop_want, pop_done; /* populated by the helper before the cut */
	/* the stop's part (process), then the helper's PAGES, then END */
	struct ckpt_crc_fix *fix;
	uint32_t n_fix, seq;
	size_t len, part2;
	size_t done, sent; /* helper: numbered and checksummed up to, written up to */
	int fixed;         /* the stop's part's CRCs computed */
	uint64_t n_pages, off;
	volatile int cmd, cmd_err;
	volatile uint32_t acks; /* futex word: one more per command done */
	/* before the cut: ranges unmapped or moved; their VMAs are not tracked
	 * any more (more than BG_MAX_CHANGED: none is) */
	uint64_t changed[BG_MAX_CHANGED][2];
	volatile uint32_t n_changed;
	volatile long result; /* 1 while it runs; 0: the image is complete; < 0: CKPT_E_* */
	uint64_t last_look;   /* helper: when it last read the userfaultfd */
	char why[160];
	struct ckpt_bg_stats st;
};

/* The helper (clone(CLONE_VM) of the process, raw system calls only). */
int ckpt_bg_helper(void *arg);
/* Process side: a command to the helper and its answer (bounded wait). */
int ckpt_bg_command(struct bg *b, int cmd, int helper_pid);
/* 1 if [s,e) was unmapped or moved since begin. */
int ckpt_bg_changed(const struct bg *b, uint64_t s, uint64_t e);

#endif
