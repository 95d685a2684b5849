/* The same-host data path (docs/datapath.md). In a job whose processes all
 * run on one host (r = 1; msgrun --no-shm turns it off), msgd passes each process the job's
 * shared segment: a send to a local process is written into the ring of
 * that pair and its receiver takes it from there, with no daemon between
 * them. Everything this path cannot do goes through msgd as before:
 *
 *  - a message too large for the ring, or one that finds it full, goes
 *    through msgd and leaves a DAEMON record at its place in the ring: the
 *    receiver asks msgd for it when it comes to it (per-pair order kept);
 *  - when the ring has no room even for that record, the sender closes its
 *    side (TX_CLOSED): everything after the ring is at msgd;
 *  - a receiver that sees a sender leave, or that msgd asks to (a capture,
 *    an injected stall), closes its rings (RX_CLOSED) and takes their
 *    unconsumed records into its own memory (the stash); from then on it
 *    receives from the stash first, then from msgd. Before a capture the
 *    process also closes its sending side and unmaps the segment, so the
 *    image carries the stash and no mapping.
 *
 * Waiting is adaptive (spin.c): spin (MSG_SPIN_US, 50 µs) only while the
 * host's runnable tasks do not outnumber its cores, otherwise sleep on the
 * futex at once. No threads. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/lib.h"
#include "msg.h"
#include "wire/shm.h"

/* A full ring (SPACE_WAIT_NS, lib.h): the short bound when the receiver
 * itself waits for room in one of its rings (two ranks sending to each
 * other must not deadlock); otherwise it will consume without us. With the
 * short bound alone most 1 MiB messages went round at load 30 (0.5 GB/s). */

static uint64_t now_ns(void)
{
	return lib_now_ns();
}

static uint64_t spin_ns(void)
{
	return lib_spin_ns();
}

/* Test only: MSG_TEST_SHM_DETACH=G:N makes rank G leave its rings after its
 * N-th receive exactly as before a capture (messages still queued in them
 * move to the stash); MSG_TEST_SHM_NO_STASH=1 drops them instead (the
 * negative control: exactly-once must then fail). */
static struct {
	long detach_after;   /* receives; -1: never */
	bool no_stash;
	long recvs;
} test_sw = { .detach_after = -1 };

static void test_switches(void)
{
	const char *d = getenv("MSG_TEST_SHM_DETACH"), *colon;

	if (d && (colon = strchr(d, ':')) && strtoul(d, NULL, 10) == msg_lib.id)
		test_sw.detach_after = strtol(colon + 1, NULL, 10);
	test_sw.no_stash = getenv("MSG_TEST_SHM_NO_STASH") != NULL;
}

/* A job that spans hosts: our wake socket, named in our slot, so that a
 * bump reaches us while we sleep in poll(2) on our streams and msgd. */
