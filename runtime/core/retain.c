/* Sender-side retention (DESIGN §5 rule 5; docs/protocol.md §5).
 *
 * A sender's daemon keeps every message its local process sent to a remote
 * replica until that replica acknowledges, from the place our map has it
 * at, that it holds the copy (F_DATA_ACK, cumulative per channel and sender
 * replica). Whenever our map places a live replica of the destination
 * somewhere (host, incarnation) that a retained message was not sent to —
 * it moved, or a copy of it joined — the message is sent there again; the
 * receiver's exactly-once rule makes the extra copy harmless.
 *
 * Why: a copy that went to the host a replica had just left (or to a copy's
 * survivor, to be forwarded) has only that host's daemon as a way on; when
 * that host is lost with its buffers, the retained message is the only one
 * left (B35, Figure 5a through a dead host; seed 8790 for a copy). A daemon
 * that forwards for a replica (a copy's source) acknowledges nothing for it
 * until the forwarding ends, so the sender keeps what the copy may need.
 *
 * The same store is what sending the payload once and digests from the
 * other sender replicas (issue 3, DESIGN §5 "Comparison") needs: a daemon
 * that sent only a digest still holds the payload, and sends it when the
 * payload sender's copy does not come.
 *
 * Memory: released by acks; bounded per channel (RETAIN_MAX_MSGS) and per
 * daemon (RETAIN_MAX_BYTES); over a bound the oldest message goes (an event
 * says so: from then on that message is protected as before, by the
 * forwarding alone). A message above RETAIN_MAX_MSG is not retained (its
 * payload would otherwise live an ack round longer than its sends). */
#include "core/core_impl.h"

#include <stdlib.h>
#include <string.h>

#define RETAIN_MAX_MSGS 4096
#define RETAIN_MAX_BYTES ((uint64_t)256 << 20)
#define RETAIN_MAX_MSG ((uint64_t)64 << 20) /* larger: the forwarding alone */
#define NOWHERE UINT32_MAX

static bool may_revive(const struct core *c, size_t i);

static struct rout *rout_get(struct core *c, uint32_t g, uint32_t dst)
{
	struct lproc *p = &c->procs[g];
	struct rout *o;

	if (!p->rout) {
		p->rout = calloc(c->cfg.n, sizeof(*p->rout));
		if (!p->rout)
			abort();
	}
	o = p->rout[dst];
	if (!o) {
		o = calloc(1, sizeof(*o));
		if (!o)
			abort();
		p->rout[dst] = o;
	}
	return o;
}

/* Room for one more message in o. */
static void rout_room(struct rout *o)
{
	uint32_t cap;
	struct rmsg *v;

	if (o->len < o->cap)
		return;
	cap = o->cap ? o->cap * 2 : 16;
	v = realloc(o->v, cap * sizeof(*v));
	if (!v)
		abort();
	o->v = v;
	o->cap = cap;
}

static void rmsg_drop(struct core *c, struct rout *o, uint32_t n)
{
	if (!n)
		return;
	for (uint32_t i = 0; i < n; i++) {
		c->ret_bytes -= o->v[i].d.total;
		mbuf_put(o->v[i].m);
	}
	if (o->len > n)
		memmove(o->v, o->v + n, (o->len - n) * sizeof(*o->v));
	o->len -= n;
}

void retain_free(struct core *c, struct lproc *p)
{
	if (!p->rout)
		return;
	for (uint32_t d = 0; d < c->cfg.n; d++) {
		struct rout *o = p->rout[d];

		if (!o)
			continue;
		rmsg_drop(c, o, o->len);
		free(o->v);
		free(o);
	}
	free(p->rout);
	p->rout = NULL;
}

/* Local process g sent d (to every replica of d->dst); to[k] is the host
 * replica k's copy went to (NOWHERE: not sent, it was not alive). */
