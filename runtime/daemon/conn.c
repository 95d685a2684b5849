#include "daemon/conn.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/log.h"
#include "wire/digest.h"

#define RBUF_MIN (64u << 10)
/* At most this much payload per recv or sendmsg. The kernel here is
 * PREEMPT_NONE: an io_uring recv completed inline copies (and faults in fresh
 * pages) for as long as the peer keeps the socket fed, with no preemption
 * point; with 1 GiB allowed, one call held a daemon for 600 ms and its
 * heartbeats with it (false host losses). A few ms per call at most. */
#define RECV_MAX (4u << 20)

#define container_of(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

static void rx_done(struct op *op, int res);
static void tx_done(struct op *op, int res);
static void close_done(struct op *op, int res);
static void kick_done(struct op *op, int res);

struct conn *conn_new(int fd, enum conn_kind kind, const struct conn_ops *ops, const char *name)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->rbuf = malloc(RBUF_MIN);
	if (!c->rbuf) {
		free(c);
		return NULL;
	}
	c->rcap = RBUF_MIN;
	c->fd = fd;
	c->kind = kind;
	c->ops = ops;
	c->rx_op.cb = rx_done;
	c->tx_op.cb = tx_done;
	c->close_op.cb = close_done;
	c->kick_op.cb = kick_done;
	snprintf(c->name, sizeof(c->name), "%s", name);
	return c;
}

static void free_items(struct txitem *it)
{
	while (it) {
		struct txitem *next = it->next;

		if (it->pass_fd >= 0)
			close(it->pass_fd);
		free(it->hdr);
		mbuf_put(it->m);
		free(it);
		it = next;
	}
}

static void conn_free(struct conn *c)
{
	close(c->fd);
	free_items(c->ctl_head);
	free_items(c->tx_head);
	free(c->user);
	if (c->in_payload)
		frame_release(&c->cur);
	mbuf_put(c->sink);
	free(c->rbuf);
	free(c);
}

static void maybe_free(struct conn *c)
{
	if (c->closing && c->nops == 0)
		conn_free(c);
}

void conn_close(struct conn *c, const char *why)
{
	struct io_uring_sqe *sqe;

	if (c->closing)
		return;
	c->closing = true;
	/* wakes any receive or send in flight; they complete with an error */
	if (!c->detached)
		shutdown(c->fd, SHUT_RDWR);
	sqe = loop_sqe(g_loop, &c->close_op);
	if (sqe) {
		io_uring_prep_nop(sqe);
		c->nops++;
	}
	if (c->ops->closed) {
		const struct conn_ops *ops = c->ops;

		ops->closed(c, why);
	}
}

void conn_hold(struct conn *c)
{
	c->nops++;
}

void conn_release(struct conn *c)
{
	c->nops--;
	maybe_free(c);
}

static void close_done(struct op *op, int res)
{
	struct conn *c = container_of(op, struct conn, close_op);

	(void)res;
	c->nops--;
	maybe_free(c);
}

/* Frames queued while the loop handles one batch of completions (a
 * process's four sends that came in one read; a DATA frame for each of
 * them) go out in one sendmsg at its end, not the first alone and the rest
 * after its completion: the receiving daemon or process is woken once. */
static void kick_later(struct conn *c)
{
	if (c->kick_pending || c->tx_busy || c->closing)
		return;
	c->kick_pending = true;
	c->nops++;
	loop_defer(g_loop, &c->kick_op);
}

static void kick_done(struct op *op, int res)
{
	struct conn *c = container_of(op, struct conn, kick_op);

	(void)res;
	c->kick_pending = false;
	c->nops--;
	if (c->closing)
		maybe_free(c);
	else
		conn_kick(c);
}

static void rx_submit(struct conn *c)
{
	struct io_uring_sqe *sqe;
	void *buf;
	size_t len;

	if (c->closing)
		return;
	if (c->in_payload) {
		buf = c->sink->data + c->sink_off;
		len = c->sink_end - c->sink_off;
		if (len > RECV_MAX)
			len = RECV_MAX;
	} else {
		buf = c->rbuf + c->rlen;
		len = c->rcap - c->rlen;
	}
	sqe = loop_sqe(g_loop, &c->rx_op);
	if (!sqe) {
		conn_close(c, "io_uring submission queue unavailable");
		return;
	}
	io_uring_prep_recv(sqe, c->fd, buf, len, 0);
	c->nops++;
}

void conn_start(struct conn *c)
{
	rx_submit(c);
}

static void consume(struct conn *c, uint32_t n)
{
	memmove(c->rbuf, c->rbuf + n, c->rlen - n);
	c->rlen -= n;
}

static int ensure_rcap(struct conn *c, uint32_t need)
{
	uint8_t *b;

	if (need <= c->rcap)
		return 0;
	b = realloc(c->rbuf, need);
	if (!b)
		return -1;
	c->rbuf = b;
	c->rcap = need;
	return 0;
}

