/* SPDX-License-Identifier: MIT */
/* The background snapshot's side in the process (bgsnap.c has the helper
 * and why the userfaultfd is synchronous): its start at begin, the stop
 * that marks what the helper must save, its end. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bgsnap.h"
#include "crc32c.h"
#include "image_reader.h"
#include "precopy_int.h"

/* The background snapshot with MSG_CKPT_BGSNAP=1 (MSG_CKPT_STOP_COPY=1
 * forces the copying stop), where it can run: not with compression (the
 * helper writes pages raw) nor a sink forced by tests.  Off by default:
 * measured in session 9 it did not lower the regeneration survivor's wall
 * time reliably and made the time to r verified longer, and a process that
 * writes between the first pass and the cut pays far more wall time
 * (bench/migration/README.md, bench/checkpoint/README.md). */
int ckpt_bg_wanted(const struct ckpt_opts *o)
{
	const char *on = getenv("MSG_CKPT_BGSNAP"), *old = getenv("MSG_CKPT_STOP_COPY"),
		   *sink = getenv("MSG_CKPT_SINK_BYTES");
	return on && *on && *on != '0' && !(old && *old && *old != '0') && !(sink && *sink) &&
	       !(o && o->compress);
}

static uint64_t env_kib(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);
	uint64_t k = v && *v ? strtoull(v, NULL, 10) : 0, b = k << 10;
	return k && !(b & (b - 1)) && b >= CKPT_PAGE_SIZE ? b : dflt; /* a power of two */
}

/* The helper from begin on: with a synchronous userfaultfd every write
 * to a protected page waits for it (even the process's own stack). */
int ckpt_bg_start(struct pc *p)
{
	struct ckpt_ctx *c = p->c;
	struct bg *b = ckpt_alloc(&c->a, sizeof(*b));
	unsigned char *stack = ckpt_alloc(&c->a, HELPER_STACK);
	if (!b || !stack || !p->sink)
		return ckpt_fail(c, CKPT_E_NOMEM, "background snapshot: no arena or sink");
	b->tr = ckpt_alloc(&c->a, sizeof(*b->tr) * (p->n_tr ? p->n_tr : 1));
	for (uint32_t i = 0; b->tr && i < p->n_tr; i++) {
		size_t words = ((p->tr[i].end - p->tr[i].start) / CKPT_PAGE_SIZE + 63) / 64 * 8;
		b->tr[i] = (struct bg_range){ p->tr[i].start, p->tr[i].end, p->tr[i].sent, ckpt_alloc(&c->a, words),
					      ckpt_alloc(&c->a, words), 0 };
		if (!b->tr[i].dirty || !b->tr[i].todo)
			b->tr = NULL;
	}
	if (!b->tr)
		return ckpt_fail(c, CKPT_E_NOMEM, "capture arena full");
	b->n_tr = p->n_tr;
	b->cmd_fd = c->own_fds[3] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (b->cmd_fd < 0)
		return ckpt_fail(c, CKPT_E_KERNEL, "background snapshot: eventfd: %s", strerror(errno));
	b->uffd = p->uffd, b->out_fd = c->out_fd, b->pagemap_fd = c->pagemap_fd, b->mem_fd = c->mem_fd;
	b->parent = getpid();
	b->pre_chunk = env_kib("MSG_CKPT_BG_PRE_CHUNK_KB", 2u << 20);
	b->chunk = env_kib("MSG_CKPT_BG_CHUNK_KB", 1u << 20);
	const char *nice = getenv("MSG_CKPT_BG_NICE"); /* default -10; 0: none */
	b->boost = nice && *nice ? atoi(nice) : -10;
	const char *nc = getenv("MSG_TEST_BGSNAP_NO_COPY_ON_FAULT"); /* tests: the negative control */
	b->no_copy_on_fault = nc && *nc && *nc != '0';
	const char *hold = getenv("MSG_TEST_BGSNAP_HOLD_MS"); /* tests: see h_sweep */
	b->hold_ms = hold && *hold ? atoi(hold) : 0;
	b->sink = p->sink, b->sink_cap = p->sink_cap;
	b->pop_done = p->sink_done;
	for (uint32_t i = 0; i < p->n_tr; i++)
		b->pop_want += p->tr[i].end - p->tr[i].start;
	b->pop_want = b->pop_want + (1u << 20) < p->sink_cap ? b->pop_want + (1u << 20) : p->sink_cap;
	b->pop_want &= ~(size_t)(CKPT_PAGE_SIZE - 1);
	b->result = 1;
	ckpt_crc32c(0, p->zeros, 64u << 10); /* its lazy tables: the helper writes no globals */
	long pid = clone(ckpt_bg_helper, stack + HELPER_STACK, CLONE_VM, b);
	if (pid <= 0)
		return ckpt_fail(c, CKPT_E_KERNEL, "background snapshot: clone: %s", strerror(errno));
	p->helper = (pid_t)pid;
	p->bg = b;
	int r = ckpt_bg_command(b, BG_CMD_PROTECT, p->helper);
	close(p->uffd); /* the helper's is the last reference (bgsnap.c) */
	p->uffd = c->own_fds[2] = -1;
	return r ? ckpt_fail(c, r, "background snapshot: write-protect at begin failed") : 0;
}

/* Ends the helper (its exit drops all protection) and waits for it. */
void ckpt_bg_stop(struct pc *p)
{
	if (p->helper <= 0)
		return;
	uint64_t one = 1;
	p->bg->cmd = BG_CMD_QUIT;
	if (write(p->bg->cmd_fd, &one, 8) != 8)
		kill(p->helper, SIGKILL);
	while (waitpid(p->helper, NULL, __WALL) < 0 && errno == EINTR)
		;
	p->helper = 0;
	p->sink = NULL; /* (the helper unmapped it) */
	if (p->c->own_fds[3] >= 0)
		close(p->c->own_fds[3]);
	p->c->own_fds[3] = p->bg->cmd_fd = -1;
}

