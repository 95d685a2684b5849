/* Inbound channels: sequence numbers, exactly-once, comparison.
 *
 * Every copy of (src→dst, seq) is hashed by the receiver and compared with
 * the copies already seen: equal copies are counted as duplicates and never
 * delivered again; a differing copy is a mismatch, reported with the first
 * differing byte. A message becomes available in order: only once every
 * smaller seq of its channel is available (so tag matching is the same in
 * every replica). In `vote` mode a content is available only once a majority
 * of the live sender replicas sent it. An entry is retired once it was
 * consumed and every live sender replica's copy was compared with it. */
#include "core/core_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/digest.h"

#define CHAN_MAX_WINDOW (1u << 22)

struct chan *chan_get(struct core *c, struct lproc *p, uint32_t src)
{
	struct chan *ch;

	if (!p->chans) {
		p->chans = calloc(c->cfg.n, sizeof(*p->chans));
		p->chan_list = calloc(c->cfg.n, sizeof(*p->chan_list));
		if (!p->chans || !p->chan_list)
			abort();
	}
	ch = p->chans[src];
	if (ch)
		return ch;
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		abort();
	ch->src = src;
	ch->base = 1;
	/* a copy (joining, or verified since: joined_at) resumed from a cut:
	 * its first message here says from which seq, as for a joining one.
	 * Taken to send from seq 1, a verified copy that never sends what came
	 * before its cut was waited for, and its healthy siblings were fenced
	 * for lag (B30: its verification news came before any message). */
	for (uint32_t k = 0; k < CORE_MAX_R; k++) {
		size_t i = (size_t)src * c->cfg.r + (k < c->cfg.r ? k : 0);

		ch->start[k] = c->joining[i] || c->joined_at[i] ? UINT64_MAX : 1;
	}
	ch->cap = 16;
	ch->slots = calloc(ch->cap, sizeof(*ch->slots));
	if (!ch->slots)
		abort();
	p->chans[src] = ch;
	p->chan_list[p->nchan_list++] = src;
	return ch;
}

static void entry_clear(struct entry *e)
{
	uint8_t i;

	for (i = 0; i < e->nvar; i++)
		mbuf_put(e->var[i].m);
	memset(e, 0, sizeof(*e));
}

void chan_free(struct chan *ch)
{
	uint32_t i;

	for (i = 0; i < ch->cap; i++)
		if (ch->slots[i].seq)
			entry_clear(&ch->slots[i]);
	free(ch->slots);
	free(ch);
}

/* Window slots are indexed by seq modulo cap (a power of two). */
static int chan_grow(struct chan *ch, uint64_t seq)
{
	uint32_t cap = ch->cap, i;
	struct entry *v;

	while (seq - ch->base >= cap) {
		if (cap >= CHAN_MAX_WINDOW)
			return -1;
		cap *= 2;
	}
	if (cap == ch->cap)
		return 0;
	v = calloc(cap, sizeof(*v));
	if (!v)
		return -1;
	for (i = 0; i < ch->cap; i++)
		if (ch->slots[i].seq)
			v[ch->slots[i].seq & (cap - 1)] = ch->slots[i];
	free(ch->slots);
	ch->slots = v;
	ch->cap = cap;
	return 0;
}

struct entry *chan_entry(struct chan *ch, uint64_t seq)
{
	struct entry *e;

	if (seq < ch->base || seq - ch->base >= ch->cap)
		return NULL;
	e = &ch->slots[seq & (ch->cap - 1)];
	return e->seq == seq ? e : NULL;
}

static uint32_t popcount(uint32_t x)
{
	return (uint32_t)__builtin_popcount(x);
}

/* Advance the contiguous-availability mark; stamp arrival order. */
static void chan_advance(struct core *c, struct chan *ch)
{
	struct entry *e;

	while ((e = chan_entry(ch, ch->contig + 1)) && (e->chosen >= 0 || e->chosen == CHOSEN_CUT)) {
		ch->contig++;
		e->arrival = ++c->arrivals;
		if (e->chosen >= 0 && !e->consumed)
			ch->navail++;
	}
	while (ch->consumed_low < ch->contig) {
		struct entry *x = chan_entry(ch, ch->consumed_low + 1);

		if (x && !x->consumed)
			break;
		ch->consumed_low++;
	}
}

/* The sender replicas whose copy of seq is expected: members, a joining
 * one only from the first message it sent (it resumed from a cut). */