static int bell_open(void)
{
	struct shm_proc *me = shm_proc(msg_lib.shm, msg_lib.id);
	struct sockaddr_un a;
	uint64_t w = 0;
	unsigned len;
	int fd;

	if (!me->member) {
		errno = EINVAL;
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	for (int i = 0; i < 8; i++) { /* a name taken: draw another */
		if (getrandom(&w, sizeof(w), 0) != sizeof(w) || !w)
			continue;
		len = shm_wake_addr(&a, w);
		if (!bind(fd, (struct sockaddr *)&a, len)) {
			msg_lib.bell_fd = fd;
			__atomic_store_n(&me->wake, w, __ATOMIC_RELEASE);
			return 0;
		}
	}
	close(fd);
	return -1;
}

static void bell_close(void)
{
	if (msg_lib.shm)
		__atomic_store_n(&shm_proc(msg_lib.shm, msg_lib.id)->wake, 0, __ATOMIC_RELEASE);
	if (msg_lib.bell_fd >= 0)
		close(msg_lib.bell_fd);
	msg_lib.bell_fd = -1;
	shm_wake_close();
}

int fast_attach(int fd)
{
	struct stat st;
	void *p;

	if (fstat(fd, &st) || st.st_size <= 0) {
		close(fd);
		return MSG_EPROTO;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return MSG_ENOMEM;
	if (shm_check(p, (size_t)st.st_size, msg_lib.n)) {
		munmap(p, (size_t)st.st_size);
		return MSG_EPROTO;
	}
	msg_lib.shm = p;
	msg_lib.shm_len = (size_t)st.st_size;
	msg_lib.shm_cap = ((struct shm_hdr *)p)->ring_bytes;
	msg_lib.shm_rings = (uint8_t *)shm_ring(p, 0, 0);
	msg_lib.shm_stride = sizeof(struct shm_ring) + msg_lib.shm_cap;
	test_switches();
	for (uint32_t g = 0; g < msg_lib.n; g++)
		if (!shm_proc(p, g)->member)
			msg_lib.shm_mixed = true;
	if (msg_lib.shm_mixed && bell_open()) {
		/* no way to wake us in poll(2): leave the rings at once (what
		 * was sent into them already goes to the stash) */
		fprintf(stderr, "msg: no wake socket (%s): same-host messages go through msgd\n",
			strerror(errno));
		fast_detach(true);
	}
	return MSG_OK;
}

static uint64_t ring_cap(void)
{
	return msg_lib.shm_cap;
}

/* shm_ring without reading the segment's header */
static struct shm_ring *ring(uint32_t src, uint32_t dst)
{
	return (struct shm_ring *)(msg_lib.shm_rings +
				   ((size_t)src * msg_lib.n + dst) * msg_lib.shm_stride);
}

/* A record's arrival stamp: the monotonic clock (a vDSO read, no shared
 * counter whose cache line would travel between the senders with every
 * message), strictly increasing per producer so that (src, stamp) names a
 * record. MSG_ANYSRC takes the smallest: the oldest, as far as the clock
 * tells (ties: the lowest rank). */
static uint64_t stamp(void)
{
	uint64_t t = lib_now_ns();

	if (t <= msg_lib.shm_stamp)
		t = msg_lib.shm_stamp + 1;
	return msg_lib.shm_stamp = t;
}

static struct shm_rec *rec_at(struct shm_ring *r, uint64_t pos)
{
	return (struct shm_rec *)(shm_ring_data(r) + pos % ring_cap());
}

/* --- sending ----------------------------------------------------------- */

/* Wait for room in ring r (bounded): true if there may be some now. */
static bool wait_room(struct shm_ring *r, uint64_t deadline)
{
	struct shm_proc *me = shm_proc(msg_lib.shm, msg_lib.id);
	uint32_t seen = __atomic_load_n(&me->bell, __ATOMIC_ACQUIRE);
	uint64_t t = now_ns(), tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);

	if (t >= deadline)
		return false;
	__atomic_store_n(&r->space_wait, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->tail, __ATOMIC_SEQ_CST) == tail &&
	    !(__atomic_load_n(&r->head, __ATOMIC_ACQUIRE) & SHM_HEAD_CLOSED))
		shm_wait(me, seen, spin_ns(), deadline - t, NULL, 0);
	return true;
}

/* Rank d waits for room in one of its rings (a stale flag of a wait that
 * went round through msgd counts too: the short bound then, as before). */
static bool waits_for_room(uint32_t d)
{
	for (uint32_t s = 0; s < msg_lib.n; s++)
		if (__atomic_load_n(&ring(d, s)->space_wait, __ATOMIC_ACQUIRE))
			return true;
	return false;
}

