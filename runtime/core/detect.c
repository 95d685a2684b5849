/* Failure detectors that need time (DESIGN §6): heartbeats between the
 * daemons of a job (host loss) with a lease (a daemon cut off from the
 * majority fences its own processes, rule 3), the lag of one sender
 * replica's copies behind its siblings' (hang; the bound is learned from the
 * observed lags, the paper's idea), and an ANYSRC leader that stops deciding.
 * Process ends and digest mismatches are seen where they happen (core.c,
 * chan.c). Time comes from core_tick: the core has no clock of its own. */
#include "core/core_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MS 1000000ull

/* Siblings' progress, the lag detector's second measure (besides time):
 * while one replica of a group says nothing, in how many 20 ms steps new
 * messages of the group arrived here from its other replicas. Under load
 * every replica slows down alike, so silences grow in wall time but the
 * siblings' progress during them does not; a replica that runs behind by
 * a constant offset (it started late) still sends at the group's pace; a
 * stalled one stays silent while its siblings go on. Its host must have
 * made progress meanwhile too (other replicas there spoke): a host whose
 * daemon is not scheduled silences all its replicas at once, a stalled
 * replica is silent alone. Steps, not messages:
 * a daemon that was not scheduled for a while takes in a burst of one
 * connection's frames before the next connection's. */
#define LAG_STEP_NS (20 * MS)
#define LAG_MSGS_MIN 25     /* steps with the siblings' progress, at least (500 ms) */
#define TOLD_HELD 0x80000000u

struct lagstate {
	uint64_t *gcount;   /* [n] steps in which group g made progress here */
	uint64_t *gstep;    /* [n] the last of them (now / LAG_STEP_NS) */
	uint64_t *heard;    /* [n*r] when a copy from g.k last arrived here (0: never) */
	uint64_t *heard_at; /* [n*r] gcount[g] then */
	uint64_t *hcount;   /* [m] steps in which some replica on host h spoke here */
	uint64_t *hstep;    /* [m] the last of them */
	uint64_t *hheard_at; /* [n*r] hcount[its host] when g.k last spoke */
	uint32_t *told;     /* [n*r] incarnation + 1 suspected of lag this episode
			     * (TOLD_HELD: while held), 0: none */
	uint8_t *overdue;   /* [n*r] scratch: some copy of it is overdue now */
	uint64_t msg_mean, msg_dev; /* EWMA of the group's steps between two
				     * copies of one replica, x16 */
	uint64_t gap_max;   /* the longest of those lately, x16 (decays: halves in ~14 s) */
};

static struct lagstate *lagstate(struct core *c)
{
	size_t nr = (size_t)c->cfg.n * c->cfg.r;
	struct lagstate *L = c->lag;

	if (L)
		return L;
	L = calloc(1, sizeof(*L));
	if (!L || !(L->heard = calloc(nr, sizeof(*L->heard))) ||
	    !(L->gcount = calloc(c->cfg.n, sizeof(*L->gcount))) ||
	    !(L->gstep = calloc(c->cfg.n, sizeof(*L->gstep))) ||
	    !(L->heard_at = calloc(nr, sizeof(*L->heard_at))) ||
	    !(L->hcount = calloc(c->cfg.m, sizeof(*L->hcount))) ||
	    !(L->hstep = calloc(c->cfg.m, sizeof(*L->hstep))) ||
	    !(L->hheard_at = calloc(nr, sizeof(*L->hheard_at))) ||
	    !(L->told = calloc(nr, sizeof(*L->told))) || !(L->overdue = calloc(nr, 1)))
		abort();
	c->lag = L;
	return L;
}

void detect_free(struct core *c)
{
	if (!c->lag)
		return;
	free(c->lag->heard);
	free(c->lag->gcount);
	free(c->lag->gstep);
	free(c->lag->heard_at);
	free(c->lag->hcount);
	free(c->lag->hstep);
	free(c->lag->hheard_at);
	free(c->lag->told);
	free(c->lag->overdue);
	free(c->lag);
	c->lag = NULL;
}

static uint64_t hb_period(const struct core *c)
{
	return c->cfg.hb_period_ns ? c->cfg.hb_period_ns : 50 * MS;
}

static uint64_t hb_timeout(const struct core *c)
{
	return c->cfg.hb_timeout_ns ? c->cfg.hb_timeout_ns : 250 * MS;
}