static void finish_payload(struct conn *c)
{
	struct mbuf *m = c->sink;

	if (m->hctx)
		msg_digest_feed(m, c->sink_end);

	c->sink = NULL;
	c->in_payload = false;
	c->ops->frame(c, &c->cur, m);
	frame_release(&c->cur);
}

static void begin_payload(struct conn *c, uint32_t framelen)
{
	uint64_t off = 0, plen = frame_payload_len(&c->cur), take;
	/* connections that take no payload (unauthenticated, control,
	 * outgoing peer) have no handler: a frame with one is refused */
	struct mbuf *m = c->ops->payload ? c->ops->payload(c, &c->cur, &off) : NULL;
	char why[96];

	consume(c, framelen);
	if (!m) {
		snprintf(why, sizeof(why), "payload refused (%s frame)",
			 frame_type_name(c->cur.h.type));
		frame_release(&c->cur);
		if (!c->closing)
			conn_close(c, why);
		return;
	}
	c->sink = m;
	c->sink_off = off;
	c->sink_end = off + plen;
	c->in_payload = true;
	take = c->rlen < plen ? c->rlen : plen;
	memcpy(m->data + off, c->rbuf, take);
	consume(c, (uint32_t)take);
	c->sink_off += take;
	if (c->sink_off == c->sink_end)
		finish_payload(c);
}

/* Decode every whole frame in rbuf; stop at a payload that is still coming. */
static void parse(struct conn *c)
{
	while (!c->closing && !c->in_payload && c->rlen >= FRAME_HDR_LEN) {
		struct frame_hdr h;
		char why[128];
		uint32_t need;
		int err = frame_decode_hdr(c->rbuf, c->rlen, &h);

		if (err) {
			snprintf(why, sizeof(why), "bad frame header: %s", frame_strerror(err));
			conn_close(c, why);
			return;
		}
		need = FRAME_HDR_LEN + h.len;
		if (ensure_rcap(c, need)) {
			conn_close(c, "out of memory");
			return;
		}
		if (c->rlen < need)
			return;
		err = frame_decode_body(&h, c->rbuf + FRAME_HDR_LEN, &c->cur);
		if (err) {
			snprintf(why, sizeof(why), "malformed %s frame: %s",
				 frame_type_name(h.type), frame_strerror(err));
			conn_close(c, why);
			return;
		}
		if (frame_payload_len(&c->cur)) {
			begin_payload(c, need);
			continue;
		}
		/* OUTPUT/STDIN bodies are referenced by the frame: consume after */
		c->cur_len = need;
		c->ops->frame(c, &c->cur, NULL);
		c->cur_len = 0;
		frame_release(&c->cur);
		if (c->closing)
			return;
		consume(c, need);
	}
	if (!c->in_payload && c->rcap - c->rlen < 4096 && ensure_rcap(c, c->rcap * 2))
		conn_close(c, "out of memory");
}

static void rx_done(struct op *op, int res)
{
	struct conn *c = container_of(op, struct conn, rx_op);
	char why[128];

	c->nops--;
	if (c->closing) {
		maybe_free(c);
		return;
	}
	if (res <= 0) {
		if (res == 0)
			snprintf(why, sizeof(why), "closed by the other end");
		else
			snprintf(why, sizeof(why), "receive failed: %s", strerror(-res));
		conn_close(c, why);
		return;
	}
	if (c->in_payload) {
		c->sink_off += (uint64_t)res;
		if (c->sink->hctx)
			msg_digest_feed(c->sink, c->sink_off);
		if (c->sink_off == c->sink_end)
			finish_payload(c);
	} else {
		c->rlen += (uint32_t)res;
	}
	parse(c);
	rx_submit(c);
}

static int enqueue(struct conn *c, bool ctl, const struct frame *f, struct mbuf *m,
		   uint64_t off, uint64_t len, int pass_fd)
{
	struct txitem *it = calloc(1, sizeof(*it));
	size_t hlen = 0;

	if (!it || !(it->hdr = frame_encode_alloc(f, &hlen))) {
		free(it);
		mbuf_put(m);
		if (pass_fd >= 0)
			close(pass_fd);
		return -1;
	}
	it->hlen = (uint32_t)hlen;
	it->pass_fd = pass_fd;
	it->m = m;
	it->moff = off;
	it->mend = off + len;
	c->queued += hlen + len;
	if (ctl) {
		if (c->ctl_tail)
			c->ctl_tail->next = it;
		else
			c->ctl_head = it;
		c->ctl_tail = it;
	} else {
		if (c->tx_tail)
			c->tx_tail->next = it;
		else
			c->tx_head = it;
		c->tx_tail = it;
	}
	kick_later(c);
	return 0;
}

int conn_send(struct conn *c, const struct frame *f, struct mbuf *m, uint64_t off, uint64_t len)
{
	if (c->closing) {
		mbuf_put(m);
		return -1;
	}
	return enqueue(c, false, f, m, off, len, -1);
}

