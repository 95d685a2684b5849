#include "wire/shm.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SHM_BUDGET (256ull << 20) /* ring bytes of a whole job (virtual; touched as used) */
#define SHM_RING_MIN (64ull << 10)
/* 7 records of 1 MiB in flight (4 MiB held 3: a 1 MiB stream at 15-16
 * against 18-19 GB/s, docs/datapath.md §11) */
#define SHM_RING_MAX (8ull << 20)

uint64_t shm_ring_bytes_for(uint32_t n)
{
	uint64_t b = SHM_RING_MAX;

	while (b > SHM_RING_MIN && b * n * n > SHM_BUDGET)
		b /= 2;
	return b;
}

size_t shm_size(uint32_t n, uint64_t ring_bytes)
{
	return sizeof(struct shm_hdr) + (size_t)n * sizeof(struct shm_proc) +
	       (size_t)n * n * (sizeof(struct shm_ring) + ring_bytes);
}

void shm_init(void *base, uint32_t n, uint64_t ring_bytes, size_t size)
{
	struct shm_hdr *h = base;

	/* a fresh memfd is zero: rings empty and open, bells quiet */
	h->n = n;
	h->ring_bytes = ring_bytes;
	h->size = size;
	h->version = SHM_VERSION;
	__atomic_store_n(&h->magic, SHM_MAGIC, __ATOMIC_RELEASE);
}

int shm_check(const void *base, size_t len, uint32_t n)
{
	const struct shm_hdr *h = base;

	if (len < sizeof(*h) || __atomic_load_n(&h->magic, __ATOMIC_ACQUIRE) != SHM_MAGIC ||
	    h->version != SHM_VERSION || h->n != n || h->size != len ||
	    h->ring_bytes % SHM_ALIGN || h->ring_bytes < 2 * SHM_ALIGN ||
	    shm_size(n, h->ring_bytes) != len)
		return -1;
	return 0;
}

static long futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts)
{
	/* shared, not FUTEX_PRIVATE: the word is in a mapping of two processes */
	return syscall(SYS_futex, uaddr, op, val, ts, NULL, 0);
}

static int wake_fd = -1;

unsigned shm_wake_addr(struct sockaddr_un *a, uint64_t w)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	/* abstract (sun_path[0] = 0): no file, gone with the socket */
	return (unsigned)offsetof(struct sockaddr_un, sun_path) + 1 +
	       (unsigned)snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "msg-wake-%016llx",
				  (unsigned long long)w);
}

/* One byte to a waiter in poll(2). Lost bytes do not matter: a full socket
 * already holds a wake-up, and a gone waiter needs none. */
static void wake_poller(struct shm_proc *p)
{
	uint64_t w = __atomic_load_n(&p->wake, __ATOMIC_ACQUIRE);
	struct sockaddr_un a;
	unsigned len;

	if (!w)
		return;
	if (wake_fd < 0)
		wake_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (wake_fd < 0)
		return;
	len = shm_wake_addr(&a, w);
	(void)!sendto(wake_fd, "", 1, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&a, len);
}

void shm_wake_close(void)
{
	if (wake_fd >= 0)
		close(wake_fd);
	wake_fd = -1;
}

void shm_wake(struct shm_proc *p)
{
	uint32_t how;

	/* Dekker with shm_wait: bump, then look; the waiter announces, then looks */
	__atomic_fetch_add(&p->bell, 1, __ATOMIC_SEQ_CST);
	how = __atomic_load_n(&p->sleeping, __ATOMIC_SEQ_CST);
	if (how == SHM_SLEEP_FUTEX)
		futex(&p->bell, FUTEX_WAKE, INT_MAX, NULL);
	else if (how == SHM_SLEEP_POLL)
		wake_poller(p);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The spin watches the ring's head as well as the bell: the sender moves
 * the head first and bumps the bell after, so the receiver sees the record
 * one cache-line transfer earlier (the bell's) than the bell would tell it.
 * Sleeping is on the bell alone (shm_wake's Dekker). */
void shm_wait(struct shm_proc *p, uint32_t seen, uint64_t spin_ns, uint64_t timeout_ns,
	      const uint64_t *head, uint64_t head_seen)
{
	struct timespec ts;

	if (spin_ns) {
		uint64_t end = now_ns() + spin_ns;
		unsigned i = 0;

		while (__atomic_load_n(&p->bell, __ATOMIC_ACQUIRE) == seen) {
			if (head && __atomic_load_n(head, __ATOMIC_ACQUIRE) != head_seen)
				return;
			__builtin_ia32_pause();
			if (++i % 64 == 0 && now_ns() > end)
				break;
		}
		if (__atomic_load_n(&p->bell, __ATOMIC_ACQUIRE) != seen)
			return;
	}
	__atomic_store_n(&p->sleeping, SHM_SLEEP_FUTEX, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&p->bell, __ATOMIC_SEQ_CST) == seen) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000u);
		ts.tv_nsec = (long)(timeout_ns % 1000000000u);
		futex(&p->bell, FUTEX_WAIT, seen, timeout_ns ? &ts : NULL);
	}
	__atomic_store_n(&p->sleeping, 0, __ATOMIC_RELAXED);
}

