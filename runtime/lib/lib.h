/* libmsg's state: one per process. No threads: every call blocks on the
 * socket to the local msgd (fd 3, made by msgd at launch). The per-channel
 * send counters live here, in the process's own memory, so a checkpoint of
 * the process carries them. */
#ifndef MSG_LIB_H
#define MSG_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/frame.h"

struct msg_lib {
	bool init, finalized;
	int fd;
	uint32_t n, id, r, rep, flags;
	uint64_t *next_seq;   /* [n]: last sequence number sent to each rank */
	int passed_fd;        /* a descriptor msgd passed (image socket), or -1 */
	uint64_t restores;    /* how often this process was restored from an image */
	bool snapshot_pending; /* a live copy's writer still to reap */

	/* The same-host path (fast.c, docs/datapath.md). The mapping is a
	 * runtime resource: unmapped before any capture, never in an image. */
	void *shm;            /* the job's segment, or NULL: every send via msgd */
	size_t shm_len;
	/* its geometry, read once at the attach: the hot path does not read
	 * the segment's header line */
	uint64_t shm_cap;     /* data bytes per ring */
	size_t shm_stride;    /* bytes from one ring to the next */
	uint8_t *shm_rings;   /* ring (0, 0) */
	uint64_t shm_stamp;   /* the last arrival stamp we gave a record */
	bool rx_detached;     /* receives from the stash, then msgd (no rings) */
	bool shm_mixed;       /* the job also has ranks on other hosts: direct_recv
			       * receives, from rings, streams and msgd at once */
	int bell_fd;          /* shm_mixed: the wake socket a poll(2) wait watches, or -1 */
	struct stash_ent *stash; /* ring records taken over at the detach */
	size_t nstash, stash_cap;
	uint64_t ring_sends, ring_recvs; /* messages that went through rings */

	/* The direct path across hosts (direct*.c, docs/datapath.md §6): one
	 * TCP stream per ordered pair, set up by the daemons. The descriptors
	 * are runtime resources: every stream is left before a capture. */
	struct dpeer *dp;     /* [n], or NULL: the job has no direct streams */
	bool direct_off;      /* left (or restored): no stream ever again */
	bool direct_leave_req; /* msgd asked us to leave (a capture waits) */
	uint64_t direct_sends, direct_recvs; /* messages that went through streams */
	uint64_t direct_in_place;    /* ...of those, finished in place after a spinning look */
	uint64_t direct_daemon_recs, direct_pulled;
	uint64_t stash_next;  /* names stash entries (arrival of direct ones) */
};

/* A ring record kept in the process's own memory (so an image carries it).
 * The direct path keeps its records (kind DREC_DATA / DREC_DAEMON) and the
 * messages it pulled from msgd ahead of them (DREC_PULLED) in the same form. */
struct stash_ent {
	uint32_t src, kind;   /* kind: SHM_REC_DATA or SHM_REC_DAEMON, or DREC_* */
	int32_t tag;
	uint64_t size, arrival;
	void *data;           /* DATA: the message (malloc) */
};

/* A receive to be started over from the top (a capture moved the process,
 * or the rings were left meanwhile). */
#define LIB_AGAIN 1

extern struct msg_lib msg_lib;

/* io.c: whole-frame blocking I/O on the daemon socket */
int lib_write_frame(const struct frame *f, const void *payload, uint64_t len);
/* an L_SEND, maybe held back until the next write or read (r > 1; key: its
 * call site, destination and tag, hashed); lib_flush writes what is held */
int lib_queue_frame(const struct frame *f, const void *payload, uint64_t len, uint32_t key);
int lib_flush(void);
extern uint64_t lib_held_sends, lib_queued_sends;
int lib_read_frame(struct frame *f);
int lib_read_payload(void *buf, uint64_t len);
/* ckpt.c: msgd asked for a capture at this safe point (inside msgrecv).
 * Returns MSG_OK when the caller should re-send its receive (restored
 * here as a new process) or 1 when it should just keep waiting. */
int lib_capture(uint8_t mode, uint8_t flags);
/* msgd restored us from an image msgmig.ko took from outside (docs/kmod.md):
 * say hello again; MSG_OK when the caller should re-send its receive. */
int lib_resumed(void);
void lib_reap_snapshot(void);
/* A copy's pre-copy spread over receives (ckpt.c): more pages while a
 * receive waits (wait: until msgd has a frame), or dropped (the process
 * ends). No-ops without one. */
void lib_precopy_progress(bool wait);
void lib_precopy_drop(void);

