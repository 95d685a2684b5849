// SPDX-License-Identifier: GPL-2.0
/*
 * The target's memory: its VMAs (VMAS), the identity of every mapped file
 * (IDENT) and the pages that must be carried (PAGES). Pages are found from
 * the page tables, not from permissions: an anonymous page, or a private
 * copy (PageAnon) in a file mapping, is carried unless it is all zero;
 * holes and page-cache pages are not. Swapped pages are read back in.
 */
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/dcache.h>
#include <linux/highmem.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sched/mm.h>
#include "save.h"

#define GUP_BATCH 64

static const char *special_name(struct vm_area_struct *vma)
{
	if (vma->vm_ops && vma->vm_ops->name)
		return vma->vm_ops->name(vma);
	return NULL;
}

/* The IDENT index of @file, adding an entry (and a reference) if new. */
static int ent_index(struct mm_capture *c, struct file *file, u32 flags)
{
	struct inode *inode = file_inode(file);
	struct ckpt_file_ent *ent;
	char *buf, *p;
	u32 i;

	for (i = 0; i < c->nr_ents; i++) {
		if (file_inode(c->ent_files[i]) == inode) {
			c->ents[i].flags |= flags;
			return i;
		}
	}
	if (c->nr_ents == c->cap_ents || c->nr_ents == CKPT_MAX_FILES)
		return mm_fail(c->e, -E2BIG, CKPT_E_INVAL, "too many mapped files");
	ent = &c->ents[c->nr_ents];
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	p = d_path(&file->f_path, buf, PATH_MAX);
	if (IS_ERR(p) || strlen(p) >= CKPT_PATH_MAX || d_unlinked(file->f_path.dentry)) {
		int reason = (flags & CKPT_FE_EXE) ? CKPT_E_EXE : CKPT_E_LIB;

		mm_fail(c->e, -EOPNOTSUPP, reason, "mapped file %.100s: %s",
			IS_ERR(p) ? "?" : p,
			IS_ERR(p) || !d_unlinked(file->f_path.dentry) ?
			"path unusable" : "deleted");
		kfree(buf);
		return -EOPNOTSUPP;
	}
	ent->path_len = strlen(p);
	memcpy(ent->path, p, ent->path_len);
	ent->flags = flags;
	kfree(buf);
	c->ent_files[c->nr_ents] = get_file(file);
	return c->nr_ents++;
}

static u32 prot_of(unsigned long f)
{
	return (f & VM_READ ? CKPT_PROT_READ : 0) |
	       (f & VM_WRITE ? CKPT_PROT_WRITE : 0) |
	       (f & VM_EXEC ? CKPT_PROT_EXEC : 0);
}

static bool in_restorer_range(unsigned long s, unsigned long e)
{
	return s < CKPT_RESTORER_BASE + CKPT_RESTORER_SPAN &&
	       e > CKPT_RESTORER_BASE;
}

/* Classify the part [s, e) of a VMA into @v, or refuse it naming it. */
static int classify(struct mm_capture *c, struct vm_area_struct *vma,
		    u64 s, u64 e, struct ckpt_vma *v)
{
	const char *name = special_name(vma);
	unsigned long f = vma->vm_flags;
	struct mm_struct *mm = c->mm;
	int idx;

	v->start = s;
	v->end = e;
	v->prot = prot_of(f);
	v->file_idx = -1;
	if (name && !strcmp(name, "[vdso]")) {
		v->flags = CKPT_VMA_VDSO;
		return 0;
	}
	if (name && !strncmp(name, "[vvar", 5)) {
		v->flags = CKPT_VMA_VVAR;
		return 0;
	}
	if (in_restorer_range(v->start, v->end))
		return mm_fail(c->e, -EOPNOTSUPP, CKPT_E_RESERVED,
			       "mapping %#llx-%#llx overlaps the restorer's range",
			       v->start, v->end);
	if ((f & VM_SHARED) && (f & VM_WRITE))
		return mm_fail(c->e, -EOPNOTSUPP, CKPT_E_SHARED,
			       "writable shared mapping %#llx-%#llx",
			       v->start, v->end);
	if ((f & (VM_IO | VM_PFNMAP | VM_MIXEDMAP)) || name)
		return mm_fail(c->e, -EOPNOTSUPP, CKPT_E_MAP,
			       "special mapping %#llx-%#llx %s", v->start,
			       v->end, name ? name : "(device)");
	if (vma->vm_file) {
		if ((f & VM_SHARED) && d_unlinked(vma->vm_file->f_path.dentry))
			return mm_fail(c->e, -EOPNOTSUPP, CKPT_E_SHARED,
				       "shared anonymous mapping %#llx-%#llx",
				       v->start, v->end);
		idx = ent_index(c, vma->vm_file, CKPT_FE_MAPPED);
		if (idx < 0)
			return idx;
		v->flags = CKPT_VMA_FILE | (f & VM_SHARED ? CKPT_VMA_SHARED : 0);
		v->file_idx = idx;
		v->pgoff = ((u64)vma->vm_pgoff << PAGE_SHIFT) + (s - vma->vm_start);
		return 0;
	}
	v->flags = CKPT_VMA_ANON;
	if (v->start <= mm->brk && v->end >= mm->start_brk)
		v->flags |= CKPT_VMA_HEAP;
	if (v->start <= mm->start_stack && v->end >= mm->start_stack)
		v->flags |= CKPT_VMA_STACK | CKPT_VMA_GROWSDOWN;
	else if (f & VM_GROWSDOWN)
		v->flags |= CKPT_VMA_GROWSDOWN;
	return 0;
}

