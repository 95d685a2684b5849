/* Protocol core: configuration, the process map, event entry points and the
 * action list. Message bookkeeping is in chan.c, receive matching in
 * match.c, ANYSRC decisions in anysrc.c. */
#include "core/core_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"

/* The core's test switches share the job's flags word with the wire's
 * JOB_F flags: one bit meaning two switches turned both on (session 10:
 * --no-promise also fixed the quorum). */
#define CORE_F_TEST_ALL                                                                          \
	(CORE_F_TEST_NO_FORWARD | CORE_F_TEST_NO_VOTE_TIE | CORE_F_TEST_NO_RETAIN |              \
	 CORE_F_TEST_NO_CRASHED_DATA | CORE_F_TEST_NO_DEAD_STORES | CORE_F_TEST_VOTE_WAITS_GUESSED | \
	 CORE_F_TEST_NO_SUPERSEDE | CORE_F_TEST_NO_PROMISE | CORE_F_TEST_NO_PULL_ACK |           \
	 CORE_F_TEST_NO_RETAIN_MOVE | CORE_F_TEST_NO_REVIVE_RETAIN | CORE_F_TEST_LATE_SILENT |   \
	 CORE_F_TEST_NO_SKIPPED_PLACES | CORE_F_TEST_ENTRY_STALE | CORE_F_TEST_ANSWER_OWN_SLOT | \
	 CORE_F_TEST_KEEP_WANT)
#define JOB_F_ALL                                                                                \
	(JOB_F_OUTPUT_ALL | JOB_F_NO_REGEN | JOB_F_REJOIN | JOB_F_DIGEST_XXH3 | JOB_F_SHM |         \
	 JOB_F_DIRECT | JOB_F_TEST_FIXED_QUORUM | JOB_F_TEST_NO_ANYSRC_PROTOCOL |                   \
	 JOB_F_TEST_NO_DEDUPE | JOB_F_TEST_NO_EXIT_DETECT | JOB_F_TEST_NO_HB_DETECT |               \
	 JOB_F_TEST_NO_LAG_DETECT | JOB_F_TEST_NO_MISMATCH_FENCE | JOB_F_TEST_NO_ORDER |            \
	 JOB_F_TEST_NO_BACKLOG_DETECT | JOB_F_TEST_FAIL_RESTORES)
_Static_assert((CORE_F_TEST_ALL & JOB_F_ALL) == 0, "a core test switch shares a bit with a JOB_F flag");

uint32_t core_place(uint32_t g, uint32_t k, uint32_t r, uint32_t m)
{
	return (uint32_t)(((uint64_t)g * r + k) % m);
}

uint32_t core_host_of(const struct core *c, uint32_t g, uint32_t k)
{
	return c->host[(size_t)g * c->cfg.r + k];
}

bool core_is_local(const struct core *c, uint32_t g, uint32_t *rep)
{
	const struct lproc *p = &c->procs[g];

	if (!p->present)
		return false;
	if (rep)
		*rep = p->rep;
	return true;
}

bool core_capture_waiting(const struct core *c, uint32_t g)
{
	const struct lproc *p = g < c->cfg.n ? &c->procs[g] : NULL;

	return p && p->present && p->capturing && !p->cap_sent;
}

bool core_capture_begun(const struct core *c, uint32_t g)
{
	const struct lproc *p = g < c->cfg.n ? &c->procs[g] : NULL;

	return p && p->present && p->capturing && p->cap_sent;
}

