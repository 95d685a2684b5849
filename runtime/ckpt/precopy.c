/* SPDX-License-Identifier: MIT */
/*
 * Pre-copy live snapshot (DESIGN §7, the target design for regeneration).
 * begin:  write-protect every anonymous VMA (userfaultfd, async mode) and
 *         send identity + the tracked layout;
 * step:   while the process would block anyway, send pages: first every
 *         page once, then the ones written since (PAGEMAP_SCAN re-arms
 *         protection atomically);
 * finish: the short stop: final metadata, the pages written since the last
 *         step, zeros where a sent page has since been dropped, and every
 *         page of VMAs that are not tracked (file-private, new mappings).
 * The stream format is the pre-copy form of docs/image-format.md.
 *
 * The stop only copies: its sections (the last dirty pages included) are
 * gathered into a sink populated at begin, and a helper that shares the
 * address space (clone(CLONE_VM), no exit signal, no page-table copy)
 * writes them to the stream while the process runs on.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bgsnap.h"
#include "capture_int.h"
#include "crc32c.h"
#include "dirty.h"
#include "precopy_int.h"
#include "image_reader.h"
#include "restorer/sys.h"

#define PM_PRESENT (1ull << 63)
#define PM_SWAP (1ull << 62)

static struct pc *g_pc;

/* What a finished pre-copy leaves until ckpt_precopy_release(): the uffd
 * (closing it costs ~1 ms per 10 MiB), the sink and arena the helper still
 * reads, and the helper. */
static struct stale {
	int uffd;
	struct arena a;
	unsigned char *sink;
	size_t sink_cap;
	pid_t helper;
	int out_fd;
	unsigned char *buf;
	size_t len;
	const struct ckpt_crc_fix *fix;
	uint32_t n_fix;
	volatile long result; /* the helper's: 0 or -errno; 1 until it is done */
	int waited;
	struct bg *bg; /* a background snapshot's: result and stats there */
	int cmd_fd;
	struct prep *prep; /* a prepared stop's helper, told to stop at the cut */
} g_st = { .uffd = -1, .cmd_fd = -1 };
static struct ckpt_bg_stats g_bg_stats;
static int g_bg_ran;

#define SINK_MIN (16ul << 20)      /* reserved beyond the tracked memory */
#define SINK_POP_MIN (2ul << 20)   /* populated at least */
#define SINK_POP_MAX (256ul << 20) /* populated at most */
#define SINK_POP_STEP (2ul << 20)  /* populated per step at least: a huge page */
#define SINK_MAX (1ul << 30)       /* reserved at most */

/* The helper shares our memory and TLS: raw system calls only (no errno),
 * the restorer's (restorer/sys.h). */

/* A socket whose reader is gone must not kill us with SIGPIPE. */
static long helper_write(long fd, const void *p, size_t n)
{
	long r = sys6(SYS_sendto, fd, (long)(uintptr_t)p, (long)n, MSG_NOSIGNAL, 0, 0);
	return r == -ENOTSOCK ? sys3(SYS_write, fd, (long)(uintptr_t)p, (long)n) : r;
}

