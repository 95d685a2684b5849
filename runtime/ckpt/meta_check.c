/* SPDX-License-Identifier: MIT */
/* Semantic checks on parsed metadata: everything the restorer later uses as
 * an address, index or string is validated here, once. */
#include "ckpt.h"
#include "image_reader.h"

#define USER_TOP 0x800000000000ull
#define VSYSCALL 0xffffffffff600000ull

int ckpt_meta_check(struct ckpt_rd *rd, const struct ckpt_meta *m);
int ckpt_meta_check_pre(struct ckpt_rd *rd, const struct ckpt_meta *m);
int ckpt_meta_check_precopied(struct ckpt_rd *rd, const struct ckpt_meta *m);

static int str_ok(const char *s, uint32_t len, int absolute)
{
	if (len == 0 || len >= CKPT_PATH_MAX || s[len] != 0)
		return 0;
	for (uint32_t i = 0; i < len; i++)
		if (s[i] == 0)
			return 0;
	return !absolute || s[0] == '/';
}

static int check_files(struct ckpt_rd *rd, const struct ckpt_meta *m)
{
	if (m->n_files == 0 || !(m->files[0].flags & CKPT_FE_EXE))
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "IDENT: executable entry missing");
	for (uint32_t i = 0; i < m->n_files; i++)
		if (!str_ok(m->files[i].path, m->files[i].path_len, 1))
			return ckpt_rd_fail(rd, CKPT_E_FORMAT, "IDENT: entry %u has a bad path", i);
	return 0;
}

static int restorer_overlap(uint64_t s, uint64_t e)
{
	return s < CKPT_RESTORER_BASE + CKPT_RESTORER_SPAN && e > CKPT_RESTORER_BASE;
}

static int check_vma(struct ckpt_rd *rd, const struct ckpt_meta *m, const struct ckpt_vma *v, uint32_t i,
		     uint64_t prev_end)
{
	uint64_t mask = CKPT_PAGE_SIZE - 1;
	if ((v->start & mask) || (v->end & mask) || v->start >= v->end || v->start < prev_end)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "VMAS: entry %u [%p,%p) unaligned/unordered", i,
				    (void *)(uintptr_t)v->start, (void *)(uintptr_t)v->end);
	if (v->flags & CKPT_VMA_VSYSCALL)
		return v->start == VSYSCALL ? 0 : ckpt_rd_fail(rd, CKPT_E_FORMAT, "VMAS: bad vsyscall");
	if (v->end > USER_TOP || v->start < 4096 || restorer_overlap(v->start, v->end))
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "VMAS: entry %u [%p,%p) outside the allowed range", i,
				    (void *)(uintptr_t)v->start, (void *)(uintptr_t)v->end);
	if ((v->prot & ~7u) || ((v->flags & CKPT_VMA_PRECOPIED) && !m->precopy))
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "VMAS: entry %u bad prot/flags", i);
	int file = (v->flags & CKPT_VMA_FILE) != 0;
	if (file ? (v->file_idx < 0 || (uint32_t)v->file_idx >= m->n_files || (v->pgoff & mask))
		 : v->file_idx != -1)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "VMAS: entry %u bad file reference", i);
	if ((v->flags & CKPT_VMA_SHARED) && (!file || (v->prot & CKPT_PROT_WRITE)))
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "VMAS: entry %u writable shared", i);
	if (file && (v->flags & CKPT_VMA_ANON))
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "VMAS: entry %u both file and anon", i);
	return 0;
}

static int check_vmas(struct ckpt_rd *rd, const struct ckpt_meta *m, const struct ckpt_vma *v, uint32_t n)
{
	uint64_t prev = 0;
	for (uint32_t i = 0; i < n; i++) {
		int r = check_vma(rd, m, &v[i], i, prev);
		if (r)
			return r;
		prev = v[i].end;
	}
	return 0;
}

static int check_fds(struct ckpt_rd *rd, const struct ckpt_meta *m)
{
	for (uint32_t i = 0; i < m->n_fds; i++) {
		const struct ckpt_fd *f = &m->fds[i];
		if (f->fd < 0 || f->fd >= 65536 || f->kind < CKPT_FD_REG || f->kind > CKPT_FD_STDIO)
			return ckpt_rd_fail(rd, CKPT_E_FORMAT, "FILES: entry %u bad fd/kind", i);
		if (f->kind == CKPT_FD_STDIO ? f->fd > 2 : !str_ok(f->path, f->path_len, 1))
			return ckpt_rd_fail(rd, CKPT_E_FORMAT, "FILES: entry %u (fd %d) bad path", i, f->fd);
		for (uint32_t j = 0; j < i; j++)
			if (m->fds[j].fd == f->fd)
				return ckpt_rd_fail(rd, CKPT_E_FORMAT, "FILES: fd %d twice", f->fd);
	}
	return 0;
}