void retain_sent(struct core *c, uint32_t g, const struct f_data *d, struct mbuf *m,
		 const uint32_t *to)
{
	struct rout *o = rout_get(c, g, d->dst);
	struct rmsg *x;
	uint32_t r = c->cfg.r, k;
	bool remote = false;

	if ((c->cfg.flags & CORE_F_TEST_NO_RETAIN) || d->total > RETAIN_MAX_MSG)
		return;
	for (k = 0; k < r; k++)
		remote |= (to[k] != NOWHERE && to[k] != c->cfg.host) ||
			  (to[k] == NOWHERE && may_revive(c, (size_t)d->dst * r + k));
	if (!remote && o->len == 0)
		return; /* every copy was delivered here: nothing can be lost */
	if (o->len && o->src_rep != d->src_rep)
		rmsg_drop(c, o, o->len); /* another replica of g lives here now */
	while (o->len && (o->len >= RETAIN_MAX_MSGS || c->ret_bytes + d->total > RETAIN_MAX_BYTES)) {
		if (!o->told)
			core_event(c, "retain-full", "\"src\":%u,\"dst\":%u,\"seq\":%llu", g, d->dst,
				   (unsigned long long)o->v[0].d.seq);
		o->told = true;
		rmsg_drop(c, o, 1);
	}
	rout_room(o);
	x = &o->v[o->len++];
	memset(x, 0, sizeof(*x));
	x->d = *d;
	x->m = mbuf_get(m);
	x->via = NOWHERE;
	for (k = 0; k < r; k++) {
		size_t i = (size_t)d->dst * r + k;

		x->to_host[k] = to[k];
		x->to_inc[k] = to[k] == NOWHERE ? 0 : c->inc[i];
	}
	c->ret_bytes += d->total;
	o->src_rep = d->src_rep;
}

/* Replica i died of a crash (a host loss, as a rule) a short while ago. If
 * it had moved and the move's news died with the host it left, its new
 * place tells us again once that host is declared lost (B23) and the map
 * brings it back: a message sent meanwhile went to its siblings only (on
 * our own host, maybe: then nothing would be retained), and the revived
 * replica waited for it and fenced a sound sender for lag (B56). Kept for
 * a few leases, in which every daemon declares that host lost too. */
static bool may_revive(const struct core *c, size_t i)
{
	return !c->alive[i] && c->crash_inc[i] == c->inc[i] && c->dead_since[i] &&
	       c->now - c->dead_since[i] < 4 * detect_lease(c) &&
	       !(c->cfg.flags & CORE_F_TEST_NO_REVIVE_RETAIN);
}

/* Does replica k of dst (where our map has it now) still need x from us? */
static bool still_owed(const struct core *c, const struct rout *o, const struct rmsg *x,
		       uint32_t dst, uint32_t k)
{
	size_t i = (size_t)dst * c->cfg.r + k;

	if (!c->alive[i]) /* dead is final: its copy will come from a sibling's cut */
		return may_revive(c, i);
	if (x->to_host[k] == c->cfg.host && x->to_inc[k] == c->inc[i] &&
	    c->host[i] == c->cfg.host)
		return false; /* delivered here, no network between */
	return !(o->acked_inc[k] == c->inc[i] && o->acked[k] >= x->d.seq);
}

static void release(struct core *c, struct rout *o, uint32_t dst)
{
	uint32_t n = 0;

	while (n < o->len) {
		uint32_t k;

		for (k = 0; k < c->cfg.r; k++)
			if (still_owed(c, o, &o->v[n], dst, k))
				break;
		if (k < c->cfg.r)
			break;
		n++;
	}
	if (n)
		rmsg_drop(c, o, n);
	if (!o->len)
		o->told = false;
}

