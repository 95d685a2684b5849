/* Fixed-order collectives and checked wrappers over msg (see comm.h). */
#include "comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keep pieces well below any plausible runtime message limit. */
#define COMM_PIECE ((size_t)1 << 20)

void comm_check(int rc, const char *what)
{
	if (rc == MSG_OK)
		return;
	fprintf(stderr, "%s: %s (%d)\n", what, msgstrerror(rc), rc);
	exit(2);
}

void comm_send(int dest, int tag, const void *buf, size_t size)
{
	comm_check(msgsendt(dest, tag, buf, size), "msgsendt");
}

size_t comm_recv(int src, int tag, void *buf, size_t size, int *from, int *tag_out)
{
	size_t got = 0;

	comm_check(msgrecvt(src, tag, buf, size, from, tag_out, &got), "msgrecvt");
	return got;
}

static void me(int *id, int *n)
{
	comm_check(msgid(id), "msgid");
	comm_check(msgn(n), "msgn");
}

/* Gather v at rank 0 in rank order, combine there, broadcast the result. */
static void allreduce_bytes(void *v, size_t size,
			    void (*combine)(void *acc, const void *x))
{
	int id, n, r;
	unsigned char x[16];

	me(&id, &n);
	if (id != 0) {
		comm_send(0, COMM_TAG_REDUCE, v, size);
	} else {
		for (r = 1; r < n; r++) {
			comm_recv(r, COMM_TAG_REDUCE, x, size, NULL, NULL);
			combine(v, x);
		}
	}
	comm_bcast(v, size, 0);
}

static void max_d(void *acc, const void *x)
{
	double a, b;

	memcpy(&a, acc, sizeof a);
	memcpy(&b, x, sizeof b);
	if (b > a)
		memcpy(acc, &b, sizeof b);
}

static void sum_d(void *acc, const void *x)
{
	double a, b;

	memcpy(&a, acc, sizeof a);
	memcpy(&b, x, sizeof b);
	a += b;
	memcpy(acc, &a, sizeof a);
}

static void sum_u64(void *acc, const void *x)
{
	uint64_t a, b;

	memcpy(&a, acc, sizeof a);
	memcpy(&b, x, sizeof b);
	a += b;
	memcpy(acc, &a, sizeof a);
}

double comm_allreduce_max(double v)
{
	allreduce_bytes(&v, sizeof v, max_d);
	return v;
}

double comm_allreduce_sum(double v)
{
	allreduce_bytes(&v, sizeof v, sum_d);
	return v;
}

uint64_t comm_allreduce_sum_u64(uint64_t v)
{
	allreduce_bytes(&v, sizeof v, sum_u64);
	return v;
}

/* Binomial tree rooted at root: log2(n) rounds instead of n-1 sends at root. */
void comm_bcast(void *buf, size_t size, int root)
{
	int id, n, rel, mask;

	me(&id, &n);
	rel = (id - root + n) % n;
	for (mask = 1; mask < n; mask <<= 1) {
		if (rel & mask) {
			comm_recv((id - mask + n) % n, COMM_TAG_BCAST, buf, size, NULL, NULL);
			break;
		}
	}
	/* Forward to the subtrees below the bit we received on. */
	for (mask >>= 1; mask > 0; mask >>= 1)
		if (rel + mask < n)
			comm_send((id + mask) % n, COMM_TAG_BCAST, buf, size);
}

void comm_send_big(int dest, int tag, const void *buf, size_t size)
{
	uint64_t sz = size;
	size_t off;

	comm_send(dest, tag, &sz, sizeof sz);
	for (off = 0; off < size; off += COMM_PIECE) {
		size_t len = size - off < COMM_PIECE ? size - off : COMM_PIECE;

		comm_send(dest, tag, (const char *)buf + off, len);
	}
}

void *comm_recv_big(int src, int tag, size_t *size)
{
	uint64_t sz = 0;
	size_t off;
	char *buf;

	comm_recv(src, tag, &sz, sizeof sz, NULL, NULL);
	buf = malloc(sz ? sz : 1);
	if (!buf) {
		fprintf(stderr, "comm_recv_big: out of memory (%llu bytes)\n",
			(unsigned long long)sz);
		exit(2);
	}
	for (off = 0; off < sz; off += COMM_PIECE) {
		size_t len = sz - off < COMM_PIECE ? sz - off : COMM_PIECE;

		comm_recv(src, tag, buf + off, len, NULL, NULL);
	}
	*size = sz;
	return buf;
}