static int helper_main(void *arg)
{
	struct stale *s = arg;
	long fd = s->out_fd, uffd = s->uffd, r = 0;
	/* its own copy of the descriptor table: hold nothing but the stream
	 * and the tracker, whose last reference it is (the source closed its
	 * own): dropping the tracking costs ~1 ms per 10 MiB, paid here */
	for (long f = 0, lo = 0; f <= 1; f++) {
		long keep = f ? (fd > uffd ? fd : uffd) : (fd < uffd ? fd : uffd);
		if (keep > lo)
			sys3(SYS_close_range, lo, keep - 1, 0);
		lo = keep + 1;
		if (f)
			sys3(SYS_close_range, lo, 0xffffffffl, 0);
	}
	for (uint32_t i = 0; i < s->n_fix; i++) {
		uint32_t crc = ckpt_crc32c(0, s->buf + s->fix[i].off, s->fix[i].len);
		memcpy(s->buf + s->fix[i].off + s->fix[i].len, &crc, 4);
	}
	size_t off = 0;
	while (off < s->len) {
		r = helper_write(fd, s->buf + off, s->len - off);
		if (r == -EINTR)
			continue;
		if (r == -EAGAIN) {
			struct pollfd pf = { (int)fd, POLLOUT, 0 };
			sys3(SYS_poll, (long)(uintptr_t)&pf, 1, 1000);
			continue;
		}
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	s->result = off == s->len ? 0 : r < 0 ? r : -EIO;
	sys1(SYS_close, uffd);
	/* a prepared stop's helper may still be at its last chunk of the sink */
	for (int i = 0; s->prep && s->prep->pid > 0 && !s->prep->fin && i < 100000; i++) {
		struct timespec ts = { 0, 100000 };
		sys2(SYS_nanosleep, &ts, 0);
	}
	sys2(SYS_munmap, s->sink, s->sink_cap); /* the source no longer uses it */
	s->sink = NULL;
	sys1(SYS_exit, 0);
	return 0;
}

int ckpt_precopy_wait(struct ckpt_error *err)
{
	if (g_st.helper > 0 && !g_st.waited) {
		while (waitpid(g_st.helper, NULL, __WALL) < 0 && errno == EINTR)
			;
		g_st.waited = 1;
	}
	if (g_st.bg && g_st.waited) {
		g_bg_stats = g_st.bg->st;
		g_bg_ran = 1;
		if (g_st.bg->result != 0) {
			struct ckpt_ctx tmp = { .err = err };
			return ckpt_fail(&tmp, g_st.bg->result < 0 ? (int)g_st.bg->result : CKPT_E_IO, "%s",
					 g_st.bg->result > 0 ? "background snapshot: the helper ended before it was done"
							     : g_st.bg->why);
		}
		return 0;
	}
	if (g_st.result != 0) {
		struct ckpt_ctx tmp = { .err = err };
		return ckpt_fail(&tmp, CKPT_E_IO, "pre-copy helper: writing the stop's %zu bytes: %s", g_st.len,
				 g_st.result > 0 ? "it ended before it was done" : strerror((int)-g_st.result));
	}
	return 0;
}

void ckpt_precopy_stream(int out_fd)
{
	if (g_pc && g_pc->prepare)
		g_pc->c->out_fd = out_fd;
}

int ckpt_precopy_prepared(void)
{
	return g_pc && g_pc->prepare;
}

int ckpt_precopy_background(void)
{
	return g_pc && g_pc->bg;
}

int ckpt_precopy_stats(struct ckpt_bg_stats *s)
{
	if (s)
		*s = g_bg_stats;
	return g_bg_ran;
}

void ckpt_precopy_release(void)
{
	ckpt_precopy_wait(NULL);
	if (g_st.prep)
		ckpt_prep_reap(g_st.prep);
	if (g_st.uffd >= 0)
		close(g_st.uffd);
	if (g_st.cmd_fd >= 0)
		close(g_st.cmd_fd);
	if (g_st.sink && !g_st.bg) /* (a background snapshot's helper unmapped it) */
		munmap(g_st.sink, g_st.sink_cap);
	if (g_st.a.base)
		ckpt_arena_free(&g_st.a);
	g_st = (struct stale){ .uffd = -1, .cmd_fd = -1 };
}

int ckpt_precopy_available(void)
{
	static int known = -1;
	const char *off = getenv("MSG_CKPT_NO_UFFD_WP"); /* tests: a kernel without it */
	if (off && *off && *off != '0')
		return 0;
	if (known >= 0)
		return known;
	int uffd = ckpt_uffd_open(), pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	struct ckpt_page_region r;
	uint64_t a = (uint64_t)(uintptr_t)&r & ~(uint64_t)(CKPT_PAGE_SIZE - 1);
	struct ckpt_pm_scan_arg arg = { .size = sizeof(arg), .start = a, .end = a + CKPT_PAGE_SIZE,
					.vec = (uint64_t)(uintptr_t)&r, .vec_len = 1,
					.return_mask = CKPT_PAGE_IS_PRESENT };
	known = uffd >= 0 && pm >= 0 && ioctl(pm, CKPT_PAGEMAP_SCAN, &arg) >= 0;
	if (uffd >= 0)
		close(uffd);
	if (pm >= 0)
		close(pm);
	return known;
}

static int pc_fail(struct ckpt_error *err, int code, const char *what)
{
	struct ckpt_ctx tmp = { .err = err };
	return ckpt_fail(&tmp, code, "%s", what);
}

static int track_all(struct pc *p)
{
	struct ckpt_ctx *c = p->c;
	p->tr = ckpt_alloc(&c->a, sizeof(*p->tr) * c->n_vmas);
	if (!p->tr)
		return ckpt_fail(c, CKPT_E_NOMEM, "capture arena full");
	for (uint32_t i = 0; i < c->n_vmas; i++) {
		const struct ckpt_vma *v = &c->vmas[i];
		if (!(v->flags & CKPT_VMA_ANON))
			continue;
		if (p->sync ? ckpt_uffd_register(p->uffd, v->start, v->end) : ckpt_uffd_track(p->uffd, v->start, v->end))
			return ckpt_fail(c, CKPT_E_KERNEL, "userfaultfd write-protect of %#llx-%#llx failed",
					 (unsigned long long)v->start, (unsigned long long)v->end);
		struct track *t = &p->tr[p->n_tr++];
		t->start = t->cursor = v->start;
		t->end = v->end;
		t->vma = *v;
		t->sent = ckpt_alloc(&c->a, ((v->end - v->start) / CKPT_PAGE_SIZE + 63) / 64 * 8);
		if (!t->sent)
			return ckpt_fail(c, CKPT_E_NOMEM, "capture arena full");
	}
	return 0;
}

/* The stop writes into this instead of the stream: room for all the tracked
 * memory plus 16 MiB (address space only; a fuller sink is written
 * synchronously). A quarter of the tracked memory is populated by the
 * steps, while the process would block anyway, so a stop that copies up to
 * that takes no faults. Never here: populating 16 MiB took the source
 * seconds on a loaded 2-core VM (zeroing fresh huge pages), long enough for
 * its siblings' lag detector to fence it in the middle of its own copy. */
static int make_sink(struct pc *p)
{
	struct ckpt_ctx *c = p->c;
	size_t tracked = p->prepare ? ckpt_prep_estimate() : 0;
	for (uint32_t i = 0; i < p->n_tr; i++)
		tracked += p->tr[i].end - p->tr[i].start;
	size_t pop = tracked / 4 < SINK_POP_MIN ? SINK_POP_MIN : tracked / 4 > SINK_POP_MAX ? SINK_POP_MAX : tracked / 4;
	size_t cap = tracked + SINK_MIN > SINK_MAX ? SINK_MAX : tracked + SINK_MIN;
	if (p->prepare) /* all of it, by prepare.c's helper */
		pop = tracked < cap ? tracked : cap;
	const char *force = getenv("MSG_CKPT_SINK_BYTES"); /* tests: a sink that overflows */
	if (force && *force)
		pop = cap = (size_t)strtoull(force, NULL, 10);
	if (!cap)
		return 0;
	cap = (cap + CKPT_PAGE_SIZE - 1) & ~(size_t)(CKPT_PAGE_SIZE - 1);
	void *s = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s == MAP_FAILED)
		return 0; /* no sink: the stop writes to the stream itself */
	if (c->n_ex >= CKPT_MAX_EXCL) {
		munmap(s, cap);
		return 0;
	}
	pop = (pop + CKPT_PAGE_SIZE - 1) & ~(size_t)(CKPT_PAGE_SIZE - 1);
	madvise(s, cap, MADV_HUGEPAGE); /* fewer TLB misses in the stop's copy */
	p->sink = s;
	p->sink_cap = cap;
	p->sink_pop = pop < cap ? pop : cap;
	c->cap_fix = (uint32_t)(cap / CKPT_PAGE_SIZE + 256);
	c->fix = ckpt_alloc(&c->a, sizeof(*c->fix) * c->cap_fix);
	if (!c->fix)
		c->cap_fix = 0;
	c->ex_start[c->n_ex] = (uintptr_t)s;
	c->ex_end[c->n_ex++] = (uintptr_t)s + cap;
	return 0;
}

