/* Membership: suspicions, fencing, and the news of it (DESIGN §5 rules 1–2,
 * §6). A suspicion goes to the group's coordinator — the daemon of its
 * lowest live replica other than the suspect. Only the coordinator fences:
 * it marks the replica dead with a new epoch and tells every host of the
 * job (O(hosts), not O(n)). Dead is final: a replica never comes back under
 * the same incarnation. The suspect's own daemon kills it. */
#include "core/core_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const reasons[SUS_MAX] = {
	[SUS_EXIT] = "exit", [SUS_HOST] = "host", [SUS_LAG] = "lag",
	[SUS_MISMATCH] = "mismatch", [SUS_CONSUMED] = "consumed-outvoted",
	[SUS_BACKLOG] = "backlog", [SUS_NODECIDE] = "no-decision",
};

const char *reason_name(uint8_t reason)
{
	return reason < SUS_MAX && reasons[reason] ? reasons[reason] : "unknown";
}

bool core_alive(const struct core *c, uint32_t g, uint32_t k)
{
	return g < c->cfg.n && k < c->cfg.r && c->alive[(size_t)g * c->cfg.r + k];
}

uint32_t core_inc(const struct core *c, uint32_t g, uint32_t k)
{
	return c->inc[(size_t)g * c->cfg.r + k];
}

uint32_t core_coordinator(const struct core *c, uint32_t g, uint32_t except_k)
{
	uint32_t mask = core_live_mask(c, g) & ~(1u << except_k);

	/* a replica on a host we know is lost coordinates nothing: when two
	 * hosts of a group are lost at once, each lost replica was the other's
	 * coordinator and neither was ever fenced (a suspicion sent to a lost
	 * host is never answered) */
	for (uint32_t m = mask; m; m &= m - 1) {
		uint32_t k = (uint32_t)__builtin_ctz(m);

		if (c->host_dead[core_host_of(c, g, k)] && core_host_of(c, g, k) != c->cfg.host)
			mask &= ~(1u << k);
	}

	return mask ? core_host_of(c, g, (uint32_t)__builtin_ctz(mask)) : UINT32_MAX;
}

void core_hold(struct core *c, uint32_t g, uint32_t k, bool hold)
{
	if (g < c->cfg.n && k < c->cfg.r)
		c->held[(size_t)g * c->cfg.r + k] = hold;
}

static void remember_suspicion(struct core *c, uint32_t g, uint32_t k, uint8_t reason);

static void send_suspect(struct core *c, uint32_t host, uint32_t g, uint32_t k, uint8_t reason)
{
	struct action *a = core_emit(c, A_PEER);

	a->host = host;
	a->f.h.type = F_SUSPECT;
	a->f.u.suspect = (struct f_suspect){ .group = g, .rep = (uint16_t)k,
					     .inc = core_inc(c, g, k), .reason = reason,
					     .by_host = c->cfg.host };
}

void core_suspect(struct core *c, uint32_t g, uint32_t k, uint8_t reason, const char *detail)
{
	uint32_t coord;

	if (!core_alive(c, g, k))
		return;
	if (c->held[(size_t)g * c->cfg.r + k]) {
		core_event(c, "suspicion-held", "\"group\":%u,\"rep\":%u,\"detector\":\"%s\"", g, k,
			   reason_name(reason));
		return;
	}
	c->stats.suspicions++;
	core_event(c, "suspicion", "\"group\":%u,\"rep\":%u,\"detector\":\"%s\",\"evidence\":\"%s\"",
		   g, k, reason_name(reason), detail ? detail : "");
	coord = core_coordinator(c, g, k);
	if (coord == UINT32_MAX || coord == c->cfg.host) {
		member_fence(c, g, k, reason);
		return;
	}
	send_suspect(c, coord, g, k, reason);
	remember_suspicion(c, g, k, reason);
}

