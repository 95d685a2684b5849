/* Deterministic MSG_ANYSRC (DESIGN §5, rule 6).
 *
 * Replicas of a group must consume ANYSRC receives in the same order. The
 * lowest live replica leads: for its k-th ANYSRC receive it picks the
 * candidate that became available first, sends decision k = (src, seq) to
 * the daemons of its siblings, and answers its process only once a majority
 * of the group's daemons store k (itself plus live/2 siblings). A follower's
 * k-th ANYSRC receive waits for decision k and then for that very message.
 * Decision k binds the k-th ANYSRC receive whatever its outcome: when the
 * message does not fit every replica gets MSG_ETRUNC alike.
 *
 * When the leader dies, the next live replica leads. Before deciding
 * anything it adopts the longest prefix of decisions its live siblings store
 * (one of them may hold a decision the old leader delivered), and sends each
 * sibling the decisions it lacks: a decision is never made twice. */
#include "core/core_impl.h"

#include <stdlib.h>

#include "msg.h"

bool anysrc_enabled(const struct core *c)
{
	return c->cfg.r > 1 && !(c->cfg.flags & JOB_F_TEST_NO_ANYSRC_PROTOCOL);
}

/* The replicas whose stores a decision needs: a majority of the members,
 * joining copies too. A copy is verified elsewhere without our knowing,
 * and its group may then lose the leader: a decision the leader made
 * alone (no other verified member) and consumed was stored nowhere, and
 * the verified copy decided that index anew (I3, B65). */
static uint32_t store_mask(const struct core *c, uint32_t g)
{
	if (c->cfg.test & CORE_T_JOINING_NO_STORE)
		return core_live_mask(c, g);
	return core_member_mask(c, g);
}

static uint32_t acks_needed(const struct core *c, uint32_t g)
{
	return (uint32_t)__builtin_popcount(store_mask(c, g)) / 2;
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
		core_event(c, "anysrc-error", "\"group\":%u,\"index\":%llu,\"src\":%u,\"seq\":%llu,"
			   "\"why\":\"already consumed\"", g, (unsigned long long)d->index, d->src,
			   (unsigned long long)d->seq);
		return;
	}
	if (p->want_tag != MSG_ANYTAG && e->var[e->chosen].tag != p->want_tag) {
		core_event(c, "anysrc-error", "\"group\":%u,\"index\":%llu,\"why\":\"tag differs\"",
			   g, (unsigned long long)d->index);
		return;
	}
	p->any_wait_since = 0;
	match_deliver(c, g, ch, e);
	p->any_next++;
	dlog_prune(&p->dlog, p->any_next);
}

/* Flags of an ANYSRC frame our replica of g sends. */
static uint8_t anysrc_flags(const struct core *c, uint32_t g)
{
	return c->procs[g].moved_in ? DECISION_F_MOVED : 0;
}

static void send_decision_to(struct core *c, uint32_t host, uint32_t g, const struct decision *d,
			     uint8_t flags)
{
	struct action *a;

	if (!d)
		return; /* a hole in a restore's log (cut_backfill) */
	a = core_emit(c, A_PEER);
	a->host = host;
	a->f.h.type = F_DECISION;
	a->f.h.flags = flags | anysrc_flags(c, g);
	a->f.u.decision = (struct f_decision){ .group = g, .term = d->term, .index = d->index,
					       .src = d->src, .seq = d->seq,
					       .from_rep = (uint16_t)c->procs[g].rep };
}

static void send_decision(struct core *c, uint32_t g, uint32_t k, const struct decision *d,
			  uint8_t flags)
{
	send_decision_to(c, core_host_of(c, g, k), g, d, flags);
}

/* The siblings of our replica of g that ANYSRC frames go to: every member
 * but ours, and but one our map places on this host: that one ended here
 * (no two replicas of a group share a host) and its fence is on its way;
 * nobody would answer, and a frame to ourselves is no peer frame (B38). */
