/* Image connections (DESIGN §7, "one socket, no staging"). The source daemon
 * opens a TCP connection to the target daemon, proves the job key, names the
 * replica (IMAGE_HELLO) and waits for IMAGE_GO; then it hands the socket to
 * the process being captured, which writes its image straight into it. The
 * target daemon stops reading at IMAGE_GO and starts msg-restore on the
 * socket, which reads the pages straight into place.
 *
 * With the kernel-module engine (--ckpt-engine=kmod, docs/kmod.md) the
 * process is not asked: a helper forked from msgd saves it through
 * /dev/msgmig while it is blocked in msgrecv and streams the module's image
 * into the same socket. msg-restore restores it too; the restored process
 * resumes by repeating the read it was blocked in, on its new daemon's
 * socket, where the target daemon (told by IMAGE_F_KMOD) has put an
 * L_CKPT "resumed": libmsg then says hello and repeats its receive, as a
 * process restored from its own capture does. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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
#include "msgmig_client.h"
#include "util/log.h"

/* How long an image stream's reader may leave its window shut (or its
 * data unacknowledged) before the kernel gives the stream up. peer_dial sets
 * the heartbeat timeout (250 ms) for the daemons' own links, where a silent
 * peer is a lost one; on an image stream it also ends a stream whose
 * restorer is merely slow to read (starting, verifying its files) on a
 * loaded host: its window shut for 250 ms, the source's kernel dropped the
 * connection and answered the reopened window with a reset (msg-restore:
 * "read error -104" after the first ~124 KiB, the receive buffer's worth). */
#define IMAGE_USER_TIMEOUT_MS 10000