static void remember_suspicion(struct core *c, uint32_t g, uint32_t k, uint8_t reason)
{
	struct pending_sus *v;

	for (uint32_t i = 0; i < c->nsus; i++)
		if (c->sus[i].g == g && c->sus[i].k == k) {
			/* (one about an incarnation fenced since is replaced: kept,
			 * it would be dropped as old at the next resend, and the new
			 * suspicion with it) */
			c->sus[i].inc = core_inc(c, g, k);
			c->sus[i].reason = reason;
			return;
		}
	v = realloc(c->sus, (c->nsus + 1) * sizeof(*v));
	if (!v)
		return;
	c->sus = v;
	c->sus[c->nsus++] = (struct pending_sus){ .g = g, .k = k, .inc = core_inc(c, g, k),
						  .reason = reason };
}

/* A suspicion of incarnation `inc` of slot i for what it sent or consumed
 * holds for the newer incarnation our map has if that is its move (no
 * copy: a copy's news makes the older ones dead; one known from its DATA
 * only, or verified, may be one): the move carried its state. Dropped as
 * old, the outvoted sender ran on, moved, never fenced (B51; B49 is the
 * same once the fence was decided). */
static bool suspicion_moved_on(const struct core *c, size_t i, uint32_t inc, uint8_t reason)
{
	return (reason == SUS_MISMATCH || reason == SUS_CONSUMED) && inc < c->inc[i] &&
	       c->alive[i] && !c->implicit[i] && !c->verified_sent[i] && c->dead_inc[i] < inc &&
	       !(c->cfg.flags & CORE_F_TEST_NO_SUPERSEDE);
}

/* Every 200 ms: a suspicion whose suspect still lives in our map goes again,
 * to whoever coordinates the group now. */
void member_resend_suspicions(struct core *c)
{
	uint32_t i = 0;

	if (c->now < c->sus_next)
		return;
	c->sus_next = c->now + 200 * 1000000ull;
	while (i < c->nsus) {
		struct pending_sus s = c->sus[i];
		uint32_t coord;

		if (core_alive(c, s.g, s.k) &&
		    suspicion_moved_on(c, (size_t)s.g * c->cfg.r + s.k, s.inc, s.reason))
			s.inc = c->sus[i].inc = core_inc(c, s.g, s.k);
		if (!core_alive(c, s.g, s.k) || core_inc(c, s.g, s.k) != s.inc) {
			c->sus[i] = c->sus[--c->nsus];
			continue;
		}
		i++;
		coord = core_coordinator(c, s.g, s.k);
		if (coord == UINT32_MAX || coord == c->cfg.host)
			member_fence(c, s.g, s.k, s.reason);
		else
			send_suspect(c, coord, s.g, s.k, s.reason);
	}
}

/* Everything that depends on who is alive in group g. */
void membership_changed(struct core *c, uint32_t g)
{
	uint32_t d;

	for (d = 0; d < c->cfg.n; d++) {
		struct lproc *p = &c->procs[d];

		/* not only running processes: one not started yet has
		 * channels too, and a vote in them may now be complete */
		if (!p->chans || !p->chans[g])
			continue;
		chan_membership(c, p->chans[g]);
	}
	anysrc_membership(c, g);
	for (d = 0; d < c->cfg.n; d++)
		if (c->procs[d].running)
			match_try(c, d);
}

static void apply_dead(struct core *c, uint32_t g, uint32_t k, uint32_t epoch, uint8_t reason)
{
	struct lproc *p = &c->procs[g];
	uint32_t live;

	c->alive[(size_t)g * c->cfg.r + k] = 0;
	core_dead_with(c, (size_t)g * c->cfg.r + k, core_inc(c, g, k), reason);
	c->dead_since[(size_t)g * c->cfg.r + k] = c->now ? c->now : 1;
	if (epoch > c->epoch[g])
		c->epoch[g] = epoch;
	if (p->present && p->rep == k)
		migrate_abort_local(c, g);
	if (p->present && p->rep == k && !p->fenced) {
		struct action *a = core_emit(c, A_KILL);

		a->group = g;
		p->fenced = true;
		p->running = false;
		p->want = false;
	}
	live = (uint32_t)__builtin_popcount(core_live_mask(c, g));
	if (!live)
		core_event(c, "group-lost", "\"group\":%u,\"reason\":\"%s\"", g, reason_name(reason));
	else
		core_event(c, "group-degraded", "\"group\":%u,\"live\":%u,\"r\":%u", g, live, c->cfg.r);
	membership_changed(c, g);
	migrate_sibling_lost(c, g, k, reason);
}

