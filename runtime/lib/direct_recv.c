/* The direct path across hosts, receiving side (docs/datapath.md §6).
 *
 * Streams are read into memory, non-blocking, one queue of records per
 * source. A receive takes, in this order: the stash (messages pulled from
 * msgd ahead of a stream's records, and records kept when the process left
 * its streams); the first matching record of the source's queue (round
 * robin over sources for MSG_ANYSRC: with r = 1 no replica's order must
 * match); else it waits. A named source with an open stream: wait on the
 * streams. Otherwise the receive goes to msgd (L_RECV) and the wait watches
 * msgd and every stream: when a stream brings something first, the receive
 * at msgd is cancelled (L_RECV with RECV_F_CANCEL) and started over.
 *
 * Per-pair order across the switch (D2): the sender's START(m0) says how
 * many of its messages went through msgd before the stream; those still at
 * msgd are pulled into the stash (in channel order) before any record of
 * that stream is taken. A message the sender sent through msgd while the
 * stream was open carries L_TAG_DIRECT: no receive at msgd takes it except
 * the one for its DAEMON record. A stream is read to its end, and closed
 * (which lets its sender go on through msgd), only while no receive is in
 * flight at msgd; a message that comes from msgd after such an end and
 * finds an earlier one of its pair still in the stash waits there behind it. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/direct.h"
#include "msg.h"

#define RBUF_LEN (64u << 10)
#define STRAIGHT_MIN (64u << 10) /* below, a payload is copied: it costs little */
#define RESTART 3 /* internal: start the receive over from the top */
/* Stash and queue entries are named by arrival, as ring records are (by
 * the segment's counter, far below this): both kinds share the stash. */
#define ARRIVAL_BASE (1ull << 62)

uint32_t direct_events;
static uint32_t rr; /* MSG_ANYSRC's round robin over sources */
/* A job across hosts with same-host rings (docs/datapath.md §8): a wait
 * watches the rings too (ring_watch), from the bell's value ring_seen read
 * before this round looked at them; ring_rang: it changed. */
static bool ring_watch, ring_rang;
static uint32_t ring_seen;

/* --- the stash ---------------------------------------------------------- */

int stash_add(uint32_t src, uint32_t kind, int32_t tag, uint64_t size, void *data, size_t at)
{
	struct stash_ent *e;

	if (stash_reserve())
		return -1;
	if (at > msg_lib.nstash)
		at = msg_lib.nstash;
	memmove(&msg_lib.stash[at + 1], &msg_lib.stash[at],
		(msg_lib.nstash - at) * sizeof(*msg_lib.stash));
	e = &msg_lib.stash[at];
	*e = (struct stash_ent){ .src = src, .kind = kind, .tag = tag, .size = size,
				 .arrival = ARRIVAL_BASE + ++msg_lib.stash_next, .data = data };
	msg_lib.nstash++;
	return 0;
}

/* Where a message pulled from msgd goes: before the first of s's records. */
size_t stash_first_record_of(uint32_t s)
{
	size_t i;

	for (i = 0; i < msg_lib.nstash; i++)
		if (msg_lib.stash[i].src == s && msg_lib.stash[i].kind != DREC_PULLED)
			break;
	return i;
}

static void remove_at(struct stash_ent *v, size_t *n, size_t i)
{
	free(v[i].data);
	memmove(&v[i], &v[i + 1], (*n - i - 1) * sizeof(*v));
	(*n)--;
}

void direct_queue_to_stash(uint32_t s)
{
	struct dpeer *p = &msg_lib.dp[s];
	size_t i;

	for (i = 0; i < p->nq; i++)
		if (stash_add(s, p->q[i].kind, p->q[i].tag, p->q[i].size, p->q[i].data, SIZE_MAX)) {
			fprintf(stderr, "msg: out of memory keeping queued messages\n");
			abort(); /* losing them silently would break exactly-once */
		}
	p->nq = 0;
}

/* --- reading streams ---------------------------------------------------- */

static int queue(struct dpeer *p, uint32_t kind, int32_t tag, uint64_t size, void *data)
{
	if (p->nq == p->qcap) {
		size_t cap = p->qcap ? p->qcap * 2 : 16;
		struct stash_ent *v = realloc(p->q, cap * sizeof(*v));

		if (!v)
			return -1;
		p->q = v;
		p->qcap = cap;
	}
	p->q[p->nq++] = (struct stash_ent){ .kind = kind, .tag = tag, .size = size,
					    .arrival = ARRIVAL_BASE + ++msg_lib.stash_next,
					    .data = data };
	return 0;
}

