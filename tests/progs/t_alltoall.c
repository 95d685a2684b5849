/* All-to-all: every rank sends `rounds` messages to every other rank (sizes
 * vary, some past one DATA chunk), then receives from each source by name
 * and checks order (per-pair, non-overtaking) and contents. A final
 * exchange uses MSG_ANYSRC, which every replica must consume identically. */
#include <stdint.h>

#include "tprog.h"

static size_t size_of(int src, int dst, int k)
{
	static const size_t s[] = { 0, 3, 100, 4096, 70000, (1 << 20) + 5 };
	return s[(src + 2 * dst + k) % 6];
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 4;
	int n, id, from;
	size_t got, cap = (1 << 20) + 64;
	unsigned char *buf = malloc(cap);
	long sum = 0;

	CHECK(msgInitialize());
	CHECK(msgn(&n));
	CHECK(msgid(&id));
	for (int k = 0; k < rounds; k++)
		for (int d = 0; d < n; d++) {
			if (d == id)
				continue;
			tprog_fill(buf, size_of(id, d, k), id, d, k);
			/* the first word says which round: order is checked by it */
			CHECK(msgsend(d, buf, size_of(id, d, k)));
		}
	for (int s = 0; s < n; s++) {
		if (s == id)
			continue;
		for (int k = 0; k < rounds; k++) {
			CHECK(msgrecv(s, buf, cap, &from, &got));
			EXPECT(from == s && got == size_of(s, id, k), "from %d: got %zu want %zu (round %d)",
			       s, got, size_of(s, id, k), k);
			EXPECT(tprog_verify(buf, got, s, id, k) < 0, "message %d->%d round %d corrupted "
			       "or out of order", s, id, k);
		}
	}
	/* ANYSRC phase: everyone sends its id to everyone; sum what arrives */
	for (int d = 0; d < n; d++)
		if (d != id)
			CHECK(msgsend(d, &id, sizeof(id)));
	for (int i = 0; i < n - 1; i++) {
		int v = -1;

		CHECK(msgrecv(MSG_ANYSRC, &v, sizeof(v), &from, &got));
		EXPECT(got == sizeof(v) && v == from, "anysrc: from %d value %d", from, v);
		sum += v;
	}
	EXPECT(sum == (long)n * (n - 1) / 2 - id, "anysrc sum %ld", sum);
	if (id == 0)
		printf("alltoall ok n=%d rounds=%d\n", n, rounds);
	CHECK(msgFinalize());
	free(buf);
	return 0;
}