void member_fence(struct core *c, uint32_t g, uint32_t k, uint8_t reason)
{
	uint32_t epoch;

	if (!core_alive(c, g, k))
		return;
	struct frame f = { .h.type = F_MEMBER };

	epoch = c->epoch[g] + 1;
	c->stats.fences++;
	core_event(c, "fence", "\"group\":%u,\"rep\":%u,\"on\":%u,\"epoch\":%u,\"reason\":\"%s\"",
		   g, k, core_host_of(c, g, k), epoch, reason_name(reason));
	f.u.member = (struct f_member){ .group = g, .rep = (uint16_t)k, .state = MEMBER_DEAD,
					.epoch = epoch, .inc = core_inc(c, g, k),
					.host = core_host_of(c, g, k), .reason = reason };
	core_to_peers(c, &f);
	apply_dead(c, g, k, epoch, reason);
	migrate_after_fence(c, g, k, reason);
}

/* A joining replica sent a message equal to its siblings': it is a member
 * with a vote from now on (rule 4). Told to every host, once. */
void member_verified(struct core *c, uint32_t g, uint32_t k)
{
	size_t i = (size_t)g * c->cfg.r + k;
	struct frame f = { .h.type = F_MEMBER };

	c->joining[i] = 0;
	if (c->verified_sent[i])
		return;
	c->verified_sent[i] = 1;
	core_event(c, "member-verified", "\"group\":%u,\"rep\":%u,\"inc\":%u", g, k, c->inc[i]);
	f.u.member = (struct f_member){ .group = g, .rep = (uint16_t)k, .state = MEMBER_LIVE,
					.epoch = c->epoch[g], .inc = c->inc[i], .host = c->host[i] };
	core_to_peers(c, &f);
	membership_changed(c, g);
}

/* Another daemon verified replica g.k (its incarnation as our map has
 * it): its MEMBER live news, or a DLOG_REQ of it as a new ANYSRC leader
 * (only a verified replica leads, so the request is that news too). */
void member_heard_verified(struct core *c, uint32_t g, uint32_t k)
{
	size_t i = (size_t)g * c->cfg.r + k;

	if (c->implicit[i]) {
		/* a copy we took for a move (its DATA came before its
		 * joining news): verified already, but it resumed from a
		 * cut, so what came before it is not expected from it */
		c->implicit[i] = 0;
		c->verified_sent[i] = 1;
		/* which copy it descends from we cannot tell: no older
		 * incarnation's forwarded copy is its own (core_copy_stale) */
		c->line_inc[i] = c->inc[i];
		migrate_expect_joined(c, g, k);
		membership_changed(c, g);
	}
	if (c->joining[i]) {
		c->joining[i] = 0;
		c->verified_sent[i] = 1;
		membership_changed(c, g);
	}
}

/* Host `lost` was declared lost. The fences it decided as a coordinator may
 * have reached some daemons and not others (its unsent buffers died with
 * it): nobody would raise those suspicions again, since the replica is dead
 * in the view of whoever raised them (B4). Every daemon that heard such a
 * fence from it tells the others again; dead is final, so the news is true
 * whoever relays it, and a daemon that has it already ignores it. */
void member_relay_fences(struct core *c, uint32_t lost)
{
	for (uint32_t g = 0; g < c->cfg.n; g++)
		for (uint32_t k = 0; k < c->cfg.r; k++) {
			size_t i = (size_t)g * c->cfg.r + k;
			struct frame f = { .h.type = F_MEMBER };

			if (c->dead_by[i] != lost || c->alive[i])
				continue;
			c->dead_by[i] = UINT32_MAX;
			f.u.member = (struct f_member){ .group = g, .rep = (uint16_t)k,
							.state = MEMBER_DEAD, .epoch = c->epoch[g],
							.inc = c->inc[i], .host = c->host[i],
							.reason = SUS_HOST };
			core_event(c, "fence-relayed", "\"group\":%u,\"rep\":%u,\"inc\":%u,\"by\":%u",
				   g, k, c->inc[i], lost);
			core_to_peers(c, &f);
		}
}

