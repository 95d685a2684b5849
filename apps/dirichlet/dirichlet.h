/* Dirichlet problem (Laplace's equation, fixed boundary values) on a 2-D
 * grid, solved by Jacobi iteration with a 2-D block decomposition. */
#ifndef DIRICHLET_H
#define DIRICHLET_H

#include <stdint.h>

/* This rank's block of the global NX x NY interior grid. */
struct block {
	long nx, ny;      /* global interior size */
	int px, py;       /* process grid */
	int cx, cy;       /* this rank's position in it */
	long x0, y0;      /* global index (1-based interior) of the first owned point */
	long lnx, lny;    /* owned points; arrays are (lnx+2) x (lny+2) with halos */
	int nbr[4];       /* neighbour ranks W, E, S, N, or -1 at the global boundary */
	int parallel;     /* 0 in --sequential mode: no msg calls at all */
	double *u, *v;    /* current and next iterate */
};

enum { DIR_W, DIR_E, DIR_S, DIR_N };

/* Index of local point (i, j), 0 <= i <= lnx+1, 0 <= j <= lny+1. */
#define AT(b, i, j) ((size_t)(j) * (size_t)((b)->lnx + 2) + (size_t)(i))

/* The exact solution, harmonic and quadratic, so the 5-point stencil has
 * it as its exact discrete solution: the error is a real check. */
double dirichlet_exact(const struct block *b, long gi, long gj);

/* px*py = n with px the largest divisor of n not above sqrt(n). */
void block_proc_grid(int n, int *px, int *py);

/* Split nx x ny among n ranks (px*py = n, as square as possible), allocate
 * and initialise this rank's block. Returns 0, or -1 if too many ranks. */
int block_init(struct block *b, long nx, long ny, int id, int n, int parallel);
void block_free(struct block *b);

/* Fill u's halo from the four neighbours (send all, then receive all:
 * msgsend is eager, so this cannot deadlock). */
void halo_exchange(struct block *b, double *u);

/* Results of a solve. */
struct solve_result {
	long iterations;
	double delta;     /* last max |u_new - u_old| */
	double residual;  /* max |discrete Laplacian| of the final iterate */
	double maxerr;    /* max |u - exact| */
	uint64_t checksum;
	int converged;
};

void jacobi_solve(struct block *b, double tol, long max_iters, long check_every,
		  struct solve_result *res);

#endif
