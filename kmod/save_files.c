// SPDX-License-Identifier: GPL-2.0
/*
 * The target's open descriptors (FILES). fd 0-2 are the launcher's
 * (CKPT_FD_STDIO); regular files, directories and character devices are
 * reopened by path on restore; anything else is refused, naming it.
 */
#include <linux/sched.h>
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/fdtable.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/rcupdate.h>
#include "save.h"

static bool cloexec(struct task_struct *task, unsigned int fd)
{
	bool ret = false;

	rcu_read_lock();
	task_lock(task);
	if (task->files)
		ret = close_on_exec(fd, files_fdtable(task->files));
	task_unlock(task);
	rcu_read_unlock();
	return ret;
}

static u32 kind_of(umode_t mode)
{
	if (S_ISREG(mode))
		return CKPT_FD_REG;
	if (S_ISDIR(mode))
		return CKPT_FD_DIR;
	if (S_ISCHR(mode))
		return CKPT_FD_CHR;
	return 0;
}

static int refuse(struct mm_capture *c, unsigned int fd, umode_t mode,
		  const char *path)
{
	int reason = CKPT_E_FDKIND;

	if (S_ISSOCK(mode))
		reason = CKPT_E_SOCKET;
	else if (S_ISFIFO(mode))
		reason = CKPT_E_PIPE;
	else if (strstr(path, "io_uring"))
		reason = CKPT_E_IO_URING;
	return mm_fail(c->e, -EOPNOTSUPP, reason, "fd %u: %.100s", fd, path);
}

static int add_fd(struct mm_capture *c, unsigned int fd, struct file *file,
		  char *buf)
{
	struct inode *inode = file_inode(file);
	struct ckpt_fd *f = &c->fds[c->nr_fds];
	char *p;

	p = d_path(&file->f_path, buf, PATH_MAX);
	if (IS_ERR(p))
		p = "?";
	f->fd = fd;
	f->kind = fd <= 2 ? CKPT_FD_STDIO : kind_of(inode->i_mode);
	if (!f->kind || (f->kind != CKPT_FD_STDIO && (*p != '/' ||
					 d_unlinked(file->f_path.dentry))))
		return refuse(c, fd, inode->i_mode, p);
	f->open_flags = file->f_flags;
	f->fd_flags = cloexec(c->task, fd) ? FD_CLOEXEC : 0;
	f->mode = inode->i_mode;
	f->size = i_size_read(inode);
	if (f->kind == CKPT_FD_REG)
		f->offset = file->f_pos;
	if (f->kind != CKPT_FD_STDIO) {
		if (strlen(p) >= CKPT_PATH_MAX)
			return mm_fail(c->e, -EOPNOTSUPP, CKPT_E_FDKIND,
				       "fd %u: path too long", fd);
		f->path_len = strlen(p);
		memcpy(f->path, p, f->path_len);
	}
	c->nr_fds++;
	return 0;
}

bool mmc_fd_excluded(const struct mm_capture *c, unsigned int fd)
{
	u32 i;

	for (i = 0; i < c->arg->n_exclude_fds; i++)
		if (c->arg->exclude_fds[i] == fd)
			return true;
	return false;
}

int mmc_fds(struct mm_capture *c)
{
	unsigned int fd = 0;
	struct file *file;
	char *buf;
	int err = 0;

	c->fds = kvcalloc(CKPT_MAX_FDS, sizeof(*c->fds), GFP_KERNEL);
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!c->fds || !buf) {
		kfree(buf);
		return -ENOMEM;
	}
	for (;; fd++) {
		rcu_read_lock();
		file = task_lookup_next_fd_rcu(c->task, &fd);
		if (file && !get_file_rcu(file))
			file = NULL;	/* being closed: skip it */
		rcu_read_unlock();
		if (!file)
			break;
		if (mmc_fd_excluded(c, fd))
			err = 0;	/* the runtime's: re-created on the target */
		else if (c->nr_fds == CKPT_MAX_FDS)
			err = mm_fail(c->e, -E2BIG, CKPT_E_FDKIND,
				      "more than %u descriptors", CKPT_MAX_FDS);
		else
			err = add_fd(c, fd, file, buf);
		fput(file);
		if (err)
			break;
	}
	kfree(buf);
	return err;
}
