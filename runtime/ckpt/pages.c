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

int ckpt_write_range(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t start, uint64_t end, uint64_t *sent,
		     uint64_t base)
{
	uint64_t run = 0, nrun = 0, *pm = c->pm;
	for (uint64_t at = start; at < end; at += CHUNK * CKPT_PAGE_SIZE) {
		uint64_t n = (end - at) / CKPT_PAGE_SIZE;
		n = n > CHUNK ? CHUNK : n;
		ssize_t want = (ssize_t)(n * 8);
		if (k_pread(c->pagemap_fd, pm, (size_t)want, (off_t)(at / CKPT_PAGE_SIZE * 8)) != want)
			return ckpt_fail(c, CKPT_E_PROC, "pagemap read at %#llx: %s", (unsigned long long)at,
					 strerror(errno));
		for (uint64_t i = 0; i < n; i++) {
			uint64_t a = at + i * CKPT_PAGE_SIZE;
			int k = keep(c, v, pm[i], a);
			if (k && nrun && run + nrun * CKPT_PAGE_SIZE == a && nrun < CHUNK) {
				nrun++;
				continue;
			}
			int r = flush(c, v, run, nrun, sent, base);
			if (r)
				return r;
			run = a, nrun = k ? 1 : 0;
		}
	}
	return flush(c, v, run, nrun, sent, base);
}

int ckpt_write_memory(struct ckpt_ctx *c)
{
	if (!c->pm)
		c->pm = ckpt_alloc(&c->a, CHUNK * 8);
	if (!c->bounce)
		c->bounce = ckpt_alloc(&c->a, (size_t)CHUNK * CKPT_PAGE_SIZE);
	if (!c->pm || !c->bounce)
		return ckpt_fail(c, CKPT_E_NOMEM, "capture arena full");
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
