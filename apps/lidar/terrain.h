/* Synthetic terrain for the lidar exemplar: a seeded model of ground
 * (slope + Gaussian hills), buildings and trees. The generator samples it
 * into a LAS file; the DTM program rebuilds it from the parameters stored
 * in the file to measure its error against the true ground. */
#ifndef TERRAIN_H
#define TERRAIN_H

#include <stdint.h>

/* Deterministic PRNG (splitmix64): same seed, same terrain, everywhere. */
struct rng {
	uint64_t s;
};
uint64_t rng_next(struct rng *r);
double rng_uniform(struct rng *r, double lo, double hi);
double rng_normal(struct rng *r, double sigma);

struct hill { double cx, cy, amp, sigma; };
struct building { double x0, y0, x1, y1, roof; }; /* roof: absolute elevation */
struct tree { double cx, cy, radius, height; };

struct terrain {
	uint64_t seed;
	double size, x0, y0;      /* square [x0, x0+size) x [y0, y0+size) */
	double base, sx, sy;      /* plane: base + sx*(x-x0) + sy*(y-y0) */
	int nhills, nbuild, ntrees;
	struct hill *hills;
	struct building *build;
	struct tree *trees;
};

/* Build the model; returns 0 or -1 (out of memory). */
int terrain_make(struct terrain *t, uint64_t seed, double size, double x0, double y0);
void terrain_free(struct terrain *t);

/* True ground elevation at (x, y). */
double terrain_ground(const struct terrain *t, double x, double y);

/* The parameters as text ("seed=.. size=.. x0=.. y0=..") and back. */
void terrain_describe(const struct terrain *t, char *buf, int len);
int terrain_parse(const char *text, uint64_t *seed, double *size, double *x0, double *y0);

#endif
