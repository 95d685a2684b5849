/* DTM of one tile (see dtm.h):
 *  1. keep last returns (the only ones that can reach the ground);
 *  2. seeds: in every window of the global seed lattice, the third-lowest
 *     last return (the lowest would trust a single low outlier);
 *  3. ground: last returns within dz of the seed surface (a least-squares
 *     plane through the nearest seeds, found with a kd-tree; a plane
 *     follows slopes that inverse-distance weighting would flatten);
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

/* Least-squares plane z = a + b dx + c dy through the k nearest points,
 * evaluated at q (dx, dy relative to q, so the answer is a). Falls back to
 * IDW when the points are (nearly) collinear. */
static double plane(const struct kdtree *t, const double *val, struct xy q, int k, int *ids,
		    double *d2)
{
	double s[3][3] = { { 0 } }, r[3] = { 0 }, det, a;
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
	/* Cramer's rule for the intercept. */
	det = s[0][0] * (s[1][1] * s[2][2] - s[1][2] * s[2][1]) -
	      s[0][1] * (s[1][0] * s[2][2] - s[1][2] * s[2][0]) +
	      s[0][2] * (s[1][0] * s[2][1] - s[1][1] * s[2][0]);
	if (fabs(det) < 1e-9 * (s[1][1] * s[2][2] + 1.0))
		return idw(t, val, q, k, ids, d2);
	a = r[0] * (s[1][1] * s[2][2] - s[1][2] * s[2][1]) -
	    s[0][1] * (r[1] * s[2][2] - s[1][2] * r[2]) +
	    s[0][2] * (r[1] * s[2][1] - s[1][1] * r[2]);
	return a / det;
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
		pick = j - i >= 3 ? i + 2 : i;
		sp[ns] = lp[c[pick].i];
		sz[ns++] = c[pick].z;
		i = j;
	}
	return ns;
}

int dtm_tile(const struct tile_spec *s, const struct tile_pt *pts, int n,
	     const struct dtm_params *prm, double *z, int *nground)
{
	int k = prm->k_seed > prm->k_idw ? prm->k_seed : prm->k_idw;
	struct xy *lp = malloc(sizeof(struct xy) * (size_t)(n + 1));
	struct xy *sp = malloc(sizeof(struct xy) * (size_t)(n + 1));
	struct xy *gp = malloc(sizeof(struct xy) * (size_t)(n + 1));
	double *lz = malloc(sizeof(double) * (size_t)(n + 1));
	double *sz = malloc(sizeof(double) * (size_t)(n + 1));
	double *gz = malloc(sizeof(double) * (size_t)(n + 1));
	struct cand *c = malloc(sizeof(struct cand) * (size_t)(n + 1));
	int *ids = malloc(sizeof(int) * (size_t)k);
	double *d2 = malloc(sizeof(double) * (size_t)k);
	struct kdtree seeds = { 0 }, ground = { 0 };
	int i, j, nl = 0, ns, ng = 0, rc = -1;

	if (!lp || !sp || !gp || !lz || !sz || !gz || !c || !ids || !d2)
		goto out;
	for (i = 0; i < n; i++) /* step 1 */
		if (pts[i].ret == pts[i].nret) {
			lp[nl].x = pts[i].x;
			lp[nl].y = pts[i].y;
			lz[nl++] = pts[i].z;
		}
	ns = pick_seeds(s, prm, lp, lz, nl, c, sp, sz);
	if (kd_build(&seeds, sp, ns))
		goto out;
	for (i = 0; i < nl; i++) { /* step 3 */
		double surf = plane(&seeds, sz, lp[i], prm->k_seed, ids, d2);

		if (fabs(lz[i] - surf) < prm->dz) {
			gp[ng] = lp[i];
			gz[ng++] = lz[i];
		}
	}
	if (kd_build(&ground, gp, ng))
		goto out;
	for (j = 0; j < s->ny; j++) /* step 4 */
		for (i = 0; i < s->nx; i++) {
			struct xy q = { s->x0 + (i + 0.5) * prm->cell, s->y0 + (j + 0.5) * prm->cell };

			z[(size_t)j * s->nx + i] = idw(&ground, gz, q, prm->k_idw, ids, d2);
		}
	*nground = ng;
	rc = 0;
out:
	kd_free(&seeds);
	kd_free(&ground);
	free(lp), free(sp), free(gp), free(lz), free(sz), free(gz), free(c), free(ids), free(d2);
	return rc;
}
