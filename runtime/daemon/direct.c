/* msgd's side of the direct path across hosts (docs/datapath.md §6). A
 * local process asks for a stream to rank dst (L_DIRECT_REQ); if the pair
 * may have one (r = 1, JOB_F_DIRECT, dst on another host, both live and not
 * moving), this daemon dials dst's daemon as for an image stream (the job
 * key proves it, role DIRECT), names the pair and both incarnations
 * (F_DIRECT_HELLO), and once the target said IMAGE_GO passes the socket to
 * the process (L_DIRECT, SCM_RIGHTS). The target checks the hello against
 * its own view (dst is its local, live process of that incarnation, not
 * migrating nor called back; src lives where the connection comes from),
 * passes its end to dst and answers GO, or closes the connection with a
 * logged reason. Neither daemon reads the stream afterwards.
 *
 * A process that has streams is called back (L_DIRECT "leave") when a
 * capture waits for its next receive: it leaves its streams, then meets the
 * capture at msgd as any process does. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "util/log.h"

struct direct_out {
	uint32_t src, dst, src_inc, dst_inc;
	pid_t pid;          /* the process that asked */
	uint8_t cli_nonce[FRAME_NONCE_LEN], srv_nonce[FRAME_NONCE_LEN];
	int stage;          /* 0: challenge, 1: auth ok, 2: go, 3: handed over */
};

static void tell(struct lp *lp, uint32_t peer, uint8_t what, int fd, uint8_t flags)
{
	struct frame f = { .h.type = L_DIRECT, .h.flags = flags };

	f.u.direct = (struct l_direct){ .peer = peer, .what = what };
	if (fd >= 0) {
		lp->direct_given = true;
		conn_send_fd(lp->conn, &f, fd);
	} else {
		conn_send(lp->conn, &f, NULL, 0, 0);
	}
}

/* The process that asked, if it is still the one here and may have a stream. */
static struct lp *asker(struct job *j, uint32_t g, pid_t pid)
{
	struct lp *lp = g < j->cfg.n ? j->lps[g] : NULL;

	if (!lp || lp->pid != pid || !lp->conn || lp->reaped)
		return NULL;
	return lp;
}

static void refuse_local(struct job *j, uint32_t g, pid_t pid, uint32_t dst, const char *why,
			 bool retry)
{
	struct lp *lp = asker(j, g, pid);

	log_debug("no direct stream %u -> %u: %s", g, dst, why);
	if (lp)
		tell(lp, dst, DIRECT_REFUSED, -1, retry ? DIRECT_F_RETRY : 0);
}

/* Why process lp may not have a stream now (NULL: it may). */
static const char *unfit(struct job *j, struct lp *lp)
{
	if (lp->migrating || core_capture_waiting(j->core, lp->g))
		return "it is being captured";
	if (lp->restored)
		return "it was restored (its pairs stay on msgd)";
	if (lp->direct_poked)
		return "it left its streams";
	if (!lp->connected)
		return "it has not started yet";
	if (lp->fenced || lp->superseded || lp->stalled)
		return "it is not a live process";
	return NULL;
}

static void out_frame(struct conn *c, struct frame *f, struct mbuf *payload)
{
	struct job *j = c->owner;
	struct direct_out *d = c->user;
	struct frame out = { 0 };
	struct lp *lp;
	int fd;

	mbuf_put(payload);
	if (d->stage == 0 && f->h.type == F_CHALLENGE) {
		memcpy(d->srv_nonce, f->u.challenge.nonce, FRAME_NONCE_LEN);
		d->stage = 1;
		peer_answer_challenge(c, j, ROLE_DIRECT, d->srv_nonce, d->cli_nonce);
		return;
	}
	if (d->stage == 1 && f->h.type == F_AUTH_OK &&
	    auth_check_server(f->u.auth_ok.mac, j->key, d->cli_nonce, d->srv_nonce)) {
		out.h.type = F_DIRECT_HELLO;
		out.u.direct_hello = (struct f_direct_hello){ .src = d->src, .dst = d->dst,
							      .src_inc = d->src_inc,
							      .dst_inc = d->dst_inc };
		d->stage = 2;
		conn_send_ctl(c, &out);
		return;
	}
	if (d->stage == 2 && f->h.type == F_IMAGE_GO) {
		lp = asker(j, d->src, d->pid);
		if (!lp || unfit(j, lp)) {
			/* nothing was written: its reader sees the end at once */
			conn_close(c, lp ? unfit(j, lp) : "the process that asked is gone");
			return;
		}
		d->stage = 3; /* before detaching: that closes this connection */
		fd = conn_detach(c);
		if (fd < 0) {
			d->stage = 2;
			conn_close(c, "cannot take over the direct stream");
			return;
		}
		tell(lp, d->dst, DIRECT_OUT, fd, 0);
		return;
	}
	conn_close(c, "direct stream handshake failed");
}

static void out_closed(struct conn *c, const char *why)
{
	struct direct_out *d = c->user;

	/* refused at the peer's host (it may not have started), or no connection */
	if (d->stage != 3)
		refuse_local(c->owner, d->src, d->pid, d->dst, why, d->stage == 2);
}

static const struct conn_ops direct_out_ops = {
	.frame = out_frame,
	.payload = NULL,
	.closed = out_closed,
};

