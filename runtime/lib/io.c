#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
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

/* Sends held back (r > 1): see lib_queue_frame. Process memory, but always
 * empty at a capture (every read of msgd's socket, where a capture happens,
 * writes it out first). */
static uint8_t *held;
static size_t held_len;
static uint64_t held_since;   /* when the oldest held frame was made */
static bool held_exit_hook;

/* At most this much is held back; a larger message goes out at once. */
#define LIB_HOLD_MAX (64u << 10)
/* The next call counts as back-to-back within this many ns (MSG_HOLD_US). */
#define LIB_HOLD_NS_DEFAULT 50000u

/* Per send (call site, destination, tag), hashed: how many of its last sends
 * were followed by the next libmsg call within the bound (saturating at 3;
 * one slow gap resets it). Held only at 2 and more. */
static uint8_t hold_score[256];
uint64_t lib_held_sends, lib_queued_sends; /* MSG_TEST_HOLD_REPORT */
static int last_key = -1;     /* the previous call was a send with this key */
static uint64_t last_end;     /* ...which returned then */

static uint64_t hold_ns(void)
{
	static int64_t ns = -1;

	if (ns < 0) {
		const char *e = getenv("MSG_HOLD_US");

		ns = e && *e ? (int64_t)strtoull(e, NULL, 10) * 1000 : LIB_HOLD_NS_DEFAULT;
	}
	return (uint64_t)ns;
}

/* The previous send learns whether this call came right after it. */
static void gap_close(uint64_t now)
{
	uint8_t *sc;

	if (last_key < 0)
		return;
	sc = &hold_score[last_key];
	if (now - last_end < hold_ns())
		*sc = *sc < 3 ? *sc + 1 : 3;
	else
		*sc = 0;
	last_key = -1;
}

/* Write iov[0..iovcnt) whole, in slices of LIB_IO_SLICE. */
static int write_iov(struct iovec *iov, int iovcnt)
{
	int i = 0;

	while (i < iovcnt) {
		struct iovec cut[3];
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

/* Header and payload go out in one writev: no staging copy of the payload.
 * Held-back sends go in the same writev, ahead of it: one wake-up of msgd. */
int lib_write_frame(const struct frame *f, const void *payload, uint64_t len)
{
	uint8_t hdr[256];
	long hl = frame_encode(f, hdr, sizeof(hdr));
	struct iovec iov[3];
	int n = 0, ret;

	if (hl < 0)
		return MSG_EPROTO;
	if (last_key >= 0)
		gap_close(lib_now_ns());
	if (held_len)
		iov[n++] = (struct iovec){ held, held_len };
	iov[n++] = (struct iovec){ hdr, (size_t)hl };
	if (len)
		iov[n++] = (struct iovec){ (void *)payload, (size_t)len };
	ret = write_iov(iov, n);
	held_len = 0;
	return ret;
}

int lib_flush(void)
{
	struct iovec iov = { held, held_len };
	int ret;

	if (!held_len)
		return MSG_OK;
	ret = write_iov(&iov, 1);
	held_len = 0;
	return ret;
}

static void flush_at_exit(void)
{
	if (msg_lib.fd >= 0)
		lib_flush();
}

/* With r > 1 every message goes through msgd, and each write to its socket
 * wakes it (it is real-time: on this CPU it preempts us at once), then it
 * wakes the other hosts' daemons: a halo exchange's four back-to-back sends
 * cost four rounds of wake-ups on every host (docs/datapath.md §10). So a
 * small message whose send (call site, destination, tag) was, its last two
 * times, followed by the next libmsg call within 50 us is held back (copied:
 * the caller may reuse its buffer) and goes out with the next frame the
 * process writes to msgd (its next send that is not held, receive or
 * finalize), or before it next reads from or waits on msgd's socket, or at
 * exit; held frames older than the bound go out with the next send. A send
 * followed by computation is therefore written at once (one slow gap resets
 * its score): holding delays a message only as long as the process takes to
 * its next call, which was short the last times. Frames leave in the order
 * they were made. MSG_HOLD_US=0 turns holding off. */
int lib_queue_frame(const struct frame *f, const void *payload, uint64_t len, uint32_t key)
{
	uint8_t hdr[256];
	uint64_t now;
	long hl;
	int ret;

	if (msg_lib.r < 2 || !hold_ns())
		return lib_write_frame(f, payload, len);
	now = lib_now_ns();
	gap_close(now);
	key &= 255;
	lib_queued_sends++;
	if (hold_score[key] < 2 || len > LIB_HOLD_MAX / 2 ||
	    (held_len && now - held_since >= hold_ns()) || (!held && !(held = malloc(LIB_HOLD_MAX)))) {
		ret = lib_write_frame(f, payload, len);
		goto out;
	}
	hl = frame_encode(f, hdr, sizeof(hdr));
	if (hl < 0)
		return MSG_EPROTO;
	if (held_len + (size_t)hl + len > LIB_HOLD_MAX && lib_flush())
		return MSG_EDAEMON;
	if (!held_exit_hook) /* a process that exits without msgFinalize */
		held_exit_hook = atexit(flush_at_exit) == 0;
	if (!held_len)
		held_since = now;
	memcpy(held + held_len, hdr, (size_t)hl);
	if (len)
		memcpy(held + held_len + hl, payload, (size_t)len);
	held_len += (size_t)hl + len;
	lib_held_sends++;
	ret = MSG_OK;
out:
	last_key = (int)key;
	last_end = lib_now_ns();
	return ret;
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

	if (held_len && lib_flush()) /* what we wait for may answer them */
		return MSG_EDAEMON;

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

	if (held_len && lib_flush())
		return MSG_EDAEMON;
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
