/* Deterministic MSG_ANYSRC (DESIGN §5, rule 6).
 *
 * Replicas of a group must consume ANYSRC receives in the same order. The
 * lowest live replica leads: for its k-th ANYSRC receive it picks the
 * candidate that became available first, sends decision k = (src, seq) to
 * the daemons of its siblings, and answers its process only once a majority
 * of the group's daemons store k (itself plus live/2 siblings). A follower's
 * k-th ANYSRC receive waits for decision k and then for that very message.
 * Decision k binds the k-th ANYSRC receive whatever its outcome: when the
 * message does not fit every replica gets MSG_ETRUNC alike. */
#include "core/core_impl.h"

#include <stdlib.h>

#include "msg.h"

bool anysrc_enabled(const struct core *c)
{
	return c->cfg.r > 1 && !(c->cfg.flags & JOB_F_TEST_NO_ANYSRC_PROTOCOL);
}

void dlog_free(struct dlog *l)
{
	free(l->v);
	l->v = NULL;
	l->len = l->cap = 0;
}

static struct decision *dlog_find(struct dlog *l, uint64_t index)
{
	if (index < l->first || index - l->first >= l->len)
		return NULL;
	return &l->v[index - l->first];
}

static int dlog_append(struct dlog *l, const struct decision *d)
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

/* Drop decisions this replica has consumed. */
static void dlog_prune(struct dlog *l, uint64_t next)
{
	uint32_t drop;

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

static uint32_t acks_needed(const struct core *c, uint32_t g)
{
	return (uint32_t)__builtin_popcount(core_live_mask(c, g)) / 2;
}

static void follow(struct core *c, uint32_t g, const struct decision *d)
{
	struct lproc *p = &c->procs[g];
	struct chan *ch = p->chans ? p->chans[d->src] : NULL;
	struct entry *e;

	if (!ch || d->seq > ch->contig)
		return; /* the decided message has not arrived here yet */
	e = chan_entry(ch, d->seq);
	if (!e || e->consumed) {
		core_event(c, "anysrc: decision %llu of group %u names %u seq %llu, already consumed",
			   (unsigned long long)d->index, g, d->src, (unsigned long long)d->seq);
		return;
	}
	if (p->want_tag != MSG_ANYTAG && e->var[e->chosen].tag != p->want_tag) {
		core_event(c, "anysrc: decision %llu of group %u does not match the receive's tag",
			   (unsigned long long)d->index, g);
		return;
	}
	match_deliver(c, g, ch, e);
	p->any_next++;
	dlog_prune(&p->dlog, p->any_next);
}

static void decide(struct core *c, uint32_t g)
{
	struct lproc *p = &c->procs[g];
	struct chan *ch = NULL;
	struct entry *e = match_first_arrival(p, p->want_tag, &ch);
	struct decision d;
	uint32_t live, k;

	if (!e)
		return;
	d = (struct decision){ .index = p->any_next, .src = ch->src, .seq = e->seq,
			       .term = c->epoch[g] };
	if (dlog_append(&p->dlog, &d))
		abort();
	c->stats.decisions++;
	if (!acks_needed(c, g)) {
		follow(c, g, &d);
		return;
	}
	p->pend = true;
	p->pend_acks = 0;
	live = core_live_mask(c, g);
	for (k = 0; k < c->cfg.r; k++) {
		struct action *a;

		if (!(live & (1u << k)) || k == p->rep)
			continue;
		a = core_emit(c, A_PEER);
		a->host = core_host_of(c, g, k);
		a->f.h.type = F_DECISION;
		a->f.u.decision = (struct f_decision){ .group = g, .term = d.term, .index = d.index,
						       .src = d.src, .seq = d.seq,
						       .from_rep = (uint16_t)p->rep };
	}
}

void anysrc_try(struct core *c, uint32_t g)
{
	struct lproc *p = &c->procs[g];
	struct decision *d = dlog_find(&p->dlog, p->any_next);

	if (d) {
		if (!p->pend)
			follow(c, g, d);
		return;
	}
	if (core_leader(c, g) == p->rep)
		decide(c, g);
}

int anysrc_on_decision(struct core *c, uint32_t from, const struct f_decision *d)
{
	struct decision in = { .index = d->index, .src = d->src, .seq = d->seq, .term = d->term };
	struct lproc *p;
	struct decision *have;
	struct action *a;

	if (d->group >= c->cfg.n || d->src >= c->cfg.n || d->from_rep >= c->cfg.r ||
	    core_host_of(c, d->group, d->from_rep) != from)
		return FE_FIELD;
	p = &c->procs[d->group];
	if (!p->present)
		return FE_FIELD;
	have = dlog_find(&p->dlog, d->index);
	if (have) {
		if (have->src != d->src || have->seq != d->seq)
			core_event(c, "anysrc: conflicting decision %llu for group %u",
				   (unsigned long long)d->index, d->group);
	} else if (d->index >= p->any_next && dlog_append(&p->dlog, &in)) {
		core_event(c, "anysrc: decision %llu for group %u out of order (expected %llu)",
			   (unsigned long long)d->index, d->group,
			   (unsigned long long)(p->dlog.first + p->dlog.len));
		return 0;
	}
	a = core_emit(c, A_PEER);
	a->host = from;
	a->f.h.type = F_DECISION_ACK;
	a->f.u.decision_ack = (struct f_decision_ack){ .group = d->group, .index = d->index,
						       .from_rep = (uint16_t)p->rep };
	c->stats.followed++;
	match_try(c, d->group);
	return 0;
}

int anysrc_on_ack(struct core *c, const struct f_decision_ack *a)
{
	struct lproc *p;

	if (a->group >= c->cfg.n || a->from_rep >= c->cfg.r)
		return FE_FIELD;
	p = &c->procs[a->group];
	if (!p->present || !p->pend || a->index != p->any_next)
		return 0; /* a late or repeated ack */
	p->pend_acks |= 1u << a->from_rep;
	if ((uint32_t)__builtin_popcount(p->pend_acks) < acks_needed(c, a->group))
		return 0;
	p->pend = false;
	match_try(c, a->group);
	return 0;
}
