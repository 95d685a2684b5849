/*
 * mmt-errors: SAVE refuses cleanly - bad ioctl arguments, a dead pid, a
 * zombie, a kernel thread, itself, another user's process, and processes
 * holding state the image cannot carry (pipe, socket, second thread) -
 * and a refused target keeps running. The harness fails on any Oops.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include "mmt.h"

static int dev;

static int save_errno(pid_t pid, unsigned flags, struct msgmig_save *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->pid = pid;
	a->flags = flags;
	return ioctl(dev, MSGMIG_IOC_SAVE, a) < 0 ? errno : 0;
}

static void t_bad_args(void)
{
	struct msgmig_save a;
	char buf[8];

	CHECK(ioctl(dev, _IO(MSGMIG_IOC_MAGIC, 99), 0) < 0 && errno == ENOTTY,
	      "unknown command: %s", strerror(errno));
	CHECK(ioctl(dev, MSGMIG_IOC_SAVE, (void *)8) < 0 && errno == EFAULT,
	      "bad pointer: %s", strerror(errno));
	CHECK(ioctl(dev, MSGMIG_IOC_VERSION, NULL) < 0 && errno == EFAULT,
	      "VERSION to NULL: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.size = 4;
	a.pid = 1;
	CHECK(ioctl(dev, MSGMIG_IOC_SAVE, &a) < 0 && errno == EINVAL, "short size");
	a.size = sizeof(a);
	a.flags = 0x80;
	CHECK(ioctl(dev, MSGMIG_IOC_SAVE, &a) < 0 && errno == EINVAL, "unknown flag");
	a.flags = 0;
	a.reserved = 1;
	CHECK(ioctl(dev, MSGMIG_IOC_SAVE, &a) < 0 && errno == EINVAL, "reserved set");
	CHECK(save_errno(0, 0, &a) == EINVAL, "pid 0");
	CHECK(save_errno(-7, 0, &a) == EINVAL, "pid -7");
	CHECK(save_errno(getpid(), 0, &a) == EINVAL, "self");
	CHECK(save_errno(2, 0, &a) == EPERM, "kernel thread: %s", strerror(errno));
	CHECK(read(dev, buf, sizeof(buf)) == 0, "no image after failures");
}

static void t_dead(void)
{
	struct msgmig_save a;
	pid_t p = fork();
	int err;

	if (p == 0)
		_exit(0);
	usleep(200000);		/* a zombie now */
	err = save_errno(p, 0, &a);
	CHECK(err == ESRCH, "zombie: %s", strerror(err));
	waitpid(p, NULL, 0);
	err = save_errno(p, 0, &a);
	CHECK(err == ESRCH, "reaped pid: %s", strerror(err));
	CHECK(save_errno(4000000, 0, &a) == ESRCH, "pid never used");
}

static pid_t as_user(uid_t uid, int dumpable)
{
	pid_t p = fork();

	if (p == 0) {
		if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(99);
		prctl(PR_SET_DUMPABLE, dumpable);
		pause();
		_exit(0);
	}
	usleep(100000);
	return p;
}