uint64_t detect_lease(const struct core *c)
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
	 * (at most 8x, 6 s at defaults: this is the backstop for what the
	 * siblings' progress cannot show, a stall near the end or on a quiet
	 * channel; check_chan_lag catches the others after the floor) */
	if (c->load_milli > 1000)
		floor = floor / 1000 * (c->load_milli < 8000 ? c->load_milli : 8000);

	return learned > floor ? learned : floor;
}

/* The group's steps of progress during a replica's silence before the quick
 * bound applies: learned like the time bound, and 1.5 times the longest
 * silence of a healthy replica lately (on a loaded machine one may be left
 * without a core for a second while its siblings go on), at least
 * LAG_MSGS_MIN. */
static uint64_t lag_msgs_bound(const struct lagstate *L)
{
	uint64_t learned = (L->msg_mean + 8 * L->msg_dev + 15) / 16;
	uint64_t longest = (L->gap_max * 3 / 2 + 15) / 16;

	if (learned < longest)
		learned = longest;
	return learned > LAG_MSGS_MIN ? learned : LAG_MSGS_MIN;
}

/* EWMA of a value and of its deviation (weights 1/16, 1/8). */
static void ewma(uint64_t *mean, uint64_t *dev, uint64_t v)
{
	uint64_t d = v > *mean ? v - *mean : *mean - v;

	*mean = *mean - *mean / 16 + v / 16;
	*dev = *dev - *dev / 8 + d / 8;
}

/* Sender replica k of g spoke: when, and how far its group and its host
 * had got then (check_chan_lag's measures of its silence). */
static void heard(struct core *c, uint32_t g, uint32_t k)
{
	struct lagstate *L = lagstate(c);
	size_t i = (size_t)g * c->cfg.r + k;
	uint32_t h = core_host_of(c, g, k);

	L->heard[i] = c->now ? c->now : 1;
	L->heard_at[i] = L->gcount[g];
	if (h < c->cfg.m) {
		if (c->now / LAG_STEP_NS != L->hstep[h]) {
			L->hcount[h]++;
			L->hstep[h] = c->now / LAG_STEP_NS;
		}
		L->hheard_at[i] = L->hcount[h];
	}
}

/* Inter-replica copy lag in time, and the siblings' messages between two
 * copies of one replica. */
void detect_copy(struct core *c, const struct chan *ch, const struct entry *e, uint32_t k)
{
	struct lagstate *L = lagstate(c);
	size_t i = (size_t)ch->src * c->cfg.r + k;

	if (!e->seen && c->now / LAG_STEP_NS != L->gstep[ch->src]) {
		L->gcount[ch->src]++; /* the group made progress in this step */
		L->gstep[ch->src] = c->now / LAG_STEP_NS;
	}
	if (L->heard[i]) {
		uint64_t gap = 16 * (L->gcount[ch->src] - L->heard_at[i]);

		ewma(&L->msg_mean, &L->msg_dev, gap);
		if (gap > L->gap_max)
			L->gap_max = gap;
	}
	heard(c, ch->src, k);
	if (e->seen && !(e->seen & (1u << k))) /* not its first copy, nor a repeat */
		ewma(&c->lag_mean, &c->lag_dev, c->now - e->t_first);
}

/* A copy from sender replica k of g came after its entry retired: too late
 * to be compared, but it shows k runs. A copy resumed from a cut behind the
 * slowest live sibling sends nothing else for as long as it stays behind;
 * its silence counted from its previous incarnation's last copy, the lag
 * detector fenced it, sound (B57). */
void detect_late_copy(struct core *c, uint32_t g, uint32_t k)
{
	if (!(c->cfg.flags & CORE_F_TEST_LATE_SILENT))
		heard(c, g, k);
}

void detect_on_heard(struct core *c, uint32_t host)
{
	if (host < c->cfg.m) {
		c->last_heard[host] = c->now;
		c->rejoin_heard[host] = 1;
	}
}

/* A replacement daemon (core_rejoin) hears from each peer only once that
 * peer heard from the launcher that this host is back (HOST_UP); until
 * then the peer counts this host lost and sends it nothing. Under load that
 * took 300 ms, more than the heartbeat timeout: the replacement declared
 * two healthy hosts lost and its suspicions had their replicas fenced (a
 * rank lost every replica at the next loss, recur run of 2026-11-22). So
 * for a grace period after its first tick it declares lost only a host it
 * heard and then no more, and does not count itself cut off. */
#define REJOIN_GRACE_TIMEOUTS 8

