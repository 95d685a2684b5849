/* A 2-D kd-tree over a fixed point set, for k-nearest-neighbour queries.
 * Stored implicitly: the median of each index range is that subtree's root.
 * Ties are broken by point index, so a build and every query give the same
 * result whatever the platform or input history (replicas agree). */
#ifndef KDTREE_H
#define KDTREE_H

struct xy {
	double x, y;
};

struct kdtree {
	const struct xy *pts;
	int n;
	int *idx;            /* permutation of 0..n-1 in tree order */
	unsigned char *axis; /* split axis of the node at each position */
};

int kd_build(struct kdtree *t, const struct xy *pts, int n); /* 0 or -1 */
void kd_free(struct kdtree *t);

/* The k nearest points to q (fewer if n < k), nearest first, ties by index:
 * ids into pts and squared distances. Returns how many were found. */
int kd_knn(const struct kdtree *t, struct xy q, int k, int *ids, double *d2);

#endif
