/* Migration (move) and regeneration (copy) of a replica, without global
 * coordination (DESIGN §7, the paper's §2.1 and Figure 5).
 *
 * Source daemon: at the process's next safe point (inside msgrecv) the shell
 * captures it (A_CAPTURE). Nothing is delivered to it until the capture is
 * done; then the core sends the target the exact cut — per inbound channel
 * what was consumed, the queued messages (including those that arrived during
 * the capture) as forwarded copies, the stored ANYSRC decisions — so nothing
 * is lost or delivered twice. A MOVE then tells the hosts that talked to the process
 * (the communication array) where it went, and forwards what still reaches
 * it with a reactive update to the sender's host (Figure 5a). (The paper
 * tells only the hosts that talked to it; we tell every live host of the job
 * — O(hosts), not O(n), DESIGN §5 rule 3 — so no daemon keeps a stale place
 * that a later host loss would make it act on.) A COPY fills a
 * dead slot with a new incarnation that is *joining* until one of its
 * messages matches its siblings' (rule 4); the survivor's daemon forwards
 * new messages to it until every host has acknowledged the new member.
 *
 * Target daemon (restoring the replica: restore.c): frames for a replica it
 * is restoring are held until the cut and the process are there; a
 * forwarded frame from the replica's previous host for a replica it does
 * not know yet is held too (the update is on its way), while a direct one
 * is forwarded to where its map says (Figure 5b). The other daemons take the
 * news of the new place in news.c. */
#include "core/core_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000ull

uint32_t core_member_mask(const struct core *c, uint32_t g)
{
	uint32_t k, mask = 0;

	for (k = 0; k < c->cfg.r; k++)
		if (c->alive[(size_t)g * c->cfg.r + k])
			mask |= 1u << k;
	return mask;
}

bool core_joining(const struct core *c, uint32_t g, uint32_t k)
{
	return c->joining[(size_t)g * c->cfg.r + k];
}

void core_set_regen(struct core *c, bool on)
{
	c->no_regen = !on;
}

void migrate_expect_joined(struct core *c, uint32_t g, uint32_t k)
{
	migrate_expect_joining(c, g, k);
}

struct action *migrate_peer_action(struct core *c, uint32_t host, uint8_t type)
{
	struct action *a = core_emit(c, A_PEER);

	a->host = host;
	a->f.h.type = type;
	return a;
}

/* --- source side ------------------------------------------------------ */

/* A queued message not decided yet (mode vote: fewer equal copies than a
 * majority so far) goes to the target as the copies themselves, each as
 * forwarded from its sender replica: the target votes on them with the
 * copies still to come. (Its senders sent them here only; without them the
 * target could never reach the majority.) */
static void cut_undecided(struct core *c, uint32_t t, uint32_t g, uint32_t k,
			  const struct chan *ch, const struct entry *e)
{
	uint32_t members = core_member_mask(c, ch->src);

	/* a copy its slot's dead incarnation sent (chan_forget) or one
	 * already suspected: labelled with the slot's incarnation now, it
	 * would count as the new one's at the target, and fence it (B48) */
	if (!(c->cfg.flags & CORE_F_TEST_NO_SUPERSEDE))
		members &= ~e->flagged;
	for (uint8_t i = 0; i < e->nvar; i++) {
		const struct variant *v = &e->var[i];
		uint32_t own = members, unsure = v->unsure;

		if (!v->m)
			continue;
		/* one from an incarnation not known dead goes, as stale: it may
		 * be the copy of the sender that moved since (here: to this
		 * host), which never sends it again. Left out, the target
		 * waited for it and fenced that sender for lagging (B72) */
		if (c->cfg.test & CORE_T_CUT_DROPS_UNSURE)
			unsure = 0;
		if (!(c->cfg.flags & CORE_F_TEST_NO_SUPERSEDE))
			own &= ~(v->stale & ~unsure);
		for (uint32_t seen = v->seen & own; seen; seen &= seen - 1) {
			uint32_t j = (uint32_t)__builtin_ctz(seen);
			struct action *a = migrate_peer_action(c, t, F_DATA);

			a->f.h.flags = DATA_F_FWD | ((v->stale & (1u << j)) ? DATA_F_STALE : 0);
			a->f.u.data = (struct f_data){
				.src = ch->src, .dst = g, .src_rep = (uint16_t)j, .dst_rep = (uint16_t)k,
				.src_inc = c->inc[(size_t)ch->src * c->cfg.r + j],
				.epoch = c->epoch[g], .seq = e->seq, .tag = v->tag, .total = v->size,
			};
			a->m = mbuf_get(v->m);
			c->stats.forwarded++;
		}
	}
}