static uint32_t sibling_mask(const struct core *c, uint32_t g)
{
	uint32_t mask = core_member_mask(c, g) & ~(1u << c->procs[g].rep);

	for (uint32_t k = 0; k < c->cfg.r; k++)
		if (core_host_of(c, g, k) == c->cfg.host)
			mask &= ~(1u << k);
	return mask;
}

/* Dead siblings whose daemons are up: a replica that crashed (its process
 * ended, its host did not) acked the decisions it stored as their store,
 * and its daemon keeps them (core_local_exit). A new leader asks those too:
 * a decision stored at a majority and consumed may have survived only
 * there, when the other stores died with their hosts (B42). */
static uint32_t dead_stores(const struct core *c, uint32_t g)
{
	uint32_t mask = 0;

	for (uint32_t k = 0; k < c->cfg.r; k++) {
		size_t i = (size_t)g * c->cfg.r + k;
		uint32_t h = c->host[i];

		if (k != c->procs[g].rep && !c->alive[i] && h < c->cfg.m && h != c->cfg.host &&
		    !c->host_dead[h] && !(c->cfg.flags & CORE_F_TEST_NO_DEAD_STORES))
			mask |= 1u << k;
	}
	return mask;
}

#define DEAD_STORE_WAIT (250 * 1000000ull)

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
	/* every member follows it, a joining copy too (it has no vote: its
	 * ack does not count, see anysrc_on_ack) */
	live = sibling_mask(c, g);
	for (k = 0; k < c->cfg.r; k++)
		if (live & (1u << k))
			send_decision(c, g, k, &d, 0);
	if (!acks_needed(c, g)) {
		follow(c, g, &d);
		return;
	}
	p->pend = true;
	p->pend_acks = 0;
}

void anysrc_try(struct core *c, uint32_t g)
{
	struct lproc *p = &c->procs[g];
	struct decision *d = dlog_find(&p->dlog, p->any_next);

	if (d) {
		/* decided: what may be missing now is the message, not a decision */
		p->any_wait_since = 0;
		if (!p->pend)
			follow(c, g, d);
		return;
	}
	if (core_leader(c, g) == p->rep) {
		if (!p->syncing)
			decide(c, g);
		return;
	}
	/* a follower with candidates but no decision: the leader may be hung */
	if (!p->any_wait_since) {
		struct chan *ch = NULL;

		p->any_pulled = false;
		if (match_first_arrival(p, p->want_tag, &ch))
			p->any_wait_since = c->now ? c->now : 1;
	}
}

static void sync_done(struct core *c, uint32_t g);


/* DLOG_REQ to sibling k: the decisions it stores from our next index on.
 * flags: DECISION_F_LEAD from a new leader. */
static void count_ack(struct core *c, uint32_t g, uint32_t k, uint64_t index);

static void ask_decisions(struct core *c, uint32_t g, uint32_t k, uint8_t flags)
{
	const struct lproc *p = &c->procs[g];
	struct action *a = core_emit(c, A_PEER);

	a->host = core_host_of(c, g, k);
	a->f.h.type = F_DLOG_REQ;
	a->f.h.flags = flags | anysrc_flags(c, g);
	a->f.u.dlog_req = (struct f_dlog_req){ .group = g, .from = p->any_next,
					       .from_rep = (uint16_t)p->rep };
}
/* Membership of g changed. If a replica of g is here: a pending decision
 * may now have enough acks, or this replica may have become the leader. */
