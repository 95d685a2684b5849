/* Connections between daemons. Each daemon sends over its own outgoing
 * connection to a peer and receives on the connections peers opened to it
 * (no simultaneous-open races). DATA chunks of one message arrive back to
 * back on a connection and are reassembled in place into one buffer. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "util/log.h"
#include "wire/digest.h"

/* Reassembly of the message whose chunks are arriving on a connection. */
struct reasm {
	struct f_data d;   /* the first chunk's header */
	uint8_t flags;     /* and its header flags (DATA_F_FWD) */
	struct mbuf *m;
	uint64_t got;
};

static bool same_msg(const struct f_data *a, const struct f_data *b)
{
	return a->src == b->src && a->dst == b->dst && a->src_rep == b->src_rep &&
	       a->dst_rep == b->dst_rep && a->seq == b->seq && a->total == b->total &&
	       a->tag == b->tag;
}

static struct mbuf *peer_in_payload(struct conn *c, const struct frame *f, uint64_t *off)
{
	struct reasm *r = c->user;
	const struct f_data *d = &f->u.data;

	if (f->h.type != F_DATA) {
		conn_close(c, "payload on a non-data frame");
		return NULL;
	}
	if (!r) {
		r = c->user = calloc(1, sizeof(*r));
		if (!r) {
			conn_close(c, "out of memory");
			return NULL;
		}
	}
	if (d->off == 0) {
		if (r->m) {
			conn_close(c, "new message before the previous one was complete");
			return NULL;
		}
		r->m = mbuf_new(d->total);
		if (!r->m) {
			conn_close(c, "out of memory for a message");
			return NULL;
		}
		r->d = *d;
		r->flags = f->h.flags;
		r->got = 0;
		if (d->total >= DIGEST_AS_IT_LANDS && ((struct job *)c->owner)->cfg.r > 1)
			msg_digest_begin(msg_digest_alg_of(((struct job *)c->owner)->cfg.flags), r->m,
					 d->src, d->dst, d->seq, d->tag);
	} else if (!r->m || !same_msg(&r->d, d) || d->off != r->got) {
		conn_close(c, "data chunk out of sequence");
		return NULL;
	}
	*off = d->off;
	return mbuf_get(r->m);
}

static void deliver_whole(struct conn *c, struct job *j, struct reasm *r)
{
	struct frame f = { .h.type = F_DATA };
	struct mbuf *m = r->m;
	int err;

	f.u.data = r->d;
	f.u.data.off = 0;
	f.h.flags = r->flags;
	r->m = NULL;
	job_clock(j);
	err = core_peer_frame(j->core, c->host, &f, m);
	if (err) {
		conn_close(c, "invalid data frame");
		return;
	}
	job_run_actions(j);
}

static void peer_in_frame(struct conn *c, struct frame *f, struct mbuf *payload)
{
	struct job *j = c->owner;
	struct reasm *r = c->user;
	int err;

	if (f->h.type == F_DATA) {
		if (!payload) { /* an empty message has no payload bytes */
			if (f->u.data.total) {
				conn_close(c, "data frame without payload");
				return;
			}
			payload = peer_in_payload(c, f, &(uint64_t){ 0 });
			if (!payload)
				return;
			r = c->user;
		}
		mbuf_put(payload);
		job_clock(j);
		core_peer_heard(j->core, c->host);
		r->got += f->u.data.chunk;
		if (r->got == r->d.total)
			deliver_whole(c, j, r);
		return;
	}
	mbuf_put(payload);
	if (daemon_cut()) {
		conn_close(c, "cut off (injected partition)");
		return;
	}
	job_clock(j);
	err = core_peer_frame(j->core, c->host, f, NULL);
	if (err) {
		char why[96];

		snprintf(why, sizeof(why), "invalid %s frame", frame_type_name(f->h.type));
		conn_close(c, why);
		return;
	}
	job_run_actions(j);
}

static void peer_in_closed(struct conn *c, const char *why)
{
	struct reasm *r = c->user;

	if (r)
		mbuf_put(r->m);
	log_info("connection from %s closed: %s", c->name, why);
}

const struct conn_ops peer_in_ops = {
	.frame = peer_in_frame,
	.payload = peer_in_payload,
	.closed = peer_in_closed,
};

/* Outgoing side: connect, answer the challenge, check the server's proof. */
struct connect_op {
	struct op op;
	struct conn *c;
	struct sockaddr_in sa;
};