static void send_cut(struct core *c, uint32_t g)
{
	struct lproc *p = &c->procs[g];
	uint32_t t = p->cap_target, i;
	struct action *a;

	a = migrate_peer_action(c, t, F_PROC_STATE);
	a->f.u.proc_state = (struct f_proc_state){ .group = g, .rep = (uint16_t)p->cap_k,
						   .inc = p->cap_inc, .mode = p->cap_mode,
						   .any_next = p->any_next };
	for (i = 0; i < p->nchan_list; i++) {
		struct chan *ch = p->chans[p->chan_list[i]];
		uint64_t s, seqs[CUT_MAX_SEQS];
		uint32_t n = 0;

		for (s = ch->consumed_low + 1; s <= ch->contig && n < CUT_MAX_SEQS; s++) {
			struct entry *e = chan_entry(ch, s);

			if (e && e->consumed)
				seqs[n++] = s;
		}
		a = migrate_peer_action(c, t, F_CUT_CHAN);
		a->f.u.cut_chan = (struct f_cut_chan){ .group = g, .rep = (uint16_t)p->cap_k,
						       .src = ch->src,
						       .consumed_low = ch->consumed_low, .count = n };
		/* the action owns a copy of the list until the shell encodes it */
		a->f.u.cut_chan.seqs = n ? malloc(n * sizeof(uint64_t)) : NULL;
		if (n && !a->f.u.cut_chan.seqs)
			abort();
		if (n)
			memcpy(a->f.u.cut_chan.seqs, seqs, n * sizeof(uint64_t));
		/* queued messages, as forwarded copies of their chosen content */
		for (s = ch->consumed_low + 1; s < ch->base + ch->cap; s++) {
			struct entry *e = chan_entry(ch, s);
			struct variant *v;

			if (!e || e->consumed)
				continue;
			if (e->chosen < 0) {
				cut_undecided(c, t, g, p->cap_k, ch, e);
				continue;
			}
			v = &e->var[e->chosen];
			a = migrate_peer_action(c, t, F_DATA);
			a->f.h.flags = DATA_F_FWD | DATA_F_CUT;
			a->f.u.data = (struct f_data){
				.src = ch->src, .dst = g, .src_rep = (uint16_t)__builtin_ctz(v->seen),
				.dst_rep = (uint16_t)p->cap_k,
				.src_inc = c->inc[(size_t)ch->src * c->cfg.r + __builtin_ctz(v->seen)],
				.epoch = c->epoch[g], .seq = s, .tag = v->tag, .total = v->size,
			};
			a->m = mbuf_get(v->m);
			c->stats.forwarded++;
		}
	}
	/* every retained decision, not only those still to come: as leader
	 * the new replica may have to give them to a sibling that lags (B25) */
	for (uint64_t k = p->dlog.first; p->dlog.len && k < p->dlog.first + p->dlog.len; k++) {
		const struct decision *d = &p->dlog.v[k - p->dlog.first];

		if (!d->index)
			continue; /* a hole (anysrc.c, cut_backfill) */

		a = migrate_peer_action(c, t, F_DECISION);
		a->f.h.flags = DECISION_F_SYNC;
		a->f.u.decision = (struct f_decision){ .group = g, .term = d->term, .index = d->index,
						       .src = d->src, .seq = d->seq,
						       .from_rep = (uint16_t)p->rep };
	}
	if (p->cap_mode == MIG_MOVE)
		retain_cut(c, g, t); /* what it sent and we still retain (B54) */
	a = migrate_peer_action(c, t, F_STATE_END);
	a->f.u.state_end = (struct f_state_end){ .group = g, .rep = (uint16_t)p->cap_k,
						 .inc = p->cap_inc };
}