/* Its end was read (or it broke): close it, which tells its sender we read
 * everything (it may go on through msgd now). */
void direct_close_in(uint32_t s)
{
	struct dpeer *p = &msg_lib.dp[s];

	if (p->in_fd >= 0)
		close(p->in_fd);
	p->in_fd = -1;
	free(p->pay);
	p->pay = NULL;
	p->big = false;
	p->rlen = p->roff = 0;
}

/* Take the records whole in the read-ahead. -1: a record no libmsg
 * writes (the stream is dropped: a protocol error, reported). keep_big: a
 * large DATA whose payload is not all here stays in the read-ahead (p->big)
 * for a receive to finish in place, instead of a malloc'd copy. */
static int parse(uint32_t s, struct dpeer *p, bool keep_big)
{
	while (p->rlen - p->roff >= DREC_HDR) {
		const uint8_t *h = p->rbuf + p->roff;
		uint32_t kind;
		int32_t tag;
		uint64_t size, aux, avail;
		void *data = NULL;

		memcpy(&kind, h, 4);
		memcpy(&tag, h + 4, 4);
		memcpy(&size, h + 8, 8);
		memcpy(&aux, h + 16, 8);
		if (kind < DREC_START || kind > DREC_DAEMON || size > FRAME_MSG_MAX || tag < 0 ||
		    (kind == DREC_START) == p->started) {
			fprintf(stderr, "msg: malformed record (kind %u) in the stream from rank %u\n",
				kind, s);
			return -1;
		}
		p->roff += DREC_HDR;
		if (kind == DREC_START) {
			p->started = true;
			p->m0 = aux;
			p->pre_left = aux > p->got_pre ? aux - p->got_pre : 0;
			/* news for a wait: the messages before the stream are at
			 * msgd, and only the receive loop pulls them (pull_pre).
			 * A spinning wait that read START and went on waiting on
			 * the drained stream hung with its message at msgd. */
			if (!direct_test.start_no_news)
				direct_events++;
			continue;
		}
		if (kind == DREC_DATA) {
			data = malloc(size ? size : 1);
			if (!data)
				return -1;
			avail = p->rlen - p->roff;
			if (avail < size && keep_big && size >= STRAIGHT_MIN &&
			    !direct_test.no_keep_big) {
				p->roff -= DREC_HDR;
				p->big = true;
				return 0;
			}
			if (avail < size) { /* the rest straight into place */
				memcpy(data, p->rbuf + p->roff, avail);
				p->roff = p->rlen;
				p->pay = data;
				p->pay_len = size;
				p->pay_off = avail;
				p->pay_tag = tag;
				return 0;
			}
			memcpy(data, p->rbuf + p->roff, size);
			p->roff += (uint32_t)size;
		}
		if (queue(p, kind, tag, size, data))
			return -1;
	}
	return 0;
}

/* Read what stream s has now (non-blocking), at most rounds reads. 1 when
 * it has ended. keep_big: see parse (a spinning receive's look). */
static int pump_some(uint32_t s, int rounds_max, bool keep_big)
{
	struct dpeer *p = &msg_lib.dp[s];
	ssize_t n;
	size_t want;

	if (p->in_fd < 0)
		return 1;
	if (!p->rbuf && !(p->rbuf = malloc(RBUF_LEN)))
		return 0;
	for (int rounds = 0; rounds < rounds_max; rounds++) {
		if (p->big) { /* no receive took it in place: the copy after all */
			p->big = false;
			if (parse(s, p, false)) {
				direct_close_in(s);
				return 1;
			}
		}
		if (p->pay) {
			want = p->pay_len - p->pay_off;
			n = recv(p->in_fd, p->pay + p->pay_off, want, MSG_DONTWAIT);
			if (n > 0 && (p->pay_off += (uint64_t)n) == p->pay_len) {
				if (queue(p, DREC_DATA, p->pay_tag, p->pay_len, p->pay))
					free(p->pay);
				p->pay = NULL;
				direct_events++;
			}
		} else {
			if (p->roff) {
				memmove(p->rbuf, p->rbuf + p->roff, p->rlen - p->roff);
				p->rlen -= p->roff;
				p->roff = 0;
			}
			want = RBUF_LEN - p->rlen;
			n = recv(p->in_fd, p->rbuf + p->rlen, want, MSG_DONTWAIT);
			if (n > 0) {
				size_t before = p->nq;

				p->rlen += (uint32_t)n;
				if (parse(s, p, keep_big)) {
					direct_close_in(s);
					return 1;
				}
				if (p->nq > before)
					direct_events++;
			}
		}
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			if (getenv("MSG_TEST_DIRECT_TRACE"))
				fprintf(stderr, "msg: rank %u: end of stream from %u (%zd, errno %d, "
					"pay %p)\n", msg_lib.id, s, n, errno, (void *)p->pay);
			direct_close_in(s); /* its end (a partial record: its sender died) */
			direct_events++;
			return 1;
		}
		if ((n < 0 && errno == EAGAIN) || (n > 0 && (size_t)n < want))
			return 0; /* drained for now (a short read: the rest is not here yet) */
	}
	return 0;
}