/* A copy of slot i sent by incarnation src_inc is not the slot's current
 * incarnation's, and is never judged as its (CHAN_F_STALE):
 *  - forwarded from an incarnation that is dead now (a copy replaced it):
 *    its content counts, but it may be why the old one was fenced, news not
 *    here yet (B48);
 *  - straight from an older incarnation than the map's newest, which may be
 *    a copy whose predecessor's fence has not reached us;
 *  - forwarded (or re-sent from our own retention, B64) from an older one
 *    while the newer one is known from its DATA only: a move or a copy, we
 *    cannot tell yet (B58).
 *  - forwarded from one older than the copy the newest descends from by
 *    moves (line_inc): one taken from its DATA, then heard verified, is
 *    a copy; a daemon that never heard its predecessor's fence judged that
 *    one's corrupt copy as the verified copy's and had it fenced (B70).
 * A forwarded copy from a move's earlier incarnation is the slot's. */
bool core_copy_stale(const struct core *c, size_t i, uint32_t src_inc, bool fwd)
{
	if (src_inc >= c->inc[i] || (c->cfg.flags & CORE_F_TEST_NO_SUPERSEDE))
		return false;
	return !fwd || src_inc <= c->dead_inc[i] || c->implicit[i] ||
	       (src_inc < c->line_inc[i] && !(c->cfg.test & CORE_T_LINE_NOT_STALE));
}

/* Slot i was at `host` once (a move's news came from there): remembered
 * as a past place, so its frames still in flight from there are its. */
void core_note_past(struct core *c, size_t i, uint32_t host)
{
	uint32_t *past = &c->past_host[i * CORE_PAST];

	if (host >= c->cfg.m || c->host[i] == host)
		return;
	for (uint32_t j = 0; j < CORE_PAST; j++)
		if (past[j] == host)
			return;
	memmove(past + 1, past, (CORE_PAST - 1) * sizeof(*past));
	past[0] = host;
}

void core_set_host(struct core *c, size_t i, uint32_t host)
{
	uint32_t *past = &c->past_host[i * CORE_PAST];

	if (c->host[i] == host)
		return;
	memmove(past + 1, past, (CORE_PAST - 1) * sizeof(*past));
	past[0] = c->host[i];
	c->host[i] = host;
}

bool core_was_at(const struct core *c, uint32_t g, uint32_t k, uint32_t from)
{
	size_t i = (size_t)g * c->cfg.r + k;

	if (c->host[i] == from)
		return true;
	for (uint32_t j = 0; j < CORE_PAST; j++)
		if (c->past_host[i * CORE_PAST + j] == from)
			return true;
	return false;
}

static bool crash_like(uint8_t reason)
{
	return reason == SUS_EXIT || reason == SUS_HOST || reason == SUS_LAG;
}

void core_dead_with(struct core *c, size_t i, uint32_t inc, uint8_t reason)
{
	if (inc > c->dead_inc[i])
		c->dead_inc[i] = inc;
	/* (a copy that fills a slot makes every lower number dead, reason
	 * unknown: those are no deaths, only numbers never used) */
	if (reason && crash_like(reason) && inc > c->crash_inc[i])
		c->crash_inc[i] = inc;
	else if (reason && !crash_like(reason) && inc > c->bad_inc[i])
		c->bad_inc[i] = inc;
}

void core_dead_upto(struct core *c, size_t i, uint32_t inc)
{
	core_dead_with(c, i, inc, 0);
}

uint32_t core_live_mask(const struct core *c, uint32_t g)
{
	uint32_t k, mask = 0;

	for (k = 0; k < c->cfg.r; k++)
		if (c->alive[(size_t)g * c->cfg.r + k] && !c->joining[(size_t)g * c->cfg.r + k])
			mask |= 1u << k;
	return mask;
}

uint32_t core_leader(const struct core *c, uint32_t g)
{
	uint32_t mask = core_live_mask(c, g);

	return mask ? (uint32_t)__builtin_ctz(mask) : 0;
}