void anysrc_membership(struct core *c, uint32_t g)
{
	struct lproc *p = &c->procs[g];
	uint32_t members, k;

	/* (restoring: its decision log comes with its cut. Finished well: it
	 * decides nothing more, but may lead to hand its log over, B5) */
	if (!p->present || (!p->running && !(p->finalized && !p->fenced)) || c->cfg.r < 2 ||
	    (p->restoring && !p->state_ready))
		return;
	/* a new leader asks every member, joining copies too: a copy follows
	 * the decisions it gets at once (B7), also one the old leader made
	 * and died with before a majority stored it; a new leader that did
	 * not adopt it decided that index anew (I3, B36b) */
	members = sibling_mask(c, g);
	if (p->syncing) {
		p->sync_wait &= members | (p->sync_dead & dead_stores(c, g));
		if (!p->sync_wait) {
			/* the siblings it waited for died before answering */
			sync_done(c, g);
			return;
		}
	}
	if (p->pend && (uint32_t)__builtin_popcount(p->pend_acks & store_mask(c, g)) >= acks_needed(c, g))
		p->pend = false;
	if (core_leader(c, g) != p->rep) {
		/* a lower copy was verified (its news, or its own DLOG_REQ as
		 * leader): it leads now, after syncing with us; if it dies we
		 * lead again, and sync again first (B36a) */
		p->leading = p->syncing = false;
		p->sync_wait = 0;
		return;
	}
	if (p->leading)
		return;
	p->leading = true;
	p->sync_dead = dead_stores(c, g) & ~members;
	p->sync_dead_until = c->now + DEAD_STORE_WAIT;
	p->sync_wait = members | p->sync_dead;
	p->syncing = p->sync_wait != 0;
	core_event(c, "anysrc-leader", "\"group\":%u,\"rep\":%u,\"next\":%llu", g, p->rep,
		   (unsigned long long)p->any_next);
	for (k = 0; k < c->cfg.r; k++)
		if (p->sync_wait & (1u << k))
			ask_decisions(c, g, k, DECISION_F_LEAD);
}

/* Sibling k of our replica of g moved. A new leader still waiting for its
 * stored decisions asks its new place again: the request may have reached
 * the old one after k left, and died there with that host (B24). A second
 * answer is harmless (stored decisions are idempotent, DLOG_END once). */
void anysrc_sibling_moved(struct core *c, uint32_t g, uint32_t k)
{
	struct lproc *p = &c->procs[g];

	if (!p->present || !p->syncing || !(p->sync_wait & (1u << k)))
		return;
	ask_decisions(c, g, k, DECISION_F_LEAD);
}

/* A follower that has waited long for a decision asks the leader for what
 * it stores from its next index on (a DLOG_REQ, answered like a new
 * leader's): a decision forwarded through a host it moved from may have
 * died with that host (B26). Only then, a bound later, is the leader
 * suspected of not deciding. */
void anysrc_pull(struct core *c, uint32_t g)
{
	struct lproc *p = &c->procs[g];
	uint32_t leader = core_leader(c, g);

	if (p->any_pulled || !(sibling_mask(c, g) & (1u << leader)) || !core_alive(c, g, leader))
		return;
	p->any_pulled = true;
	ask_decisions(c, g, leader, 0);
}

/* A DECISION or DLOG_REQ for our replica of g, which moved away: forward it
 * to where it went (Figure 5a for control frames). Returns true when the
 * frame was taken care of here (forwarded, or for a replica that is gone). */
static bool anysrc_redirect(struct core *c, uint32_t g, const struct frame *f)
{
	struct lproc *p = &c->procs[g];
	struct action *a;

	if (p->present)
		return false;
	if (!p->moved || c->host_dead[p->moved_to])
		return true;
	a = core_emit(c, A_PEER);
	a->host = p->moved_to;
	a->f = *f;
	a->f.h.flags |= DECISION_F_FWD;
	c->stats.forwarded++;
	return true;
}

/* ANYSRC control frames name the sibling replica they come from: its daemon
 * is where our map places it or a host it moved from (sent before the move).
 * A frame from a replica that moved to the sending host says so
 * (DECISION_F_MOVED): the move's news (MAP, from the host it left) may still
 * be on its way, as for a newer incarnation's DATA; it is taken as that news.
 * A frame forwarded by the host our own replica moved from is accepted from
 * there. */
static bool anysrc_sender_ok(const struct core *c, uint32_t g, uint32_t k, uint32_t from,
			     uint8_t flags)
{
	const struct lproc *p = &c->procs[g];

	uint32_t mine = p->present ? p->rep : p->moved ? p->moved_rep : UINT32_MAX;

	/* forwarded: by a host our replica was at (a chain of moves forwards
	 * along the chain) */
	/* (restoring: the cut's decisions come from the daemon our replica's
	 * state comes from, which our map may not know it was at: a chain of
	 * moves whose news has not come yet) */
	return core_was_at(c, g, k, from) || ((flags & DECISION_F_MOVED) && core_alive(c, g, k)) ||
	       (p->present && p->restoring && p->state_begun && from == p->restore_from) ||
	       ((flags & DECISION_F_FWD) && mine != UINT32_MAX &&
		((p->present && p->prev_host == from) || core_was_at(c, g, mine, from)));
}