int shm_put(struct shm_ring *r, uint64_t cap, uint32_t kind, int32_t tag, const void *payload,
	    uint64_t size, uint64_t arrival)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
	uint64_t pos = head & SHM_HEAD_POS, need = shm_rec_span(kind, size), off, pad;
	uint8_t *data = shm_ring_data(r);
	struct shm_rec *rec;

	if (head & SHM_HEAD_CLOSED)
		return 1;
	if (need > cap)
		return 2;
	off = pos % cap;
	pad = cap - off < need ? cap - off : 0; /* records never wrap */
	/* the tail only grows: the one we saw last is a lower bound, and the
	 * consumer's line is read only when that bound says full */
	if (pos + pad + need - r->tail_seen > cap) {
		r->tail_seen = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		if (pos + pad + need - r->tail_seen > cap)
			return 2;
	}
	if (pad) {
		rec = (struct shm_rec *)(data + off);
		*rec = (struct shm_rec){ .kind = SHM_REC_PAD, .size = pad - SHM_REC_HDR };
		off = 0;
	}
	rec = (struct shm_rec *)(data + off);
	if (kind == SHM_REC_DATA && size)
		memcpy((uint8_t *)rec + SHM_REC_HDR, payload, size);
	*rec = (struct shm_rec){ .kind = kind, .tag = tag, .size = size, .arrival = arrival };
	/* fails only when a close bit was set meanwhile: then it is not sent */
	if (!__atomic_compare_exchange_n(&r->head, &head, pos + pad + need, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_ACQUIRE))
		return 1;
	return 0;
}

bool shm_advance(struct shm_ring *r, uint64_t cap)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) & SHM_HEAD_POS;
	uint64_t tail = r->tail, t0 = tail;
	uint8_t *data = shm_ring_data(r);

	while (tail < head) {
		struct shm_rec *rec = (struct shm_rec *)(data + tail % cap);

		if (rec->kind != SHM_REC_PAD && !rec->consumed)
			break;
		tail += shm_rec_span(rec->kind, rec->size);
	}
	if (tail == t0)
		return false;
	/* sequentially consistent: the consumer then reads space_wait, the
	 * producer (fast.c, wait_room) stores space_wait and then reads the
	 * tail (Dekker). A release store could stay in the store buffer past
	 * that read (x86 reorders a store with a later load), both would miss
	 * the other, and the producer would sleep out its 2 ms bound. */
	__atomic_store_n(&r->tail, tail, __ATOMIC_SEQ_CST);
	return true;
}

bool shm_consume(struct shm_ring *r, uint64_t cap, struct shm_rec *rec)
{
	uint64_t head = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) & SHM_HEAD_POS;
	uint64_t tail = r->tail;
	uint8_t *data = shm_ring_data(r);
	struct shm_rec *first;

	while (tail < head && (first = (struct shm_rec *)(data + tail % cap))->kind == SHM_REC_PAD)
		tail += shm_rec_span(first->kind, first->size);
	if (tail >= head || (struct shm_rec *)(data + tail % cap) != rec) {
		__atomic_store_n(&rec->consumed, 1, __ATOMIC_RELAXED);
		return shm_advance(r, cap);
	}
	/* the first record: the tail passes it; nothing reads a record's
	 * consumed flag behind the tail */
	tail += shm_rec_span(rec->kind, rec->size);
	if (tail < head) {
		/* the rest of the consumed prefix, as shm_advance */
		__atomic_store_n(&r->tail, tail, __ATOMIC_SEQ_CST); /* shm_advance */
		shm_advance(r, cap);
		return true;
	}
	__atomic_store_n(&r->tail, tail, __ATOMIC_SEQ_CST); /* shm_advance */
	return true;
}