static bool rejoin_grace(const struct core *c)
{
	return c->rejoining && c->now < c->rejoin_grace;
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
	migrate_host_change(c, h, false);
	migrate_source_lost(c, h);
	member_relay_fences(c, h);
	migrate_reannounce(c, h);
	snprintf(ev, sizeof(ev), "host %u silent for %llu ms", h,
		 (unsigned long long)((c->now - c->last_heard[h]) / MS));
	for (g = 0; g < c->cfg.n; g++)
		for (k = 0; k < c->cfg.r; k++)
			if (core_host_of(c, g, k) == h)
				core_suspect(c, g, k, SUS_HOST, ev);
}

/* Hosts heard within `window`, this one included; a host declared lost
 * is not counted even if it still talks (it is out of quorum_hosts). */
static uint32_t reachable(const struct core *c, uint64_t window)
{
	bool fixed = c->cfg.flags & JOB_F_TEST_FIXED_QUORUM;
	uint32_t h, reach = 1;

	for (h = 0; h < c->cfg.m; h++)
		if (h != c->cfg.host && (fixed || !c->host_dead[h]) &&
		    c->now - c->last_heard[h] <= window)
			reach++;
	return reach;
}

/* The hosts a majority is counted of: the job's, less those this daemon
 * declared lost (dead is final until a replacement comes up). A lost host
 * was silent past its own lease, so it fenced its processes, and it was
 * declared lost only by a daemon that heard a majority of the hosts counted
 * before: any two such majorities share a host, so two sides of a partition
 * still cannot both go on. Counting lost hosts for ever meant that after two
 * losses of six, one more daemon late by a heartbeat timeout (a loaded host,
 * campaign run 145 of session 9: its loop 284 ms late) left the three others
 * short of a majority of six: all three fenced their own processes and the
 * job died with most of its hosts alive. */
static uint32_t quorum_hosts(const struct core *c)
{
	uint32_t h, m = c->cfg.m;

	if (c->cfg.flags & JOB_F_TEST_FIXED_QUORUM)
		return m;
	for (h = 0; h < c->cfg.m; h++)
		if (h != c->cfg.host && c->host_dead[h])
			m--;
	return m;
}

/* Rule 3: cut off from the majority for longer than the lease, fence our
 * own processes. With two hosts there is no majority to lose: a partition
 * cannot be told from a crash, and the survivor goes on (documented). */