/* A DLOG_REQ from a host our map does not place its sender at: a copy that
 * replaced a dead sibling, verified and leading (or pulling) before its
 * joining news reached us (it went from the coordinator, on another
 * connection; B28). Unlike DATA the request carries no incarnation to take
 * as news, so it waits for the news, as DATA for a restoring replica waits
 * for its cut. Held at most HREQ_MAX and HREQ_AGE; dropped with its host. */
#define HREQ_MAX 256
#define HREQ_AGE (10 * 1000000000ull)

/* Our replica of g is being restored and its state (cut, decisions) is not
 * in yet: a DLOG_REQ answered now would answer from an empty log while a
 * decision of the old leader waits in the pending list, and the new leader
 * would decide that index anew (B34). It waits for the state, like a
 * request from an unknown place. */
static bool state_pending(const struct core *c, uint32_t g)
{
	const struct lproc *p = &c->procs[g];

	return p->present && p->restoring && !p->state_ready;
}

/* ... and fenced meanwhile (its state's source was lost): no state comes,
 * and the asker no longer waits for it (it is dead); our map may not even
 * know it was here, so the answer would be refused as from a wrong place.
 * The request is dropped. */
static bool state_never(const struct core *c, uint32_t g)
{
	return state_pending(c, g) && c->procs[g].fenced;
}

static int hold_req(struct core *c, uint32_t from, const struct f_dlog_req *q, uint8_t flags)
{
	struct held_req *v;

	if (c->nhreq >= HREQ_MAX)
		return FE_FIELD;
	v = realloc(c->hreq, (c->nhreq + 1) * sizeof(*v));
	if (!v)
		return FE_FIELD;
	c->hreq = v;
	c->hreq[c->nhreq++] = (struct held_req){ .from = from, .flags = flags, .q = *q,
						 .at = c->now };
	core_event(c, "dlog-req-held", "\"group\":%u,\"rep\":%u,\"from\":%u", q->group,
		   q->from_rep, from);
	return 0;
}

void anysrc_retry_held(struct core *c)
{
	uint32_t i = 0;

	if (c->hreq_busy)
		return;
	c->hreq_busy = true;
	while (i < c->nhreq) {
		struct held_req h = c->hreq[i];
		bool ok = anysrc_sender_ok(c, h.q.group, h.q.from_rep, h.from, h.flags) &&
			  !state_pending(c, h.q.group);
		bool gone = state_never(c, h.q.group);

		if (!ok && !gone && !c->host_dead[h.from] && c->now - h.at < HREQ_AGE) {
			i++;
			continue;
		}
		c->hreq[i] = c->hreq[--c->nhreq];
		if (ok)
			anysrc_on_dlog_req(c, h.from, &h.q, h.flags);
		else
			core_event(c, "dlog-req-dropped", "\"group\":%u,\"rep\":%u,\"from\":%u",
				   h.q.group, h.q.from_rep, h.from);
		i = 0; /* the answer may have changed the list */
	}
	c->hreq_busy = false;
}

