/* Two ranks that always have messages in flight to each other, to be
 * migrated mid-stream (docs/datapath.md §6): run with r = 1 on three
 * virtual hosts, so the ranks talk over a direct stream and there is an
 * empty host to move one of them to. With n = 4 on three hosts (ranks 0
 * and 3 on host 0, 1 and 2 on hosts 1 and 2) the pairs are (0, 3) over
 * same-host rings and (1, 2) over a stream (docs/datapath.md §8).
 *
 *   t_dmove [ROUNDS [K [PAUSE_MS]]]     (default 60 8 10), n even; rank i
 *                                       exchanges with rank n - 1 - i
 *
 * Each round both ranks send K messages to each other (8 B, 64 KiB and
 * 1 MiB in turn, tags 1 and 2 in turn), then receive the other's K one by
 * one with PAUSE_MS between receives, alternately by MSG_ANYSRC and
 * MSG_ANYTAG, by name and tag, and by name: each is checked (content, the
 * per-pair order by its number, exactly once). Prints "dmove ok". */
#include <time.h>

#include "tprog.h"

#define BIG (1u << 20)

static size_t size_of(int k)
{
	static const size_t s[] = { 8, 65536, BIG };

	return s[k % 3];
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 60, K = argc > 2 ? atoi(argv[2]) : 8;
	int pause = argc > 3 ? atoi(argv[3]) : 10, n, id, other, r, k, from, tag;
	unsigned char *buf = malloc(BIG);
	struct timespec ts = { pause / 1000, (pause % 1000) * 1000000L };
	size_t got;

	EXPECT(buf != NULL, "out of memory");
	CHECK(msgInitialize());
	CHECK(msgn(&n));
	CHECK(msgid(&id));
	EXPECT(n >= 2 && n % 2 == 0, "n = %d, want an even n", n);
	other = n - 1 - id;
	for (r = 0; r < rounds; r++) {
		for (k = r * K; k < (r + 1) * K; k++) {
			tprog_fill(buf, size_of(k), id, other, k);
			CHECK(msgsendt(other, 1 + k % 2, buf, size_of(k)));
		}
		for (k = r * K; k < (r + 1) * K; k++) {
			int want_tag = 1 + k % 2;

			nanosleep(&ts, NULL);
			if (k % 3 == 0)
				CHECK(msgrecvt(MSG_ANYSRC, MSG_ANYTAG, buf, BIG, &from, &tag, &got));
			else if (k % 3 == 1)
				CHECK(msgrecvt(other, want_tag, buf, BIG, &from, &tag, &got));
			else
				CHECK(msgrecvt(other, MSG_ANYTAG, buf, BIG, &from, &tag, &got));
			EXPECT(from == other && tag == want_tag && got == size_of(k),
			       "message %d: from %d tag %d size %zu, want from %d tag %d size %zu "
			       "(order, or a message lost or doubled)", k, from, tag, got, other,
			       want_tag, size_of(k));
			EXPECT(tprog_verify(buf, got, other, id, k) < 0,
			       "message %d from %d: wrong content (order)", k, other);
		}
	}
	CHECK(msgFinalize());
	if (id == 0)
		printf("dmove ok rounds=%d K=%d\n", rounds, K);
	free(buf);
	return 0;
}
