/* Jacobi iteration with a global convergence test (see dirichlet.h).
 *
 * Every new value depends only on the four old neighbours, evaluated in a
 * fixed expression order, so the iterates are bit-identical for any
 * decomposition; the global tests use max (exact) and a sum of per-point
 * hashes (order-free), so iterations, residual and checksum equal the
 * sequential reference. */
#include <math.h>

#include "comm.h"
#include "dirichlet.h"
#include "hash.h"

static double global_max(const struct block *b, double v)
{
	return b->parallel ? comm_allreduce_max(v) : v;
}

static void exchange(struct block *b, double *u)
{
	if (b->parallel)
		halo_exchange(b, u);
}

/* One sweep u -> v; returns this block's max change. */
static double sweep(struct block *b, const double *u, double *v)
{
	size_t w = (size_t)b->lnx + 2;
	double dmax = 0.0;
	long i, j;

	for (j = 1; j <= b->lny; j++) {
		const double *row = u + (size_t)j * w;
		double *out = v + (size_t)j * w;

		for (i = 1; i <= b->lnx; i++) {
			double nv = 0.25 * ((row[i - 1] + row[i + 1]) + (row[i - w] + row[i + w]));
			double d = fabs(nv - row[i]);

			out[i] = nv;
			if (d > dmax)
				dmax = d;
		}
	}
	return dmax;
}

/* Max |discrete Laplacian| and max error against the exact solution. */
static void measure(struct block *b, const double *u, double *res, double *err)
{
	size_t w = (size_t)b->lnx + 2;
	long i, j;

	*res = 0.0;
	*err = 0.0;
	for (j = 1; j <= b->lny; j++) {
		for (i = 1; i <= b->lnx; i++) {
			size_t k = (size_t)j * w + (size_t)i;
			double r = fabs((u[k - 1] + u[k + 1]) + (u[k - w] + u[k + w]) - 4.0 * u[k]);
			double e = fabs(u[k] - dirichlet_exact(b, b->x0 - 1 + i, b->y0 - 1 + j));

			if (r > *res)
				*res = r;
			if (e > *err)
				*err = e;
		}
	}
}

static uint64_t checksum(const struct block *b, const double *u)
{
	uint64_t s = 0;
	long i, j;

	for (j = 1; j <= b->lny; j++)
		for (i = 1; i <= b->lnx; i++) {
			uint64_t gidx = (uint64_t)(b->y0 - 1 + j) * (uint64_t)(b->nx + 2) +
					(uint64_t)(b->x0 - 1 + i);

			s += hash_point(gidx, u[AT(b, i, j)]);
		}
	return s;
}

void jacobi_solve(struct block *b, double tol, long max_iters, long check_every,
		  struct solve_result *res)
{
	double delta = 0.0;
	long it = 0;

	res->converged = 0;
	while (it < max_iters) {
		double *t;

		exchange(b, b->u);
		delta = sweep(b, b->u, b->v);
		t = b->u;
		b->u = b->v;
		b->v = t;
		it++;
		if (it % check_every == 0 || it == max_iters) {
			delta = global_max(b, delta);
			if (delta < tol) {
				res->converged = 1;
				break;
			}
		}
	}
	exchange(b, b->u);
	measure(b, b->u, &res->residual, &res->maxerr);
	res->residual = global_max(b, res->residual);
	res->maxerr = global_max(b, res->maxerr);
	res->checksum = checksum(b, b->u);
	if (b->parallel)
		res->checksum = comm_allreduce_sum_u64(res->checksum);
	res->iterations = it;
	res->delta = delta;
}
