/* msg_on_mpi.h: the msg API (api/msg.h) implemented on top of MPI.
 *
 * The reverse of msg_mpi.h: an application written against msg.h runs,
 * unchanged, under Open MPI's mpirun when it is linked with this
 * implementation instead of libmsg. The paper compared its module with
 * Open MPI exactly this way (same source, two runtimes).
 *
 * Use: include this header in exactly ONE translation unit of the program
 * (api/msg_on_mpi.c does that and is built as the `msg_on_mpi` library),
 * compile with mpicc or link MPI::MPI_C. Everything else includes msg.h.
 *
 * Semantics kept from msg.h:
 *  - msgsend is eager: it copies the payload and starts an MPI_Isend, so it
 *    never waits for the receiver (MPI_Send may, for large messages). Copies
 *    are released as their sends complete, and all at msgFinalize.
 *  - a message longer than the receive buffer returns MSG_ETRUNC and stays
 *    queued (MPI_Probe first, then MPI_Recv of exactly the probed message).
 *  - ranks and tags are MPI_COMM_WORLD ranks and MPI tags.
 */
#ifndef MSG_ON_MPI_H
#define MSG_ON_MPI_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"

/* One eager send in flight: its request and the copy it reads from. */
struct msg_on_mpi_pending {
	MPI_Request req;
	void *copy;
};

static struct {
	int state; /* 0 = not initialised, 1 = running, 2 = finalised */
	int n, id;
	struct msg_on_mpi_pending *pend;
	int npend, cap;
} msg_on_mpi_g;

/* Release the copies of sends that have completed. Cheap when none are
 * pending; keeps memory bounded for long runs. */
static void msg_on_mpi_reap(int wait_all)
{
	int i, j = 0;

	for (i = 0; i < msg_on_mpi_g.npend; i++) {
		struct msg_on_mpi_pending *p = &msg_on_mpi_g.pend[i];
		int done = 0;

		if (wait_all) {
			MPI_Wait(&p->req, MPI_STATUS_IGNORE);
			done = 1;
		} else {
			MPI_Test(&p->req, &done, MPI_STATUS_IGNORE);
		}
		if (done)
			free(p->copy);
		else
			msg_on_mpi_g.pend[j++] = *p;
	}
	msg_on_mpi_g.npend = j;
}

static int msg_on_mpi_ready(void)
{
	return msg_on_mpi_g.state == 1 ? MSG_OK : MSG_EINIT;
}

int msgInitialize(void)
{
	int inited = 0;

	if (msg_on_mpi_g.state == 1)
		return MSG_EALREADY;
	if (msg_on_mpi_g.state == 2)
		return MSG_EINIT;
	MPI_Initialized(&inited);
	if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS)
		return MSG_ENOTLAUNCHED;
	MPI_Comm_size(MPI_COMM_WORLD, &msg_on_mpi_g.n);
	MPI_Comm_rank(MPI_COMM_WORLD, &msg_on_mpi_g.id);
	msg_on_mpi_g.state = 1;
	return MSG_OK;
}

int msgFinalize(void)
{
	if (msg_on_mpi_ready() != MSG_OK)
		return MSG_EINIT;
	msg_on_mpi_reap(1);
	free(msg_on_mpi_g.pend);
	msg_on_mpi_g.pend = NULL;
	msg_on_mpi_g.cap = 0;
	msg_on_mpi_g.state = 2;
	MPI_Finalize();
	return MSG_OK;
}

int msgn(int *n)
{
	if (msg_on_mpi_ready() != MSG_OK)
		return MSG_EINIT;
	if (!n)
		return MSG_EINVAL;
	*n = msg_on_mpi_g.n;
	return MSG_OK;
}

int msgid(int *id)
{
	if (msg_on_mpi_ready() != MSG_OK)
		return MSG_EINIT;
	if (!id)
		return MSG_EINVAL;
	*id = msg_on_mpi_g.id;
	return MSG_OK;
}