int fast_send(int dest, int tag, const void *buf, size_t size, uint64_t site)
{
	void *base = msg_lib.shm;
	struct shm_ring *r = ring(msg_lib.id, (uint32_t)dest);
	uint64_t deadline = 0, give_up = 0;
	int ret;

	if (!shm_proc(base, (uint32_t)dest)->member ||
	    (__atomic_load_n(&r->head, __ATOMIC_ACQUIRE) & SHM_HEAD_CLOSED))
		return 1; /* on another host (direct.c), or its ring is closed */
	if (shm_rec_len(size) <= ring_cap() / 2) {
		for (;;) {
			ret = shm_put(r, ring_cap(), SHM_REC_DATA, tag, buf, size, stamp());
			if (ret == 0) {
				shm_wake(shm_proc(base, (uint32_t)dest));
				msg_lib.ring_sends++;
				return MSG_OK;
			}
			if (ret == 1)
				return 1; /* closed meanwhile: through msgd */
			if ((uint32_t)dest == msg_lib.id)
				break; /* nobody else makes room in our own ring */
			if (!deadline) {
				deadline = now_ns() + SPACE_WAIT_NS;
				give_up = deadline - SPACE_WAIT_NS + SPACE_WAIT_MAX_NS;
			}
			if (!wait_room(r, deadline)) {
				uint64_t t = now_ns();

				if (space_wait_fixed || t >= give_up || waits_for_room((uint32_t)dest))
					break;
				deadline = t + SPACE_WAIT_NS < give_up ? t + SPACE_WAIT_NS : give_up;
			}
		}
	}
	/* through msgd, and a record at its place in the ring. The record
	 * first: only its receive may take the message at msgd (L_TAG_DIRECT,
	 * as for a stream's DAEMON record), so a receive at msgd for any source
	 * (a job across hosts) cannot take it ahead of the ring's earlier
	 * records; a receiver that finds the record early waits at msgd. */
	ret = shm_put(r, ring_cap(), SHM_REC_DAEMON, tag, NULL, size, stamp());
	if (ret == 2) /* no room even for that: the rest of this pair is at msgd */
		__atomic_fetch_or(&r->head, SHM_HEAD_TX_CLOSED, __ATOMIC_SEQ_CST);
	shm_wake(shm_proc(base, (uint32_t)dest));
	return lib_daemon_send(dest, ret == 0 ? tag | L_TAG_DIRECT : tag, buf, size, site);
}

/* --- the stash ---------------------------------------------------------- */

int stash_reserve(void)
{
	if (msg_lib.nstash == msg_lib.stash_cap) {
		size_t cap = msg_lib.stash_cap ? msg_lib.stash_cap * 2 : 16;
		struct stash_ent *v = realloc(msg_lib.stash, cap * sizeof(*v));

		if (!v)
			return -1;
		msg_lib.stash = v;
		msg_lib.stash_cap = cap;
	}
	return 0;
}

static int stash_push(uint32_t src, const struct shm_rec *rec)
{
	struct stash_ent *e;

	if (stash_reserve())
		return -1;
	e = &msg_lib.stash[msg_lib.nstash];
	*e = (struct stash_ent){ .src = src, .kind = rec->kind, .tag = rec->tag,
				 .size = rec->size, .arrival = rec->arrival };
	if (rec->kind == SHM_REC_DATA) {
		e->data = malloc(rec->size ? rec->size : 1);
		if (!e->data)
			return -1;
		memcpy(e->data, (const uint8_t *)rec + SHM_REC_HDR, rec->size);
	}
	msg_lib.nstash++;
	return 0;
}

static int by_arrival(const void *a, const void *b)
{
	const struct stash_ent *x = a, *y = b;

	return x->arrival < y->arrival ? -1 : x->arrival > y->arrival;
}

static void stash_remove(size_t i)
{
	free(msg_lib.stash[i].data);
	memmove(&msg_lib.stash[i], &msg_lib.stash[i + 1],
		(msg_lib.nstash - i - 1) * sizeof(msg_lib.stash[0]));
	msg_lib.nstash--;
}

static bool matches(int want_src, int want_tag, uint32_t src, int32_t tag)
{
	return (want_src == MSG_ANYSRC || (uint32_t)want_src == src) &&
	       (want_tag == MSG_ANYTAG || want_tag == tag);
}