static void start_capture(struct core *c, uint32_t g)
{
	struct lproc *p = &c->procs[g];
	struct action *a = core_emit(c, A_CAPTURE);

	a->group = g;
	a->host = p->cap_target;
	a->f.h.type = F_MIGRATE;
	a->f.u.migrate = (struct f_migrate){ .group = g, .rep = (uint16_t)p->cap_k,
					     .src_rep = (uint16_t)p->rep, .target = p->cap_target,
					     .mode = p->cap_mode, .inc = p->cap_inc };
	p->cap_sent = true;
	if (p->cap_pre) { /* the image stream is open: the process takes the cut */
		a->f.h.flags = CAPTURE_F_PRECOPIED;
		core_event(c, "regen-cut", "\"group\":%u,\"rep\":%u,\"target\":%u,\"ready\":%s", g,
			   p->cap_k, p->cap_target, p->cap_ready ? "true" : "false");
		return;
	}
	core_event(c, "migrate-save", "\"group\":%u,\"rep\":%u,\"target\":%u,\"mode\":\"%s\"", g,
		   p->cap_k, p->cap_target, p->cap_mode == MIG_MOVE ? "move" : "copy");
}

/* The process entered a receive: its safe point. A pre-copy under way
 * takes its cut once ready, or once it has taken long enough (a process
 * whose receives never wait lets it advance only a little each time). */
void migrate_on_recv(struct core *c, uint32_t g)
{
	struct lproc *p = &c->procs[g];

	if (p->capturing && !p->cap_sent && (!p->cap_pre || p->cap_ready || c->now >= p->cap_pre_until))
		start_capture(c, g);
}

/* How long a pre-copy may go on before its cut is taken anyway (the stop
 * then copies what is left, as a capture inside one receive does). */
#define PRECOPY_MAX_NS (1000 * MS)

void core_set_precopy_max(struct core *c, uint64_t ns)
{
	c->precopy_max_ns = ns;
}

void core_capture_pending(struct core *c, uint32_t g)
{
	struct lproc *p;

	if (g >= c->cfg.n || !c->procs[g].capturing || !c->procs[g].cap_sent ||
	    c->procs[g].cap_mode != MIG_COPY || c->procs[g].cap_pre)
		return;
	p = &c->procs[g];
	p->cap_sent = false; /* delivery goes on: nothing is cut yet */
	p->cap_pre = true;
	p->cap_ready = false;
	p->cap_pre_until = c->now + (c->precopy_max_ns ? c->precopy_max_ns : PRECOPY_MAX_NS);
	core_event(c, "regen-precopy", "\"group\":%u,\"rep\":%u,\"target\":%u", g, p->cap_k,
		   p->cap_target);
	match_try(c, g);
}

void core_capture_ready(struct core *c, uint32_t g)
{
	struct lproc *p;

	if (g >= c->cfg.n || !c->procs[g].capturing || !c->procs[g].cap_pre || c->procs[g].cap_sent)
		return;
	p = &c->procs[g];
	p->cap_ready = true;
	if (p->want) /* blocked in a receive now: its safe point */
		start_capture(c, g);
}

