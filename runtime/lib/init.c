#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ckpt/ckpt.h"
#include "lib/lib.h"
#include "msg.h"

struct msg_lib msg_lib = { .fd = -1, .passed_fd = -1, .bell_fd = -1 };
bool space_wait_fixed; /* lib.h */

/* A capture (move, regeneration copy) can come in any receive: its
 * first-time costs (CPU probe, identity cache, code) are paid here, where
 * nothing waits for this process (~0.4 ms).  MSG_CKPT_PREWARM=0: not. */
static void prewarm_capture(void)
{
	struct ckpt_opts o = { .exclude_fds = { msg_lib.fd }, .n_exclude_fds = 1 };
	const char *env = getenv("MSG_CKPT_PREWARM");

	if (!env || strcmp(env, "0"))
		ckpt_prewarm(&o);
}

int msgInitialize(void)
{
	struct frame f = { .h.type = L_HELLO };
	const char *env = getenv("MSG_FD");
	int ret;

	if (msg_lib.init)
		return MSG_EALREADY;
	if (msg_lib.finalized)
		return MSG_EINIT;
	if (!env || !*env)
		return MSG_ENOTLAUNCHED;
	msg_lib.fd = atoi(env);
	f.u.hello = (struct l_hello){ .version = MSG_API_VERSION, .pid = 0 };
	ret = lib_write_frame(&f, NULL, 0);
	if (!ret)
		ret = lib_read_frame(&f);
	if (ret)
		return ret == MSG_EDAEMON ? MSG_ENOTLAUNCHED : ret;
	if (f.h.type != L_WELCOME || !f.u.welcome.n || f.u.welcome.group >= f.u.welcome.n)
		return MSG_EPROTO;
	msg_lib.n = f.u.welcome.n;
	msg_lib.id = f.u.welcome.group;
	msg_lib.r = f.u.welcome.r;
	msg_lib.rep = f.u.welcome.rep;
	msg_lib.flags = f.u.welcome.flags;
	lib_site_init();
	lib_test_delay_init();
	space_wait_fixed = getenv("MSG_TEST_SPACE_WAIT_FIXED") != NULL;
	msg_lib.next_seq = calloc(msg_lib.n, sizeof(uint64_t));
	if (!msg_lib.next_seq)
		return MSG_ENOMEM;
	if (msg_lib.passed_fd >= 0) {
		/* the job's same-host segment (fast.c): senders may already be
		 * writing into our rings, so failing to map it is fatal here */
		int fd = msg_lib.passed_fd;

		msg_lib.passed_fd = -1;
		ret = (f.u.welcome.flags & JOB_F_SHM) ? fast_attach(fd) : (close(fd), MSG_EPROTO);
		if (ret)
			return ret;
	}
	prewarm_capture();
	msg_lib.init = true;
	return MSG_OK;
}

int msgFinalize(void)
{
	struct frame f = { .h.type = L_FINALIZE };
	int ret;

	if (!msg_lib.init)
		return MSG_EINIT;
	lib_precopy_drop(); /* a copy's pre-copy that never got its cut */
	lib_reap_snapshot();
	if (getenv("MSG_TEST_SHM_REPORT")) /* tests: did the rings carry anything? */
		fprintf(stderr, "msg: rank %u: %llu sends and %llu receives through rings\n",
			msg_lib.id, (unsigned long long)msg_lib.ring_sends,
			(unsigned long long)msg_lib.ring_recvs);
	if (getenv("MSG_TEST_HOLD_REPORT")) /* tests: were sends held back? */
		fprintf(stderr, "msg: rank %u.%u: %llu of %llu sends held\n", msg_lib.id, msg_lib.rep,
			(unsigned long long)lib_held_sends, (unsigned long long)lib_queued_sends);
	if (direct_enabled()) {
		direct_report();
		direct_leave(true); /* our readers read to our end; unread is dropped */
	}
	ret = lib_write_frame(&f, NULL, 0);
	/* wait for L_BYE: everything this process sent is with msgd */
	while (!ret) {
		ret = lib_read_frame(&f);
		if (!ret && f.h.type == L_BYE)
			break;
	}
	msg_lib.init = false;
	msg_lib.finalized = true;
	free(msg_lib.next_seq);
	msg_lib.next_seq = NULL;
	close(msg_lib.fd);
	msg_lib.fd = -1;
	return ret == MSG_EDAEMON ? MSG_OK : ret;
}

int msgn(int *n)
{
	if (!msg_lib.init)
		return MSG_EINIT;
	if (!n)
		return MSG_EINVAL;
	*n = (int)msg_lib.n;
	return MSG_OK;
}

int msgid(int *id)
{
	if (!msg_lib.init)
		return MSG_EINIT;
	if (!id)
		return MSG_EINVAL;
	*id = (int)msg_lib.id;
	return MSG_OK;
}

const char *msgstrerror(int status)
{
	switch (status) {
	case MSG_OK: return "success";
	case MSG_EINIT: return "msg is not initialised (call msgInitialize first, once)";
	case MSG_ERANK: return "rank out of range";
	case MSG_ETRUNC: return "message longer than the receive buffer (it is still queued)";
	case MSG_EINVAL: return "invalid argument";
	case MSG_ENOMEM: return "out of memory";
	case MSG_EDAEMON: return "lost the connection to the local msgd";
	case MSG_ENOTLAUNCHED: return "not started by msgrun (no msgd to talk to)";
	case MSG_EDEAD: return "the peer rank has no live replica left";
	case MSG_EPROTO: return "protocol error between libmsg and msgd";
	case MSG_EALREADY: return "msgInitialize was already called";
	case MSG_ESIZE: return "message larger than the runtime's limit";
	case MSG_EFENCED: return "this replica was fenced";
	}
	return "unknown msg status";
}
