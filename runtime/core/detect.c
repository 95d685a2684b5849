/* Failure detectors that need time (DESIGN §6): heartbeats between the
 * daemons of a job (host loss) with a lease (a daemon cut off from the
 * majority fences its own processes, rule 3), the lag of one sender
 * replica's copies behind its siblings' (hang; the bound is learned from the
 * observed lags, the paper's idea), and an ANYSRC leader that stops deciding.
 * Process ends and digest mismatches are seen where they happen (core.c,
 * chan.c). Time comes from core_tick: the core has no clock of its own. */
#include "core/core_impl.h"

#include <stdio.h>

#define MS 1000000ull

static uint64_t hb_period(const struct core *c)
{
	return c->cfg.hb_period_ns ? c->cfg.hb_period_ns : 50 * MS;
}

static uint64_t hb_timeout(const struct core *c)
{
	return c->cfg.hb_timeout_ns ? c->cfg.hb_timeout_ns : 250 * MS;
}

static uint64_t lease(const struct core *c)
{
	return c->cfg.lease_ns ? c->cfg.lease_ns : hb_timeout(c);
}

void core_set_load(struct core *c, uint32_t milli)
{
	c->load_milli = milli < 1000 ? 1000 : milli;
}

uint64_t detect_lag_bound(const struct core *c)
{
	uint64_t floor = c->cfg.lag_floor_ns ? c->cfg.lag_floor_ns : 750 * MS;
	uint64_t learned = c->lag_mean + 8 * c->lag_dev;

	/* oversubscribed: replicas wait their turn for a core, for longer
	 * (at most 4x: a stall must still be caught within seconds) */
	if (c->load_milli > 1000)
		floor = floor / 1000 * (c->load_milli < 4000 ? c->load_milli : 4000);

	return learned > floor ? learned : floor;
}

/* EWMA of inter-replica copy lag and of its deviation (weights 1/16, 1/8). */
void detect_copy_lag(struct core *c, uint64_t lag)
{
	uint64_t dev = lag > c->lag_mean ? lag - c->lag_mean : c->lag_mean - lag;

	c->lag_mean = c->lag_mean - c->lag_mean / 16 + lag / 16;
	c->lag_dev = c->lag_dev - c->lag_dev / 8 + dev / 8;
}

void detect_on_heard(struct core *c, uint32_t host)
{
	if (host < c->cfg.m)
		c->last_heard[host] = c->now;
}

static void heartbeat(struct core *c)
{
	struct frame f = { .h.type = F_HEARTBEAT };

	f.u.heartbeat = (struct f_heartbeat){ .host = c->cfg.host, .count = ++c->hb_count };
	core_to_peers(c, &f);
}

static void host_lost(struct core *c, uint32_t h)
{
	char ev[96];
	uint32_t g, k;

	c->host_dead[h] = 1;
	core_event(c, "host-lost", "\"lost\":%u,\"silent_ms\":%llu", h,
		   (unsigned long long)((c->now - c->last_heard[h]) / MS));
	snprintf(ev, sizeof(ev), "host %u silent for %llu ms", h,
		 (unsigned long long)((c->now - c->last_heard[h]) / MS));
	for (g = 0; g < c->cfg.n; g++)
		for (k = 0; k < c->cfg.r; k++)
			if (core_host_of(c, g, k) == h)
				core_suspect(c, g, k, SUS_HOST, ev);
}

/* Hosts heard within `window`, this one included. */
static uint32_t reachable(const struct core *c, uint64_t window)
{
	uint32_t h, reach = 1;

	for (h = 0; h < c->cfg.m; h++)
		if (h != c->cfg.host && c->now - c->last_heard[h] <= window)
			reach++;
	return reach;
}

/* Rule 3: cut off from the majority for longer than the lease, fence our
 * own processes. With two hosts there is no majority to lose: a partition
 * cannot be told from a crash, and the survivor goes on (documented). */
