// SPDX-License-Identifier: GPL-2.0
/*
 * Restore, before the point of no return: read the image, parse and check
 * it, and check that this machine can run it (same executable and
 * libraries by content, compatible CPU, the same vDSO where the image
 * expects it), and open every file it needs. Any failure here leaves the
 * caller exactly as it was.
 */
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include "restore.h"
#include "save.h"

#define READ_CHUNK (1UL << 20)

int mmr_load(struct mm_restore *r, int fd, bool keep_pos)
{
	struct file *f = fget(fd);
	loff_t pos;
	ssize_t n;
	int err = 0;

	if (!f)
		return mm_fail(r->e, -EBADF, CKPT_E_IO, "fd %d is not open", fd);
	if (!(f->f_mode & FMODE_READ)) {
		fput(f);
		return mm_fail(r->e, -EBADF, CKPT_E_IO, "fd %d is not readable", fd);
	}
	r->buf.limit = mm_buf_max();
	pos = f->f_pos;
	for (;;) {
		err = mm_buf_reserve(&r->buf, READ_CHUNK);
		if (err) {
			mm_fail(r->e, err, CKPT_E_NOMEM, "image larger than %zu bytes",
				r->buf.limit);
			break;
		}
		n = kernel_read(f, r->buf.data + r->buf.len, READ_CHUNK, &pos);
		if (n < 0) {
			err = mm_fail(r->e, n, CKPT_E_IO, "reading the image");
			break;
		}
		if (!n)
			break;
		r->buf.len += n;
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
	}
	if (!keep_pos && !err)
		f->f_pos = pos;
	fput(f);
	return err ?: mm_parse(&r->im, r->buf.data, r->buf.len, r->e);
}

static int check_cpu(struct mm_restore *r)
{
	const struct ckpt_cpu *img = r->im.cpu;
	struct ckpt_cpu host;
	const u32 *a = &img->cpuid1_ecx, *b = &host.cpuid1_ecx;
	int i;

	mmc_cpu(&host);
	if (img->xcr0 != host.xcr0 || img->xsave_size != host.xsave_size)
		return mm_fail(r->e, -EINVAL, CKPT_E_CPU,
			       "XCR0/XSAVE size differ: image %llx/%u, host %llx/%u",
			       img->xcr0, img->xsave_size, host.xcr0, host.xsave_size);
	for (i = 2; i < 32; i++)
		if (img->comp_offset[i] != host.comp_offset[i] ||
		    img->comp_size[i] != host.comp_size[i])
			return mm_fail(r->e, -EINVAL, CKPT_E_CPU,
				       "XSAVE component %d layout differs", i);
	/* The eight feature words are consecutive u32 fields in ckpt_cpu. */
	for (i = 0; i < 8; i++)
		if (a[i] & ~b[i])
			return mm_fail(r->e, -EINVAL, CKPT_E_CPU,
				       "CPU feature word %d bit %lu missing on this host",
				       i, __ffs(a[i] & ~b[i]));
	if (r->im.th->xsave_len != img->xsave_size)
		return mm_fail(r->e, -EINVAL, CKPT_E_CPU, "XSAVE area of %u bytes",
			       r->im.th->xsave_len);
	return 0;
}