void peer_answer_challenge(struct conn *c, struct job *j, uint8_t role,
			   const uint8_t srv_nonce[FRAME_NONCE_LEN],
			   uint8_t cli_nonce[FRAME_NONCE_LEN])
{
	struct frame a = { .h.type = F_AUTH };

	a.u.auth.role = role;
	a.u.auth.host = j->cfg.host;
	a.u.auth.job = j->id;
	auth_random(a.u.auth.nonce, FRAME_NONCE_LEN);
	memcpy(cli_nonce, a.u.auth.nonce, FRAME_NONCE_LEN);
	auth_client_mac(&a.u.auth, j->key, srv_nonce);
	conn_send_ctl(c, &a);
}

static void peer_out_frame(struct conn *c, struct frame *f, struct mbuf *payload)
{
	struct job *j = c->owner;

	mbuf_put(payload);
	if (f->h.type == F_CHALLENGE && !c->authed) {
		memcpy(c->user, f->u.challenge.nonce, FRAME_NONCE_LEN);
		peer_answer_challenge(c, j, ROLE_PEER, f->u.challenge.nonce, c->nonce);
		return;
	}
	if (f->h.type == F_AUTH_OK && !c->authed &&
	    auth_check_server(f->u.auth_ok.mac, j->key, c->nonce, c->user)) {
		c->authed = true;
		conn_kick(c);
		return;
	}
	conn_close(c, "peer failed to authenticate");
}

static void peer_out_closed(struct conn *c, const char *why)
{
	struct job *j = c->owner;

	log_info("connection to %s closed: %s", c->name, why);
	if (j && j->peer_out[c->host] == c)
		j->peer_out[c->host] = NULL;
}

static const struct conn_ops peer_out_ops = {
	.frame = peer_out_frame,
	.payload = NULL,
	.closed = peer_out_closed,
};

static void connect_done(struct op *op, int res)
{
	struct connect_op *co = (struct connect_op *)op;
	struct conn *c = co->c;
	char why[128];

	free(co);
	if (!c->closing) {
		if (res < 0) {
			snprintf(why, sizeof(why), "connect failed: %s", strerror(-res));
			conn_close(c, why);
		} else {
			conn_start(c);
		}
	}
	conn_release(c);
}

static int parse_addr(const char *s, struct sockaddr_in *sa)
{
	char ip[64];
	const char *colon = strrchr(s, ':');

	if (!colon || colon - s >= (long)sizeof(ip))
		return -1;
	memcpy(ip, s, colon - s);
	ip[colon - s] = 0;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)atoi(colon + 1));
	return inet_pton(AF_INET, ip, &sa->sin_addr) == 1 ? 0 : -1;
}

/* An outgoing TCP connection to host of job j, connecting asynchronously on
 * the loop; ops see its frames once connected. user: its per-kind state. */
struct conn *peer_dial(struct job *j, uint32_t host, const struct conn_ops *ops,
		       const char *name, void *user)
{
	struct connect_op *co = calloc(1, sizeof(*co));
	struct io_uring_sqe *sqe;
	struct conn *c;
	int fd, one = 1;
	/* a dead peer's unacknowledged data must not wait minutes (DESIGN §6) */
	unsigned int uto = j->cfg.hb_timeout_ns ? (unsigned int)(j->cfg.hb_timeout_ns / 1000000) : 250;

	if (!co || parse_addr(j->spec.hosts[host], &co->sa)) {
		log_err("bad host address %s", j->spec.hosts[host]);
		free(co);
		free(user);
		return NULL;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		free(co);
		free(user);
		return NULL;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	tcpcc_apply(fd);
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &uto, sizeof(uto));
	c = conn_new(fd, CONN_PEER_OUT, ops, name);
	if (!c) {
		close(fd);
		free(co);
		free(user);
		return NULL;
	}
	c->user = user;
	c->owner = j;
	c->host = host;
	co->c = c;
	co->op.cb = connect_done;
	sqe = loop_sqe(g_loop, &co->op);
	if (!sqe) {
		free(co);
		conn_close(c, "io_uring submission queue unavailable");
		return NULL;
	}
	io_uring_prep_connect(sqe, fd, (struct sockaddr *)&co->sa, sizeof(co->sa));
	conn_hold(c);
	return c;
}

struct conn *peer_out(struct job *j, uint32_t host)
{
	struct conn *c = j->peer_out[host];
	char name[64];
	void *nonce;

	if (c)
		return c;
	nonce = calloc(1, FRAME_NONCE_LEN);
	if (!nonce)
		return NULL;
	snprintf(name, sizeof(name), "host %u (%s)", host, j->spec.hosts[host]);
	c = peer_dial(j, host, &peer_out_ops, name, nonce);
	if (c)
		j->peer_out[host] = c;
	return c;
}
