/* pingpong_mpi: the same benchmark as pingpong_msg.c, in plain MPI (blocking
 * MPI_Send / MPI_Recv, the same loops, sizes and clock), for Open MPI.
 *
 *   mpirun -np 2 pingpong_mpi [LAT_ITERS [BW_MSGS]]
 *
 * Rank 0 prints one line:
 *   pingpong impl=mpi lat_us=<float> bw_gbs=<float> lat_iters=<n> bw_msgs=<n>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	if (ret != MPI_SUCCESS) {
		fprintf(stderr, "pingpong_mpi: %s failed (%d)\n", what, ret);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

static void xsend(int to, const void *b, int len)
{
	check(MPI_Send(b, len, MPI_BYTE, to, 0, MPI_COMM_WORLD), "MPI_Send");
}

static void xrecv(int from, void *b, int len)
{
	MPI_Status st;
	int got = 0;

	check(MPI_Recv(b, len, MPI_BYTE, from, MPI_ANY_TAG, MPI_COMM_WORLD, &st), "MPI_Recv");
	MPI_Get_count(&st, MPI_BYTE, &got);
	if (got != len) {
		fprintf(stderr, "pingpong_mpi: got %d bytes, expected %d\n", got, len);
		MPI_Abort(MPI_COMM_WORLD, 1);
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

	MPI_Init(&argc, &argv);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	MPI_Comm_rank(MPI_COMM_WORLD, &id);
	if (n != 2 || lat_iters < 1 || bw_msgs < 1) {
		fprintf(stderr, "pingpong_mpi: needs exactly 2 ranks (have %d) and positive counts\n", n);
		MPI_Finalize();
		return 2;
	}
	buf = malloc(BW_SIZE);
	if (!buf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(buf, id + 1, BW_SIZE);
	lat = latency(id, lat_iters, buf);
	bw = bandwidth(id, bw_msgs, buf);
	if (id == 0)
		printf("pingpong impl=mpi lat_us=%.3f bw_gbs=%.3f lat_iters=%ld bw_msgs=%ld\n", lat, bw,
		       lat_iters, bw_msgs);
	free(buf);
	MPI_Finalize();
	return 0;
}
