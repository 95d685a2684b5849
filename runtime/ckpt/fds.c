/* SPDX-License-Identifier: MIT */
/* Open descriptors and threads: what the image carries and what it refuses.
 * Directories are listed with getdents64 into the arena (opendir would
 * malloc from the heap being saved). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "capture_int.h"
#include "ksys.h"
#include "fmt.h"

struct dent64 {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* Calls fn(c, number) for each numeric entry of dir; stops on non-zero. */
static int each_num(struct ckpt_ctx *c, const char *dir, int (*fn)(struct ckpt_ctx *, long, void *), void *arg)
{
	char buf[8192];
	int dfd = k_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ckpt_fail(c, CKPT_E_PROC, "open %s: %s", dir, strerror(errno));
	int r = 0;
	long n;
	while (!r && (n = k_ret(sys3(__NR_getdents64, dfd, buf, sizeof(buf)))) > 0)
		for (long o = 0; o < n && !r;) {
			struct dent64 *d = (struct dent64 *)(void *)(buf + o);
			o += d->reclen;
			if (d->name[0] >= '0' && d->name[0] <= '9')
				r = fn(c, strtol(d->name, NULL, 10), arg);
		}
	k_close(dfd);
	return r;
}

static int count_task(struct ckpt_ctx *c, long tid, void *arg)
{
	(void)c;
	if (tid != k_getpid())
		*(long *)arg = tid;
	return 0;
}

int ckpt_check_threads(struct ckpt_ctx *c)
{
	long other = 0;
	c->status = NULL; /* a new collection (the pre-copy stop collects again) */
	if (ckpt_status_field(ckpt_status(c), "\nThreads:", 0) == 1)
		return 0; /* the usual case: no task listing needed */
	int r = each_num(c, "/proc/self/task", count_task, &other);
	if (r)
		return r;
	if (other)
		return ckpt_fail(c, CKPT_E_THREADS, "second thread: tid %ld", other);
	return 0;
}

static int excluded(struct ckpt_ctx *c, int fd, int dirfd)
{
	if (fd == c->out_fd || fd == dirfd)
		return 1;
	for (int i = 0; i < 4; i++)
		if (c->own_fds[i] == fd)
			return 1;
	for (int i = 0; c->o && i < c->o->n_exclude_fds && i < 16; i++)
		if (c->o->exclude_fds[i] == fd)
			return 1;
	return 0;
}

static int refuse(struct ckpt_ctx *c, int fd, const struct stat *st, const char *link)
{
	if (S_ISSOCK(st->st_mode))
		return ckpt_fail(c, CKPT_E_SOCKET, "fd %d: %s", fd, link);
	if (S_ISFIFO(st->st_mode))
		return ckpt_fail(c, CKPT_E_PIPE, "fd %d: %s", fd, link);
	if (strstr(link, "io_uring"))
		return ckpt_fail(c, CKPT_E_IO_URING, "fd %d: %s", fd, link);
	return ckpt_fail(c, CKPT_E_FDKIND, "fd %d: %s", fd, link);
}

static uint32_t kind_of(const struct stat *st, const char *link)
{
	if (link[0] != '/' || strstr(link, " (deleted)"))
		return 0;
	if (S_ISREG(st->st_mode))
		return CKPT_FD_REG;
	if (S_ISDIR(st->st_mode))
		return CKPT_FD_DIR;
	if (S_ISCHR(st->st_mode))
		return CKPT_FD_CHR;
	return 0;
}

