/* A ring: a token goes `laps` times around 0 -> 1 -> ... -> n-1 -> 0, each
 * rank adding its id; then the same with MSG_ANYSRC receives. Rank 0 checks
 * the total. */
#include <stdint.h>

#include "tprog.h"

static uint64_t lap(int n, int id, int laps, int src_any)
{
	uint64_t tok = 0;
	int from, left = (id + n - 1) % n, right = (id + 1) % n;
	size_t got;

	for (int l = 0; l < laps; l++) {
		if (id == 0) {
			CHECK(msgsend(right, &tok, sizeof(tok)));
			CHECK(msgrecv(src_any ? MSG_ANYSRC : left, &tok, sizeof(tok), &from, &got));
		} else {
			CHECK(msgrecv(src_any ? MSG_ANYSRC : left, &tok, sizeof(tok), &from, &got));
			tok += (uint64_t)id;
			CHECK(msgsend(right, &tok, sizeof(tok)));
		}
		EXPECT(from == left && got == sizeof(tok), "from %d got %zu", from, got);
	}
	return tok;
}

int main(int argc, char **argv)
{
	int laps = argc > 1 ? atoi(argv[1]) : 10;
	int n, id;
	uint64_t want, a, b;

	CHECK(msgInitialize());
	CHECK(msgn(&n));
	CHECK(msgid(&id));
	EXPECT(n >= 2, "n=%d", n);
	want = (uint64_t)laps * ((uint64_t)n * (n - 1) / 2);
	a = lap(n, id, laps, 0);
	b = lap(n, id, laps, 1);
	if (id == 0) {
		EXPECT(a == want && b == want, "token %llu/%llu want %llu", (unsigned long long)a,
		       (unsigned long long)b, (unsigned long long)want);
		printf("ring ok n=%d laps=%d token=%llu\n", n, laps, (unsigned long long)a);
	}
	CHECK(msgFinalize());
	return 0;
}