/* A sibling that became leader asks for our stored decisions. */
int anysrc_on_dlog_req(struct core *c, uint32_t from, const struct f_dlog_req *q, uint8_t flags)
{
	struct lproc *p;
	struct action *a;
	struct frame f = { .h.type = F_DLOG_REQ, .h.flags = flags, .u.dlog_req = *q };
	uint32_t to;
	uint64_t i;

	if (q->group >= c->cfg.n || q->from_rep >= c->cfg.r)
		return FE_FIELD;
	if (state_never(c, q->group))
		return 0;
	p = &c->procs[q->group];
	if (p->present && p->rep == q->from_rep && !(c->cfg.flags & CORE_F_TEST_ANSWER_OWN_SLOT)) {
		/* from our own replica's slot: an incarnation it replaced (a copy
		 * here fills the slot of the dead asker, whose request was on its
		 * way). Answered, the DLOG_END named our replica as its sender and
		 * the asker's daemon, not knowing the copy yet, refused it as from a
		 * wrong place (B62) */
		core_event(c, "dlog-req-dropped", "\"group\":%u,\"rep\":%u,\"from\":%u,"
			   "\"why\":\"from its own slot\"", q->group, q->from_rep, from);
		return 0;
	}
	if (!anysrc_sender_ok(c, q->group, q->from_rep, from, flags) || state_pending(c, q->group))
		return hold_req(c, from, q, flags);
	if ((flags & DECISION_F_LEAD) && core_host_of(c, q->group, q->from_rep) == from)
		/* only a verified replica leads: a copy we still count joining
		 * was verified elsewhere. Our replica (or a lower copy) must
		 * not lead past it on a view that does not know (I3, B36a) */
		member_heard_verified(c, q->group, q->from_rep);
	if (anysrc_redirect(c, q->group, &f))
		return 0;
	/* a follower's pull from index `from`: it consumed, so stores, every
	 * decision below. Its ack of our pending one may have died with the
	 * host it moved from (its cut carried the decision on): taken as that
	 * ack, or we wait for good and it fences us for not deciding (B55) */
	if (!(flags & DECISION_F_LEAD) && p->present && p->pend && q->from > p->any_next &&
	    !(c->cfg.flags & CORE_F_TEST_NO_PULL_ACK))
		count_ack(c, q->group, q->from_rep, p->any_next);
	/* the answer goes where the request came from (forwarded: to the
	 * asker's place), decisions and DLOG_END alike: a crashed replica's
	 * daemon asked as a dead store (B42) may not know yet that the asker
	 * moved, and its map may place the asker on its own host */
	to = (flags & DECISION_F_FWD) ? core_host_of(c, q->group, q->from_rep) : from;
	if (to == c->cfg.host)
		return 0;
	/* a new leader syncs from what it gets here: decisions a lower
	 * sibling (the leader it replaced) sends from now on are not in it
	 * and are dropped (anysrc_on_decision) */
	if (flags & DECISION_F_LEAD)
		p->promised = q->from_rep + 1;
	for (i = q->from > p->dlog.first ? q->from : p->dlog.first; p->dlog.len && i <= dlog_upto(&p->dlog); i++)
		send_decision_to(c, to, q->group, dlog_find(&p->dlog, i), DECISION_F_SYNC);
	a = core_emit(c, A_PEER);
	a->host = to;
	a->f.h.type = F_DLOG_END;
	a->f.h.flags = anysrc_flags(c, q->group);
	a->f.u.dlog_end = (struct f_dlog_end){ .group = q->group, .from_rep = (uint16_t)p->rep,
					       .next = p->any_next,
					       .have_upto = p->dlog.len ? dlog_upto(&p->dlog) : 0 };
	return 0;
}

/* A frame flagged MOVED from a sibling our map counts dead: a dead store
 * (B42) answering from the place it had moved to, whose move's news has
 * not come (and may never). Taken while we wait for that store (1),
 * dropped otherwise (0): a dead replica's frames are needed for nothing
 * else. -1: not such a frame. */
static int dead_moved(const struct core *c, uint32_t g, uint32_t k, uint8_t flags)
{
	const struct lproc *p = &c->procs[g];

	if (!(flags & DECISION_F_MOVED) || core_alive(c, g, k))
		return -1;
	return p->present && p->syncing && (p->sync_wait & p->sync_dead & (1u << k)) ? 1 : 0;
}

/* A sibling's stored decisions have all arrived (as DECISION frames, before
 * this on the same connection). Send it what it lacks. */