int conn_send_urgent(struct conn *c, const struct frame *f)
{
	struct txitem *it, **pp;
	size_t hlen = 0;
	uint32_t skip;

	if (c->closing)
		return -1;
	it = calloc(1, sizeof(*it));
	if (!it || !(it->hdr = frame_encode_alloc(f, &hlen))) {
		free(it);
		return -1;
	}
	it->hlen = (uint32_t)hlen;
	it->pass_fd = -1;
	c->queued += hlen;
	/* after the frames in the send in flight and a partly sent head */
	skip = c->tx_busy ? c->inflight : 0;
	pp = &c->tx_head;
	while (*pp && (skip || (*pp)->started)) {
		if (skip)
			skip--;
		pp = &(*pp)->next;
	}
	it->next = *pp;
	*pp = it;
	if (!it->next)
		c->tx_tail = it;
	kick_later(c);
	return 0;
}

int conn_send_fd(struct conn *c, const struct frame *f, int fd)
{
	int ret;

	if (c->closing) {
		close(fd);
		return -1;
	}
	ret = enqueue(c, false, f, NULL, 0, 0, fd);
	return ret;
}

int conn_detach(struct conn *c)
{
	int fd;

	if (c->rlen != c->cur_len || c->in_payload || c->closing)
		return -1;
	fd = dup(c->fd);
	if (fd < 0)
		return -1;
	c->detached = true;
	conn_close(c, "handed over");
	return fd;
}

int conn_send_ctl(struct conn *c, const struct frame *f)
{
	if (c->closing)
		return -1;
	return enqueue(c, true, f, NULL, 0, 0, -1);
}

static int fill_iov(struct conn *c, struct txitem *it, int n)
{
	for (; it && n < (int)(sizeof(c->iov) / sizeof(c->iov[0])) - 1; it = it->next) {
		/* a passed descriptor rides alone, with the first byte of its frame */
		if (it->pass_fd >= 0 && (n > 0 || it->hoff > 0))
			break;
		c->inflight++;
		if (it->hoff < it->hlen) {
			c->iov[n].iov_base = it->hdr + it->hoff;
			c->iov[n++].iov_len = it->hlen - it->hoff;
		}
		if (it->m && it->moff < it->mend) {
			uint64_t len = it->mend - it->moff;

			c->iov[n].iov_base = it->m->data + it->moff;
			c->iov[n++].iov_len = len > RECV_MAX ? RECV_MAX : len;
			if (len > RECV_MAX)
				break;
		}
	}
	return n;
}

void conn_kick(struct conn *c)
{
	struct io_uring_sqe *sqe;
	int n;

	if (c->tx_busy || c->closing)
		return;
	c->inflight = 0;
	n = fill_iov(c, c->ctl_head, 0);
	if (c->authed && !c->ctl_head)
		n = fill_iov(c, c->tx_head, n);
	if (!n)
		return;
	memset(&c->msg, 0, sizeof(c->msg));
	c->msg.msg_iov = c->iov;
	c->msg.msg_iovlen = (size_t)n;
	{
		struct txitem *first = c->ctl_head ? c->ctl_head : c->tx_head;

		if (first && first->pass_fd >= 0 && first->hoff == 0) {
			struct cmsghdr *cm;

			c->msg.msg_iovlen = 1; /* its frame alone */
			c->msg.msg_control = c->cmsg;
			c->msg.msg_controllen = sizeof(c->cmsg);
			cm = CMSG_FIRSTHDR(&c->msg);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(cm), &first->pass_fd, sizeof(int));
		}
	}
	sqe = loop_sqe(g_loop, &c->tx_op);
	if (!sqe) {
		conn_close(c, "io_uring submission queue unavailable");
		return;
	}
	io_uring_prep_sendmsg(sqe, c->fd, &c->msg, MSG_NOSIGNAL);
	c->tx_busy = true;
	c->nops++;
}

/* Advance the queue head by n sent bytes, freeing finished items. */
static void advance(struct conn *c, struct txitem **head, struct txitem **tail, uint64_t *n)
{
	while (*head && *n) {
		struct txitem *it = *head;
		uint64_t h = it->hlen - it->hoff, take = *n < h ? *n : h;

		it->hoff += (uint32_t)take;
		*n -= take;
		c->queued -= take;
		it->started = true;
		if (it->m && it->hoff == it->hlen) {
			uint64_t p = it->mend - it->moff, t = *n < p ? *n : p;

			it->moff += t;
			*n -= t;
			c->queued -= t;
		}
		if (it->hoff < it->hlen || (it->m && it->moff < it->mend))
			return;
		*head = it->next;
		if (!*head)
			*tail = NULL;
		it->next = NULL;
		free_items(it);
	}
}

static void tx_done(struct op *op, int res)
{
	struct conn *c = container_of(op, struct conn, tx_op);
	uint64_t n = res > 0 ? (uint64_t)res : 0;
	char why[128];

	c->nops--;
	c->tx_busy = false;
	if (c->closing) {
		maybe_free(c);
		return;
	}
	if (res < 0) {
		snprintf(why, sizeof(why), "send failed: %s", strerror(-res));
		conn_close(c, why);
		return;
	}
	advance(c, &c->ctl_head, &c->ctl_tail, &n);
	advance(c, &c->tx_head, &c->tx_tail, &n);
	conn_kick(c);
}
