/* The data path's invariants under any route a message takes (same-host
 * rings, through msgd, a ring record standing for a message at msgd, the
 * stash after a process left its rings): docs/datapath.md.
 *
 *   t_datapath [K]     under msgrun, n >= 2 (default K = 12)
 *
 * Phases, each ended by a barrier:
 *  0. warm-up (after a first barrier): every rank sends one 8 B message to
 *     every rank and receives them (across hosts with r = 1, the first send
 *     of a pair asks for its direct stream: docs/datapath.md §6);
 *  1. burst: every rank sends K messages to every rank (itself included)
 *     before receiving any, sizes cycling through 8 B, 1000 B, 70 KB and
 *     3 MiB (larger than half a default ring: it goes through msgd), all
 *     with one tag (a faster rank's later messages have others, so the
 *     receives cannot take them). Then n*K receives from MSG_ANYSRC: each is
 *     checked byte for byte, and per source the k must come 0, 1, 2, ...
 *     (per-pair order, exactly once); then every rank sends an end marker to
 *     every rank and the next message from each source must be it (no
 *     duplicate left behind).
 *  2. tags: rank 0 sends rank 1 one message per tag 1..3 (small and 3 MiB
 *     alternately); rank 1 receives tag 3, then 2, then 1, then checks order
 *     among messages of one tag.
 *  3. truncation: rank 0 sends rank 1 100 B and 3 MiB; each first meets a
 *     10-byte buffer (MSG_ETRUNC, size and source reported, message kept),
 *     then is received whole, by name and by MSG_ANYSRC.
 * Prints "datapath ok" from rank 0. */
#include <stdint.h>
#include <string.h>

#include "tprog.h"

#define BIG (3u << 20)
#define END_TAG 7
#define BURST_TAG 5

static const size_t sizes[] = { 8, 1000, 70000, BIG };

static int n, id;
static unsigned char *buf;

static size_t size_of(int k)
{
	return sizes[k % 4];
}

static void barrier(void)
{
	unsigned char b = 0;
	int i;

	if (id == 0) {
		for (i = 1; i < n; i++)
			CHECK(msgrecvt(i, 6, &b, 1, NULL, NULL, NULL));
		for (i = 1; i < n; i++)
			CHECK(msgsendt(i, 6, &b, 1));
	} else {
		CHECK(msgsendt(0, 6, &b, 1));
		CHECK(msgrecvt(0, 6, &b, 1, NULL, NULL, NULL));
	}
}

static void warm_up(void)
{
	int d, i, from;
	size_t got;

	memset(buf, 0, 8);
	for (d = 0; d < n; d++)
		CHECK(msgsendt(d, 8, buf, 8));
	for (i = 0; i < n; i++) {
		CHECK(msgrecvt(MSG_ANYSRC, 8, buf, 8, &from, NULL, &got));
		EXPECT(got == 8, "warm-up message of %zu bytes", got);
	}
}

static void burst(int K)
{
	int *next = calloc((size_t)n, sizeof(int)), d, k, i, from, tag;
	size_t got;
	long bad;

	for (k = 0; k < K; k++)
		for (d = 0; d < n; d++) {
			tprog_fill(buf, size_of(k), id, d, k);
			CHECK(msgsendt(d, BURST_TAG, buf, size_of(k)));
		}
	for (i = 0; i < n * K; i++) {
		CHECK(msgrecvt(MSG_ANYSRC, BURST_TAG, buf, BIG, &from, &tag, &got));
		EXPECT(from >= 0 && from < n, "from %d", from);
		k = next[from]++;
		EXPECT(k < K, "a message from %d beyond the %d sent (duplicate)", from, K);
		EXPECT(tag == BURST_TAG && got == size_of(k),
		       "from %d: message %d has tag %d size %zu, want size %zu (order)", from, k, tag,
		       got, size_of(k));
		bad = tprog_verify(buf, got, from, id, k);
		EXPECT(bad < 0, "from %d message %d differs at byte %ld", from, k, bad);
	}
	for (d = 0; d < n; d++)
		CHECK(msgsendt(d, END_TAG, buf, 0));
	for (d = 0; d < n; d++) {
		CHECK(msgrecvt(d, MSG_ANYTAG, buf, BIG, &from, &tag, &got));
		EXPECT(tag == END_TAG && got == 0, "from %d after %d messages: tag %d size %zu "
		       "instead of the end marker (duplicate)", d, K, tag, got);
	}
	free(next);
}

static void tags(void)
{
	int t, from, tag, rep;
	size_t got;

	if (id == 0) {
		for (rep = 0; rep < 2; rep++)
			for (t = 1; t <= 3; t++) {
				size_t len = (t + rep) % 2 ? BIG : 100;

				tprog_fill(buf, len, 0, 1, t * 10 + rep);
				CHECK(msgsendt(1, t, buf, len));
			}
	} else if (id == 1) {
		for (rep = 0; rep < 2; rep++)
			for (t = 3; t >= 1; t--) {
				size_t len = (t + rep) % 2 ? BIG : 100;

				CHECK(msgrecvt(0, t, buf, BIG, &from, &tag, &got));
				EXPECT(tag == t && got == len, "tag %d: got tag %d size %zu", t, tag, got);
				EXPECT(tprog_verify(buf, got, 0, 1, t * 10 + rep) < 0,
				       "tag %d rep %d: wrong message (order within a tag)", t, rep);
			}
	}
}

static void trunc_kept(void)
{
	static const size_t lens[] = { 100, BIG };
	unsigned char small[10];
	int i, from = -1;
	size_t got = 0;

	if (id == 0) {
		for (i = 0; i < 2; i++) {
			tprog_fill(buf, lens[i], 0, 1, 500 + i);
			CHECK(msgsend(1, buf, lens[i]));
		}
	} else if (id == 1) {
		for (i = 0; i < 2; i++) {
			int st = msgrecv(i ? MSG_ANYSRC : 0, small, sizeof(small), &from, &got);

			EXPECT(st == MSG_ETRUNC && got == lens[i] && from == 0,
			       "short buffer: status %d size %zu from %d", st, got, from);
			st = msgrecv(MSG_ANYSRC, small, sizeof(small), &from, &got);
			EXPECT(st == MSG_ETRUNC, "second short receive: %d (message lost?)", st);
			CHECK(msgrecv(i ? 0 : MSG_ANYSRC, buf, BIG, &from, &got));
			EXPECT(got == lens[i] && tprog_verify(buf, got, 0, 1, 500 + i) < 0,
			       "kept message %d wrong (%zu bytes)", i, got);
		}
	}
}

int main(int argc, char **argv)
{
	int K = argc > 1 ? atoi(argv[1]) : 12;

	CHECK(msgInitialize());
	CHECK(msgn(&n));
	CHECK(msgid(&id));
	EXPECT(n >= 2, "n = %d", n);
	buf = malloc(BIG);
	EXPECT(buf != NULL, "out of memory");
	barrier();
	warm_up();
	barrier();
	burst(K);
	barrier();
	tags();
	barrier();
	trunc_kept();
	barrier();
	if (id == 0)
		printf("datapath ok n=%d K=%d\n", n, K);
	free(buf);
	CHECK(msgFinalize());
	return 0;
}
