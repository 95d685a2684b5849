/* DTM of one tile (see dtm.h):
 *  1. keep last returns (the only ones that can reach the ground);
 *  2. seeds: in every window of the global seed lattice, a low quantile
 *     (2 % + 2 points) of the last returns: the lowest would trust low
 *     outliers;
 *  3. ground: last returns within dz of a least-squares plane through the
 *     nearest seeds (found with a kd-tree; a plane follows slopes that
 *     inverse-distance weighting would flatten), then again against planes
 *     through the ground found so far (progressive densification: denser
 *     references follow the curvature of hills);
 *  4. every DTM node: IDW (power 2) of the nearest ground points.
 */
#include <math.h>
#include <stdlib.h>

#include "dtm.h"
#include "kdtree.h"

void dtm_default_params(struct dtm_params *p)
{
	p->cell = 1.0;
	p->tile = 64;
	p->margin = 30.0;
	p->window = 24.0;
	p->dz = 1.0;
	p->k_seed = 6;
	p->k_idw = 8;
	p->passes = 3;
	p->max_slope = 0.3;
}

struct cand {
	long long key; /* seed window */
	double z;
	int i;         /* index among last returns */
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *p = a, *q = b;

	if (p->key != q->key)
		return p->key < q->key ? -1 : 1;
	if (p->z != q->z)
		return p->z < q->z ? -1 : 1;
	return (p->i > q->i) - (p->i < q->i);
}

/* IDW at q from the k nearest of tree's points (values in val). */
static double idw(const struct kdtree *t, const double *val, struct xy q, int k, int *ids,
		  double *d2)
{
	double num = 0.0, den = 0.0;
	int m = kd_knn(t, q, k, ids, d2), j;

	if (m == 0)
		return DTM_NODATA;
	if (d2[0] < 1e-12)
		return val[ids[0]];
	for (j = 0; j < m; j++) {
		double w = 1.0 / d2[j];

		num += w * val[ids[j]];
		den += w;
	}
	return num / den;
}