int core_migrate(struct core *c, const struct f_migrate *m)
{
	struct lproc *p;

	if (m->group >= c->cfg.n || m->rep >= c->cfg.r || m->src_rep >= c->cfg.r ||
	    m->target >= c->cfg.m || m->target == c->cfg.host)
		return FE_FIELD;
	p = &c->procs[m->group];
	/* (restoring: its own cut has not arrived yet, a capture now would
	 * send the next host an incomplete one) */
	if (!p->present || !p->running || p->restoring || p->rep != m->src_rep || p->capturing ||
	    p->fwd ||
	    !core_alive(c, m->group, m->src_rep) || core_joining(c, m->group, m->src_rep) ||
	    c->host_dead[m->target])
		return FE_FIELD;
	if (m->mode == MIG_MOVE ? m->rep != m->src_rep : core_alive(c, m->group, m->rep))
		return FE_FIELD;
	for (uint32_t k = 0; k < c->cfg.r; k++) /* never two replicas of a group on a host */
		if (core_alive(c, m->group, k) && k != m->rep &&
		    core_host_of(c, m->group, k) == m->target)
			return FE_FIELD;
	p->capturing = true;
	p->cap_sent = p->cap_pre = p->cap_ready = false;
	p->cap_mode = m->mode;
	p->cap_target = m->target;
	p->cap_k = m->rep;
	p->cap_inc = m->inc ? m->inc : c->inc[(size_t)m->group * c->cfg.r + m->rep] + 1;
	if (p->want)
		start_capture(c, m->group);
	return 0;
}

static void announce_move(struct core *c, uint32_t g, uint32_t k)
{
	struct lproc *p = &c->procs[g];
	struct frame f = { .h.type = F_MAP };

	f.u.map = (struct f_map){ .group = g, .rep = (uint16_t)k, .host = p->cap_target,
				  .inc = p->cap_inc, .epoch = c->epoch[g] };
	core_to_peers(c, &f);
}

static void announce_joining(struct core *c, uint32_t g, uint32_t k)
{
	struct lproc *p = &c->procs[g];
	struct frame f = { .h.type = F_MEMBER };

	/* every host told must acknowledge before forwarding stops */
	for (uint32_t h = 0; h < c->cfg.m; h++)
		p->fwd_wait[h] = h != c->cfg.host && !c->host_dead[h];
	f.u.member = (struct f_member){ .group = g, .rep = (uint16_t)k, .state = MEMBER_JOINING,
					.epoch = c->epoch[g], .inc = p->cap_inc,
					.host = p->cap_target, .fwd_host = c->cfg.host };
	core_to_peers(c, &f);
}

static void set_location(struct core *c, uint32_t g, uint32_t k, uint32_t host, uint32_t inc)
{
	size_t i = (size_t)g * c->cfg.r + k;

	core_set_host(c, i, host);
	c->inc[i] = inc;
	c->epoch[g]++;
}

void core_capture_done(struct core *c, uint32_t g, int status)
{
	struct lproc *p;
	uint32_t k;

	if (g >= c->cfg.n || !c->procs[g].capturing)
		return;
	p = &c->procs[g];
	k = p->cap_k;
	p->capturing = false;
	p->cap_sent = p->cap_pre = p->cap_ready = false;
	if (status) {
		core_event(c, "migrate-failed", "\"group\":%u,\"rep\":%u,\"error\":%d", g, k, status);
		match_try(c, g);
		return;
	}
	if (p->cap_mode == MIG_COPY && p->cap_inc <= c->dead_inc[(size_t)g * c->cfg.r + k]) {
		/* the copy was fenced before its image was out (its target's
		 * restore failed early): announced now, it would join with no
		 * process behind it, for good. The repair scan copies again. */
		core_event(c, "migrate-failed", "\"group\":%u,\"rep\":%u,\"error\":\"fenced before it was out\"",
			   g, k);
		match_try(c, g);
		return;
	}
	/* Nothing was consumed while it was captured: the cut now is the cut at
	 * the safe point, and it includes everything that arrived meanwhile. */
	send_cut(c, g);
	set_location(c, g, k, p->cap_target, p->cap_inc);
	if (p->cap_mode == MIG_MOVE) {
		/* (a->group before more actions: core_emit may move the list) */
		core_emit(c, A_KILL)->group = g;
		core_event(c, "migrate-moved", "\"group\":%u,\"rep\":%u,\"target\":%u,\"inc\":%u", g,
			   k, p->cap_target, p->cap_inc);
		announce_move(c, g, k);
		p->fenced = true; /* its end is not a fault */
		p->running = p->want = false;
		p->moved = true;
		p->moved_to = p->cap_target;
		p->moved_rep = k;
		p->present = false;
		return;
	}
	/* copy: the survivor goes on; the new one joins */
	c->alive[(size_t)g * c->cfg.r + k] = 1;
	c->line_inc[(size_t)g * c->cfg.r + k] = p->cap_inc;
	c->joining[(size_t)g * c->cfg.r + k] = 1;
	c->verified_sent[(size_t)g * c->cfg.r + k] = 0;
	migrate_expect_joining(c, g, k);
	p->fwd = true;
	p->fwd_host = p->cap_target;
	p->fwd_k = k;
	p->fwd_inc = p->cap_inc;
	core_event(c, "regen-copied", "\"group\":%u,\"rep\":%u,\"target\":%u,\"inc\":%u", g, k,
		   p->cap_target, p->cap_inc);
	announce_joining(c, g, k);
	match_try(c, g);
}

