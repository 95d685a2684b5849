/* Frames from the local processes (libmsg) on their Unix sockets. The
 * socket was made by msgd itself at launch, so it needs no key. */
#include <stdio.h>
#include <string.h>

#include "daemon/daemon.h"
#include "msg.h"
#include "util/log.h"
#include "wire/digest.h"

static struct mbuf *local_payload(struct conn *c, const struct frame *f, uint64_t *off)
{
	struct mbuf *m;

	if (f->h.type != L_SEND) {
		conn_close(c, "payload on a frame that has none");
		return NULL;
	}
	m = mbuf_new(f->u.send.size);
	if (!m) {
		conn_close(c, "out of memory for a message");
		return NULL;
	}
	/* r = 1: no other copy to compare with (the core hashes lazily if a
	 * forwarded duplicate ever comes), so no hashing as it lands */
	if (m->len >= DIGEST_AS_IT_LANDS && ((struct lp *)c->owner)->job->cfg.r > 1)
		msg_digest_begin(msg_digest_alg_of(((struct lp *)c->owner)->job->cfg.flags), m,
				 ((struct lp *)c->owner)->g, f->u.send.dst, f->u.send.seq,
				 f->u.send.tag);
	*off = 0;
	return m;
}

/* With the job's same-host segment when it uses one (shmseg.c): JOB_F_SHM
 * in the welcome says a descriptor rides with it. */
static void welcome(struct conn *c, struct lp *lp, bool restored)
{
	struct job *j = lp->job;
	struct frame f = { .h.type = L_WELCOME };
	int fd = restored ? -1 : shmseg_fd_for(j, lp);

	f.u.welcome = (struct l_welcome){ .n = j->cfg.n, .group = lp->g, .r = j->cfg.r,
					  .rep = (uint16_t)lp->rep,
					  .flags = (j->cfg.flags & ~JOB_F_SHM) |
						   (fd >= 0 ? JOB_F_SHM : 0) };
	if (fd >= 0)
		conn_send_fd(c, &f, fd);
	else
		conn_send(c, &f, NULL, 0, 0);
}

static void local_frame(struct conn *c, struct frame *f, struct mbuf *payload)
{
	struct lp *lp = c->owner;
	struct job *j = lp->job;
	struct frame bye = { .h.type = L_BYE };
	int err = 0;

	job_clock(j);
	switch (f->h.type) {
	case L_HELLO:
		mbuf_put(payload);
		if (f->u.hello.flags & HELLO_F_RESTORED)
			image_trace(j, "restored-hello", lp->g);
		if ((f->u.hello.flags & HELLO_F_RESTORED) && core_local_restored(j->core, lp->g)) {
			conn_close(c, "restored process unknown to the core");
			return;
		}
		lp->connected = true;
		welcome(c, lp, f->u.hello.flags & HELLO_F_RESTORED);
		if (lp->stalled) { /* injected before the process said hello */
			struct frame stall = { .h.type = L_ERROR };

			stall.u.error.code = MSG_EINTERNAL_STALL;
			conn_send(c, &stall, NULL, 0, 0);
		}
		job_run_actions(j);
		return;
	case L_CKPT_DONE:
		mbuf_put(payload);
		image_trace(j, "ckpt-done", lp->g);
		/* a copy's pre-copy goes on across receives: no cut yet */
		if (!f->u.ckpt_done.status && (f->h.flags & CKPT_DONE_F_PENDING)) {
			core_capture_pending(j->core, lp->g);
			break;
		}
		if (!f->u.ckpt_done.status && (f->h.flags & CKPT_DONE_F_READY)) {
			core_capture_ready(j->core, lp->g);
			break;
		}
		if (!f->u.ckpt_done.status && (f->h.flags & CKPT_DONE_F_WANT_STREAM)) {
			image_give_stream(lp, 0); /* the old way: its stream, then the capture */
			break;
		}
		if (f->u.ckpt_done.status)
			lp->migrating = false;
		image_captured_event(j, lp->g, lp->cap_rep, lp->cap_mode, "user", f->u.ckpt_done.status,
				     image_copy_engine(lp->g, lp->cap_rep, f->h.flags));
		core_capture_done(j->core, lp->g, f->u.ckpt_done.status);
		break;
	case L_SEND:
		if (!payload) /* an empty message */
			payload = mbuf_new(0);
		lp->sends++;
		if (lp->corrupt_at && lp->sends >= lp->corrupt_at && payload && payload->len) {
			/* injected fault: this replica's copy differs in one bit */
			char ev[160];

			payload->data[payload->len / 2] ^= 0x10;
			lp->corrupt_at = 0;
			snprintf(ev, sizeof(ev), "{\"event\":\"injected\",\"fault\":\"corrupt\","
				 "\"group\":%u,\"rep\":%u,\"send\":%llu,\"dst\":%u,\"seq\":%llu}",
				 lp->g, lp->rep, (unsigned long long)lp->sends, f->u.send.dst,
				 (unsigned long long)f->u.send.seq);
			job_event(j, ev);
		}
		err = core_local_send(j->core, lp->g, &f->u.send, payload);
		break;
	case L_RECV:
		mbuf_put(payload);
		if (f->h.flags & RECV_F_CANCEL)
			err = core_local_cancel(j->core, lp->g);
		else
			err = core_local_recv(j->core, lp->g, &f->u.recv);
		break;
	case L_DIRECT_REQ:
		mbuf_put(payload);
		direct_request(j, lp, f->u.direct_req.dst);
		break;
	case L_FINALIZE:
		mbuf_put(payload);
		core_local_finalize(j->core, lp->g);
		conn_send(c, &bye, NULL, 0, 0);
		return;
	default:
		mbuf_put(payload);
		err = MSG_EPROTO;
	}
	if (err) {
		char why[96];

		snprintf(why, sizeof(why), "invalid %s from process %u.%u (%d)",
			 frame_type_name(f->h.type), lp->g, lp->rep, err);
		conn_close(c, why);
		return;
	}
	job_run_actions(j);
}

static void local_closed(struct conn *c, const char *why)
{
	struct lp *lp = c->owner;

	log_debug("process %u.%u disconnected: %s", lp->g, lp->rep, why);
	if (lp->conn == c) {
		lp->conn = NULL;
		image_drop_stream(lp);
	}
}

const struct conn_ops local_ops = {
	.frame = local_frame,
	.payload = local_payload,
	.closed = local_closed,
};
