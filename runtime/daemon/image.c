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

static int xfer(int fd, void *buf, size_t len, bool out)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int put_frame(int fd, const struct frame *f)
{
	uint8_t buf[512];
	long n = frame_encode(f, buf, sizeof(buf));

	return n < 0 ? -1 : xfer(fd, buf, (size_t)n, true);
}

static int get_frame(int fd, struct frame *f)
{
	uint8_t buf[FRAME_HDR_LEN + 256];
	struct frame_hdr h;

	if (xfer(fd, buf, FRAME_HDR_LEN, false) || frame_decode_hdr(buf, FRAME_HDR_LEN, &h) ||
	    h.len > 256 || xfer(fd, buf + FRAME_HDR_LEN, h.len, false))
		return -1;
	return frame_decode_body(&h, buf + FRAME_HDR_LEN, f) ? -1 : 0;
}

/* io_uring's task work interrupts blocking calls in the daemon (EINTR); an
 * interrupted connect goes on in the background: wait for it. */
static bool finish_connect(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int err = 0, n;

	if (errno != EINTR && errno != EINPROGRESS)
		return false;
	do
		n = poll(&p, 1, IMAGE_TIMEOUT_S * 1000);
	while (n < 0 && errno == EINTR);
	if (n <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
		errno = n == 0 ? ETIMEDOUT : err ? err : errno;
		return false;
	}
	return true;
}

static int dial(const char *hostport)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct timeval tv = { IMAGE_TIMEOUT_S, 0 };
	const char *colon = strrchr(hostport, ':');
	char ip[64];
	int fd, one = 1;

	if (!colon || colon - hostport >= (long)sizeof(ip))
		return -1;
	memcpy(ip, hostport, colon - hostport);
	ip[colon - hostport] = 0;
	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
		return -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) && !finish_connect(fd)) {
		log_warn("image connection to %s: %s", hostport, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Bytes the process has written to a pipe so far: what we read plus what
 * still waits in the pipe. The copy continues its output from there. */
static uint64_t written(const struct pipe_reader *p)
{
	int queued = 0;

	if (p->fd >= 0 && ioctl(p->fd, FIONREAD, &queued))
		queued = 0;
	return p->off + (uint64_t)(queued > 0 ? queued : 0);
}

static int image_connect(struct job *j, struct lp *lp, const struct f_migrate *mg)
{
	struct frame f = { .h.type = F_AUTH };
	uint8_t srv_nonce[FRAME_NONCE_LEN];
	int fd = dial(j->spec.hosts[mg->target]);

	if (fd < 0)
		return -1;
	if (get_frame(fd, &f) || f.h.type != F_CHALLENGE) {
		log_warn("image connection: no challenge (%s, type %d)", strerror(errno), f.h.type);
		goto fail;
	}
	memcpy(srv_nonce, f.u.challenge.nonce, sizeof(srv_nonce));
	f = (struct frame){ .h.type = F_AUTH };
	f.u.auth.role = ROLE_IMAGE;
	f.u.auth.host = j->cfg.host;
	f.u.auth.job = j->id;
	auth_random(f.u.auth.nonce, FRAME_NONCE_LEN);
	auth_client_mac(&f.u.auth, j->key, srv_nonce);
	{
		uint8_t cli_nonce[FRAME_NONCE_LEN];

		memcpy(cli_nonce, f.u.auth.nonce, sizeof(cli_nonce));
		if (put_frame(fd, &f)) {
			log_warn("image connection: cannot send AUTH: %s", strerror(errno));
			goto fail;
		}
		if (get_frame(fd, &f) || f.h.type != F_AUTH_OK) {
			log_warn("image connection: no AUTH_OK (%s, type %d)", strerror(errno), f.h.type);
			goto fail;
		}
		if (!auth_check_server(f.u.auth_ok.mac, j->key, cli_nonce, srv_nonce)) {
			log_warn("image connection: the target failed to prove the key");
			goto fail;
		}
	}
	f = (struct frame){ .h.type = F_IMAGE_HELLO };
	f.u.image_hello = (struct f_image_hello){ .group = mg->group, .rep = mg->rep, .inc = mg->inc,
						  .mode = mg->mode, .out_off = written(&lp->out),
						  .err_off = written(&lp->err) };
	if (put_frame(fd, &f) || get_frame(fd, &f) || f.h.type != F_IMAGE_GO) {
		log_warn("image connection: no IMAGE_GO (%s, type %d)", strerror(errno), f.h.type);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* A_CAPTURE: the process is blocked in msgrecv; give it the image socket. */
void image_capture(struct job *j, const struct f_migrate *mg)
{
	struct lp *lp = j->lps[mg->group];
	struct frame f = { .h.type = L_CKPT };
	int fd;

	if (!lp || !lp->conn || lp->reaped) {
		log_warn("capture of %u.%u: its process is gone", mg->group, mg->src_rep);
		core_capture_done(j->core, mg->group, -1);
		return;
	}
	fd = image_connect(j, lp, mg);
	if (fd < 0) {
		log_warn("capture of %u.%u: no image connection to host %u", mg->group, mg->src_rep,
			 mg->target);
		core_capture_done(j->core, mg->group, -1);
		return;
	}
	f.u.ckpt.mode = mg->mode;
	if (mg->mode == MIG_MOVE)
		lp->migrating = true;
	conn_send_fd(lp->conn, &f, fd);
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
	if (fd < 0 || put_frame(fd, &go)) {
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
