/* msg_mpi.h: MPI compatibility on top of msg, so MPI codes port with an
 * include change (msgcc makes <mpi.h> resolve to this header).
 *
 * Supported (MPI_COMM_WORLD only): Init/Init_thread/Initialized/Finalize/
 * Finalized, Comm_rank/size, Send/Recv with tags, MPI_ANY_SOURCE,
 * MPI_ANY_TAG, MPI_PROC_NULL, MPI_Status (MPI_SOURCE, MPI_TAG, MPI_ERROR),
 * Get_count, Type_size, Sendrecv, Sendrecv_replace, Isend/Irecv/Wait/Waitall,
 * Barrier, Bcast, Reduce, Allreduce (MPI_IN_PLACE too), Gather, Scatter,
 * Allgather, Wtime, Wtick, Abort, Error_string, Get_processor_name.
 * Everything else that a program might call fails at COMPILE time with a
 * message naming it (attribute "unavailable").
 *
 * Semantics worth knowing:
 *  - Sends are eager (msgsend returns once the buffer may be reused), so
 *    Send, Sendrecv and Isend never wait for the receiver; Isend completes
 *    at once. Irecv is deferred: the receive happens in Wait/Waitall.
 *  - Collectives combine in a fixed order (rank 0, 1, ..., n-1, folded left
 *    at the root), so every run and every replica gets identical bits.
 *    They use tags above MPI_TAG_UB, reserved here; a collective message
 *    picked up by a user MPI_ANY_TAG receive is set aside for the
 *    collective that expects it, never delivered to the user.
 *  - Errors are fatal (MPI_ERRORS_ARE_FATAL): a message and exit(1).
 *  - No clock, pid or host name reaches the program except MPI_Wtime, which
 *    is for timing only (replicas must compute identically).
 * Everything is static inline; the little process-wide state is one weak
 * symbol, shared by every translation unit. C11 and C++ both compile it.
 */
#ifndef MSG_MPI_H
#define MSG_MPI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msg.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 1
#define MPI_SUBVERSION 0
#define MSGMPI_FN static inline

/* ---- handles and constants ------------------------------------------ */
typedef int MPI_Comm;
typedef int MPI_Datatype; /* (kind << 8) | size in bytes */
typedef int MPI_Op;
typedef struct msgmpi_request *MPI_Request;
typedef struct {
	int MPI_SOURCE, MPI_TAG, MPI_ERROR;
	size_t msgmpi_bytes;
} MPI_Status;

#define MPI_COMM_WORLD ((MPI_Comm)0x4d530001)
#define MPI_COMM_NULL ((MPI_Comm)0)
#define MPI_REQUEST_NULL ((MPI_Request)0)
#define MPI_STATUS_IGNORE ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_IN_PLACE ((void *)1)
#define MPI_ANY_SOURCE MSG_ANYSRC
#define MPI_ANY_TAG MSG_ANYTAG
#define MPI_PROC_NULL (-2)
#define MPI_UNDEFINED (-32766)
/* Tags above MPI_TAG_UB belong to the collectives below. */
#define MPI_TAG_UB_VALUE (MSG_TAG_MAX - 64)
#define MPI_MAX_PROCESSOR_NAME 64
#define MPI_MAX_ERROR_STRING 128
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

enum {
	MPI_SUCCESS = 0, MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_TAG,
	MPI_ERR_COMM, MPI_ERR_RANK, MPI_ERR_REQUEST, MPI_ERR_ROOT, MPI_ERR_OP,
	MPI_ERR_ARG, MPI_ERR_TRUNCATE, MPI_ERR_OTHER, MPI_ERR_INTERN,
	MPI_ERR_LASTCODE
};