static double det3(const double m[3][3])
{
	return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
	       m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
	       m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

/* Solve m x = r by Cramer's rule; 0 if (nearly) singular. */
static int solve3(const double m[3][3], const double r[3], double x[3])
{
	double d = det3(m), t[3][3];
	int col, i, j;

	if (fabs(d) < 1e-9 * (m[1][1] * m[2][2] + 1.0))
		return 0;
	for (col = 0; col < 3; col++) {
		for (i = 0; i < 3; i++)
			for (j = 0; j < 3; j++)
				t[i][j] = j == col ? r[i] : m[i][j];
		x[col] = det3(t) / d;
	}
	return 1;
}

/* Least-squares plane z = a + b dx + c dy through the k nearest points,
 * evaluated at q (dx, dy relative to q, so the answer is a). A plane that
 * is steeper than max_slope (points on one side, or on a roof and beside
 * it) would extrapolate wildly: then IDW, which stays within the points'
 * range. */
static double plane(const struct kdtree *t, const double *val, struct xy q, int k,
		    double max_slope, int *ids, double *d2)
{
	double s[3][3] = { { 0 } }, r[3] = { 0 }, x[3];
	int m = kd_knn(t, q, k, ids, d2), j;

	if (m < 3)
		return idw(t, val, q, k, ids, d2);
	for (j = 0; j < m; j++) {
		double v[3] = { 1.0, t->pts[ids[j]].x - q.x, t->pts[ids[j]].y - q.y };
		int u, w;

		for (u = 0; u < 3; u++) {
			for (w = 0; w < 3; w++)
				s[u][w] += v[u] * v[w];
			r[u] += v[u] * val[ids[j]];
		}
	}
	if (!solve3(s, r, x) || x[1] * x[1] + x[2] * x[2] > max_slope * max_slope)
		return idw(t, val, q, k, ids, d2);
	return x[0];
}

/* Step 2: one seed per window; returns the count. */
static int pick_seeds(const struct tile_spec *s, const struct dtm_params *prm,
		      const struct xy *lp, const double *lz, int nl, struct cand *c,
		      struct xy *sp, double *sz)
{
	int i, ns = 0;

	for (i = 0; i < nl; i++) {
		long long wx = (long long)floor((lp[i].x - s->ox) / prm->window);
		long long wy = (long long)floor((lp[i].y - s->oy) / prm->window);

		c[i].key = wy * 1000003LL + wx;
		c[i].z = lz[i];
		c[i].i = i;
	}
	qsort(c, (size_t)nl, sizeof *c, cand_cmp);
	for (i = 0; i < nl;) {
		int j = i, pick;

		while (j < nl && c[j].key == c[i].key)
			j++;
		/* A low quantile, not the minimum: low outliers (multipath)
		 * come a few per window at most. */
		pick = i + (j - i) / 50 + 2;
		pick = pick < j ? pick : j - 1;
		sp[ns] = lp[c[pick].i];
		sz[ns++] = c[pick].z;
		i = j;
	}
	return ns;
}

/* Last returns within dz of the plane through their nearest reference
 * points go to (gp, gz); returns how many. */
static int classify(const struct kdtree *ref, const double *refz, const struct xy *lp,
		    const double *lz, int nl, const struct dtm_params *prm, struct xy *gp,
		    double *gz, int *ids, double *d2)
{
	int i, ng = 0;

	for (i = 0; i < nl; i++) {
		double surf = plane(ref, refz, lp[i], prm->k_seed, prm->max_slope, ids, d2);

		if (fabs(lz[i] - surf) < prm->dz) {
			gp[ng] = lp[i];
			gz[ng++] = lz[i];
		}
	}
	return ng;
}

/* Working arrays of one tile, all sized for n points. */
struct work {
	struct xy *lp, *rp, *gp;
	double *lz, *rz, *gz;
	struct cand *c;
	int *ids;
	double *d2;
};

static int work_alloc(struct work *w, int n, int k)
{
	size_t m = (size_t)n + 1;

	w->lp = malloc(sizeof(struct xy) * m);
	w->rp = malloc(sizeof(struct xy) * m);
	w->gp = malloc(sizeof(struct xy) * m);
	w->lz = malloc(sizeof(double) * m);
	w->rz = malloc(sizeof(double) * m);
	w->gz = malloc(sizeof(double) * m);
	w->c = malloc(sizeof(struct cand) * m);
	w->ids = malloc(sizeof(int) * (size_t)k);
	w->d2 = malloc(sizeof(double) * (size_t)k);
	return w->lp && w->rp && w->gp && w->lz && w->rz && w->gz && w->c && w->ids && w->d2
		       ? 0
		       : -1;
}

static void work_free(struct work *w)
{
	free(w->lp);
	free(w->rp);
	free(w->gp);
	free(w->lz);
	free(w->rz);
	free(w->gz);
	free(w->c);
	free(w->ids);
	free(w->d2);
}

int dtm_tile(const struct tile_spec *s, const struct tile_pt *pts, int n,
	     const struct dtm_params *prm, double *z, int *nground)
{
	int k = prm->k_seed > prm->k_idw ? prm->k_seed : prm->k_idw;
	struct work w;
	struct kdtree ref = { 0 };
	int i, j, nl = 0, nr, ng = 0, pass, rc = -1;

	if (work_alloc(&w, n, k))
		goto out;
	for (i = 0; i < n; i++) /* step 1 */
		if (pts[i].ret == pts[i].nret) {
			w.lp[nl].x = pts[i].x;
			w.lp[nl].y = pts[i].y;
			w.lz[nl++] = pts[i].z;
		}
	nr = pick_seeds(s, prm, w.lp, w.lz, nl, w.c, w.rp, w.rz);
	/* Step 3, progressive: each pass fits planes to the previous pass's
	 * ground, which is denser than the seeds and so follows curvature. */
	for (pass = 0; pass < prm->passes; pass++) {
		struct xy *tp;
		double *tz;

		if (kd_build(&ref, w.rp, nr))
			goto out;
		ng = classify(&ref, w.rz, w.lp, w.lz, nl, prm, w.gp, w.gz, w.ids, w.d2);
		kd_free(&ref);
		tp = w.rp, w.rp = w.gp, w.gp = tp;
		tz = w.rz, w.rz = w.gz, w.gz = tz;
		nr = ng;
	}
	if (kd_build(&ref, w.rp, nr))
		goto out;
	for (j = 0; j < s->ny; j++) /* step 4 */
		for (i = 0; i < s->nx; i++) {
			struct xy q = { s->x0 + (i + 0.5) * prm->cell, s->y0 + (j + 0.5) * prm->cell };

			z[(size_t)j * s->nx + i] = idw(&ref, w.rz, q, prm->k_idw, w.ids, w.d2);
		}
	*nground = ng;
	rc = 0;
out:
	kd_free(&ref);
	work_free(&w);
	return rc;
}
