/* SPDX-License-Identifier: MIT */
/* Which pages to carry, decided with /proc/self/pagemap (not permissions):
 * anonymous VMAs: present or swapped pages that are not all zero;
 * private file VMAs: pages that are no longer the file's (COW copies:
 * relocated GOT, RELRO, .data), i.e. present-and-not-file, or swapped. */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "capture_int.h"
#include "ksys.h"
#include "image_reader.h"
#include "dirty.h"

#define PM_PRESENT (1ull << 63)
#define PM_SWAP (1ull << 62)
#define PM_FILE (1ull << 61)
#define CHUNK CKPT_MAX_PAGES_PER_SECT

static int zero_page(const void *p)
{
	const uint64_t *q = p;
	for (unsigned i = 0; i < CKPT_PAGE_SIZE / 8; i += 4)
		if (q[i] | q[i + 1] | q[i + 2] | q[i + 3])
			return 0;
	return 1;
}

/* Memory that changes under us while it is written: the stack we run on
 * (below the saved rsp, dead after a restore) and the thread's TLS block:
 * the rseq area, which the kernel rewrites whenever we migrate between
 * CPUs, and libc's own TLS (errno: the writer's sendmsg on a pipe fails
 * with ENOTSOCK).  Such runs are copied first, so the CRC and the bytes
 * sent agree. */
static int on_our_stack(const struct ckpt_vma *v)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	return here >= v->start && here < v->end;
}

/* The pages from libc's TLS (errno) through the thread pointer and rseq:
 * libc's TLS lies right below the thread pointer (x86-64 TLS variant II),
 * so this span covers every TLS byte the capture itself can write. */
static void tls_window(const struct ckpt_ctx *c, uint64_t *s, uint64_t *e)
{
	uint64_t a = (uint64_t)(uintptr_t)&errno, fs = c->th.regs.fs_base, lo = a, hi = a + sizeof(int);
	if (fs && fs < lo)
		lo = fs;
	if (fs && fs + 64 > hi)
		hi = fs + 64;
	if (c->th.rseq_addr) {
		lo = c->th.rseq_addr < lo ? c->th.rseq_addr : lo;
		hi = c->th.rseq_addr + c->th.rseq_len > hi ? c->th.rseq_addr + c->th.rseq_len : hi;
	}
	*s = lo & ~(uint64_t)(CKPT_PAGE_SIZE - 1);
	*e = (hi + CKPT_PAGE_SIZE - 1) & ~(uint64_t)(CKPT_PAGE_SIZE - 1);
}

static int volatile_run(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t addr, uint64_t n)
{
	uint64_t s, e, end = addr + n * CKPT_PAGE_SIZE;
	if (on_our_stack(v))
		return 1;
	tls_window(c, &s, &e);
	return s < end && e > addr;
}

/* Memory the process cannot read (PROT_NONE, write-only) comes through
 * /proc/self/mem, which ignores protections. */
static const void *page_src(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t addr, uint64_t n)
{
	size_t bytes = n * CKPT_PAGE_SIZE;
	if (volatile_run(c, v, addr, n)) {
		memcpy(c->bounce, (const void *)(uintptr_t)addr, bytes);
		return c->bounce;
	}
	if (v->prot & CKPT_PROT_READ)
		return (const void *)(uintptr_t)addr;
	if (c->mem_fd < 0) /* opened on first need (a plain capture opens only pagemap) */
		c->mem_fd = c->own_fds[1] = k_open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	if (k_pread(c->mem_fd, c->bounce, bytes, (off_t)addr) != (ssize_t)bytes)
		return NULL;
	return c->bounce;
}

static int keep(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t pm, uint64_t addr)
{
	if (v->flags & CKPT_VMA_FILE)
		return (pm & PM_SWAP) || ((pm & PM_PRESENT) && !(pm & PM_FILE));
	if (!(pm & (PM_PRESENT | PM_SWAP)))
		return 0;
	/* Readable memory is tested in place (a copy into the bounce buffer
	 * first, for the stack and rseq pages, tells nothing more: the page
	 * is copied again when its run is written). */
	const void *p = v->prot & CKPT_PROT_READ ? (const void *)(uintptr_t)addr : page_src(c, v, addr, 1);
	return !p || !zero_page(p); /* unreadable: keep, the writer reports it */
}