uint32_t chan_expect(const struct core *c, const struct chan *ch, uint64_t seq)
{
	uint32_t mask = core_member_mask(c, ch->src), k;
	const struct entry *e = chan_entry((struct chan *)ch, seq);

	for (k = 0; k < c->cfg.r; k++) {
		uint64_t joined = c->joined_at[(size_t)ch->src * c->cfg.r + k];

		/* a copy resumed from a cut never sends what came before it */
		if ((mask & (1u << k)) &&
		    (ch->start[k] > seq || (joined && e && e->t_first < joined)))
			mask &= ~(1u << k);
	}
	return mask;
}

static void chan_retire(struct core *c, struct chan *ch)
{
	struct entry *e;

	while ((e = chan_entry(ch, ch->base)) && e->consumed) {
		uint32_t want = chan_expect(c, ch, e->seq);

		if ((e->seen & want) != want)
			break;
		entry_clear(e);
		ch->base++;
	}
}

/* A migrated or copied process resumes from its source's cut: what it
 * consumed there is consumed here. */
void chan_apply_cut(struct core *c, struct chan *ch, uint64_t low, const uint64_t *seqs,
		    uint32_t count)
{
	uint64_t s;
	uint32_t i;

	if (low >= ch->base + CHAN_MAX_WINDOW)
		return;
	for (s = ch->base; s <= low && s < ch->base + ch->cap; s++) {
		struct entry *e = chan_entry(ch, s);

		if (e && !e->consumed && e->chosen >= 0 && s <= ch->contig)
			ch->navail--;
		if (e)
			e->consumed = true;
	}
	/* nothing below the cut is needed again: restart the window there */
	while (ch->base <= low) {
		struct entry *e = chan_entry(ch, ch->base);

		if (e)
			entry_clear(e);
		ch->base++;
	}
	if (ch->contig < low)
		ch->contig = low;
	if (ch->consumed_low < low)
		ch->consumed_low = low;
	for (i = 0; i < count; i++) {
		struct entry *e;

		if (seqs[i] <= low || chan_grow(ch, seqs[i]))
			continue;
		e = &ch->slots[seqs[i] & (ch->cap - 1)];
		if (!e->seq) {
			e->seq = seqs[i];
			e->chosen = CHOSEN_CUT;
		} else if (!e->consumed && e->chosen >= 0 && seqs[i] <= ch->contig) {
			ch->navail--;
		}
		e->consumed = true;
	}
	chan_advance(c, ch);
	chan_retire(c, ch);
}

static void report_mismatch(struct core *c, uint32_t dst, const struct f_data *d,
			    const struct entry *e, const struct variant *nv)
{
	const struct variant *ref = &e->var[e->chosen >= 0 ? e->chosen : 0];
	int64_t off = -1;

	c->stats.mismatches++;
	if (ref->m && nv->m)
		off = msg_first_diff(ref->m->data, nv->m->data,
				     ref->size < nv->size ? ref->size : nv->size);
	if (off < 0 && ref->size != nv->size)
		off = (int64_t)(ref->size < nv->size ? ref->size : nv->size);
	core_event(c, "mismatch",
		   "\"src\":%u,\"dst\":%u,\"seq\":%llu,\"from_rep\":%u,\"byte\":%lld,"
		   "\"tag\":[%d,%d],\"size\":[%llu,%llu],\"site\":\"%s0x%llx\"",
		   d->src, dst, (unsigned long long)d->seq, d->src_rep, (long long)off,
		   ref->tag, nv->tag, (unsigned long long)ref->size, (unsigned long long)nv->size,
		   d->site & MSG_SITE_EXE ? "exe+" : "",
		   (unsigned long long)(d->site & ~MSG_SITE_EXE));
}

/* Mode vote, every live sender replica's copy is here and no content has a
 * majority: a tie (r = 3 down to two live replicas, one of them corrupt;
 * issue 6). No majority will ever come from the live ones, so waiting only
 * hangs the receiver. A joining copy that resumed before this seq sends it
 * too (its cut came before it): its copy breaks the tie, so it is waited for.
 * Otherwise the rank is in r = 2's position, detection only (DESIGN §5
 * rule 7 can fence nobody without a majority): the copy of the lowest live
 * sender replica is taken — the same choice in every receiver replica, so
 * they do not diverge — and the tie is reported (the mismatch was already). */