/* A frame for a replica that is not (or no longer) here. Returns true when
 * it was taken care of (forwarded or held). */
bool migrate_redirect(struct core *c, uint32_t from, uint8_t flags, const struct f_data *d,
		      struct mbuf *m)
{
	struct lproc *p = &c->procs[d->dst];
	uint32_t where = core_host_of(c, d->dst, d->dst_rep);
	struct action *a;

	/* the map knows at least where it moved (set at the capture's end) and
	 * maybe a later move: forward there, and tell that place and the
	 * incarnation it goes with (a reactive MAP pairing an old place with a
	 * newer incarnation sent a sender's map back, B22) */
	if (where == c->cfg.host && p->moved && p->moved_rep == d->dst_rep)
		where = p->moved_to;
	if (where == c->cfg.host)
		return false;
	if (p->moved && (c->cfg.flags & CORE_F_TEST_NO_FORWARD)) {
		mbuf_put(m); /* negative control: the moved replica never gets it */
		return true;
	}
	if ((flags & DATA_F_FWD) && from == where && !p->moved) {
		/* forwarded back by the host our map names: the update is on its
		 * way; take it as ours (rule 5: held, not bounced). Not at the host
		 * it moved from: there a copy forwarded by the target (which did not
		 * know yet, Figure 5b) goes back to the target, or it would be held
		 * here for good. */
		return false;
	}
	a = migrate_peer_action(c, where, F_DATA);
	a->f.h.flags = DATA_F_FWD;
	a->f.u.data = *d;
	a->m = m;
	c->stats.forwarded++;
	core_event(c, "forward", "\"src\":%u,\"dst\":%u,\"rep\":%u,\"seq\":%llu,\"to\":%u", d->src,
		   d->dst, d->dst_rep, (unsigned long long)d->seq, where);
	if (p->moved) {
		/* the paper's reactive update, to the host the message came from */
		uint32_t src_host = core_host_of(c, d->src, d->src_rep);

		if (src_host != c->cfg.host && src_host != where) {
			a = migrate_peer_action(c, src_host, F_MAP);
			a->f.u.map = (struct f_map){ .group = d->dst, .rep = (uint16_t)d->dst_rep,
						     .host = where,
						     .inc = core_inc(c, d->dst, d->dst_rep),
						     .epoch = c->epoch[d->dst], .reactive = 1 };
		}
	}
	return true;
}

/* After a COPY, what reaches the survivor is owed to the new copy too,
 * until the sender's host acknowledged the new member (FIFO per connection:
 * everything it sent before its ack arrives before the ack). */
static void forward_copy(struct core *c, uint32_t from, const struct f_data *d, struct mbuf *m)
{
	struct lproc *p = &c->procs[d->dst];
	struct action *a;

	if (!p->fwd || !p->fwd_wait[from] || d->dst_rep != p->rep)
		return;
	a = migrate_peer_action(c, p->fwd_host, F_DATA);
	a->f.h.flags = DATA_F_FWD;
	a->f.u.data = *d;
	a->f.u.data.dst_rep = (uint16_t)p->fwd_k;
	a->m = mbuf_get(m);
	c->stats.forwarded++;
}

