/* kd-tree k-nearest queries against brute force, on random points with
 * many duplicates and ties (the tie order by index must match too). */
#include <stdio.h>
#include <stdlib.h>

#include "kdtree.h"
#include "terrain.h"

#define N 3000
#define K 9

/* Brute force: the k smallest (d2, id) pairs, sorted. */
static int brute(const struct xy *p, int n, struct xy q, int k, int *ids, double *d2)
{
	int m = 0, i, j;

	for (i = 0; i < n; i++) {
		double dx = p[i].x - q.x, dy = p[i].y - q.y, d = dx * dx + dy * dy;

		if (m == k && (d > d2[m - 1] || (d == d2[m - 1] && i > ids[m - 1])))
			continue;
		j = m < k ? m++ : k - 1;
		while (j > 0 && (d2[j - 1] > d || (d2[j - 1] == d && ids[j - 1] > i))) {
			d2[j] = d2[j - 1];
			ids[j] = ids[j - 1];
			j--;
		}
		d2[j] = d;
		ids[j] = i;
	}
	return m;
}

int main(void)
{
	static struct xy p[N];
	struct rng r = { 99 };
	struct kdtree t;
	int i, q, errors = 0;

	for (i = 0; i < N; i++) {
		/* A coarse lattice makes exact duplicates and distance ties. */
		p[i].x = (double)(rng_next(&r) % 40);
		p[i].y = (double)(rng_next(&r) % 40) * 0.5;
	}
	if (kd_build(&t, p, N))
		return 2;
	for (q = 0; q < 2000; q++) {
		struct xy c = { rng_uniform(&r, -5, 45), rng_uniform(&r, -5, 25) };
		int ia[K], ib[K], k = 1 + q % K, ma, mb, j;
		double da[K], db[K];

		if (q % 3 == 0)
			c = p[rng_next(&r) % N]; /* query on a data point */
		ma = kd_knn(&t, c, k, ia, da);
		mb = brute(p, N, c, k, ib, db);
		for (j = 0; j < (ma < mb ? ma : mb); j++)
			if (ia[j] != ib[j] || da[j] != db[j])
				break;
		if (ma != mb || j < ma) {
			if (errors++ < 5)
				fprintf(stderr, "query %d (%g,%g) k=%d: neighbour %d differs\n", q, c.x,
					c.y, k, j);
		}
	}
	kd_free(&t);
	printf("kdtree: 2000 queries, %d mismatches: %s\n", errors, errors ? "FAIL" : "ok");
	return errors ? 1 : 0;
}