/* Close our receiving side: every ring into us is closed (senders go
 * through msgd from now on) and what is still in them moves to the stash,
 * in the order it was sent. all: also close our sending side and unmap the
 * segment (before a capture: the image must not carry the mapping). */
void fast_detach(bool all)
{
	void *base = msg_lib.shm;
	uint32_t s, me = msg_lib.id, n = msg_lib.n;
	size_t first = msg_lib.nstash;

	if (!base)
		return;
	if (!msg_lib.rx_detached) {
		for (s = 0; s < n; s++) {
			struct shm_ring *r = ring(s, me);
			uint64_t end = __atomic_fetch_or(&r->head, SHM_HEAD_RX_CLOSED,
							 __ATOMIC_SEQ_CST) & SHM_HEAD_POS;
			uint64_t pos;

			for (pos = r->tail; pos < end;) {
				struct shm_rec *rec = rec_at(r, pos);
				uint64_t span = shm_rec_span(rec->kind, rec->size);

				if (span > end - pos || pos % ring_cap() + span > ring_cap())
					break; /* malformed (no libmsg writes such a record): drop the rest */
				if (rec->kind != SHM_REC_PAD && !rec->consumed && !test_sw.no_stash &&
				    stash_push(s, rec)) {
					fprintf(stderr, "msg: out of memory keeping queued messages\n");
					abort(); /* losing them silently would break exactly-once */
				}
				pos += span;
			}
			if (__atomic_exchange_n(&r->space_wait, 0, __ATOMIC_SEQ_CST))
				shm_wake(shm_proc(base, s));
		}
		if (msg_lib.nstash > first)
			qsort(msg_lib.stash + first, msg_lib.nstash - first,
			      sizeof(*msg_lib.stash), by_arrival);
		msg_lib.rx_detached = true;
	}
	if (!all)
		return;
	bell_close();
	for (s = 0; s < n; s++) {
		__atomic_fetch_or(&ring(me, s)->head, SHM_HEAD_TX_CLOSED, __ATOMIC_SEQ_CST);
		shm_wake(shm_proc(base, s)); /* it takes the rest from msgd */
	}
	munmap(base, msg_lib.shm_len);
	msg_lib.shm = NULL;
	msg_lib.shm_rings = NULL;
	msg_lib.shm_len = 0;
}

/* --- receiving ---------------------------------------------------------- */

static int out(int src, int32_t tag, uint64_t size, int *from, int *tag_out, size_t *recvd)
{
	if (from)
		*from = src;
	if (tag_out)
		*tag_out = tag;
	if (recvd)
		*recvd = (size_t)size;
	return MSG_OK;
}

/* Receive the message a DAEMON record stands for: the first of its
 * channel at msgd with its tag (msgd holds that channel's messages in the
 * order of their records). arrival names the record across a detach. */
static int via_daemon(uint32_t src, int32_t tag, uint64_t arrival, struct shm_rec *rec,
		      void *buf, size_t size, int *from, int *tag_out, size_t *recvd)
{
	int ret = lib_daemon_recv((int)src, tag | L_TAG_DIRECT, buf, size, from, tag_out, recvd);
	size_t i;

	if (tag_out && (ret == MSG_OK || ret == MSG_ETRUNC))
		*tag_out &= ~L_TAG_DIRECT;
	if (ret != MSG_OK)
		return ret; /* LIB_AGAIN, ETRUNC (the record stays), errors */
	if (!msg_lib.rx_detached) {
		struct shm_ring *r = ring(src, msg_lib.id);

		shm_consume(r, ring_cap(), rec);
		return MSG_OK;
	}
	/* the rings were left while we waited: the record is in the stash */
	for (i = 0; i < msg_lib.nstash; i++)
		if (msg_lib.stash[i].arrival == arrival && msg_lib.stash[i].src == src) {
			stash_remove(i);
			break;
		}
	return MSG_OK;
}