int retain_on_ack(struct core *c, uint32_t from, const struct f_data_ack *a)
{
	const struct core_cfg *k = &c->cfg;
	struct lproc *p;
	struct rout *o;
	size_t i;

	if (a->src >= k->n || a->dst >= k->n || a->src_rep >= k->r || a->dst_rep >= k->r)
		return FE_FIELD;
	(void)from;
	p = &c->procs[a->src];
	o = p->rout ? p->rout[a->dst] : NULL;
	i = (size_t)a->dst * k->r + a->dst_rep;
	/* an ack from a place it left says nothing about where it is now; one
	 * from a newer incarnation counts once our map has that one */
	if (!o || o->src_rep != a->src_rep || a->dst_inc < c->inc[i] ||
	    a->dst_inc < o->acked_inc[a->dst_rep])
		return 0;
	if (o->acked_inc[a->dst_rep] != a->dst_inc) {
		o->acked_inc[a->dst_rep] = a->dst_inc;
		o->acked[a->dst_rep] = 0;
	}
	if (a->upto > o->acked[a->dst_rep])
		o->acked[a->dst_rep] = a->upto;
	release(c, o, a->dst);
	return 0;
}

/* x again to replica k of dst at its place now. From our own process the
 * copy is a sender's copy; from one that moved on or ended here it is a
 * forwarded one (the receiver may no longer place that incarnation here). */
static void resend(struct core *c, uint32_t g, struct rmsg *x, uint32_t k)
{
	size_t i = (size_t)x->d.dst * c->cfg.r + k;
	const struct lproc *p = &c->procs[g];
	size_t si = (size_t)g * c->cfg.r + x->d.src_rep;
	struct f_data d = x->d;
	struct action *a;

	d.dst_rep = (uint16_t)k;
	d.epoch = c->epoch[d.dst];
	x->to_host[k] = c->host[i];
	x->to_inc[k] = c->inc[i];
	/* sent by an incarnation fenced for a mismatch: never again (rule 1);
	 * taken here, the local path has no sender check, and its copy was
	 * judged its slot's new copy's and fenced that (B48) */
	if (x->d.src_inc <= c->bad_inc[si] && !(c->cfg.flags & CORE_F_TEST_NO_SUPERSEDE))
		return;
	c->stats.resent++;
	if (c->host[i] == c->cfg.host) {
		struct lproc *q = &c->procs[d.dst];
		/* sent by an incarnation of its slot that a copy replaced (our
		 * own process, superseded here): judged like a forwarded copy at
		 * a peer. Judged as the copy's, the replaced one's corrupt copy
		 * fenced the sound copy (B64) */
		uint8_t stale = core_copy_stale(c, si, x->d.src_inc, true) ? CHAN_F_STALE : 0;

		if (q->present && q->rep == k && !q->fenced) {
			chan_arrive(c, q, d.dst, &d, mbuf_get(x->m), stale);
			match_try(c, d.dst);
		}
		return;
	}
	a = core_emit(c, A_PEER);
	a->host = c->host[i];
	a->f.h.type = F_DATA;
	if (!(p->present && p->rep == x->d.src_rep && c->inc[si] == x->d.src_inc && c->alive[si]))
		a->f.h.flags = DATA_F_FWD;
	a->f.u.data = d;
	a->m = mbuf_get(x->m);
	core_event(c, "resend", "\"src\":%u,\"dst\":%u,\"rep\":%u,\"seq\":%llu,\"to\":%u", d.src,
		   d.dst, k, (unsigned long long)d.seq, c->host[i]);
}

/* The map placed a replica where a retained message did not go: send it. */
static void reconcile(struct core *c, uint32_t g, struct rout *o, uint32_t dst)
{
	uint32_t r = c->cfg.r;

	for (uint32_t n = 0; n < o->len; n++) {
		struct rmsg *x = &o->v[n];

		if (x->via != NOWHERE) {
			/* from a move's cut: the daemon that sent its copies
			 * re-sends it while it lives; once its host is lost, the
			 * copies may have died in its buffers (B54), so we do */
			if (x->via < c->cfg.m && !c->host_dead[x->via])
				continue;
			x->via = NOWHERE;
		}
		for (uint32_t k = 0; k < r; k++) {
			size_t i = (size_t)dst * r + k;

			if (!c->alive[i] || c->host_dead[c->host[i]] ||
			    (x->to_host[k] == c->host[i] && x->to_inc[k] == c->inc[i]) ||
			    !still_owed(c, o, x, dst, k))
				continue;
			resend(c, g, x, k);
		}
	}
}