static int map_init(struct core *c)
{
	const struct core_cfg *k = &c->cfg;
	size_t nr = (size_t)k->n * k->r;
	uint32_t g, j;

	c->alive = calloc(nr, 1);
	c->host = calloc(nr, sizeof(uint32_t));
	c->past_host = malloc(nr * CORE_PAST * sizeof(uint32_t));
	c->dead_inc = calloc(nr, sizeof(uint32_t));
	c->crash_inc = calloc(nr, sizeof(uint32_t));
	c->bad_inc = calloc(nr, sizeof(uint32_t));
	if (!c->past_host || !c->dead_inc || !c->crash_inc || !c->bad_inc)
		return -1;
	memset(c->past_host, 0xff, nr * CORE_PAST * sizeof(uint32_t));
	c->inc = calloc(nr, sizeof(uint32_t));
	c->epoch = calloc(k->n, sizeof(uint32_t));
	c->procs = calloc(k->n, sizeof(struct lproc));
	c->held = calloc(nr, 1);
	c->joining = calloc(nr, 1);
	c->verified_sent = calloc(nr, 1);
	c->joined_at = calloc(nr, sizeof(uint64_t));
	c->implicit = calloc(nr, 1);
	c->line_inc = calloc(nr, sizeof(uint32_t));
	c->dead_by = malloc(nr * sizeof(uint32_t));
	if (c->dead_by)
		memset(c->dead_by, 0xff, nr * sizeof(uint32_t));
	c->dead_since = calloc(nr, sizeof(uint64_t));
	c->regen_busy = calloc(k->n, sizeof(uint64_t));
	if (!c->joining || !c->verified_sent || !c->joined_at || !c->implicit || !c->line_inc ||
	    !c->dead_by ||
	    !c->dead_since ||
	    !c->regen_busy)
		return -1;
	for (g = 0; g < k->n; g++) {
		c->procs[g].talk = calloc(k->m, 1);
		c->procs[g].fwd_wait = calloc(k->m, 1);
		if (!c->procs[g].talk || !c->procs[g].fwd_wait)
			return -1;
	}
	c->host_dead = calloc(k->m, 1);
	c->last_heard = calloc(k->m, sizeof(uint64_t));
	c->rejoin_heard = calloc(k->m, 1);
	if (!c->alive || !c->host || !c->inc || !c->epoch || !c->procs || !c->held ||
	    !c->host_dead || !c->last_heard || !c->rejoin_heard)
		return -1;
	for (g = 0; g < k->n; g++) {
		c->epoch[g] = 1;
		c->procs[g].any_next = 1;
		c->procs[g].dlog.first = 1;
		c->procs[g].leading = false;
		c->procs[g].restore_from = UINT32_MAX; /* (started here, not restored) */
		for (j = 0; j < k->r; j++) {
			size_t i = (size_t)g * k->r + j;

			c->alive[i] = 1;
			c->inc[i] = 1;
			c->line_inc[i] = 1;
			c->host[i] = core_place(g, j, k->r, k->m);
			if (c->host[i] == k->host) {
				c->procs[g].present = true;
				c->procs[g].rep = j;
			}
		}
		if (c->procs[g].present && c->procs[g].rep == 0)
			c->procs[g].leading = true; /* replica 0 leads from the start */
	}
	return 0;
}

struct core *core_new(const struct core_cfg *cfg)
{
	struct core *c;

	if (!cfg->n || !cfg->r || !cfg->m || cfg->r > cfg->m || cfg->r > CORE_MAX_R ||
	    cfg->host >= cfg->m || cfg->mode > CMP_VOTE)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cfg = *cfg;
	if (map_init(c)) {
		core_free(c);
		return NULL;
	}
	return c;
}

void core_lproc_free(struct lproc *p, uint32_t n)
{
	uint32_t i;

	if (p->chans)
		for (i = 0; i < n; i++)
			if (p->chans[i])
				chan_free(p->chans[i]);
	free(p->chans);
	free(p->chan_list);
	dlog_free(&p->dlog);
	free(p->dpend);
	p->dpend = NULL;
	p->ndpend = 0;
	p->chans = NULL;
	p->chan_list = NULL;
	p->nchan_list = 0;
}