static int write_pre_layout(struct pc *p)
{
	struct ckpt_ctx *c = p->c;
	struct ckpt_vma *pre = ckpt_alloc(&c->a, sizeof(*pre) * (p->n_tr ? p->n_tr : 1));
	if (!pre)
		return ckpt_fail(c, CKPT_E_NOMEM, "capture arena full");
	for (uint32_t i = 0; i < p->n_tr; i++)
		pre[i] = p->tr[i].vma;
	int r = ckpt_write_hdr(c);
	if (!r)
		r = ckpt_write_sect(c, CKPT_S_IDENT, c->files, sizeof(*c->files) * c->n_files);
	if (!r)
		r = ckpt_write_sect(c, CKPT_S_CPU, &c->cpu, sizeof(c->cpu));
	if (!r)
		r = ckpt_write_sect(c, CKPT_S_MM, &c->mm, sizeof(c->mm));
	if (!r)
		r = ckpt_write_sect(c, CKPT_S_PRE_VMAS, pre, sizeof(*pre) * p->n_tr);
	return r;
}

void ckpt_precopy_abort(void)
{
	if (!g_pc)
		return;
	struct ckpt_ctx *c = g_pc->c;
	ckpt_precopy_release();
	ckpt_prep_reap(&g_pc->prep);
	ckpt_bg_stop(g_pc);
	if (g_pc->uffd >= 0)
		close(g_pc->uffd); /* drops registration and protection */
	if (g_pc->sink)
		munmap(g_pc->sink, g_pc->sink_cap);
	ckpt_close_proc_fds(c);
	g_pc = NULL;
	struct arena a = c->a;
	ckpt_arena_free(&a);
}

