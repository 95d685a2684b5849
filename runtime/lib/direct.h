/* The direct path's state shared by direct.c (set-up, sending, leaving)
 * and direct_recv.c (reading streams, receiving). docs/datapath.md §6. */
#ifndef MSG_LIB_DIRECT_H
#define MSG_LIB_DIRECT_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/lib.h"

/* A record on a stream (s -> d), little-endian like every frame: START(m0)
 * once, first; then DATA (the message follows) and DAEMON (the message went
 * through msgd with L_TAG_DIRECT; aux is its sequence number). The reverse
 * direction carries at most one byte, DREC_LEAVE_BYTE: d leaves. */
enum { DREC_START = 1, DREC_DATA = 2, DREC_DAEMON = 3, DREC_PULLED = 4 };
#define DREC_HDR 24
#define DREC_LEAVE_BYTE 'L'

enum dout { OUT_NONE = 0, OUT_REQ, OUT_OPEN, OUT_NEVER };

struct dpeer {
	/* we send to this rank */
	uint8_t out;          /* enum dout */
	int out_fd;           /* OUT_OPEN: the stream, else -1 */
	uint64_t sndbuf;      /* what the socket takes (SO_SNDBUF / 2) */
	uint64_t room;        /* a lower bound of the room in it (direct.c) */
	uint64_t rev_checked; /* when its reverse direction was last looked at */
	uint64_t retry_seq;   /* refused for now: ask again after this send */
	uint32_t retries;
	/* we receive from this rank */
	int in_fd;            /* -1: none (or read to its end and closed) */
	bool started;         /* its START came: m0 is known */
	uint64_t m0;          /* its messages through msgd before the stream */
	uint64_t got_pre;     /* ...of those, delivered to us before START came */
	uint64_t pre_left;    /* ...still at msgd: to pull before its records */
	uint8_t *rbuf;        /* read-ahead: record headers and small payloads */
	uint32_t rlen, roff;
	bool big;             /* the record at roff is a large DATA, its payload
			       * partly in rbuf, the rest still in the socket: a
			       * receive for it reads the rest straight into its
			       * buffer (straight_rest), a pump first completes it
			       * into pay */
	uint8_t *pay;         /* a large payload read straight into its place */
	int32_t pay_tag;
	uint64_t pay_len, pay_off;
	struct stash_ent *q;  /* records read, not yet consumed, in stream order */
	size_t nq, qcap;
};

/* Test switches (MSG_TEST_DIRECT_*), read once. */
struct direct_test {
	long leave_after;     /* rank's receives before it leaves; -1 never */
	bool no_drain;        /* negative control: a leaver neither reads its
			       * streams to the end nor keeps what it read */
	long recvs;
	int sndbuf;           /* small socket buffers (DAEMON records) */
	uint64_t after;       /* ask for a stream after this many sends to a peer */
	bool sync;            /* a request waits for its answer */
	int leave_pause_ms;   /* a leave msgd asked for lasts this long more, so
			       * a capture that crossed it is read after it */
	int start_delay_ms;   /* START is written this long after the stream came,
			       * so its reader waits on the stream before it */
	bool room_spin;       /* A/B: wait_room polls POLLOUT again at once (as before) */
	bool start_no_news;   /* negative control: reading START wakes no wait */
	bool no_keep_big;     /* A/B: a spinning look copies a large payload's
			       * first part into a malloc'd payload (as before) */
};
extern struct direct_test direct_test;

/* direct.c */
struct dpeer *dpeer(uint32_t r);
bool direct_in_open(uint32_t s);
void direct_check_reverse(uint32_t d, bool now);
/* Waits watch the reverse of every outgoing stream (LEAVE) and, with_in,
 * every incoming stream: direct_pollset fills direct_pfd/direct_who from 0
 * and leaves room for 2 more; direct_poll_events serves what poll found. */
#define DIRECT_WHO_IN 0x80000000u
struct pollfd;
extern struct pollfd *direct_pfd;
extern uint32_t *direct_who;
int direct_pollset(bool with_in);
void direct_poll_events(int n);

/* recv.c: one answer of msgd to our receive in flight (docs/datapath.md
 * §6: a direct wait reads msgd's frames one at a time between polls). */
struct answer {
	void *buf;            /* where a delivered message goes, or NULL: malloc */
	size_t size;
	int ret;              /* when answered: MSG_OK, MSG_ETRUNC, an error */
	uint32_t from;
	int32_t tag;
	uint64_t seq, got;
};
enum { STEP_ANSWERED = 0, STEP_CONT = 1, STEP_AGAIN = 2 };
int lib_daemon_step(struct answer *a);
int lib_daemon_ask(int src, int tag, uint64_t bufsize, bool cancel);
extern uint32_t direct_events; /* streams news (an incoming stream, LEAVE) */

/* direct_recv.c */
int direct_pump(uint32_t s);          /* non-blocking; 1 when it has ended */
void direct_pump_all(void);
int stash_add(uint32_t src, uint32_t kind, int32_t tag, uint64_t size, void *data, size_t at);
size_t stash_first_record_of(uint32_t s);
void direct_queue_to_stash(uint32_t s);
void direct_close_in(uint32_t s);

#endif
