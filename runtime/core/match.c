/* Receive matching: which available message a blocked receive gets.
 *
 * A receive from a named source takes the first unconsumed message of that
 * channel, in sequence order, whose tag matches: the same in every replica
 * because only the contiguous prefix of a channel is ever considered. A
 * receive from MSG_ANYSRC depends on arrival order, which differs between
 * replicas: with r > 1 it goes through anysrc.c. */
#include "core/core_impl.h"

#include "msg.h"

/* MSG_ANYTAG takes no message sent while a direct stream of its pair was
 * open (L_TAG_DIRECT): a record in that stream stands for it, and only the
 * receive for that record may take it (docs/datapath.md §6). */
static bool tag_matches(int32_t want, int32_t tag)
{
	return want == MSG_ANYTAG ? !(tag & L_TAG_DIRECT) : want == tag;
}

struct entry *match_in_chan(struct chan *ch, int32_t tag)
{
	uint64_t s;

	if (!ch || !ch->navail)
		return NULL;
	for (s = ch->consumed_low + 1; s <= ch->contig; s++) {
		struct entry *e = chan_entry(ch, s);

		if (e && !e->consumed && tag_matches(tag, e->var[e->chosen].tag))
			return e;
	}
	return NULL;
}

/* The matching candidate that became available first, over all channels. */
struct entry *match_first_arrival(struct lproc *p, int32_t tag, struct chan **out)
{
	struct entry *best = NULL;
	uint32_t i;

	for (i = 0; i < p->nchan_list; i++) {
		struct chan *ch = p->chans[p->chan_list[i]];
		struct entry *e = match_in_chan(ch, tag);

		if (e && (!best || e->arrival < best->arrival)) {
			best = e;
			*out = ch;
		}
	}
	return best;
}

/* Answer the blocked receive with e: the message, or L_TRUNC when it does
 * not fit (it then stays queued, unconsumed). */
void match_deliver(struct core *c, uint32_t g, struct chan *ch, struct entry *e)
{
	struct lproc *p = &c->procs[g];
	struct variant *v = &e->var[e->chosen];
	struct action *a = core_emit(c, A_LOCAL);

	a->group = g;
	p->want = false;
	if (v->size > p->want_size) {
		a->f.h.type = L_TRUNC;
		a->f.u.trunc.src = ch->src;
		a->f.u.trunc.tag = v->tag;
		a->f.u.trunc.size = v->size;
		return;
	}
	a->f.h.type = L_DELIVER;
	a->f.u.deliver.src = ch->src;
	a->f.u.deliver.tag = v->tag;
	a->f.u.deliver.seq = e->seq;
	a->f.u.deliver.size = v->size;
	a->m = mbuf_get(v->m);
	c->stats.delivered++;
	chan_consume(c, p, ch, e);
}

/* Negative control (JOB_F_TEST_NO_ORDER): the newest matching message of
 * the channel instead of the oldest, as a receiver without the
 * non-overtaking rule would. */
static struct entry *negctl_newest(struct chan *ch, int32_t tag)
{
	uint64_t s;

	if (!ch || !ch->navail)
		return NULL;
	for (s = ch->contig; s > ch->consumed_low; s--) {
		struct entry *e = chan_entry(ch, s);

		if (e && !e->consumed && tag_matches(tag, e->var[e->chosen].tag))
			return e;
	}
	return NULL;
}

void match_try(struct core *c, uint32_t g)
{
	struct lproc *p = &c->procs[g];
	struct chan *ch = NULL;
	struct entry *e;

	if (!p->want || !p->running || (p->capturing && p->cap_sent) ||
	    (p->restoring && !p->state_ready))
		return;
	if (p->want_src != MSG_ANYSRC) {
		ch = p->chans ? p->chans[p->want_src] : NULL;
		e = c->cfg.flags & JOB_F_TEST_NO_ORDER ? negctl_newest(ch, p->want_tag) :
							 match_in_chan(ch, p->want_tag);
	} else if (anysrc_enabled(c)) {
		anysrc_try(c, g);
		return;
	} else {
		e = match_first_arrival(p, p->want_tag, &ch);
	}
	if (e)
		match_deliver(c, g, ch, e);
}