int ckpt_precopy_begin(int out_fd, const struct ckpt_opts *o, struct ckpt_error *err)
{
	struct ckpt_ctx *c = NULL;
	sigset_t old;
	if (g_pc)
		return pc_fail(err, CKPT_E_INVAL, "a pre-copy is already running");
	ckpt_precopy_release();
	int uffd = -1, prepare = o && o->prepare, sync = !prepare && ckpt_bg_wanted(o);
	/* (before the uffd exists: not an app fd; a prepared stop's cut
	 * collects everything, its begin nothing) */
	int r = prepare ? ckpt_prepare_bare(&c, out_fd, o, err, &old) : ckpt_prepare(&c, out_fd, o, err, &old);
	if (!r && sync && (uffd = ckpt_uffd_open_sync()) < 0)
		sync = 0; /* (not allowed here: the copying stop) */
	if (!r && !prepare && uffd < 0 && (uffd = ckpt_uffd_open()) < 0)
		r = ckpt_fail(c, CKPT_E_KERNEL, "userfaultfd with WP_ASYNC is not available");
	struct pc *p = c ? ckpt_alloc(&c->a, sizeof(*p)) : NULL;
	if (!r && !p)
		r = ckpt_fail(c, CKPT_E_NOMEM, "capture arena full");
	if (!r) {
		p->c = c;
		p->uffd = uffd;
		p->sync = sync;
		p->prepare = prepare;
		p->prep.pid = -1;
		c->own_fds[2] = uffd;
		c->hflags |= CKPT_HF_LIVE | CKPT_HF_PRECOPY;
		c->pages_type = CKPT_S_PRE_PAGES;
		p->vec = ckpt_alloc(&c->a, sizeof(*p->vec) * NVEC);
		p->zeros = ckpt_alloc(&c->a, (size_t)CKPT_MAX_PAGES_PER_SECT * CKPT_PAGE_SIZE);
		c->pm = ckpt_alloc(&c->a, CKPT_MAX_PAGES_PER_SECT * 8);
		c->bounce = ckpt_alloc(&c->a, (size_t)CKPT_MAX_PAGES_PER_SECT * CKPT_PAGE_SIZE);
		r = !p->vec || !p->zeros || !c->pm || !c->bounce ? ckpt_fail(c, CKPT_E_NOMEM, "capture arena full") : 0;
	}
	if (!r)
		r = ckpt_open_proc_fds(c);
	if (!r && !prepare)
		r = track_all(p);
	if (!r)
		r = make_sink(p);
	if (!r && prepare && p->sink)
		ckpt_prep_start(p, p->sink_pop);
	if (!r && p->sync)
		r = ckpt_bg_start(p);
	if (!r && !prepare) /* (a prepared stop's layout: at its cut) */
		r = write_pre_layout(p);
	if (!r)
		r = ckpt_flush(c);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (r) {
		if (p) {
			ckpt_prep_reap(&p->prep);
			ckpt_bg_stop(p);
		}
		if (p ? p->uffd >= 0 : uffd >= 0)
			close(uffd);
		if (c) {
			ckpt_close_proc_fds(c);
			if (p && p->sink)
				munmap(p->sink, p->sink_cap);
			struct arena a = c->a;
			ckpt_arena_free(&a);
		}
		return r;
	}
	g_pc = p;
	return 0;
}