/* At the cut, for a PRECOPIED VMA: zeros for sent pages dropped since, and
 * the pages the helper must save: not sent, or written since sent. */
static int bg_mark(struct pc *p, const struct ckpt_vma *v, uint64_t *todo)
{
	for (uint32_t k = 0; k < p->n_tr; k++) {
		struct track *t = &p->tr[k];
		struct bg_range *g = &p->bg->tr[k];
		uint64_t s = v->start > t->start ? v->start : t->start, e = v->end < t->end ? v->end : t->end;
		if (s >= e)
			continue;
		/* (one flag per tracked range: readable only if every part is) */
		g->readable = (g->readable != 2) && (v->prot & CKPT_PROT_READ) ? 1 : 2;
		for (uint64_t at = s; at < e;) {
			struct ckpt_pm_scan_arg a = {
				.size = sizeof(a), .start = at, .end = e, .vec = (uint64_t)(uintptr_t)p->vec, .vec_len = NVEC,
				.category_inverted = CKPT_PAGE_IS_PRESENT | CKPT_PAGE_IS_SWAPPED,
				.category_mask = CKPT_PAGE_IS_PRESENT | CKPT_PAGE_IS_SWAPPED,
				.return_mask = CKPT_PAGE_IS_PRESENT,
			};
			long n = ioctl(p->c->pagemap_fd, CKPT_PAGEMAP_SCAN, &a);
			if (n < 0)
				return ckpt_fail(p->c, CKPT_E_KERNEL, "PAGEMAP_SCAN failed: %s", strerror(errno));
			for (long i = 0; i < n; i++) {
				int r = ckpt_pc_zero_run(p, t, p->vec[i].start, p->vec[i].end);
				if (r)
					return r;
			}
			if (n < NVEC || a.walk_end <= at)
				break;
			at = a.walk_end;
		}
		for (uint64_t i = (s - t->start) / CKPT_PAGE_SIZE, n = (e - t->start) / CKPT_PAGE_SIZE; i < n;) {
			if (!(i % 64) && i + 64 <= n) {
				uint64_t w = ~t->sent[i / 64] | g->dirty[i / 64];
				g->todo[i / 64] |= w;
				*todo += (uint64_t)__builtin_popcountll(w);
				i += 64;
				continue;
			}
			if (!(t->sent[i / 64] >> (i % 64) & 1) || (g->dirty[i / 64] >> (i % 64) & 1)) {
				g->todo[i / 64] |= 1ull << (i % 64);
				++*todo;
			}
			i++;
		}
	}
	return 0;
}

/* A sink too small for them: the process writes the to-do pages itself
 * (the copying stop), the helper then only writes the sink. */
static int bg_send_todo(struct pc *p)
{
	struct ckpt_ctx *c = p->c;
	for (uint32_t i = 0; i < c->n_vmas; i++) {
		const struct ckpt_vma *v = &c->vmas[i];
		if (!(v->flags & CKPT_VMA_PRECOPIED))
			continue;
		for (uint32_t k = 0; k < p->n_tr; k++) {
			struct track *t = &p->tr[k];
			uint64_t *todo = p->bg->tr[k].todo;
			uint64_t s = v->start > t->start ? v->start : t->start, e = v->end < t->end ? v->end : t->end;
			for (uint64_t a = s; a < e; a += CKPT_PAGE_SIZE) {
				uint64_t b = (a - t->start) / CKPT_PAGE_SIZE;
				if (!(todo[b / 64] >> (b % 64) & 1))
					continue;
				todo[b / 64] &= ~(1ull << (b % 64));
				int r = ckpt_write_range(c, v, a, a + CKPT_PAGE_SIZE, NULL, 0);
				if (r)
					return r;
			}
		}
	}
	return 0;
}

/* The background snapshot's stop: the metadata, the zero runs and the
 * untracked VMAs' pages into the sink (as the copying stop), then the cut
 * to the helper: it protects again what was written, saves every to-do
 * page before the process may change it, and writes the sink. */
int ckpt_bg_final(struct pc *p)
{
	struct ckpt_ctx *c = p->c;
	struct bg *b = p->bg;
	uint64_t todo = 0;
	c->pages_type = CKPT_S_PAGES;
	int r = ckpt_write_meta_final(c);
	for (uint32_t i = 0; !r && i < c->n_vmas; i++) {
		const struct ckpt_vma *v = &c->vmas[i];
		if (v->flags & CKPT_VMA_PRECOPIED)
			r = bg_mark(p, v, &todo);
		else if (ckpt_vma_carries_data(v))
			r = ckpt_write_range(c, v, v->start, v->end, NULL, 0);
	}
	ckpt_trace("stop: final sections, to-do pages marked");
	/* room for every to-do page as its own section, and END */
	if (!r && (c->obuf != p->sink || c->olen + todo * (CKPT_PAGE_SIZE + 64) + 4096 > p->sink_cap))
		r = bg_send_todo(p);
	if (r)
		return r;
	b->len = b->part2 = c->olen;
	b->seq = c->seq, b->n_pages = c->n_pages, b->off = c->off;
	b->fix = c->fix, b->n_fix = c->n_fix;
	r = ckpt_bg_command(b, BG_CMD_CUT, p->helper);
	return r ? ckpt_fail(c, r, "background snapshot: the cut failed: %s", b->why) : 0;
}

