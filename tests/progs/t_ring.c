/* A ring: a token goes `laps` times around 0 -> 1 -> ... -> n-1 -> 0, each
 * rank adding its id; then the same with MSG_ANYSRC receives. Rank 0 checks
 * the total. `t_ring LAPS anysrc [PAUSE_MS]`: the MSG_ANYSRC laps only (every
 * receive waits at msgd on the direct path), rank 0 pausing before each send
 * (so the others wait at msgd meanwhile). */
#include <stdint.h>
#include <time.h>

#include "tprog.h"

static int pause_ms;

static uint64_t lap(int n, int id, int laps, int src_any)
{
	uint64_t tok = 0;
	int from, left = (id + n - 1) % n, right = (id + 1) % n;
	size_t got;

	for (int l = 0; l < laps; l++) {
		if (id == 0) {
			struct timespec ts = { pause_ms / 1000, (pause_ms % 1000) * 1000000L };

			if (pause_ms)
				nanosleep(&ts, NULL);
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
	int only_any = argc > 2 && !strcmp(argv[2], "anysrc");
	int n, id;
	uint64_t want, a, b;

	pause_ms = only_any && argc > 3 ? atoi(argv[3]) : 0;
	CHECK(msgInitialize());
	CHECK(msgn(&n));
	CHECK(msgid(&id));
	EXPECT(n >= 2, "n=%d", n);
	want = (uint64_t)laps * ((uint64_t)n * (n - 1) / 2);
	a = only_any ? want : lap(n, id, laps, 0);
	b = lap(n, id, laps, 1);
	if (id == 0) {
		EXPECT(a == want && b == want, "token %llu/%llu want %llu", (unsigned long long)a,
		       (unsigned long long)b, (unsigned long long)want);
		printf("ring ok n=%d laps=%d token=%llu\n", n, laps, (unsigned long long)a);
	}
	CHECK(msgFinalize());
	return 0;
}