static int add_exe(struct mm_capture *c)
{
	struct file *exe;
	int idx;

	rcu_read_lock();
	exe = rcu_dereference(c->mm->exe_file);
	if (exe && !get_file_rcu(exe))
		exe = NULL;
	rcu_read_unlock();
	if (!exe)
		return mm_fail(c->e, -EOPNOTSUPP, CKPT_E_EXE, "no executable");
	idx = ent_index(c, exe, CKPT_FE_EXE);
	fput(exe);
	return idx < 0 ? idx : 0;
}

static int alloc_tables(struct mm_capture *c, u32 n)
{
	c->cap_vmas = n;
	c->cap_ents = n + 1;
	c->vmas = kvcalloc(c->cap_vmas, sizeof(*c->vmas), GFP_KERNEL);
	c->ents = kvcalloc(c->cap_ents, sizeof(*c->ents), GFP_KERNEL);
	c->ent_files = kvcalloc(c->cap_ents, sizeof(*c->ent_files), GFP_KERNEL);
	return c->vmas && c->ents && c->ent_files ? 0 : -ENOMEM;
}

/* Add [s, e) of @vma minus the excluded ranges from index @k on. */
static int add_clipped(struct mm_capture *c, struct vm_area_struct *vma,
		       u64 s, u64 e, u32 k)
{
	const struct msgmig_save *a = c->arg;
	int err;

	for (; k < a->n_exclude_ranges; k++) {
		u64 xs = a->exclude_ranges[k].start, xe = a->exclude_ranges[k].end;

		if (xe <= s || xs >= e)
			continue;
		err = xs > s ? add_clipped(c, vma, s, xs, k + 1) : 0;
		if (!err && xe < e)
			err = add_clipped(c, vma, xe, e, k + 1);
		return err;
	}
	if (c->nr_vmas == c->cap_vmas)
		return mm_fail(c->e, -EAGAIN, CKPT_E_INVAL, "mappings changed");
	err = classify(c, vma, s, e, &c->vmas[c->nr_vmas]);
	if (!err)
		c->nr_vmas++;
	return err;
}

int mmc_collect_vmas(struct mm_capture *c)
{
	struct vm_area_struct *vma;
	unsigned long addr = 0;
	int err;

	/* The target is stopped and single-threaded: map_count is stable. */
	if (c->mm->map_count > CKPT_MAX_VMAS)
		return mm_fail(c->e, -E2BIG, CKPT_E_INVAL, "%d mappings",
			       c->mm->map_count);
	/* Each excluded range can split one VMA in two. */
	err = alloc_tables(c, c->mm->map_count + 1 + MSGMIG_MAX_EXCLUDE_RANGES);
	if (err)
		return err;
	err = add_exe(c);
	if (err)
		return err;
	mmap_read_lock(c->mm);
	while ((vma = find_vma(c->mm, addr))) {
		err = add_clipped(c, vma, vma->vm_start, vma->vm_end, 0);
		if (err)
			break;
		addr = vma->vm_end;
	}
	mmap_read_unlock(c->mm);
	return err;
}

int mmc_ident(struct mm_capture *c)
{
	u32 i;
	int err;

	for (i = 0; i < c->nr_ents; i++) {
		struct file *f = c->ent_files[i];

		/* A mapping's file may be open write-only: read a fresh one. */
		f = dentry_open(&f->f_path, O_RDONLY | O_LARGEFILE, current_cred());
		if (IS_ERR(f))
			return mm_fail(c->e, PTR_ERR(f), i ? CKPT_E_LIB : CKPT_E_EXE,
				       "cannot open %s", c->ents[i].path);
		err = mm_hash_file(f, &c->ents[i].size, &c->ents[i].crc32c,
				   &c->ents[i].mtime_ns);
		fput(f);
		if (err)
			return mm_fail(c->e, err, i ? CKPT_E_LIB : CKPT_E_EXE,
				       "cannot read %s", c->ents[i].path);
	}
	return 0;
}

