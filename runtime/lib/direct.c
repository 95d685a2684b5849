/* The direct path across hosts, sending side and leaving (docs/datapath.md
 * §6). In a job with r = 1 (msgrun --no-direct turns it off) a process's
 * first send to a rank asks msgd for a stream (L_DIRECT_REQ); that message
 * and the next ones go through msgd until the daemons have made a TCP
 * connection between the two hosts and passed each process its end
 * (L_DIRECT, SCM_RIGHTS; libmsg holds no key). Then:
 *
 *  - the sender writes START(m0) (its messages through msgd so far), then one
 *    record per message: DATA with the message when the socket has room for
 *    the whole record, else (after a bounded wait) the message goes through
 *    msgd with L_TAG_DIRECT and a DAEMON record takes its place;
 *  - the receiver reads records into memory (direct_recv.c);
 *  - leaving (a capture, a stall, msgFinalize): shut down writing on every
 *    outgoing stream, write LEAVE on every incoming one and read it to its
 *    end (its sender shuts down when it sees LEAVE), keep what was read (the
 *    stash); close each socket only after its other direction ended, so no
 *    close resets a connection with bytes the peer had not read.
 *
 * No threads: every stream is served inside libmsg calls. */
#include <errno.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "lib/direct.h"
#include "msg.h"

/* No room: SPACE_WAIT_NS / SPACE_WAIT_MAX_NS (lib.h). Two processes writing
 * to each other read each other's streams while they wait (put_record,
 * wait_room), so the bound only keeps a wait across other ranks (a cycle
 * through a receive) from deadlocking (records for 12-61 of 910 messages
 * went round at load 18 with 2 ms). */
#define SHORT_ROOM_NAP_NS 100000ull
#define REVERSE_CHECK_NS 100000ull  /* a sender looks for LEAVE this often */
#define DIRECT_BUF (4 << 20)        /* socket buffers asked for */

struct direct_test direct_test = { .leave_after = -1 };

/* Poll sets of waits: 2 per rank (both directions) and 2 more. */
struct pollfd *direct_pfd;
uint32_t *direct_who;
static uint32_t writing_to = UINT32_MAX; /* a record is half written to it */

static void test_switches(void)
{
	const char *d = getenv("MSG_TEST_DIRECT_LEAVE"), *colon, *b;

	if (d && (colon = strchr(d, ':')) && strtoul(d, NULL, 10) == msg_lib.id)
		direct_test.leave_after = strtol(colon + 1, NULL, 10);
	direct_test.no_drain = getenv("MSG_TEST_DIRECT_NO_DRAIN") != NULL;
	direct_test.sync = getenv("MSG_TEST_DIRECT_SYNC") != NULL;
	b = getenv("MSG_TEST_DIRECT_AFTER");
	direct_test.after = b ? strtoull(b, NULL, 10) : 0;
	b = getenv("MSG_TEST_DIRECT_SNDBUF");
	direct_test.sndbuf = b ? atoi(b) : 0;
	b = getenv("MSG_TEST_DIRECT_LEAVE_PAUSE");
	direct_test.leave_pause_ms = b ? atoi(b) : 0;
	direct_test.room_spin = getenv("MSG_TEST_DIRECT_ROOM_SPIN") != NULL;
	direct_test.no_keep_big = getenv("MSG_TEST_DIRECT_NO_KEEP_BIG") != NULL;
	b = getenv("MSG_TEST_DIRECT_START_DELAY"); /* "rank:ms" */
	if (b && (colon = strchr(b, ':')) && strtoul(b, NULL, 10) == msg_lib.id)
		direct_test.start_delay_ms = atoi(colon + 1);
	direct_test.start_no_news = getenv("MSG_TEST_DIRECT_START_NO_NEWS") != NULL;
}

bool direct_enabled(void)
{
	return (msg_lib.flags & JOB_F_DIRECT) && msg_lib.r == 1;
}