/* Type kinds: reductions need to know how to add. */
#define MSGMPI_K_SINT 1
#define MSGMPI_K_UINT 2
#define MSGMPI_K_FLOAT 3
#define MSGMPI_K_BYTE 4
#define MSGMPI_TYPE(kind, sz) ((MPI_Datatype)(((kind) << 8) | (int)(sz)))
#define MPI_CHAR MSGMPI_TYPE(MSGMPI_K_SINT, sizeof(char))
#define MPI_SIGNED_CHAR MSGMPI_TYPE(MSGMPI_K_SINT, 1)
#define MPI_UNSIGNED_CHAR MSGMPI_TYPE(MSGMPI_K_UINT, 1)
#define MPI_BYTE MSGMPI_TYPE(MSGMPI_K_BYTE, 1)
#define MPI_SHORT MSGMPI_TYPE(MSGMPI_K_SINT, sizeof(short))
#define MPI_UNSIGNED_SHORT MSGMPI_TYPE(MSGMPI_K_UINT, sizeof(short))
#define MPI_INT MSGMPI_TYPE(MSGMPI_K_SINT, sizeof(int))
#define MPI_UNSIGNED MSGMPI_TYPE(MSGMPI_K_UINT, sizeof(int))
#define MPI_LONG MSGMPI_TYPE(MSGMPI_K_SINT, sizeof(long))
#define MPI_UNSIGNED_LONG MSGMPI_TYPE(MSGMPI_K_UINT, sizeof(long))
#define MPI_LONG_LONG MSGMPI_TYPE(MSGMPI_K_SINT, sizeof(long long))
#define MPI_LONG_LONG_INT MPI_LONG_LONG
#define MPI_UNSIGNED_LONG_LONG MSGMPI_TYPE(MSGMPI_K_UINT, sizeof(long long))
#define MPI_INT8_T MSGMPI_TYPE(MSGMPI_K_SINT, 1)
#define MPI_INT16_T MSGMPI_TYPE(MSGMPI_K_SINT, 2)
#define MPI_INT32_T MSGMPI_TYPE(MSGMPI_K_SINT, 4)
#define MPI_INT64_T MSGMPI_TYPE(MSGMPI_K_SINT, 8)
#define MPI_UINT8_T MSGMPI_TYPE(MSGMPI_K_UINT, 1)
#define MPI_UINT16_T MSGMPI_TYPE(MSGMPI_K_UINT, 2)
#define MPI_UINT32_T MSGMPI_TYPE(MSGMPI_K_UINT, 4)
#define MPI_UINT64_T MSGMPI_TYPE(MSGMPI_K_UINT, 8)
#define MPI_FLOAT MSGMPI_TYPE(MSGMPI_K_FLOAT, sizeof(float))
#define MPI_DOUBLE MSGMPI_TYPE(MSGMPI_K_FLOAT, sizeof(double))

enum { MPI_SUM = 1, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_BAND, MPI_BOR,
       MPI_BXOR };