/* First pass: every page once, up to *budget pages. */
static int first_pass(struct pc *p, uint64_t *budget)
{
	while (p->first < p->n_tr && *budget) {
		struct track *t = &p->tr[p->first];
		uint64_t n = (t->end - t->cursor) / CKPT_PAGE_SIZE;
		n = n > *budget ? *budget : n;
		n = n > CKPT_MAX_PAGES_PER_SECT ? CKPT_MAX_PAGES_PER_SECT : n;
		uint64_t e = t->cursor + n * CKPT_PAGE_SIZE;
		int r = ckpt_write_range(p->c, &t->vma, t->cursor, e, t->sent, t->start);
		if (r)
			return r;
		*budget -= n;
		t->cursor = e;
		if (e >= t->end)
			p->first++;
	}
	return 0;
}

static void mark_sent(struct track *t, uint64_t a, uint64_t n)
{
	for (uint64_t i = (a - t->start) / CKPT_PAGE_SIZE, e = i + n; i < e; i++)
		t->sent[i / 64] |= 1ull << (i % 64);
}

/* Pages of [s,e) (inside t) written since protected; rearm: protect them
 * again.  v is the VMA as it is now (its protection decides how to read). */
static int send_written(struct pc *p, struct track *t, const struct ckpt_vma *v, uint64_t s, uint64_t e, int rearm,
			uint64_t *budget)
{
	uint64_t at = s;
	while (at < e && *budget) {
		uint64_t walk_end = e;
		long n = ckpt_scan_written(p->c->pagemap_fd, at, e, rearm, p->vec, NVEC, *budget, &walk_end);
		if (n < 0)
			return ckpt_fail(p->c, CKPT_E_KERNEL, "PAGEMAP_SCAN failed at %#llx-%#llx: %s", (unsigned long long)at,
					 (unsigned long long)e, strerror(errno));
		for (long i = 0; i < n; i++)
			for (uint64_t a = p->vec[i].start; a < p->vec[i].end; a += CKPT_MAX_PAGES_PER_SECT * CKPT_PAGE_SIZE) {
				uint64_t k = (p->vec[i].end - a) / CKPT_PAGE_SIZE;
				k = k > CKPT_MAX_PAGES_PER_SECT ? CKPT_MAX_PAGES_PER_SECT : k;
				mark_sent(t, a, k);
				int r = ckpt_write_run(p->c, v, a, k);
				if (r)
					return r;
				*budget = *budget > k ? *budget - k : 0;
			}
		if (walk_end <= at)
			break;
		at = walk_end;
	}
	return 0;
}

/* One bounded piece of the sink's population (see make_sink). */
static void populate_sink(struct pc *p)
{
	size_t n = p->sink_pop - p->sink_done, step = p->sink_pop / 16 & ~(SINK_POP_STEP - 1);
	step = step < SINK_POP_STEP ? SINK_POP_STEP : step; /* 16 steps at most */
	n = n > step ? step : n;
	if (n && madvise(p->sink + p->sink_done, n, 23 /* MADV_POPULATE_WRITE */))
		p->sink_pop = p->sink_done; /* the stop takes the faults instead */
	else
		p->sink_done += n;
}

