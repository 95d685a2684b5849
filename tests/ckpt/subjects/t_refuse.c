/* SPDX-License-Identifier: MIT */
/* Refusals: t_refuse KIND creates one resource the image cannot carry and
 * prints what ckpt_capture said: "<CKPT_E_NAME> <what>". */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "subject.h"

static void *sleeper(void *a)
{
	(void)a;
	sleep(30);
	return NULL;
}

static int g_sem = -1;
static char g_lock_path[4096];

/* A scratch file in $TMPDIR (or /tmp), open read-write as fd 3 (the test expects fd 3). */
static int lock_file(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(g_lock_path, sizeof(g_lock_path), "%s/ckpt-lock-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(g_lock_path); /* removed after the capture: a deleted file is refused otherwise */
	if (fd < 0)
		return -1;
	if (ftruncate(fd, 4096))
		return -1;
	return fd;
}

static int fcntl_lock(int cmd)
{
	int fd = lock_file();
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 100 };
	return fd < 0 || fcntl(fd, cmd, &fl) != 0;
}

/* Allows every system call: a filter that changes nothing, but is one. */
static int seccomp_allow_all(void)
{
	struct sock_filter f[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { 1, f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static int make(const char *k)
{
	int fds[2];
	char params[120] = { 0 };
	pthread_t t;
	if (!strcmp(k, "thread"))
		return pthread_create(&t, NULL, sleeper, NULL);
	if (!strcmp(k, "socket"))
		return socket(AF_INET, SOCK_STREAM, 0) < 0;
	if (!strcmp(k, "pipe"))
		return pipe(fds);
	if (!strcmp(k, "eventfd"))
		return eventfd(0, 0) < 0;
	if (!strcmp(k, "io_uring"))
		return syscall(__NR_io_uring_setup, 4, params) < 0;
	if (!strcmp(k, "io_uring_mapped")) { /* ring mapped, descriptor closed */
		int fd = (int)syscall(__NR_io_uring_setup, 4, params);
		void *p = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (fd >= 0)
			close(fd);
		return p == MAP_FAILED;
	}
	if (!strcmp(k, "shared"))
		return mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0) == MAP_FAILED;
	if (!strcmp(k, "flock")) {
		int fd = lock_file();
		return fd < 0 || flock(fd, LOCK_EX);
	}
	if (!strcmp(k, "posix_lock"))
		return fcntl_lock(F_SETLK);
	if (!strcmp(k, "ofd_lock"))
		return fcntl_lock(F_OFD_SETLK);
	if (!strcmp(k, "mapped_lock")) { /* the fd is closed, the mapping keeps the flock */
		int fd = lock_file();
		if (fd < 0 || flock(fd, LOCK_EX))
			return -1;
		void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		return p == MAP_FAILED;
	}
	if (!strcmp(k, "sysv_shm") || !strcmp(k, "sysv_shm_ro")) {
		int id = shmget(IPC_PRIVATE, 8192, IPC_CREAT | 0600);
		void *p = id < 0 ? (void *)-1 : shmat(id, NULL, k[8] ? SHM_RDONLY : 0);
		if (id >= 0)
			shmctl(id, IPC_RMID, NULL); /* gone once we exit */
		return p == (void *)-1;
	}
	if (!strcmp(k, "sem_undo") || !strcmp(k, "sem_no_undo")) {
		struct sembuf op = { 0, 1, k[4] == 'u' ? SEM_UNDO : 0 };
		g_sem = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
		return g_sem < 0 || semop(g_sem, &op, 1);
	}
	if (!strcmp(k, "seccomp"))
		return seccomp_allow_all();
	if (!strcmp(k, "mlockall_future"))
		return mlockall(MCL_FUTURE);
	if (!strcmp(k, "reserved"))
		return mmap((void *)0x10000100000ul, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			    -1, 0) == MAP_FAILED;
	return -1;
}

int main(int argc, char **argv)
{
	if (argc < 2 || make(argv[1]))
		return 9;
	struct ckpt_opts o;
	struct ckpt_error e;
	memset(&o, 0, sizeof(o));
	if (argc > 2 && !strcmp(argv[2], "excluded")) { /* the runtime's own: left out */
		o.exclude_fds[o.n_exclude_fds++] = 3;
		void *shm = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		o.exclude_ranges[0].start = (uintptr_t)shm;
		o.exclude_ranges[0].end = (uintptr_t)shm + 8192;
		o.n_exclude_ranges = 1;
	}
	int fd = open("/dev/null", O_WRONLY), r;
	if (argc > 2 && !strcmp(argv[2], "prepared")) { /* the prepared stop: refused at its cut */
		o.prepare = 1;
		r = ckpt_precopy_begin(fd, &o, &e);
		if (!r && (r = ckpt_precopy_finish(&o, &e)) == CKPT_CAPTURED)
			ckpt_precopy_release();
	} else
		r = ckpt_capture(fd, &o, &e);
	printf("%s %s\n", ckpt_err_name(r), r < 0 ? e.what : "");
	if (g_sem >= 0)
		semctl(g_sem, 0, IPC_RMID);
	if (g_lock_path[0])
		unlink(g_lock_path);
	return 0;
}
