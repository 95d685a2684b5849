/* ANYSRC determinism under racing senders. Rank 0 releases ranks 1..n-1
 * with one "go" message each; they then send K small messages to rank 0 as
 * fast as they can, all at the same time, so their streams interleave and
 * copies reach each replica of rank 0 in an order set by that host's
 * scheduling and by which sender replicas are local to it (placement puts
 * different senders beside different replicas of rank 0). Rank 0 waits for
 * the backlog to build (its receives then see many candidates), consumes
 * everything with MSG_ANYSRC and writes
 * the order into order.txt in its working directory, one per replica; the
 * test compares the files of all replicas. Rank 0 also checks exactly-once
 * and per-pair order. Arguments: K, initial wait in ms. */
#include <stdint.h>
#include <time.h>

#include "tprog.h"

int main(int argc, char **argv)
{
	int K = argc > 1 ? atoi(argv[1]) : 50;
	int wait_ms = argc > 2 ? atoi(argv[2]) : 200;
	int n, id, from;
	size_t got;

	CHECK(msgInitialize());
	CHECK(msgn(&n));
	CHECK(msgid(&id));
	if (id != 0) {
		int go;

		/* all senders start within the latency of one message */
		CHECK(msgrecv(0, &go, sizeof(go), &from, &got));
		for (int i = 0; i < K; i++) {
			int msg[2] = { id, i };
			/* uneven pauses (the same in every replica of a sender) make
			 * the senders' streams interleave instead of arriving as
			 * whole bursts; which of two close messages reaches a host
			 * first then depends on that host */
			long us = 20 + (id * 7919L + i * 104729L) % 300;
			struct timespec ts = { 0, us * 1000 };

			CHECK(msgsend(0, msg, sizeof(msg)));
			nanosleep(&ts, NULL);
		}
	} else {
		struct timespec ts = { wait_ms / 1000, (wait_ms % 1000) * 1000000L };
		int *next = calloc((size_t)n, sizeof(int));
		FILE *f = fopen("order.txt", "w");

		EXPECT(next && f, "cannot open order.txt");
		for (int d = 1; d < n; d++)
			CHECK(msgsend(d, &d, sizeof(d)));
		nanosleep(&ts, NULL); /* timing only: does not steer any decision */
		for (int i = 0; i < (n - 1) * K; i++) {
			int msg[2] = { -1, -1 };

			CHECK(msgrecv(MSG_ANYSRC, msg, sizeof(msg), &from, &got));
			EXPECT(got == sizeof(msg) && msg[0] == from, "from %d says %d", from, msg[0]);
			EXPECT(msg[1] == next[from], "from %d: message %d, expected %d (per-pair order)",
			       from, msg[1], next[from]);
			next[from]++;
			fprintf(f, "%d:%d\n", from, msg[1]);
		}
		fclose(f);
		printf("anysrc ok n=%d K=%d\n", n, K);
		free(next);
	}
	CHECK(msgFinalize());
	return 0;
}