static void vote_tie(struct core *c, struct chan *ch, struct entry *e, uint32_t live)
{
	uint32_t expect = chan_expect(c, ch, e->seq);
	uint32_t joining = core_member_mask(c, ch->src) & ~core_live_mask(c, ch->src) & expect &
			   ~ch->provisional;
	uint32_t voters = live | (joining & e->seen), best_n = 0, low;
	int best = -1;
	bool tie = false;

	if (!live || (e->seen & live) != live || (joining & ~e->seen))
		return; /* a copy that counts is still to come */
	for (uint8_t i = 0; i < e->nvar; i++) {
		uint32_t n = (uint32_t)__builtin_popcount(e->var[i].seen & voters);

		if (n > best_n) {
			best = i;
			best_n = n;
			tie = false;
		} else if (n == best_n) {
			tie = true;
		}
	}
	low = 1u << __builtin_ctz(live);
	if (tie || best < 0)
		for (uint8_t i = 0; i < e->nvar; i++)
			if (e->var[i].seen & low)
				best = i;
	if (best < 0)
		return;
	e->chosen = (int8_t)best;
	core_event(c, "vote-tie", "\"src\":%u,\"seq\":%llu,\"live\":%u,\"taken_from\":%u,"
		   "\"broken_by\":\"%s\"", ch->src, (unsigned long long)e->seq,
		   (unsigned)__builtin_popcount(live), (unsigned)__builtin_ctz(e->var[best].seen & voters),
		   tie || !(joining & e->seen) ? "lowest live replica (detection only)" :
						     "joining copy");
}

static void maybe_choose(struct core *c, struct chan *ch, struct entry *e)
{
	uint32_t live = core_live_mask(c, ch->src), quorum, i;

	if (e->chosen >= 0)
		return;
	/* the vote is among the live sender replicas that send this seq: a
	 * copy regenerated from a cut never sends what came before it (with
	 * r = 2 the quorum would otherwise wait for good for its copy) */
	if (live & chan_expect(c, ch, e->seq))
		live &= chan_expect(c, ch, e->seq);
	/* nor waits for a copy whose start is only guessed (from when we heard
	 * it joined): it may have resumed past this seq, and its first message
	 * on the channel may wait for this receiver (B43) */
	if ((live & ~ch->provisional) && !(c->cfg.flags & CORE_F_TEST_VOTE_WAITS_GUESSED))
		live &= ~ch->provisional;
	quorum = c->cfg.mode == CMP_VOTE ? popcount(live) / 2 + 1 : 1;
	for (i = 0; i < e->nvar; i++)
		if (popcount(e->var[i].seen & live) >= quorum) {
			e->chosen = (int8_t)i;
			return;
		}
	if (c->cfg.mode == CMP_VOTE && e->nvar >= 2 && !(c->cfg.flags & CORE_F_TEST_NO_VOTE_TIE))
		vote_tie(c, ch, e, live);
}

/* Rule 7 once the outvoted sender is gone: the copy this receiver consumed
 * has no live sender replica behind it any more, while a majority of the
 * live ones sent another content. judge() below cannot see this case: after
 * the fence fewer than 3 sender replicas are live (no vote), and an entry
 * whose every live copy has arrived is retired by the membership change. */
static void check_consumed(struct core *c, struct lproc *p, uint32_t dst, struct chan *ch,
			   struct entry *e)
{
	uint32_t live = core_live_mask(c, ch->src), quorum = popcount(live) / 2 + 1, i;
	char ev[96];

	if (!e->seq || !e->consumed || e->chosen < 0 || e->nvar < 2 || !live ||
	    (c->cfg.flags & JOB_F_TEST_NO_MISMATCH_FENCE) || !p->present || p->fenced ||
	    (e->var[e->chosen].seen & live))
		return;
	for (i = 0; i < e->nvar; i++)
		if ((int)i != e->chosen && popcount(e->var[i].seen & live) >= quorum) {
			snprintf(ev, sizeof(ev), "consumed %u->%u seq %llu, later outvoted", ch->src,
				 dst, (unsigned long long)e->seq);
			core_suspect(c, dst, p->rep, SUS_CONSUMED, ev);
			return;
		}
}

/* Mode first: the copy chosen (its first) but not consumed yet has no live
 * sender replica behind it any more — its sender was fenced, as outvoted
 * elsewhere — while a majority of the live ones sent another content: take
 * theirs. judge() cannot (fewer than 3 live sender replicas after the
 * fence), and without this the receiver consumed a copy its daemon knew
 * was outvoted and, the check at arrival being past, stayed alive (B44). */
