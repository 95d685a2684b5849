/* SPDX-License-Identifier: MIT */
/* Which pages to carry, decided with /proc/self/pagemap (not permissions):
 * anonymous VMAs: present or swapped pages that are not all zero;
 * private file VMAs: pages that are no longer the file's (COW copies:
 * relocated GOT, RELRO, .data), i.e. present-and-not-file, or swapped. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "capture_int.h"

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

/* The stack we run on changes under us (below the saved rsp, which is dead
 * after a restore): snapshot it so the CRC and the bytes sent agree. */
static int on_our_stack(const struct ckpt_vma *v)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	return here >= v->start && here < v->end;
}

/* Memory the process cannot read (PROT_NONE, write-only) comes through
 * /proc/self/mem, which ignores protections. */
static const void *page_src(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t addr, uint64_t n)
{
	size_t bytes = n * CKPT_PAGE_SIZE;
	if (on_our_stack(v)) {
		memcpy(c->bounce, (const void *)(uintptr_t)addr, bytes);
		return c->bounce;
	}
	if (v->prot & CKPT_PROT_READ)
		return (const void *)(uintptr_t)addr;
	if (pread(c->mem_fd, c->bounce, bytes, (off_t)addr) != (ssize_t)bytes)
		return NULL;
	return c->bounce;
}

static int keep(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t pm, uint64_t addr)
{
	if (v->flags & CKPT_VMA_FILE)
		return (pm & PM_SWAP) || ((pm & PM_PRESENT) && !(pm & PM_FILE));
	if (!(pm & (PM_PRESENT | PM_SWAP)))
		return 0;
	const void *p = page_src(c, v, addr, 1);
	return !p || !zero_page(p); /* unreadable: keep, the writer reports it */
}

static int flush_run(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t start, uint64_t n)
{
	if (!n)
		return 0;
	const void *src = page_src(c, v, start, n);
	if (!src)
		return ckpt_fail(c, CKPT_E_IO, "cannot read memory at %#llx", (unsigned long long)start);
	return ckpt_write_pages_sect(c, start, n, src);
}

static int write_vma(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t *pm)
{
	uint64_t run = 0, nrun = 0;
	for (uint64_t base = v->start; base < v->end; base += CHUNK * CKPT_PAGE_SIZE) {
		uint64_t n = (v->end - base) / CKPT_PAGE_SIZE;
		n = n > CHUNK ? CHUNK : n;
		ssize_t want = (ssize_t)(n * 8);
		if (pread(c->pagemap_fd, pm, (size_t)want, (off_t)(base / CKPT_PAGE_SIZE * 8)) != want)
			return ckpt_fail(c, CKPT_E_PROC, "pagemap read at %#llx: %s", (unsigned long long)base,
					 strerror(errno));
		for (uint64_t i = 0; i < n; i++) {
			uint64_t a = base + i * CKPT_PAGE_SIZE;
			int k = keep(c, v, pm[i], a);
			if (k && nrun && run + nrun * CKPT_PAGE_SIZE == a && nrun < CHUNK) {
				nrun++;
				continue;
			}
			int r = flush_run(c, v, run, nrun);
			if (r)
				return r;
			run = a, nrun = k ? 1 : 0;
		}
	}
	return flush_run(c, v, run, nrun);
}

int ckpt_write_memory(struct ckpt_ctx *c)
{
	uint64_t *pm = ckpt_alloc(&c->a, CHUNK * 8);
	c->bounce = ckpt_alloc(&c->a, (size_t)CHUNK * CKPT_PAGE_SIZE);
	if (!pm || !c->bounce)
		return ckpt_fail(c, CKPT_E_NOMEM, "capture arena full");
	for (uint32_t i = 0; i < c->n_vmas; i++) {
		const struct ckpt_vma *v = &c->vmas[i];
		if (v->flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR | CKPT_VMA_VSYSCALL | CKPT_VMA_SHARED))
			continue;
		int r = write_vma(c, v, pm);
		if (r)
			return r;
	}
	return 0;
}
