/* pingpong_msg: 8-byte one-way latency and 1 MiB bandwidth between ranks 0
 * and 1, on msg. bench/pingpong/pingpong_mpi.c is the same program on MPI
 * (same loops, same sizes, same clock); run.sh runs both side by side.
 *
 *   msgrun -n 2 [-r 1] [--virtual-hosts M] pingpong_msg [LAT_ITERS [BW_MSGS]]
 *
 * Latency: LAT_ITERS round trips of an 8-byte message after LAT_ITERS/10
 * warm-up trips; one-way = elapsed / (2 * LAT_ITERS).
 * Bandwidth: rank 0 sends BW_MSGS messages of 1 MiB back to back, rank 1
 * receives them and answers with 8 bytes; after one warm-up pass, the best of
 * 3 passes: bytes / elapsed (GB/s = 1e9 bytes per second). The buffers are
 * touched before timing. Rank 0 prints one line:
 *   pingpong impl=msg lat_us=<float> bw_gbs=<float> lat_iters=<n> bw_msgs=<n>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msg.h"

#define LAT_SIZE 8
#define BW_SIZE (1u << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void check(int ret, const char *what)
{
	if (ret) {
		fprintf(stderr, "pingpong_msg: %s: %s\n", what, msgstrerror(ret));
		exit(1);
	}
}

static void xsend(int to, const void *b, size_t len) { check(msgsend(to, b, len), "msgsend"); }

static void xrecv(int from, void *b, size_t len)
{
	size_t got = 0;

	check(msgrecv(from, b, len, NULL, &got), "msgrecv");
	if (got != len) {
		fprintf(stderr, "pingpong_msg: got %zu bytes, expected %zu\n", got, len);
		exit(1);
	}
}

static double latency(int id, long iters, char *buf)
{
	long warm = iters / 10 + 1;
	double t0 = 0;

	for (long i = 0; i < warm + iters; i++) {
		if (i == warm)
			t0 = now();
		if (id == 0) {
			xsend(1, buf, LAT_SIZE);
			xrecv(1, buf, LAT_SIZE);
		} else {
			xrecv(0, buf, LAT_SIZE);
			xsend(0, buf, LAT_SIZE);
		}
	}
	return (now() - t0) / (2.0 * (double)iters) * 1e6;
}

static double bandwidth(int id, long msgs, char *buf)
{
	double best = 0;
	char ack[LAT_SIZE] = { 0 };

	for (int pass = 0; pass < 4; pass++) {
		double t0 = now(), t;

		for (long i = 0; i < msgs; i++) {
			if (id == 0)
				xsend(1, buf, BW_SIZE);
			else
				xrecv(0, buf, BW_SIZE);
		}
		if (id == 0)
			xrecv(1, ack, LAT_SIZE);
		else
			xsend(0, ack, LAT_SIZE);
		t = now() - t0;
		if (pass > 0 && (double)msgs * BW_SIZE / t / 1e9 > best)
			best = (double)msgs * BW_SIZE / t / 1e9;
	}
	return best;
}

int main(int argc, char **argv)
{
	long lat_iters = argc > 1 ? atol(argv[1]) : 20000;
	long bw_msgs = argc > 2 ? atol(argv[2]) : 200;
	int n, id;
	char *buf;
	double lat, bw;

	check(msgInitialize(), "msgInitialize");
	check(msgn(&n), "msgn");
	check(msgid(&id), "msgid");
	if (n != 2 || lat_iters < 1 || bw_msgs < 1) {
		fprintf(stderr, "pingpong_msg: needs exactly 2 ranks (have %d) and positive counts\n", n);
		return 2;
	}
	buf = malloc(BW_SIZE);
	if (!buf)
		return 1;
	memset(buf, id + 1, BW_SIZE);
	lat = latency(id, lat_iters, buf);
	bw = bandwidth(id, bw_msgs, buf);
	if (id == 0)
		printf("pingpong impl=msg lat_us=%.3f bw_gbs=%.3f lat_iters=%ld bw_msgs=%ld\n", lat, bw,
		       lat_iters, bw_msgs);
	free(buf);
	check(msgFinalize(), "msgFinalize");
	return 0;
}