/* ---- what is not supported fails at compile time -------------------- */
#ifdef __cplusplus
#define MSGMPI_ANYARGS ...
#else
#define MSGMPI_ANYARGS
#endif
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
#define MSGMPI_NO(why) __attribute__((unavailable(why)))
#else
#define MSGMPI_NO(why) __attribute__((error(why)))
#endif
#define MSGMPI_UNSUPPORTED(name) \
	int name(MSGMPI_ANYARGS) MSGMPI_NO("msg_mpi.h: " #name " is not supported by msg (docs/apps.md lists what is)");
#define MSGMPI_UNSUPPORTED_CONST(name, why) \
	extern const int name MSGMPI_NO("msg_mpi.h: " #name " is not supported by msg: " why);

MSGMPI_UNSUPPORTED_CONST(MPI_COMM_SELF, "only MPI_COMM_WORLD exists")
MSGMPI_UNSUPPORTED_CONST(MPI_LONG_DOUBLE, "its padding bytes are undefined and would make replicas differ")
MSGMPI_UNSUPPORTED_CONST(MPI_MAXLOC, "no pair types")
MSGMPI_UNSUPPORTED_CONST(MPI_MINLOC, "no pair types")
MSGMPI_UNSUPPORTED_CONST(MPI_DOUBLE_INT, "no pair types")
MSGMPI_UNSUPPORTED_CONST(MPI_2INT, "no pair types")
MSGMPI_UNSUPPORTED_CONST(MPI_ERRORS_RETURN, "errors are always fatal")
MSGMPI_UNSUPPORTED(MPI_Comm_split) MSGMPI_UNSUPPORTED(MPI_Comm_dup)
MSGMPI_UNSUPPORTED(MPI_Comm_create) MSGMPI_UNSUPPORTED(MPI_Comm_free)
MSGMPI_UNSUPPORTED(MPI_Comm_group) MSGMPI_UNSUPPORTED(MPI_Comm_spawn)
MSGMPI_UNSUPPORTED(MPI_Comm_set_errhandler) MSGMPI_UNSUPPORTED(MPI_Comm_get_attr)
MSGMPI_UNSUPPORTED(MPI_Cart_create) MSGMPI_UNSUPPORTED(MPI_Cart_coords)
MSGMPI_UNSUPPORTED(MPI_Cart_shift) MSGMPI_UNSUPPORTED(MPI_Cart_rank)
MSGMPI_UNSUPPORTED(MPI_Dims_create)
MSGMPI_UNSUPPORTED(MPI_Type_contiguous) MSGMPI_UNSUPPORTED(MPI_Type_vector)
MSGMPI_UNSUPPORTED(MPI_Type_create_struct) MSGMPI_UNSUPPORTED(MPI_Type_commit)
MSGMPI_UNSUPPORTED(MPI_Type_free) MSGMPI_UNSUPPORTED(MPI_Op_create)
MSGMPI_UNSUPPORTED(MPI_Op_free) MSGMPI_UNSUPPORTED(MPI_Pack) MSGMPI_UNSUPPORTED(MPI_Unpack)
MSGMPI_UNSUPPORTED(MPI_Probe) MSGMPI_UNSUPPORTED(MPI_Iprobe)
MSGMPI_UNSUPPORTED(MPI_Test) MSGMPI_UNSUPPORTED(MPI_Testall)
MSGMPI_UNSUPPORTED(MPI_Testany) MSGMPI_UNSUPPORTED(MPI_Testsome)
MSGMPI_UNSUPPORTED(MPI_Waitany) MSGMPI_UNSUPPORTED(MPI_Waitsome)
MSGMPI_UNSUPPORTED(MPI_Request_free) MSGMPI_UNSUPPORTED(MPI_Cancel)
MSGMPI_UNSUPPORTED(MPI_Ssend) MSGMPI_UNSUPPORTED(MPI_Issend)
MSGMPI_UNSUPPORTED(MPI_Bsend) MSGMPI_UNSUPPORTED(MPI_Rsend)
MSGMPI_UNSUPPORTED(MPI_Send_init) MSGMPI_UNSUPPORTED(MPI_Recv_init)
MSGMPI_UNSUPPORTED(MPI_Start) MSGMPI_UNSUPPORTED(MPI_Startall)
MSGMPI_UNSUPPORTED(MPI_Gatherv) MSGMPI_UNSUPPORTED(MPI_Scatterv)
MSGMPI_UNSUPPORTED(MPI_Allgatherv) MSGMPI_UNSUPPORTED(MPI_Alltoall)
MSGMPI_UNSUPPORTED(MPI_Alltoallv) MSGMPI_UNSUPPORTED(MPI_Reduce_scatter)
MSGMPI_UNSUPPORTED(MPI_Scan) MSGMPI_UNSUPPORTED(MPI_Exscan)
MSGMPI_UNSUPPORTED(MPI_Ibarrier) MSGMPI_UNSUPPORTED(MPI_Ibcast)
MSGMPI_UNSUPPORTED(MPI_Ireduce) MSGMPI_UNSUPPORTED(MPI_Iallreduce)
MSGMPI_UNSUPPORTED(MPI_Win_create) MSGMPI_UNSUPPORTED(MPI_Win_fence)
MSGMPI_UNSUPPORTED(MPI_Win_free) MSGMPI_UNSUPPORTED(MPI_Put)
MSGMPI_UNSUPPORTED(MPI_Get) MSGMPI_UNSUPPORTED(MPI_Accumulate)
MSGMPI_UNSUPPORTED(MPI_File_open) MSGMPI_UNSUPPORTED(MPI_File_close)
MSGMPI_UNSUPPORTED(MPI_File_read) MSGMPI_UNSUPPORTED(MPI_File_write)

/* ---- process-wide state (one weak definition for all TUs) ----------- */
struct msgmpi_stashed {
	struct msgmpi_stashed *next;
	int src, tag;
	size_t len;
	void *data;
};
struct msgmpi_state {
	int state; /* 0 before Init, 1 running, 2 after Finalize */
	int id, n;
	struct msgmpi_stashed *stash; /* collective messages seen by ANY_TAG */
};
__attribute__((weak)) struct msgmpi_state msgmpi_g;
/* Isend completes at once; its requests all point here. */
__attribute__((weak)) char msgmpi_sent_request;

/* Reserved collective tags, all above MPI_TAG_UB. */
#define MSGMPI_TAG_BARRIER (MSG_TAG_MAX - 1)
#define MSGMPI_TAG_BCAST (MSG_TAG_MAX - 2)
#define MSGMPI_TAG_REDUCE (MSG_TAG_MAX - 3)
#define MSGMPI_TAG_GATHER (MSG_TAG_MAX - 4)
#define MSGMPI_TAG_SCATTER (MSG_TAG_MAX - 5)

struct msgmpi_request {
	void *buf;
	size_t bytes;
	int src, tag;
};

/* ---- errors ---------------------------------------------------------- */
MSGMPI_FN int MPI_Error_string(int code, char *str, int *len)
{
	static const char *const text[] = {
		"success", "invalid buffer", "invalid count", "invalid datatype",
		"invalid tag", "invalid communicator", "invalid rank", "invalid request",
		"invalid root", "invalid operation", "invalid argument",
		"message truncated", "other error", "internal error (msg call failed)"
	};
	const char *t = code >= 0 && code < MPI_ERR_LASTCODE ? text[code] : "unknown error";

	snprintf(str, MPI_MAX_ERROR_STRING, "%s", t);
	*len = (int)strlen(str);
	return MPI_SUCCESS;
}

/* MPI_ERRORS_ARE_FATAL: say what failed and stop this process. */
MSGMPI_FN void msgmpi_fail(const char *fn, int code, const char *detail)
{
	char s[MPI_MAX_ERROR_STRING];
	int len;

	MPI_Error_string(code, s, &len);
	fprintf(stderr, "msg_mpi: %s on rank %d: %s%s%s\n", fn, msgmpi_g.id, s,
		detail ? ": " : "", detail ? detail : "");
	fflush(stdout);
	exit(1);
}

MSGMPI_FN void msgmpi_check_msg(const char *fn, int rc)
{
	if (rc != MSG_OK)
		msgmpi_fail(fn, rc == MSG_ETRUNC ? MPI_ERR_TRUNCATE : MPI_ERR_INTERN,
			    msgstrerror(rc));
}

MSGMPI_FN void msgmpi_check_comm(const char *fn, MPI_Comm comm)
{
	if (msgmpi_g.state != 1)
		msgmpi_fail(fn, MPI_ERR_OTHER, "called outside MPI_Init..MPI_Finalize");
	if (comm != MPI_COMM_WORLD)
		msgmpi_fail(fn, MPI_ERR_COMM, "only MPI_COMM_WORLD is supported");
}

MSGMPI_FN size_t msgmpi_bytes(const char *fn, int count, MPI_Datatype t)
{
	int kind = t >> 8, size = t & 0xff;

	if (count < 0)
		msgmpi_fail(fn, MPI_ERR_COUNT, NULL);
	if (kind < MSGMPI_K_SINT || kind > MSGMPI_K_BYTE || (size & (size - 1)) || !size ||
	    size > 8)
		msgmpi_fail(fn, MPI_ERR_TYPE, NULL);
	return (size_t)count * (size_t)size;
}

MSGMPI_FN void msgmpi_check_rank(const char *fn, int rank, int any_ok)
{
	if (rank == MPI_PROC_NULL || (any_ok && rank == MPI_ANY_SOURCE))
		return;
	if (rank < 0 || rank >= msgmpi_g.n)
		msgmpi_fail(fn, MPI_ERR_RANK, NULL);
}

MSGMPI_FN void msgmpi_check_tag(const char *fn, int tag, int any_ok)
{
	if ((any_ok && tag == MPI_ANY_TAG) || (tag >= 0 && tag <= MPI_TAG_UB_VALUE))
		return;
	msgmpi_fail(fn, MPI_ERR_TAG, NULL);
}

/* ---- environment ----------------------------------------------------- */
MSGMPI_FN int MPI_Init(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (msgmpi_g.state != 0)
		msgmpi_fail("MPI_Init", MPI_ERR_OTHER, "called twice");
	msgmpi_check_msg("MPI_Init", msgInitialize());
	msgmpi_check_msg("MPI_Init", msgid(&msgmpi_g.id));
	msgmpi_check_msg("MPI_Init", msgn(&msgmpi_g.n));
	msgmpi_g.state = 1;
	return MPI_SUCCESS;
}

MSGMPI_FN int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	(void)required;
	*provided = MPI_THREAD_SINGLE; /* libmsg keeps processes single-threaded */
	return MPI_Init(argc, argv);
}

MSGMPI_FN int MPI_Initialized(int *flag)
{
	*flag = msgmpi_g.state != 0;
	return MPI_SUCCESS;
}

MSGMPI_FN int MPI_Finalized(int *flag)
{
	*flag = msgmpi_g.state == 2;
	return MPI_SUCCESS;
}

MSGMPI_FN int MPI_Finalize(void)
{
	if (msgmpi_g.state != 1)
		msgmpi_fail("MPI_Finalize", MPI_ERR_OTHER, "not initialised");
	while (msgmpi_g.stash) {
		struct msgmpi_stashed *s = msgmpi_g.stash;

		msgmpi_g.stash = s->next;
		free(s->data);
		free(s);
	}
	msgmpi_g.state = 2;
	msgmpi_check_msg("MPI_Finalize", msgFinalize());
	return MPI_SUCCESS;
}

MSGMPI_FN int MPI_Abort(MPI_Comm comm, int code)
{
	(void)comm;
	fprintf(stderr, "msg_mpi: MPI_Abort(%d) on rank %d\n", code, msgmpi_g.id);
	fflush(stdout);
	exit(code ? code : 1);
}

MSGMPI_FN int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
	msgmpi_check_comm("MPI_Comm_rank", comm);
	*rank = msgmpi_g.id;
	return MPI_SUCCESS;
}