void core_free(struct core *c)
{
	size_t i;

	if (!c)
		return;
	if (c->procs)
		for (i = 0; i < c->cfg.n; i++) {
			core_lproc_free(&c->procs[i], c->cfg.n);
			retain_free(c, &c->procs[i]);
			free(c->procs[i].talk);
			free(c->procs[i].fwd_wait);
		}
	for (i = 0; i < c->nacts; i++) {
		mbuf_put(c->acts[i].m);
		frame_release(&c->acts[i].f);
	}
	for (i = 0; i < c->nheld; i++)
		mbuf_put(c->held_v[i].m);
	free(c->held_v);
	free(c->hreq);
	free(c->regens);
	free(c->joining);
	free(c->verified_sent);
	free(c->joined_at);
	free(c->implicit);
	free(c->line_inc);
	free(c->dead_by);
	free(c->sus);
	free(c->dead_since);
	free(c->regen_busy);
	free(c->acts);
	free(c->procs);
	free(c->alive);
	free(c->host);
	free(c->past_host);
	free(c->dead_inc);
	free(c->crash_inc);
	free(c->bad_inc);
	free(c->inc);
	free(c->epoch);
	free(c->held);
	free(c->host_dead);
	free(c->last_heard);
	free(c->rejoin_heard);
	detect_free(c);
	free(c);
}

struct action *core_emit(struct core *c, enum action_kind kind)
{
	struct action *a;

	if (c->nacts == c->capacts) {
		size_t cap = c->capacts ? c->capacts * 2 : 64;
		struct action *v = realloc(c->acts, cap * sizeof(*v));

		if (!v)
			abort(); /* the core cannot continue without its output */
		c->acts = v;
		c->capacts = cap;
	}
	a = &c->acts[c->nacts++];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	return a;
}

/* f to every other host of the job not known lost (O(hosts), not O(n)). */
void core_to_peers(struct core *c, const struct frame *f)
{
	for (uint32_t h = 0; h < c->cfg.m; h++) {
		struct action *a;

		if (h == c->cfg.host || c->host_dead[h])
			continue;
		a = core_emit(c, A_PEER);
		a->host = h;
		a->f = *f;
	}
}

void core_event(struct core *c, const char *kind, const char *fmt, ...)
{
	struct action *a = core_emit(c, A_EVENT);
	size_t len = sizeof(a->text);
	int n = snprintf(a->text, len, "{\"event\":\"%s\"", kind);
	va_list ap;

	if (n > 0 && (size_t)n < len - 2 && fmt[0]) {
		a->text[n++] = ',';
		va_start(ap, fmt);
		n += vsnprintf(a->text + n, len - (size_t)n, fmt, ap);
		va_end(ap);
	}
	if (n < 0 || (size_t)n >= len - 1)
		n = (int)len - 2;
	a->text[n++] = '}';
	a->text[n] = 0;
}

/* An isolated daemon (rule 3: its lease ran out) has fenced its own
 * processes and hears nobody for the rest of the job; it is silent too,
 * so that the majority declares it lost within a heartbeat timeout and
 * repairs its replicas.  Still heard (its heartbeats, resends), it passed
 * for alive after a stall of the majority's daemons that had isolated it:
 * its dead replicas were members until the lag detector, 16 s later, and
 * the next host loss left ranks with one replica (recur run, session 15). */
static void drop_peer_frames(struct core *c)
{
	size_t k = 0;

	for (size_t i = 0; i < c->nacts; i++) {
		struct action *a = &c->acts[i];

		if (a->kind == A_PEER) {
			mbuf_put(a->m);
			frame_release(&a->f);
		} else
			c->acts[k++] = *a;
	}
	c->nacts = k;
}

struct action *core_take_actions(struct core *c, size_t *n)
{
	struct action *v;

	if (c->isolated && !(c->cfg.flags & JOB_F_TEST_ISOLATED_TALKS))
		drop_peer_frames(c);
	v = c->acts;