int anysrc_on_dlog_end(struct core *c, uint32_t from, const struct f_dlog_end *e, uint8_t flags)
{
	struct lproc *p;

	if (e->group >= c->cfg.n || e->from_rep >= c->cfg.r)
		return FE_FIELD;
	if (!anysrc_sender_ok(c, e->group, e->from_rep, from, flags)) {
		int dm = dead_moved(c, e->group, e->from_rep, flags);

		if (dm < 0)
			return FE_FIELD;
		if (!dm)
			return 0;
	}
	p = &c->procs[e->group];
	if (!p->present || !p->syncing)
		return 0;
	p->sync_wait &= ~(1u << e->from_rep);
	if (!p->sync_wait)
		sync_done(c, e->group);
	return 0;
}

/* Every awaited sibling answered (or died): lead from here. */
static void sync_done(struct core *c, uint32_t g)
{
	struct lproc *p = &c->procs[g];
	uint64_t i;

	p->syncing = false;
	core_event(c, "anysrc-synced", "\"group\":%u,\"decisions_upto\":%llu", g,
		   (unsigned long long)(p->dlog.len ? dlog_upto(&p->dlog) : 0));
	/* siblings behind us get the decisions they miss; their stores answer
	 * with acks that nobody waits for, which is harmless */
	for (uint32_t k = 0; k < c->cfg.r; k++) {
		if (!(sibling_mask(c, g) & (1u << k)) || !p->dlog.len)
			continue;
		for (i = p->dlog.first; i <= dlog_upto(&p->dlog); i++)
			send_decision(c, g, k, dlog_find(&p->dlog, i), DECISION_F_SYNC);
	}
	match_try(c, g);
}

/* A decision the restored process consumed before its capture, from its
 * cut (the source's retained log, B25): kept, so that as leader it can give
 * it to a sibling that lags. An empty log starts at the cut's first
 * (anysrc_on_decision); once a newer one had come first (the leader's,
 * straight) they were dropped as pruned, a new leader that had moved
 * synced from its own next index on,
 * and a sibling that still needed an older one (the dead leader's came
 * late, after it answered the new leader's sync: dropped, B52) waited for
 * good and was fenced for lagging (B71). The cut's decisions come in order
 * on one connection before its STATE_END: the holes made for the first
 * are filled before the process can lead. Returns whether d was one. */
static bool cut_backfill(struct core *c, struct lproc *p, uint32_t from,
			 const struct f_decision *d, bool sync)
{
	struct decision in = { .index = d->index, .src = d->src, .seq = d->seq, .term = d->term };
	struct decision *x;

	if (!sync || !p->present || !p->restoring || p->state_ready || from != p->restore_from ||
	    !d->index || d->index >= p->any_next || (c->cfg.test & CORE_T_CUT_DROPS_OLD))
		return false;
	if (d->index >= p->dlog.first + p->dlog.len)
		return false; /* the next to append, or after it: as any other */
	if (d->index < p->dlog.first && dlog_extend_front(&p->dlog, d->index))
		return true;
	x = &p->dlog.v[d->index - p->dlog.first];
	if (!x->index)
		*x = in;
	return true;
}