int member_on_suspect(struct core *c, uint32_t from, const struct f_suspect *s)
{
	uint32_t coord;

	size_t i;

	if (s->group >= c->cfg.n || s->rep >= c->cfg.r)
		return FE_FIELD;
	i = (size_t)s->group * c->cfg.r + s->rep;
	struct f_suspect moved = *s;
	bool carried = suspicion_moved_on(c, i, s->inc, s->reason);

	if (s->inc < c->inc[i] && c->alive[i] && from != c->host[i]) {
		/* about an incarnation that moved on: the sender missed the
		 * move's news (it died with the host the replica left, whose
		 * loss is what it suspects). A reactive update, as for a
		 * message that reaches a replica's old host (Figure 5a). */
		struct action *a = core_emit(c, A_PEER);

		a->host = from;
		a->f.h.type = F_MAP;
		a->f.u.map = (struct f_map){ .group = s->group, .rep = s->rep, .host = c->host[i],
					     .inc = c->inc[i], .epoch = c->epoch[s->group],
					     .reactive = 1 };
		if (!carried)
			return 0;
	}
	if (carried) {
		moved.inc = c->inc[i]; /* about the incarnation it moved to */
		s = &moved;
	}
	if (s->inc < c->inc[i] || s->inc <= c->dead_inc[i] ||
	    (s->inc == c->inc[i] && !c->alive[i]))
		return 0; /* already dead, or about an older incarnation */
	coord = core_coordinator(c, s->group, s->rep);
	if (coord == c->cfg.host || coord == UINT32_MAX || coord == from) {
		if (s->inc > c->inc[i]) {
			/* an incarnation we never heard of: a copy whose news died
			 * with its source (the source's host was lost mid-copy and
			 * the target's restore failed). Fenced all the same, so the
			 * daemons that did hear of it count it dead too. */
			c->inc[i] = s->inc;
			c->line_inc[i] = s->inc;
			c->alive[i] = 1;
			c->joining[i] = 1;
		}
		member_fence(c, s->group, s->rep, s->reason);
		return 0;
	}
	/* our views differ: pass it to who we think coordinates */
	send_suspect(c, coord, s->group, s->rep, s->reason);
	return 0;
}

/* News of incarnation `inc` of slot g.k on another host (a copy: its
 * joining or verified news, or its DATA taken as its news) while our own
 * replica of that slot still runs here. A copy fills a dead slot, so ours
 * was fenced (for a mismatch: the process runs until its daemon hears
 * it) and that news is still on its way: dead is final, it is killed now.
 * Left running, it went on sending as the new incarnation (its frames
 * carry the map's number) and, counted as that copy, led ANYSRC decisions
 * (B47). Returns whether it was. */
bool member_supersede_local(struct core *c, uint32_t g, uint32_t k, uint32_t inc)
{
	struct lproc *p = &c->procs[g];

	if (!p->present || p->rep != k || !p->running || p->fenced || p->moved ||
	    (p->capturing && p->cap_mode == MIG_MOVE) ||
	    (c->cfg.flags & CORE_F_TEST_NO_SUPERSEDE))
		return false;
	core_event(c, "fence-superseded", "\"group\":%u,\"rep\":%u,\"by_inc\":%u", g, k, inc);
	migrate_abort_local(c, g);
	core_emit(c, A_KILL)->group = g;
	p->fenced = true;
	p->running = false;
	p->want = false;
	p->present = false; /* its slot is the copy's now (as after B9) */
	return true;
}