static int msg_on_mpi_push(MPI_Request req, void *copy)
{
	if (msg_on_mpi_g.npend == msg_on_mpi_g.cap) {
		int cap = msg_on_mpi_g.cap ? 2 * msg_on_mpi_g.cap : 64;
		void *p = realloc(msg_on_mpi_g.pend, (size_t)cap * sizeof(*msg_on_mpi_g.pend));

		if (!p)
			return MSG_ENOMEM;
		msg_on_mpi_g.pend = (struct msg_on_mpi_pending *)p;
		msg_on_mpi_g.cap = cap;
	}
	msg_on_mpi_g.pend[msg_on_mpi_g.npend].req = req;
	msg_on_mpi_g.pend[msg_on_mpi_g.npend].copy = copy;
	msg_on_mpi_g.npend++;
	return MSG_OK;
}

int msgsendt(int dest, int tag, const void *buf, size_t size)
{
	MPI_Request req;
	void *copy;

	if (msg_on_mpi_ready() != MSG_OK)
		return MSG_EINIT;
	if (dest < 0 || dest >= msg_on_mpi_g.n)
		return MSG_ERANK;
	if (tag < 0 || tag > MSG_TAG_MAX || (!buf && size))
		return MSG_EINVAL;
	if (size > (size_t)0x7fffffff)
		return MSG_ESIZE;
	msg_on_mpi_reap(0);
	copy = malloc(size ? size : 1);
	if (!copy)
		return MSG_ENOMEM;
	if (size)
		memcpy(copy, buf, size);
	if (MPI_Isend(copy, (int)size, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &req) != MPI_SUCCESS) {
		free(copy);
		return MSG_EPROTO;
	}
	if (msg_on_mpi_push(req, copy) != MSG_OK) {
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		free(copy);
	}
	return MSG_OK;
}

int msgsend(int dest, const void *buf, size_t size)
{
	return msgsendt(dest, MSG_DEFAULT_TAG, buf, size);
}

int msgrecvt(int src, int tag, void *buf, size_t size, int *from, int *tag_out,
	     size_t *recvd)
{
	MPI_Status st;
	int count = 0;

	if (msg_on_mpi_ready() != MSG_OK)
		return MSG_EINIT;
	if (src != MSG_ANYSRC && (src < 0 || src >= msg_on_mpi_g.n))
		return MSG_ERANK;
	if ((tag != MSG_ANYTAG && (tag < 0 || tag > MSG_TAG_MAX)) || (!buf && size))
		return MSG_EINVAL;
	msg_on_mpi_reap(0);
	/* Probe first so an oversized message can stay queued (MSG_ETRUNC). */
	MPI_Probe(src == MSG_ANYSRC ? MPI_ANY_SOURCE : src,
		  tag == MSG_ANYTAG ? MPI_ANY_TAG : tag, MPI_COMM_WORLD, &st);
	MPI_Get_count(&st, MPI_BYTE, &count);
	if (from)
		*from = st.MPI_SOURCE;
	if (tag_out)
		*tag_out = st.MPI_TAG;
	if (recvd)
		*recvd = (size_t)count;
	if ((size_t)count > size)
		return MSG_ETRUNC;
	/* Non-overtaking: the first (source, tag) match is the probed one. */
	MPI_Recv(buf, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
		 MPI_STATUS_IGNORE);
	return MSG_OK;
}

int msgrecv(int src, void *buf, size_t size, int *from, size_t *recvd)
{
	return msgrecvt(src, MSG_ANYTAG, buf, size, from, NULL, recvd);
}

const char *msgstrerror(int status)
{
	switch (status) {
	case MSG_OK: return "success";
	case MSG_EINIT: return "msg is not initialised (or already finalised)";
	case MSG_ERANK: return "rank out of range";
	case MSG_ETRUNC: return "message longer than the receive buffer (still queued)";
	case MSG_EINVAL: return "invalid argument";
	case MSG_ENOMEM: return "out of memory";
	case MSG_EDAEMON: return "lost the connection to the local daemon";
	case MSG_ENOTLAUNCHED: return "not started by a launcher (MPI_Init failed)";
	case MSG_EDEAD: return "peer rank has no live replica";
	case MSG_EPROTO: return "protocol error in the MPI layer";
	case MSG_EALREADY: return "msgInitialize called twice";
	case MSG_ESIZE: return "message larger than the runtime's limit";
	default: return "unknown msg status";
	}
}

#endif /* MSG_ON_MPI_H */