static int write_run1(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t start, uint64_t n)
{
	if (!n)
		return 0;
	const void *src = page_src(c, v, start, n);
	if (!src)
		return ckpt_fail(c, CKPT_E_IO, "cannot read memory at %#llx", (unsigned long long)start);
	return ckpt_write_pages_sect(c, start, n, src);
}

/* The TLS block is often one VMA with its neighbours (a malloc'd buffer
 * right below it): only its pages go through the bounce buffer, not the
 * whole run (copying 1 MiB into fresh bounce pages was half of a 1 MiB
 * capture). */
int ckpt_write_run(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t start, uint64_t n)
{
	uint64_t p0, p1, end = start + n * CKPT_PAGE_SIZE;
	tls_window(c, &p0, &p1);
	if (n < 2 || on_our_stack(v) || p1 <= start || p0 >= end)
		return write_run1(c, v, start, n);
	p0 = p0 < start ? start : p0;
	p1 = p1 > end ? end : p1;
	int r = write_run1(c, v, start, (p0 - start) / CKPT_PAGE_SIZE);
	if (!r)
		r = write_run1(c, v, p0, (p1 - p0) / CKPT_PAGE_SIZE);
	return r ? r : write_run1(c, v, p1, (end - p1) / CKPT_PAGE_SIZE);
}

static void mark(uint64_t *sent, uint64_t base, uint64_t a, uint64_t n)
{
	for (uint64_t p = (a - base) / CKPT_PAGE_SIZE, e = p + n; p < e; p++)
		sent[p / 64] |= 1ull << (p % 64);
}

static int flush(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t a, uint64_t n, uint64_t *sent,
		 uint64_t base)
{
	if (sent && n)
		mark(sent, base, a, n);
	return ckpt_write_run(c, v, a, n);
}

/* The run being built: a kept page extends it, anything else ends it. */
struct run {
	uint64_t start, n;
	uint64_t *sent, base;
};

static int step(struct ckpt_ctx *c, const struct ckpt_vma *v, struct run *b, uint64_t a, int k)
{
	if (k && b->n && b->start + b->n * CKPT_PAGE_SIZE == a && b->n < CHUNK) {
		b->n++;
		return 0;
	}
	int r = flush(c, v, b->start, b->n, b->sent, b->base);
	b->start = a, b->n = k ? 1 : 0;
	return r;
}

static int write_range_scanned(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t start, uint64_t end,
			       struct run *b);

int ckpt_write_range(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t start, uint64_t end, uint64_t *sent,
		     uint64_t base)
{
	struct run b = { 0, 0, sent, base };
	int sr = write_range_scanned(c, v, start, end, &b);
	if (sr)
		return sr < 0 ? sr : 0;
	uint64_t *pm = c->pm;
	for (uint64_t at = start; at < end; at += CHUNK * CKPT_PAGE_SIZE) {
		uint64_t n = (end - at) / CKPT_PAGE_SIZE;
		n = n > CHUNK ? CHUNK : n;
		ssize_t want = (ssize_t)(n * 8);
		if (k_pread(c->pagemap_fd, pm, (size_t)want, (off_t)(at / CKPT_PAGE_SIZE * 8)) != want)
			return ckpt_fail(c, CKPT_E_PROC, "pagemap read at %#llx: %s", (unsigned long long)at,
					 strerror(errno));
		for (uint64_t i = 0; i < n; i++) {
			uint64_t a = at + i * CKPT_PAGE_SIZE;
			int r = step(c, v, &b, a, keep(c, v, pm[i], a));
			if (r)
				return r;
		}
	}
	return flush(c, v, b.start, b.n, sent, base);
}

/* PAGEMAP_SCAN (Linux 6.7) finds the candidate pages of a span of VMAs in
 * one ioctl, as runs: present or swapped, and neither a page of the file
 * nor the zero page (the same classification as keep() makes from pagemap
 * entries, less the zero test of anonymous data, still made here).
 * pread of pagemap returned 8 bytes for every page of every VMA, most of
 * them library text: ~0.1 ms of a small capture.  Asking whether a page
 * is the file's costs the kernel a look at its struct page (a cache miss
 * per page: 3 ms of a 114 MB stop), so it is asked only over file VMAs;
 * an anonymous VMA's pages never are. */
