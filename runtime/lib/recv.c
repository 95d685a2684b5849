#include <stdlib.h>

#include "lib/direct.h"
#include "lib/lib.h"
#include "msg.h"

int lib_daemon_ask(int src, int tag, uint64_t bufsize, bool cancel)
{
	struct frame f = { .h.type = L_RECV, .h.flags = cancel ? RECV_F_CANCEL : 0 };

	f.u.recv = (struct l_recv){ .src = src, .tag = tag, .bufsize = bufsize };
	return lib_write_frame(&f, NULL, 0);
}

/* A frame from msgd while no receive waits there, inside msgrecv (a direct
 * stream's receive looks at msgd's socket too): news of streams, a stall, or
 * a capture msgd began while a receive was there, then withdrawn (a leave
 * request crossed it). msgrecv is the safe point wherever it waits, so the
 * capture happens here. MSG_OK: go on; LIB_AGAIN: restored, start over. */
int lib_daemon_news(const struct frame *f)
{
	switch (f->h.type) {
	case L_DIRECT:
		return MSG_OK; /* io.c gave it to direct_frame */
	case L_ERROR:
		if (f->u.error.code != MSG_EINTERNAL_STALL) /* fenced, a dead peer, ... */
			return f->u.error.code < 0 && f->u.error.code > -100 ? f->u.error.code
									      : MSG_EPROTO;
		lib_stall();
		return MSG_OK;
	case L_CKPT:
		if (f->u.ckpt.mode == MIG_RESUMED)
			return lib_resumed() ?: LIB_AGAIN;
		switch (lib_capture(f->u.ckpt.mode, f->h.flags)) {
		case MSG_OK:
			return LIB_AGAIN; /* a new process: its receive starts over */
		case 1:
			return MSG_OK;
		default:
			return MSG_EDAEMON;
		}
	}
	return MSG_EPROTO;
}

/* Read one frame from msgd while a receive is in flight: its answer
 * (STEP_ANSWERED, a->ret set), something else (STEP_CONT: news of direct
 * streams, a capture that left us here), or STEP_AGAIN: a capture restored
 * this process on a new host meanwhile, and the receive starts over. */
int lib_daemon_step(struct answer *a)
{
	struct frame f;
	int ret;

	lib_precopy_progress(true); /* the receive waits: a copy's pages meanwhile */
	ret = lib_read_frame_any(&f);
	if (ret) {
		a->ret = ret;
		return STEP_ANSWERED;
	}
	switch (f.h.type) {
	case L_DIRECT:
		return STEP_CONT;
	case L_CKPT:
		if (f.u.ckpt.mode == MIG_RESUMED) {
			/* restored from a kernel-module image: the read we were
			 * blocked in went on, on the new daemon's socket */
			ret = lib_resumed();
			if (ret) {
				a->ret = ret;
				return STEP_ANSWERED;
			}
			return STEP_AGAIN;
		}
		/* the safe point: msgd captures us here (DESIGN §7) */
		return lib_capture(f.u.ckpt.mode, f.h.flags) == MSG_OK ? STEP_AGAIN : STEP_CONT;
	case L_DELIVER:
		a->from = f.u.deliver.src;
		a->tag = f.u.deliver.tag;
		a->seq = f.u.deliver.seq;
		a->got = f.u.deliver.size;
		if (!a->buf) {
			a->buf = malloc(a->got ? a->got : 1);
			if (!a->buf) {
				a->ret = MSG_ENOMEM;
				return STEP_ANSWERED;
			}
		} else if (f.u.deliver.size > a->size) {
			a->ret = MSG_EPROTO;
			return STEP_ANSWERED;
		}
		a->ret = lib_read_payload(a->buf, f.u.deliver.size);
		return STEP_ANSWERED;
	case L_TRUNC:
		a->from = f.u.trunc.src;
		a->tag = f.u.trunc.tag;
		a->got = f.u.trunc.size;
		a->ret = MSG_ETRUNC;
		return STEP_ANSWERED;
	case L_ERROR:
		if (f.u.error.code == MSG_EINTERNAL_STALL)
			lib_stall();
		a->ret = f.u.error.code;
		return STEP_ANSWERED;
	}
	a->ret = MSG_EPROTO;
	return STEP_ANSWERED;
}

/* One receive through msgd: L_RECV, then L_DELIVER (payload read straight
 * into buf), L_TRUNC or an error. LIB_AGAIN when a capture restored this
 * process on a new host meanwhile: the caller starts the receive over. */
int lib_daemon_recv(int src, int tag, void *buf, size_t size, int *from, int *tag_out,
		    size_t *recvd)
{
	struct answer a = { .buf = buf, .size = size };
	int ret = lib_daemon_ask(src, tag, size, false), step;

	if (ret)
		return ret;
	while ((step = lib_daemon_step(&a)) == STEP_CONT)
		;
	if (step == STEP_AGAIN)
		return LIB_AGAIN;
	if (a.ret == MSG_OK || a.ret == MSG_ETRUNC) {
		if (from)
			*from = (int)a.from;
		if (tag_out)
			*tag_out = a.tag;
		if (recvd)
			*recvd = a.got;
	}
	return a.ret;
}

int msgrecvt(int src, int tag, void *buf, size_t size, int *from, int *tag_out, size_t *recvd)
{
	int ret;

	if (!msg_lib.init)
		return MSG_EINIT;
	if (src != MSG_ANYSRC && (src < 0 || (uint32_t)src >= msg_lib.n))
		return MSG_ERANK;
	if ((tag != MSG_ANYTAG && (tag < 0 || tag > MSG_TAG_MAX)) || (!buf && size))
		return MSG_EINVAL;
	lib_test_delay('r');
	lib_precopy_progress(false);
	do {
		if (msg_lib.shm_mixed) /* rings, streams and msgd (docs/datapath.md §8) */
			ret = direct_recv(src, tag, buf, size, from, tag_out, recvd);
		else if (fast_active())
			ret = fast_recv(src, tag, buf, size, from, tag_out, recvd);
		else if (direct_enabled())
			ret = direct_recv(src, tag, buf, size, from, tag_out, recvd);
		else
			ret = lib_daemon_recv(src, tag, buf, size, from, tag_out, recvd);
	} while (ret == LIB_AGAIN);
	return ret;
}

int msgrecv(int src, void *buf, size_t size, int *from, size_t *recvd)
{
	return msgrecvt(src, MSG_ANYTAG, buf, size, from, NULL, recvd);
}
