/* Image connections (DESIGN §7, "one socket, no staging"). The source daemon
 * opens a TCP connection to the target daemon, proves the job key, names the
 * replica (IMAGE_HELLO) and waits for IMAGE_GO; then it hands the socket to
 * the process being captured, which writes its image straight into it. The
 * target daemon stops reading at IMAGE_GO and starts msg-restore on the
 * socket, which reads the pages straight into place. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/daemon.h"
#include "util/log.h"

#define IMAGE_TIMEOUT_S 5

/* Bytes the process has written to a pipe so far: what we read plus what
 * still waits in the pipe. The copy continues its output from there. */
static uint64_t written(const struct pipe_reader *p)
{
	int queued = 0;

	if (p->fd >= 0 && ioctl(p->fd, FIONREAD, &queued))
		queued = 0;
	return p->off + (uint64_t)(queued > 0 ? queued : 0);
}

/* The source side of an image connection, driven on the loop: a blocking
 * handshake here could deadlock two daemons that copy to each other at
 * once (neither loop would answer the other's challenge). */
struct image_out {
	struct f_migrate mg;
	uint64_t out_off, err_off;
	uint8_t cli_nonce[FRAME_NONCE_LEN], srv_nonce[FRAME_NONCE_LEN];
	int stage;       /* 0: challenge, 1: auth ok, 2: go, 3: handed over */
};

static void image_out_frame(struct conn *c, struct frame *f, struct mbuf *payload)
{
	struct job *j = c->owner;
	struct image_out *io = c->user;
	struct lp *lp = j->lps[io->mg.group];
	struct frame out = { 0 };
	int fd;

	mbuf_put(payload);
	if (io->stage == 0 && f->h.type == F_CHALLENGE) {
		memcpy(io->srv_nonce, f->u.challenge.nonce, FRAME_NONCE_LEN);
		out.h.type = F_AUTH;
		out.u.auth.role = ROLE_IMAGE;
		out.u.auth.host = j->cfg.host;
		out.u.auth.job = j->id;
		auth_random(out.u.auth.nonce, FRAME_NONCE_LEN);
		memcpy(io->cli_nonce, out.u.auth.nonce, FRAME_NONCE_LEN);
		auth_client_mac(&out.u.auth, j->key, io->srv_nonce);
		io->stage = 1;
		conn_send_ctl(c, &out);
		return;
	}
	if (io->stage == 1 && f->h.type == F_AUTH_OK &&
	    auth_check_server(f->u.auth_ok.mac, j->key, io->cli_nonce, io->srv_nonce)) {
		out.h.type = F_IMAGE_HELLO;
		out.u.image_hello = (struct f_image_hello){
			.group = io->mg.group, .rep = io->mg.rep, .inc = io->mg.inc,
			.mode = io->mg.mode, .out_off = io->out_off, .err_off = io->err_off };
		io->stage = 2;
		conn_send_ctl(c, &out);
		return;
	}
	if (io->stage == 2 && f->h.type == F_IMAGE_GO && lp && lp->conn && !lp->reaped) {
		io->stage = 3; /* before detaching: that closes this connection */
		fd = conn_detach(c);
		if (fd < 0) {
			io->stage = 2;
			conn_close(c, "cannot take over the image connection");
			return;
		}
		out.h.type = L_CKPT;
		out.u.ckpt.mode = io->mg.mode;
		if (io->mg.mode == MIG_MOVE)
			lp->migrating = true;
		conn_send_fd(lp->conn, &out, fd);
		return;
	}
	conn_close(c, "image handshake failed");
}

static void image_out_closed(struct conn *c, const char *why)
{
	struct job *j = c->owner;
	struct image_out *io = c->user;

	if (io->stage == 3)
		return; /* handed to the process: the capture goes on */
	log_warn("capture of %u.%u: no image connection to host %u (%s)", io->mg.group,
		 io->mg.src_rep, io->mg.target, why);
	job_clock(j);
	core_capture_done(j->core, io->mg.group, -1);
	job_run_actions(j);
}

static const struct conn_ops image_out_ops = {
	.frame = image_out_frame,
	.payload = NULL,
	.closed = image_out_closed,
};

/* A_CAPTURE: the process is blocked in msgrecv; open the image connection
 * and, once the target said go, give the process its socket. */
void image_capture(struct job *j, const struct f_migrate *mg)
{
	struct lp *lp = j->lps[mg->group];
	struct image_out *io;
	char name[64];

	if (!lp || !lp->conn || lp->reaped || !(io = calloc(1, sizeof(*io)))) {
		log_warn("capture of %u.%u: its process is gone", mg->group, mg->src_rep);
		core_capture_done(j->core, mg->group, -1);
		return;
	}
	io->mg = *mg;
	io->out_off = written(&lp->out);
	io->err_off = written(&lp->err);
	snprintf(name, sizeof(name), "image to host %u", mg->target);
	if (!peer_dial(j, mg->target, &image_out_ops, name, io)) {
		log_warn("capture of %u.%u: cannot reach host %u", mg->group, mg->src_rep, mg->target);
		core_capture_done(j->core, mg->group, -1);
	}
}

/* The GO is written straight to the socket: it is the last byte we send
 * before the restorer owns the stream (a few bytes into an empty socket
 * buffer never block). */
static int put_go(int fd, const struct frame *f)
{
	uint8_t buf[64];
	long n = frame_encode(f, buf, sizeof(buf));

	return n < 0 || send(fd, buf, (size_t)n, MSG_NOSIGNAL) != n ? -1 : 0;
}

/* Target side: IMAGE_HELLO on an authenticated image connection. */
static void image_frame(struct conn *c, struct frame *f, struct mbuf *payload)
{
	struct job *j = c->owner;
	struct frame go = { .h.type = F_IMAGE_GO };
	const struct f_image_hello *h = &f->u.image_hello;
	int fd;

	mbuf_put(payload);
	if (f->h.type != F_IMAGE_HELLO || !j || h->group >= j->cfg.n || h->rep >= j->cfg.r) {
		conn_close(c, "bad image connection");
		return;
	}
	fd = conn_detach(c);
	if (fd < 0 || put_go(fd, &go)) {
		if (fd >= 0)
			close(fd);
		conn_close(c, "cannot take over the image connection");
		return;
	}
	job_clock(j);
	core_incoming(j->core, h->group, h->rep, h->inc, h->mode);
	if (spawn_restore(j, h, fd))
		log_err("cannot start msg-restore for %u.%u", h->group, h->rep);
	close(fd);
	job_run_actions(j);
}

static void image_closed(struct conn *c, const char *why)
{
	log_debug("image connection from %s: %s", c->name, why);
}

const struct conn_ops image_ops = {
	.frame = image_frame,
	.payload = NULL,
	.closed = image_closed,
};
