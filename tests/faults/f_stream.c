/* A stream with a known message layout, for the fault tests.
 *   f_stream COUNT LEN PACE_MS [START_MS]
 * Round k = 1..COUNT: rank 0 sends message k (LEN bytes, byte i =
 * tprog_byte(0, d, k, i)) to every rank d >= 1, then receives an 8-byte
 * ack (k) from each. Channel 0 -> d therefore carries message k as sequence
 * number k, and rank 0's k-th send overall is (k-1)*(n-1) + d. Between
 * rounds rank 0 sleeps PACE_MS, so a run lasts about COUNT * PACE_MS.
 * At the end each rank d >= 1 sends (sum of all bytes received, number of
 * wrong messages) to rank 0, which checks both against the closed form and
 * prints "stream ok ..." (exit 0) or "stream WRONG ..." (exit 1).
 * A rank that receives a wrong message (a corrupted copy was delivered to
 * it) appends "consumed-bad seq=K byte=B" to the file "consumed-bad" in its
 * working directory at once, so a test can tell which replicas consumed it. */
#include <fcntl.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "tprog.h"

static void note_bad(int k, long byte)
{
	char line[64];
	int fd = open("consumed-bad", O_WRONLY | O_CREAT | O_APPEND, 0644);
	int len = snprintf(line, sizeof(line), "consumed-bad seq=%d byte=%ld\n", k, byte);

	if (fd >= 0) {
		if (write(fd, line, (size_t)len) != len)
			fprintf(stderr, "cannot write consumed-bad\n");
		close(fd);
	}
}

int main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 50;
	size_t len = argc > 2 ? (size_t)atol(argv[2]) : 1000;
	int pace = argc > 3 ? atoi(argv[3]) : 10;
	int start = argc > 4 ? atoi(argv[4]) : 0;
	int n, id, from, k, d;
	size_t got;
	unsigned char *buf;
	uint64_t ack, res[2];

	CHECK(msgInitialize());
	CHECK(msgn(&n));
	CHECK(msgid(&id));
	EXPECT(n >= 2 && count > 0 && len > 0, "n=%d count=%d len=%zu", n, count, len);
	buf = malloc(len);
	EXPECT(buf != NULL, "malloc");
	if (id == 0) {
		int wrong = 0;
		struct timespec ts0 = { start / 1000, (start % 1000) * 1000000L };

		if (start > 0)
			nanosleep(&ts0, NULL);
		for (k = 1; k <= count; k++) {
			struct timespec ts = { pace / 1000, (pace % 1000) * 1000000L };

			for (d = 1; d < n; d++) {
				tprog_fill(buf, len, 0, d, k);
				CHECK(msgsend(d, buf, len));
			}
			for (d = 1; d < n; d++) {
				CHECK(msgrecv(d, &ack, sizeof(ack), &from, &got));
				EXPECT(got == sizeof(ack) && ack == (uint64_t)k, "ack %llu from %d, want %d",
				       (unsigned long long)ack, d, k);
			}
			if (pace > 0)
				nanosleep(&ts, NULL);
		}
		for (d = 1; d < n; d++) {
			uint64_t want = 0;

			for (k = 1; k <= count; k++)
				for (size_t i = 0; i < len; i++)
					want += tprog_byte(0, d, k, i);
			CHECK(msgrecv(d, res, sizeof(res), &from, &got));
			if (got != sizeof(res) || res[0] != want || res[1] != 0) {
				printf("stream WRONG rank %d sum=%llu want=%llu bad=%llu\n", d,
				       (unsigned long long)res[0], (unsigned long long)want,
				       (unsigned long long)res[1]);
				wrong++;
			}
		}
		if (!wrong)
			printf("stream ok n=%d count=%d len=%zu\n", n, count, len);
		fflush(stdout);
		CHECK(msgFinalize());
		return wrong ? 1 : 0;
	}
	res[0] = res[1] = 0;
	for (k = 1; k <= count; k++) {
		long bad;

		CHECK(msgrecv(0, buf, len, &from, &got));
		EXPECT(got == len, "message %d: %zu bytes", k, got);
		bad = tprog_verify(buf, len, 0, id, k);
		if (bad >= 0) {
			note_bad(k, bad);
			res[1]++;
		}
		for (size_t i = 0; i < len; i++)
			res[0] += buf[i];
		ack = (uint64_t)k;
		CHECK(msgsend(0, &ack, sizeof(ack)));
	}
	CHECK(msgsend(0, res, sizeof(res)));
	CHECK(msgFinalize());
	return 0;
}
