/* msgmig_client: see msgmig_client.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "msgmig_client.h"

int msgmig_available(void)
{
	struct msgmig_version v;
	int fd = open(MSGMIG_DEVICE, O_RDONLY | O_CLOEXEC);
	int ok;

	if (fd < 0)
		return 0;
	ok = ioctl(fd, MSGMIG_IOC_VERSION, &v) == 0 && v.uapi == MSGMIG_UAPI_VERSION;
	close(fd);
	return ok;
}

int msgmig_probe(char *why, size_t whylen)
{
	struct msgmig_version v;
	int fd = open(MSGMIG_DEVICE, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0) {
		ret = -errno;
		snprintf(why, whylen, "cannot open %s: %s%s", MSGMIG_DEVICE, strerror(errno),
			 errno == ENOENT ? " (msgmig.ko is not loaded)" : "");
		return ret;
	}
	if (ioctl(fd, MSGMIG_IOC_VERSION, &v)) {
		ret = -errno;
		snprintf(why, whylen, "%s: VERSION: %s", MSGMIG_DEVICE, strerror(errno));
	} else if (v.uapi != MSGMIG_UAPI_VERSION) {
		ret = -EPROTO;
		snprintf(why, whylen, "%s speaks uapi version %u, this program %u", MSGMIG_DEVICE,
			 v.uapi, MSGMIG_UAPI_VERSION);
	}
	close(fd);
	return ret;
}

static int fill_args(struct msgmig_save *a, pid_t pid,
		     const struct msgmig_client_opts *o)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->pid = pid;
	if (!o)
		return 0;
	if (o->n_exclude_fds < 0 || o->n_exclude_fds > MSGMIG_MAX_EXCLUDE_FDS ||
	    o->n_exclude_ranges < 0 || o->n_exclude_ranges > MSGMIG_MAX_EXCLUDE_RANGES)
		return -EINVAL;
	a->flags = o->flags;
	a->runtime_addr = o->runtime_addr;
	a->runtime_len = o->runtime_len;
	a->n_exclude_fds = o->n_exclude_fds;
	a->n_exclude_ranges = o->n_exclude_ranges;
	for (int i = 0; i < o->n_exclude_fds; i++)
		a->exclude_fds[i] = o->exclude_fds[i];
	for (int i = 0; i < o->n_exclude_ranges; i++)
		a->exclude_ranges[i] = o->exclude_ranges[i];
	return 0;
}

/* Write all of buf, waiting (never spinning) on a non-blocking socket. */
static int write_all(int fd, const char *buf, size_t n, unsigned long long *written)
{
	while (n) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };

			poll(&p, 1, 1000);
			continue;
		}
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		buf += w;
		n -= w;
		*written += (unsigned long long)w;
	}
	return 0;
}

int msgmig_save_to_fd(pid_t pid, const struct msgmig_client_opts *o,
		      int out_fd, struct msgmig_client_error *err)
{
	static char buf[1 << 16];
	struct msgmig_save a;
	int dev, ret;
	ssize_t n;

	memset(err, 0, sizeof(*err));
	ret = fill_args(&a, pid, o);
	if (ret)
		return ret;
	/*
	 * Stream: the kernel never holds the whole image, and the target is
	 * released (or killed) only once out_fd has taken all of it; if
	 * writing fails, closing the device lets the target go on.
	 */
	a.flags |= MSGMIG_SAVE_STREAM;
	dev = open(MSGMIG_DEVICE, O_RDONLY | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	if (ioctl(dev, MSGMIG_IOC_SAVE, &a) < 0) {
		ret = -errno;
		err->reason = a.reason;
		memcpy(err->detail, a.detail, sizeof(err->detail));
		close(dev);
		return ret;
	}
	while ((n = read(dev, buf, sizeof(buf))) > 0) {
		ret = write_all(out_fd, buf, n, &err->written);
		if (ret)
			break;
	}
	if (n < 0)
		ret = -errno;
	close(dev);
	return ret;
}