long ckpt_precopy_step(size_t max_bytes, struct ckpt_error *err)
{
	struct pc *p = g_pc;
	sigset_t all, old;
	if (!p)
		return pc_fail(err, CKPT_E_INVAL, "no pre-copy running");
	p->c->err = err;
	if (err)
		err->code = 0;
	if (p->prepare) /* nothing to send before the cut */
		return (long)ckpt_prep_left(p);
	uint64_t budget = max_bytes / CKPT_PAGE_SIZE;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	int r = first_pass(p, &budget);
	/* (a background snapshot sends what was written since at its cut) */
	for (uint32_t i = 0; !r && !p->bg && p->first >= p->n_tr && i < p->n_tr && budget; i++)
		r = send_written(p, &p->tr[i], &p->tr[i].vma, p->tr[i].start, p->tr[i].end, 1, &budget);
	if (!r)
		r = ckpt_flush(p->c); /* the receiver gets this step's pages now */
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (r)
		return r;
	/* the first pass before the sink: it is what the target waits for (a
	 * background snapshot's helper populates it while it is idle) */
	if (p->first >= p->n_tr && !p->bg)
		populate_sink(p);
	uint64_t left = p->bg ? 0 : p->sink_pop - p->sink_done;
	for (uint32_t i = p->first; i < p->n_tr; i++)
		left += p->tr[i].end - p->tr[i].cursor;
	return (long)left;
}

/* A VMA still registered since begin (mremap, munmap+mmap drop that).
 * Registration is per kernel VMA and maps lines are kernel VMAs, so one
 * page answers for the whole VMA (no page-table walk over all of it). */
static int still_tracked(struct pc *p, const struct ckpt_vma *v)
{
	struct ckpt_pm_scan_arg a = {
		.size = sizeof(a), .start = v->start, .end = v->end, .vec = (uint64_t)(uintptr_t)p->vec,
		.vec_len = 1, .max_pages = 1, .category_mask = CKPT_PAGE_IS_WPALLOWED,
		.return_mask = CKPT_PAGE_IS_WPALLOWED,
	};
	/* (sync mode has no WPALLOWED category: the helper heard of every
	 * munmap and mremap instead) */
	if (p->bg ? ckpt_bg_changed(p->bg, v->start, v->end)
		  : ioctl(p->c->pagemap_fd, CKPT_PAGEMAP_SCAN, &a) != 1 || p->vec[0].start != v->start)
		return 0;
	for (uint64_t x = v->start; x < v->end;) { /* and inside the layout sent */
		uint32_t k = 0;
		while (k < p->n_tr && !(x >= p->tr[k].start && x < p->tr[k].end))
			k++;
		if (k == p->n_tr)
			return 0;
		x = p->tr[k].end;
	}
	return 1;
}

int ckpt_pc_zero_run(struct pc *p, struct track *t, uint64_t s, uint64_t e)
{
	uint64_t run = 0, nrun = 0;
	for (uint64_t a = s; a <= e; a += CKPT_PAGE_SIZE) {
		uint64_t bit = (a - t->start) / CKPT_PAGE_SIZE;
		int sent = a < e && (t->sent[bit / 64] >> (bit % 64) & 1);
		if (sent && nrun && nrun < CKPT_MAX_PAGES_PER_SECT) {
			nrun++;
			continue;
		}
		if (nrun) {
			int r = ckpt_write_pages_sect(p->c, run, nrun, p->zeros);
			if (r)
				return r;
		}
		run = a, nrun = sent ? 1 : 0;
	}
	return 0;
}

/* The stop's one walk over a tracked range: pages written since the last
 * step are sent, sent pages that are gone now are sent as zeros, the rest
 * (present, still protected) the target has.  One PAGEMAP_SCAN pass
 * reporting every page's category, instead of one walk per category. */
