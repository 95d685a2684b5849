/* Capture at the safe point (DESIGN §7). msgd answers a blocked receive
 * with L_CKPT and passes a socket to the target host's restorer; the image
 * goes straight into it. The runtime's own descriptors are not the
 * application's: they are left out and re-created on the target, where the
 * restored process finds a fresh connection to its new msgd on fd 3. */
#include <stdio.h>
#include <unistd.h>

#include "ckpt/ckpt.h"
#include "lib/lib.h"
#include "msg.h"

static int done(int status)
{
	struct frame f = { .h.type = L_CKPT_DONE };

	f.u.ckpt_done.status = status;
	return lib_write_frame(&f, NULL, 0);
}

static int reconnect(void)
{
	struct frame f = { .h.type = L_HELLO };
	int ret;

	f.u.hello = (struct l_hello){ .version = MSG_API_VERSION, .flags = HELLO_F_RESTORED };
	ret = lib_write_frame(&f, NULL, 0);
	/* a daemon that expected a kernel-module image says "resumed" first
	 * (msgd fell back to this engine after msgmig.ko refused): we are */
	do {
		if (!ret)
			ret = lib_read_frame(&f);
	} while (!ret && f.h.type == L_CKPT && f.u.ckpt.mode == MIG_RESUMED);
	if (!ret && f.h.type != L_WELCOME)
		ret = MSG_EPROTO;
	return ret;
}

int lib_resumed(void)
{
	msg_lib.restores++;
	return reconnect();
}

void lib_reap_snapshot(void)
{
	struct ckpt_error err = { 0 };

	if (!msg_lib.snapshot_pending)
		return;
	msg_lib.snapshot_pending = false;
	if (ckpt_snapshot_wait(&err) < 0)
		fprintf(stderr, "msg: a live copy of this process failed: %s\n", err.what);
}

int lib_capture(uint8_t mode)
{
	struct ckpt_opts o = { .exclude_fds = { msg_lib.fd }, .n_exclude_fds = 1 };
	struct ckpt_error err = { 0 };
	int img = msg_lib.passed_fd, ret;

	msg_lib.passed_fd = -1;
	fast_detach(true); /* the image carries the stash, never the mapping */
	lib_reap_snapshot(); /* one snapshot at a time */
	if (img < 0)
		return done(MSG_EPROTO) ? MSG_EDAEMON : 1;
	o.exclude_fds[o.n_exclude_fds++] = img;
	ret = mode == MIG_COPY ? ckpt_snapshot_live(img, &o, &err) : ckpt_capture(img, &o, &err);
	if (ret == CKPT_RESTORED) {
		/* a new process on the target: fd 3 is our new msgd */
		msg_lib.restores++;
		return reconnect();
	}
	/* A copy: the snapshot's writer holds the image from the fork on and
	 * streams it by itself; the survivor goes on at once (its cut is the
	 * fork) and reaps the writer later. */
	if (ret == CKPT_CAPTURED && mode == MIG_COPY)
		msg_lib.snapshot_pending = true;
	if (ret < 0) /* the application goes on here; say why it could not move */
		fprintf(stderr, "msg: capture refused: %s: %s\n", ckpt_err_name(ret), err.what);
	close(img);
	return done(ret) ? MSG_EDAEMON : 1;
}