MSGMPI_FN int MPI_Comm_size(MPI_Comm comm, int *size)
{
	msgmpi_check_comm("MPI_Comm_size", comm);
	*size = msgmpi_g.n;
	return MPI_SUCCESS;
}

/* Timing only: never let it steer what the program computes. */
MSGMPI_FN double MPI_Wtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

MSGMPI_FN double MPI_Wtick(void)
{
	return 1e-9;
}

/* The same in every replica (a host name would differ between hosts). */
MSGMPI_FN int MPI_Get_processor_name(char *name, int *len)
{
	snprintf(name, MPI_MAX_PROCESSOR_NAME, "msg-rank-%d", msgmpi_g.id);
	*len = (int)strlen(name);
	return MPI_SUCCESS;
}

MSGMPI_FN int MPI_Get_version(int *version, int *subversion)
{
	*version = MPI_VERSION;
	*subversion = MPI_SUBVERSION;
	return MPI_SUCCESS;
}

MSGMPI_FN int MPI_Type_size(MPI_Datatype t, int *size)
{
	*size = (int)msgmpi_bytes("MPI_Type_size", 1, t);
	return MPI_SUCCESS;
}

MSGMPI_FN int MPI_Get_count(const MPI_Status *st, MPI_Datatype t, int *count)
{
	size_t sz = msgmpi_bytes("MPI_Get_count", 1, t);

	*count = st->msgmpi_bytes % sz ? MPI_UNDEFINED : (int)(st->msgmpi_bytes / sz);
	return MPI_SUCCESS;
}