static int from_stash(int src, int tag, void *buf, size_t size, int *from, int *tag_out,
		      size_t *recvd)
{
	size_t i;

	for (i = 0; i < msg_lib.nstash; i++) {
		struct stash_ent *e = &msg_lib.stash[i];
		int ret;

		if (!matches(src, tag, e->src, e->tag))
			continue;
		if (e->kind == SHM_REC_DAEMON) {
			ret = lib_daemon_recv((int)e->src, e->tag | L_TAG_DIRECT, buf, size, from,
					      tag_out, recvd);
			if (tag_out && (ret == MSG_OK || ret == MSG_ETRUNC))
				*tag_out &= ~L_TAG_DIRECT;
			if (ret == MSG_OK)
				stash_remove(i);
			return ret;
		}
		if (e->size > size) {
			out((int)e->src, e->tag, e->size, from, tag_out, recvd);
			return MSG_ETRUNC; /* it stays */
		}
		memcpy(buf, e->data, e->size);
		ret = out((int)e->src, e->tag, e->size, from, tag_out, recvd);
		stash_remove(i);
		return ret;
	}
	return lib_daemon_recv(src, tag, buf, size, from, tag_out, recvd);
}

static struct shm_rec bad_rec; /* ring_match found a record that cannot be */

/* The first unconsumed record of ring (s -> us) that matches tag; &bad_rec
 * when the ring holds a record no libmsg writes (it would make us read
 * past the ring). */
static struct shm_rec *ring_match(struct shm_ring *r, int tag)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) & SHM_HEAD_POS, pos;
	uint64_t cap = ring_cap();

	for (pos = r->tail; pos < head;) {
		struct shm_rec *rec = rec_at(r, pos);
		uint64_t len = shm_rec_span(rec->kind, rec->size);

		if (rec->kind < SHM_REC_DATA || rec->kind > SHM_REC_PAD ||
		    (rec->kind != SHM_REC_DAEMON && rec->size > cap) || len > head - pos ||
		    pos % cap + len > cap)
			return &bad_rec;
		if (rec->kind != SHM_REC_PAD && !rec->consumed &&
		    (tag == MSG_ANYTAG || rec->tag == tag))
			return rec;
		pos += len;
	}
	return NULL;
}

static bool a_sender_left(void)
{
	uint32_t s;

	for (s = 0; s < msg_lib.n; s++)
		if (shm_proc(msg_lib.shm, s)->member &&
		    (__atomic_load_n(&ring(s, msg_lib.id)->head, __ATOMIC_ACQUIRE) &
		     SHM_HEAD_TX_CLOSED))
			return true;
	return false;
}

static int take(uint32_t s, struct shm_rec *rec, void *buf, size_t size, int *from,
		int *tag_out, size_t *recvd)
{
	struct shm_ring *r = ring(s, msg_lib.id);

	if (rec->kind == SHM_REC_DAEMON)
		return via_daemon(s, rec->tag, rec->arrival, rec, buf, size, from, tag_out, recvd);
	if (rec->size > size) {
		out((int)s, rec->tag, rec->size, from, tag_out, recvd);
		return MSG_ETRUNC; /* it stays in the ring */
	}
	memcpy(buf, (uint8_t *)rec + SHM_REC_HDR, rec->size);
	out((int)s, rec->tag, rec->size, from, tag_out, recvd);
	msg_lib.ring_recvs++;
	if (shm_consume(r, ring_cap(), rec) && __atomic_load_n(&r->space_wait, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&r->space_wait, 0, __ATOMIC_RELAXED);
		shm_wake(shm_proc(msg_lib.shm, s));
	}
	return MSG_OK;
}

/* --- a job across hosts: direct_recv asks (docs/datapath.md §8) --------- */

bool fast_rings_live(void)
{
	return msg_lib.shm && !msg_lib.rx_detached;
}

bool fast_ring_peer(uint32_t s)
{
	return fast_rings_live() && shm_proc(msg_lib.shm, s)->member;
}