static void image_stream_timeout(int fd)
{
	const char *t = getenv("MSG_TEST_IMAGE_USER_TIMEOUT_MS"); /* negative control */
	unsigned int ms = t && *t ? (unsigned int)strtoul(t, NULL, 10) : IMAGE_USER_TIMEOUT_MS;

	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
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

/* MSG_MIG_TRACE=1 (msgd's environment): a move's steps as events, to
 * see where its fixed cost goes (bench/migration/README.md). */
void image_trace(struct job *j, const char *step, uint32_t g)
{
	static int on = -1;
	char ev[160];

	if (on < 0)
		on = getenv("MSG_MIG_TRACE") && *getenv("MSG_MIG_TRACE") != '0';
	if (!on)
		return;
	snprintf(ev, sizeof(ev), "{\"event\":\"mig-trace\",\"step\":\"%s\",\"group\":%u}", step, g);
	job_event(j, ev);
}

void image_captured_event(struct job *j, uint32_t g, uint32_t rep, uint8_t mode,
			  const char *engine, int status, const char *detail)
{
	char ev[512], clean[160] = "";
	size_t i;

	/* a sentence from the module or a strerror: nothing to escape but quotes */
	for (i = 0; detail && detail[i] && i < sizeof(clean) - 1; i++)
		clean[i] = detail[i] == '"' || detail[i] == '\\' || (unsigned char)detail[i] < 32 ?
				   '\'' : detail[i];
	clean[i] = 0;
	snprintf(ev, sizeof(ev),
		 "{\"event\":\"migrate-captured\",\"group\":%u,\"rep\":%u,\"mode\":\"%s\","
		 "\"engine\":\"%s\",\"status\":%d%s%s%s}",
		 g, rep, mode == MIG_MOVE ? "move" : "copy", engine, status,
		 clean[0] ? ",\"detail\":\"" : "", clean, clean[0] ? "\"" : "");
	job_event(j, ev);
}

/* L_CKPT_DONE's header flags: which engine took a process's live copy
 * (pre-copy, or fork where this kernel lacks userfaultfd write-protect);
 * the event's detail, and a log line when it had to be fork. */
const char *image_copy_engine(uint32_t g, uint32_t rep, uint8_t flags)
{
	if (flags & CKPT_DONE_F_FORK) {
		log_info("copy of %u to replica %u taken by the fork engine (no userfaultfd write-protect)",
			 g, rep);
		return "fork";
	}
	return flags & CKPT_DONE_F_PRECOPY ? "pre-copy" : NULL;
}

/* --- the kernel-module engine ------------------------------------------ */

struct kmod_result {
	int32_t ret;       /* 0 or -errno */
	int32_t reason;    /* CKPT_E_* when the module refused */
	uint64_t written;  /* image bytes sent: 0 = refused before the stream began */
	uint64_t ns;       /* how long the save took */
	char detail[128];
};

struct kmod_save {
	struct op op;
	struct job *j;
	struct f_migrate mg;
	pid_t pid;         /* the process saved */
	int img_fd;        /* our copy of the image socket (for the user fallback) */
	int status_fd;     /* the helper's report */
	struct kmod_result res;
};

/* In the forked helper: save the process into the socket, report, exit.
 * A move leaves it stopped once saved: the core's kill (after the cut was
 * sent) ends it; a copy lets it go on. */
static void kmod_helper(pid_t target, uint8_t mode, int img, int report)
{
	static const int exclude[] = { MSG_APP_FD }; /* the runtime's own socket */
	struct msgmig_client_opts o = { .flags = mode == MIG_MOVE ? MSGMIG_SAVE_LEAVE_STOPPED : 0,
					.exclude_fds = exclude, .n_exclude_fds = 1 };
	struct msgmig_client_error err;
	struct kmod_result r = { 0 };
	uint64_t t0 = mono_ns();

	r.ret = msgmig_save_to_fd(target, &o, img, &err);
	r.ns = mono_ns() - t0;
	r.reason = err.reason;
	r.written = err.written;
	memcpy(r.detail, err.detail, sizeof(r.detail));
	r.detail[sizeof(r.detail) - 1] = 0;
	if (r.ret && !r.detail[0])
		snprintf(r.detail, sizeof(r.detail), "%s", strerror(-r.ret));
	_exit(write(report, &r, sizeof(r)) == (ssize_t)sizeof(r) ? 0 : 1);
}

static void kmod_done(struct op *op, int res)
{
	struct kmod_save *ks = (struct kmod_save *)op;
	struct job *j = ks->j;
	struct kmod_result *r = &ks->res;
	uint32_t g = ks->mg.group;
	struct lp *lp = j->lps[g];
	bool ours = lp && lp->pid == ks->pid && !lp->reaped;
	struct frame f = { .h.type = L_CKPT };

	close(ks->status_fd);
	if (res != (int)sizeof(*r)) {
		r->ret = -EIO;
		r->written = ~0ull; /* unknown: no fallback on this socket */
		snprintf(r->detail, sizeof(r->detail), "the save helper ended without a report");
	}
	if (j->ending) {
		/* the job is gone: nothing to hand over; never leave it stopped */
		if (ours)
			kill(ks->pid, SIGKILL);
	} else if (!r->ret) {
		log_info("capture of %u.%u by msgmig.ko: %llu bytes in %.1f ms", g, ks->mg.src_rep,
			 (unsigned long long)r->written, (double)r->ns / 1e6);
		job_clock(j);
		image_captured_event(j, g, ks->mg.rep, ks->mg.mode, "kmod", 0, NULL);
		core_capture_done(j->core, g, 0); /* a move: the core's kill ends the stopped source */
		job_run_actions(j);
	} else if (!r->written && g_msgd.engine_auto && ours && lp->conn) {
		/* auto: the module refused before the stream began (a socket the
		 * application opened, ...): the process captures itself instead,
		 * into the same, still untouched socket */
		log_info("capture of %u.%u: msgmig.ko refused (%s); the process captures itself", g,
			 ks->mg.src_rep, r->detail);
		image_captured_event(j, g, ks->mg.rep, ks->mg.mode, "kmod", r->ret, r->detail);
		kill(ks->pid, SIGCONT); /* the module lets it go on after a refusal; be sure */
		f.u.ckpt.mode = ks->mg.mode;
		lp->cap_mode = ks->mg.mode;
		lp->cap_rep = ks->mg.rep;
		conn_send_fd(lp->conn, &f, ks->img_fd);
		ks->img_fd = -1;
	} else {
		log_warn("capture of %u.%u by msgmig.ko failed: %s (%s)", g, ks->mg.src_rep,
			 strerror(-r->ret), r->detail);
		if (ours) {
			lp->migrating = false;
			kill(ks->pid, SIGCONT); /* whatever the module did, it goes on */
		}
		job_clock(j);
		image_captured_event(j, g, ks->mg.rep, ks->mg.mode, "kmod", r->ret, r->detail);
		core_capture_done(j->core, g, r->ret);
		job_run_actions(j);
	}
	if (ks->img_fd >= 0)
		close(ks->img_fd);
	free(ks);
}

/* Save lp through /dev/msgmig into img_fd (taken over) without blocking
 * the loop: a helper process does the save and reports on a pipe. */
static int kmod_capture(struct job *j, const struct f_migrate *mg, struct lp *lp, int img_fd)
{
	struct kmod_save *ks = calloc(1, sizeof(*ks));
	struct io_uring_sqe *sqe;
	int p[2];
	pid_t pid;

	if (!ks || pipe2(p, O_CLOEXEC)) {
		free(ks);
		return -1;
	}
	*ks = (struct kmod_save){ .op.cb = kmod_done, .j = j, .mg = *mg, .pid = lp->pid,
				  .img_fd = img_fd, .status_fd = p[0] };
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		kmod_helper(lp->pid, mg->mode, img_fd, p[1]);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		free(ks);
		return -1;
	}
	if (mg->mode == MIG_MOVE)
		lp->migrating = true;
	sqe = loop_sqe(g_loop, &ks->op);
	if (sqe)
		io_uring_prep_read(sqe, p[0], &ks->res, sizeof(ks->res), (uint64_t)-1);
	else /* no room on the ring: wait for the helper here */
		kmod_done(&ks->op, (int)read(p[0], &ks->res, sizeof(ks->res)));
	return 0;
}

