/* SPDX-License-Identifier: MIT */
/* Kernel-held state an image cannot carry, refused by name at capture:
 * file locks, SysV semaphore undo lists, seccomp filters,
 * mlockall(MCL_FUTURE).  mlock'ed regions are carried: their VMAs get
 * CKPT_VMA_LOCKED and the restorer locks them again.  (SysV shared memory
 * is refused in maps.c, where the mappings are classified.) */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture_int.h"
#include "ksys.h"
#include "fmt.h"

#ifndef KCMP_SYSVSEM
#define KCMP_SYSVSEM 6
#endif

/* Reads a small /proc file into buf (NUL-terminated); -1 if it cannot. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
	int fd = k_open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	ssize_t r;
	while (n < cap - 1 && (r = k_read(fd, buf + n, cap - 1 - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		n += (size_t)r;
	}
	k_close(fd);
	buf[n] = 0;
	return (ssize_t)n;
}

/* Copies one line (without '\n') from s into out. */
static void line_of(const char *s, char *out, size_t cap)
{
	size_t i = 0;
	while (s[i] && s[i] != '\n' && i + 1 < cap) {
		out[i] = s[i] == '\t' ? ' ' : s[i];
		i++;
	}
	out[i] = 0;
}

/* A lock held through this descriptor (flock, OFD, or a POSIX lock of this
 * process on its file) is listed in its fdinfo. */
