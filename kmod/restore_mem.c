// SPDX-License-Identifier: GPL-2.0
/*
 * Restore, past the point of no return: replace the caller's address
 * space with the image's. Everything but [vvar]/[vdso] (already placed as
 * the image wants, see restore_load.c) is unmapped; each VMA is mapped
 * back with its final protection; the carried pages are written through
 * FOLL_FORCE (as ptrace pokes do), which also fills read-only and private
 * file mappings; then the mm layout fields are set as PR_SET_MM_MAP would.
 */
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/err.h>
#include "restore.h"

static bool is_special(struct vm_area_struct *vma)
{
	const char *name = vma->vm_ops && vma->vm_ops->name ?
			   vma->vm_ops->name(vma) : NULL;

	return name && (!strcmp(name, "[vdso]") || !strncmp(name, "[vvar", 5));
}

/* Unmap every non-special mapping of the caller. */
static int unmap_all(struct mm_restore *r)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	unsigned long addr = 0, start, len;
	int err;

	for (;;) {
		mmap_read_lock(mm);
		vma = find_vma(mm, addr);
		while (vma && is_special(vma))
			vma = find_vma(mm, vma->vm_end);
		if (!vma) {
			mmap_read_unlock(mm);
			return 0;
		}
		start = vma->vm_start;
		len = vma->vm_end - vma->vm_start;
		mmap_read_unlock(mm);
		err = vm_munmap(start, len);
		if (err)
			return mm_fail(r->e, err, CKPT_E_MAP,
				       "cannot unmap %lx-%lx", start, start + len);
		addr = start + len;
	}
}

static int map_one(struct mm_restore *r, const struct ckpt_vma *v)
{
	unsigned long flags = MAP_FIXED, prot = 0, ret;
	struct file *file = NULL;

	if (v->prot & CKPT_PROT_READ)
		prot |= PROT_READ;
	if (v->prot & CKPT_PROT_WRITE)
		prot |= PROT_WRITE;
	if (v->prot & CKPT_PROT_EXEC)
		prot |= PROT_EXEC;
	flags |= (v->flags & CKPT_VMA_SHARED) ? MAP_SHARED : MAP_PRIVATE;
	if (v->flags & CKPT_VMA_FILE)
		file = r->map_files[v->file_idx];
	else
		flags |= MAP_ANONYMOUS;
	if (!file && (v->flags & CKPT_VMA_GROWSDOWN))
		flags |= MAP_GROWSDOWN;
	ret = vm_mmap(file, v->start, v->end - v->start, prot, flags,
		      file ? v->pgoff : 0);
	if (IS_ERR_VALUE(ret) || ret != v->start)
		return mm_fail(r->e, IS_ERR_VALUE(ret) ? (int)ret : -EFAULT,
			       CKPT_E_MAP, "cannot map %llx-%llx", v->start, v->end);
	return 0;
}

static int write_pages(struct mm_restore *r)
{
	struct mm_unzstd z = {};
	struct mm_run run;
	size_t off = r->im.pages_off;
	int err = 0;

	while (!err && mm_next_pages(&r->im, &off, &run)) {
		int len = run.ph->npages * CKPT_PAGE_SIZE;
		const u8 *data = mm_run_pages(&z, &run, r->e);

		if (!data)
			err = -EINVAL;
		else if (access_process_vm(current, run.ph->addr, (void *)data, len,
					   FOLL_FORCE | FOLL_WRITE) != len)
			err = mm_fail(r->e, -EFAULT, CKPT_E_MAP,
				      "cannot fill pages at %llx", run.ph->addr);
		cond_resched();
	}
	mm_unzstd_free(&z);
	return err;
}

/*
 * Decompress every compressed run once before the point of no return: a
 * frame that passed its CRC but does not decompress is refused here.
 */
int mmr_check_compressed(struct mm_restore *r)
{
	struct mm_unzstd z = {};
	struct mm_run run;
	size_t off = r->im.pages_off;
	int err = 0;

	while (!err && mm_next_pages(&r->im, &off, &run))
		if (run.zstd && !mm_run_pages(&z, &run, r->e))
			err = -EINVAL;
	mm_unzstd_free(&z);
	return err;
}

static void set_mm_fields(struct mm_restore *r)
{
	const struct ckpt_mm *m = r->im.mm;
	struct mm_struct *mm = current->mm;
	u32 i;

	mmap_write_lock(mm);
	mm->start_code = m->start_code;
	mm->end_code = m->end_code;
	mm->start_data = m->start_data;
	mm->end_data = m->end_data;
	mm->start_brk = m->start_brk;
	mm->brk = m->brk;
	mm->start_stack = m->start_stack;
	spin_lock(&mm->arg_lock);
	mm->arg_start = m->arg_start;
	mm->arg_end = m->arg_end;
	mm->env_start = m->env_start;
	mm->env_end = m->env_end;
	spin_unlock(&mm->arg_lock);
	for (i = 0; i < AT_VECTOR_SIZE; i++)
		mm->saved_auxv[i] = i < m->auxv_words ? m->auxv[i] : 0;
	mmap_write_unlock(mm);
	current->personality = m->personality;
}

int mmr_replace_mm(struct mm_restore *r)
{
	u32 i;
	int err = unmap_all(r);

	for (i = 0; !err && i < r->im.nr_vmas; i++) {
		const struct ckpt_vma *v = &r->im.vmas[i];

		if (v->flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR | CKPT_VMA_VSYSCALL))
			continue;
		err = map_one(r, v);
	}
	if (!err)
		err = write_pages(r);
	if (!err)
		set_mm_fields(r);
	return err;
}
