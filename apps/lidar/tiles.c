/* Tiles of the DTM grid (see tiles.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tiles.h"

/* Tile range [*a, *b] along one axis touched by v +- margin. */
static void touched(double v, double origin, double span, double margin, int count, int *a,
		    int *b)
{
	*a = (int)floor((v - margin - origin) / span);
	*b = (int)floor((v + margin - origin) / span);
	*a = *a < 0 ? 0 : *a;
	*b = *b >= count ? count - 1 : *b;
}

static void bin(struct tiling *T, const struct tile_pt *pts, int64_t n,
		const struct dtm_params *prm, int64_t *fill)
{
	double span = prm->tile * prm->cell;
	int64_t k;

	for (k = 0; k < n; k++) {
		int a, b, c, d, i, j;

		touched(pts[k].x, T->ox, span, prm->margin, T->tx, &a, &b);
		touched(pts[k].y, T->oy, span, prm->margin, T->ty, &c, &d);
		for (j = c; j <= d; j++)
			for (i = a; i <= b; i++) {
				int t = j * T->tx + i;

				if (fill)
					T->items[fill[t]++] = (int32_t)k;
				else
					T->start[t + 1]++;
			}
	}
}

int tiling_make(struct tiling *T, const struct tile_pt *pts, int64_t n,
		const struct dtm_params *prm)
{
	double mnx = INFINITY, mny = INFINITY, mxx = -INFINITY, mxy = -INFINITY;
	int64_t k, *fill;
	int t;

	memset(T, 0, sizeof *T);
	if (n < 1 || n > INT32_MAX)
		return -1;
	for (k = 0; k < n; k++) {
		mnx = pts[k].x < mnx ? pts[k].x : mnx;
		mny = pts[k].y < mny ? pts[k].y : mny;
		mxx = pts[k].x > mxx ? pts[k].x : mxx;
		mxy = pts[k].y > mxy ? pts[k].y : mxy;
	}
	T->ox = floor(mnx);
	T->oy = floor(mny);
	T->nx = (long)ceil((mxx - T->ox) / prm->cell);
	T->ny = (long)ceil((mxy - T->oy) / prm->cell);
	T->nx = T->nx < 1 ? 1 : T->nx;
	T->ny = T->ny < 1 ? 1 : T->ny;
	T->tile = prm->tile;
	T->tx = (int)((T->nx + prm->tile - 1) / prm->tile);
	T->ty = (int)((T->ny + prm->tile - 1) / prm->tile);
	T->ntiles = T->tx * T->ty;
	T->start = calloc((size_t)T->ntiles + 1, sizeof(int64_t));
	fill = malloc(sizeof(int64_t) * (size_t)T->ntiles);
	if (!T->start || !fill)
		return -1;
	bin(T, pts, n, prm, NULL);
	for (t = 0; t < T->ntiles; t++)
		T->start[t + 1] += T->start[t];
	T->items = malloc(sizeof(int32_t) * (size_t)(T->start[T->ntiles] + 1));
	if (!T->items)
		return -1;
	memcpy(fill, T->start, sizeof(int64_t) * (size_t)T->ntiles);
	bin(T, pts, n, prm, fill);
	free(fill);
	return 0;
}

void tiling_free(struct tiling *T)
{
	free(T->start);
	free(T->items);
	T->start = NULL;
	T->items = NULL;
}

struct tile_spec tiling_spec(const struct tiling *T, const struct dtm_params *prm, int t)
{
	struct tile_spec s;
	long i0 = (long)(t % T->tx) * prm->tile, j0 = (long)(t / T->tx) * prm->tile;

	memset(&s, 0, sizeof s);
	s.id = t;
	s.nx = (int32_t)(T->nx - i0 < prm->tile ? T->nx - i0 : prm->tile);
	s.ny = (int32_t)(T->ny - j0 < prm->tile ? T->ny - j0 : prm->tile);
	s.npts = (int32_t)(T->start[t + 1] - T->start[t]);
	s.x0 = T->ox + (double)i0 * prm->cell;
	s.y0 = T->oy + (double)j0 * prm->cell;
	s.ox = T->ox;
	s.oy = T->oy;
	return s;
}

struct tile_pt *tiling_points(const struct tiling *T, const struct tile_pt *pts, int t,
			      int *npts)
{
	int64_t a = T->start[t], b = T->start[t + 1], k;
	struct tile_pt *out = malloc(sizeof *out * (size_t)(b - a + 1));

	if (!out)
		return NULL;
	for (k = a; k < b; k++)
		out[k - a] = pts[T->items[k]];
	*npts = (int)(b - a);
	return out;
}

void tiling_store(const struct tiling *T, const struct tile_spec *s, const double *z,
		  double *grid)
{
	long i0 = (long)(s->id % T->tx) * T->tile, j0 = (long)(s->id / T->tx) * T->tile;
	int j;

	for (j = 0; j < s->ny; j++)
		memcpy(grid + (size_t)(j0 + j) * (size_t)T->nx + (size_t)i0, z + (size_t)j * s->nx,
		       sizeof(double) * (size_t)s->nx);
}
