/* SPDX-License-Identifier: MIT */
/* Refusals: t_refuse KIND creates one resource the image cannot carry and
 * prints what ckpt_capture said: "<CKPT_E_NAME> <what>". */
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "subject.h"

static void *sleeper(void *a)
{
	(void)a;
	sleep(30);
	return NULL;
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
	if (!strcmp(k, "shared"))
		return mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0) == MAP_FAILED;
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
	int fd = open("/dev/null", O_WRONLY);
	int r = ckpt_capture(fd, &o, &e);
	printf("%s %s\n", ckpt_err_name(r), r < 0 ? e.what : "");
	return 0;
}