static void check_lease(struct core *c)
{
	uint32_t reach, g;

	if (c->cfg.m < 3 || c->isolated)
		return;
	reach = reachable(c, lease(c));
	if (reach * 2 > c->cfg.m)
		return;
	c->isolated = true;
	core_event(c, "isolated", "\"reachable\":%u,\"hosts\":%u", reach, c->cfg.m);
	for (g = 0; g < c->cfg.n; g++) {
		struct lproc *p = &c->procs[g];

		if (p->present && core_alive(c, g, p->rep) && !p->fenced) {
			struct action *a = core_emit(c, A_KILL);

			a->group = g;
			p->fenced = true;
			p->running = false;
			c->alive[(size_t)g * c->cfg.r + p->rep] = 0;
			core_event(c, "fence", "\"group\":%u,\"rep\":%u,\"host\":%u,\"reason\":\"lease\"",
				   g, p->rep, c->cfg.host);
		}
	}
}

static void check_hosts(struct core *c)
{
	uint32_t h;

	if (c->cfg.flags & JOB_F_TEST_NO_HB_DETECT)
		return;
	/* The lease first: a daemon cut off from the majority fences its own
	 * processes and says nothing of the others. One that does not hear a
	 * majority right now declares nobody lost either (its view is void
	 * until it hears them again or its lease runs out): only the majority
	 * side of a partition fences the other side's replicas (rule 3). */
	check_lease(c);
	if (c->isolated || (c->cfg.m >= 3 && reachable(c, hb_timeout(c)) * 2 <= c->cfg.m))
		return;
	for (h = 0; h < c->cfg.m; h++)
		if (h != c->cfg.host && !c->host_dead[h] && c->now - c->last_heard[h] > hb_timeout(c))
			host_lost(c, h);
}

static void check_chan_lag(struct core *c, struct chan *ch, uint64_t bound)
{
	uint64_t s;

	for (s = ch->base; s < ch->base + ch->cap; s++) {
		struct entry *e = chan_entry(ch, s);
		uint32_t missing, k;
		char ev[128];

		if (!e)
			continue;
		if (e->t_first + bound > c->now)
			break; /* entries arrive roughly in time order */
		missing = core_live_mask(c, ch->src) & chan_expect(c, ch, e->seq) & ~e->seen & ~e->flagged;
		if (!missing)
			continue;
		e->flagged |= missing;
		snprintf(ev, sizeof(ev), "copy of %u seq %llu missing %llu ms after the first (bound %llu ms)",
			 ch->src, (unsigned long long)e->seq,
			 (unsigned long long)((c->now - e->t_first) / MS),
			 (unsigned long long)(bound / MS));
		for (k = 0; k < c->cfg.r; k++)
			if (missing & (1u << k))
				core_suspect(c, ch->src, k, SUS_LAG, ev);
	}
}

static void check_lag(struct core *c)
{
	uint64_t bound = detect_lag_bound(c);
	uint32_t g, i;

	if ((c->cfg.flags & JOB_F_TEST_NO_LAG_DETECT) || c->now < c->lag_grace_until)
		return;
	for (g = 0; g < c->cfg.n; g++) {
		struct lproc *p = &c->procs[g];

		if (!p->running)
			continue;
		for (i = 0; i < p->nchan_list; i++)
			check_chan_lag(c, p->chans[p->chan_list[i]], bound);
		if (p->any_wait_since && c->now - p->any_wait_since > bound &&
		    !core_joining(c, g, p->rep)) { /* rule 4: a joining copy has no say */
			uint32_t leader = core_leader(c, g);

			p->any_wait_since = 0;
			if (leader != p->rep)
				core_suspect(c, g, leader, SUS_NODECIDE,
					     "candidates available, no ANYSRC decision");
		}
	}
}

void detect_tick(struct core *c)
{
	uint32_t h;

	/* First tick, or this daemon itself was not scheduled for a while: it
	 * cannot tell a silent peer from its own absence, so everyone counts as
	 * just heard and lag clocks restart (no false suspicion under load). */
	if (!c->hb_next || c->now - c->last_tick > hb_timeout(c) / 2) {
		if (c->hb_next)
			core_event(c, "late-tick", "\"late_ms\":%llu",
				   (unsigned long long)((c->now - c->last_tick) / MS));
		for (h = 0; h < c->cfg.m; h++)
			c->last_heard[h] = c->now;
		c->hb_next = c->now;
		c->lag_grace_until = c->now + detect_lag_bound(c);
	}
	c->last_tick = c->now;
	if (c->cfg.m > 1 && c->now >= c->hb_next) {
		heartbeat(c);
		c->hb_next = c->now + hb_period(c);
	}
	if (c->cfg.m > 1)
		check_hosts(c);
	check_lag(c);
}
