/* SPDX-License-Identifier: MIT */
/* The capture's system calls, made directly (the restorer's raw syscall,
 * restorer/sys.h), with libc's convention: -1 and errno on failure.
 *
 * Why not libc's wrappers: in a process that never called them before
 * (lazy binding, the default), each one's first call resolves its PLT
 * slot (a symbol lookup through every loaded library, ~4 us here) and
 * faults in its page of libc's text.  About 25 of them were ~0.15 ms of a
 * 1 MB capture (LD_BIND_NOW=1 showed it), paid again in every process
 * that captures once, e.g. a regenerated replica.  String functions
 * still come from libc. */
#ifndef MSG_CKPT_KSYS_H
#define MSG_CKPT_KSYS_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "restorer/sys.h"

static inline long k_ret(long r)
{
	if ((unsigned long)r > -4096ul) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

static inline int k_open(const char *path, int flags)
{
	return (int)k_ret(sys4(__NR_openat, AT_FDCWD, path, flags, 0));
}

static inline int k_creat(const char *path, int flags, mode_t mode)
{
	return (int)k_ret(sys4(__NR_openat, AT_FDCWD, path, flags, mode));
}

static inline int k_close(int fd)
{
	return (int)k_ret(sys1(__NR_close, fd));
}

static inline ssize_t k_read(int fd, void *buf, size_t n)
{
	return k_ret(sys3(__NR_read, fd, buf, n));
}

static inline ssize_t k_pread(int fd, void *buf, size_t n, off_t off)
{
	return k_ret(sys4(__NR_pread64, fd, buf, n, off));
}

static inline ssize_t k_writev(int fd, const struct iovec *v, int n)
{
	return k_ret(sys3(__NR_writev, fd, v, n));
}

static inline ssize_t k_sendmsg(int fd, const struct msghdr *m, int flags)
{
	return k_ret(sys3(__NR_sendmsg, fd, m, flags));
}

static inline off_t k_lseek(int fd, off_t off, int whence)
{
	return k_ret(sys3(__NR_lseek, fd, off, whence));
}

static inline int k_fcntl(int fd, int cmd)
{
	return (int)k_ret(sys3(__NR_fcntl, fd, cmd, 0));
}

/* glibc's struct stat is the kernel's on x86-64 */
static inline int k_fstat(int fd, struct stat *st)
{
	return (int)k_ret(sys2(__NR_fstat, fd, st));
}

static inline int k_stat(const char *path, struct stat *st)
{
	return (int)k_ret(sys4(__NR_newfstatat, AT_FDCWD, path, st, 0));
}

static inline ssize_t k_readlink(const char *path, char *buf, size_t n)
{
	return k_ret(sys4(__NR_readlinkat, AT_FDCWD, path, buf, n));
}

static inline void *k_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off)
{
	long r = sys6(__NR_mmap, (long)a, (long)n, prot, flags, fd, off);
	return k_ret(r) == -1 ? (void *)-1 : (void *)r;
}

static inline int k_munmap(void *a, size_t n)
{
	return (int)k_ret(sys2(__NR_munmap, a, n));
}

static inline int k_mincore(void *a, size_t n, unsigned char *vec)
{
	return (int)k_ret(sys3(__NR_mincore, a, n, vec));
}

/* The kernel's signal set is the first 8 bytes of glibc's sigset_t. */
static inline int k_sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	return (int)k_ret(sys4(__NR_rt_sigprocmask, how, set, old, 8));
}

static inline int k_sigaltstack(const stack_t *ss, stack_t *old)
{
	return (int)k_ret(sys2(__NR_sigaltstack, ss, old));
}

static inline int k_getitimer(int which, struct itimerval *it)
{
	return (int)k_ret(sys2(__NR_getitimer, which, it));
}

static inline int k_prctl(int op, unsigned long a, unsigned long b, unsigned long c, unsigned long d)
{
	return (int)k_ret(sys5(__NR_prctl, op, a, b, c, d));
}

static inline char *k_getcwd(char *buf, size_t n)
{
	return k_ret(sys2(__NR_getcwd, buf, n)) < 0 ? NULL : buf;
}

static inline pid_t k_getpid(void)
{
	return (pid_t)sys0(__NR_getpid);
}

static inline uid_t k_geteuid(void)
{
	return (uid_t)sys0(__NR_geteuid);
}

static inline mode_t k_umask(mode_t m)
{
	return (mode_t)sys1(__NR_umask, m);
}

static inline int k_personality(unsigned long p)
{
	return (int)k_ret(sys1(__NR_personality, p));
}

#endif