/* Run SAVE(target) as @uid in a child; its exit status is the errno. */
static int save_as(uid_t uid, pid_t target)
{
	struct msgmig_save a;
	pid_t p = fork();
	int st;

	if (p == 0) {
		if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(99);
		_exit(save_errno(target, 0, &a));
	}
	waitpid(p, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 98;
}

static void t_users(void)
{
	pid_t a = as_user(1000, 1), b = as_user(1000, 0);
	int err;

	err = save_as(1001, a);
	CHECK(err == EPERM, "uid 1001 saving uid 1000: %s", strerror(err));
	err = save_as(1000, b);
	CHECK(err == EPERM, "uid 1000 saving its non-dumpable process: %s", strerror(err));
	err = save_as(1000, a);
	CHECK(err == 0, "uid 1000 saving its own process: %s", strerror(err));
	kill(a, SIGKILL);
	kill(b, SIGKILL);
	waitpid(a, NULL, 0);
	waitpid(b, NULL, 0);
}

static void *sleeper(void *arg)
{
	(void)arg;
	pause();
	return NULL;
}

#define RUNTIME_SHM ((void *)0x200000000UL)
#define RUNTIME_SHM_LEN (64 << 10)

/*
 * A child holding what the image refuses: 1 pipe, 2 socket, 3 thread,
 * 4 a runtime-like pair: a writable shared mapping at RUNTIME_SHM and a
 * pipe at fds 20/21 (a stand-in for the runtime's rings and msgd link).
 */
static pid_t holder(int what)
{
	pid_t p = fork();
	pthread_t t;
	int fds[2];

	if (p == 0) {
		if (what == 1 && pipe(fds))
			_exit(1);
		if (what == 2 && socket(AF_UNIX, SOCK_STREAM, 0) < 0)
			_exit(1);
		if (what == 3 && pthread_create(&t, NULL, sleeper, NULL))
			_exit(1);
		if (what == 4 && (pipe(fds) || dup2(fds[0], 20) < 0 || dup2(fds[1], 21) < 0 ||
				  close(fds[0]) || close(fds[1]) ||
				  mmap(RUNTIME_SHM, RUNTIME_SHM_LEN, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
				       -1, 0) != RUNTIME_SHM))
			_exit(1);
		for (;;)
			pause();
	}
	usleep(200000);
	return p;
}

static char proc_state(pid_t p)
{
	char path[64], *s = NULL, *q, st = '?';
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/stat", p);
	if (mmt_read_file(path, &s, &len) == 0 && (q = strrchr(s, ')')))
		st = q[2];
	free(s);
	return st;
}

static void t_refused(void)
{
	static const struct {
		int what, reason;
		const char *name;
	} cases[] = {
		{ 1, -5, "pipe" }, { 2, -4, "socket" }, { 3, -3, "thread" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct msgmig_save a;
		pid_t p = holder(cases[i].what);
		int err = save_errno(p, MSGMIG_SAVE_KILL, &a);

		CHECK(err && a.reason == cases[i].reason, "%s: errno %d reason %d (%s)",
		      cases[i].name, err, a.reason, a.detail);
		mmt_note("%s refused: %s (reason %d: %s)", cases[i].name,
			 strerror(err), a.reason, a.detail);
		usleep(50000);
		CHECK(proc_state(p) == 'S', "%s: refused target is in state %c, not running",
		      cases[i].name, proc_state(p));
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
	}
}

/* The runtime's own fds and shared mappings are left out when named. */
static void t_excluded(void)
{
	struct msgmig_save a;
	pid_t p = holder(4);
	int err = save_errno(p, 0, &a);

	CHECK(err == EOPNOTSUPP && a.reason == -8, "shared mapping: errno %d reason %d (%s)",
	      err, a.reason, a.detail);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.pid = p;
	a.n_exclude_fds = 2;
	a.exclude_fds[0] = 20;
	a.exclude_fds[1] = 21;
	a.n_exclude_ranges = 1;
	a.exclude_ranges[0].start = (unsigned long)RUNTIME_SHM;
	a.exclude_ranges[0].end = (unsigned long)RUNTIME_SHM + RUNTIME_SHM_LEN;
	err = ioctl(dev, MSGMIG_IOC_SAVE, &a) < 0 ? errno : 0;
	CHECK(err == 0, "with exclusions: %s (reason %d: %s)", strerror(err), a.reason,
	      a.detail);
	if (!err)
		mmt_note("runtime fds and shared mapping excluded: saved %llu bytes",
			 (unsigned long long)a.image_size);
	a.exclude_ranges[0].end = (unsigned long)RUNTIME_SHM + 5;
	CHECK(ioctl(dev, MSGMIG_IOC_SAVE, &a) < 0 && errno == EINVAL, "unaligned range");
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

int main(void)
{
	mmt_prog = "mmt-errors";
	dev = mmt_dev();
	t_bad_args();
	t_dead();
	t_users();
	t_refused();
	t_excluded();
	close(dev);
	return mmt_done();
}
