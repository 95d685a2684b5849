/* A framed connection on the event loop: reads frames (and their trailing
 * payloads straight into the payload's final buffer), writes queued frames
 * with sendmsg. Used for peers, control clients and local processes alike.
 * A connection is never freed inside a callback: conn_close() detaches it
 * and the loop frees it once its last operation has completed. */
#ifndef MSG_DAEMON_CONN_H
#define MSG_DAEMON_CONN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "daemon/loop.h"
#include "util/mbuf.h"
#include "wire/frame.h"

struct conn;

struct conn_ops {
	/* A whole frame arrived (with its payload, if it has one). */
	void (*frame)(struct conn *c, struct frame *f, struct mbuf *payload);
	/* Where f's trailing payload goes: a buffer reference and an offset.
	 * NULL (after conn_close with a reason) refuses the frame. */
	struct mbuf *(*payload)(struct conn *c, const struct frame *f, uint64_t *off);
	/* The connection is gone (once); why says so. */
	void (*closed)(struct conn *c, const char *why);
};

struct txitem {
	struct txitem *next;
	uint8_t *hdr;
	uint32_t hlen, hoff;
	struct mbuf *m;
	uint64_t moff, mend;
	int pass_fd;          /* a descriptor sent with this frame (SCM_RIGHTS), or -1 */
	bool started;         /* some of it is on the wire */
};

enum conn_kind { CONN_UNAUTH, CONN_PEER_IN, CONN_PEER_OUT, CONN_CONTROL, CONN_LOCAL };

struct conn {
	int fd;
	enum conn_kind kind;
	const struct conn_ops *ops;
	void *owner;          /* job, or local process */
	void *user;           /* per-kind state (reassembly of inbound DATA) */
	uint32_t host;        /* peer host index */
	bool authed;
	uint8_t nonce[FRAME_NONCE_LEN];
	char name[64];        /* for log lines */

	struct op rx_op;
	uint8_t *rbuf;
	uint32_t rcap, rlen;
	struct frame cur;
	uint32_t cur_len;     /* bytes of the frame being handed to ops->frame */
	bool in_payload;
	struct mbuf *sink;
	uint64_t sink_off, sink_end;

	struct op tx_op;
	struct op kick_op;    /* a send deferred to the end of the loop's batch */
	bool kick_pending;
	struct txitem *ctl_head, *ctl_tail, *tx_head, *tx_tail;
	bool tx_busy;
	uint32_t inflight;    /* items in the sendmsg in flight */
	struct iovec iov[64];
	struct msghdr msg;    /* one sendmsg in flight at a time */
	char cmsg[CMSG_SPACE(sizeof(int))];
	bool detached;        /* its socket was handed to someone else */
	uint64_t queued;      /* bytes waiting to be sent */

	struct op close_op;
	bool closing;
	int nops;            /* operations in flight */
};

struct conn *conn_new(int fd, enum conn_kind kind, const struct conn_ops *ops, const char *name);
void conn_start(struct conn *c);    /* begin reading */
void conn_close(struct conn *c, const char *why);
/* Queue f, followed by payload bytes [off, off+len) of m (m may be NULL).
 * Takes over the reference to m. ctl frames go first and are sent before
 * authentication completes; others wait for c->authed. */
int conn_send(struct conn *c, const struct frame *f, struct mbuf *m, uint64_t off, uint64_t len);
int conn_send_ctl(struct conn *c, const struct frame *f);
/* Queue f ahead of every frame not yet on the wire (heartbeats: they must
 * not wait behind a gigabyte of data; nothing else may overtake). */
int conn_send_urgent(struct conn *c, const struct frame *f);
/* Queue f with descriptor fd attached (a Unix socket); fd is closed here
 * once sent. */
int conn_send_fd(struct conn *c, const struct frame *f, int fd);
/* From inside a frame callback: stop reading and writing this connection
 * and return a duplicate of its socket (the original is closed when the
 * connection's last operation completes). -1 if bytes beyond the current
 * frame were already read. */
int conn_detach(struct conn *c);
void conn_kick(struct conn *c);     /* after setting authed */
/* Operations other than receive/send (connect) hold the connection too. */
void conn_hold(struct conn *c);
void conn_release(struct conn *c);

#endif