struct dpeer *dpeer(uint32_t r)
{
	if (!msg_lib.dp) {
		uint32_t i;

		msg_lib.dp = calloc(msg_lib.n, sizeof(struct dpeer));
		direct_pfd = calloc(2 * (size_t)msg_lib.n + 4, sizeof(*direct_pfd));
		direct_who = calloc(2 * (size_t)msg_lib.n + 4, sizeof(*direct_who));
		if (!msg_lib.dp || !direct_pfd || !direct_who) {
			free(msg_lib.dp);
			msg_lib.dp = NULL;
			return NULL;
		}
		for (i = 0; i < msg_lib.n; i++)
			msg_lib.dp[i].out_fd = msg_lib.dp[i].in_fd = -1;
		test_switches();
	}
	return &msg_lib.dp[r];
}

bool direct_in_open(uint32_t s)
{
	return msg_lib.dp && msg_lib.dp[s].in_fd >= 0;
}

/* Tests: the congestion control msgd set on our first outgoing stream (the
 * sender's side is the one it governs). */
static char out_cc[16];

static void note_out_cc(int fd)
{
	socklen_t l = sizeof(out_cc) - 1;

	if (!out_cc[0] && getenv("MSG_TEST_DIRECT_REPORT") &&
	    getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, out_cc, &l))
		out_cc[0] = 0;
}

static void tune(int fd, bool out)
{
	int sz = direct_test.sndbuf ? direct_test.sndbuf : DIRECT_BUF;

	setsockopt(fd, SOL_SOCKET, out ? SO_SNDBUF : SO_RCVBUF, &sz, sizeof(sz));
}

static void end_out_at(struct dpeer *p, int line)
{
	if (getenv("MSG_TEST_DIRECT_TRACE"))
		fprintf(stderr, "msg: rank %u: end of stream to %ld (line %d, errno %d)\n", msg_lib.id,
			(long)(p - msg_lib.dp), line, errno);
	if (p->out_fd >= 0) {
		shutdown(p->out_fd, SHUT_WR);
		close(p->out_fd);
	}
	p->out_fd = -1;
	p->out = OUT_NEVER;
}
#define end_out(p) end_out_at(p, __LINE__)

/* Write the whole record (the socket had room for it, or we wait here for
 * room, reading our own incoming streams meanwhile so that two processes
 * writing to each other both go on). 0, or -1 if the stream broke. */
static int put_record(struct dpeer *p, uint32_t d, uint32_t kind, int32_t tag, uint64_t size,
		      uint64_t aux, const void *buf, uint64_t len)
{
	uint8_t h[DREC_HDR];
	struct iovec iov[2] = { { h, DREC_HDR }, { (void *)buf, (size_t)len } };
	int i = 0, iovcnt = len ? 2 : 1;

	memcpy(h, &kind, 4);
	memcpy(h + 4, &tag, 4);
	memcpy(h + 8, &size, 8);
	memcpy(h + 16, &aux, 8);
	while (i < iovcnt) {
		struct msghdr mh = { .msg_iov = iov + i, .msg_iovlen = (size_t)(iovcnt - i) };
		ssize_t n = sendmsg(p->out_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			int k = direct_pollset(true);

			direct_pfd[k] = (struct pollfd){ .fd = p->out_fd, .events = POLLOUT };
			writing_to = d; /* its LEAVE waits for the end of this record */
			if (poll(direct_pfd, (nfds_t)k + 1, 1000) > 0)
				direct_poll_events(k);
			writing_to = UINT32_MAX;
			continue;
		}
		if (n < 0)
			return -1;
		while (i < iovcnt && (size_t)n >= iov[i].iov_len)
			n -= (ssize_t)iov[i++].iov_len;
		if (i < iovcnt) {
			iov[i].iov_base = (char *)iov[i].iov_base + n;
			iov[i].iov_len -= (size_t)n;
		}
	}
	p->room = p->room > DREC_HDR + len ? p->room - (DREC_HDR + len) : 0; /* room() */
	return 0;
}

/* The room in the socket (SIOCOUTQ), remembered as p->room: the bytes
 * queued only shrink between two looks except by what we write, so the
 * remembered room minus what we wrote since is a lower bound, and a send
 * that fits in it needs no ioctl (one syscall less per small message). */
