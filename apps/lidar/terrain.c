/* Synthetic terrain model (see terrain.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "terrain.h"

uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double rng_uniform(struct rng *r, double lo, double hi)
{
	return lo + (hi - lo) * ((double)(rng_next(r) >> 11) * 0x1.0p-53);
}

double rng_normal(struct rng *r, double sigma)
{
	double u = rng_uniform(r, 1e-12, 1.0), v = rng_uniform(r, 0.0, 1.0);

	return sigma * sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

static double plane_and_hills(const struct terrain *t, double x, double y)
{
	double z = t->base + t->sx * (x - t->x0) + t->sy * (y - t->y0);
	int i;

	for (i = 0; i < t->nhills; i++) {
		const struct hill *h = &t->hills[i];
		double dx = x - h->cx, dy = y - h->cy;

		z += h->amp * exp(-(dx * dx + dy * dy) / (2.0 * h->sigma * h->sigma));
	}
	return z;
}

double terrain_ground(const struct terrain *t, double x, double y)
{
	return plane_and_hills(t, x, y);
}

static void place_buildings(struct terrain *t, struct rng *r)
{
	int i;

	for (i = 0; i < t->nbuild; i++) {
		struct building *b = &t->build[i];
		double w = rng_uniform(r, 8, 20), d = rng_uniform(r, 8, 20);
		double cx = t->x0 + rng_uniform(r, 20, t->size - 20);
		double cy = t->y0 + rng_uniform(r, 20, t->size - 20);

		b->x0 = cx - w / 2;
		b->x1 = cx + w / 2;
		b->y0 = cy - d / 2;
		b->y1 = cy + d / 2;
		b->roof = plane_and_hills(t, cx, cy) + rng_uniform(r, 4, 15);
	}
}

static void place_trees(struct terrain *t, struct rng *r)
{
	int i;

	for (i = 0; i < t->ntrees; i++) {
		struct tree *tr = &t->trees[i];

		tr->cx = t->x0 + rng_uniform(r, 0, t->size);
		tr->cy = t->y0 + rng_uniform(r, 0, t->size);
		tr->radius = rng_uniform(r, 2, 5);
		tr->height = rng_uniform(r, 5, 15);
	}
}

int terrain_make(struct terrain *t, uint64_t seed, double size, double x0, double y0)
{
	struct rng r = { seed };
	int i;

	t->seed = seed;
	t->size = size;
	t->x0 = x0;
	t->y0 = y0;
	t->base = rng_uniform(&r, 50, 150);
	t->sx = rng_uniform(&r, -0.02, 0.02);
	t->sy = rng_uniform(&r, -0.02, 0.02);
	/* Densities per hectare keep the look the same at any size. */
	t->nhills = 2 + (int)(size * size / 40000.0);
	t->nbuild = 1 + (int)(size * size / 8000.0);
	t->ntrees = 1 + (int)(size * size / 500.0);
	t->hills = calloc((size_t)t->nhills, sizeof *t->hills);
	t->build = calloc((size_t)t->nbuild, sizeof *t->build);
	t->trees = calloc((size_t)t->ntrees, sizeof *t->trees);
	if (!t->hills || !t->build || !t->trees) {
		terrain_free(t);
		return -1;
	}
	for (i = 0; i < t->nhills; i++) {
		struct hill *h = &t->hills[i];

		h->cx = x0 + rng_uniform(&r, 0, size);
		h->cy = y0 + rng_uniform(&r, 0, size);
		h->amp = rng_uniform(&r, -6, 15);
		h->sigma = rng_uniform(&r, 60, 150);
	}
	place_buildings(t, &r);
	place_trees(t, &r);
	return 0;
}

void terrain_free(struct terrain *t)
{
	free(t->hills);
	free(t->build);
	free(t->trees);
	t->hills = NULL;
	t->build = NULL;
	t->trees = NULL;
}

void terrain_describe(const struct terrain *t, char *buf, int len)
{
	snprintf(buf, (size_t)len, "seed=%" PRIu64 " size=%.17g x0=%.17g y0=%.17g", t->seed,
		 t->size, t->x0, t->y0);
}

int terrain_parse(const char *text, uint64_t *seed, double *size, double *x0, double *y0)
{
	return sscanf(text, "seed=%" SCNu64 " size=%lf x0=%lf y0=%lf", seed, size, x0, y0) == 4
		       ? 0
		       : -1;
}
