/* Ping-pong between ranks 0 and 1 over a range of sizes (empty, small,
 * exactly one chunk, one chunk plus one byte, several chunks); every reply
 * is checked byte for byte. Other ranks only initialise and finalise.
 *   t_pingpong [PAUSE_MS]: rank 0 pauses after each send (its receive then
 *   finds news of a stream that came meanwhile before it waits). */
#include <poll.h>
#include <stdint.h>

#include "tprog.h"

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 0, 1, 8, 1000, 65536, 1 << 20, (1 << 20) + 1, 3u << 20 };
	const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0])), rounds = 3;
	unsigned char *buf = malloc((3u << 20) + 16);
	int n, id, from;
	size_t got;
	int pause_ms = argc > 1 ? atoi(argv[1]) : 0;

	CHECK(msgInitialize());
	CHECK(msgn(&n));
	CHECK(msgid(&id));
	EXPECT(n >= 2, "n=%d", n);
	for (int k = 0; k < rounds * nsizes && id < 2; k++) {
		size_t sz = sizes[k % nsizes];

		if (id == 0) {
			tprog_fill(buf, sz, 0, 1, k);
			CHECK(msgsend(1, buf, sz));
			if (pause_ms)
				poll(NULL, 0, pause_ms);
			CHECK(msgrecv(1, buf, (3u << 20) + 16, &from, &got));
			EXPECT(from == 1 && got == sz, "from %d got %zu want %zu", from, got, sz);
			EXPECT(tprog_verify(buf, sz, 1, 0, k) < 0, "reply %d corrupted", k);
		} else {
			CHECK(msgrecv(0, buf, (3u << 20) + 16, &from, &got));
			EXPECT(from == 0 && got == sz, "from %d got %zu want %zu", from, got, sz);
			EXPECT(tprog_verify(buf, sz, 0, 1, k) < 0, "ping %d corrupted", k);
			tprog_fill(buf, sz, 1, 0, k);
			CHECK(msgsend(0, buf, sz));
		}
	}
	if (id == 0)
		printf("pingpong ok n=%d\n", n);
	CHECK(msgFinalize());
	free(buf);
	return 0;
}