int member_on_member(struct core *c, uint32_t from, const struct f_member *m)
{
	size_t i;

	if (m->group >= c->cfg.n || m->rep >= c->cfg.r)
		return FE_FIELD;
	i = (size_t)m->group * c->cfg.r + m->rep;
	if (m->state == MEMBER_JOINING)
		return migrate_member(c, from, m);
	if (m->state == MEMBER_LIVE && m->inc == c->inc[i] && c->alive[i]) {
		member_heard_verified(c, m->group, m->rep);
		return 0;
	}
	if (m->state == MEMBER_LIVE && m->inc > c->inc[i]) {
		migrate_verified_news(c, m); /* its joining news is still on the way */
		return 0;
	}
	if (m->state == MEMBER_LIVE && m->inc < c->inc[i] && m->inc >= c->line_inc[i] &&
	    m->inc > c->dead_inc[i] && c->alive[i] && !c->implicit[i] &&
	    !(c->cfg.test & CORE_T_MOVED_STAYS_JOINING)) {
		/* verified before it moved on, the news slower than the move:
		 * the moved process is the one verified. Dropped as old news,
		 * it stayed joining here for good: no vote, and never the
		 * ANYSRC leader here, so as leader elsewhere it waited for a
		 * sync that never came and was fenced for not deciding (B69) */
		member_heard_verified(c, m->group, m->rep);
		return 0;
	}
	if (m->state == MEMBER_DEAD) {
		/* dead is final for an incarnation, wherever it was: one we
		 * never heard of (a copy whose news has not come) is dead too,
		 * and so is every older one it replaced */
		if (m->inc > c->inc[i]) {
			c->inc[i] = m->inc;
			c->line_inc[i] = m->inc;
			c->joining[i] = 0;
		}
		if (m->inc == c->inc[i] && c->alive[i]) {
			c->dead_by[i] = from;
			apply_dead(c, m->group, m->rep, m->epoch, m->reason);
		} else {
			/* a newer incarnation in the map that is no copy (a copy's
			 * news makes the older ones dead; one known from its DATA
			 * only, or verified, may be one): the fenced replica moved
			 * before its daemon heard, and the move carried its state */
			bool moved_on = m->inc < c->inc[i] && c->alive[i] && !c->implicit[i] &&
					!c->verified_sent[i] && c->dead_inc[i] < m->inc;

			core_dead_with(c, i, m->inc, m->reason);
			/* fenced for what it sent or consumed: suspected anew
			 * (B49) */
			if (moved_on && m->reason != SUS_EXIT && m->reason != SUS_HOST &&
			    m->reason != SUS_LAG && !(c->cfg.flags & CORE_F_TEST_NO_SUPERSEDE))
				core_suspect(c, m->group, m->rep, m->reason,
					     "moved before its fence was heard");
			/* the map has its copy already (its DATA or news came
			 * first): the slot never left the members, so the dead
			 * one's copies are forgotten here, not by
			 * chan_membership (B48, as B46) */
			if (m->inc < c->inc[i] &&
			    !(c->cfg.flags & CORE_F_TEST_NO_SUPERSEDE))
				for (uint32_t d = 0; d < c->cfg.n; d++)
					if (c->procs[d].chans && c->procs[d].chans[m->group])
						chan_forget(c, c->procs[d].chans[m->group],
							    1u << m->rep);
		}
		return 0;
	}
	if (m->host != core_host_of(c, m->group, m->rep) || m->inc != c->inc[i])
		return 0; /* about another incarnation or place: old news */
	if (m->epoch > c->epoch[m->group]) {
		c->epoch[m->group] = m->epoch;
	}
	return 0;
}

/* --- replacement hosts ------------------------------------------------ */

int core_map_dump(const struct core *c, struct f_status *out)
{
	uint32_t g, k, n = 0, total = c->cfg.n * c->cfg.r;

	if (total > STATUS_MAX)
		return -1; /* one frame holds STATUS_MAX replicas */
	memset(out, 0, sizeof(*out));
	out->reps = calloc(total + 1, sizeof(*out->reps));
	if (!out->reps)
		return -1;
	for (g = 0; g < c->cfg.n; g++)
		for (k = 0; k < c->cfg.r; k++) {
			size_t i = (size_t)g * c->cfg.r + k;

			out->reps[n++] = (struct f_status_rep){
				.group = g, .rep = (uint16_t)k, .host = c->host[i],
				.state = !c->alive[i] ? MEMBER_DEAD :
					 c->joining[i] ? MEMBER_JOINING : MEMBER_LIVE,
				.inc = c->inc[i],
			};
		}
	out->host = c->cfg.host;
	out->n = c->cfg.n;
	out->r = c->cfg.r;
	out->m = c->cfg.m;
	out->count = n;
	return 0;
}

/* Ask every peer not known lost for its map. */
static void ask_map(struct core *c)
{
	for (uint32_t h = 0; h < c->cfg.m; h++) {
		if (h == c->cfg.host || c->host_dead[h])
			continue;
		struct action *a = core_emit(c, A_PEER);

		a->host = h;
		a->f.h.type = F_MAP_SYNC_REQ;
	}
	c->map_ask_next = c->now + 200 * 1000000ull;
}

