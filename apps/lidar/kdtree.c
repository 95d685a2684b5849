/* 2-D kd-tree (see kdtree.h). */
#include <stdlib.h>

#include "kdtree.h"

static double coord(const struct xy *p, int axis)
{
	return axis ? p->y : p->x;
}

/* Total order on points along an axis: coordinate, then index. */
static int less(const struct kdtree *t, int axis, int a, int b)
{
	double ca = coord(&t->pts[a], axis), cb = coord(&t->pts[b], axis);

	return ca < cb || (ca == cb && a < b);
}

static void swap(int *a, int *b)
{
	int t = *a;

	*a = *b;
	*b = t;
}

/* Quickselect: put the k-th smallest of idx[lo..hi) at idx[k]. */
static void select_kth(struct kdtree *t, int axis, int lo, int hi, int k)
{
	int *v = t->idx;

	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2, i, store = lo;

		/* Median of three as pivot, moved to the end. */
		if (less(t, axis, v[mid], v[lo]))
			swap(&v[mid], &v[lo]);
		if (less(t, axis, v[hi - 1], v[lo]))
			swap(&v[hi - 1], &v[lo]);
		if (less(t, axis, v[mid], v[hi - 1]))
			swap(&v[mid], &v[hi - 1]);
		for (i = lo; i < hi - 1; i++)
			if (less(t, axis, v[i], v[hi - 1]))
				swap(&v[i], &v[store++]);
		swap(&v[store], &v[hi - 1]);
		if (store == k)
			return;
		if (k < store)
			hi = store;
		else
			lo = store + 1;
	}
}

/* Split on the axis of larger spread. */
static int pick_axis(const struct kdtree *t, int lo, int hi)
{
	double mnx = 1e300, mxx = -1e300, mny = 1e300, mxy = -1e300;
	int i;

	for (i = lo; i < hi; i++) {
		const struct xy *p = &t->pts[t->idx[i]];

		mnx = p->x < mnx ? p->x : mnx;
		mxx = p->x > mxx ? p->x : mxx;
		mny = p->y < mny ? p->y : mny;
		mxy = p->y > mxy ? p->y : mxy;
	}
	return (mxy - mny) > (mxx - mnx);
}

static void build(struct kdtree *t, int lo, int hi)
{
	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2, axis = pick_axis(t, lo, hi);

		select_kth(t, axis, lo, hi, mid);
		t->axis[mid] = (unsigned char)axis;
		build(t, lo, mid);
		lo = mid + 1;
	}
	if (hi - lo == 1)
		t->axis[lo] = 0;
}

int kd_build(struct kdtree *t, const struct xy *pts, int n)
{
	int i;

	t->pts = pts;
	t->n = n;
	t->idx = malloc((size_t)(n ? n : 1) * sizeof(int));
	t->axis = malloc((size_t)(n ? n : 1));
	if (!t->idx || !t->axis) {
		kd_free(t);
		return -1;
	}
	for (i = 0; i < n; i++)
		t->idx[i] = i;
	build(t, 0, n);
	return 0;
}

void kd_free(struct kdtree *t)
{
	free(t->idx);
	free(t->axis);
	t->idx = NULL;
	t->axis = NULL;
}

/* Best-so-far list, sorted by (distance, index). */
struct knn {
	int k, found;
	int *ids;
	double *d2;
};

static void offer(struct knn *s, int id, double d2)
{
	int i;

	if (s->found == s->k &&
	    (d2 > s->d2[s->k - 1] || (d2 == s->d2[s->k - 1] && id > s->ids[s->k - 1])))
		return;
	i = s->found < s->k ? s->found++ : s->k - 1;
	while (i > 0 && (s->d2[i - 1] > d2 || (s->d2[i - 1] == d2 && s->ids[i - 1] > id))) {
		s->d2[i] = s->d2[i - 1];
		s->ids[i] = s->ids[i - 1];
		i--;
	}
	s->d2[i] = d2;
	s->ids[i] = id;
}

static void search(const struct kdtree *t, int lo, int hi, struct xy q, struct knn *s)
{
	while (hi > lo) {
		int mid = lo + (hi - lo) / 2, id = t->idx[mid], axis = t->axis[mid];
		const struct xy *p = &t->pts[id];
		double dx = p->x - q.x, dy = p->y - q.y;
		double diff = coord(&q, axis) - coord(p, axis);

		offer(s, id, dx * dx + dy * dy);
		if (hi - lo == 1)
			return;
		/* Near side first; the far side only if it can still win. */
		if (diff < 0) {
			search(t, lo, mid, q, s);
			if (s->found == s->k && diff * diff > s->d2[s->k - 1])
				return;
			lo = mid + 1;
		} else {
			search(t, mid + 1, hi, q, s);
			if (s->found == s->k && diff * diff > s->d2[s->k - 1])
				return;
			hi = mid;
		}
	}
}

int kd_knn(const struct kdtree *t, struct xy q, int k, int *ids, double *d2)
{
	struct knn s = { k, 0, ids, d2 };

	if (k > 0)
		search(t, 0, t->n, q, &s);
	return s.found;
}
