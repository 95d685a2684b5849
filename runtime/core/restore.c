/* The target side of a move or a copy: a replica arrives here as an image
 * (core_incoming), its state comes from the source's daemon (PROC_STATE, the
 * cut's CUT_CHAN frames, STATE_END), and it runs once both the process and
 * its state are there. A restore that fails leaves the replica with its
 * source, or, when the source already ended, nowhere: then it is fenced.
 * Split from migrate.c, which keeps the source side and the forwarding. */
#include "core/core_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


bool core_incoming_refused(const struct core *c, uint32_t g, uint32_t k)
{
	const struct lproc *p;

	if (g >= c->cfg.n || k >= c->cfg.r || (c->cfg.test & CORE_T_TAKE_SECOND_REPLICA))
		return false;
	p = &c->procs[g];
	return p->present && p->rep != k && !p->fenced && (p->running || p->restoring) &&
	       c->alive[(size_t)g * c->cfg.r + p->rep];
}

int core_incoming(struct core *c, uint32_t g, uint32_t k, uint32_t inc, uint8_t mode,
		  uint32_t from)
{
	struct lproc *p;
	size_t i;

	if (g >= c->cfg.n || k >= c->cfg.r)
		return -1;
	p = &c->procs[g];
	i = (size_t)g * c->cfg.r + k;
	if (p->present && p->rep == k && p->restoring && c->inc[i] == inc)
		return 0; /* already known (state and image race) */
	if (inc <= c->dead_inc[i])
		return 0; /* fenced before it got here (dead is final): its
			   * restorer, if any, is refused when it says hello */
	if (core_incoming_refused(c, g, k)) {
		/* taken, it would replace the replica that lives here (B67) */
		core_event(c, "restore-refused", "\"group\":%u,\"rep\":%u,\"inc\":%u,"
			   "\"why\":\"replica %u of the group is here\"", g, k, inc, p->rep);
		return -1;
	}
	/* a move of a replica we know fenced for what it sent or consumed (its
	 * daemon moved it before it heard): it carries that state; suspected
	 * once it is in the map, below (B49) */
	bool bad = mode == MIG_MOVE && !c->alive[i] && c->bad_inc[i] &&
		   c->bad_inc[i] >= c->inc[i] && !(c->cfg.flags & CORE_F_TEST_NO_SUPERSEDE);
	p->prev_host = c->host[i];
	core_set_host(c, i, c->cfg.host);
	if (mode == MIG_COPY && c->inc[i] != inc)
		c->verified_sent[i] = 0; /* a new copy proves itself anew */
	if (mode == MIG_COPY) {
		core_dead_upto(c, i, inc - 1); /* a copy fills a dead slot */
		/* its predecessor's copies are not its own (its fence's news may
		 * come after this: B46) */
		for (uint32_t d = 0; d < c->cfg.n; d++)
			if (c->procs[d].chans && c->procs[d].chans[g])
				chan_forget(c, c->procs[d].chans[g], 1u << k);
	}
	if (mode == MIG_COPY || !c->alive[i])
		c->line_inc[i] = inc;
	c->inc[i] = inc;
	c->alive[i] = 1;
	if (mode == MIG_COPY && !c->verified_sent[i]) {
		c->joining[i] = 1;
		migrate_expect_joining(c, g, k);
	}
	migrate_abort_local(c, g); /* nothing of a previous process here carries over */
	p->fwd = false;
	/* not its channels either: a replica of g that lived here before and
	 * moved away left what it consumed, and the cut's copies below that
	 * would be taken as late copies and dropped */
	core_lproc_free(p, c->cfg.n);
	p->present = true;
	p->rep = k;
	p->running = false;
	/* a receive of the process it replaces here (an older copy still
	 * being restored, killed by the shell now) is not its own: kept, the
	 * new one's repeated receive was refused as a second one (B63) */
	if (!(c->cfg.flags & CORE_F_TEST_KEEP_WANT))
		p->want = false;
	p->restoring = true;
	p->state_ready = false;
	/* its state comes from the daemon its image comes from: where a move
	 * was, a copy's survivor's daemon (known here before the survivor's
	 * PROC_STATE: a sibling lost with its host meanwhile fails the copy
	 * only if it was that one, B39) */
	p->restore_from = from < c->cfg.m ? from : mode == MIG_MOVE ? p->prev_host : UINT32_MAX;
	p->moved = p->fenced = p->finalized = false;
	p->any_next = 1;
	p->dlog.first = 1;
	p->dlog.len = 0;
	p->state_begun = false;
	p->moved_in = mode == MIG_MOVE; /* see on_proc_state */
	/* it leads (if it does) only after syncing, like any new leader */
	p->leading = p->syncing = p->pend = false;
	p->sync_wait = 0;
	p->any_wait_since = 0;
	p->promised = 0;
	p->ndpend = 0;
	migrate_release_held(c, g, k);
	/* the slot's member changed (a dead one replaced by a joining copy):
	 * votes that waited for the dead one's copy are decided now (B10) */
	membership_changed(c, g);
	if (bad)
		core_suspect(c, g, k, SUS_MISMATCH, "moved after its fence");
	return 0;
}