static void rechoose(struct core *c, struct entry *e, uint32_t live)
{
	uint32_t quorum = popcount(live) / 2 + 1, i;

	if (e->chosen < 0 || e->consumed || e->nvar < 2 || !live ||
	    (c->cfg.flags & JOB_F_TEST_NO_MISMATCH_FENCE) || (e->var[e->chosen].seen & live))
		return;
	for (i = 0; i < e->nvar; i++)
		if ((int)i != e->chosen && popcount(e->var[i].seen & live) >= quorum) {
			e->chosen = (int8_t)i;
			return;
		}
}

/* With a majority of the live sender replicas agreeing on one content, the
 * replicas that sent another are faulty (r >= 3 masks; r = 2 only detects).
 * A receiver that already consumed an outvoted copy (mode first) has taken
 * bad input and is faulty too (DESIGN §5 rule 7). */
static void judge(struct core *c, struct lproc *p, uint32_t dst, struct chan *ch, struct entry *e)
{
	uint32_t live = core_live_mask(c, ch->src), quorum = popcount(live) / 2 + 1, i, k;
	int maj = -1;
	char ev[96];

	check_consumed(c, p, dst, ch, e);
	rechoose(c, e, live);
	if (e->nvar < 2 || (c->cfg.flags & JOB_F_TEST_NO_MISMATCH_FENCE) || popcount(live) < 3)
		return;
	for (i = 0; i < e->nvar; i++)
		if (popcount(e->var[i].seen & live) >= quorum)
			maj = (int)i;
	if (maj < 0)
		return;
	for (i = 0; i < e->nvar; i++) {
		uint32_t bad = e->var[i].seen & live & ~e->flagged & ~e->var[i].stale;

		if ((int)i == maj || !bad)
			continue;
		e->flagged |= bad;
		snprintf(ev, sizeof(ev), "copy of %u->%u seq %llu outvoted", ch->src, dst,
			 (unsigned long long)e->seq);
		for (k = 0; k < c->cfg.r; k++)
			if (bad & (1u << k))
				core_suspect(c, ch->src, k, SUS_MISMATCH, ev);
	}
	if (e->chosen >= 0 && e->chosen != maj) {
		if (e->consumed) {
			snprintf(ev, sizeof(ev), "consumed %u->%u seq %llu, later outvoted", ch->src,
				 dst, (unsigned long long)e->seq);
			core_suspect(c, dst, p->rep, SUS_CONSUMED, ev);
		} else {
			e->chosen = (int8_t)maj; /* not handed over yet: take the majority's */
		}
	}
}

/* Rule 4 the other way round: a joining copy whose message differs from the
 * content a majority of the live members agree on is a bad copy (it never
 * gets verified, and it has no vote that judge() would weigh): fenced, so
 * the coordinator copies the slot again. */
static void judge_joining(struct core *c, uint32_t dst, struct chan *ch, struct entry *e)
{
	uint32_t live = core_live_mask(c, ch->src), quorum = popcount(live) / 2 + 1;
	uint32_t joining = core_member_mask(c, ch->src) & ~live, i, k;
	char ev[112];

	if (!joining || e->chosen < 0 || e->nvar < 2 ||
	    (c->cfg.flags & JOB_F_TEST_NO_MISMATCH_FENCE) ||
	    popcount(e->var[e->chosen].seen & live) < quorum)
		return;
	for (i = 0; i < e->nvar; i++) {
		uint32_t bad = e->var[i].seen & joining & ~e->flagged & ~e->var[i].stale;

		if ((int)i == e->chosen || !bad)
			continue;
		e->flagged |= bad;
		snprintf(ev, sizeof(ev), "joining copy's %u->%u seq %llu differs from the members'",
			 ch->src, dst, (unsigned long long)e->seq);
		for (k = 0; k < c->cfg.r; k++)
			if (bad & (1u << k))
				core_suspect(c, ch->src, k, SUS_MISMATCH, ev);
	}
}

/* Negative control (JOB_F_TEST_NO_DEDUPE): a copy of a consumed message is
 * made available again, as a receiver without the exactly-once rule would. */