void direct_request(struct job *j, struct lp *lp, uint32_t dst)
{
	struct direct_out *d;
	const char *why = NULL;
	uint32_t host = 0;
	char name[64];

	if (!(j->cfg.flags & JOB_F_DIRECT) || j->cfg.r != 1)
		why = "the job has no direct streams";
	else if (dst >= j->cfg.n || dst == lp->g)
		why = "no such peer";
	else if (core_is_local(j->core, dst, NULL))
		why = "the peer runs on this host";
	else if (!core_alive(j->core, dst, 0) || j->killed || j->ending)
		why = "the peer is not alive";
	else
		why = unfit(j, lp);
	if (!why) {
		host = core_host_of(j->core, dst, 0);
		if (host >= j->cfg.m || host == j->cfg.host)
			why = "the peer's host is unknown";
	}
	if (why) {
		refuse_local(j, lp->g, lp->pid, dst, why, false);
		return;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		refuse_local(j, lp->g, lp->pid, dst, "out of memory", false);
		return;
	}
	*d = (struct direct_out){ .src = lp->g, .dst = dst, .pid = lp->pid,
				  .src_inc = core_inc(j->core, lp->g, 0),
				  .dst_inc = core_inc(j->core, dst, 0) };
	snprintf(name, sizeof(name), "direct %u -> %u", lp->g, dst);
	if (!peer_dial(j, host, &direct_out_ops, name, d))
		refuse_local(j, lp->g, lp->pid, dst, "cannot reach the peer's host", false);
}

/* --- the target's side -------------------------------------------------- */

/* Why the hello may not have its stream (NULL: it may). */
static const char *hello_refused(struct conn *c, struct job *j, const struct f_direct_hello *h)
{
	struct lp *lp;

	if (!j || !(j->cfg.flags & JOB_F_DIRECT) || j->cfg.r != 1)
		return "the job has no direct streams";
	if (h->src >= j->cfg.n || h->dst >= j->cfg.n || h->src == h->dst)
		return "no such pair";
	lp = j->lps[h->dst];
	if (!lp || !core_is_local(j->core, h->dst, NULL) || !lp->conn || lp->reaped)
		return "the receiver is not a process of this host";
	if (!core_alive(j->core, h->dst, 0) || core_inc(j->core, h->dst, 0) != h->dst_inc)
		return "the receiver is not of that incarnation";
	if (!core_alive(j->core, h->src, 0) || core_inc(j->core, h->src, 0) != h->src_inc ||
	    core_host_of(j->core, h->src, 0) != c->host)
		return "the sender is not of that incarnation, or not on the dialing host";
	return unfit(j, lp);
}

static void in_frame(struct conn *c, struct frame *f, struct mbuf *payload)
{
	struct job *j = c->owner;
	const struct f_direct_hello *h = &f->u.direct_hello;
	struct frame go = { .h.type = F_IMAGE_GO };
	const char *why;
	char msg[160];
	int fd;

	mbuf_put(payload);
	if (f->h.type != F_DIRECT_HELLO) {
		conn_close(c, "direct stream: a frame other than DIRECT_HELLO");
		return;
	}
	why = hello_refused(c, j, h);
	if (why) {
		snprintf(msg, sizeof(msg), "direct stream %u -> %u refused: %s", h->src, h->dst, why);
		conn_close(c, msg); /* in_closed logs it */
		return;
	}
	fd = conn_detach(c);
	if (fd < 0 || image_put_go(fd, &go)) {
		if (fd >= 0)
			close(fd);
		conn_close(c, "cannot take over the direct stream");
		return;
	}
	tell(j->lps[h->dst], h->src, DIRECT_IN, fd, 0);
}

/* Every refusal (a malformed frame, a hello that does not fit) is logged
 * with its reason; a peer that had not started yet is no news. */
static void in_closed(struct conn *c, const char *why)
{
	if (!strcmp(why, "handed over") || strstr(why, "has not started yet"))
		log_debug("direct connection from %s: %s", c->name, why);
	else
		log_warn("direct connection from %s: %s", c->name, why);
}

const struct conn_ops direct_in_ops = {
	.frame = in_frame,
	.payload = NULL,
	.closed = in_closed,
};

/* After core actions: a process with streams whose capture waits for its
 * next receive is asked to leave them (it may be waiting on a stream).
 * MSG_TEST_DIRECT_LATE_POKE asks only once the capture has begun (the
 * process was in a receive here): the request then crosses the capture,
 * which a real run does only by chance. */
void direct_check(struct job *j)
{
	bool late = getenv("MSG_TEST_DIRECT_LATE_POKE") != NULL;
	uint32_t g;

	if (!(j->cfg.flags & JOB_F_DIRECT))
		return;
	for (g = 0; g < j->cfg.n; g++) {
		struct lp *lp = j->lps[g];

		if (lp && lp->direct_given && !lp->direct_poked && lp->conn &&
		    (late ? core_capture_begun(j->core, g) : core_capture_waiting(j->core, g)) &&
		    !getenv("MSG_TEST_DIRECT_NO_POKE")) {
			lp->direct_poked = true;
			tell(lp, 0, DIRECT_LEAVE, -1, 0);
		}
	}
}