/* Local g moves to host t (its capture is done; the cut is on its way):
 * every message it sent that we still retain goes with the cut (DATA_F_RET,
 * epoch: the host whose daemon sent the copies). We go on re-sending them
 * while we live; but copies still in our buffers die with this host, and
 * the moved replica resumes past them, so without this they never come: a
 * vote that needs that sender replica waits, and a sound replica is fenced
 * for lag or for not deciding (B54). */
void retain_cut(struct core *c, uint32_t g, uint32_t t)
{
	const struct lproc *p = &c->procs[g];
	size_t si = (size_t)g * c->cfg.r + p->rep;

	if (!p->rout || (c->cfg.flags & CORE_F_TEST_NO_RETAIN_MOVE))
		return;
	for (uint32_t d = 0; d < c->cfg.n; d++) {
		const struct rout *o = p->rout[d];

		if (!o || o->src_rep != p->rep)
			continue;
		for (uint32_t n = 0; n < o->len; n++) {
			const struct rmsg *x = &o->v[n];
			struct action *a;

			/* never re-sent anyway (resend, B48) */
			if (x->d.src_inc <= c->bad_inc[si] &&
			    !(c->cfg.flags & CORE_F_TEST_NO_SUPERSEDE))
				continue;
			a = migrate_peer_action(c, t, F_DATA);
			a->f.h.flags = DATA_F_RET;
			a->f.u.data = x->d;
			a->f.u.data.epoch = x->via == NOWHERE ? c->cfg.host : x->via;
			a->m = mbuf_get(x->m);
		}
	}
}

/* A retained message of the replica moving here, in its cut (retain_cut):
 * kept, delivered to no one. Only between the move's PROC_STATE and its
 * STATE_END, from the daemon its state comes from (FIFO); otherwise the
 * restore was given up meanwhile and nothing of it is kept. */
int retain_on_cut_data(struct core *c, uint32_t from, const struct f_data *d, struct mbuf *m)
{
	const struct core_cfg *k = &c->cfg;
	struct lproc *p;
	struct rout *o;
	struct rmsg *x;
	uint32_t n;

	if (d->src >= k->n || d->dst >= k->n || d->src_rep >= k->r || d->dst_rep >= k->r ||
	    d->epoch >= k->m || d->seq == 0 || !m || m->len != d->total) {
		mbuf_put(m);
		return FE_FIELD;
	}
	p = &c->procs[d->src];
	if (!p->present || p->rep != d->src_rep || !p->restoring || !p->moved_in ||
	    !p->state_begun || p->state_ready || from != p->restore_from ||
	    d->src_inc >= c->inc[(size_t)d->src * k->r + d->src_rep] || d->total > RETAIN_MAX_MSG ||
	    (k->flags & CORE_F_TEST_NO_RETAIN)) {
		mbuf_put(m);
		return 0;
	}
	o = rout_get(c, d->src, d->dst);
	if (o->len && o->src_rep != d->src_rep)
		rmsg_drop(c, o, o->len); /* another replica of the group lived here */
	o->src_rep = d->src_rep;
	for (n = o->len; n && o->v[n - 1].d.seq >= d->seq; n--)
		if (o->v[n - 1].d.seq == d->seq) {
			mbuf_put(m); /* ours already (it moved back here) */
			return 0;
		}
	if (o->len >= RETAIN_MAX_MSGS || c->ret_bytes + d->total > RETAIN_MAX_BYTES) {
		if (!o->told)
			core_event(c, "retain-full", "\"src\":%u,\"dst\":%u,\"seq\":%llu", d->src,
				   d->dst, (unsigned long long)d->seq);
		o->told = true;
		mbuf_put(m);
		return 0;
	}
	rout_room(o);
	memmove(o->v + n + 1, o->v + n, (o->len - n) * sizeof(*o->v));
	o->len++;
	x = &o->v[n];
	memset(x, 0, sizeof(*x));
	x->d = *d;
	x->m = m;
	for (uint32_t j = 0; j < k->r; j++)
		x->to_host[j] = NOWHERE; /* where its copies went, we do not know */
	x->via = d->epoch == k->host ? NOWHERE : d->epoch;
	c->ret_bytes += d->total;
	return 0;
}