void mmc_put_files(struct mm_capture *c)
{
	u32 i;

	for (i = 0; c->ent_files && i < c->nr_ents; i++)
		fput(c->ent_files[i]);
}

/* Page writer state: one open PAGES section at a time. */
struct pw {
	struct mm_writer *w;
	long hoff;		/* open section header, or -1 */
	u64 next;		/* address that would extend the open run */
	u64 npages;
};

static int pw_flush(struct pw *pw)
{
	struct ckpt_pages *ph;
	int err;

	if (pw->hoff < 0)
		return 0;
	ph = (void *)(pw->w->b->data + pw->hoff + sizeof(struct ckpt_sect_hdr));
	ph->npages = pw->npages;
	pw->w->n_pages += pw->npages;
	err = mmw_close(pw->w, pw->hoff);
	pw->hoff = -1;
	return err;
}

static int pw_add(struct pw *pw, u64 addr, struct page *page)
{
	void *dst, *src;
	int err;

	if (pw->hoff >= 0 && (addr != pw->next || pw->npages == CKPT_MAX_PAGES_PER_SECT)) {
		err = pw_flush(pw);
		if (err)
			return err;
	}
	if (pw->hoff < 0) {
		struct ckpt_pages ph = { .addr = addr };

		pw->hoff = mmw_open(pw->w, CKPT_S_PAGES);
		if (pw->hoff < 0)
			return pw->hoff;
		err = mm_buf_put(pw->w->b, &ph, sizeof(ph));
		if (err)
			return err;
		pw->npages = 0;
	}
	dst = mm_buf_grab(pw->w->b, PAGE_SIZE);
	if (!dst)
		return -ENOMEM;
	src = kmap_local_page(page);
	memcpy(dst, src, PAGE_SIZE);
	kunmap_local(src);
	pw->npages++;
	pw->next = addr + PAGE_SIZE;
	return 0;
}

static bool carry_page(const struct ckpt_vma *v, struct page *page)
{
	bool zero;
	void *p;

	if (is_zero_page(page))
		return false;
	/* A file mapping's page equal to the file is not carried. */
	if ((v->flags & CKPT_VMA_FILE) && !PageAnon(page))
		return false;
	p = kmap_local_page(page);
	zero = !memchr_inv(p, 0, PAGE_SIZE);
	kunmap_local(p);
	return !zero;
}

/* One GUP batch of @v at *addr: carried pages go to @pw. */
static int vma_pages_batch(struct mm_capture *c, const struct ckpt_vma *v,
			   struct pw *pw, u64 *addr)
{
	struct page *pages[GUP_BATCH];
	unsigned long want = min_t(u64, GUP_BATCH, (v->end - *addr) >> PAGE_SHIFT);
	long n, i;
	int err = 0;

	/* FOLL_DUMP: a hole gives -EFAULT instead of a fresh zero page. */
	n = get_user_pages_remote(c->mm, *addr, want, FOLL_FORCE | FOLL_DUMP,
				  pages, NULL, NULL);
	if (n <= 0) {		/* a hole (or an unreadable page) */
		*addr += PAGE_SIZE;
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (!err && carry_page(v, pages[i]))
			err = pw_add(pw, *addr + i * PAGE_SIZE, pages[i]);
		put_page(pages[i]);
	}
	*addr += n * PAGE_SIZE;
	cond_resched();
	return err;
}

int mmc_pages_step(struct mm_capture *c, struct mm_writer *w,
		   struct mm_walk *wk, size_t budget)
{
	struct pw pw = { .w = w, .hoff = -1 };
	size_t start = w->b->len;
	int err = 0;

	mmap_read_lock(c->mm);
	while (!err && wk->vma < c->nr_vmas && w->b->len - start < budget) {
		const struct ckpt_vma *v = &c->vmas[wk->vma];

		if (wk->addr < v->start)
			wk->addr = v->start;
		if ((v->flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR | CKPT_VMA_SHARED)) ||
		    wk->addr >= v->end) {
			/* A run never crosses into the next VMA (format rule). */
			err = pw_flush(&pw);
			wk->vma++;
			continue;
		}
		err = vma_pages_batch(c, v, &pw, &wk->addr);
	}
	mmap_read_unlock(c->mm);
	if (!err)
		err = pw_flush(&pw);	/* leave no section open in the buffer */
	return err ? err : wk->vma == c->nr_vmas;
}

int mmc_write_pages(struct mm_capture *c, struct mm_writer *w)
{
	struct mm_walk wk = {};
	int ret;

	do
		ret = mmc_pages_step(c, w, &wk, SIZE_MAX);
	while (!ret);
	return ret < 0 ? ret : 0;
}