/* Nothing of a moved replica is left: its source ended when its state
 * left, and its image never became a process here. */
static void move_lost(struct core *c, uint32_t g, uint32_t k)
{
	core_suspect(c, g, k, SUS_EXIT, "restore failed after its source ended");
	core_emit(c, A_KILL)->group = g; /* the shell reports the slot's end */
}

void core_restore_failed(struct core *c, uint32_t g)
{
	struct lproc *p;
	size_t i;

	/* (not present: it was given up already, a newer copy of its slot
	 * took its place; the map is about that one now) */
	if (g >= c->cfg.n || !c->procs[g].present || !c->procs[g].restoring)
		return;
	p = &c->procs[g];
	i = (size_t)g * c->cfg.r + p->rep;
	core_event(c, "restore-failed", "\"group\":%u,\"rep\":%u", g, p->rep);
	if (c->joining[i] && c->alive[i] && c->host[i] == c->cfg.host) {
		/* a copy: its source counts it as a joining member here (and the
		 * others send to it here), so it does not just go away: its
		 * coordinator fences it and copies the slot again. (Left alone it
		 * stayed joining for good, and what reached this host for it was
		 * forwarded to the slot's previous, lost, host.) */
		p->present = p->restoring = p->running = false;
		core_suspect(c, g, p->rep, SUS_EXIT, "restore failed");
		return;
	}
	p->present = p->restoring = p->running = false;
	if (p->moved_in && p->state_begun) {
		move_lost(c, g, p->rep);
		return;
	}
	/* the source may still have it (its capture fails too) or not (its
	 * state is on the way): on_proc_state tells */
	p->failed_inc = c->inc[i];
	p->failed_rep = p->rep;
	core_set_host(c, i, p->prev_host);
	if (c->joining[i])
		c->alive[i] = 0;
}

int core_local_restored(struct core *c, uint32_t g)
{
	struct lproc *p;

	if (g >= c->cfg.n || !c->procs[g].present || !c->procs[g].restoring)
		return FE_FIELD;
	p = &c->procs[g];
	p->running = true;
	if (p->state_ready) {
		p->restoring = false;
		core_event(c, "migrate-restored", "\"group\":%u,\"rep\":%u", g, p->rep);
		anysrc_membership(c, g);
	}
	return 0;
}