#define SCAN_VEC 256
#define PAGE_IS_FILE (1u << 2)
#define PAGE_IS_PFNZERO (1u << 5)

struct scan {
	struct ckpt_page_region *vec;
	long n, i;          /* regions in vec; the next one */
	uint64_t next, end; /* where the next ioctl starts; the end of the span */
	int file;           /* the span's VMAs are file VMAs */
};

static long scan_fill(struct ckpt_ctx *c, struct scan *s)
{
	struct ckpt_pm_scan_arg a = {
		.size = sizeof(a),
		.start = s->next,
		.end = s->end,
		.vec = (uint64_t)(uintptr_t)s->vec,
		.vec_len = SCAN_VEC,
		.category_inverted = (s->file ? PAGE_IS_FILE : 0) | PAGE_IS_PFNZERO,
		.category_mask = (s->file ? PAGE_IS_FILE : 0) | PAGE_IS_PFNZERO,
		.category_anyof_mask = CKPT_PAGE_IS_PRESENT | CKPT_PAGE_IS_SWAPPED,
		.return_mask = CKPT_PAGE_IS_PRESENT | CKPT_PAGE_IS_SWAPPED,
	};
	/* raw: errno is the application's, not yet in the image (TLS) */
	long n = sys3(__NR_ioctl, c->pagemap_fd, CKPT_PAGEMAP_SCAN, &a);
	s->n = n < 0 ? 0 : n, s->i = 0;
	s->next = n > 0 && a.walk_end > s->next ? a.walk_end : s->end;
	return n;
}

/* The candidate pages of v in [lo, hi), regions consumed in address order
 * into the run b. */
static int write_scanned_range(struct ckpt_ctx *c, const struct ckpt_vma *v, struct scan *s, uint64_t lo, uint64_t hi,
			       struct run *b)
{
	for (;;) {
		if (s->i == s->n) {
			if (s->next >= s->end)
				break;
			uint64_t at = s->next;
			long e = scan_fill(c, s);
			if (e < 0)
				return ckpt_fail(c, CKPT_E_PROC, "PAGEMAP_SCAN at %#llx: %s", (unsigned long long)at,
						 strerror((int)-e));
			continue;
		}
		const struct ckpt_page_region *g = &s->vec[s->i];
		if (g->start >= hi)
			break;
		uint64_t a0 = g->start > lo ? g->start : lo, a1 = g->end < hi ? g->end : hi;
		for (uint64_t a = a0; a < a1; a += CKPT_PAGE_SIZE) {
			int r = step(c, v, b, a, keep(c, v, PM_PRESENT, a));
			if (r)
				return r;
		}
		if (g->end > hi)
			break; /* the region goes on into the next VMA */
		s->i++;
	}
	return flush(c, v, b->start, b->n, b->sent, b->base);
}

static int write_vma_scanned(struct ckpt_ctx *c, const struct ckpt_vma *v, struct scan *s)
{
	struct run b = { 0, 0, NULL, 0 };
	return write_scanned_range(c, v, s, v->start, v->end, &b);
}

static int is_file(const struct ckpt_vma *v)
{
	return (v->flags & CKPT_VMA_FILE) != 0;
}

/* ckpt_write_range over an anonymous VMA: one scan instead of a pagemap
 * entry per page (whose PM_FILE bit costs the kernel a look at every
 * page's struct page).  1 if done, 0 if this kernel has no PAGEMAP_SCAN
 * (nothing written then), < 0 on error. */
static int write_range_scanned(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t start, uint64_t end,
			       struct run *b)
{
	if (is_file(v) || c->no_scan || c->dry || start >= end)
		return 0;
	if (!c->scan_vec)
		c->scan_vec = ckpt_alloc(&c->a, SCAN_VEC * sizeof(*c->scan_vec));
	struct scan s = { c->scan_vec, 0, 0, start, end, 0 };
	if (!s.vec)
		return 0;
	long e = scan_fill(c, &s);
	if (e < 0) {
		c->no_scan = 1;
		return 0;
	}
	int r = write_scanned_range(c, v, &s, start, end, b);
	return r ? r : 1;
}