static int pump(uint32_t s, int rounds_max)
{
	return pump_some(s, rounds_max, false);
}

int direct_pump(uint32_t s)
{
	return pump(s, 256); /* at most ~16 MiB per call */
}

void direct_pump_all(void)
{
	uint32_t s;

	for (s = 0; msg_lib.dp && s < msg_lib.n; s++)
		if (msg_lib.dp[s].in_fd >= 0)
			direct_pump(s);
}

/* --- receiving ---------------------------------------------------------- */

static bool matches(int want_src, int want_tag, uint32_t src, int32_t tag)
{
	return (want_src == MSG_ANYSRC || (uint32_t)want_src == src) &&
	       (want_tag == MSG_ANYTAG || want_tag == tag);
}

static int out(uint32_t src, int32_t tag, uint64_t size, int *from, int *tag_out, size_t *recvd)
{
	if (from)
		*from = (int)src;
	if (tag_out)
		*tag_out = tag & ~L_TAG_DIRECT;
	if (recvd)
		*recvd = (size_t)size;
	return MSG_OK;
}

/* Remove the entry named arrival, wherever a leave may have moved it. */
static void consumed(uint32_t s, uint64_t arrival)
{
	struct dpeer *p = &msg_lib.dp[s];
	size_t i;

	for (i = 0; i < p->nq; i++)
		if (p->q[i].arrival == arrival) {
			remove_at(p->q, &p->nq, i);
			return;
		}
	for (i = 0; i < msg_lib.nstash; i++)
		if (msg_lib.stash[i].arrival == arrival && msg_lib.stash[i].src == s) {
			remove_at(msg_lib.stash, &msg_lib.nstash, i);
			return;
		}
}

/* Receive entry e (of the stash or of s's queue). */
static int take(uint32_t s, struct stash_ent *e, void *buf, size_t size, int *from,
		int *tag_out, size_t *recvd)
{
	uint64_t arrival = e->arrival;
	int ret;

	if (!e->data) {
		/* a DAEMON record of a stream or a ring (the only entries
		 * without the message): the first of its pair's L_TAG_DIRECT
		 * messages with its tag */
		ret = lib_daemon_recv((int)s, e->tag | L_TAG_DIRECT, buf, size, from, tag_out, recvd);
		if (tag_out && (ret == MSG_OK || ret == MSG_ETRUNC))
			*tag_out &= ~L_TAG_DIRECT;
		if (ret == MSG_OK)
			consumed(s, arrival);
		return ret; /* LIB_AGAIN, ETRUNC (the record stays), errors */
	}
	out(s, e->tag, e->size, from, tag_out, recvd);
	if (e->size > size)
		return MSG_ETRUNC; /* it stays */
	memcpy(buf, e->data, e->size);
	if (e->kind == DREC_DATA)
		msg_lib.direct_recvs++;
	consumed(s, arrival);
	return MSG_OK;
}

static struct stash_ent *stash_match(int src, int tag, uint32_t only)
{
	size_t i;

	for (i = 0; i < msg_lib.nstash; i++) {
		struct stash_ent *e = &msg_lib.stash[i];

		if (matches(src, tag, e->src, e->tag) && (only == UINT32_MAX || e->src == only))
			return e;
	}
	return NULL;
}