static int add_fd(struct ckpt_ctx *c, long n, void *arg)
{
	int fd = (int)n, dirfd = *(int *)arg;
	char proc[64], link[CKPT_PATH_MAX + 1];
	struct stat st;
	if (excluded(c, fd, dirfd))
		return 0;
	if (c->n_fds >= c->cap_fds)
		return ckpt_fail(c, CKPT_E_FDKIND, "more than %u descriptors", c->cap_fds);
	ssize_t ln = 0;
	link[0] = 0;
	if (fd > 2) { /* stdio is carried by number: no path needed */
		ckpt_fmt(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		ln = k_readlink(proc, link, sizeof(link) - 1);
		if (ln < 0)
			return 0; /* closed meanwhile (e.g. the listing's own fd) */
		link[ln] = 0;
	}
	if (k_fstat(fd, &st) < 0)
		return 0;
	struct ckpt_fd *f = &c->fds[c->n_fds];
	f->fd = fd;
	f->kind = fd <= 2 ? CKPT_FD_STDIO : kind_of(&st, link);
	if (!f->kind)
		return refuse(c, fd, &st, link);
	int lr = ckpt_check_fd_locks(c, fd, fd > 2 ? link : NULL);
	if (lr)
		return lr;
	if (ln >= (ssize_t)CKPT_PATH_MAX - 1)
		return ckpt_fail(c, CKPT_E_FDKIND, "fd %d: path too long", fd);
	f->open_flags = (uint32_t)k_fcntl(fd, F_GETFL);
	f->fd_flags = (uint32_t)k_fcntl(fd, F_GETFD);
	f->mode = st.st_mode;
	f->size = (uint64_t)st.st_size;
	if (f->kind == CKPT_FD_REG) {
		off_t off = k_lseek(fd, 0, SEEK_CUR);
		f->offset = off < 0 ? 0 : (uint64_t)off;
	}
	if (f->kind != CKPT_FD_STDIO) {
		memcpy(f->path, link, (size_t)ln + 1);
		f->path_len = (uint32_t)ln;
	}
	c->n_fds++;
	return 0;
}

/* Every open descriptor is below the table size (FDSize in the status
 * text, read anyway): probing the slots is cheaper than listing
 * /proc/self/fd, which makes a proc inode per descriptor (about half of
 * the descriptor phase of a small capture).  One poll() (no events, no
 * wait) marks every closed slot POLLNVAL: 2 us for 64 slots, where an
 * fcntl per slot took 12.  Large tables are listed. */
#define PROBE_MAX 1024

static int probe_fds(struct ckpt_ctx *c, long size)
{
	int none = -1;
	struct pollfd *p = ckpt_alloc(&c->a, sizeof(*p) * (size_t)size);
	for (long fd = 0; p && fd < size; fd++)
		p[fd] = (struct pollfd){ (int)fd, 0, 0 };
	/* EINVAL when the table is larger than RLIMIT_NOFILE: fcntl then */
	int polled = p && sys3(__NR_poll, p, size, 0) >= 0;
	for (long fd = 0; fd < size; fd++) {
		if (polled ? (p[fd].revents & POLLNVAL) != 0 : k_fcntl((int)fd, F_GETFD) < 0)
			continue; /* not open */
		int r = add_fd(c, fd, &none);
		if (r)
			return r;
	}
	return 0;
}

int ckpt_collect_fds(struct ckpt_ctx *c)
{
	long size = ckpt_status_field(ckpt_status(c), "\nFDSize:", -1);
	int probe_ok = size > 0 && size <= PROBE_MAX;
	/* every open descriptor is below FDSize: a table that long (not
	 * CKPT_MAX_FDS, 552 KiB, most of it never written) */
	c->cap_fds = probe_ok && size < CKPT_MAX_FDS ? (uint32_t)size : CKPT_MAX_FDS;
	c->fds = ckpt_alloc(&c->a, sizeof(*c->fds) * c->cap_fds);
	if (!c->fds)
		return ckpt_fail(c, CKPT_E_NOMEM, "capture arena full");
	if (probe_ok)
		return probe_fds(c, size);
	/* The listing's own descriptor is the lowest free one at this point. */
	int probe = k_open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (probe < 0)
		return ckpt_fail(c, CKPT_E_PROC, "open /proc/self/fd: %s", strerror(errno));
	k_close(probe);
	return each_num(c, "/proc/self/fd", add_fd, &probe);
}