	*n = c->nacts;
	c->acts = NULL;
	c->nacts = c->capacts = 0;
	return v;
}

const struct core_stats *core_stats(const struct core *c)
{
	return &c->stats;
}

int core_local_start(struct core *c, uint32_t g)
{
	if (g >= c->cfg.n || !c->procs[g].present)
		return MSG_ERANK;
	c->procs[g].running = true;
	return 0;
}

void core_local_finalize(struct core *c, uint32_t g)
{
	if (g < c->cfg.n)
		c->procs[g].finalized = true;
}

bool core_isolated(const struct core *c)
{
	return c->isolated;
}

bool core_host_lost(const struct core *c, uint32_t h)
{
	return h < c->cfg.m && c->host_dead[h];
}

/* A replica that ends without msgFinalize is a fault its siblings survive
 * (detector: process end, immediate). */
void core_local_exit(struct core *c, uint32_t g, int status)
{
	struct lproc *p;
	struct dlog keep;
	bool well;
	char ev[64];

	if (g >= c->cfg.n || !c->procs[g].present)
		return;
	p = &c->procs[g];
	well = p->finalized && !p->fenced;
	p->running = false;
	p->want = false;
	/* a survivor goes on forwarding to its copy what still reaches it
	 * (its senders may not know the copy yet): after a normal end (B18),
	 * and after a crash too, since the forwarding is its daemon's, and a
	 * message sent only to the survivor before its sender knew of the
	 * copy has no other way there (B40) */
	migrate_abort_local(c, g);
	/* ... and keeps its ANYSRC decisions: its daemon is still one of their
	 * stores (rule 6), and should the replica become leader by the map it
	 * hands them to the siblings that still run (every decision they need
	 * is among them, B5) */
	if (well)
		retain_ack_all(c, g); /* it needs nothing retained for it any more */
	keep = p->dlog;
	p->dlog = (struct dlog){ 0 };
	core_lproc_free(p, c->cfg.n);
	/* after a crash too: it acked them as their store, and a new leader
	 * asks this daemon for them (B42) */
	if (well || !(c->cfg.flags & CORE_F_TEST_NO_DEAD_STORES))
		p->dlog = keep;
	else {
		dlog_free(&keep); /* (negative control: dropped, as before B42) */
		p->dlog = keep;
	}
	if (p->finalized || p->fenced || (c->cfg.flags & JOB_F_TEST_NO_EXIT_DETECT))
		return;
	snprintf(ev, sizeof(ev), "process ended without msgFinalize (wait status %#x)", status);
	core_suspect(c, g, p->rep, SUS_EXIT, ev);
}

/* Multicast: one copy to every live replica of the destination group. */
int core_local_send(struct core *c, uint32_t g, const struct l_send *s, struct mbuf *m)
{
	const struct lproc *p;
	uint32_t j, r = c->cfg.r, to[CORE_MAX_R];
	struct f_data first = { 0 };

	if (g >= c->cfg.n || s->dst >= c->cfg.n || !m || m->len != s->size || s->seq == 0 ||
	    s->tag < 0 || !c->procs[g].running) {
		mbuf_put(m);
		return MSG_EINVAL;
	}
	p = &c->procs[g];
	for (j = 0; j < r; j++) {
		size_t i = (size_t)s->dst * r + j;
		struct f_data d = {
			.src = g, .dst = s->dst, .src_rep = (uint16_t)p->rep, .dst_rep = (uint16_t)j,
			.src_inc = c->inc[(size_t)g * r + p->rep], .epoch = c->epoch[s->dst],
			.seq = s->seq, .tag = s->tag, .total = s->size, .off = 0,
			.chunk = (uint32_t)(s->size > FRAME_CHUNK_MAX ? FRAME_CHUNK_MAX : s->size),
			.site = s->site,
		};

		to[j] = c->alive[i] ? c->host[i] : UINT32_MAX;
		if (j == 0)
			first = d;
		if (!c->alive[i])
			continue;
		if (c->host[i] == c->cfg.host) {
			chan_arrive(c, &c->procs[s->dst], s->dst, &d, mbuf_get(m), 0);
			match_try(c, s->dst);
		} else {
			struct action *a = core_emit(c, A_PEER);

			a->host = c->host[i];
			a->f.h.type = F_DATA;
			a->f.u.data = d;
			a->m = mbuf_get(m);
		}
	}
	retain_sent(c, g, &first, m, to);
	mbuf_put(m);
	return 0;
}

