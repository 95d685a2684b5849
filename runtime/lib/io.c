#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "lib/lib.h"
#include "msg.h"

/* At most this much per read or write. The kernel here is PREEMPT_NONE: a
 * socket call that keeps finding room or data (msgd feeding it from the other
 * core) copies, and faults in fresh pages, without a preemption point, and a
 * 1 GiB call kept the daemons off the CPU for 300 ms (false host losses).
 * Returning to user space every MiB bounds that to about a millisecond. */
#define LIB_IO_SLICE (1u << 20)

/* Header and payload go out in one writev: no staging copy of the payload. */
int lib_write_frame(const struct frame *f, const void *payload, uint64_t len)
{
	uint8_t hdr[256];
	long hl = frame_encode(f, hdr, sizeof(hdr));
	struct iovec iov[2] = { { hdr, (size_t)hl }, { (void *)payload, (size_t)len } };
	int iovcnt = len ? 2 : 1, i = 0;

	if (hl < 0)
		return MSG_EPROTO;
	while (i < iovcnt) {
		struct iovec cut[2];
		int cnt = 0;
		size_t room = LIB_IO_SLICE;

		for (int k = i; k < iovcnt && room; k++, cnt++) {
			cut[cnt] = iov[k];
			if (cut[cnt].iov_len > room)
				cut[cnt].iov_len = room;
			room -= cut[cnt].iov_len;
		}
		ssize_t n = writev(msg_lib.fd, cut, cnt);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return MSG_EDAEMON;
		}
		while (i < iovcnt && (size_t)n >= iov[i].iov_len)
			n -= (ssize_t)iov[i++].iov_len;
		if (i < iovcnt) {
			iov[i].iov_base = (char *)iov[i].iov_base + n;
			iov[i].iov_len -= (size_t)n;
		}
	}
	return MSG_OK;
}

/* recvmsg, so a descriptor msgd passes with a frame (L_CKPT) is taken. */
static ssize_t recv_some(void *p, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { p, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	ssize_t n = recvmsg(msg_lib.fd, &mh, MSG_CMSG_CLOEXEC);
	struct cmsghdr *cm;

	for (cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm; cm = CMSG_NXTHDR(&mh, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			if (msg_lib.passed_fd >= 0)
				close(msg_lib.passed_fd);
			memcpy(&msg_lib.passed_fd, CMSG_DATA(cm), sizeof(int));
		}
	return n;
}

static int read_full(void *buf, uint64_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = recv_some(p, len > LIB_IO_SLICE ? LIB_IO_SLICE : len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return MSG_EDAEMON;
		p += n;
		len -= (uint64_t)n;
	}
	return MSG_OK;
}

/* Before a blocking read of the next frame: poll the socket for up to the
 * adaptive spin bound (spin.c). A frame from msgd that finds its reader
 * asleep pays a cross-CPU wake-up (about 35 us here, the largest single
 * cost of a cross-host message: docs/datapath.md); one that finds it
 * spinning on an otherwise idle core pays none. MSG_PEEK: the bytes (and a
 * passed descriptor) stay for the read itself. */
static void spin_for_frame(void)
{
	uint64_t spin = lib_spin_ns(), until;
	char c;

	if (!spin)
		return;
	until = lib_now_ns() + spin;
	do {
		ssize_t n = recv(msg_lib.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);

		if (n >= 0 || (errno != EAGAIN && errno != EINTR))
			return; /* data, end of file or an error: the read sees it */
		__builtin_ia32_pause();
	} while (lib_now_ns() < until);
}

int lib_read_frame_any(struct frame *f)
{
	uint8_t buf[FRAME_HDR_LEN + 256];
	struct frame_hdr h;
	int ret;

	spin_for_frame();
	ret = read_full(buf, FRAME_HDR_LEN);

	if (ret)
		return ret;
	if (frame_decode_hdr(buf, FRAME_HDR_LEN, &h) || h.len > 256)
		return MSG_EPROTO;
	ret = read_full(buf + FRAME_HDR_LEN, h.len);
	if (ret)
		return ret;
	if (frame_decode_body(&h, buf + FRAME_HDR_LEN, f))
		return MSG_EPROTO;
	if (f->h.type == L_DIRECT)
		direct_frame(f); /* a stream's end rides with it: take it now */
	return MSG_OK;
}

/* msgd's news of direct streams can come between any two frames: they are
 * taken as they come, and the caller sees the next frame. */
int lib_read_frame(struct frame *f)
{
	int ret;

	do
		ret = lib_read_frame_any(f);
	while (!ret && f->h.type == L_DIRECT);
	return ret;
}

void lib_stall(void)
{
	for (;;) {
		struct timespec t = { 1, 0 };

		nanosleep(&t, NULL);
	}
}

/* The payload is read straight into the caller's buffer. */
int lib_read_payload(void *buf, uint64_t len)
{
	return read_full(buf, len);
}