static int send_final_range(struct pc *p, struct track *t, const struct ckpt_vma *v, uint64_t s, uint64_t e)
{
	uint64_t at = s;
	while (at < e) {
		/* only the pages that matter: written, or not present (PRESENT
		 * inverted: set = absent); present unwritten pages, the bulk,
		 * are not reported */
		struct ckpt_pm_scan_arg a = {
			.size = sizeof(a), .start = at, .end = e, .vec = (uint64_t)(uintptr_t)p->vec, .vec_len = NVEC,
			.category_inverted = CKPT_PAGE_IS_PRESENT,
			.category_anyof_mask = CKPT_PAGE_IS_WRITTEN | CKPT_PAGE_IS_PRESENT,
			.return_mask = CKPT_PAGE_IS_WRITTEN | CKPT_PAGE_IS_PRESENT | CKPT_PAGE_IS_SWAPPED,
		};
		long n = ioctl(p->c->pagemap_fd, CKPT_PAGEMAP_SCAN, &a);
		if (n < 0)
			return ckpt_fail(p->c, CKPT_E_KERNEL, "PAGEMAP_SCAN failed at %#llx-%#llx: %s",
					 (unsigned long long)at, (unsigned long long)e, strerror(errno));
		for (long i = 0; i < n; i++) {
			const struct ckpt_page_region *g = &p->vec[i];
			int r = 0;
			if (g->categories & CKPT_PAGE_IS_WRITTEN) {
				for (uint64_t x = g->start; !r && x < g->end; x += CKPT_MAX_PAGES_PER_SECT * CKPT_PAGE_SIZE) {
					uint64_t k = (g->end - x) / CKPT_PAGE_SIZE;
					k = k > CKPT_MAX_PAGES_PER_SECT ? CKPT_MAX_PAGES_PER_SECT : k;
					mark_sent(t, x, k);
					r = ckpt_write_run(p->c, v, x, k);
				}
			} else if ((g->categories & CKPT_PAGE_IS_PRESENT) && !(g->categories & CKPT_PAGE_IS_SWAPPED))
				r = ckpt_pc_zero_run(p, t, g->start, g->end); /* absent: dropped since sent? */
			if (r)
				return r;
		}
		if (a.walk_end <= at)
			break;
		at = a.walk_end;
	}
	return 0;
}

static int send_precopied(struct pc *p, const struct ckpt_vma *v)
{
	for (uint32_t i = 0; i < p->n_tr; i++) {
		struct track *t = &p->tr[i];
		uint64_t s = v->start > t->start ? v->start : t->start, e = v->end < t->end ? v->end : t->end;
		if (s >= e)
			continue;
		int r = send_final_range(p, t, v, s, e);
		if (r)
			return r;
	}
	return 0;
}

static int write_final(struct pc *p)
{
	struct ckpt_ctx *c = p->c;
	uint64_t inf = ~0ull;
	/* whatever the steps did not reach (the process is stopped: this is
	 * its content at the stop), copied into the sink like the rest, so a
	 * stop that comes early never waits for the stream's reader */
	int r = first_pass(p, &inf);
	ckpt_trace("stop: rest of the first pass");
	c->pages_type = CKPT_S_PAGES;
	if (!r)
		r = ckpt_write_meta_final(c);
	if (!r && !p->n_tr) /* a prepared stop: all of it, found by one scan */
		r = ckpt_write_memory(c);
	for (uint32_t i = 0; !r && p->n_tr && i < c->n_vmas; i++) {
		const struct ckpt_vma *v = &c->vmas[i];
		if (v->flags & CKPT_VMA_PRECOPIED)
			r = send_precopied(p, v);
		else if (ckpt_vma_carries_data(v))
			r = ckpt_write_range(c, v, v->start, v->end, NULL, 0);
	}
	if (!r)
		r = ckpt_write_end(c);
	return r;
}