/* A new span at VMA i: it and the data-carrying VMAs after it of its kind
 * (file or anonymous), up to the first of the other kind. */
static void span_at(const struct ckpt_ctx *c, uint32_t i, struct scan *s)
{
	const struct ckpt_vma *v = &c->vmas[i];
	s->file = is_file(v);
	s->next = v->start, s->end = v->end, s->n = s->i = 0;
	for (uint32_t j = i + 1; j < c->n_vmas; j++) {
		const struct ckpt_vma *w = &c->vmas[j];
		if (!ckpt_vma_carries_data(w))
			continue;
		if (is_file(w) != s->file)
			break;
		s->end = w->end;
	}
}

/* 1 if the scan served every VMA, 0 if this kernel has no PAGEMAP_SCAN
 * (nothing written then), < 0 on error. */
static int write_scanned(struct ckpt_ctx *c, struct ckpt_page_region *vec)
{
	struct scan s = { vec, 0, 0, 0, 0, 0 };
	int first = 1;
	if (!s.vec)
		return 0;
	for (uint32_t i = 0; i < c->n_vmas; i++) {
		const struct ckpt_vma *v = &c->vmas[i];
		if (!ckpt_vma_carries_data(v))
			continue;
		if (first || v->start >= s.end) {
			span_at(c, i, &s);
			long e = scan_fill(c, &s);
			if (e < 0 && first)
				return 0; /* no PAGEMAP_SCAN here */
			if (e < 0)
				return ckpt_fail(c, CKPT_E_PROC, "PAGEMAP_SCAN at %#llx: %s",
						 (unsigned long long)v->start, strerror((int)-e));
			first = 0;
		}
		int r = write_vma_scanned(c, v, &s);
		if (r)
			return r;
	}
	return 1;
}

/* ckpt_prewarm's write path (c->dry): what a capture writes into its
 * arena (the scan vector, the bounce copies of the stack and the TLS
 * pages, the gathered pieces), not a walk over every page of a process
 * that may already be large at start-up. */
static int dry_walk(struct ckpt_ctx *c, struct ckpt_page_region *vec)
{
	uint64_t s, e;
	if (vec)
		memset(vec, 0, SCAN_VEC * sizeof(*vec));
	tls_window(c, &s, &e);
	for (uint32_t i = 0; i < c->n_vmas; i++) {
		const struct ckpt_vma *v = &c->vmas[i];
		int r = 0;
		if (!ckpt_vma_carries_data(v))
			continue;
		if (on_our_stack(v))
			r = ckpt_write_range(c, v, v->start, v->end, NULL, 0);
		else if (s < v->end && e > v->start)
			r = ckpt_write_range(c, v, s > v->start ? s : v->start, e < v->end ? e : v->end, NULL, 0);
		if (r)
			return r;
	}
	return 0;
}

int ckpt_write_memory(struct ckpt_ctx *c)
{
	if (!c->pm)
		c->pm = ckpt_alloc(&c->a, CHUNK * 8);
	/* before the 8 MiB bounce buffer, of which a few pages are written:
	 * the kept arena ends after the last page written (arena.c) */
	if (!c->scan_vec)
		c->scan_vec = ckpt_alloc(&c->a, SCAN_VEC * sizeof(*c->scan_vec));
	struct ckpt_page_region *vec = c->scan_vec;
	if (!c->bounce)
		c->bounce = ckpt_alloc(&c->a, (size_t)CHUNK * CKPT_PAGE_SIZE);
	if (!c->pm || !c->bounce)
		return ckpt_fail(c, CKPT_E_NOMEM, "capture arena full");
	if (c->dry)
		return dry_walk(c, vec);
	int sr = write_scanned(c, vec);
	if (sr)
		return sr < 0 ? sr : 0;
	for (uint32_t i = 0; i < c->n_vmas; i++) {
		const struct ckpt_vma *v = &c->vmas[i];
		if (!ckpt_vma_carries_data(v))
			continue;
		int r = ckpt_write_range(c, v, v->start, v->end, NULL, 0);
		if (r)
			return r;
	}
	return 0;
}
