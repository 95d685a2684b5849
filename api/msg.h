/* msg: resilient message passing — the public C API.
 *
 * Every logical process ("rank", 0..n-1) runs as r identical replicas on
 * different hosts. The calls below are the same in every replica and mean
 * the same thing as in a non-replicated run: replication, comparison,
 * failure detection, migration and regeneration are invisible here.
 *
 * All calls block; none polls. Every call returns MSG_OK (0) or a negative
 * MSG_E* code; msgstrerror() explains a code. Messages between one pair of
 * ranks are delivered in the order they were sent (non-overtaking).
 */
#ifndef MSG_H
#define MSG_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MSG_API_VERSION 1

/* Wildcards for msgrecv / msgrecvt. */
#define MSG_ANYSRC (-1)
#define MSG_ANYTAG (-1)

/* The tag used by the untagged calls. Tags are >= 0. */
#define MSG_DEFAULT_TAG 0
#define MSG_TAG_MAX 0x3fffffff

enum msg_status {
	MSG_OK = 0,
	MSG_EINIT = -1,     /* called before msgInitialize or after msgFinalize */
	MSG_ERANK = -2,     /* destination or source rank out of range */
	MSG_ETRUNC = -3,    /* message longer than the buffer; it stays queued */
	MSG_EINVAL = -4,    /* bad argument (NULL pointer, negative size, bad tag) */
	MSG_ENOMEM = -5,    /* out of memory */
	MSG_EDAEMON = -6,   /* lost the connection to the local msgd */
	MSG_ENOTLAUNCHED = -7, /* not started by msgrun (no msgd to talk to) */
	MSG_EDEAD = -8,     /* the peer rank has no live replica left */
	MSG_EPROTO = -9,    /* protocol violation from the daemon */
	MSG_EALREADY = -10, /* msgInitialize called twice */
	MSG_ESIZE = -11,    /* message larger than the runtime's limit */
	MSG_EFENCED = -12,  /* this replica was fenced (the runtime ends it) */
};

/* Internal: msgd tells libmsg to stall (fault injection). Never returned. */
#define MSG_EINTERNAL_STALL (-100)
#define MSG_EINTERNAL_AGAIN (-101) /* a cancelled receive (never returned to the application) */

/* Start / stop. msgInitialize connects to the local msgd; msgFinalize flushes
 * and disconnects. A process calls each once. */
int msgInitialize(void);
int msgFinalize(void);

/* n: number of logical processes; id: this process's rank (same in every
 * replica of the rank). */
int msgn(int *n);
int msgid(int *id);

/* Blocking send: returns once buf may be reused. */
int msgsend(int dest, const void *buf, size_t size);

/* Blocking receive from src (or MSG_ANYSRC). On success *from is the source
 * rank and *recvd the number of bytes. If the next matching message is longer
 * than size, returns MSG_ETRUNC with *from and *recvd describing it; the
 * message stays queued and a later call with a large enough buffer gets it.
 * from and recvd may be NULL. */
int msgrecv(int src, void *buf, size_t size, int *from, size_t *recvd);

/* Tagged variants, for MPI codes (api/msg_mpi.h). tag >= 0 on send;
 * MSG_ANYTAG allowed on receive. *tag_out may be NULL. Untagged calls use
 * MSG_DEFAULT_TAG when sending and MSG_ANYTAG when receiving. */
int msgsendt(int dest, int tag, const void *buf, size_t size);
int msgrecvt(int src, int tag, void *buf, size_t size, int *from,
	     int *tag_out, size_t *recvd);

/* Human-readable text for a status code (never NULL). */
const char *msgstrerror(int status);

#ifdef __cplusplus
}
#endif

#endif /* MSG_H */
