/* libFuzzer target: msgd's incremental frame parsing (runtime/daemon/conn.c)
 * isolated from io_uring. The event loop is replaced by a stub that hands
 * out one SQE per operation; the harness plays the kernel: it copies input
 * bytes into the buffer the connection asked to receive into, in chunks of
 * fuzzer-chosen sizes, and completes the receive. Frames, payload reads
 * straight into place, closing on malformed input and the deferred free are
 * the daemon's own code.
 *
 * Input: byte 0 = options (bit 0: the connection takes payloads, like a
 * peer or a local process; otherwise it has no payload handler, like an
 * unauthenticated connection), byte 1 = seed of the chunk sizes, then the
 * byte stream. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/conn.h"
#include "util/log.h"

struct loop *g_loop;
static struct loop the_loop;
static struct conn *cur;
static struct io_uring_sqe sqes[4];
static int rx_pending;

struct io_uring_sqe *loop_sqe(struct loop *l, struct op *op)
{
	struct io_uring_sqe *s = &sqes[3];

	(void)l;
	if (cur && op == &cur->rx_op) {
		s = &sqes[0];
		rx_pending = 1;
	} else if (cur && op == &cur->tx_op) {
		s = &sqes[1];
	} else if (cur && op == &cur->close_op) {
		s = &sqes[2];
	}
	memset(s, 0, sizeof(*s));
	io_uring_sqe_set_data(s, op);
	return s;
}

/* The loop's contract (loop.h): deferred ops run, res 0, once the batch
 * of completions at hand is handled; here after each completion. */
void loop_defer(struct loop *l, struct op *op)
{
	op->next_deferred = l->deferred;
	l->deferred = op;
}

static void run_deferred(void)
{
	while (the_loop.deferred) {
		struct op *op = the_loop.deferred;

		the_loop.deferred = op->next_deferred;
		op->next_deferred = NULL;
		op->cb(op, 0);
	}
}

static uint64_t frames, bytes_in_payloads;

static void on_frame(struct conn *c, struct frame *f, struct mbuf *payload)
{
	(void)c;
	frames++;
	if (payload)
		bytes_in_payloads += payload->len;
	(void)frame_type_name(f->h.type);
	mbuf_put(payload);
}

static struct mbuf *on_payload(struct conn *c, const struct frame *f, uint64_t *off)
{
	uint64_t len = frame_payload_len(f);

	/* the fuzzer may claim gigabytes: refuse what a test cannot hold,
	 * as the daemon refuses what it cannot allocate */
	if (len > (64u << 20)) {
		conn_close(c, "too large for the fuzzer");
		return NULL;
	}
	*off = 0;
	return mbuf_new(len);
}

static void on_closed(struct conn *c, const char *why)
{
	(void)c;
	(void)why;
}

static const struct conn_ops with_payload = { on_frame, on_payload, on_closed };
static const struct conn_ops without_payload = { on_frame, NULL, on_closed };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t seed;
	size_t off = 2;
	struct conn *c;
	int guard;

	if (size < 2)
		return 0;
	g_loop = &the_loop;
	log_init("fuzz", LOG_ERR - 1);
	c = conn_new(-1, CONN_PEER_IN, (data[0] & 1) ? &with_payload : &without_payload, "fuzz");
	if (!c)
		return 0;
	cur = c;
	rx_pending = 0;
	seed = data[1] * 2654435761u + 1;
	c->authed = true;
	conn_start(c);
	for (guard = 0; off < size && rx_pending && !c->closing && guard < 1000000; guard++) {
		uint8_t *buf = (uint8_t *)(uintptr_t)sqes[0].addr;
		size_t want = sqes[0].len, n;

		seed = seed * 1103515245u + 12345u;
		n = 1 + (seed >> 16) % 97;
		if (n > size - off)
			n = size - off;
		if (n > want)
			n = want;
		if (!n)
			break;
		memcpy(buf, data + off, n);
		off += n;
		rx_pending = 0;
		c->rx_op.cb(&c->rx_op, (int)n);
		run_deferred();
	}
	/* end of input: the other side hangs up */
	if (!c->closing) {
		if (rx_pending) {
			rx_pending = 0;
			c->rx_op.cb(&c->rx_op, 0); /* EOF: conn_close inside */
		} else {
			conn_close(c, "end of input");
		}
	}
	/* complete what is still in flight so the connection frees itself */
	if (rx_pending) {
		rx_pending = 0;
		c->rx_op.cb(&c->rx_op, -ECANCELED);
	}
	run_deferred();
	if (c->tx_busy)
		c->tx_op.cb(&c->tx_op, -ECANCELED);
	c->close_op.cb(&c->close_op, 0); /* frees c once nothing is in flight */
	cur = NULL;
	return 0;
}
