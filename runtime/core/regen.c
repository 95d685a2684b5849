/* Regeneration, the coordinator's part (DESIGN §7): after a fence, or when
 * a periodic scan finds a dead slot no copy covers, the group's coordinator
 * picks the least loaded host (MOSIX) and orders the live source replica's
 * daemon to copy it there (F_MIGRATE, MIG_COPY); migrate.c does the copy.
 * A replica that may still run is copied only after its lease (rule 3). */
#include "core/core_impl.h"

#include <stdio.h>
#include <stdlib.h>

#define MS 1000000ull

/* MOSIX (DESIGN §7): the host of least marginal cost Σ n^(used/capacity);
 * with one resource (processes, one slot a host) that is the least loaded
 * live host holding no replica of the group. */
uint32_t core_choose_host(const struct core *c, uint32_t g)
{
	uint32_t h, best = UINT32_MAX, best_load = UINT32_MAX, *load;
	size_t i;

	load = calloc(c->cfg.m, sizeof(uint32_t));
	if (!load)
		return UINT32_MAX;
	for (i = 0; i < (size_t)c->cfg.n * c->cfg.r; i++)
		if (c->alive[i])
			load[c->host[i]]++;
	/* copies under way count on their targets already: back-to-back
	 * regenerations would otherwise all pick the same host */
	for (i = 0; i < c->cfg.n; i++) {
		const struct lproc *q = &c->procs[i];
		uint32_t to = q->regen_to - 1;

		if (q->capturing && q->cap_target < c->cfg.m)
			load[q->cap_target]++;
		else if (q->regen_to && c->now < c->regen_busy[i] && to < c->cfg.m &&
			 !(core_alive(c, (uint32_t)i, q->regen_k) &&
			   core_host_of(c, (uint32_t)i, q->regen_k) == to))
			load[to]++;
	}
	for (h = 0; h < c->cfg.m; h++) {
		bool taken = false;

		for (uint32_t k = 0; k < c->cfg.r; k++) {
			size_t j = (size_t)g * c->cfg.r + k;

			taken |= core_alive(c, g, k) && core_host_of(c, g, k) == h;
			/* a replica fenced for a mismatch runs on until its daemon
			 * hears the fence, and a copy's image may overtake that news:
			 * restored there, the copy met the old process in its place
			 * (B45) */
			taken |= !core_alive(c, g, k) && c->host[j] == h && c->bad_inc[j] &&
				 c->bad_inc[j] >= c->inc[j] && c->bad_inc[j] > c->crash_inc[j];
		}
		if (taken || c->host_dead[h])
			continue;
		if (load[h] < best_load) {
			best = h;
			best_load = load[h];
		}
	}
	free(load);
	return best;
}

/* A copy's incarnation: newer than any this host knows of for the slot, and
 * than any an earlier coordinator of g can have given: it ordered its copy
 * before the fence that made us coordinator, so at an older epoch. (Two
 * attempts under one number were one process to the daemons: the fence of
 * the first, failed, copy killed the second on its target, and the second
 * then joined with no process behind it, for good.) */
static uint32_t copy_inc(struct core *c, uint32_t g, uint32_t k)
{
	size_t i = (size_t)g * c->cfg.r + k;
	uint32_t inc = c->inc[i] + 1;

	if (inc <= c->dead_inc[i])
		inc = c->dead_inc[i] + 1;
	if (inc <= c->epoch[g])
		inc = c->epoch[g] + 1;
	if (c->procs[g].regen_k == k && inc <= c->procs[g].regen_inc)
		inc = c->procs[g].regen_inc + 1;
	return inc;
}