int core_local_recv(struct core *c, uint32_t g, const struct l_recv *r)
{
	struct lproc *p;

	if (g >= c->cfg.n || !c->procs[g].running)
		return MSG_EINVAL;
	if (r->src < -1 || r->src >= (int32_t)c->cfg.n || r->tag < -1)
		return MSG_ERANK;
	p = &c->procs[g];
	if (p->want)
		return MSG_EPROTO; /* one receive at a time: libmsg is blocking */
	p->want = true;
	p->want_src = r->src;
	p->want_tag = r->tag;
	p->want_size = r->bufsize;
	migrate_on_recv(c, g); /* the safe point of a pending capture */
	match_try(c, g);
	return 0;
}

/* libmsg withdraws its receive in flight (it found the message in a direct
 * stream meanwhile, docs/datapath.md §6). A receive already answered has
 * its answer on the way: the cancel is then dropped, so the receive gets
 * exactly one answer either way. */
int core_local_cancel(struct core *c, uint32_t g)
{
	struct lproc *p;
	struct action *a;

	if (g >= c->cfg.n || !c->procs[g].running)
		return MSG_EINVAL;
	p = &c->procs[g];
	if (!p->want)
		return 0;
	p->want = false;
	a = core_emit(c, A_LOCAL);
	a->group = g;
	a->f.h.type = L_ERROR;
	a->f.u.error.code = MSG_EINTERNAL_AGAIN;
	return 0;
}

/* Replica g.k is moving here (its image announced, core_incoming) and an
 * older incarnation of it speaks from `from`: the one it moves from, whose
 * own move there may be news we never got (a chain of moves: once we know
 * the newer incarnation, the news of the older one's place is old news and
 * not recorded), so its DATA sent before the capture reached us first
 * (FIFO: before its PROC_STATE) and was refused (B31). Until the state
 * comes any host may be that place; then it is where the state came from. */
static bool moving_in_from(const struct core *c, uint32_t g, uint32_t k, uint32_t from)
{
	const struct lproc *p = &c->procs[g];

	return p->present && p->rep == k && p->moved_in && (!p->state_begun || from == p->prev_host);
}

/* Rule 1 for a DATA frame from replica d->src.d->src_rep: is it from a
 * place the map allows, and from an incarnation still alive? The current
 * incarnation speaks from its host (a forwarded copy from anywhere); a
 * newer one is its own news (taken below); an older one that moved sent
 * it before the move, from a host it was at (accepted: its successor
 * resumes after it and never re-sends it); an older one known dead is
 * dropped, never a protocol error. */