static struct stash_ent *queue_match(uint32_t s, int tag)
{
	struct dpeer *p = &msg_lib.dp[s];
	size_t i;

	for (i = 0; i < p->nq; i++)
		if (tag == MSG_ANYTAG || p->q[i].tag == tag)
			return &p->q[i];
	return NULL;
}

/* The messages a START said are still at msgd, into the stash ahead of
 * that stream's records. */
static int pull_pre(void)
{
	uint32_t s;

	for (s = 0; msg_lib.dp && s < msg_lib.n; s++) {
		struct dpeer *p = &msg_lib.dp[s];

		while (p->started && p->pre_left) {
			struct answer a = { 0 };
			int step, ret = lib_daemon_ask((int)s, MSG_ANYTAG, FRAME_MSG_MAX, false);

			if (ret)
				return ret;
			while ((step = lib_daemon_step(&a)) == STEP_CONT)
				;
			if (step == STEP_AGAIN) {
				free(a.buf);
				return LIB_AGAIN;
			}
			if (a.ret) {
				free(a.buf);
				return a.ret;
			}
			p->pre_left--;
			msg_lib.direct_pulled++;
			if (stash_add(s, DREC_PULLED, a.tag, a.got, a.buf, stash_first_record_of(s))) {
				free(a.buf);
				return MSG_ENOMEM;
			}
		}
	}
	return MSG_OK;
}

/* What a delivery from msgd (not for a record) means for s's order: before
 * s's START it is one of the messages before the stream; after it, one of
 * those (seq <= m0) or one sent after the stream ended, which must not pass
 * an earlier match still in the stash: it waits there (RESTART). */
static int after_delivery(int src, int tag, struct answer *a)
{
	struct dpeer *p = msg_lib.dp && a->from < msg_lib.n ? &msg_lib.dp[a->from] : NULL;
	void *copy;

	if (a->from < msg_lib.n && fast_ring_pending(a->from, tag))
		/* its sender closed our ring after these records: they come
		 * first, from the stash (a plain message from a ring peer at
		 * msgd was sent after its ring closed) */
		fast_detach(false);
	if (!p || !p->started) {
		if (p && a->ret == MSG_OK)
			p->got_pre++;
		if (!stash_match(src, tag, a->from))
			return a->ret;
	} else if (a->ret == MSG_OK && a->seq <= p->m0) {
		if (p->pre_left)
			p->pre_left--;
		return MSG_OK;
	} else if (!stash_match(src, tag, a->from) && !(p->nq && queue_match(a->from, tag))) {
		return a->ret;
	}
	if (a->ret != MSG_OK)
		return RESTART; /* the earlier one is taken first; this one stays at msgd */
	copy = malloc(a->got ? a->got : 1);
	if (!copy || stash_add(a->from, DREC_PULLED, a->tag, a->got, copy, SIZE_MAX)) {
		free(copy);
		return MSG_ENOMEM;
	}
	memcpy(copy, a->buf, a->got);
	return RESTART;
}

/* One look of a spinning wait at the stream the receive names: read what
 * it has (one recv, the read that takes the message when it is there: no
 * poll before it). True when something came: a record, its end, or the
 * start of a large payload (kept in the read-ahead: the receive copies that
 * part and reads the rest straight into its buffer, straight_rest). */
static bool spin_look(uint32_t s)
{
	struct dpeer *p = &msg_lib.dp[s];
	uint32_t seen = direct_events;
	bool had_pay = p->pay != NULL;

	if (p->in_fd < 0)
		return true;
	return pump_some(s, 1, true) || direct_events != seen || (!had_pay && p->pay) || p->big;
}

/* Poll the set (spinning first, under spin.c's rule), and the rings'
 * bell when ring_watch (its wake socket goes in after the set). spin_src:
 * a source with an open stream the receive waits for, or UINT32_MAX. The
 * spin reads that stream itself (spin_look) and polls the whole set only
 * every SPIN_POLL_EVERY rounds: msgd's news and the other streams can wait
 * that long, the awaited message should not wait for a poll and a peek
 * before its read. */
