/* Halo exchange with the four neighbours (see dirichlet.h). */
#include <stdlib.h>

#include "comm.h"
#include "dirichlet.h"

/* A message travelling in direction d carries tag HALO_TAG + d. */
#define HALO_TAG 10

static const int opposite[4] = { DIR_E, DIR_W, DIR_N, DIR_S };

/* Copy a row or column next to the edge facing d (inner = 1) or the halo
 * on that side (inner = 0) to or from buf. */
static void edge_copy(struct block *b, double *u, int d, int inner, double *buf, int out)
{
	long k, len = (d == DIR_W || d == DIR_E) ? b->lny : b->lnx;

	for (k = 1; k <= len; k++) {
		long i, j;

		switch (d) {
		case DIR_W: i = inner ? 1 : 0; j = k; break;
		case DIR_E: i = inner ? b->lnx : b->lnx + 1; j = k; break;
		case DIR_S: i = k; j = inner ? 1 : 0; break;
		default: i = k; j = inner ? b->lny : b->lny + 1; break;
		}
		if (out)
			buf[k - 1] = u[AT(b, i, j)];
		else
			u[AT(b, i, j)] = buf[k - 1];
	}
}

void halo_exchange(struct block *b, double *u)
{
	long len = b->lnx > b->lny ? b->lnx : b->lny;
	double *buf = malloc((size_t)len * sizeof(double));
	int d;

	if (!buf)
		comm_check(MSG_ENOMEM, "halo buffer");
	for (d = 0; d < 4; d++) {
		long n = (d == DIR_W || d == DIR_E) ? b->lny : b->lnx;

		if (b->nbr[d] < 0)
			continue;
		edge_copy(b, u, d, 1, buf, 1);
		comm_send(b->nbr[d], HALO_TAG + d, buf, (size_t)n * sizeof(double));
	}
	for (d = 0; d < 4; d++) {
		long n = (d == DIR_W || d == DIR_E) ? b->lny : b->lnx;

		if (b->nbr[d] < 0)
			continue;
		/* The neighbour on side d sent towards us: direction opposite[d]. */
		comm_recv(b->nbr[d], HALO_TAG + opposite[d], buf, (size_t)n * sizeof(double),
			  NULL, NULL);
		edge_copy(b, u, d, 0, buf, 0);
	}
	free(buf);
}