static void check_lease(struct core *c)
{
	uint32_t reach, g, m = quorum_hosts(c);

	if (c->cfg.m < 3 || c->isolated || rejoin_grace(c))
		return;
	reach = reachable(c, detect_lease(c));
	if (reach * 2 > m)
		return;
	c->isolated = true;
	core_event(c, "isolated", "\"reachable\":%u,\"hosts\":%u", reach, m);
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

/* A majority counts as heard for declaring another host lost only if heard
 * well within the timeout. When this host's own link goes down every peer
 * falls silent at once, but their last heartbeats are up to a period apart:
 * the first one past the timeout would be declared lost while the others,
 * silent a little less long, still counted as heard (a cut-off daemon
 * fenced a majority host's replica, caught by faults_netns_msgctl_cut).
 * Peers of a connected host are heard every period; those of a cut-off one
 * have been silent for at least timeout - period. */
static uint64_t fresh_window(const struct core *c)
{
	uint64_t t = hb_timeout(c), p = hb_period(c);

	return t > p ? (t - p) * 3 / 4 : t / 2;
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
	if (c->isolated || (c->cfg.m >= 3 && reachable(c, fresh_window(c)) * 2 <= quorum_hosts(c)))
		return;
	for (h = 0; h < c->cfg.m; h++)
		if (h != c->cfg.host && !c->host_dead[h] && c->now - c->last_heard[h] > hb_timeout(c) &&
		    (!rejoin_grace(c) || c->rejoin_heard[h]))
			host_lost(c, h);
}

/* A copy is overdue from sender replica k when it is missing
 *   - longer than the time bound (detect_lag_bound, scaled by the load), or
 *   - longer than the floor (--stall-min), while nothing at all came from k
 *     for as long and its siblings made progress in more steps meanwhile
 *     than between two copies of a healthy replica
 *     (learned, at least LAG_MSGS_MIN): a replica that stopped, not a
 *     machine that slowed down.
 * One suspicion per replica and episode (the episode ends when none of its
 * copies is overdue any more, or with its incarnation); member.c resends it
 * until the coordinator answers. */
static void check_chan_lag(struct core *c, struct chan *ch, uint64_t bound, uint64_t floor,
			   bool grace)
{
	struct lagstate *L = lagstate(c);
	uint64_t msgs = lag_msgs_bound(L), s;

	for (s = ch->base; s < ch->base + ch->cap; s++) {
		struct entry *e = chan_entry(ch, s);
		uint64_t age;
		uint32_t missing, k;

		if (!e)
			continue;
		age = c->now - e->t_first;
		if (age <= floor)
			break; /* entries arrive roughly in time order */
		missing = core_live_mask(c, ch->src) & chan_expect(c, ch, e->seq) & ~e->seen;
		if (!missing)
			continue;
		for (k = 0; k < c->cfg.r; k++) {
			size_t i = (size_t)ch->src * c->cfg.r + k;
			bool held = c->held[i];
			uint32_t told = core_inc(c, ch->src, k) + 1;
			uint64_t quiet = L->heard[i] ? c->now - L->heard[i] : 0;
			uint64_t ahead = L->gcount[ch->src] - L->heard_at[i];
			uint32_t h = core_host_of(c, ch->src, k);
			uint64_t host = h < c->cfg.m ? L->hcount[h] - L->hheard_at[i] : 0;
			char ev[160];

			if (!(missing & (1u << k)))
				continue;
			if (age > bound && !grace)
				snprintf(ev, sizeof(ev), "copy of %u seq %llu missing %llu ms after the first "
					 "(bound %llu ms)", ch->src, (unsigned long long)e->seq,
					 (unsigned long long)(age / MS), (unsigned long long)(bound / MS));
			else if (quiet > floor && ahead >= msgs && host >= msgs)
				snprintf(ev, sizeof(ev), "seq %llu: silent %llu ms, siblings on %llu steps, "
					 "host %llu (bound %llu ms, %llu steps)", (unsigned long long)e->seq,
					 (unsigned long long)(quiet / MS), (unsigned long long)ahead,
					 (unsigned long long)host, (unsigned long long)(floor / MS),
					 (unsigned long long)msgs);
			else
				continue;
			L->overdue[i] = 1;
			if (e->flagged & (1u << k))
				continue;
			e->flagged |= 1u << k;
			if ((L->told[i] & ~TOLD_HELD) == told)
				continue; /* told already in this episode */
			L->told[i] = told | (held ? TOLD_HELD : 0);
			core_suspect(c, ch->src, k, SUS_LAG, ev);
		}
	}
}

static void check_lag(struct core *c)
{
	struct lagstate *L = lagstate(c);
	uint64_t bound = detect_lag_bound(c);
	uint64_t floor = c->cfg.lag_floor_ns ? c->cfg.lag_floor_ns : 750 * MS;
	size_t i, nr = (size_t)c->cfg.n * c->cfg.r;
	bool grace = c->now < c->lag_grace_until;
	uint32_t g;

	/* in the grace after our own late tick only the siblings' progress
	 * counts (it does not advance while we were away) */
	if (c->cfg.flags & JOB_F_TEST_NO_LAG_DETECT)
		return;
	memset(L->overdue, 0, nr);
	L->gap_max -= L->gap_max >> 10; /* per 20 ms tick */
	for (g = 0; g < c->cfg.n; g++) {
		struct lproc *p = &c->procs[g];

		if (!p->running)
			continue;
		for (i = 0; i < p->nchan_list; i++)
			check_chan_lag(c, p->chans[p->chan_list[i]], bound, floor, grace);
		if (p->any_wait_since && c->now - p->any_wait_since > bound / 2)
			anysrc_pull(c, g);
		if (!grace && p->any_wait_since && c->now - p->any_wait_since > bound &&
		    !core_joining(c, g, p->rep)) { /* rule 4: a joining copy has no say */
			uint32_t leader = core_leader(c, g);

			p->any_wait_since = 0;
			if (leader != p->rep)
				core_suspect(c, g, leader, SUS_NODECIDE,
					     "candidates available, no ANYSRC decision");
		}
	}
	/* an episode ends once nothing of it is overdue, or when a suspicion
	 * that found it held may go now */
	for (i = 0; i < nr; i++)
		if (L->told[i] && (!L->overdue[i] || ((L->told[i] & TOLD_HELD) && !c->held[i])))
			L->told[i] = 0;
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
		if (!c->hb_next)
			c->rejoin_grace = c->now + REJOIN_GRACE_TIMEOUTS * hb_timeout(c);
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
