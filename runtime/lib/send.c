#include "lib/lib.h"
#include "msg.h"

int msgsendt(int dest, int tag, const void *buf, size_t size)
{
	struct frame f = { .h.type = L_SEND };

	if (!msg_lib.init)
		return MSG_EINIT;
	if (dest < 0 || (uint32_t)dest >= msg_lib.n)
		return MSG_ERANK;
	if (tag < 0 || tag > MSG_TAG_MAX || (!buf && size))
		return MSG_EINVAL;
	if (size > FRAME_MSG_MAX)
		return MSG_ESIZE;
	/* the same number in every replica: replicas are deterministic */
	f.u.send = (struct l_send){ .dst = (uint32_t)dest, .tag = tag,
				    .seq = ++msg_lib.next_seq[dest], .size = size };
	return lib_write_frame(&f, buf, size);
}

int msgsend(int dest, const void *buf, size_t size)
{
	return msgsendt(dest, MSG_DEFAULT_TAG, buf, size);
}