/* Metadata as it is at the stop. */
static int recollect(struct pc *p, const struct ckpt_opts *o, const sigset_t *old)
{
	struct ckpt_ctx *c = p->c;
	uint64_t blocked;
	memcpy(&blocked, old, sizeof(blocked));
	c->o = o;
	c->n_files = c->n_vmas = c->n_fds = 0;
	memset(&c->mm, 0, sizeof(c->mm));
	memset(&c->sig, 0, sizeof(c->sig));
	memset(&c->th, 0, sizeof(c->th));
	int r = ckpt_collect(c, &blocked);
	for (uint32_t i = 0; !r && p->n_tr && i < c->n_vmas; i++)
		if ((c->vmas[i].flags & CKPT_VMA_ANON) && still_tracked(p, &c->vmas[i]))
			c->vmas[i].flags |= CKPT_VMA_PRECOPIED;
	return r;
}

int ckpt_precopy_finish(const struct ckpt_opts *o, struct ckpt_error *err)
{
	struct pc *p = g_pc;
	sigset_t all, old;
	if (!p)
		return pc_fail(err, CKPT_E_INVAL, "no pre-copy running");
	if (err)
		err->code = 0, err->what[0] = 0;
	p->c->err = err;
	ckpt_precopy_release(); /* an older tracker would be refused as an fd */
	/* (a prepared stop's helper, if the cut came early, populates on ahead
	 * of the copy; waiting for its chunk could cost a huge page's zeroing) */
	p->prep.stop = 1;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	ckpt_trace(NULL);
	int r = recollect(p, o, &old);
	ckpt_trace("stop: recollect (tracked check included)");
	g_pc = NULL; /* a restored copy has no pre-copy running */
	struct ckpt_ctx *c = p->c;
	if (!r) {
		if (ckpt_arch_save(&c->th.regs, c->xsave, c->cpu.xcr0))
			return ckpt_on_restored();
		r = ckpt_flush(c);
		if (!r && p->sink) {
			c->obuf = p->sink, c->ocap = p->sink_cap, c->olen = 0;
			c->defer = 1;
		}
		if (!r && p->prepare)
			r = write_pre_layout(p);
		ckpt_trace("stop: save + flush");
		if (!r)
			r = p->bg ? ckpt_bg_final(p) : write_final(p);
		ckpt_trace(p->bg ? "stop: final sections, the cut to the helper" : "stop: final sections (dirty pages)");
	}
	ckpt_close_proc_fds(c);
	if (p->bg) { /* its helper runs since begin and writes the image */
		if (r)
			ckpt_bg_stop(p);
		g_st = (struct stale){ .uffd = -1, .a = c->a, .sink = p->sink, .sink_cap = p->sink_cap,
				       .helper = p->helper, .bg = p->bg, .cmd_fd = p->bg->cmd_fd, .waited = !p->helper };
		sigprocmask(SIG_SETMASK, &old, NULL);
		return r;
	}
	/* The uffd stays open (pages already written are unprotected; the rest
	 * costs one async fault each) until ckpt_precopy_release(), which the
	 * runtime calls when it would block anyway; so do the sink and arena
	 * while the helper sends the stop's bytes. */
	g_st = (struct stale){ .uffd = p->uffd, .a = c->a, .sink = p->sink, .sink_cap = p->sink_cap,
			       .out_fd = c->out_fd, .buf = c->obuf, .len = c->defer ? c->olen : 0, .fix = c->fix,
			       .n_fix = c->defer ? c->n_fix : 0, .prep = p->prep.pid > 0 ? &p->prep : NULL };
	unsigned char *stack = !r && g_st.len ? ckpt_alloc(&c->a, HELPER_STACK) : NULL;
	if (stack) {
		g_st.a = c->a; /* (the allocation above is inside it) */
		g_st.result = 1;
		long pid = clone(helper_main, stack + HELPER_STACK, CLONE_VM, &g_st);
		if (pid <= 0)
			g_st.result = 0;
		if (pid > 0) {
			g_st.helper = (pid_t)pid;
			if (g_st.uffd >= 0)
				close(g_st.uffd); /* the helper's copy is the last: it drops the tracking */
			g_st.uffd = -1;
		}
	}
	if (!r && g_st.len && g_st.helper <= 0) { /* no helper: write it now */
		c->defer = 0; /* (ckpt_flush computes the deferred CRCs) */
		r = ckpt_flush(c);
		g_st.len = 0;
	}
	ckpt_trace("stop: helper start");
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}