static void regenerate(struct core *c, uint32_t g, uint32_t k)
{
	uint32_t live = core_live_mask(c, g), j, target;
	struct action *a;

	if (core_alive(c, g, k) || !live || c->now < c->regen_busy[g])
		return; /* (busy: a copy of g was ordered already, the scan retries) */
	for (uint32_t x = 0; x < c->cfg.r; x++)
		if (x != k && core_alive(c, g, x) && core_joining(c, g, x))
			return; /* one copy at a time */
	j = (uint32_t)__builtin_ctz(live);
	target = core_choose_host(c, g);
	c->regen_busy[g] = c->now + 2000 * MS; /* until it joins, or we try again */
	if (target == UINT32_MAX) {
		core_event(c, "regen-no-host", "\"group\":%u,\"rep\":%u", g, k);
		return;
	}
	core_event(c, "regen-start", "\"group\":%u,\"rep\":%u,\"from_rep\":%u,\"target\":%u", g, k,
		   j, target);
	struct f_migrate mg = { .group = g, .rep = (uint16_t)k, .src_rep = (uint16_t)j,
				.target = target, .mode = MIG_COPY,
				.inc = copy_inc(c, g, k) };
	c->procs[g].regen_to = target + 1;
	c->procs[g].regen_k = k;
	c->procs[g].regen_inc = mg.inc;
	if (core_host_of(c, g, j) == c->cfg.host) {
		if (core_migrate(c, &mg))
			core_event(c, "regen-refused", "\"group\":%u,\"rep\":%u", g, k);
		return;
	}
	a = migrate_peer_action(c, core_host_of(c, g, j), F_MIGRATE);
	a->f.u.migrate = mg;
}

/* After a fence decided here: regenerate, at once for a process that is
 * known dead, after the lease for one that may still run (rule 3). */
void migrate_after_fence(struct core *c, uint32_t g, uint32_t k, uint8_t reason)
{
	uint64_t wait = reason == SUS_HOST || reason == SUS_LAG || reason == SUS_NODECIDE ?
				detect_lease(c) : 0;
	struct regen *v;

	if (c->no_regen || c->cfg.r < 2)
		return;
	v = realloc(c->regens, (c->nregens + 1) * sizeof(*v));
	if (!v)
		return;
	c->regens = v;
	c->regens[c->nregens++] = (struct regen){ .g = g, .k = k, .at = c->now + wait };
	if (!wait)
		migrate_tick(c);
}

/* Coordinators repair what no pending copy covers: a copy that failed, a
 * slot whose source died mid-copy. One copy of a group at a time; a replica
 * that may still run (host, lag) only after the lease (rule 3). */
static void repair_scan(struct core *c)
{
	uint64_t lease = detect_lease(c);
	uint32_t g, k;

	for (g = 0; g < c->cfg.n; g++) {
		struct lproc *p = &c->procs[g];

		if (!p->present || !p->running || core_leader(c, g) != p->rep ||
		    !core_alive(c, g, p->rep) || core_joining(c, g, p->rep) ||
		    c->now < c->regen_busy[g])
			continue;
		for (k = 0; k < c->cfg.r; k++) {
			size_t i = (size_t)g * c->cfg.r + k;

			if (c->alive[i] || !c->dead_since[i] || c->now - c->dead_since[i] < lease)
				continue;
			regenerate(c, g, k);
			break;
		}
	}
}

/* A spread pre-copy whose time is up while its process waits in a
 * receive: the cut now (that wait is a safe point), not at the next one. */
static void precopy_deadlines(struct core *c)
{
	for (uint32_t g = 0; g < c->cfg.n; g++) {
		struct lproc *p = &c->procs[g];

		if (p->capturing && p->cap_pre && !p->cap_sent && p->want && c->now >= p->cap_pre_until)
			migrate_on_recv(c, g);
	}
}

void migrate_tick(struct core *c)
{
	uint32_t i = 0;

	precopy_deadlines(c);

	if (!c->no_regen && c->cfg.r > 1 && c->now >= c->repair_next) {
		c->repair_next = c->now + 100 * MS;
		repair_scan(c);
	}

	while (i < c->nregens) {
		struct regen r = c->regens[i];

		if (r.at > c->now) {
			i++;
			continue;
		}
		c->regens[i] = c->regens[--c->nregens];
		regenerate(c, r.g, r.k);
	}
}