/* The local process of g ended or was fenced: a capture of it is off.
 * Forwarding to a copy it was the source of goes on (its daemon does it:
 * what reaches it may have no other way to the copy, B40) until every live
 * host acknowledged the copy, or another replica of g comes here. */
void migrate_abort_local(struct core *c, uint32_t g)
{
	struct lproc *p = &c->procs[g];

	if (p->capturing)
		core_event(c, "migrate-failed", "\"group\":%u,\"rep\":%u,\"error\":\"source ended\"",
			   g, p->cap_k);
	p->capturing = p->cap_sent = p->cap_pre = p->cap_ready = false;
}

/* Forwarding for a copy of g ends once no live host's ack is awaited. */
static void fwd_check_done(struct core *c, uint32_t g)
{
	struct lproc *p = &c->procs[g];
	uint32_t h, left = 0;

	for (h = 0; h < c->cfg.m; h++)
		left += p->fwd_wait[h] && !c->host_dead[h];
	if (!left) {
		p->fwd = false;
		core_event(c, "regen-forwarding-done", "\"group\":%u,\"rep\":%u", g, p->fwd_k);
	}
}

static int on_member_ack(struct core *c, uint32_t from, const struct f_member_ack *k)
{
	struct lproc *p;

	if (k->group >= c->cfg.n)
		return FE_FIELD;
	p = &c->procs[k->group];
	if (!p->fwd || k->rep != p->fwd_k || k->inc != p->fwd_inc)
		return 0;
	p->fwd_wait[from] = 0;
	fwd_check_done(c, k->group);
	return 0;
}

/* Sibling k of g was fenced with its host (reason). A copy of g being
 * restored here whose PROC_STATE has not come may not know its source
 * (the shell did not say where its image came from): if that was k, its
 * cut died with k's host and never comes (B27). Its source's host being
 * lost fails the copy (rule 4: a joining copy dies with its source); a
 * sibling lost otherwise would have aborted the capture, or its cut is on
 * its way from a live host. Known, only the source's loss fails it (a
 * false fence of a copy from a live sibling, B39). */
void migrate_sibling_lost(struct core *c, uint32_t g, uint32_t k, uint8_t reason)
{
	struct lproc *p = &c->procs[g];

	if (reason != SUS_HOST || !p->present || p->rep == k || !p->restoring || p->state_begun ||
	    (p->restore_from != UINT32_MAX && p->restore_from != core_host_of(c, g, k)) ||
	    !core_joining(c, g, p->rep))
		return;
	core_event(c, "restore-failed", "\"group\":%u,\"rep\":%u,\"why\":\"sibling %u lost with "
		   "its host before the cut came\"", g, p->rep, k);
	core_suspect(c, g, p->rep, SUS_HOST, "a sibling (its source?) was lost before its cut came");
}

/* Host h was lost. A replica that moved or was copied here from h: the
 * news of it went out from h only, and may have died with h (its unsent
 * buffers), so some daemons still place the replica on h and fence it as
 * lost with h. Told again from here (B23). */
void migrate_reannounce(struct core *c, uint32_t h)
{
	for (uint32_t g = 0; g < c->cfg.n; g++) {
		struct lproc *p = &c->procs[g];
		size_t i = (size_t)g * c->cfg.r + p->rep;
		struct frame f = { 0 };

		if (!p->present || p->restoring || p->fenced || p->restore_from != h ||
		    !c->alive[i] || c->host[i] != c->cfg.host)
			continue;
		if (p->moved_in) {
			f.h.type = F_MAP;
			f.u.map = (struct f_map){ .group = g, .rep = (uint16_t)p->rep,
						  .host = c->cfg.host, .inc = c->inc[i],
						  .epoch = c->epoch[g] };
		} else {
			f.h.type = F_MEMBER;
			f.u.member = (struct f_member){ .group = g, .rep = (uint16_t)p->rep,
							.state = MEMBER_JOINING, .epoch = c->epoch[g],
							.inc = c->inc[i], .host = c->cfg.host,
							.fwd_host = c->cfg.host };
		}
		core_event(c, "reannounce", "\"group\":%u,\"rep\":%u,\"inc\":%u,\"lost\":%u", g,
			   p->rep, c->inc[i], h);
		core_to_peers(c, &f);
		if (f.h.type == F_MEMBER && !c->joining[i] &&
		    !(c->cfg.test & CORE_T_REANNOUNCE_JOINING)) {
			/* verified, and h may have been the daemon that verified it:
			 * its news died with h too, and a daemon that never got it
			 * counts the copy joining for good (no vote, its messages
			 * held, the group lost there, B66) */
			f.u.member.state = MEMBER_LIVE;
			core_to_peers(c, &f);
		}
	}
}