static void negctl_redeliver(struct chan *ch, struct entry *e)
{
	e->consumed = false;
	e->chosen = (int8_t)(e->nvar - 1);
	ch->navail++;
	if (ch->consumed_low >= e->seq)
		ch->consumed_low = e->seq - 1;
}

int chan_arrive(struct core *c, struct lproc *p, uint32_t dst, const struct f_data *d,
		struct mbuf *m, uint8_t flags)
{
	struct chan *ch = chan_get(c, p, d->src);
	uint8_t dig[FRAME_DIGEST_LEN];
	uint32_t bit = 1u << d->src_rep;
	uint32_t unsure = (flags & CHAN_F_STALE) &&
			  d->src_inc > c->dead_inc[(size_t)d->src * c->cfg.r + d->src_rep] ? bit : 0;
	struct entry *e;
	uint8_t i;

	if (d->seq < ch->base) {
		/* retired: every copy expected was compared already */
		c->stats.late++;
		if (!(flags & (DATA_F_FWD | CHAN_F_STALE)))
			detect_late_copy(c, d->src, d->src_rep); /* but its sender runs */
		if (!ch->late_told)
			core_event(c, "late-copy", "\"src\":%u,\"dst\":%u,\"seq\":%llu,\"from_rep\":%u",
				   d->src, dst, (unsigned long long)d->seq, d->src_rep);
		ch->late_told = true;
		mbuf_put(m);
		return 0;
	}
	if (chan_grow(ch, d->seq)) {
		mbuf_put(m);
		if (!(c->cfg.flags & JOB_F_TEST_NO_BACKLOG_DETECT))
			core_suspect(c, dst, p->rep, SUS_BACKLOG, "inbound window exceeded");
		return -1;
	}
	/* only a copy straight from the sender's daemon says where a joining
	 * copy resumed (or verifies it): a forwarded one may be a copy from the
	 * incarnation it replaced, queued at a capture's source and sent in
	 * the cut under the slot's current incarnation */
	if (!(flags & DATA_F_FWD) &&
	    (ch->start[d->src_rep] == UINT64_MAX || (ch->provisional & bit))) {
		/* a joining copy's first message here: it resumed from this seq */
		ch->start[d->src_rep] = d->seq;
		ch->provisional &= ~bit;
		/* the votes below it no longer wait for its copy */
		for (uint64_t s = ch->contig + 1; s < d->seq && s < ch->base + ch->cap; s++)
			if ((e = chan_entry(ch, s)))
				maybe_choose(c, ch, e);
	}
	if (m->digested) /* hashed by this daemon as it arrived */
		memcpy(dig, m->digest, sizeof(dig));
	e = &ch->slots[d->seq & (ch->cap - 1)];
	if (e->seq == d->seq && e->chosen == CHOSEN_CUT) {
		/* consumed before the cut at the source: nothing to compare with */
		c->stats.duplicates++;
		e->seen |= bit;
		mbuf_put(m);
		chan_retire(c, ch);
		return 0;
	}
	if (!e->seq) {
		e->seq = d->seq;
		e->chosen = -1;
		e->t_first = c->now;
	}
	detect_copy(c, ch, e, d->src_rep);
	/* Hashing waits until there is something to compare: the first copy
	 * of a message (with r = 1 the only one, as a rule) is not hashed
	 * unless it was as it landed; a later copy hashes both (rule 7: the
	 * receiver hashes what it received itself). */
	if (e->nvar && !m->digested)
		msg_digest(msg_digest_alg_of(c->cfg.flags), dig, d->src, dst, d->seq, d->tag,
			   m->data, m->len);
	for (i = 0; i < e->nvar; i++) {
		struct variant *x = &e->var[i];

		if (!x->hashed) {
			msg_digest(msg_digest_alg_of(c->cfg.flags), x->digest, d->src, dst, e->seq,
				   x->tag, x->m->data, x->m->len);
			x->hashed = true;
		}
		if (!memcmp(x->digest, dig, sizeof(dig)))
			break;
	}
	if (i < e->nvar && !(c->cfg.flags & JOB_F_TEST_NO_DEDUPE)) {
		c->stats.duplicates++;
		e->var[i].seen |= bit;
		if (flags & CHAN_F_STALE)
			e->var[i].stale |= bit; /* never judged as its slot's copy (B48) */
		e->var[i].unsure |= unsure;
		mbuf_put(m);
		if (core_joining(c, d->src, d->src_rep) && (int)i == e->chosen && !(flags & DATA_F_FWD))
			member_verified(c, d->src, d->src_rep); /* rule 4 */
	} else if (e->nvar < MAX_VARIANTS) {
		struct variant *v = &e->var[e->nvar];

		v->hashed = e->nvar || m->digested;
		if (v->hashed)
			memcpy(v->digest, dig, sizeof(dig));
		v->tag = d->tag;
		v->size = d->total;
		v->m = m;
		v->seen = bit;
		v->stale = (flags & CHAN_F_STALE) ? bit : 0;
		v->unsure = unsure;
		if (e->nvar++ > 0 && !(c->cfg.flags & JOB_F_TEST_NO_DEDUPE))
			report_mismatch(c, dst, d, e, v);
		if ((c->cfg.flags & JOB_F_TEST_NO_DEDUPE) && e->chosen >= 0 && e->consumed)
			negctl_redeliver(ch, e);
	} else {
		c->stats.mismatches++;
		mbuf_put(m);
	}
	e->seen |= bit;
	if (flags & DATA_F_CUT) {
		/* compared at the source before the cut, and chosen there: in
		 * mode vote it counts as the majority's (no further copy of it
		 * comes here, so without this the vote would never end) */
		e->seen |= core_member_mask(c, d->src);
		if (i < e->nvar)
			e->var[i].seen |= core_live_mask(c, d->src);
	}
	maybe_choose(c, ch, e);
	judge(c, p, dst, ch, e);
	judge_joining(c, dst, ch, e);
	chan_advance(c, ch);
	chan_retire(c, ch);
	return 0;
}