/* The source side of an image connection, driven on the loop: a blocking
 * handshake here could deadlock two daemons that copy to each other at
 * once (neither loop would answer the other's challenge). */
struct image_out {
	struct f_migrate mg;
	enum ckpt_engine engine;
	uint64_t out_off, err_off;
	uint8_t cli_nonce[FRAME_NONCE_LEN], srv_nonce[FRAME_NONCE_LEN];
	int stage;       /* 0: challenge, 1: auth ok, 2: go, 3: handed over */
	bool early;      /* the process was asked to begin first (CKPT_F_EARLY) */
	uint32_t gen;    /* ...and this is lp->img_gen's connection */
};

/* An early copy's connection is for the process's copy under way only if
 * no newer early copy replaced it. */
static bool early_current(const struct image_out *io, const struct lp *lp, const struct conn *c)
{
	return lp && lp->img_gen == io->gen && (lp->img_dialing || lp->img_conn == c);
}

static void send_drop(struct lp *lp)
{
	struct frame f = { .h.type = L_CKPT, .h.flags = CKPT_F_DROP };

	f.u.ckpt.mode = MIG_COPY;
	if (lp->conn)
		conn_send(lp->conn, &f, NULL, 0, 0);
}

void image_give_stream(struct lp *lp, uint8_t flags)
{
	struct frame f = { .h.type = L_CKPT, .h.flags = flags };

	f.u.ckpt.mode = lp->cap_mode;
	if (lp->img_conn) {
		struct conn *c = lp->img_conn;
		struct image_out *io = c->user;
		int fd;

		io->stage = 3; /* before detaching: that closes the connection */
		lp->img_conn = NULL;
		lp->img_wanted = false;
		fd = conn_detach(c);
		if (fd < 0) { /* no stream: the process's capture fails, and says so */
			conn_close(c, "cannot take over the image connection");
			if (lp->conn)
				conn_send(lp->conn, &f, NULL, 0, 0);
			return;
		}
		image_stream_timeout(fd);
		if (lp->conn)
			conn_send_fd(lp->conn, &f, fd); /* (it closes our end) */
		else
			close(fd);
	} else if (lp->img_dialing) {
		lp->img_wanted = true;
		lp->img_flags = flags;
	}
}

