/* Dirichlet problem, domain decomposition (the paper's second exemplar).
 *
 *   dirichlet [--nx X --ny Y | --footprint-mb 9|51|114] [--tol T]
 *             [--max-iters K] [--check-every C] [--max-error E]
 *             [--sequential] [--time]
 *
 * --footprint-mb sizes each rank's block so the process holds about that
 * many MB (the paper's 9, 51 and 114 MB); the global grid then grows with n
 * and is printed, so a --sequential reference can be run on the same grid.
 * --sequential solves the whole grid in one process without msg. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "args.h"
#include "comm.h"
#include "dirichlet.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Block side so two (s+2)^2 double arrays plus ~1 MB of program fit mb MB. */
static long side_for_footprint(double mb)
{
	long s = (long)sqrt((mb - 1.0) * 1048576.0 / 16.0) - 2;

	return s < 4 ? 4 : s;
}

static void grid_size(int argc, char **argv, int px, int py, long *nx, long *ny)
{
	double mb = args_double(argc, argv, "--footprint-mb", 0.0);

	if (mb > 0.0) {
		long s = side_for_footprint(mb);

		*nx = s * px;
		*ny = s * py;
	} else {
		*nx = args_ll(argc, argv, "--nx", 64);
		*ny = args_ll(argc, argv, "--ny", *nx);
	}
}

static void report(const struct block *b, const struct solve_result *r, int ok)
{
	printf("dirichlet grid=%ldx%ld procs=%dx%d iterations=%ld converged=%s "
	       "delta=%.6e residual=%.6e maxerr=%.6e checksum=%016" PRIx64 " %s\n",
	       b->nx, b->ny, b->px, b->py, r->iterations, r->converged ? "yes" : "no",
	       r->delta, r->residual, r->maxerr, r->checksum, ok ? "ok" : "FAIL");
}

int main(int argc, char **argv)
{
	int sequential = args_has(argc, argv, "--sequential") != 0;
	double tol = args_double(argc, argv, "--tol", 1e-8);
	long max_iters = args_ll(argc, argv, "--max-iters", 1000000);
	long check_every = args_ll(argc, argv, "--check-every", 10);
	double max_error = args_double(argc, argv, "--max-error", -1.0);
	int id = 0, n = 1, ok, px, py;
	long nx, ny;
	struct block b;
	struct solve_result r;
	double t0 = now();

	if (!sequential) {
		comm_check(msgInitialize(), "msgInitialize");
		comm_check(msgid(&id), "msgid");
		comm_check(msgn(&n), "msgn");
	}
	/* The footprint size depends on the process grid. */
	block_proc_grid(n, &px, &py);
	grid_size(argc, argv, px, py, &nx, &ny);
	if (check_every < 1 || max_iters < 1 || block_init(&b, nx, ny, id, n, !sequential)) {
		if (id == 0)
			fprintf(stderr, "dirichlet: bad sizes (grid %ldx%ld for %d ranks)\n", nx, ny, n);
		return 2;
	}
	jacobi_solve(&b, tol, max_iters, check_every, &r);
	ok = !(max_error >= 0.0 && (!r.converged || r.maxerr > max_error));
	if (id == 0) {
		report(&b, &r, ok);
		if (args_has(argc, argv, "--time"))
			fprintf(stderr, "dirichlet wall %.6f s\n", now() - t0);
	}
	block_free(&b);
	if (!sequential)
		comm_check(msgFinalize(), "msgFinalize");
	return ok ? 0 : 1;
}
