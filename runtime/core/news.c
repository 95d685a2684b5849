/* News of a replica's new place at the daemons that talk to it: a move's
 * MAP (the paper's communication-array update), a copy's joining and
 * verified news (MEMBER), and a newer incarnation's DATA taken as that news
 * when it overtakes it. Split from migrate.c, which keeps the source side
 * and the forwarding; restore.c has the target side. */
#include "core/core_impl.h"

int news_on_map(struct core *c, uint32_t from, const struct f_map *m)
{
	size_t i;

	if (m->group >= c->cfg.n || m->rep >= c->cfg.r || m->host >= c->cfg.m)
		return FE_FIELD;
	i = (size_t)m->group * c->cfg.r + m->rep;
	/* old news, unless about an incarnation newer than any we know dead:
	 * a move whose news died with the host it left, where the replica was
	 * fenced as lost with that host (its new place tells us, B23) */
	if (m->inc < c->inc[i] || m->inc <= c->dead_inc[i] || (!c->alive[i] && m->inc == c->inc[i]))
		return 0;
	if (m->host == c->cfg.host && !c->procs[m->group].present)
		return 0; /* about to arrive here: the cut will say so */
	/* the move of a replica fenced for what it sent or consumed (its
	 * daemon moved it before it heard the fence): taken (B23), and
	 * suspected again, since the move carried its state (B49) */
	bool bad = !c->alive[i] && c->bad_inc[i] >= c->inc[i] && c->bad_inc[i] &&
		   !(c->cfg.flags & CORE_F_TEST_NO_SUPERSEDE);
	core_set_host(c, i, m->host);
	/* a move's news comes from the daemon it left (a reactive one may come
	 * from anyone): its frames from there may still be on their way, and
	 * our map may have skipped that place (B59) */
	if (m->inc > c->inc[i] && !m->reactive && !(c->cfg.flags & CORE_F_TEST_NO_SKIPPED_PLACES))
		core_note_past(c, i, from);
	c->inc[i] = m->inc;
	if (m->epoch > c->epoch[m->group])
		c->epoch[m->group] = m->epoch;
	core_event(c, m->reactive ? "map-reactive" : "map-update",
		   "\"group\":%u,\"rep\":%u,\"host\":%u,\"inc\":%u", m->group, m->rep, m->host, m->inc);
	if (!c->alive[i]) {
		c->line_inc[i] = m->inc;
		c->alive[i] = 1;
		c->joining[i] = 0;
		c->implicit[i] = 0;
		membership_changed(c, m->group);
	}
	anysrc_sibling_moved(c, m->group, m->rep);
	if (bad)
		core_suspect(c, m->group, m->rep, SUS_MISMATCH, "moved after its fence");
	return 0;
}

/* From now on keep every message of g until the joining replica's copy was
 * compared; its first message here fixes where it really resumed. */
void migrate_expect_joining(struct core *c, uint32_t g, uint32_t k)
{
	c->joined_at[(size_t)g * c->cfg.r + k] = c->now ? c->now : 1;
	for (uint32_t d = 0; d < c->cfg.n; d++) {
		struct lproc *p = &c->procs[d];
		struct chan *ch = p->chans ? p->chans[g] : NULL;

		if (!ch)
			continue;
		ch->start[k] = ch->contig + 1;
		ch->provisional |= 1u << k;
	}
}

/* A frame from a newer incarnation than we know: the news of its joining
 * is still on its way. Take the frame as the news (lazily, like a reactive
 * update). */
void migrate_implicit_join(struct core *c, uint32_t from, const struct f_data *d)
{
	size_t i = (size_t)d->src * c->cfg.r + d->src_rep;

	uint32_t old = c->inc[i];

	/* (our own replica of the slot cannot have moved without us: the
	 * frame is its copy's, B47) */
	member_supersede_local(c, d->src, d->src_rep, d->src_inc);
	c->inc[i] = d->src_inc;
	core_set_host(c, i, from);
	if (c->alive[i]) {
		/* it moved: same member, new place. Or it is a copy that
		 * replaced an incarnation whose fence we have not heard of yet:
		 * its joining news says so when it comes (migrate_member).
		 * Which, we cannot tell yet: the copies held from the slot
		 * are not judged as the new incarnation's (a copy's would be
		 * fenced for its fenced predecessor's, B48; a move only gives
		 * up suspecting it for what it sent before it moved) */
		c->implicit[i] = 1;
		if (!(c->cfg.flags & CORE_F_TEST_NO_SUPERSEDE))
			for (uint32_t g2 = 0; g2 < c->cfg.n; g2++)
				if (c->procs[g2].chans && c->procs[g2].chans[d->src])
					chan_forget(c, c->procs[g2].chans[d->src], 1u << d->src_rep);
		return;
	}
	c->implicit[i] = 0;
	c->line_inc[i] = d->src_inc; /* (it may be a move of a copy we never heard of) */
	core_dead_upto(c, i, old);
	c->verified_sent[i] = 0;
	c->alive[i] = 1;
	c->joining[i] = !c->verified_sent[i];
	migrate_expect_joining(c, d->src, d->src_rep);
	core_event(c, "member-joining", "\"group\":%u,\"rep\":%u,\"host\":%u,\"inc\":%u,"
		   "\"implicit\":true", d->src, d->src_rep, from, d->src_inc);
	membership_changed(c, d->src);
}