static int data_sender(const struct core *c, uint32_t from, uint8_t flags, const struct f_data *d)
{
	size_t i = (size_t)d->src * c->cfg.r + d->src_rep;

	if (flags & DATA_F_CUT)
		return 0; /* the process is owed it, whoever sent it: its source took it */
	/* forwarded: from the slot as it was; but a copy an incarnation fenced
	 * for a mismatch sent is dropped all the same (rule 1): counted as
	 * the slot's, its copy was fenced for it (B48) */
	if (flags & DATA_F_FWD)
		return c->alive[i] && (d->src_inc > c->bad_inc[i] ||
				       (c->cfg.flags & CORE_F_TEST_NO_SUPERSEDE)) ? 0 : 1;
	if (d->src_inc > c->inc[i])
		return 0;
	if (d->src_inc == c->crash_inc[i] && d->src_inc != c->bad_inc[i] &&
	    core_was_at(c, d->src, d->src_rep, from) &&
	    !(c->cfg.flags & CORE_F_TEST_NO_CRASHED_DATA))
		return 2; /* sent before its end by a replica that crashed: good (B41) */
	if (d->src_inc <= c->dead_inc[i] || !c->alive[i])
		return 1;
	if (d->src_inc < c->inc[i] && moving_in_from(c, d->src, d->src_rep, from))
		return 0;
	/* an older incarnation (a move chain's) from a host we never placed it
	 * at: a protocol error, unless our map skipped its place (it knows the
	 * newer one from its DATA only, B59) */
	if (d->src_inc == c->inc[i] ? c->host[i] != from :
				      !core_was_at(c, d->src, d->src_rep, from) &&
					      (!c->implicit[i] || (c->cfg.flags & CORE_F_TEST_NO_SKIPPED_PLACES)))
		return -1;
	return 0;
}

static int on_data(struct core *c, uint32_t from, uint8_t flags, const struct f_data *d,
		   struct mbuf *m)
{
	const struct core_cfg *k = &c->cfg;
	struct lproc *p;
	int who;

	if (flags & DATA_F_RET) /* a moving replica's retained message, in its cut */
		return retain_on_cut_data(c, from, d, m);
	if (d->src >= k->n || d->dst >= k->n || d->src_rep >= k->r || d->dst_rep >= k->r ||
	    !m || m->len != d->total || (who = data_sender(c, from, flags, d)) < 0) {
		mbuf_put(m);
		return FE_FIELD;
	}
	p = &c->procs[d->dst];
	if ((!p->present || p->rep != d->dst_rep) && migrate_redirect(c, from, flags, d, m))
		return 0;
	if (!p->present || p->rep != d->dst_rep) {
		if ((flags & DATA_F_FWD) && core_alive(c, d->dst, d->dst_rep)) {
			migrate_hold(c, from, flags, d, m);
			return 0;
		}
		c->stats.dropped++;
		core_event(c, "drop", "\"src\":%u,\"dst\":%u,\"seq\":%llu,\"rep\":%u,"
			   "\"why\":\"not on this host\"", d->src, d->dst,
			   (unsigned long long)d->seq, d->dst_rep);
		mbuf_put(m);
		return 0;
	}
	if (d->src_inc > c->inc[(size_t)d->src * k->r + d->src_rep] && !(flags & DATA_F_FWD))
		migrate_implicit_join(c, from, d); /* its news is still on the way */
	if (who == 2 && !p->fenced) {
		/* DESIGN §5 rule 1 drops a dead incarnation's frames so that a
		 * corrupt replica's are never taken; one that crashed (exit,
		 * host, lag) was healthy until it ended, and its copy sent before
		 * may be the only one left (its sibling crashed before sending
		 * it, and their copies resumed from cuts past it). Taken like a
		 * forwarded copy: it says nothing about the slot's new copy. */
		p->talk[from] = 1;
		migrate_on_data(c, from, d, m);
		chan_arrive(c, p, d->dst, d, m, flags | DATA_F_FWD);
		match_try(c, d->dst);
		return 0;
	}
	if (p->fenced || who > 0 ||
	    (!(flags & DATA_F_CUT) && !c->alive[(size_t)d->src * k->r + d->src_rep]) ||
	    (!(flags & DATA_F_FWD) && d->src_inc <= c->dead_inc[(size_t)d->src * k->r + d->src_rep])) {
		/* DESIGN §5 rule 1: frames from a dead incarnation are dropped;
		 * one for our replica that was fenced after it became a copy's
		 * source is still owed to the copy (B40) */
		if (p->fwd && !(flags & DATA_F_CUT) && who == 0 &&
		    c->alive[(size_t)d->src * k->r + d->src_rep] &&
		    ((flags & DATA_F_FWD) || d->src_inc > c->dead_inc[(size_t)d->src * k->r + d->src_rep]))
			migrate_on_data(c, from, d, m);
		c->stats.dropped++;
		mbuf_put(m);
		return 0;
	}
	p->talk[from] = 1;
	migrate_on_data(c, from, d, m);
	if (!(flags & DATA_F_CUT) &&
	    ((flags & DATA_F_STALE) ||
	     core_copy_stale(c, (size_t)d->src * k->r + d->src_rep, d->src_inc, flags & DATA_F_FWD)))
		flags |= CHAN_F_STALE; /* (STALE: so it was where it was forwarded from) */
	chan_arrive(c, p, d->dst, d, m, flags);
	if (!(flags & (DATA_F_FWD | DATA_F_CUT)) && p->chans && p->chans[d->src])
		p->chans[d->src]->ack_host[d->src_rep] = from + 1; /* acks go there (retain.c) */
	match_try(c, d->dst);
	return 0;
}