#define SPIN_POLL_EVERY 16
static int wait_set(int k, uint32_t spin_src)
{
	uint64_t spin = lib_spin_ns(), until = spin ? lib_now_ns() + spin : 0;
	int r, nk = k;
	unsigned round = 0;

	ring_rang = false;
	/* a capture or a detach request in this receive may have left the rings */
	ring_watch &= msg_lib.shm && msg_lib.bell_fd >= 0;
	if (ring_watch)
		direct_pfd[nk++] = (struct pollfd){ .fd = msg_lib.bell_fd, .events = POLLIN };
	do {
		if (ring_watch && fast_bell() != ring_seen) {
			ring_rang = true;
			return 1;
		}
		if (spin_src != UINT32_MAX && spin_look(spin_src))
			return 1; /* revents all 0: the caller's loop takes it */
		if (spin_src == UINT32_MAX || ++round % SPIN_POLL_EVERY == 0) {
			r = poll(direct_pfd, (nfds_t)nk, 0);
			if (r)
				goto out;
		}
		__builtin_ia32_pause();
	} while (until && lib_now_ns() < until);
	if (ring_watch && !fast_bell_arm(ring_seen)) {
		fast_bell_disarm();
		ring_rang = true;
		return 1;
	}
	r = poll(direct_pfd, (nfds_t)nk, -1);
out:
	if (ring_watch) {
		fast_bell_disarm();
		ring_rang = fast_bell() != ring_seen;
	}
	return r < 0 && errno == EINTR ? 0 : r;
}

/* Nothing matching is buffered and every source src names has an open
 * stream or a ring: wait on the streams (all of them: a sender blocked on a
 * full stream to us must not wait for src), the rings (ring_watch) and
 * msgd's socket (news of streams, a stall). */
static int wait_streams(int src)
{
	int k = direct_pollset(true), r, i;
	struct frame f;

	lib_precopy_progress(false);
	direct_pfd[k] = (struct pollfd){ .fd = msg_lib.fd, .events = POLLIN };
	r = wait_set(k + 1, src != MSG_ANYSRC && direct_in_open((uint32_t)src) ? (uint32_t)src
									       : UINT32_MAX);
	if (r < 0)
		return MSG_EPROTO;
	for (i = 0; i < k; i++) /* src's record may go straight into place */
		if (src != MSG_ANYSRC && direct_who[i] == ((uint32_t)src | DIRECT_WHO_IN))
			direct_pfd[i].revents = 0;
	direct_poll_events(k);
	if (!direct_pfd[k].revents)
		return MSG_OK;
	if ((i = lib_read_frame_any(&f)))
		return i;
	return lib_daemon_news(&f);
}

/* The receive through msgd, watching the streams meanwhile: anything on a
 * stream (or news of one, or a request to leave) withdraws it. */
static int via_msgd(int src, int tag, void *buf, size_t size, int *from, int *tag_out,
		    size_t *recvd)
{
	struct answer a = { .buf = buf, .size = size };
	uint32_t seen = direct_events;
	bool cancelled = false;
	int ret = lib_daemon_ask(src, tag, size, false), step;

	if (ret)
		return ret;
	for (;;) {
		bool news = false;
		int k, i;

		if (cancelled) {
			if ((step = lib_daemon_step(&a)) != STEP_CONT)
				break;
			continue;
		}
		k = direct_pollset(true);
		direct_pfd[k] = (struct pollfd){ .fd = msg_lib.fd, .events = POLLIN };
		if (wait_set(k + 1, UINT32_MAX) < 0)
			return MSG_EPROTO;
		for (i = 0; i < k; i++) {
			if (!direct_pfd[i].revents)
				continue;
			if (direct_who[i] & DIRECT_WHO_IN)
				news = true; /* read only once the receive is withdrawn */
			else
				direct_check_reverse(direct_who[i], true);
		}
		if (direct_pfd[k].revents) {
			if ((step = lib_daemon_step(&a)) != STEP_CONT)
				break;
			news |= direct_events != seen || msg_lib.direct_leave_req;
		}
		news |= ring_rang; /* a ring brought something (or a detach request) */
		if (news) {
			cancelled = true;
			if ((ret = lib_daemon_ask(src, tag, size, true)))
				return ret;
		}
	}
	if (step == STEP_AGAIN)
		return LIB_AGAIN;
	if (a.ret == MSG_EINTERNAL_AGAIN)
		return RESTART;
	ret = after_delivery(src, tag, &a);
	if (ret == MSG_OK || ret == MSG_ETRUNC)
		out(a.from, a.tag, a.got, from, tag_out, recvd);
	return ret;
}

