// SPDX-License-Identifier: GPL-2.0
/*
 * Semantic checks on a framed image: every path, index, address and range
 * the restorer will use, checked once (the same rules as the user-level
 * restorer's runtime/ckpt/meta_check.c).
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/errno.h>
#include "reader.h"

#define USER_TOP 0x800000000000ULL
#define VSYSCALL_ADDR 0xffffffffff600000ULL
#define BAD(e, ...) mm_fail(e, -EINVAL, CKPT_E_FORMAT, __VA_ARGS__)

static bool str_ok(const char *s, u32 len, bool absolute)
{
	if (!len || len >= CKPT_PATH_MAX || s[len] || strnlen(s, len) != len)
		return false;
	return !absolute || s[0] == '/';
}

static bool restorer_overlap(u64 s, u64 e)
{
	return s < CKPT_RESTORER_BASE + CKPT_RESTORER_SPAN && e > CKPT_RESTORER_BASE;
}

static int check_ents(const struct mm_image *im, struct mm_err *e)
{
	u32 i;

	if (!im->nr_ents || !(im->ents[0].flags & CKPT_FE_EXE))
		return BAD(e, "IDENT: executable entry missing");
	for (i = 0; i < im->nr_ents; i++)
		if (!str_ok(im->ents[i].path, im->ents[i].path_len, true))
			return BAD(e, "IDENT: entry %u has a bad path", i);
	return 0;
}

static int check_vma(const struct mm_image *im, u32 i, u64 prev_end,
		     struct mm_err *e)
{
	const struct ckpt_vma *v = &im->vmas[i];
	u64 mask = CKPT_PAGE_SIZE - 1;
	bool file = v->flags & CKPT_VMA_FILE;

	if ((v->start & mask) || (v->end & mask) || v->start >= v->end ||
	    v->start < prev_end)
		return BAD(e, "VMAS: entry %u unaligned/unordered", i);
	if (v->flags & CKPT_VMA_VSYSCALL)
		return v->start == VSYSCALL_ADDR ? 0 : BAD(e, "VMAS: bad vsyscall");
	if (v->end > USER_TOP || v->start < CKPT_PAGE_SIZE ||
	    restorer_overlap(v->start, v->end))
		return BAD(e, "VMAS: entry %u [%llx,%llx) outside the allowed range",
			   i, v->start, v->end);
	if (v->prot & ~7U)
		return BAD(e, "VMAS: entry %u bad prot", i);
	if (file ? (v->file_idx < 0 || v->file_idx >= im->nr_ents || (v->pgoff & mask)) :
		   v->file_idx != -1)
		return BAD(e, "VMAS: entry %u bad file reference", i);
	if ((v->flags & CKPT_VMA_SHARED) && (!file || (v->prot & CKPT_PROT_WRITE)))
		return BAD(e, "VMAS: entry %u writable shared", i);
	if (file && (v->flags & CKPT_VMA_ANON))
		return BAD(e, "VMAS: entry %u both file and anon", i);
	return 0;
}

static int check_vmas(const struct mm_image *im, struct mm_err *e)
{
	u64 prev = 0;
	u32 i;
	int err;

	for (i = 0; i < im->nr_vmas; i++) {
		err = check_vma(im, i, prev, e);
		if (err)
			return err;
		prev = im->vmas[i].end;
	}
	return 0;
}

static int check_fds(const struct mm_image *im, struct mm_err *e)
{
	u32 i, j;

	for (i = 0; i < im->nr_fds; i++) {
		const struct ckpt_fd *f = &im->fds[i];

		if (f->fd < 0 || f->fd >= CKPT_MAX_FDS || f->kind < CKPT_FD_REG ||
		    f->kind > CKPT_FD_STDIO)
			return BAD(e, "FILES: entry %u bad fd/kind", i);
		if (f->kind == CKPT_FD_STDIO ? f->fd > 2 :
		    !str_ok(f->path, f->path_len, true))
			return BAD(e, "FILES: entry %u (fd %d) bad path", i, f->fd);
		for (j = 0; j < i; j++)
			if (im->fds[j].fd == f->fd)
				return BAD(e, "FILES: fd %d twice", f->fd);
	}
	return 0;
}

static int check_mm(const struct mm_image *im, struct mm_err *e)
{
	const struct ckpt_mm *m = im->mm;
	u32 n = strnlen(m->cwd, CKPT_PATH_MAX);

	if (m->auxv_words > CKPT_AUXV_WORDS || (m->auxv_words & 1) ||
	    m->auxv_words < 2 || m->auxv[m->auxv_words - 2] != 0)
		return BAD(e, "MM: bad auxv");
	if (!n || n == CKPT_PATH_MAX || m->cwd[0] != '/')
		return BAD(e, "MM: bad cwd");
	if (!m->special_end)
		return m->special_start || m->vdso_start ?
		       BAD(e, "MM: bad vDSO layout") : 0;
	if (m->special_start > m->vdso_start || m->vdso_start >= m->special_end ||
	    m->special_end > USER_TOP || (m->special_start & (CKPT_PAGE_SIZE - 1)) ||
	    m->vdso_size > m->special_end - m->vdso_start ||
	    restorer_overlap(m->special_start, m->special_end))
		return BAD(e, "MM: bad vDSO layout");
	return 0;
}

static int check_thread(const struct mm_image *im, struct mm_err *e)
{
	const struct ckpt_thread *t = im->th;
	const struct ckpt_regs *r = &t->regs;

	if (!r->rip || r->rip >= USER_TOP || r->rsp >= USER_TOP)
		return BAD(e, "THREAD: rip/rsp outside user space");
	if (r->fs_base >= USER_TOP || r->gs_base >= USER_TOP)
		return BAD(e, "THREAD: fs/gs base outside user space");
	if (t->rseq_addr && (t->rseq_len < 32 || t->rseq_len > 4096 ||
			     (t->rseq_addr & 31) || t->rseq_addr >= USER_TOP))
		return BAD(e, "THREAD: bad rseq registration");
	if (im->cpu->n_comp > 32)
		return BAD(e, "CPU: bad component count");
	return 0;
}

/* Each PAGES run must lie inside one VMA whose contents it may carry. */
static int check_pages(const struct mm_image *im, struct mm_err *e)
{
	struct mm_run run;
	size_t off = im->pages_off;
	u32 i = 0;

	while (mm_next_pages(im, &off, &run)) {
		const struct ckpt_pages *ph = run.ph;
		u64 end = ph->addr + ph->npages * CKPT_PAGE_SIZE;
		const struct ckpt_vma *v;

		while (i < im->nr_vmas && im->vmas[i].end <= ph->addr)
			i++;
		/* Runs come in address order in practice; search if not. */
		if (i == im->nr_vmas || im->vmas[i].start > ph->addr)
			for (i = 0; i < im->nr_vmas && im->vmas[i].end <= ph->addr; i++)
				;
		v = i < im->nr_vmas ? &im->vmas[i] : NULL;
		if (!v || v->start > ph->addr || end > v->end ||
		    (v->flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR | CKPT_VMA_VSYSCALL |
				 CKPT_VMA_SHARED)))
			return BAD(e, "PAGES at %llx: not inside a restorable VMA",
				   ph->addr);
	}
	return 0;
}

int mm_check_meta(const struct mm_image *im, struct mm_err *e)
{
	if (!im->th)
		return BAD(e, "metadata incomplete");
	return check_ents(im, e) ?: check_vmas(im, e) ?: check_fds(im, e) ?:
	       check_mm(im, e) ?: check_thread(im, e) ?: check_pages(im, e);
}