/* ---- point to point -------------------------------------------------- */
MSGMPI_FN int msgmpi_is_coll_tag(int tag)
{
	return tag > MPI_TAG_UB_VALUE;
}

MSGMPI_FN void msgmpi_set_status(MPI_Status *st, int src, int tag, size_t bytes)
{
	if (!st)
		return;
	st->MPI_SOURCE = src;
	st->MPI_TAG = tag;
	st->MPI_ERROR = MPI_SUCCESS;
	st->msgmpi_bytes = bytes;
}

/* Keep a collective message that a user ANY_TAG receive ran into. */
MSGMPI_FN void msgmpi_stash(int src, int tag, const void *data, size_t len)
{
	struct msgmpi_stashed *s = (struct msgmpi_stashed *)calloc(1, sizeof(*s));
	struct msgmpi_stashed **p = &msgmpi_g.stash;

	if (!s || !(s->data = malloc(len ? len : 1)))
		msgmpi_fail("MPI_Recv", MPI_ERR_INTERN, "out of memory");
	memcpy(s->data, data, len);
	s->src = src;
	s->tag = tag;
	s->len = len;
	while (*p)
		p = &(*p)->next;
	*p = s;
}

/* A user receive: collective traffic never reaches the user. */
MSGMPI_FN void msgmpi_recv_user(const char *fn, void *buf, size_t bytes, int src, int tag,
				MPI_Status *st)
{
	for (;;) {
		int from = -1, t = -1;
		size_t got = 0;
		int rc = msgrecvt(src, tag, buf, bytes, &from, &t, &got);

		if (rc == MSG_ETRUNC && msgmpi_is_coll_tag(t)) {
			void *tmp = malloc(got);

			if (!tmp)
				msgmpi_fail(fn, MPI_ERR_INTERN, "out of memory");
			msgmpi_check_msg(fn, msgrecvt(from, t, tmp, got, NULL, NULL, NULL));
			msgmpi_stash(from, t, tmp, got);
			free(tmp);
			continue;
		}
		msgmpi_check_msg(fn, rc);
		if (msgmpi_is_coll_tag(t)) {
			msgmpi_stash(from, t, buf, got);
			continue;
		}
		msgmpi_set_status(st, from, t, got);
		return;
	}
}

/* A collective receive: exact source and tag, set-aside copies first
 * (they were sent before anything still queued from that source). */
MSGMPI_FN void msgmpi_recv_coll(int src, int tag, void *buf, size_t bytes)
{
	struct msgmpi_stashed **p;
	size_t got = 0;

	for (p = &msgmpi_g.stash; *p; p = &(*p)->next) {
		struct msgmpi_stashed *s = *p;

		if (s->src != src || s->tag != tag)
			continue;
		if (s->len != bytes)
			msgmpi_fail("collective", MPI_ERR_TRUNCATE, "size differs between ranks");
		memcpy(buf, s->data, bytes);
		*p = s->next;
		free(s->data);
		free(s);
		return;
	}
	msgmpi_check_msg("collective", msgrecvt(src, tag, buf, bytes, NULL, NULL, &got));
	if (got != bytes)
		msgmpi_fail("collective", MPI_ERR_TRUNCATE, "size differs between ranks");
}