/* News of copy m->group.m->rep, incarnation m->inc, at m->host: it fills
 * its slot, joining unless we heard it was verified. */
static void take_copy_news(struct core *c, const struct f_member *m)
{
	size_t i = (size_t)m->group * c->cfg.r + m->rep;
	struct lproc *p = &c->procs[m->group];

	if (c->implicit[i] && m->inc == c->inc[i])
		c->verified_sent[i] = 0;
	c->implicit[i] = 0;

	if (p->present && p->rep == m->rep && m->host != c->cfg.host)
		member_supersede_local(c, m->group, m->rep, m->inc); /* B47 */
	if (p->present && p->rep == m->rep && m->host != c->cfg.host && !p->running) {
		/* the dead incarnation it replaces lived here: that one is
		 * gone (its slot was taken for the map below, B9) */
		p->present = false;
	}
	if (!(p->present && p->rep == m->rep))
		core_set_host(c, i, m->host);
	core_dead_upto(c, i, m->inc - 1); /* a copy fills a dead slot */
	/* its predecessor's copies are not its own: here the copy's news may
	 * come before its predecessor's fence, so the slot never leaves the
	 * members and chan_membership does not forget them (B48, as B46) */
	if (!(c->cfg.flags & CORE_F_TEST_NO_SUPERSEDE))
		for (uint32_t d = 0; d < c->cfg.n; d++)
			if (c->procs[d].chans && c->procs[d].chans[m->group])
				chan_forget(c, c->procs[d].chans[m->group], 1u << m->rep);
	if (m->inc != c->inc[i])
		c->verified_sent[i] = 0;
	c->inc[i] = m->inc;
	c->line_inc[i] = m->inc;
	c->alive[i] = 1;
	c->joining[i] = !c->verified_sent[i];
	if (m->epoch > c->epoch[m->group])
		c->epoch[m->group] = m->epoch;
	migrate_expect_joining(c, m->group, m->rep);
	core_event(c, "member-joining", "\"group\":%u,\"rep\":%u,\"host\":%u,\"inc\":%u",
		   m->group, m->rep, m->host, m->inc);
	membership_changed(c, m->group);
}

int migrate_member(struct core *c, uint32_t from, const struct f_member *m)
{
	size_t i = (size_t)m->group * c->cfg.r + m->rep;
	struct action *a;

	if (m->host >= c->cfg.m || m->fwd_host >= c->cfg.m)
		return FE_FIELD;
	/* (implicit: its DATA came first and was taken for a move's news; it
	 * is a copy, joining, and resumed from a cut: what it never sends must
	 * not be waited for. A copy fenced before its news came stays dead:
	 * dead is final) */
	if (m->inc > c->dead_inc[i] &&
	    (m->inc > c->inc[i] || (m->inc == c->inc[i] && (!c->alive[i] || c->implicit[i]))))
		take_copy_news(c, m);
	a = migrate_peer_action(c, m->fwd_host == c->cfg.host ? from : m->fwd_host, F_MEMBER_ACK);
	a->f.u.member_ack = (struct f_member_ack){ .group = m->group, .rep = m->rep,
						   .inc = m->inc, .from_host = c->cfg.host };
	return 0;
}

/* The verification news of a copy (MEMBER live, from the daemon that saw
 * its first message match) came before its joining news (from the
 * coordinator, on another connection), and before any DATA of it: it is
 * news of the copy all the same, verified. Ignored as old news, the copy
 * stayed joining here for good once its DATA came (implicit join): no
 * vote, the group counted lost, its messages never delivered (B29). No ack:
 * the joining news, when it comes, is acked as always. */
void migrate_verified_news(struct core *c, const struct f_member *m)
{
	size_t i = (size_t)m->group * c->cfg.r + m->rep;

	if (m->host >= c->cfg.m || m->inc <= c->inc[i] || m->inc <= c->dead_inc[i])
		return;
	take_copy_news(c, m);
	c->joining[i] = 0;
	c->verified_sent[i] = 1;
	core_event(c, "member-verified-news", "\"group\":%u,\"rep\":%u,\"inc\":%u", m->group,
		   m->rep, m->inc);
	membership_changed(c, m->group);
}