int anysrc_on_decision(struct core *c, uint32_t from, const struct f_decision *d, uint8_t flags)
{
	struct decision in = { .index = d->index, .src = d->src, .seq = d->seq, .term = d->term };
	struct frame f = { .h.type = F_DECISION, .h.flags = flags, .u.decision = *d };
	bool f_sync = flags & DECISION_F_SYNC;
	struct lproc *p;
	struct decision *have;
	struct action *a;

	if (d->group >= c->cfg.n || d->src >= c->cfg.n || d->from_rep >= c->cfg.r)
		return FE_FIELD;
	if ((flags & DECISION_F_FWD) && !c->procs[d->group].present && !c->procs[d->group].moved)
		return 0; /* forwarded to a replica that moved here and was fenced
			   * (its restore killed) before it came: nothing to give it
			   * to, and no bad frame (B50) */
	if (!anysrc_sender_ok(c, d->group, d->from_rep, from, flags)) {
		int dm = dead_moved(c, d->group, d->from_rep, flags);

		if (dm < 0)
			return FE_FIELD;
		if (!dm)
			return 0;
	}
	p = &c->procs[d->group];
	if (anysrc_redirect(c, d->group, &f) || cut_backfill(c, p, from, d, f_sync))
		return 0;
	size_t si = (size_t)d->group * c->cfg.r + d->from_rep;
	/* from a dead incarnation: the slot is dead, or a copy fills it now
	 * and the frame comes from a host that copy is not at (straight from
	 * its fenced predecessor, sent before the fence) */
	bool from_dead = !core_alive(c, d->group, d->from_rep) ||
			 (!(flags & (DECISION_F_FWD | DECISION_F_MOVED)) && c->dead_inc[si] &&
			  from != c->host[si]);

	/* (promised is the new leader + 1: its own slot's dead predecessor,
	 * a corrupt leader a copy replaced, counts too, B60) */
	if (d->from_rep < p->promised && from_dead &&
	    !(p->syncing && (p->sync_wait & (1u << d->from_rep))) &&
	    !(c->cfg.flags & CORE_F_TEST_NO_PROMISE)) {
		/* from the dead leader a new one replaced (a lower replica
		 * leads while alive), after we answered the new one's sync: it
		 * never saw this decision and decides the index itself. Stored
		 * (and acked), the old leader's decision conflicted with the
		 * new one's (I3, B52); not stored, it is no majority's, and no
		 * live replica consumes it (rule 6). Only a dead one's: daemons
		 * may disagree for a while on who leads (a copy verified here
		 * and not there, B36), and a live lower replica's decisions
		 * are its own as leader. */
		core_event(c, "anysrc-stale-decision", "\"group\":%u,\"index\":%llu,"
			   "\"from_rep\":%u,\"promised\":%u", d->group,
			   (unsigned long long)d->index, d->from_rep, p->promised - 1);
		return 0;
	}
	if (p->restoring && p->state_begun && !p->state_ready && from == p->restore_from &&
	    !p->dlog.len && d->index < p->dlog.first)
		p->dlog.first = d->index; /* the cut's retained decisions, consumed ones first */
	if ((p->restoring && !p->state_begun) || d->index > p->dlog.first + p->dlog.len) {
		/* not yet: it is stored (and acked) once it fits the log */
		struct pend_dec *v;

		if (p->ndpend >= DLOG_KEEP)
			return 0;
		v = realloc(p->dpend, (p->ndpend + 1) * sizeof(*v));
		if (!v)
			return 0;
		p->dpend = v;
		p->dpend[p->ndpend++] = (struct pend_dec){ .from = from, .flags = flags, .d = *d };
		return 0;
	}
	have = dlog_find(&p->dlog, d->index);
	if (have) {
		if ((have->src != d->src || have->seq != d->seq) && d->term < have->term) {
			/* a dead leader's decision, late (forwarded by the host
			 * our replica moved from, or its answer to a pull): the
			 * leader after it synced with every member and did not
			 * find it, so no member stored it and no replica consumed
			 * it; that index was decided again, under a newer term
			 * (B37) */
			core_event(c, "anysrc-stale-decision", "\"group\":%u,\"index\":%llu,"
				   "\"term\":%u,\"have_term\":%u", d->group,
				   (unsigned long long)d->index, d->term, have->term);
			return 0;
		}
		if (have->src != d->src || have->seq != d->seq)
			core_event(c, "anysrc-error", "\"group\":%u,\"index\":%llu,"
				   "\"why\":\"conflicting decision\"", d->group,
				   (unsigned long long)d->index);
		if (f_sync)
			return 0;
	} else if (d->index < p->dlog.first + p->dlog.len) {
		return 0; /* pruned: long consumed here */
	} else if (dlog_append(&p->dlog, &in)) {
		core_event(c, "anysrc-error", "\"group\":%u,\"index\":%llu,\"expected\":%llu",
			   d->group, (unsigned long long)d->index,
			   (unsigned long long)(p->dlog.first + p->dlog.len));
		return 0;
	}
	anysrc_pending(c, d->group);
	/* adopted by a new leader, or re-sent by one: no ack; but the live
	 * leader's answer to our pull is acked: its DECISION may have gone to
	 * the host we moved from and died there, and then its ack is the one
	 * the leader waits for (B53: it waited for good, and we fenced it for
	 * not deciding). A late or repeated ack is ignored (count_ack). */
	if (f_sync && (d->from_rep != core_leader(c, d->group) ||
		       !core_alive(c, d->group, d->from_rep) || !p->present ||
		       (c->cfg.flags & CORE_F_TEST_NO_PULL_ACK))) {
		match_try(c, d->group);
		return 0;
	}
	uint32_t to = (flags & DECISION_F_FWD) ? core_host_of(c, d->group, d->from_rep) : from;

	if (to == c->cfg.host) {
		/* forwarded to a replica that moved here, from a leader whose
		 * place is this host too: a dead one (B42's store answered its
		 * decision) whose slot ended here; no leader to ack (B50) */
		match_try(c, d->group);
		return 0;
	}
	a = core_emit(c, A_PEER);
	a->host = to;
	a->f.h.type = F_DECISION_ACK;
	a->f.u.decision_ack = (struct f_decision_ack){ .group = d->group, .index = d->index,
						       .from_rep = (uint16_t)p->rep };
	c->stats.followed++;
	match_try(c, d->group);
	return 0;
}

