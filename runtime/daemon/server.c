/* Accepting connections and proving keys. Every accepted connection gets a
 * challenge; until it answers with a valid MAC for an authorized job key it
 * may send nothing else. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "util/log.h"

static struct accept_op {
	struct op op;
	int fd;
	struct sockaddr_storage sa;
	socklen_t salen;
} acc;

static void unauth_frame(struct conn *c, struct frame *f, struct mbuf *payload);
static void unauth_closed(struct conn *c, const char *why);

static const struct conn_ops unauth_ops = {
	.frame = unauth_frame,
	.payload = NULL,
	.closed = unauth_closed,
};

static void accept_submit(void);

static void name_peer(char *out, size_t len, const struct sockaddr_storage *sa)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	int port = 0;

	if (sa->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		port = ntohs(s4->sin_port);
	}
	snprintf(out, len, "%s:%d", ip, port);
}

static void accept_done(struct op *op, int res)
{
	struct conn *c;
	struct frame f = { .h.type = F_CHALLENGE };
	char name[64];
	int one = 1;

	(void)op;
	if (res < 0) {
		log_warn("accept: %s", strerror(-res));
		accept_submit();
		return;
	}
	setsockopt(res, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	tcpcc_apply(res);
	name_peer(name, sizeof(name), &acc.sa);
	c = conn_new(res, CONN_UNAUTH, &unauth_ops, name);
	if (!c) {
		close(res);
	} else {
		auth_random(c->nonce, sizeof(c->nonce));
		memcpy(f.u.challenge.nonce, c->nonce, sizeof(c->nonce));
		conn_send_ctl(c, &f);
		conn_start(c);
	}
	accept_submit();
}

static void accept_submit(void)
{
	struct io_uring_sqe *sqe = loop_sqe(g_loop, &acc.op);

	if (!sqe) {
		log_err("cannot queue accept");
		return;
	}
	acc.salen = sizeof(acc.sa);
	io_uring_prep_accept(sqe, acc.fd, (struct sockaddr *)&acc.sa, &acc.salen, SOCK_CLOEXEC);
}

int server_start(int listen_fd)
{
	acc.op.cb = accept_done;
	acc.fd = listen_fd;
	accept_submit();
	return 0;
}

/* Logged once, by unauth_closed, like every other end before authentication. */
static void refuse(struct conn *c, const char *why)
{
	conn_close(c, why);
}

static void accept_auth(struct conn *c, const struct f_auth *a, struct job *j, const uint8_t *key)
{
	struct frame ok = { .h.type = F_AUTH_OK };

	auth_server_mac(ok.u.auth_ok.mac, key, a->nonce, c->nonce);
	conn_send_ctl(c, &ok);
	c->authed = true;
	c->owner = j;
	if (a->role == ROLE_IMAGE) {
		c->kind = CONN_PEER_IN;
		c->host = a->host;
		c->ops = &image_ops;
		snprintf(c->name, sizeof(c->name), "image from host %u", a->host);
	} else if (a->role == ROLE_DIRECT) {
		c->kind = CONN_PEER_IN;
		c->host = a->host;
		c->ops = &direct_in_ops;
		snprintf(c->name, sizeof(c->name), "direct from host %u", a->host);
	} else if (a->role == ROLE_PEER) {
		c->kind = CONN_PEER_IN;
		c->host = a->host;
		c->ops = &peer_in_ops;
		snprintf(c->name, sizeof(c->name), "host %u", a->host);
	} else {
		c->kind = CONN_CONTROL;
		c->ops = &control_ops;
		/* remember the job id the key was proved for */
		c->host = 0;
		memcpy(c->nonce, &a->job, sizeof(a->job));
	}
	conn_kick(c);
}

static void unauth_frame(struct conn *c, struct frame *f, struct mbuf *payload)
{
	uint8_t key[AUTH_KEY_LEN];
	const struct f_auth *a = &f->u.auth;
	struct job *j;

	mbuf_put(payload);
	if (f->h.type != F_AUTH) {
		refuse(c, "frame before authentication");
		return;
	}
	auth_job_key(key, g_msgd.site_key, a->job);
	if (!auth_check_client(a, key, c->nonce)) {
		refuse(c, "authentication failed (wrong key)");
		return;
	}
	j = job_find(a->job);
	if (a->role == ROLE_PEER || a->role == ROLE_IMAGE || a->role == ROLE_DIRECT) {
		if (daemon_cut()) {
			conn_close(c, "cut off (injected partition)");
			return;
		}
		if (!j || a->host >= j->cfg.m || a->host == j->cfg.host) {
			refuse(c, "peer for an unknown job or host");
			return;
		}
	}
	accept_auth(c, a, j, key);
}

/* A peer that keeps connecting with garbage must not fill the log: at most
 * REFUSALS_LOGGED lines per 10 s, then one line saying how many were not. */
#define REFUSALS_LOGGED 20

static void unauth_closed(struct conn *c, const char *why)
{
	static uint64_t window; /* start of the current 10 s, from its first refusal */
	static unsigned logged, skipped;
	uint64_t now = mono_ns();

	if (daemon_cut()) { /* our own injected partition: expected */
		log_debug("refusing connection from %s: %s", c->name, why);
		return;
	}
	if (!window || now - window >= 10000000000ull) {
		if (skipped)
			log_warn("%u more refused connections not logged", skipped);
		window = now;
		logged = skipped = 0;
	}
	/* garbage, malformed frames and wrong keys end here: say why (DESIGN §9) */
	if (logged++ < REFUSALS_LOGGED)
		log_warn("refusing connection from %s: %s", c->name, why);
	else if (!skipped++)
		log_warn("more than %d refused connections in 10 s: the rest are counted, "
			 "not logged", REFUSALS_LOGGED);
}
