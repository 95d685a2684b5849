/* Synthetic LiDAR survey as a LAS file: pulses at random positions over
 * the terrain model (terrain.h) give single ground or roof returns, or 2-3
 * returns through tree crowns (last often on the ground), plus measurement
 * noise and rare low/high outliers. Classes follow ASPRS: 2 ground,
 * 5 high vegetation, 6 building, 7 noise. Deterministic for a seed.
 *
 *   lidar_gen --out F.las [--points N] [--size M] [--seed S]
 *             [--version 1.2|1.4] [--format 0-3] [--x0 X --y0 Y]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "las.h"
#include "terrain.h"

#define BUCKET 10.0 /* metres per lookup cell for trees and buildings */

/* Objects overlapping each lookup cell, so a pulse checks only a few. */
struct lookup {
	int nc;
	int *start, *items; /* CSR: items[start[c] .. start[c+1]) */
};

static int cell_of(const struct terrain *t, int nc, double x, double y)
{
	int cx = (int)((x - t->x0) / BUCKET), cy = (int)((y - t->y0) / BUCKET);

	cx = cx < 0 ? 0 : cx >= nc ? nc - 1 : cx;
	cy = cy < 0 ? 0 : cy >= nc ? nc - 1 : cy;
	return cy * nc + cx;
}

/* Register object i (box x0..x1, y0..y1) in every cell it touches;
 * pass 0 counts, pass 1 fills. */
static void mark(struct lookup *L, const struct terrain *t, int pass, int i, double x0,
		 double y0, double x1, double y1, int *fill)
{
	int a = cell_of(t, L->nc, x0, y0), b = cell_of(t, L->nc, x1, y1), cx, cy;

	for (cy = a / L->nc; cy <= b / L->nc; cy++)
		for (cx = a % L->nc; cx <= b % L->nc; cx++) {
			int c = cy * L->nc + cx;

			if (pass == 0)
				L->start[c + 1]++;
			else
				L->items[fill[c]++] = i;
		}
}

/* Trees are items 0..ntrees-1, buildings ntrees.. */
static int lookup_build(struct lookup *L, const struct terrain *t)
{
	int pass, i, c, total, *fill;

	L->nc = (int)ceil(t->size / BUCKET);
	L->start = calloc((size_t)L->nc * L->nc + 1, sizeof(int));
	fill = calloc((size_t)L->nc * L->nc, sizeof(int));
	if (!L->start || !fill)
		return -1;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < t->ntrees; i++) {
			const struct tree *tr = &t->trees[i];

			mark(L, t, pass, i, tr->cx - tr->radius, tr->cy - tr->radius,
			     tr->cx + tr->radius, tr->cy + tr->radius, fill);
		}
		for (i = 0; i < t->nbuild; i++) {
			const struct building *b = &t->build[i];

			mark(L, t, pass, t->ntrees + i, b->x0, b->y0, b->x1, b->y1, fill);
		}
		if (pass == 0) {
			for (c = 0; c < L->nc * L->nc; c++)
				L->start[c + 1] += L->start[c];
			total = L->start[L->nc * L->nc];
			L->items = malloc((size_t)(total ? total : 1) * sizeof(int));
			if (!L->items)
				return -1;
			memcpy(fill, L->start, (size_t)L->nc * L->nc * sizeof(int));
		}
	}
	free(fill);
	return 0;
}

static void set_point(struct las_point *p, double x, double y, double z, int ret, int nret,
		      int cls, double t, struct rng *r)
{
	memset(p, 0, sizeof *p);
	p->x = x;
	p->y = y;
	p->z = z + rng_normal(r, 0.03);
	p->return_number = (uint8_t)ret;
	p->number_of_returns = (uint8_t)nret;
	p->classification = (uint8_t)cls;
	p->gps_time = t;
	p->intensity = (uint16_t)(cls == 2 ? 300 + rng_next(r) % 200 : 100 + rng_next(r) % 150);
	p->red = (uint16_t)(cls == 5 ? 8000 : cls == 6 ? 40000 : 30000);
	p->green = (uint16_t)(cls == 5 ? 40000 : 30000);
	p->blue = (uint16_t)(cls == 6 ? 40000 : 20000);
}

