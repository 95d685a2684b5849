/* Cutting a point cloud into DTM tiles (with overlapping margins) and
 * assembling tile results into the global grid. Used by the manager and by
 * the sequential run alike. */
#ifndef TILES_H
#define TILES_H

#include <stdint.h>

#include "dtm.h"

struct tiling {
	double ox, oy;       /* grid origin (lower-left corner) */
	long nx, ny;         /* grid nodes */
	int tile;            /* nodes per tile side */
	int tx, ty, ntiles;  /* tiles along x, y; total */
	int64_t *start;      /* CSR over tiles: points of tile t are */
	int32_t *items;      /*   items[start[t] .. start[t+1]) in file order */
};

/* Lay out the grid over the points' extent and bin points to tiles. */
int tiling_make(struct tiling *T, const struct tile_pt *pts, int64_t n,
		const struct dtm_params *prm);
void tiling_free(struct tiling *T);

/* Spec of tile t and its points (malloc'd copy, *npts of them). */
struct tile_spec tiling_spec(const struct tiling *T, const struct dtm_params *prm, int t);
struct tile_pt *tiling_points(const struct tiling *T, const struct tile_pt *pts, int t,
			      int *npts);

/* Copy a tile's nodes into the global grid (ny rows of nx). */
void tiling_store(const struct tiling *T, const struct tile_spec *s, const double *z,
		  double *grid);

#endif