MSGMPI_FN int MPI_Send(const void *buf, int count, MPI_Datatype t, int dest, int tag,
		       MPI_Comm comm)
{
	size_t bytes = msgmpi_bytes("MPI_Send", count, t);

	msgmpi_check_comm("MPI_Send", comm);
	msgmpi_check_rank("MPI_Send", dest, 0);
	msgmpi_check_tag("MPI_Send", tag, 0);
	if (dest != MPI_PROC_NULL)
		msgmpi_check_msg("MPI_Send", msgsendt(dest, tag, buf, bytes));
	return MPI_SUCCESS;
}

MSGMPI_FN int MPI_Recv(void *buf, int count, MPI_Datatype t, int src, int tag,
		       MPI_Comm comm, MPI_Status *st)
{
	size_t bytes = msgmpi_bytes("MPI_Recv", count, t);

	msgmpi_check_comm("MPI_Recv", comm);
	msgmpi_check_rank("MPI_Recv", src, 1);
	msgmpi_check_tag("MPI_Recv", tag, 1);
	if (src == MPI_PROC_NULL)
		msgmpi_set_status(st, MPI_PROC_NULL, MPI_ANY_TAG, 0);
	else
		msgmpi_recv_user("MPI_Recv", buf, bytes, src, tag, st);
	return MPI_SUCCESS;
}

/* The send is eager, so sending first cannot deadlock. */
MSGMPI_FN int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest,
			   int stag, void *rbuf, int rcount, MPI_Datatype rtype, int src,
			   int rtag, MPI_Comm comm, MPI_Status *st)
{
	MPI_Send(sbuf, scount, stype, dest, stag, comm);
	return MPI_Recv(rbuf, rcount, rtype, src, rtag, comm, st);
}

MSGMPI_FN int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype t, int dest,
				   int stag, int src, int rtag, MPI_Comm comm,
				   MPI_Status *st)
{
	MPI_Send(buf, count, t, dest, stag, comm); /* buf is free again on return */
	return MPI_Recv(buf, count, t, src, rtag, comm, st);
}

MSGMPI_FN int MPI_Isend(const void *buf, int count, MPI_Datatype t, int dest, int tag,
			MPI_Comm comm, MPI_Request *req)
{
	MPI_Send(buf, count, t, dest, tag, comm);
	*req = (MPI_Request)(void *)&msgmpi_sent_request;
	return MPI_SUCCESS;
}

/* Deferred: the receive itself happens in MPI_Wait. */
MSGMPI_FN int MPI_Irecv(void *buf, int count, MPI_Datatype t, int src, int tag,
			MPI_Comm comm, MPI_Request *req)
{
	struct msgmpi_request *r;

	msgmpi_check_comm("MPI_Irecv", comm);
	msgmpi_check_rank("MPI_Irecv", src, 1);
	msgmpi_check_tag("MPI_Irecv", tag, 1);
	r = (struct msgmpi_request *)malloc(sizeof(*r));
	if (!r)
		msgmpi_fail("MPI_Irecv", MPI_ERR_INTERN, "out of memory");
	r->buf = buf;
	r->bytes = msgmpi_bytes("MPI_Irecv", count, t);
	r->src = src;
	r->tag = tag;
	*req = r;
	return MPI_SUCCESS;
}

