/* A burst of large messages to a receiver that is often off the CPU:
 *   t_burst K KIB PAUSE_MS [SEND_PAUSE_MS]
 * rank 0 sends K messages of KIB KiB to rank 1 back to back (or
 * SEND_PAUSE_MS apart: the receiver then waits for each); rank 1 sleeps
 * PAUSE_MS before each receive (as a receiver descheduled on a crowded
 * host), checks each byte for byte and in order, then answers with one
 * byte; rank 0 prints "burst ok". Other ranks only initialise and finalise. */
#include <poll.h>

#include "tprog.h"

int main(int argc, char **argv)
{
	int k_max = argc > 1 ? atoi(argv[1]) : 20, pause_ms = argc > 3 ? atoi(argv[3]) : 8;
	int send_pause_ms = argc > 4 ? atoi(argv[4]) : 0;
	size_t size = (argc > 2 ? strtoul(argv[2], NULL, 10) : 1024) << 10, got;
	unsigned char *buf = malloc(size ? size : 1), ack = 1;
	int n, id, from;

	CHECK(msgInitialize());
	CHECK(msgn(&n));
	CHECK(msgid(&id));
	EXPECT(n >= 2 && buf, "n=%d", n);
	for (int k = 0; k < k_max && id < 2; k++) {
		if (id == 0) {
			if (send_pause_ms)
				poll(NULL, 0, send_pause_ms);
			tprog_fill(buf, size, 0, 1, k);
			CHECK(msgsend(1, buf, size));
		} else {
			poll(NULL, 0, pause_ms);
			CHECK(msgrecv(0, buf, size, &from, &got));
			EXPECT(from == 0 && got == size, "from %d got %zu", from, got);
			EXPECT(tprog_verify(buf, size, 0, 1, k) < 0, "message %d wrong", k);
		}
	}
	if (id == 1)
		CHECK(msgsend(0, &ack, 1));
	if (id == 0) {
		CHECK(msgrecv(1, &ack, 1, &from, &got));
		printf("burst ok\n");
	}
	CHECK(msgFinalize());
	free(buf);
	return 0;
}