int fast_take_from(uint32_t s, int tag, void *buf, size_t size, int *from, int *tag_out,
		   size_t *recvd)
{
	struct shm_rec *rec = ring_match(ring(s, msg_lib.id), tag);

	if (!rec)
		return FAST_NONE;
	if (rec == &bad_rec) {
		fprintf(stderr, "msg: malformed record in the ring from rank %u\n", s);
		return MSG_EPROTO;
	}
	return take(s, rec, buf, size, from, tag_out, recvd);
}

bool fast_ring_pending(uint32_t s, int tag)
{
	return fast_ring_peer(s) && ring_match(ring(s, msg_lib.id), tag);
}

bool fast_sender_left(void)
{
	return fast_rings_live() && a_sender_left();
}

bool fast_detach_requested(void)
{
	return msg_lib.shm &&
	       __atomic_load_n(&shm_proc(msg_lib.shm, msg_lib.id)->detach_req, __ATOMIC_ACQUIRE);
}

void fast_test_tick(void)
{
	if (test_sw.detach_after >= 0 && test_sw.recvs++ == test_sw.detach_after)
		fast_detach(true); /* as lib_capture does */
}

uint32_t fast_bell(void)
{
	return __atomic_load_n(&shm_proc(msg_lib.shm, msg_lib.id)->bell, __ATOMIC_ACQUIRE);
}

bool fast_bell_arm(uint32_t seen)
{
	struct shm_proc *me = shm_proc(msg_lib.shm, msg_lib.id);

	/* Dekker with shm_wake: announce, then look */
	__atomic_store_n(&me->sleeping, SHM_SLEEP_POLL, __ATOMIC_SEQ_CST);
	return __atomic_load_n(&me->bell, __ATOMIC_SEQ_CST) == seen;
}

void fast_bell_disarm(void)
{
	char b[64];

	__atomic_store_n(&shm_proc(msg_lib.shm, msg_lib.id)->sleeping, SHM_SLEEP_NONE,
			 __ATOMIC_SEQ_CST);
	while (recv(msg_lib.bell_fd, b, sizeof(b), MSG_DONTWAIT) > 0)
		;
}

int fast_recv(int src, int tag, void *buf, size_t size, int *from, int *tag_out, size_t *recvd)
{
	fast_test_tick();
	if (msg_lib.rx_detached)
		return from_stash(src, tag, buf, size, from, tag_out, recvd);
	for (;;) {
		struct shm_proc *me = shm_proc(msg_lib.shm, msg_lib.id);
		uint32_t seen = __atomic_load_n(&me->bell, __ATOMIC_ACQUIRE), s, best_s = 0;
		struct shm_rec *best = NULL;
		/* a named source: its ring's head, before we look at it */
		const uint64_t *head = src == MSG_ANYSRC ? NULL : &ring((uint32_t)src, msg_lib.id)->head;
		uint64_t head_seen = head ? __atomic_load_n(head, __ATOMIC_ACQUIRE) : 0;

		if (__atomic_load_n(&me->detach_req, __ATOMIC_ACQUIRE)) {
			fast_detach(true); /* msgd wants us on its path */
			return LIB_AGAIN;
		}
		for (s = src == MSG_ANYSRC ? 0 : (uint32_t)src;
		     s < (src == MSG_ANYSRC ? msg_lib.n : (uint32_t)src + 1); s++) {
			struct shm_rec *rec = ring_match(ring(s, msg_lib.id), tag);

			if (rec == &bad_rec) {
				fprintf(stderr, "msg: malformed record in the ring from rank %u\n", s);
				return MSG_EPROTO;
			}
			if (rec && (!best || rec->arrival < best->arrival)) {
				best = rec;
				best_s = s;
			}
		}
		if (best)
			return take(best_s, best, buf, size, from, tag_out, recvd);
		if (a_sender_left()) {
			/* its later messages are at msgd: so are our receives */
			fast_detach(false);
			return LIB_AGAIN;
		}
		shm_wait(me, seen, spin_ns(), 0, head, head_seen);
	}
}