MSGMPI_FN int MPI_Wait(MPI_Request *req, MPI_Status *st)
{
	struct msgmpi_request *r = *req;

	if (!r || r == (MPI_Request)(void *)&msgmpi_sent_request) {
		msgmpi_set_status(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
	} else if (r->src == MPI_PROC_NULL) {
		msgmpi_set_status(st, MPI_PROC_NULL, MPI_ANY_TAG, 0);
		free(r);
	} else {
		msgmpi_recv_user("MPI_Wait", r->buf, r->bytes, r->src, r->tag, st);
		free(r);
	}
	*req = MPI_REQUEST_NULL;
	return MPI_SUCCESS;
}

/* In array order; every send already completed, so no cycle can form. */
MSGMPI_FN int MPI_Waitall(int count, MPI_Request *reqs, MPI_Status *sts)
{
	int i;

	for (i = 0; i < count; i++)
		MPI_Wait(&reqs[i], sts ? &sts[i] : MPI_STATUS_IGNORE);
	return MPI_SUCCESS;
}

/* ---- reductions ------------------------------------------------------ */
#define MSGMPI_ARITH(T)                                                          \
	do {                                                                     \
		T *a = (T *)acc;                                                 \
		const T *b = (const T *)x;                                       \
		for (i = 0; i < count; i++) {                                    \
			switch (op) {                                            \
			case MPI_SUM: a[i] = (T)(a[i] + b[i]); break;            \
			case MPI_PROD: a[i] = (T)(a[i] * b[i]); break;           \
			case MPI_MAX: if (b[i] > a[i]) a[i] = b[i]; break;       \
			case MPI_MIN: if (b[i] < a[i]) a[i] = b[i]; break;       \
			case MPI_LAND: a[i] = (T)(a[i] && b[i]); break;          \
			case MPI_LOR: a[i] = (T)(a[i] || b[i]); break;           \
			default: return 0;                                       \
			}                                                        \
		}                                                                \
	} while (0)
#define MSGMPI_BITS(T)                                                           \
	do {                                                                     \
		T *a = (T *)acc;                                                 \
		const T *b = (const T *)x;                                       \
		for (i = 0; i < count; i++) {                                    \
			switch (op) {                                            \
			case MPI_BAND: a[i] &= b[i]; break;                      \
			case MPI_BOR: a[i] |= b[i]; break;                       \
			case MPI_BXOR: a[i] ^= b[i]; break;                      \
			default: goto arith;                                     \
			}                                                        \
		}                                                                \
		return 1;                                                        \
	} while (0)

/* acc[i] = acc[i] op x[i]; returns 0 if op does not apply to the type. */
MSGMPI_FN int msgmpi_combine(void *acc, const void *x, int count, MPI_Datatype t, MPI_Op op)
{
	int i, kind = t >> 8, size = t & 0xff;

	switch (kind * 16 + size) {
	case MSGMPI_K_SINT * 16 + 1: MSGMPI_BITS(int8_t);
	case MSGMPI_K_SINT * 16 + 2: MSGMPI_BITS(int16_t);
	case MSGMPI_K_SINT * 16 + 4: MSGMPI_BITS(int32_t);
	case MSGMPI_K_SINT * 16 + 8: MSGMPI_BITS(int64_t);
	case MSGMPI_K_UINT * 16 + 1: case MSGMPI_K_BYTE * 16 + 1: MSGMPI_BITS(uint8_t);
	case MSGMPI_K_UINT * 16 + 2: MSGMPI_BITS(uint16_t);
	case MSGMPI_K_UINT * 16 + 4: MSGMPI_BITS(uint32_t);
	case MSGMPI_K_UINT * 16 + 8: MSGMPI_BITS(uint64_t);
	default: break;
	}
arith:
	switch (kind * 16 + size) {
	case MSGMPI_K_SINT * 16 + 1: MSGMPI_ARITH(int8_t); break;
	case MSGMPI_K_SINT * 16 + 2: MSGMPI_ARITH(int16_t); break;
	case MSGMPI_K_SINT * 16 + 4: MSGMPI_ARITH(int32_t); break;
	case MSGMPI_K_SINT * 16 + 8: MSGMPI_ARITH(int64_t); break;
	case MSGMPI_K_UINT * 16 + 1: MSGMPI_ARITH(uint8_t); break;
	case MSGMPI_K_UINT * 16 + 2: MSGMPI_ARITH(uint16_t); break;
	case MSGMPI_K_UINT * 16 + 4: MSGMPI_ARITH(uint32_t); break;
	case MSGMPI_K_UINT * 16 + 8: MSGMPI_ARITH(uint64_t); break;
	case MSGMPI_K_FLOAT * 16 + 4: MSGMPI_ARITH(float); break;
	case MSGMPI_K_FLOAT * 16 + 8: MSGMPI_ARITH(double); break;
	default: return 0; /* MPI_BYTE has no arithmetic */
	}
	return 1;
}

/* ---- collectives (fixed order, reserved tags) ------------------------ */
MSGMPI_FN void msgmpi_check_root(const char *fn, MPI_Comm comm, int root)
{
	msgmpi_check_comm(fn, comm);
	if (root < 0 || root >= msgmpi_g.n)
		msgmpi_fail(fn, MPI_ERR_ROOT, NULL);
}

/* Binomial tree from root. */
MSGMPI_FN int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm)
{
	size_t bytes = msgmpi_bytes("MPI_Bcast", count, t);
	int n = msgmpi_g.n, id = msgmpi_g.id, rel, mask;

	msgmpi_check_root("MPI_Bcast", comm, root);
	rel = (id - root + n) % n;
	for (mask = 1; mask < n; mask <<= 1) {
		if (rel & mask) {
			msgmpi_recv_coll((id - mask + n) % n, MSGMPI_TAG_BCAST, buf, bytes);
			break;
		}
	}
	for (mask >>= 1; mask > 0; mask >>= 1)
		if (rel + mask < n)
			msgmpi_check_msg("MPI_Bcast",
					 msgsendt((id + mask) % n, MSGMPI_TAG_BCAST, buf, bytes));
	return MPI_SUCCESS;
}

/* Root folds contributions left to right in rank order: the same bits
 * whatever the arrival order. */