/* recv.c / send.c: the daemon path. daemon_recv may return LIB_AGAIN. */
int lib_daemon_recv(int src, int tag, void *buf, size_t size, int *from, int *tag_out,
		    size_t *recvd);
int lib_daemon_send(int dest, int tag, const void *buf, size_t size, uint64_t site);
/* a frame msgd sent while no receive waited there: MSG_OK, LIB_AGAIN or an error */
int lib_daemon_news(const struct frame *f);

/* fast.c: the same-host path. fast_attach takes the segment msgd passed
 * (fd); fast_send returns 1 when the message must go through msgd;
 * fast_recv may return LIB_AGAIN. fast_detach(true) before a capture. */
int fast_attach(int fd);
int fast_send(int dest, int tag, const void *buf, size_t size, uint64_t site);
int fast_recv(int src, int tag, void *buf, size_t size, int *from, int *tag_out,
	      size_t *recvd);
void fast_detach(bool all);
/* room in the stash for one more entry: 0, or -1 out of memory */
int stash_reserve(void);
/* A full ring or stream (fast.c, direct.c): wait SPACE_WAIT_NS for room,
 * then via msgd when the receiver may be waiting on us (a cycle of full
 * writers must not deadlock), else up to SPACE_WAIT_MAX_NS: 2 ms was
 * shorter than a reader's time off the CPU on a crowded host, and each
 * large message routed through msgd slowed the reader further.
 * space_wait_fixed (MSG_TEST_SPACE_WAIT_FIXED, read at msgInitialize):
 * 2 ms in all, as before, the bench's A/B switch. */
#define SPACE_WAIT_NS 2000000ull
#define SPACE_WAIT_MAX_NS 20000000ull
extern bool space_wait_fixed;
static inline bool fast_active(void)
{
	return msg_lib.shm || msg_lib.rx_detached;
}

/* fast.c, for a job that spans hosts (docs/datapath.md §8): direct_recv
 * receives from the rings of the ranks on this host (the segment's
 * members) along with its streams and msgd. */
#define FAST_NONE 4 /* fast_take_from: no matching record */
bool fast_rings_live(void);            /* mapped, receiving side not left */
bool fast_ring_peer(uint32_t s);       /* live, and s is a member */
int fast_take_from(uint32_t s, int tag, void *buf, size_t size, int *from, int *tag_out,
		   size_t *recvd);
bool fast_ring_pending(uint32_t s, int tag); /* s's ring holds a match */
bool fast_sender_left(void);           /* a member closed its ring into us */
bool fast_detach_requested(void);
void fast_test_tick(void);             /* MSG_TEST_SHM_DETACH */
/* Waiting in poll(2) with the rings: the bell's value (read before looking
 * at the rings), arm (false: it rang since, do not sleep), disarm. */
uint32_t fast_bell(void);
bool fast_bell_arm(uint32_t seen);
void fast_bell_disarm(void);

/* direct.c / direct_recv.c: the direct path across hosts. direct_send
 * returns 1 when the message must go through msgd; direct_recv may return
 * LIB_AGAIN; direct_frame takes an L_DIRECT from msgd (io.c calls it);
 * direct_leave before a capture (discard: at msgFinalize). */
bool direct_enabled(void);
int direct_send(int dest, int tag, const void *buf, size_t size, uint64_t site);
int direct_recv(int src, int tag, void *buf, size_t size, int *from, int *tag_out,
		size_t *recvd);
void direct_frame(const struct frame *f);
void direct_leave(bool discard);
void direct_report(void);

/* io.c: a frame as it comes, L_DIRECT included (already taken by
 * direct_frame); lib_read_frame skips those. */
int lib_read_frame_any(struct frame *f);

/* spin.c: how long a waiter may spin before it blocks (0 on a crowded
 * host), and the monotonic clock in ns. */
uint64_t lib_spin_ns(void);
uint64_t lib_now_ns(void);

/* site.c: msgsend's return address as carried in L_SEND.site (relative to
 * the executable when inside it); lib_site_init once at msgInitialize. */
void lib_site_init(void);
uint64_t lib_site(const void *ret);

/* test_delay.c: MSG_TEST_DELAY (tests only), read at msgInitialize;
 * lib_test_delay('s' or 'r') at the top of every msgsend / msgrecv. */
void lib_test_delay_init(void);
extern bool lib_test_delay_armed;
void lib_test_delay_slow(char op);
static inline void lib_test_delay(char op)
{
	if (__builtin_expect(lib_test_delay_armed, 0))
		lib_test_delay_slow(op);
}

/* Injected stall: the process stays alive and makes no progress. */
void lib_stall(void) __attribute__((noreturn));

#endif