/* The rest of a DATA record whose header is taken, from off to len, straight
 * into buf (its sender wrote the whole record: the rest is on its way).
 * Nonzero when the stream ended inside it (closed). */
static int read_rest(uint32_t s, void *buf, uint64_t off, uint64_t len)
{
	while (off < len) {
		ssize_t n = recv(msg_lib.dp[s].in_fd, (uint8_t *)buf + off, len - off, MSG_WAITALL);

		if (n <= 0 && !(n < 0 && errno == EINTR)) {
			fprintf(stderr, "msg: the stream from rank %u ended inside a message\n", s);
			direct_close_in(s);
			return -1;
		}
		off += n > 0 ? (uint64_t)n : 0;
	}
	msg_lib.direct_recvs++;
	return 0;
}

/* A receive from a named source whose stream has nothing buffered: when
 * the next record there is a matching DATA that fits, read it straight
 * into the caller's buffer (one copy less for large messages). 1: not so. */
static int straight(uint32_t s, int tag, void *buf, size_t size, int *from, int *tag_out,
		    size_t *recvd)
{
	struct dpeer *p = &msg_lib.dp[s];
	uint8_t h[DREC_HDR];
	uint32_t kind;
	int32_t rtag;
	uint64_t rsize;
	ssize_t n;

	if (p->in_fd < 0 || !p->started || p->pre_left || p->pay || p->rlen != p->roff ||
	    (p->nq && queue_match(s, tag)) || stash_match((int)s, tag, s))
		return 1;
	n = recv(p->in_fd, h, DREC_HDR, MSG_PEEK | MSG_DONTWAIT);
	if (n != DREC_HDR)
		return 1;
	memcpy(&kind, h, 4);
	memcpy(&rtag, h + 4, 4);
	memcpy(&rsize, h + 8, 8);
	if (kind != DREC_DATA || (tag != MSG_ANYTAG && rtag != tag) || rsize > size ||
	    rsize < (64u << 10) || recv(p->in_fd, h, DREC_HDR, MSG_DONTWAIT) != DREC_HDR)
		return 1; /* small ones cost nothing to copy: the read-ahead takes them */
	if (read_rest(s, buf, 0, rsize))
		return MSG_EPROTO;
	return out(s, rtag, rsize, from, tag_out, recvd);
}

/* A receive from a named source whose next record is a DATA that a wait's
 * read began to take into memory (spin_look: the read that found it also
 * read the first part of its payload): when it matches and fits, what came
 * is copied and the rest read straight into the caller's buffer, as in
 * straight(). 1: not so. */
static int straight_rest(uint32_t s, int tag, void *buf, size_t size, int *from, int *tag_out,
			 size_t *recvd)
{
	struct dpeer *p = &msg_lib.dp[s];
	uint64_t off = p->pay_off, len = p->pay_len;
	int32_t rtag = p->pay_tag;

	if (p->big) { /* header and first part in the read-ahead */
		memcpy(&rtag, p->rbuf + p->roff + 4, 4);
		memcpy(&len, p->rbuf + p->roff + 8, 8);
		if (p->nq || (tag != MSG_ANYTAG && rtag != tag) || len > size)
			return 1;
		off = p->rlen - p->roff - DREC_HDR;
		memcpy(buf, p->rbuf + p->roff + DREC_HDR, off);
		p->big = false;
		p->rlen = p->roff = 0;
		if (read_rest(s, buf, off, len))
			return MSG_EPROTO;
		msg_lib.direct_in_place++;
		return out(s, rtag, len, from, tag_out, recvd);
	}
	if (!p->pay || p->nq || (tag != MSG_ANYTAG && rtag != tag) || len > size)
		return 1;
	memcpy(buf, p->pay, off);
	free(p->pay);
	p->pay = NULL;
	if (read_rest(s, buf, off, len))
		return MSG_EPROTO;
	return out(s, rtag, len, from, tag_out, recvd);
}

/* News from msgd that comes while no receive waits there (a request to
 * leave for a capture, a stall): a receive that finds its message in a
 * stream never waits on msgd's socket, so it looks there every 100 µs. */