static uint64_t room(struct dpeer *p)
{
	int queued = 0;

	if (ioctl(p->out_fd, SIOCOUTQ, &queued) || (uint64_t)queued >= p->sndbuf)
		p->room = 0;
	else
		p->room = p->sndbuf - (uint64_t)queued;
	return p->room;
}

/* msgd passed us a stream's end, refused one, or asks us to leave. */
void direct_frame(const struct frame *f)
{
	int fd = msg_lib.passed_fd;
	uint32_t peer = f->u.direct.peer;
	struct dpeer *p = peer < msg_lib.n ? dpeer(peer) : NULL;
	int one = 1, zero = 0;

	msg_lib.passed_fd = -1;
	if (f->u.direct.what == DIRECT_LEAVE) {
		msg_lib.direct_leave_req = true;
		direct_events++;
		return;
	}
	if (!p || f->u.direct.what == DIRECT_REFUSED) {
		if (p && p->out == OUT_REQ && (f->h.flags & DIRECT_F_RETRY) && p->retries < 6) {
			/* its peer had not started: ask again a few sends later */
			p->out = OUT_NONE;
			p->retry_seq = msg_lib.next_seq[peer] + (8u << p->retries++);
		} else if (p && p->out != OUT_OPEN) {
			p->out = OUT_NEVER;
		}
		if (fd >= 0)
			close(fd);
		return;
	}
	if (fd < 0)
		return;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* msgd's connections give up on data unacknowledged for a heartbeat
	 * timeout (a lost host); a stream's reader may simply not read for a
	 * while (the window stays closed): no timeout here */
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &zero, sizeof(zero));
	if (f->u.direct.what == DIRECT_IN) {
		/* even when we left: read it to its end at the next call */
		if (p->in_fd >= 0)
			close(fd); /* one stream per pair: never happens */
		else
			p->in_fd = fd;
		tune(fd, false);
		direct_events++;
		return;
	}
	if (p->out == OUT_OPEN || msg_lib.direct_off) {
		close(fd); /* nothing written: its reader sees the end at once */
		if (p->out != OUT_OPEN)
			p->out = OUT_NEVER;
		return;
	}
	{
		int sb = 0;
		socklen_t sl = sizeof(sb);

		tune(fd, true);
		note_out_cc(fd);
		p->out_fd = fd;
		p->out = OUT_OPEN;
		/* the kernel doubles SO_SNDBUF for its own overhead */
		p->sndbuf = getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sb, &sl) || sb <= 0 ?
				    64 << 10 : (uint64_t)sb / 2;
		if (direct_test.start_delay_ms)
			poll(NULL, 0, direct_test.start_delay_ms);
		/* its receiver takes the messages before this from msgd first */
		if (put_record(p, peer, DREC_START, 0, 0, msg_lib.next_seq[peer], NULL, 0))
			end_out(p);
	}
}

/* LEAVE (or the end) on the reverse of our stream to d: end the stream;
 * the rest of the pair goes through msgd. now: look even if we looked
 * recently. */
void direct_check_reverse(uint32_t d, bool now)
{
	struct dpeer *p = &msg_lib.dp[d];
	uint64_t t;
	char c;
	ssize_t n;

	if (p->out != OUT_OPEN || d == writing_to)
		return;
	t = lib_now_ns();
	if (!now && t - p->rev_checked < REVERSE_CHECK_NS)
		return;
	p->rev_checked = t;
	n = recv(p->out_fd, &c, 1, MSG_DONTWAIT);
	if (n > 0 || n == 0 || (errno != EAGAIN && errno != EINTR))
		end_out(p); /* its reader left (or is gone): it read to our end */
}

/* Descriptors a libmsg wait watches besides msgd's socket: the reverse of
 * every outgoing stream (LEAVE) and, with_in, every incoming stream. */