void image_drop_stream(struct lp *lp)
{
	if (lp->img_conn) {
		struct image_out *io = lp->img_conn->user;

		io->stage = 3; /* (not a failure of the copy: it is over) */
		conn_close(lp->img_conn, "its copy is over");
	}
	lp->img_conn = NULL;
	lp->img_wanted = lp->img_dialing = false;
}

static void image_out_frame(struct conn *c, struct frame *f, struct mbuf *payload)
{
	struct job *j = c->owner;
	struct image_out *io = c->user;
	struct lp *lp = j->lps[io->mg.group];
	struct frame out = { 0 };
	int fd;

	mbuf_put(payload);
	if (io->stage == 0 && f->h.type == F_CHALLENGE) {
		image_trace(j, "challenge", io->mg.group);
		memcpy(io->srv_nonce, f->u.challenge.nonce, FRAME_NONCE_LEN);
		io->stage = 1;
		peer_answer_challenge(c, j, ROLE_IMAGE, io->srv_nonce, io->cli_nonce);
		return;
	}
	if (io->stage == 1 && f->h.type == F_AUTH_OK &&
	    auth_check_server(f->u.auth_ok.mac, j->key, io->cli_nonce, io->srv_nonce)) {
		out.h.type = F_IMAGE_HELLO;
		if (io->engine == ENGINE_KMOD)
			out.h.flags = IMAGE_F_KMOD; /* the restored process will need a nudge */
		out.u.image_hello = (struct f_image_hello){
			.group = io->mg.group, .rep = io->mg.rep, .inc = io->mg.inc,
			.mode = io->mg.mode, .out_off = io->out_off, .err_off = io->err_off };
		io->stage = 2;
		image_trace(j, "auth-ok", io->mg.group);
		conn_send_ctl(c, &out);
		return;
	}
	if (io->stage == 2 && f->h.type == F_IMAGE_GO && io->early) {
		/* the process began without it: held (watched) until its cut */
		if (!early_current(io, lp, c) || !lp->conn || lp->reaped) {
			conn_close(c, "its copy is over");
			return;
		}
		io->stage = 4;
		image_trace(j, "go", io->mg.group);
		lp->img_dialing = false;
		lp->img_conn = c;
		if (lp->img_wanted)
			image_give_stream(lp, lp->img_flags);
		return;
	}
	if (io->stage == 2 && f->h.type == F_IMAGE_GO && lp && lp->conn && !lp->reaped) {
		io->stage = 3; /* before detaching: that closes this connection */
		image_trace(j, "go", io->mg.group);
		fd = conn_detach(c);
		if (fd < 0) {
			io->stage = 2;
			conn_close(c, "cannot take over the image connection");
			return;
		}
		image_stream_timeout(fd);
		if (io->engine == ENGINE_KMOD) {
			if (kmod_capture(j, &io->mg, lp, fd)) {
				int e = errno;

				log_warn("capture of %u.%u: cannot start the msgmig save: %s",
					 io->mg.group, io->mg.src_rep, strerror(e));
				close(fd);
				job_clock(j);
				image_captured_event(j, io->mg.group, io->mg.rep, io->mg.mode, "kmod",
						     -e, "cannot start the save helper");
				core_capture_done(j->core, io->mg.group, -1);
				job_run_actions(j);
			}
			return;
		}
		lp->cap_mode = io->mg.mode;
		lp->cap_rep = io->mg.rep;
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
	if (io->early) {
		struct lp *lp = j->lps[io->mg.group];

		if (!early_current(io, lp, c))
			return; /* a copy that ended otherwise */
		lp->img_conn = NULL; /* (closing) */
		image_drop_stream(lp);
		send_drop(lp); /* (before the core may ask for another copy) */
	}
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
	bool early;

	if (!lp || !lp->conn || lp->reaped || !(io = calloc(1, sizeof(*io)))) {
		log_warn("capture of %u.%u: its process is gone", mg->group, mg->src_rep);
		core_capture_done(j->core, mg->group, -1);
		return;
	}
	io->mg = *mg;
	/* a process with the same-host segment may still map it, one with
	 * direct streams hold their sockets: only libmsg itself can leave them
	 * (and unmap, close) before the image is taken */
	io->engine = lp->shm || lp->direct_given ? ENGINE_USER : g_msgd.engine;
	io->out_off = written(&lp->out);
	io->err_off = written(&lp->err);
	/* A copy begins at once, while its image connection is made: the
	 * survivor need not wait for a TCP handshake and two round trips (a
	 * prepared stop needs its stream only at its cut). */
	io->early = mg->mode == MIG_COPY && io->engine == ENGINE_USER;
	if (io->early) {
		struct frame f = { .h.type = L_CKPT, .h.flags = CKPT_F_EARLY };

		image_drop_stream(lp); /* an older copy's */
		io->gen = ++lp->img_gen;
		lp->img_dialing = true;
		lp->cap_mode = mg->mode;
		lp->cap_rep = mg->rep;
		f.u.ckpt.mode = mg->mode;
		conn_send(lp->conn, &f, NULL, 0, 0);
	}
	early = io->early; /* (io is the connection's from here on) */
	snprintf(name, sizeof(name), "image to host %u", mg->target);
	image_trace(j, "dial", mg->group);
	if (!peer_dial(j, mg->target, &image_out_ops, name, io)) {
		log_warn("capture of %u.%u: cannot reach host %u", mg->group, mg->src_rep, mg->target);
		if (early) {
			image_drop_stream(lp);
			send_drop(lp);
		}
		core_capture_done(j->core, mg->group, -1);
	}
}

/* A_CAPTURE of a copy whose pre-copy goes on in the process (it holds the
 * image socket since the first L_CKPT): it is in a receive now, ask it for
 * the cut, no new socket. */
void image_capture_cut(struct job *j, const struct f_migrate *mg)
{
	struct lp *lp = j->lps[mg->group];
	struct frame f = { .h.type = L_CKPT, .h.flags = CKPT_F_CUT };

	if (!lp || !lp->conn || lp->reaped) {
		log_warn("capture of %u.%u: its process is gone", mg->group, mg->src_rep);
		core_capture_done(j->core, mg->group, -1);
		return;
	}
	if (lp->img_conn || lp->img_dialing) { /* an early copy: its stream with its cut */
		image_give_stream(lp, CKPT_F_CUT);
		return;
	}
	f.u.ckpt.mode = mg->mode;
	conn_send(lp->conn, &f, NULL, 0, 0);
}

/* The GO is written straight to the socket: it is the last byte we send
 * before the restorer owns the stream (a few bytes into an empty socket
 * buffer never block). */
int image_put_go(int fd, const struct frame *f)
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
	job_clock(j);
	if (core_incoming_refused(j->core, h->group, h->rep)) {
		/* before the GO: the source's capture fails (docs/protocol.md) */
		conn_close(c, "refused: another replica of the group lives here");
		job_run_actions(j);
		return;
	}
	fd = conn_detach(c);
	if (fd < 0 || image_put_go(fd, &go)) {
		if (fd >= 0)
			close(fd);
		conn_close(c, "cannot take over the image connection");
		return;
	}
	image_trace(j, "hello", h->group);
	if (core_incoming(j->core, h->group, h->rep, h->inc, h->mode, c->host)) {
		close(fd); /* (refused above; nothing changed since) */
		job_run_actions(j);
		return;
	}
	if (spawn_restore(j, h, fd)) {
		log_err("cannot start msg-restore for %u.%u", h->group, h->rep);
	} else {
		struct lp *lp = j->lps[h->group];
		char ev[128];

		snprintf(ev, sizeof(ev), "{\"event\":\"restore-start\",\"group\":%u,\"rep\":%u,"
			 "\"spare\":%s}", h->group, h->rep, lp && lp->spare ? "true" : "false");
		job_event(j, ev);
		if ((f->h.flags & IMAGE_F_KMOD) && lp && lp->conn) {
			/* A module image resumes inside the read it was blocked in, on
			 * this socket: this frame, waiting there, has it say hello and
			 * repeat its receive (libmsg skips it if the source fell back to
			 * the process's own capture). */
			struct frame resumed = { .h.type = L_CKPT };

			resumed.u.ckpt.mode = MIG_RESUMED;
			conn_send(lp->conn, &resumed, NULL, 0, 0);
		}
	}
	close(fd);
	image_trace(j, "forked", h->group);
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