void core_peer_heard(struct core *c, uint32_t from)
{
	if (from < c->cfg.m && from != c->cfg.host)
		detect_on_heard(c, from);
}

static int peer_frame(struct core *c, uint32_t from, const struct frame *f, struct mbuf *m);

int core_peer_frame(struct core *c, uint32_t from, const struct frame *f, struct mbuf *m)
{
	int rc = peer_frame(c, from, f, m);

	if (c->nhreq && f->h.type != F_DLOG_REQ)
		anysrc_retry_held(c); /* it may have been the news they wait for */
	return rc;
}

static int peer_frame(struct core *c, uint32_t from, const struct frame *f, struct mbuf *m)
{
	if (from >= c->cfg.m || from == c->cfg.host) {
		mbuf_put(m);
		return FE_FIELD;
	}
	detect_on_heard(c, from);
	if (c->host_dead[from] || c->isolated) {
		/* a host we declared lost is never heard again in this job */
		mbuf_put(m);
		return 0;
	}
	switch (f->h.type) {
	case F_DATA:
		return on_data(c, from, f->h.flags, &f->u.data, m);
	case F_DECISION:
		mbuf_put(m);
		return anysrc_on_decision(c, from, &f->u.decision, f->h.flags);
	case F_DECISION_ACK:
		mbuf_put(m);
		return anysrc_on_ack(c, &f->u.decision_ack);
	case F_HEARTBEAT:
		mbuf_put(m);
		return 0;
	case F_DATA_ACK:
		mbuf_put(m);
		return retain_on_ack(c, from, &f->u.data_ack);
	case F_SUSPECT:
		mbuf_put(m);
		return member_on_suspect(c, from, &f->u.suspect);
	case F_MEMBER:
		mbuf_put(m);
		return member_on_member(c, from, &f->u.member);
	case F_DLOG_REQ:
		mbuf_put(m);
		return anysrc_on_dlog_req(c, from, &f->u.dlog_req, f->h.flags);
	case F_DLOG_END:
		mbuf_put(m);
		return anysrc_on_dlog_end(c, from, &f->u.dlog_end, f->h.flags);
	case F_MAP_SYNC_REQ:
	case F_STATUS:
		mbuf_put(m);
		return member_on_sync(c, from, f);
	default:
		return migrate_peer_frame(c, from, f, m);
	}
}

void core_now(struct core *c, uint64_t now_ns)
{
	if (now_ns > c->now)
		c->now = now_ns;
}

void core_tick(struct core *c, uint64_t now_ns)
{
	if (now_ns > c->now)
		c->now = now_ns;
	detect_tick(c);
	member_resend_suspicions(c);
	member_map_tick(c);
	migrate_tick(c);
	retain_ack_tick(c);
	retain_tick(c);
	anysrc_tick(c);
	if (c->nhreq)
		anysrc_retry_held(c);
}
