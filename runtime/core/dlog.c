/* The decision log of one ANYSRC group's replica (anysrc.c): the decisions
 * known here, made or received, by index. Decisions consumed long ago are
 * pruned; recent ones are kept, since a new leader may have to re-send
 * them to a sibling that lags. */
#include "core/core_impl.h"

#include <stdlib.h>
#include <string.h>

void dlog_free(struct dlog *l)
{
	free(l->v);
	l->v = NULL;
	l->len = l->cap = 0;
}

/* (an entry of index 0 is a hole a restore's cut is still to fill) */
struct decision *dlog_find(struct dlog *l, uint64_t index)
{
	if (index < l->first || index - l->first >= l->len || !l->v[index - l->first].index)
		return NULL;
	return &l->v[index - l->first];
}

/* Room for decisions index..first-1 before the log's first, as holes. */
int dlog_extend_front(struct dlog *l, uint64_t index)
{
	uint64_t add = l->first - index;

	if (add > DLOG_KEEP)
		return -1;
	if (l->len + add > l->cap) {
		uint32_t cap = (uint32_t)(l->len + add);
		struct decision *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	memmove(l->v + add, l->v, l->len * sizeof(*l->v));
	memset(l->v, 0, add * sizeof(*l->v));
	l->len += (uint32_t)add;
	l->first = index;
	return 0;
}

int dlog_append(struct dlog *l, const struct decision *d)
{
	if (d->index != l->first + l->len)
		return -1;
	if (l->len == l->cap) {
		uint32_t cap = l->cap ? l->cap * 2 : 16;
		struct decision *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->len++] = *d;
	return 0;
}

void dlog_prune(struct dlog *l, uint64_t next)
{
	uint32_t drop;

	next = next > DLOG_KEEP ? next - DLOG_KEEP : 0;
	if (next <= l->first)
		return;
	drop = (uint32_t)(next - l->first < l->len ? next - l->first : l->len);
	l->len -= drop;
	for (uint32_t i = 0; i < l->len; i++)
		l->v[i] = l->v[i + drop];
	l->first += drop;
	if (!l->len)
		l->first = next;
}

uint64_t dlog_upto(const struct dlog *l)
{
	return l->first + l->len - 1;
}