void core_rejoin(struct core *c)
{
	uint32_t g;

	for (g = 0; g < c->cfg.n; g++)
		c->procs[g].present = false; /* what was here died with the old host */
	if (c->cfg.m < 2)
		return;
	c->map_wanted = true;
	c->rejoining = true;
	ask_map(c);
	core_event(c, "rejoin", "\"asked\":%u", c->cfg.m - 1);
}

/* Until a map came: ask again every 200 ms. The peers learn that this host
 * is back from the launcher (HOST_UP), on another connection: one that has
 * not yet drops the ask like any frame of a lost host, and without a map
 * this daemon placed copies restored here on the job's first hosts (for
 * good: the copies never verified, recur run of 2026-11-22). */
void member_map_tick(struct core *c)
{
	if (c->map_wanted && c->now >= c->map_ask_next)
		ask_map(c);
}

void core_host_up(struct core *c, uint32_t h)
{
	if (h >= c->cfg.m || h == c->cfg.host)
		return;
	c->host_dead[h] = 0;
	c->last_heard[h] = c->now;
	core_event(c, "host-up", "\"up\":%u", h);
	migrate_host_change(c, h, true);
}

static int on_map_sync_req(struct core *c, uint32_t from)
{
	struct action *a = core_emit(c, A_PEER);

	a->host = from;
	a->f.h.type = F_STATUS;
	if (core_map_dump(c, &a->f.u.status))
		a->f.u.status.count = 0;
	return 0;
}

/* How far a slot's incarnation got: joining, verified, dead (dead is final). */
static int slot_stage(uint8_t state)
{
	return state == MEMBER_DEAD ? 3 : state == MEMBER_LIVE ? 2 : 1;
}

static int own_stage(const struct core *c, size_t x)
{
	if (c->dead_inc[x] >= c->inc[x])
		return 3;
	return c->alive[x] ? (c->joining[x] ? 1 : 2) : 0;
}

/* A map from a peer (every peer answers a rejoining daemon's ask, some
 * maybe more than once; news may have come before them): merged. The newer
 * incarnation wins, and for the same one the later stage; dead is final. A
 * replica of this host is known here best (a copy restored here before the
 * map came: the peer's map places it here, which would read as the lost
 * host's). */
static int on_map_dump(struct core *c, const struct f_status *s)
{
	uint32_t changed = 0;

	for (uint32_t i = 0; i < s->count; i++) {
		const struct f_status_rep *e = &s->reps[i];
		const struct lproc *p;
		size_t x;

		if (e->group >= c->cfg.n || e->rep >= c->cfg.r || e->host >= c->cfg.m)
			continue;
		x = (size_t)e->group * c->cfg.r + e->rep;
		p = &c->procs[e->group];
		if (p->present && p->rep == e->rep)
			continue;
		if (e->inc < c->inc[x] ||
		    (e->inc == c->inc[x] && slot_stage(e->state) < own_stage(c, x)) ||
		    (e->state != MEMBER_DEAD && e->inc <= c->dead_inc[x]))
			continue;
		if (e->inc != c->inc[x])
			c->line_inc[x] = e->inc;
		c->inc[x] = e->inc;
		core_set_host(c, x, e->host);
		if (e->state == MEMBER_DEAD)
			core_dead_upto(c, x, e->inc);
		c->alive[x] = e->state != MEMBER_DEAD && e->host != c->cfg.host;
		c->joining[x] = e->state == MEMBER_JOINING;
		c->verified_sent[x] = e->state == MEMBER_LIVE;
		changed++;
	}
	if (c->map_wanted || changed)
		core_event(c, "map-synced", "\"replicas\":%u,\"changed\":%u", s->count, changed);
	c->map_wanted = false;
	for (uint32_t g = 0; changed && g < c->cfg.n; g++)
		membership_changed(c, g);
	return 0;
}

int member_on_sync(struct core *c, uint32_t from, const struct frame *f)
{
	return f->h.type == F_MAP_SYNC_REQ ? on_map_sync_req(c, from) : on_map_dump(c, &f->u.status);
}
