/* Digital terrain model of one tile: lowest-return filtering and
 * inverse-distance interpolation with kd-trees. A tile's result depends
 * only on its spec and its points (in the order given), so the whole DTM is
 * the same whichever worker computed which tile. */
#ifndef DTM_H
#define DTM_H

#include <stdint.h>

/* A point as shipped to workers: 32 bytes, no padding. */
struct tile_pt {
	double x, y, z;
	int32_t ret, nret;
};

/* One tile: nx x ny cells of size cell, first cell's lower-left corner at
 * (x0, y0); seed windows are aligned to (ox, oy), the grid's origin. */
struct tile_spec {
	int32_t id, nx, ny, npts;
	double x0, y0, ox, oy;
};

struct dtm_params {
	double cell;   /* DTM cell size (m) */
	int tile;      /* cells per tile side */
	double margin; /* extra metres of points around a tile */
	double window; /* seed window (m): larger than the largest building */
	double dz;     /* max height above/below the seed surface for ground */
	int k_seed;    /* neighbours for the seed surface */
	int k_idw;     /* neighbours for the final interpolation */
	int passes;    /* ground classification passes (>= 1) */
	double max_slope; /* steepest terrain expected (dz/dx) */
};

#define DTM_NODATA (-9999.0)

void dtm_default_params(struct dtm_params *p);

/* Fill z[ny*nx] (row-major, south to north) for the tile; *nground gets
 * the number of points classified as ground. Returns 0 or -1 (memory). */
int dtm_tile(const struct tile_spec *s, const struct tile_pt *pts, int n,
	     const struct dtm_params *prm, double *z, int *nground);

#endif
