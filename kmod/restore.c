// SPDX-License-Identifier: GPL-2.0
/*
 * RESTORE: the calling process becomes the image. Every check happens
 * first (restore_load.c); from unmap_all() on there is no way back, so any
 * later failure kills the caller (ENOTRECOVERABLE) rather than let it run
 * half-restored. On success the ioctl "returns" into the image: pt_regs
 * hold its registers and the return value is its rax.
 *
 * IMAGE_INFO: the same checks on the image alone, and what a stub must do
 * in user space first (move the vDSO, chdir).
 */
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/slab.h>
#include "restore.h"

static long point_of_no_return(struct mm_restore *r)
{
	int err = mmr_replace_mm(r);

	if (!err)
		err = mmr_install_fds(r);
	if (err) {
		pr_warn("msgmig: restore of pid %d failed after the point of no return: %s\n",
			task_pid_nr(current), r->e->detail);
		force_sig(SIGKILL);
		return -ENOTRECOVERABLE;
	}
	mmr_signals(r);
	mmr_fpu(r);
	return mmr_thread(r);
}

long msgmig_restore(struct msgmig_restore *a, struct mm_err *e)
{
	struct mm_restore *r = kzalloc(sizeof(*r), GFP_KERNEL);
	long ret;

	if (!r)
		return -ENOMEM;
	r->e = e;
	/* The image alone first, then whether this machine can run it. */
	ret = mmr_load(r, a->image_fd, false);
	if (!ret)
		ret = mmr_check_compressed(r);
	if (!ret)
		ret = mmr_check_target(r);
	if (!ret)
		ret = mmr_check_fpu(r);
	if (!ret)
		ret = mmr_open_files(r);
	if (!ret)
		ret = point_of_no_return(r);
	mmr_free(r);
	kfree(r);
	return ret;
}

long msgmig_image_info(struct msgmig_image_info *a, struct mm_err *e)
{
	struct mm_restore *r = kzalloc(sizeof(*r), GFP_KERNEL);
	long ret;

	if (!r)
		return -ENOMEM;
	r->e = e;
	ret = mmr_load(r, a->image_fd, true);
	if (!ret)
		ret = mmr_check_compressed(r);
	if (!ret) {
		const struct ckpt_mm *m = r->im.mm;

		a->umask = m->umask;
		a->special_start = m->special_start;
		a->special_end = m->special_end;
		a->vdso_start = m->vdso_start;
		a->image_size = r->buf.len;
		strscpy(a->cwd, m->cwd, sizeof(a->cwd));
	}
	mmr_free(r);
	kfree(r);
	return ret;
}
