/* Block decomposition and initial values (see dirichlet.h). */
#include <stdlib.h>
#include <string.h>

#include "dirichlet.h"

double dirichlet_exact(const struct block *b, long gi, long gj)
{
	/* One spacing in both directions: the 5-point stencil assumes it. */
	double h = 1.0 / (double)((b->nx > b->ny ? b->nx : b->ny) + 1);
	double x = (double)gi * h, y = (double)gj * h;

	return x * x - y * y + 0.5 * x * y;
}

void block_proc_grid(int n, int *px, int *py)
{
	int d;

	*px = 1;
	for (d = 1; (long)d * d <= n; d++)
		if (n % d == 0)
			*px = d;
	*py = n / *px;
}

/* Share len points among parts; part k gets [start, start+count). */
static void split(long len, int parts, int k, long *start, long *count)
{
	long base = len / parts, extra = len % parts;

	*start = k * base + (k < extra ? k : extra);
	*count = base + (k < extra ? 1 : 0);
}

/* Global boundary values in both arrays; interior starts at zero. */
static void set_boundary(struct block *b)
{
	long i, j;

	for (j = 0; j <= b->lny + 1; j++) {
		for (i = 0; i <= b->lnx + 1; i++) {
			long gi = b->x0 - 1 + i, gj = b->y0 - 1 + j;
			int edge = gi == 0 || gj == 0 || gi == b->nx + 1 || gj == b->ny + 1;
			double g = edge ? dirichlet_exact(b, gi, gj) : 0.0;

			b->u[AT(b, i, j)] = g;
			b->v[AT(b, i, j)] = g;
		}
	}
}

int block_init(struct block *b, long nx, long ny, int id, int n, int parallel)
{
	size_t cells;

	memset(b, 0, sizeof *b);
	b->nx = nx;
	b->ny = ny;
	b->parallel = parallel;
	block_proc_grid(n, &b->px, &b->py);
	/* Put the longer process side along the longer grid side. */
	if ((nx > ny) != (b->px > b->py)) {
		int t = b->px;

		b->px = b->py;
		b->py = t;
	}
	if (b->px > nx || b->py > ny)
		return -1;
	b->cx = id % b->px;
	b->cy = id / b->px;
	split(nx, b->px, b->cx, &b->x0, &b->lnx);
	split(ny, b->py, b->cy, &b->y0, &b->lny);
	b->x0 += 1;
	b->y0 += 1;
	b->nbr[DIR_W] = b->cx > 0 ? id - 1 : -1;
	b->nbr[DIR_E] = b->cx < b->px - 1 ? id + 1 : -1;
	b->nbr[DIR_S] = b->cy > 0 ? id - b->px : -1;
	b->nbr[DIR_N] = b->cy < b->py - 1 ? id + b->px : -1;
	cells = (size_t)(b->lnx + 2) * (size_t)(b->lny + 2);
	b->u = malloc(cells * sizeof(double));
	b->v = malloc(cells * sizeof(double));
	if (!b->u || !b->v)
		return -1;
	set_boundary(b);
	return 0;
}

void block_free(struct block *b)
{
	free(b->u);
	free(b->v);
	b->u = b->v = NULL;
}