/* Decisions kept back (anysrc_on_decision) that fit the log now. */
void anysrc_pending(struct core *c, uint32_t g)
{
	struct lproc *p = &c->procs[g];
	bool again = true;

	if (p->dpend_busy || (p->restoring && !p->state_begun))
		return;
	p->dpend_busy = true;
	while (again) {
		again = false;
		for (uint32_t i = 0; i < p->ndpend; i++) {
			struct pend_dec x = p->dpend[i];

			if (x.d.index > p->dlog.first + p->dlog.len)
				continue;
			p->dpend[i] = p->dpend[--p->ndpend];
			anysrc_on_decision(c, x.from, &x.d, x.flags);
			again = true;
			break;
		}
	}
	p->dpend_busy = false;
}

/* Sibling k stores decision `index` of g (its ack). */
static void count_ack(struct core *c, uint32_t g, uint32_t k, uint64_t index)
{
	struct lproc *p = &c->procs[g];

	if (!p->present || !p->pend || index != p->any_next)
		return; /* a late or repeated ack */
	/* a joining copy's store counts (store_mask, B65). Kept whatever the
	 * membership: dropped, the leader waited for an ack already given
	 * once the copy was the only other live sibling, and was fenced by it
	 * for not deciding (B33). */
	p->pend_acks |= 1u << k;
	if ((uint32_t)__builtin_popcount(p->pend_acks & store_mask(c, g)) < acks_needed(c, g))
		return;
	p->pend = false;
	match_try(c, g);
}

int anysrc_on_ack(struct core *c, const struct f_decision_ack *a)
{
	struct lproc *p;

	if (a->group >= c->cfg.n || a->from_rep >= c->cfg.r)
		return FE_FIELD;
	p = &c->procs[a->group];
	if (!p->present && p->moved && !c->host_dead[p->moved_to]) {
		/* for our leader, which moved away: the follower's map still
		 * places it here (its move's news is late, e.g. held by a cut).
		 * Dropped here, the leader waited for good and was fenced by
		 * its follower for not deciding (B32): forwarded like the
		 * DECISION it answers (Figure 5a) */
		struct action *f = core_emit(c, A_PEER);

		f->host = p->moved_to;
		f->f.h.type = F_DECISION_ACK;
		f->f.u.decision_ack = *a;
		c->stats.forwarded++;
		return 0;
	}
	count_ack(c, a->group, a->from_rep, a->index);
	return 0;
}

void anysrc_tick(struct core *c)
{
	for (uint32_t g = 0; g < c->cfg.n; g++) {
		struct lproc *p = &c->procs[g];
		uint32_t dead;

		if (!p->present || !p->syncing || !(p->sync_wait & p->sync_dead))
			continue;
		dead = p->sync_dead & dead_stores(c, g);
		if (c->now > p->sync_dead_until)
			dead = 0; /* a daemon that kept nothing (its restore failed) is silent */
		p->sync_wait &= ~(p->sync_dead & ~dead);
		if (!p->sync_wait)
			sync_done(c, g);
	}
}