int direct_pollset(bool with_in)
{
	uint32_t r;
	int k = 0;

	for (r = 0; msg_lib.dp && r < msg_lib.n; r++) {
		struct dpeer *d = &msg_lib.dp[r];

		if (d->out == OUT_OPEN) {
			direct_pfd[k] = (struct pollfd){ .fd = d->out_fd, .events = POLLIN };
			direct_who[k++] = r;
		}
		if (with_in && d->in_fd >= 0) {
			direct_pfd[k] = (struct pollfd){ .fd = d->in_fd, .events = POLLIN };
			direct_who[k++] = r | DIRECT_WHO_IN;
		}
	}
	return k;
}

void direct_poll_events(int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (!direct_pfd[i].revents)
			continue;
		if (direct_who[i] & DIRECT_WHO_IN)
			direct_pump(direct_who[i] & ~DIRECT_WHO_IN);
		else
			direct_check_reverse(direct_who[i], true);
	}
}

/* Wait for room for a record of len bytes (bounded): true if there is. */
static bool wait_room(struct dpeer *p, uint32_t d, uint64_t len)
{
	uint64_t t = lib_now_ns();
	uint64_t deadline = t + (space_wait_fixed ? SPACE_WAIT_NS : SPACE_WAIT_MAX_NS);

	bool short_room = false;

	(void)d;
	for (;;) {
		struct timespec ts;
		uint64_t left;
		int k;

		if (p->out != OUT_OPEN)
			return false;
		if (room(p) >= len)
			return true;
		t = lib_now_ns();
		if (t >= deadline)
			return false;
		k = direct_pollset(true);
		direct_pfd[k] = (struct pollfd){ .fd = p->out_fd, .events = POLLOUT };
		left = deadline - t;
		/* POLLOUT came, yet the room (SIOCOUTQ against half the kernel's
		 * buffer) is short of this record: the socket stays writable, so
		 * polling it again returns at once. Sleep a little on the other
		 * descriptors instead (the stream holds megabytes for its reader
		 * meanwhile); the sender spun here at 100% of a CPU, a third of a
		 * crowded 2-core host's cycles in a 1 MiB transfer. */
		if (short_room && !direct_test.room_spin && left > SHORT_ROOM_NAP_NS)
			left = SHORT_ROOM_NAP_NS;
		ts = (struct timespec){ .tv_sec = (time_t)(left / 1000000000u),
					.tv_nsec = (long)(left % 1000000000u) };
		if (ppoll(direct_pfd, (nfds_t)k + (short_room && !direct_test.room_spin ? 0 : 1),
			  &ts, NULL) > 0)
			direct_poll_events(k);
		short_room = !short_room && (direct_pfd[k].revents & POLLOUT);
	}
}

int direct_send(int dest, int tag, const void *buf, size_t size, uint64_t site)
{
	uint32_t d = (uint32_t)dest;
	struct dpeer *p;
	struct frame f = { .h.type = L_DIRECT_REQ };
	uint64_t need = DREC_HDR + size;
	int ret;

	if (msg_lib.direct_off || d == msg_lib.id || !(p = dpeer(d)))
		return 1;
	if (p->out == OUT_NONE) {
		if (msg_lib.next_seq[d] < p->retry_seq || msg_lib.next_seq[d] < direct_test.after)
			return 1;
		p->out = OUT_REQ;
		f.u.direct_req.dst = d;
		ret = lib_write_frame(&f, NULL, 0);
		/* tests: wait for the answer, so that a burst finds its stream */
		while (!ret && direct_test.sync && p->out == OUT_REQ) {
			struct frame g;

			ret = lib_read_frame_any(&g);
			if (!ret && g.h.type == L_ERROR && g.u.error.code == MSG_EINTERNAL_STALL)
				lib_stall();
			if (!ret && g.h.type != L_DIRECT)
				ret = MSG_EPROTO;
		}
		if (ret)
			return ret;
		if (p->out != OUT_OPEN)
			return 1; /* this message is one of those before the stream (m0) */
	}
	if (p->out != OUT_OPEN)
		return 1;
	if (need <= p->sndbuf && (p->room >= need || room(p) >= need || wait_room(p, d, need))) {
		if (put_record(p, d, DREC_DATA, tag, size, 0, buf, size)) {
			end_out(p); /* its reader is gone: msgd knows what to do */
			return 1;
		}
		msg_lib.direct_sends++;
		/* LEAVE, after the write (not on the message's way out): a
		 * leaver reads its streams to their end, so what we wrote
		 * before we saw it still reaches it */
		direct_check_reverse(d, false);
		return MSG_OK;
	}
	if (p->out != OUT_OPEN)
		return 1;
	/* through msgd, and a record at its place: only that record's receive
	 * takes it there (L_TAG_DIRECT) */
	ret = lib_daemon_send(dest, tag | L_TAG_DIRECT, buf, size, site);
	if (ret)
		return ret;
	if (put_record(p, d, DREC_DAEMON, tag, size, msg_lib.next_seq[d], NULL, 0))
		end_out(p);
	msg_lib.direct_daemon_recs++;
	return MSG_OK;
}