int restore_on_proc_state(struct core *c, uint32_t from, const struct f_proc_state *s)
{
	struct lproc *p;

	if (s->group >= c->cfg.n || s->rep >= c->cfg.r || !s->any_next)
		return FE_FIELD;
	p = &c->procs[s->group];
	if (s->mode == MIG_MOVE && !p->present && p->failed_inc == s->inc &&
	    p->failed_rep == s->rep && s->inc) {
		/* its restore here failed first; the source finished regardless */
		core_set_host(c, (size_t)s->group * c->cfg.r + s->rep, c->cfg.host);
		p->failed_inc = 0;
		move_lost(c, s->group, s->rep);
		return 0;
	}
	if (core_incoming(c, s->group, s->rep, s->inc, s->mode, from))
		return 0; /* its image was refused here (B67): none of it is kept */
	p = &c->procs[s->group];
	if (!p->present || p->rep != s->rep || !p->restoring ||
	    c->inc[(size_t)s->group * c->cfg.r + s->rep] != s->inc)
		return 0; /* an incarnation fenced before its state came: none of it is kept */
	/* its ANYSRC frames from here carry DECISION_F_MOVED until every host
	 * can know its new place (anysrc.c) */
	p->moved_in = s->mode == MIG_MOVE;
	p->any_next = s->any_next;
	p->dlog.first = s->any_next;
	p->dlog.len = 0;
	p->restore_from = from;
	if (s->mode == MIG_MOVE)
		p->prev_host = from; /* where it really was (our map may lag a move behind) */
	p->state_begun = true;
	anysrc_pending(c, s->group); /* decisions that came before this */
	return 0;
}

/* A cut's frame for the incarnation being restored here, not for an older
 * one of the slot whose restore this one replaced: a move's cut still on
 * its way from the move's source when a copy of the slot, ordered after
 * the moved process died, began here (B68). */
static bool state_for_this(const struct core *c, const struct lproc *p, uint32_t from)
{
	return (c->cfg.test & CORE_T_STALE_STATE) || p->restore_from == UINT32_MAX ||
	       from == p->restore_from;
}

int restore_on_cut_chan(struct core *c, uint32_t from, const struct f_cut_chan *k)
{
	struct lproc *p;

	if (k->group >= c->cfg.n || k->src >= c->cfg.n)
		return FE_FIELD;
	p = &c->procs[k->group];
	if (!p->present || !p->restoring || p->rep != k->rep || !state_for_this(c, p, from))
		return 0;
	chan_apply_cut(c, chan_get(c, p, k->src), k->consumed_low, k->seqs, k->count);
	return 0;
}

int restore_on_state_end(struct core *c, uint32_t from, const struct f_state_end *e)
{
	struct lproc *p;

	if (e->group >= c->cfg.n || e->rep >= c->cfg.r)
		return FE_FIELD;
	p = &c->procs[e->group];
	if (!p->present || p->rep != e->rep || !p->restoring || !state_for_this(c, p, from) ||
	    (!(c->cfg.test & CORE_T_STALE_STATE) &&
	     c->inc[(size_t)e->group * c->cfg.r + e->rep] != e->inc))
		return 0;
	p->state_ready = true;
	if (p->running) {
		p->restoring = false;
		core_event(c, "migrate-restored", "\"group\":%u,\"rep\":%u", e->group, p->rep);
	}
	anysrc_membership(c, e->group); /* it may lead now (it could not without its state) */
	match_try(c, e->group);
	return 0;
}


/* Host h was lost: a replica being restored here whose state (the cut) was
 * to come from h never gets it (frames from a lost host are not heard), so
 * it cannot run: it is lost with h, and suspected as such (its coordinator
 * fences it, and regenerates it when regeneration is on). */
void migrate_source_lost(struct core *c, uint32_t h)
{
	for (uint32_t g = 0; g < c->cfg.n; g++) {
		struct lproc *p = &c->procs[g];
		if (!p->present || !p->restoring || p->state_ready || p->restore_from != h)
			continue;
		core_event(c, "restore-failed", "\"group\":%u,\"rep\":%u,\"why\":\"source %u lost\"",
			   g, p->rep, h);
		core_suspect(c, g, p->rep, SUS_HOST, "the host its state was to come from was lost");
	}
}
