#include "lib/lib.h"
#include "msg.h"

/* One message through msgd. Its sequence number counts the messages of
 * this channel that go through msgd (the ring's own order covers the
 * rest): the same number in every replica, since replicas are
 * deterministic. */
int lib_daemon_send(int dest, int tag, const void *buf, size_t size, uint64_t site)
{
	struct frame f = { .h.type = L_SEND };

	f.u.send = (struct l_send){ .dst = (uint32_t)dest, .tag = tag,
				    .seq = ++msg_lib.next_seq[dest], .size = size, .site = site };
	uint64_t key = (site ^ ((uint64_t)dest << 32) ^ (uint32_t)tag) * 0x9e3779b97f4a7c15ull;

	return lib_queue_frame(&f, buf, size, (uint32_t)(key >> 56));
}

/* site: the application's call site, carried for divergence reports */
static int send_at(int dest, int tag, const void *buf, size_t size, uint64_t site)
{
	int ret;

	if (!msg_lib.init)
		return MSG_EINIT;
	if (dest < 0 || (uint32_t)dest >= msg_lib.n)
		return MSG_ERANK;
	if (tag < 0 || tag > MSG_TAG_MAX || (!buf && size))
		return MSG_EINVAL;
	if (size > FRAME_MSG_MAX)
		return MSG_ESIZE;
	lib_test_delay('s');
	if (msg_lib.shm && (ret = fast_send(dest, tag, buf, size, site)) != 1)
		return ret;
	if (direct_enabled() && (ret = direct_send(dest, tag, buf, size, site)) != 1)
		return ret;
	return lib_daemon_send(dest, tag, buf, size, site);
}

int msgsendt(int dest, int tag, const void *buf, size_t size)
{
	return send_at(dest, tag, buf, size, lib_site(__builtin_return_address(0)));
}

int msgsend(int dest, const void *buf, size_t size)
{
	return send_at(dest, MSG_DEFAULT_TAG, buf, size, lib_site(__builtin_return_address(0)));
}