/* Returns of one pulse at (x, y) into out (up to 3); their count. */
static int pulse(const struct terrain *t, const struct lookup *L, double x, double y,
		 double time, struct rng *r, struct las_point *out)
{
	double g = terrain_ground(t, x, y), u = rng_uniform(r, 0, 1);
	int c = cell_of(t, L->nc, x, y), k;

	if (u < 0.0005) { /* low outlier (multipath) */
		set_point(out, x, y, g - rng_uniform(r, 5, 20), 1, 1, 7, time, r);
		return 1;
	}
	if (u < 0.001) { /* high outlier (bird) */
		set_point(out, x, y, g + rng_uniform(r, 30, 80), 1, 1, 7, time, r);
		return 1;
	}
	for (k = L->start[c]; k < L->start[c + 1]; k++) {
		int i = L->items[k];

		if (i >= t->ntrees) {
			const struct building *b = &t->build[i - t->ntrees];

			if (x >= b->x0 && x < b->x1 && y >= b->y0 && y < b->y1) {
				set_point(out, x, y, b->roof, 1, 1, 6, time, r);
				return 1;
			}
		}
	}
	for (k = L->start[c]; k < L->start[c + 1]; k++) {
		int i = L->items[k];
		const struct tree *tr;
		double d, top;
		int n;

		if (i >= t->ntrees)
			continue;
		tr = &t->trees[i];
		d = hypot(x - tr->cx, y - tr->cy);
		if (d >= tr->radius)
			continue;
		top = g + tr->height * (1.0 - 0.4 * (d / tr->radius) * (d / tr->radius));
		n = rng_uniform(r, 0, 1) < 0.5 ? 2 : 3;
		set_point(&out[0], x, y, top, 1, n, 5, time, r);
		if (n == 3)
			set_point(&out[1], x, y, rng_uniform(r, g + 2.0, top - 0.5), 2, 3, 5, time, r);
		if (rng_uniform(r, 0, 1) < 0.75)
			set_point(&out[n - 1], x, y, g, n, n, 2, time, r);
		else
			set_point(&out[n - 1], x, y, g + rng_uniform(r, 0.8, 3.0), n, n, 5, time, r);
		return n;
	}
	set_point(out, x, y, g, 1, 1, 2, time, r);
	return 1;
}

int main(int argc, char **argv)
{
	const char *out = args_str(argc, argv, "--out", NULL);
	long long npts = args_ll(argc, argv, "--points", 200000);
	double size = args_double(argc, argv, "--size", 300.0);
	uint64_t seed = (uint64_t)args_ll(argc, argv, "--seed", 1);
	double ver = args_double(argc, argv, "--version", 1.2);
	int format = (int)args_ll(argc, argv, "--format", 1);
	double x0 = args_double(argc, argv, "--x0", 500000.0);
	double y0 = args_double(argc, argv, "--y0", 4100000.0);
	double scale[3] = { 0.01, 0.01, 0.01 }, offset[3] = { x0, y0, 0.0 };
	struct terrain t;
	struct lookup L;
	struct las_point *pts;
	struct rng r = { seed ^ 0x5eed5eedULL };
	long long n = 0, p = 0;
	char text[256], err[256];

	if (!out || npts < 1 || size < 50) {
		fprintf(stderr, "usage: lidar_gen --out F.las [--points N] [--size M>=50] [--seed S] "
				"[--version 1.2|1.4] [--format 0-3]\n");
		return 2;
	}
	if (terrain_make(&t, seed, size, x0, y0) || lookup_build(&L, &t) ||
	    !(pts = malloc((size_t)(npts + 3) * sizeof *pts))) {
		fprintf(stderr, "lidar_gen: out of memory\n");
		return 1;
	}
	while (n < npts) {
		double x = x0 + rng_uniform(&r, 0, size), y = y0 + rng_uniform(&r, 0, size);

		n += pulse(&t, &L, x, y, 1.0e5 + 1e-5 * (double)p++, &r, pts + n);
	}
	terrain_describe(&t, text, sizeof text);
	if (las_write(out, ver > 1.3 ? 4 : 2, format, scale, offset, pts, (uint64_t)npts, text, err,
		      sizeof err)) {
		fprintf(stderr, "lidar_gen: %s\n", err);
		return 1;
	}
	printf("lidar_gen: wrote %lld points (LAS 1.%d format %d) to %s; %s\n", npts,
	       ver > 1.3 ? 4 : 2, format, out, text);
	free(pts);
	terrain_free(&t);
	return 0;
}