/* Our own [vvar]..[vdso] must already be where the image had them. */
static int check_vdso(struct mm_restore *r)
{
	const struct ckpt_mm *m = r->im.mm;
	struct mm_struct *mm = current->mm;
	u64 start = 0, end = 0, vdso = 0, vsize = 0;
	struct vm_area_struct *vma;
	unsigned long addr = 0;
	void *buf;
	u32 crc;

	mmap_read_lock(mm);
	while ((vma = find_vma(mm, addr))) {
		const char *name = vma->vm_ops && vma->vm_ops->name ?
				   vma->vm_ops->name(vma) : NULL;

		addr = vma->vm_end;
		if (!name || (strcmp(name, "[vdso]") && strncmp(name, "[vvar", 5)))
			continue;
		if (!start)
			start = vma->vm_start;
		end = vma->vm_end;
		if (!strcmp(name, "[vdso]")) {
			vdso = vma->vm_start;
			vsize = vma->vm_end - vma->vm_start;
		}
	}
	mmap_read_unlock(mm);
	if (!m->special_end)
		return 0;
	if (start != m->special_start || end != m->special_end ||
	    vdso != m->vdso_start || vsize != m->vdso_size)
		return mm_fail(r->e, -EADDRNOTAVAIL, CKPT_E_VDSO,
			       "vDSO at %llx, image wants %llx (vvar at %llx): move it first",
			       vdso, m->vdso_start, m->special_start);
	buf = kvmalloc(vsize, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	crc = copy_from_user(buf, (void __user *)vdso, vsize) ? 0 : mm_crc32c(buf, vsize);
	kvfree(buf);
	if (crc != m->vdso_crc)
		return mm_fail(r->e, -EINVAL, CKPT_E_VDSO,
			       "vDSO bytes differ (another kernel?)");
	return 0;
}

/* Open each mapped file read-only and compare its size and content CRC. */
static int check_ident(struct mm_restore *r)
{
	u32 i;

	r->map_files = kvcalloc(r->im.nr_ents, sizeof(*r->map_files), GFP_KERNEL);
	if (!r->map_files)
		return -ENOMEM;
	for (i = 0; i < r->im.nr_ents; i++) {
		const struct ckpt_file_ent *ent = &r->im.ents[i];
		int reason = i ? CKPT_E_LIB : CKPT_E_EXE;
		struct file *f = filp_open(ent->path, O_RDONLY | O_LARGEFILE, 0);
		u64 size, mtime;
		u32 crc;
		int err;

		if (IS_ERR(f))
			return mm_fail(r->e, PTR_ERR(f), reason, "cannot open %s",
				       ent->path);
		r->map_files[i] = f;
		err = mm_hash_file(f, &size, &crc, &mtime);
		if (err)
			return mm_fail(r->e, err, reason, "cannot read %s", ent->path);
		if (size != ent->size || crc != ent->crc32c)
			return mm_fail(r->e, -EINVAL, reason,
				       "%s differs (size %llu/%llu, crc %08x/%08x)",
				       ent->path, size, ent->size, crc, ent->crc32c);
	}
	return 0;
}

int mmr_check_target(struct mm_restore *r)
{
	const struct ckpt_signals *s = r->im.sig;

	if (!thread_group_empty(current))
		return mm_fail(r->e, -EBUSY, CKPT_E_THREADS,
			       "the restoring process has more than one thread");
	/* Replacing a shared address space would wreck its other users. */
	if (current->vfork_done || atomic_read(&current->mm->mm_users) > 1)
		return mm_fail(r->e, -EBUSY, CKPT_E_INVAL,
			       "the restoring process shares its address space (vfork child?)");
	if (s->itimer[1].value_sec || s->itimer[1].value_usec ||
	    s->itimer[2].value_sec || s->itimer[2].value_usec)
		return mm_fail(r->e, -EOPNOTSUPP, CKPT_E_KERNEL,
			       "ITIMER_VIRTUAL/ITIMER_PROF armed: msgmig.ko cannot set them");
	return check_cpu(r) ?: check_vdso(r) ?: check_ident(r);
}

static int open_flags(const struct ckpt_fd *f)
{
	/* Never create or truncate; keep the access mode and status flags. */
	return (f->open_flags & (O_ACCMODE | O_APPEND | O_NONBLOCK | O_DIRECT |
				 O_NOATIME | O_SYNC | O_DSYNC | O_DIRECTORY)) |
	       O_LARGEFILE;
}

int mmr_open_files(struct mm_restore *r)
{
	u32 i;

	r->fd_files = kvcalloc(r->im.nr_fds, sizeof(*r->fd_files), GFP_KERNEL);
	if (r->im.nr_fds && !r->fd_files)
		return -ENOMEM;
	for (i = 0; i < r->im.nr_fds; i++) {
		const struct ckpt_fd *f = &r->im.fds[i];
		struct file *file;
		loff_t pos;

		if (f->kind == CKPT_FD_STDIO)
			continue;
		file = filp_open(f->path, open_flags(f), 0);
		if (IS_ERR(file))
			return mm_fail(r->e, PTR_ERR(file), CKPT_E_FILE,
				       "fd %d: cannot reopen %s", f->fd, f->path);
		r->fd_files[i] = file;
		if (f->kind != CKPT_FD_REG)
			continue;
		pos = vfs_llseek(file, f->offset, SEEK_SET);
		if (pos != f->offset)
			return mm_fail(r->e, pos < 0 ? pos : -EINVAL, CKPT_E_FILE,
				       "fd %d: cannot seek %s to %llu", f->fd,
				       f->path, f->offset);
	}
	return 0;
}

void mmr_free(struct mm_restore *r)
{
	u32 i;

	for (i = 0; r->map_files && i < r->im.nr_ents; i++)
		if (r->map_files[i])
			fput(r->map_files[i]);
	for (i = 0; r->fd_files && i < r->im.nr_fds; i++)
		if (r->fd_files[i])
			fput(r->fd_files[i]);
	kvfree(r->map_files);
	kvfree(r->fd_files);
	mm_buf_free(&r->buf);
}