int ckpt_check_fd_locks(struct ckpt_ctx *c, int fd, const char *link)
{
	char path[64], buf[4096], l[160];
	ckpt_fmt(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return 0; /* closed meanwhile */
	const char *p = strstr(buf, "\nlock:");
	if (!p)
		return 0;
	line_of(p + 1, l, sizeof(l));
	char own[128];
	if (!link) { /* stdio: its path is read only for this message */
		ckpt_fmt(path, sizeof(path), "/proc/self/fd/%d", fd);
		ssize_t n = k_readlink(path, own, sizeof(own) - 1);
		own[n > 0 ? n : 0] = 0;
		link = own;
	}
	return ckpt_fail(c, CKPT_E_LOCK, "fd %d: %.100s holds a file lock (%s)", fd, link, l);
}

/* A flock/OFD lock outlives its descriptors only through a mapping made
 * from the locked description (a POSIX lock goes with any close, and the
 * descriptors are checked by fdinfo). The program's own files (the
 * executable, and every file with an executable mapping: what the kernel
 * and ld.so mapped from descriptions of their own) cannot carry one the
 * application took; any other file mapping can. */
static int maps_data_file(const struct ckpt_ctx *c)
{
	uint64_t program[CKPT_MAX_FILES / 64] = { 0 };
	for (uint32_t i = 0; i < c->n_vmas; i++) {
		const struct ckpt_vma *v = &c->vmas[i];
		if (v->file_idx >= 0 && (uint32_t)v->file_idx < CKPT_MAX_FILES &&
		    ((v->prot & CKPT_PROT_EXEC) || (c->files[v->file_idx].flags & CKPT_FE_EXE)))
			program[v->file_idx / 64] |= 1ull << (v->file_idx % 64);
	}
	for (uint32_t i = 0; i < c->n_vmas; i++) {
		const struct ckpt_vma *v = &c->vmas[i];
		if ((v->flags & CKPT_VMA_FILE) &&
		    (v->file_idx < 0 || (uint32_t)v->file_idx >= CKPT_MAX_FILES ||
		     !(program[v->file_idx / 64] >> (v->file_idx % 64) & 1)))
			return 1;
	}
	return 0;
}

/* Locks of this process whose descriptor is gone or left out (e.g. a flock
 * kept alive by a mapping): /proc/locks lists the owner pid.  Read only
 * when a data file is mapped: the first read of /proc/locks in a process
 * often stalls 8-16 ms here (the file-lock rwsem's slow path while other
 * processes take locks), which was most of a 1 MB capture's wall time. */
static int check_proc_locks(struct ckpt_ctx *c)
{
	size_t len;
	if (!maps_data_file(c))
		return 0;
	char *s = ckpt_read_proc(c, "/proc/locks", &len), l[160];
	if (!s)
		return 0; /* no /proc/locks (kernel without it): fdinfo is the check */
	long me = k_getpid();
	for (char *line = s; *line;) {
		char kind[16], *nl = strchr(line, '\n');
		long pid = 0;
		/* "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; "-> " lines are waiters */
		if (sscanf(line, "%*d: %15s %*s %*s %ld", kind, &pid) == 2 && pid == me) {
			line_of(line, l, sizeof(l));
			return ckpt_fail(c, CKPT_E_LOCK, "file lock held: %s", l);
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	return 0;
}

long ckpt_status_field(const char *s, const char *name, long dflt)
{
	const char *p = s ? strstr(s, name) : NULL;
	return p ? strtol(p + strlen(name), NULL, 10) : dflt;
}

const char *ckpt_status(struct ckpt_ctx *c)
{
	if (!c->status) {
		char *st = ckpt_alloc(&c->a, 8192);
		if (st && read_small("/proc/self/status", st, 8192) > 0)
			c->status = st;
	}
	return c->status;
}

/* smaps "VmFlags: ... lo ...": mark the captured pieces of locked VMAs. */
static int mark_locked(struct ckpt_ctx *c)
{
	size_t len;
	char *s = ckpt_read_proc(c, "/proc/self/smaps", &len);
	if (!s)
		return CKPT_E_PROC;
	unsigned long long start = 0, end = 0;
	uintptr_t arena = (uintptr_t)c->a.base;
	for (char *line = s; *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		unsigned long long a, b;
		if (line[0] != 'V' && sscanf(line, "%llx-%llx ", &a, &b) == 2)
			start = a, end = b;
		else if (!strncmp(line, "VmFlags:", 8) && strstr(line, " lo")) {
			if (arena >= start && arena < end)
				return ckpt_fail(c, CKPT_E_MLOCK,
						 "mlockall(MCL_FUTURE) is in effect (new mappings are locked)");
			for (uint32_t i = 0; i < c->n_vmas; i++)
				if (c->vmas[i].start < end && c->vmas[i].end > start)
					c->vmas[i].flags |= CKPT_VMA_LOCKED;
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	return 0;
}

/* A child that shares our memory and waits on a pipe: it has no SysV
 * semaphore undo list (not cloned with CLONE_SYSVSEM), so kcmp tells
 * whether ours is empty too. */
static int sem_child(void *arg)
{
	char b;
	syscall(SYS_read, *(int *)arg, &b, 1);
	syscall(SYS_exit, 0);
	return 0;
}

/* semop(SEM_UNDO) gives the process an undo list: its exit (the killed
 * original after a migration) would apply the adjustments, and the restored
 * copy would not have them.  Only looked for when semaphore sets exist. */
static int check_sem_undo(struct ckpt_ctx *c)
{
	char buf[256];
	if (read_small("/proc/sysvipc/sem", buf, sizeof(buf)) <= 0)
		return 0;
	char *nl = strchr(buf, '\n');
	if (!nl || !nl[1])
		return 0; /* header only: no semaphore set in this IPC namespace */
	int p[2];
	if (pipe2(p, O_CLOEXEC))
		return ckpt_fail(c, CKPT_E_PROC, "pipe for the SysV undo check: %s", strerror(errno));
	size_t stk = 64 << 10;
	unsigned char *stack = ckpt_alloc(&c->a, stk);
	int r = 0;
	pid_t pid = stack ? clone(sem_child, stack + stk, CLONE_VM, &p[0]) : -1;
	if (pid > 0) {
		long k = syscall(SYS_kcmp, k_getpid(), pid, KCMP_SYSVSEM, 0, 0);
		if (k > 0)
			r = ckpt_fail(c, CKPT_E_SYSV, "SysV semaphore undo list (semop with SEM_UNDO was used)");
	}
	if (pid > 0 && write(p[1], "x", 1) != 1) /* the child has its own copy of p[1]: EOF never comes */
		kill(pid, SIGKILL);
	k_close(p[1]);
	if (pid > 0)
		while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	k_close(p[0]);
	return r;
}

int ckpt_check_process(struct ckpt_ctx *c)
{
	const char *st = ckpt_status(c);
	if (!st)
		return ckpt_fail(c, CKPT_E_PROC, "cannot read /proc/self/status");
	long mode = ckpt_status_field(st, "\nSeccomp:", 0);
	if (mode == 1)
		return ckpt_fail(c, CKPT_E_SECCOMP, "seccomp strict mode");
	if (mode == 2)
		return ckpt_fail(c, CKPT_E_SECCOMP, "seccomp filter mode (%ld filters installed)",
				 ckpt_status_field(st, "\nSeccomp_filters:", 1));
	int r = check_proc_locks(c);
	if (!r)
		r = check_sem_undo(c);
	if (!r && ckpt_status_field(st, "\nVmLck:", 0) > 0)
		r = mark_locked(c);
	return r;
}

/* mlockall(MCL_FUTURE) locks (and populates) every new mapping: a fresh
 * page is resident before it is touched.  Checked before the capture maps
 * its arena, which would otherwise be populated whole. */
int ckpt_probe_mcl_future(struct ckpt_error *err)
{
	unsigned char v = 0;
	void *p = k_mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	int locked = k_mincore(p, 4096, &v) == 0 && (v & 1);
	k_munmap(p, 4096);
	if (!locked)
		return 0;
	struct ckpt_ctx tmp = { .err = err };
	return ckpt_fail(&tmp, CKPT_E_MLOCK, "mlockall(MCL_FUTURE) is in effect (new mappings are locked)");
}
