#include "lib/lib.h"
#include "msg.h"

/* One receive through msgd: L_RECV, then L_DELIVER (payload read straight
 * into buf), L_TRUNC or an error. LIB_AGAIN when a capture restored this
 * process on a new host meanwhile: the caller starts the receive over. */
int lib_daemon_recv(int src, int tag, void *buf, size_t size, int *from, int *tag_out,
		    size_t *recvd)
{
	struct l_recv want = { .src = src, .tag = tag, .bufsize = size };
	struct frame f = { .h.type = L_RECV };
	int ret;

	f.u.recv = want;
	ret = lib_write_frame(&f, NULL, 0);
	for (;;) {
		if (!ret)
			ret = lib_read_frame(&f);
		if (ret)
			return ret;
		if (f.h.type != L_CKPT)
			break;
		if (f.u.ckpt.mode == MIG_RESUMED) {
			/* restored from a kernel-module image: the read we were
			 * blocked in went on, on the new daemon's socket */
			ret = lib_resumed();
			return ret == MSG_OK ? LIB_AGAIN : ret;
		}
		/* the safe point: msgd captures us here (DESIGN §7) */
		ret = lib_capture(f.u.ckpt.mode);
		if (ret == MSG_OK)
			return LIB_AGAIN; /* restored on a new host: repeat this receive there */
		ret = MSG_OK;
	}
	if (f.h.type == L_DELIVER) {
		if (f.u.deliver.size > size)
			return MSG_EPROTO;
		ret = lib_read_payload(buf, f.u.deliver.size);
		if (ret)
			return ret;
		if (from)
			*from = (int)f.u.deliver.src;
		if (tag_out)
			*tag_out = f.u.deliver.tag;
		if (recvd)
			*recvd = f.u.deliver.size;
		return MSG_OK;
	}
	if (f.h.type == L_TRUNC) {
		if (from)
			*from = (int)f.u.trunc.src;
		if (tag_out)
			*tag_out = f.u.trunc.tag;
		if (recvd)
			*recvd = f.u.trunc.size;
		return MSG_ETRUNC;
	}
	if (f.h.type == L_ERROR && f.u.error.code == MSG_EINTERNAL_STALL)
		lib_stall();
	return f.h.type == L_ERROR ? f.u.error.code : MSG_EPROTO;
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
	do {
		if (fast_active())
			ret = fast_recv(src, tag, buf, size, from, tag_out, recvd);
		else
			ret = lib_daemon_recv(src, tag, buf, size, from, tag_out, recvd);
	} while (ret == LIB_AGAIN);
	return ret;
}

int msgrecv(int src, void *buf, size_t size, int *from, size_t *recvd)
{
	return msgrecvt(src, MSG_ANYTAG, buf, size, from, NULL, recvd);
}