static int msgd_news(void)
{
	static uint64_t last;
	uint64_t t = lib_now_ns();
	struct pollfd pf = { .fd = msg_lib.fd, .events = POLLIN };
	struct frame f;
	int ret;

	if (t - last < 100000)
		return MSG_OK;
	last = t;
	while (poll(&pf, 1, 0) > 0) {
		if ((ret = lib_read_frame_any(&f)) || (ret = lib_daemon_news(&f)))
			return ret;
	}
	return MSG_OK;
}

/* Every source of this receive has a stream or a ring, and nothing of
 * theirs is at msgd: a MSG_ANYSRC receive may wait without asking msgd.
 * (A stream's sender goes on through msgd only after its end, which wakes
 * the wait; a ring's after closing it, which rings the bell.) */
static bool all_direct(void)
{
	uint32_t s;

	for (s = 0; s < msg_lib.n; s++) {
		struct dpeer *p = &msg_lib.dp[s];

		if (!fast_ring_peer(s) && (p->in_fd < 0 || !p->started || p->pre_left))
			return false;
	}
	return true;
}

int direct_recv(int src, int tag, void *buf, size_t size, int *from, int *tag_out, size_t *recvd)
{
	int ret;

	if (!dpeer(0))
		return MSG_ENOMEM;
	if (direct_test.leave_after >= 0 && direct_test.recvs++ == direct_test.leave_after)
		direct_leave(false); /* as before a capture */
	fast_test_tick();
	for (;;) {
		struct stash_ent *e = NULL;
		uint32_t s = 0, k;
		bool rings = fast_rings_live();

		if (rings)
			ring_seen = fast_bell(); /* before we look at the rings */
		if ((ret = msgd_news()))
			return ret;
		if (fast_detach_requested()) {
			fast_detach(true); /* msgd wants us on its path (a capture, a stall) */
			continue;
		}
		if (fast_sender_left()) {
			fast_detach(false); /* its later messages are at msgd: ours too */
			continue;
		}
		/* msgd asked (a capture waits, a stall), or a stream came after we left */
		if (msg_lib.direct_leave_req || (msg_lib.direct_off && direct_pollset(true))) {
			bool asked = msg_lib.direct_leave_req;

			direct_leave(false);
			if (asked && direct_test.leave_pause_ms)
				poll(NULL, 0, direct_test.leave_pause_ms);
			continue; /* msgd's news first: it may be a capture */
		}
		if (src != MSG_ANYSRC && msg_lib.dp[src].started && !msg_lib.dp[src].pre_left &&
		    !stash_match(src, tag, (uint32_t)src)) {
			/* a named source whose stream brought it already (a
			 * wait read it): no read of the other streams first */
			if ((e = queue_match((uint32_t)src, tag)))
				return take((uint32_t)src, e, buf, size, from, tag_out, recvd);
			if ((ret = straight_rest((uint32_t)src, tag, buf, size, from, tag_out,
						 recvd)) != 1)
				return ret;
		}
		if (src != MSG_ANYSRC && msg_lib.dp[src].in_fd >= 0 &&
		    (ret = straight((uint32_t)src, tag, buf, size, from, tag_out, recvd)) != 1)
			return ret;
		direct_pump_all();
		ret = pull_pre(); /* a START came: what it says is at msgd, first */
		if (ret)
			return ret;
		if ((e = stash_match(src, tag, UINT32_MAX)))
			return take(e->src, e, buf, size, from, tag_out, recvd);
		for (k = 0; k < msg_lib.n && !e; k++) {
			s = src == MSG_ANYSRC ? (rr + k) % msg_lib.n : (uint32_t)src;
			e = queue_match(s, tag);
			if (!e && rings && fast_ring_peer(s) &&
			    (ret = fast_take_from(s, tag, buf, size, from, tag_out, recvd)) != FAST_NONE) {
				rr = s + 1;
				return ret;
			}
			if (src != MSG_ANYSRC)
				break;
		}
		if (e) {
			rr = s + 1;
			return take(s, e, buf, size, from, tag_out, recvd);
		}
		ring_watch = rings && (src == MSG_ANYSRC || fast_ring_peer((uint32_t)src));
		if (src != MSG_ANYSRC ? direct_in_open((uint32_t)src) || fast_ring_peer((uint32_t)src)
				      : all_direct()) {
			if ((ret = wait_streams(src)))
				return ret;
			continue;
		}
		ret = via_msgd(src, tag, buf, size, from, tag_out, recvd);
		if (ret != RESTART)
			return ret;
	}
}