/* Host h was lost (up = false) or a replacement daemon took its place (up).
 * A lost host sends nothing more that would need forwarding, and its ack
 * never comes: forwarding must not wait for it (it would wait for good, and
 * a survivor that forwards is refused as the source of the next copy). A
 * replacement never heard the news of a copy under way: it is told now, and
 * forwarding goes on until it acknowledges like the others. */
void migrate_host_change(struct core *c, uint32_t h, bool up)
{
	for (uint32_t g = 0; g < c->cfg.n; g++) {
		struct lproc *p = &c->procs[g];

		if (!p->fwd)
			continue;
		p->fwd_wait[h] = 0;
		if (up && core_alive(c, g, p->fwd_k) && core_inc(c, g, p->fwd_k) == p->fwd_inc) {
			struct action *a = migrate_peer_action(c, h, F_MEMBER);

			p->fwd_wait[h] = 1;
			a->f.u.member = (struct f_member){
				.group = g, .rep = (uint16_t)p->fwd_k, .state = MEMBER_JOINING,
				.epoch = c->epoch[g], .inc = p->fwd_inc, .host = p->fwd_host,
				.fwd_host = c->cfg.host };
		}
		fwd_check_done(c, g);
	}
}

int migrate_peer_frame(struct core *c, uint32_t from, const struct frame *f, struct mbuf *m)
{
	mbuf_put(m);
	switch (f->h.type) {
	case F_MIGRATE:
		return core_migrate(c, &f->u.migrate) ? 0 : 0; /* refused: logged by the shell */
	case F_PROC_STATE:
		return restore_on_proc_state(c, from, &f->u.proc_state);
	case F_CUT_CHAN:
		return restore_on_cut_chan(c, from, &f->u.cut_chan);
	case F_STATE_END:
		return restore_on_state_end(c, from, &f->u.state_end);
	case F_MAP:
		return news_on_map(c, from, &f->u.map);
	case F_MEMBER_ACK:
		return on_member_ack(c, from, &f->u.member_ack);
	default:
		return FE_TYPE;
	}
}

void migrate_on_data(struct core *c, uint32_t from, const struct f_data *d, struct mbuf *m)
{
	forward_copy(c, from, d, m);
}

/* A frame for a replica we are told is coming here, before we know it. */
void migrate_hold(struct core *c, uint32_t from, uint8_t flags, const struct f_data *d,
		  struct mbuf *m)
{
	struct held *v = realloc(c->held_v, (c->nheld + 1) * sizeof(*v));

	if (!v) {
		mbuf_put(m);
		return;
	}
	c->held_v = v;
	c->held_v[c->nheld++] = (struct held){ .from = from, .flags = flags, .d = *d, .m = m };
	core_event(c, "held", "\"src\":%u,\"dst\":%u,\"rep\":%u,\"seq\":%llu", d->src, d->dst,
		   d->dst_rep, (unsigned long long)d->seq);
}

void migrate_release_held(struct core *c, uint32_t g, uint32_t k)
{
	uint32_t i = 0;

	while (i < c->nheld) {
		struct held h = c->held_v[i];

		if (h.d.dst != g || h.d.dst_rep != k) {
			i++;
			continue;
		}
		c->held_v[i] = c->held_v[--c->nheld];
		chan_arrive(c, &c->procs[g], g, &h.d, h.m, h.flags);
	}
}