void retain_tick(struct core *c)
{
	for (uint32_t g = 0; g < c->cfg.n; g++) {
		struct lproc *p = &c->procs[g];

		if (!p->rout)
			continue;
		for (uint32_t d = 0; d < c->cfg.n; d++) {
			struct rout *o = p->rout[d];

			if (!o || !o->len)
				continue;
			release(c, o, d);
			reconcile(c, g, o, d);
		}
	}
}

/* Receiver side: every seq of ch up to the returned one whose copy sender
 * replica k sends has reached us (retired entries had every expected copy;
 * a copy resumed from a cut sends nothing below its start). */
static uint64_t got_upto(const struct chan *ch, uint32_t k)
{
	uint64_t s = ch->base;

	for (; s < ch->base + ch->cap; s++) {
		struct entry *e = chan_entry((struct chan *)ch, s);

		if (ch->start[k] != UINT64_MAX && s < ch->start[k])
			continue;
		if (!e || !(e->seen & (1u << k)))
			break;
	}
	return s - 1;
}

static void send_ack(struct core *c, uint32_t host, const struct f_data_ack *a)
{
	struct action *x;

	if (host >= c->cfg.m || c->host_dead[host])
		return;
	if (host == c->cfg.host) {
		retain_on_ack(c, host, a);
		return;
	}
	x = core_emit(c, A_PEER);
	x->host = host;
	x->f.h.type = F_DATA_ACK;
	x->f.u.data_ack = *a;
}

/* Acks of local g's channels that advanced, to the daemons that sent the
 * copies (and the one the map places the sender at, if another). upto
 * UINT64_MAX (`all`): g needs nothing more (it finished). */
static void ack_proc(struct core *c, uint32_t g, bool all)
{
	struct lproc *p = &c->procs[g];
	size_t di = (size_t)g * c->cfg.r + p->rep;

	/* a copy's source forwards to the copy: the sender keeps what the
	 * copy may need until the forwarding ends; a replica being restored
	 * has no cut yet */
	if (!p->present || p->fwd || p->moved || (p->restoring && !p->state_ready) ||
	    p->fenced)
		return;
	for (uint32_t i = 0; i < p->nchan_list; i++) {
		struct chan *ch = p->chans[p->chan_list[i]];

		for (uint32_t k = 0; k < c->cfg.r; k++) {
			uint64_t upto = all ? UINT64_MAX : got_upto(ch, k);
			uint32_t map_host = core_host_of(c, ch->src, k);
			struct f_data_ack a = { .src = ch->src, .dst = g, .src_rep = (uint16_t)k,
						.dst_rep = (uint16_t)p->rep, .dst_inc = c->inc[di],
						.upto = upto };

			if (upto <= ch->acked_sent[k])
				continue;
			ch->acked_sent[k] = upto;
			if (ch->ack_host[k])
				send_ack(c, ch->ack_host[k] - 1, &a);
			if (map_host + 1 != ch->ack_host[k] && c->alive[(size_t)ch->src * c->cfg.r + k])
				send_ack(c, map_host, &a);
		}
	}
}

void retain_ack_tick(struct core *c)
{
	for (uint32_t g = 0; g < c->cfg.n; g++)
		if (c->procs[g].present && c->procs[g].chans)
			ack_proc(c, g, false);
}

/* Local g ended well: it needs no retained message any more. */
void retain_ack_all(struct core *c, uint32_t g)
{
	if (c->procs[g].chans)
		ack_proc(c, g, true);
}
