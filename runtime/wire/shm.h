/* The same-host data path (docs/datapath.md): the layout of a job's shared
 * segment and the ring operations both sides use. msgd creates the segment
 * (a memfd, no name: nothing to leak) for a job all of whose processes run
 * on its host, maps it and passes it to each process with L_WELCOME;
 * libmsg maps it and sends to a local process by writing into the ring of
 * that pair, without the daemon.
 *
 *   header | proc[n] | ring[n*n]   ring (src,dst) at index src*n+dst
 *
 * A ring has one producer (src's libmsg) and one consumer (dst's libmsg).
 * Its head word holds the producer's byte position and two close bits; the
 * producer publishes a record by compare-and-swap on it, so a close by
 * either side is atomic with respect to every publication: a record either
 * is before the final head (the consumer sees it) or its publication fails
 * (the producer sends it through msgd instead). Records are whole (never
 * wrap), 64-byte aligned; the consumer may consume them out of order (tags)
 * and the tail advances over the consumed prefix. */
#ifndef MSG_WIRE_SHM_H
#define MSG_WIRE_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHM_MAGIC 0x6d736753u /* "Sgsm" */
#define SHM_VERSION 3u
#define SHM_ALIGN 64u
#define SHM_REC_HDR 32u
#define SHM_HEAD_RX_CLOSED (1ull << 63) /* the consumer left: send through msgd */
#define SHM_HEAD_TX_CLOSED (1ull << 62) /* the producer left: the rest is at msgd */
#define SHM_HEAD_CLOSED (SHM_HEAD_RX_CLOSED | SHM_HEAD_TX_CLOSED)
#define SHM_HEAD_POS (SHM_HEAD_TX_CLOSED - 1)

struct shm_hdr {
	uint32_t magic, version, n, pad;
	uint64_t ring_bytes;  /* data bytes per ring, a multiple of SHM_ALIGN */
	uint64_t size;        /* of the whole segment */
	uint64_t unused;      /* was a shared arrival counter (version 2) */
	uint8_t pad2[SHM_ALIGN - 32];
};

/* One per process (rank), in its own cache line. */
struct shm_proc {
	uint32_t bell;        /* futex word: bumped by anyone with news for it */
	uint32_t sleeping;    /* it waits in the kernel: a bump must wake it */
	uint32_t detach_req;  /* msgd wants it on the daemon path (capture, stall) */
	uint32_t member;      /* msgd: it runs on the segment's host (set once, at creation) */
	uint64_t wake;        /* names its wake socket (SHM_SLEEP_POLL), 0: none */
	uint8_t pad2[SHM_ALIGN - 24];
};

/* shm_proc.sleeping: how a waiter sleeps. A process of a job that spans
 * hosts waits on its sockets (direct streams, msgd) and its rings at once:
 * it sleeps in poll(2) and a bump must also send a byte to its wake socket
 * (an abstract unix datagram socket "msg-wake-<wake as 16 hex digits>"). */
enum { SHM_SLEEP_NONE = 0, SHM_SLEEP_FUTEX = 1, SHM_SLEEP_POLL = 2 };

struct shm_ring {
	uint64_t head;        /* producer: byte position | close bits */
	uint64_t tail_seen;   /* producer only: the tail when it last read it */
	uint8_t pad1[SHM_ALIGN - 16];
	uint64_t tail;        /* consumer: bytes consumed (every record before it) */
	uint32_t space_wait;  /* the producer waits for room: wake it on progress */
	uint8_t pad2[SHM_ALIGN - 12];
	/* ring_bytes of records follow */
};

enum shm_rec_kind {
	SHM_REC_DATA = 1,   /* the message itself follows the header */
	SHM_REC_DAEMON = 2, /* the message went through msgd: ask it for it here */
	SHM_REC_PAD = 3,    /* the end of the ring, skipped */
};

struct shm_rec {
	uint32_t kind;
	uint32_t consumed;    /* written by the consumer only */
	int32_t tag;
	uint32_t pad;
	uint64_t size;        /* message bytes */
	uint64_t arrival;     /* the producer's stamp (libmsg: strictly increasing
			       * per producer, CLOCK_MONOTONIC ns across them) */
};

/* Data bytes per ring for a job of n local processes: large rings for a few
 * processes (1 MiB messages go through them whole), small ones for many. */
uint64_t shm_ring_bytes_for(uint32_t n);
size_t shm_size(uint32_t n, uint64_t ring_bytes);
void shm_init(void *base, uint32_t n, uint64_t ring_bytes, size_t size);
/* 0 when base (mapped, len bytes) is a segment of this version for n. */
int shm_check(const void *base, size_t len, uint32_t n);

static inline struct shm_proc *shm_proc(void *base, uint32_t g)
{
	return (struct shm_proc *)((char *)base + sizeof(struct shm_hdr)) + g;
}

static inline struct shm_ring *shm_ring(void *base, uint32_t src, uint32_t dst)
{
	const struct shm_hdr *h = base;
	size_t stride = sizeof(struct shm_ring) + h->ring_bytes;

	return (struct shm_ring *)((char *)base + sizeof(struct shm_hdr) +
				   (size_t)h->n * sizeof(struct shm_proc) +
				   ((size_t)src * h->n + dst) * stride);
}

static inline uint8_t *shm_ring_data(struct shm_ring *r)
{
	return (uint8_t *)(r + 1);
}

static inline uint64_t shm_rec_len(uint64_t size)
{
	return (SHM_REC_HDR + size + SHM_ALIGN - 1) & ~(uint64_t)(SHM_ALIGN - 1);
}

/* Bytes a record takes in its ring: a DAEMON record is its header alone
 * (size is the size of the message at msgd). */
static inline uint64_t shm_rec_span(uint32_t kind, uint64_t size)
{
	return kind == SHM_REC_DAEMON ? SHM_ALIGN : shm_rec_len(size);
}

/* Wake p: bump its bell, and enter the kernel only if it sleeps there. */
void shm_wake(struct shm_proc *p);
/* The socket shm_wake sends wake bytes from (opened at the first one):
 * closed by libmsg before a capture (no socket in an image). */
void shm_wake_close(void);
/* The abstract address of wake socket w; returns its length. */
struct sockaddr_un;
unsigned shm_wake_addr(struct sockaddr_un *a, uint64_t w);
/* Wait until p's bell differs from seen (or timeout_ns passes; 0 = none).
 * spin_ns > 0: poll that long first, and return as soon as *head (when
 * not NULL: the ring a receive waits on) differs from head_seen too. */
void shm_wait(struct shm_proc *p, uint32_t seen, uint64_t spin_ns, uint64_t timeout_ns,
	      const uint64_t *head, uint64_t head_seen);

/* Producer: publish a record stamped arrival in ring r (data bytes cap).
 * Returns 0 when published, 1 when the ring is closed, 2 when there is no
 * room. */
int shm_put(struct shm_ring *r, uint64_t cap, uint32_t kind, int32_t tag, const void *payload,
	    uint64_t size, uint64_t arrival);
/* Consumer: advance the tail over consumed and padding records. True when
 * it moved. */
bool shm_advance(struct shm_ring *r, uint64_t cap);
/* Consumer: rec (of ring r) is consumed. The first record after the tail
 * (the usual case: receives in send order) is passed by the tail at once,
 * without writing its consumed flag; any other is marked. True when the
 * tail moved. */
bool shm_consume(struct shm_ring *r, uint64_t cap, struct shm_rec *rec);

#endif