MSGMPI_FN int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t, MPI_Op op,
			 int root, MPI_Comm comm)
{
	size_t bytes = msgmpi_bytes("MPI_Reduce", count, t);
	const void *own = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
	unsigned char *acc, *x;
	int r;

	msgmpi_check_root("MPI_Reduce", comm, root);
	if (msgmpi_g.id != root) {
		msgmpi_check_msg("MPI_Reduce", msgsendt(root, MSGMPI_TAG_REDUCE, own, bytes));
		return MPI_SUCCESS;
	}
	acc = (unsigned char *)malloc(bytes ? bytes : 1);
	x = (unsigned char *)malloc(bytes ? bytes : 1);
	if (!acc || !x)
		msgmpi_fail("MPI_Reduce", MPI_ERR_INTERN, "out of memory");
	for (r = 0; r < msgmpi_g.n; r++) {
		const void *in = own;

		if (r != root) {
			msgmpi_recv_coll(r, MSGMPI_TAG_REDUCE, x, bytes);
			in = x;
		}
		if (r == 0)
			memcpy(acc, in, bytes);
		else if (!msgmpi_combine(acc, in, count, t, op))
			msgmpi_fail("MPI_Reduce", MPI_ERR_OP, "operation not defined on this type");
	}
	memcpy(rbuf, acc, bytes);
	free(acc);
	free(x);
	return MPI_SUCCESS;
}

MSGMPI_FN int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype t,
			    MPI_Op op, MPI_Comm comm)
{
	MPI_Reduce(sbuf, rbuf, count, t, op, 0, comm);
	return MPI_Bcast(rbuf, count, t, 0, comm);
}

MSGMPI_FN int MPI_Barrier(MPI_Comm comm)
{
	int r;
	char none = 0;

	msgmpi_check_comm("MPI_Barrier", comm);
	if (msgmpi_g.id != 0)
		msgmpi_check_msg("MPI_Barrier", msgsendt(0, MSGMPI_TAG_BARRIER, &none, 0));
	else
		for (r = 1; r < msgmpi_g.n; r++)
			msgmpi_recv_coll(r, MSGMPI_TAG_BARRIER, &none, 0);
	return MPI_Bcast(&none, 0, MPI_BYTE, 0, comm);
}

MSGMPI_FN int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			 int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	int r, id = msgmpi_g.id;

	msgmpi_check_root("MPI_Gather", comm, root);
	if (id != root) {
		msgmpi_check_msg("MPI_Gather",
				 msgsendt(root, MSGMPI_TAG_GATHER, sbuf,
					  msgmpi_bytes("MPI_Gather", scount, stype)));
		return MPI_SUCCESS;
	}
	for (r = 0; r < msgmpi_g.n; r++) {
		size_t rb = msgmpi_bytes("MPI_Gather", rcount, rtype);
		unsigned char *slot = (unsigned char *)rbuf + (size_t)r * rb;

		if (r != root)
			msgmpi_recv_coll(r, MSGMPI_TAG_GATHER, slot, rb);
		else if (sbuf != MPI_IN_PLACE)
			memcpy(slot, sbuf, rb);
	}
	return MPI_SUCCESS;
}

MSGMPI_FN int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			  int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	int r, id = msgmpi_g.id;

	msgmpi_check_root("MPI_Scatter", comm, root);
	if (id != root) {
		msgmpi_recv_coll(root, MSGMPI_TAG_SCATTER, rbuf,
				 msgmpi_bytes("MPI_Scatter", rcount, rtype));
		return MPI_SUCCESS;
	}
	for (r = 0; r < msgmpi_g.n; r++) {
		size_t sb = msgmpi_bytes("MPI_Scatter", scount, stype);
		const unsigned char *slot = (const unsigned char *)sbuf + (size_t)r * sb;

		if (r != root)
			msgmpi_check_msg("MPI_Scatter", msgsendt(r, MSGMPI_TAG_SCATTER, slot, sb));
		else if (rbuf != MPI_IN_PLACE)
			memcpy(rbuf, slot, sb);
	}
	return MPI_SUCCESS;
}

MSGMPI_FN int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			    int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	size_t rb = msgmpi_bytes("MPI_Allgather", rcount, rtype);

	msgmpi_check_comm("MPI_Allgather", comm);
	if (sbuf == MPI_IN_PLACE) {
		/* Own block already sits in rbuf; gather it from there. */
		sbuf = (unsigned char *)rbuf + (size_t)msgmpi_g.id * rb;
		scount = rcount;
		stype = rtype;
		if (msgmpi_g.id == 0)
			sbuf = MPI_IN_PLACE;
	}
	MPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, 0, comm);
	return MPI_Bcast(rbuf, rcount * msgmpi_g.n, rtype, 0, comm);
}

#ifdef __cplusplus
}
#endif

#endif /* MSG_MPI_H */