/* Copies from sender replicas `bits` were sent by incarnations now dead:
 * they are never judged again as those slots' copies. Judged, a sound
 * regenerated copy was fenced (judge, judge_joining) for the corrupt copy
 * its fenced predecessor had sent under the same slot (B46). Only entries
 * holding such a copy are marked, so a copy's own re-sent messages are
 * judged as before; the copies stay (var.seen names a cut copy's sender). */
void chan_forget(struct core *c, struct chan *ch, uint32_t bits)
{
	for (uint64_t s = ch->base; bits && s < ch->base + ch->cap; s++) {
		struct entry *e = chan_entry(ch, s);
		uint32_t had = 0;

		for (uint8_t i = 0; e && i < e->nvar; i++) {
			had |= e->var[i].seen;
			e->var[i].stale |= e->var[i].seen & bits;
			e->var[i].unsure &= ~bits; /* dead now */
		}
		/* (per variant since B61; the entry-wide flag hid the slot's new
		 * copy's own copy of the same seq, corrupt, from judge) */
		if (e && (c->cfg.flags & CORE_F_TEST_ENTRY_STALE))
			e->flagged |= had & bits;
	}
}

/* The sender group's membership changed: a vote may now have its majority,
 * and entries that waited for a dead replica's copy can retire. */
void chan_membership(struct core *c, struct chan *ch)
{
	uint32_t gone = ~core_member_mask(c, ch->src) & ((1u << c->cfg.r) - 1);
	uint64_t s;
	uint32_t d;

	/* a dead replica's copies vote no more, and must not count as its
	 * slot's next copy's (B46) */
	chan_forget(c, ch, gone);

	for (s = ch->contig + 1; s < ch->base + ch->cap; s++) {
		struct entry *e = chan_entry(ch, s);

		if (e)
			maybe_choose(c, ch, e);
	}
	/* before retiring: a consumed copy whose senders are all dead now */
	for (d = 0; d < c->cfg.n; d++) {
		struct lproc *p = &c->procs[d];

		if (!p->chans || p->chans[ch->src] != ch)
			continue;
		for (s = ch->base; s < ch->base + ch->cap; s++) {
			struct entry *e = chan_entry(ch, s);

			if (e) {
				check_consumed(c, p, d, ch, e);
				rechoose(c, e, core_live_mask(c, ch->src));
			}
		}
		break;
	}
	chan_advance(c, ch);
	chan_retire(c, ch);
}

void chan_consume(struct core *c, struct lproc *p, struct chan *ch, struct entry *e)
{
	(void)p;
	e->consumed = true;
	ch->navail--;
	while (ch->consumed_low < ch->contig) {
		struct entry *x = chan_entry(ch, ch->consumed_low + 1);

		if (x && !x->consumed)
			break;
		ch->consumed_low++;
	}
	chan_retire(c, ch);
}