/* Leave every stream (docs/datapath.md §6, D3). discard: at msgFinalize,
 * what is still unread is dropped instead of kept. */
void direct_leave(bool discard)
{
	uint32_t r, n = msg_lib.n;
	char leave = DREC_LEAVE_BYTE;

	msg_lib.direct_off = true;
	msg_lib.direct_leave_req = false;
	if (!msg_lib.dp)
		return;
	for (r = 0; r < n; r++) {
		struct dpeer *p = &msg_lib.dp[r];

		if (p->out == OUT_OPEN)
			shutdown(p->out_fd, SHUT_WR); /* its reader sees our end */
		else if (p->out != OUT_NEVER)
			p->out = OUT_NEVER;
		if (p->in_fd >= 0) {
			if (direct_test.no_drain) { /* negative control: unread is lost */
				close(p->in_fd);
				p->in_fd = -1;
				continue;
			}
			/* fails only if its sender ended already: we read its end below */
			(void)!send(p->in_fd, &leave, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
		}
	}
	/* read every incoming stream to its end, and wait for every reader of
	 * ours to end its side (it read ours to the end) */
	for (;;) {
		struct pollfd *fds = direct_pfd;
		uint32_t *who = direct_who;
		int k = direct_pollset(true);

		if (!k)
			break;
		if (poll(fds, (nfds_t)k, -1) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < k; i++) {
			if (!fds[i].revents)
				continue;
			if (who[i] & DIRECT_WHO_IN) {
				direct_pump(who[i] & ~DIRECT_WHO_IN);
			} else {
				struct dpeer *p = &msg_lib.dp[who[i]];
				char buf[64];
				ssize_t m = recv(p->out_fd, buf, sizeof(buf), MSG_DONTWAIT);

				if (m == 0 || (m < 0 && errno != EAGAIN && errno != EINTR)) {
					close(p->out_fd);
					p->out_fd = -1;
					p->out = OUT_NEVER;
				}
			}
		}
	}
	for (r = 0; r < n; r++) {
		if (discard || direct_test.no_drain) {
			msg_lib.dp[r].nq = 0; /* their data is freed at exit */
			continue;
		}
		direct_queue_to_stash(r);
	}
}

void direct_report(void)
{
	if (!getenv("MSG_TEST_DIRECT_REPORT")) /* tests: which routes were taken? */
		return;
	if (out_cc[0])
		fprintf(stderr, "msg: rank %u: congestion control of its streams: %s\n", msg_lib.id,
			out_cc);
	fprintf(stderr, "msg: rank %u: %llu sends and %llu receives through streams, "
		"%llu records for messages at msgd, %llu messages pulled from msgd ahead "
		"of a stream, %llu finished in place after a spinning look\n", msg_lib.id,
		(unsigned long long)msg_lib.direct_sends,
		(unsigned long long)msg_lib.direct_recvs,
		(unsigned long long)msg_lib.direct_daemon_recs,
		(unsigned long long)msg_lib.direct_pulled,
		(unsigned long long)msg_lib.direct_in_place);
}
