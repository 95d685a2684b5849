/* Numerical integration, functional decomposition (the paper's first
 * exemplar). The interval is split among the n ranks; every rank integrates
 * its part with the midpoint rule and the partial sums travel a ring: rank i
 * receives the running sum from i-1, adds its own and sends it to i+1, and
 * rank 0 receives the total from n-1.
 *
 * The integrand 4/(1+x^2) on [0,1] has the value pi, so the answer is
 * checked. The summation order is fixed for a given n, so the result is
 * bit-identical from run to run (and across replicas).
 *
 *   integration [--intervals N] [--rounds R] [--time]
 *   integration --sequential --parts N [--intervals N]
 *
 * --sequential computes, in one process without msg, exactly what a run on
 * N ranks computes (same parts, same addition order): the reference that
 * the parallel result must equal bit for bit.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "comm.h"

#define RING_TAG 1

static double f(double x)
{
	return 4.0 / (1.0 + x * x);
}

/* Midpoint sum over intervals [lo, hi) of N on [0, 1]. */
static double partial_sum(long long lo, long long hi, long long N)
{
	double h = 1.0 / (double)N, s = 0.0;
	long long i;

	for (i = lo; i < hi; i++)
		s += f(((double)i + 0.5) * h);
	return s * h;
}

/* One trip around the ring; returns the total at rank 0 (0 elsewhere). */
static double ring_sum(int id, int n, double mine)
{
	double acc = mine;

	if (n == 1)
		return acc;
	if (id == 0) {
		comm_send(1, RING_TAG, &acc, sizeof acc);
		comm_recv(n - 1, RING_TAG, &acc, sizeof acc, NULL, NULL);
		return acc;
	}
	comm_recv(id - 1, RING_TAG, &acc, sizeof acc, NULL, NULL);
	acc += mine;
	comm_send((id + 1) % n, RING_TAG, &acc, sizeof acc);
	return 0.0;
}

/* Midpoint error bound (b-a) h^2 max|f''| / 24 with max|f''| = 8, plus a
 * generous allowance for rounding in N additions. */
static int check(double result, long long N)
{
	double h = 1.0 / (double)N;
	double tol = h * h / 3.0 + 1e-15 * (double)N + 1e-14;

	return fabs(result - M_PI) <= tol;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The ring's additions in the same order, in one process. */
static double sequential_sum(long long N, int parts)
{
	double acc = 0.0;
	int id;

	for (id = 0; id < parts; id++) {
		double mine = partial_sum(N * id / parts, N * (id + 1) / parts, N);

		acc = id == 0 ? mine : acc + mine;
	}
	return acc;
}

static int print_result(int n, long long N, long long rounds, double total)
{
	uint64_t bits;
	int ok = check(total, N);

	memcpy(&bits, &total, sizeof bits);
	printf("integration n=%d intervals=%lld rounds=%lld result=%.17g bits=%016" PRIx64
	       " error=%.3e %s\n",
	       n, N, rounds, total, bits, fabs(total - M_PI), ok ? "ok" : "FAIL");
	return ok;
}

int main(int argc, char **argv)
{
	long long N = args_ll(argc, argv, "--intervals", 100000000LL);
	long long rounds = args_ll(argc, argv, "--rounds", 1);
	int timing = args_has(argc, argv, "--time") != 0;
	int id, n, ok = 1;
	double t0 = now(), total = 0.0;
	long long r;

	if (args_has(argc, argv, "--sequential")) {
		int parts = (int)args_ll(argc, argv, "--parts", 1);

		if (parts < 1 || N < parts)
			return 2;
		return print_result(parts, N, 1, sequential_sum(N, parts)) ? 0 : 1;
	}
	comm_check(msgInitialize(), "msgInitialize");
	comm_check(msgid(&id), "msgid");
	comm_check(msgn(&n), "msgn");
	if (N < n || rounds < 1) {
		if (id == 0)
			fprintf(stderr, "integration: need intervals >= n and rounds >= 1\n");
		msgFinalize();
		return 2;
	}
	for (r = 0; r < rounds; r++) {
		long long lo = N * id / n, hi = N * (id + 1) / n;

		total = ring_sum(id, n, partial_sum(lo, hi, N));
	}
	if (id == 0) {
		ok = print_result(n, N, rounds, total);
		if (timing)
			fprintf(stderr, "integration wall %.6f s\n", now() - t0);
	}
	comm_check(msgFinalize(), "msgFinalize");
	return ok ? 0 : 1;
}
