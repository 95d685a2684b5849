/* Helpers shared by the msgmig test programs that run inside the VM. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "mmt.h"

int mmt_failures;
const char *mmt_prog = "mmt";

void mmt_fail_at(const char *file, int line, const char *cond)
{
	printf("%s: FAILED %s:%d: %s\n", mmt_prog, file, line, cond);
}

void mmt_note(const char *fmt, ...)
{
	va_list ap;

	printf("%s:   ", mmt_prog);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

int mmt_done(void)
{
	printf("%s: %s (%d failure(s))\n", mmt_prog,
	       mmt_failures ? "FAILED" : "ok", mmt_failures);
	fflush(stdout);
	return mmt_failures ? 1 : 0;
}

int mmt_dev(void)
{
	int fd = open(MSGMIG_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("%s: open %s: %s\n", mmt_prog, MSGMIG_DEVICE,
		       strerror(errno));
		exit(1);
	}
	return fd;
}

int mmt_spawn(struct mmt_child *c, char *const argv[])
{
	int in[2], out[2];

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		return -1;
	fflush(stdout);
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->to = in[1];
	c->from = out[0];
	return 0;
}

int mmt_read_byte(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	unsigned char b;

	if (poll(&p, 1, timeout_ms) != 1 || read(fd, &b, 1) != 1)
		return -1;
	return b;
}

ssize_t mmt_read_all(int fd, char *buf, size_t cap, int timeout_ms)
{
	size_t len = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, timeout_ms) != 1)
			return -1;
		n = read(fd, buf + len, cap - len);
		if (n < 0)
			return -1;
		if (n == 0 || (len += n) == cap)
			return len;
	}
}

int mmt_wait(pid_t pid, int timeout_ms)
{
	int st;

	for (int waited = 0; waited <= timeout_ms; waited += 10) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0)
			return -1;
		usleep(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

int mmt_save(pid_t pid, unsigned int flags, const char *path,
	     struct msgmig_save *a)
{
	return mmt_save_rt(pid, flags, 0, 0, path, a);
}

int mmt_save_rt(pid_t pid, unsigned int flags, unsigned long long rt_addr,
		unsigned long long rt_len, const char *path, struct msgmig_save *a)
{
	char buf[1 << 16];
	int dev = mmt_dev(), out, err = 0;
	ssize_t n;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->pid = pid;
	a->flags = flags;
	a->runtime_addr = rt_addr;
	a->runtime_len = rt_len;
	if (ioctl(dev, MSGMIG_IOC_SAVE, a) < 0) {
		err = -errno;
		close(dev);
		return err;
	}
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		close(dev);
		return -errno;
	}
	while ((n = read(dev, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			err = -EIO;
	if (n < 0)
		err = -errno;
	close(out);
	close(dev);
	return err;
}

int mmt_read_file(const char *path, char **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 16;
	ssize_t n;

	/* Read to EOF: /proc files report size 0. */
	*len = 0;
	*data = NULL;
	if (fd < 0)
		return -1;
	for (;;) {
		char *p = realloc(*data, cap + 1);

		if (!p)
			break;
		*data = p;
		n = read(fd, *data + *len, cap - *len);
		if (n <= 0) {
			close(fd);
			(*data)[*len] = 0;
			return n < 0 ? -1 : 0;
		}
		*len += n;
		if (*len == cap)
			cap *= 2;
	}
	close(fd);
	return -1;
}

int mmt_write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, data, len) == (ssize_t)len;
	return close(fd) == 0 && ok ? 0 : -1;
}

int mmt_make_data(const char *path)
{
	static char buf[20000];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 7 + i / 251);
	return mmt_write_file(path, buf, sizeof(buf));
}

unsigned int mmt_crc32c(const void *p, size_t n)
{
	const unsigned char *c = p;
	unsigned int crc = 0xffffffffu;

	while (n--) {
		crc ^= *c++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & -(crc & 1));
	}
	return ~crc;
}