static int check_mm(struct ckpt_rd *rd, const struct ckpt_meta *m)
{
	const struct ckpt_mm *mm = m->mm;
	if (mm->auxv_words > CKPT_AUXV_WORDS || (mm->auxv_words & 1) || mm->auxv_words < 2 ||
	    mm->auxv[mm->auxv_words - 2] != 0)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "MM: bad auxv");
	uint32_t n = 0;
	while (n < CKPT_PATH_MAX && mm->cwd[n])
		n++;
	if (n == 0 || n == CKPT_PATH_MAX || mm->cwd[0] != '/')
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "MM: bad cwd");
	if (mm->special_end == 0)
		return mm->special_start || mm->vdso_start ? ckpt_rd_fail(rd, CKPT_E_FORMAT, "MM: bad vDSO layout") : 0;
	if (mm->special_start > mm->vdso_start || mm->vdso_start >= mm->special_end || mm->special_end > USER_TOP ||
	    (mm->special_start & (CKPT_PAGE_SIZE - 1)) || mm->vdso_size > mm->special_end - mm->vdso_start ||
	    restorer_overlap(mm->special_start, mm->special_end))
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "MM: bad vDSO layout");
	return 0;
}

static int check_thread(struct ckpt_rd *rd, const struct ckpt_meta *m)
{
	const struct ckpt_thread *t = m->th;
	if (t->regs.rip == 0 || t->regs.rip >= USER_TOP || t->regs.rsp >= USER_TOP)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "THREAD: rip/rsp outside user space");
	if (t->rseq_addr && (t->rseq_len < 32 || t->rseq_len > 4096 || (t->rseq_addr & 31)))
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "THREAD: bad rseq registration");
	if (m->cpu->n_comp > 32)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "CPU: bad component count");
	return 0;
}

int ckpt_meta_check(struct ckpt_rd *rd, const struct ckpt_meta *m)
{
	if (!m->th)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "metadata incomplete");
	int r = check_files(rd, m);
	if (!r)
		r = check_vmas(rd, m, m->vmas, m->n_vmas);
	if (!r)
		r = check_fds(rd, m);
	if (!r)
		r = check_mm(rd, m);
	if (!r)
		r = check_thread(rd, m);
	return r;
}

/* Pre-copy, before the final part: identity, mm, and the tracked layout
 * (anonymous, data-carrying VMAs only). */
int ckpt_meta_check_pre(struct ckpt_rd *rd, const struct ckpt_meta *m)
{
	if (!m->files || !m->cpu || !m->mm || !m->pre_vmas)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "pre-copy metadata incomplete");
	int r = check_files(rd, m);
	if (!r)
		r = check_mm(rd, m);
	if (!r)
		r = check_vmas(rd, m, m->pre_vmas, m->n_pre_vmas);
	for (uint32_t i = 0; !r && i < m->n_pre_vmas; i++)
		if (!(m->pre_vmas[i].flags & CKPT_VMA_ANON) || !ckpt_vma_carries_data(&m->pre_vmas[i]))
			r = ckpt_rd_fail(rd, CKPT_E_FORMAT, "PRE_VMAS: entry %u is not anonymous", i);
	return r;
}

static const struct ckpt_vma *pre_at(const struct ckpt_meta *m, uint64_t a)
{
	for (uint32_t i = 0; i < m->n_pre_vmas; i++)
		if (a >= m->pre_vmas[i].start && a < m->pre_vmas[i].end)
			return &m->pre_vmas[i];
	return 0;
}

/* A PRECOPIED VMA keeps pages already written into the pre-copy layout: it
 * must be anonymous and lie entirely inside that layout. */
int ckpt_meta_check_precopied(struct ckpt_rd *rd, const struct ckpt_meta *m)
{
	for (uint32_t i = 0; i < m->n_vmas; i++) {
		const struct ckpt_vma *v = &m->vmas[i];
		if (!(v->flags & CKPT_VMA_PRECOPIED))
			continue;
		if (!m->precopy || !(v->flags & CKPT_VMA_ANON))
			return ckpt_rd_fail(rd, CKPT_E_FORMAT, "VMAS: entry %u marked pre-copied", i);
		for (uint64_t a = v->start; a < v->end;) {
			const struct ckpt_vma *p = pre_at(m, a);
			if (!p)
				return ckpt_rd_fail(rd, CKPT_E_FORMAT, "VMAS: pre-copied entry %u outside PRE_VMAS", i);
			a = p->end;
		}
	}
	return 0;
}
