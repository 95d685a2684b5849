/* A process that always has messages queued to itself, to be migrated
 * while they sit in its same-host ring (docs/datapath.md): n = 1, so with
 * msgrun --shm its only ring is the one to itself, and with two virtual
 * hosts there is an empty host to move it to.
 *
 *   t_selfmig [ROUNDS [K [PAUSE_MS]]]     (default 40 10 10)
 *
 * Each round sends K messages to itself (8 B, 64 KiB and 3 MiB in turn: the
 * last go through msgd with a record in the ring), then receives them one
 * by one with PAUSE_MS between receives, checking each (per-pair order,
 * content) and that nothing extra is left (exactly once). Prints
 * "selfmig ok". */
#include <time.h>

#include "tprog.h"

#define BIG (3u << 20)

static size_t size_of(int k)
{
	static const size_t s[] = { 8, 65536, BIG };

	return s[k % 3];
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 40, K = argc > 2 ? atoi(argv[2]) : 10;
	int pause = argc > 3 ? atoi(argv[3]) : 10, n, id, r, k, from;
	unsigned char *buf = malloc(BIG);
	struct timespec ts = { pause / 1000, (pause % 1000) * 1000000L };
	size_t got;

	EXPECT(buf != NULL, "out of memory");
	CHECK(msgInitialize());
	CHECK(msgn(&n));
	CHECK(msgid(&id));
	EXPECT(n == 1, "n = %d, want 1", n);
	for (r = 0; r < rounds; r++) {
		for (k = 0; k < K; k++) {
			tprog_fill(buf, size_of(k), r, 0, k);
			CHECK(msgsend(0, buf, size_of(k)));
		}
		for (k = 0; k < K; k++) {
			nanosleep(&ts, NULL);
			CHECK(msgrecv(0, buf, BIG, &from, &got));
			EXPECT(got == size_of(k), "round %d message %d: %zu bytes, want %zu (order)", r,
			       k, got, size_of(k));
			EXPECT(tprog_verify(buf, got, r, 0, k) < 0, "round %d message %d differs", r, k);
		}
	}
	/* nothing left over: the next message to ourselves is the next one sent */
	buf[0] = 42;
	CHECK(msgsend(0, buf, 1));
	CHECK(msgrecv(0, buf, BIG, &from, &got));
	EXPECT(got == 1 && buf[0] == 42, "a message was left over (%zu bytes)", got);
	printf("selfmig ok rounds=%d K=%d\n", rounds, K);
	free(buf);
	CHECK(msgFinalize());
	return 0;
}
