/* Internal state of the protocol core, shared by its files:
 * core.c (events, actions), chan.c (sequence, dedupe, comparison),
 * match.c (receive matching and delivery), anysrc.c (ANYSRC decisions). */
#ifndef MSG_CORE_IMPL_H
#define MSG_CORE_IMPL_H

#include "core/core.h"

#define MAX_VARIANTS 4
#define CORE_PAST 4 /* earlier hosts remembered per replica slot */
#define CHOSEN_CUT (-2)
#define CHAN_F_STALE 0x80 /* chan_arrive only: from a dead incarnation of its slot */

/* One distinct content seen for a (channel, seq): the copies that agree. */
struct variant {
	uint8_t digest[FRAME_DIGEST_LEN];
	bool hashed;          /* digest is set (hashed lazily: a lone copy is never compared) */
	int32_t tag;
	uint64_t size;
	struct mbuf *m;       /* payload until consumed */
	uint32_t seen;        /* sender replicas whose copy had this content */
	uint32_t stale;       /* ... of them, copies from an incarnation that died or
			       * was replaced since (B46, B48): never judged as the
			       * slot's; its new copy's own copy is (B61) */
	uint32_t unsure;      /* ... of those, from an incarnation not known dead (a newer
			       * one is known, a move of it maybe): they go with a cut,
			       * as stale (DATA_F_STALE, B72) */
};

/* One message of one inbound channel, until every live sender replica's
 * copy has been compared with it and it was consumed. */
struct entry {
	uint64_t seq;
	uint8_t nvar;
	int8_t chosen;        /* variant delivered, -1 until available,
			       * CHOSEN_CUT: consumed before a migration's cut */
	bool consumed;
	uint64_t arrival;     /* order it became available (ANYSRC candidates) */
	uint64_t t_first;     /* when its first copy arrived (lag detector) */
	uint32_t flagged;     /* sender replicas already suspected for it */
	uint32_t seen;        /* union of variants' seen */
	struct variant var[MAX_VARIANTS];
};

/* Inbound channel src→(local process). Entries are a window [base, base+cap)
 * indexed by seq - base. */
struct chan {
	uint32_t src;
	uint64_t base;        /* seq of slot 0; every seq < base is retired */
	uint32_t cap;
	struct entry *slots;  /* slots[i].seq == 0: empty */
	uint64_t contig;      /* all seqs <= contig are available */
	uint64_t consumed_low;/* all seqs <= consumed_low are consumed */
	uint32_t navail;      /* available and not consumed */
	uint64_t start[CORE_MAX_R]; /* first seq expected from each sender replica
				     * (a joining copy: from its first message) */
	uint32_t provisional; /* start[k] guessed from when we heard it joined */
	bool late_told;       /* one late-copy event per channel is enough */
	/* retention acks (retain.c): the last upto acked per sender replica,
	 * and the host (+1) its last copy straight from its daemon came from */
	uint64_t acked_sent[CORE_MAX_R];
	uint32_t ack_host[CORE_MAX_R];
};

/* A message a local process sent, retained until every live replica of its
 * destination acked it from where our map has it (retain.c). */
struct rmsg {
	struct f_data d;      /* as sent (dst_rep, epoch of the first copy) */
	struct mbuf *m;
	uint32_t to_host[CORE_MAX_R]; /* where replica k's copy went (UINT32_MAX: none) */
	uint32_t to_inc[CORE_MAX_R];  /* ... to which incarnation */
	uint32_t via;         /* came with a move's cut: the host whose daemon sent
			       * the copies (UINT32_MAX: we did) */
};

/* The retained messages of one outbound channel (local g -> dst), by seq. */
struct rout {
	uint32_t src_rep;
	struct rmsg *v;
	uint32_t len, cap;
	uint64_t acked[CORE_MAX_R];     /* replica k holds every seq <= acked[k] ... */
	uint32_t acked_inc[CORE_MAX_R]; /* ... as incarnation acked_inc[k] */
	bool told;            /* one retain-full event per episode */
};

struct decision {
	uint64_t index;
	uint32_t src;
	uint64_t seq;
	uint32_t term;
};

/* A growable log of ANYSRC decisions, indexed from `first`. */
struct dlog {
	uint64_t first;       /* index of v[0] */
	uint32_t len, cap;
	struct decision *v;
};

struct lproc {
	bool present;         /* a replica of this group is (or was) here */
	bool running;
	uint32_t rep;
	/* the receive the process is blocked in, if any */
	bool want;
	int32_t want_src, want_tag;
	uint64_t want_size;
	/* channels by source group, allocated on first message */
	struct chan **chans;
	uint32_t *chan_list;  /* sources that have a channel */
	uint32_t nchan_list;
	/* ANYSRC */
	uint64_t any_next;    /* index of this process's next ANYSRC receive */
	struct dlog dlog;     /* decisions known here (made or received) */
	bool pend;            /* leader: decision any_next sent, awaiting acks */
	uint32_t pend_acks;   /* bitmask of sibling replicas that stored it */
	bool leading;         /* this replica is the group's ANYSRC leader */
	bool syncing;         /* new leader: adopting siblings' stored decisions */
	uint32_t sync_dead;   /* ... of these, dead siblings whose daemons store theirs (B42) */
	uint64_t sync_dead_until; /* ... waited for until then */
	uint32_t sync_wait;   /* siblings whose DLOG_END is awaited */
	uint32_t promised;    /* answered a new leader's sync (DLOG_REQ LEAD) from
			       * replica promised - 1 (0: none): a dead lower one's
			       * decisions, or its slot's dead predecessor's, are older
			       * (B52, B60) */
	uint64_t any_wait_since; /* follower: waiting for a decision since (ns) */
	bool any_pulled;      /* follower: asked the leader for its decisions in this wait */
	bool finalized;
	bool fenced;
	uint8_t *talk;        /* [m]: hosts that sent to it (the communication array) */
	/* source side of a capture (MOVE or COPY) */
	bool capturing, cap_sent;
	/* a copy's pre-copy goes on across receives (no cut yet, delivery
	 * goes on); ready: its first pass is done, the cut comes next */
	bool cap_pre, cap_ready;
	uint64_t cap_pre_until; /* the cut at the next receive after this, ready or not */
	uint8_t cap_mode;
	uint32_t cap_target, cap_k, cap_inc;
	/* after a MOVE: where it went, to forward late frames */
	bool moved;
	uint32_t moved_to, moved_rep;
	/* after a COPY: forward what arrives for it to the new copy until every
	 * live host acknowledged the new member */
	bool fwd;
	uint32_t fwd_host, fwd_k, fwd_inc;
	uint8_t *fwd_wait;    /* [m] */
	/* target side: restored from an image, waiting for its cut and process */
	bool restoring, state_ready;
	uint32_t prev_host;   /* where our map had it before it came here */
	/* coordinator: the copy it ordered last (placement counts it on its
	 * target until it is there, while regen_busy) */
	uint32_t regen_to;    /* target host + 1, 0: none */
	uint32_t regen_k;
	uint32_t regen_inc;   /* the last copy ordered here: its incarnation */
	uint32_t restore_from; /* the daemon its state comes from (UINT32_MAX: not known yet) */
	bool state_begun;     /* restoring: its PROC_STATE (any_next) arrived */
	bool moved_in;        /* it moved here (MIG_MOVE): see DECISION_F_MOVED */
	/* a move here whose restore failed before its state came: if that
	 * state comes after all, its source ended (see on_proc_state) */
	uint32_t failed_inc, failed_rep;
	/* decisions that came before they fit the log: before the restored
	 * replica's PROC_STATE, or past a gap (an earlier one is still being
	 * forwarded from the host it moved from); stored once they fit */
	struct pend_dec { uint32_t from; uint8_t flags; struct f_decision d; } *dpend;
	uint32_t ndpend;
	bool dpend_busy;
	/* outbound channels' retained messages, by destination (retain.c);
	 * kept after the process ends: its daemon still answers for them */
	struct rout **rout;
};

/* A regeneration waiting for the suspect's lease to run out (rule 3). */
struct regen {
	uint32_t g, k;
	uint64_t at;
};

struct core {
	struct core_cfg cfg;
	uint64_t now;         /* the latest time the shell told us */
	uint8_t *held;        /* [n*r] detection suspended */
	uint8_t *host_dead;   /* [m] */
	uint64_t *last_heard; /* [m] */
	uint64_t hb_next, hb_count;
	uint64_t last_tick;   /* when detect_tick last ran */
	uint64_t lag_grace_until;
	uint64_t lag_mean, lag_dev; /* EWMA of inter-replica copy lag (ns) */
	struct lagstate *lag; /* the lag detector's own state (detect.c) */
	uint32_t load_milli;  /* runnable tasks per core x 1000 (>= 1000) */
	bool isolated;        /* cut off from the majority: own processes fenced */
	uint8_t *joining;     /* [n*r] member, not yet verified (rule 4) */
	uint8_t *verified_sent; /* [n*r] we announced its verification */
	uint64_t *joined_at;  /* [n*r] when we heard this incarnation joined (0: from the start) */
	uint32_t *dead_by;    /* [n*r] the host whose MEMBER news told us it died
			       * (UINT32_MAX: none, or we fenced it ourselves) */
	uint8_t *implicit;    /* [n*r] this incarnation's first frame was taken as a move's
			       * news (migrate_implicit_join); it may turn out a copy */
	uint32_t *line_inc;   /* [n*r] the incarnation the current one descends from by
			       * moves only (a copy's, or the first): a verification of any
			       * incarnation from there on is the current one's (B69) */
	uint64_t *dead_since; /* [n*r] when we learned it died */
	uint64_t *regen_busy; /* [n] a copy of the group is under way until then */
	uint64_t repair_next; /* next repair scan */
	/* suspicions raised here, re-sent until the suspect is dead in our map:
	 * the coordinator they went to may die before it fences (rule 2) */
	struct pending_sus { uint32_t g, k, inc; uint8_t reason; } *sus;
	uint32_t nsus;
	uint64_t sus_next;
	/* a replacement daemon: asks its peers for the map until one answers
	 * (its first ask may reach a peer that has not heard it is back and
	 * drops it, as from a lost host) */
	bool map_wanted;
	uint64_t map_ask_next;
	/* ... and until rejoin_grace ends (set at its first tick), it declares
	 * lost only a host it heard since it started, and never itself cut off:
	 * a peer that has not heard HOST_UP yet sends it nothing (rejoin_heard) */
	bool rejoining;
	uint64_t rejoin_grace;
	uint8_t *rejoin_heard; /* [m] */
	struct regen *regens;
	uint32_t nregens;
	bool no_regen;
	uint64_t precopy_max_ns; /* a spread pre-copy's cut after this, ready or not (0: 1 s) */
	struct held { uint32_t from; uint8_t flags; struct f_data d; struct mbuf *m; } *held_v;
	uint32_t nheld;
	/* DLOG_REQs from a sibling not known at that place yet: a copy whose
	 * joining news is still on its way (anysrc_hold_req) */
	struct held_req { uint32_t from; uint8_t flags; struct f_dlog_req q; uint64_t at; } *hreq;
	uint32_t nhreq;
	bool hreq_busy;
	uint8_t *alive;       /* [n*r] */
	uint32_t *host;       /* [n*r] */
	uint32_t *past_host;  /* [n*r*CORE_PAST]: hosts it was at before it moved
			       * (their frames may still be in flight) */
	uint32_t *dead_inc;   /* [n*r] highest incarnation known dead (rule 1) */
	/* [n*r] the last incarnation known dead of a crash (exit, host, lag),
	 * and the last fenced for anything else (a mismatch): B41 */
	uint32_t *crash_inc, *bad_inc;
	uint32_t *inc;        /* [n*r] incarnation */
	uint32_t *epoch;      /* [n] membership epoch of each group */
	struct lproc *procs;  /* [n] */
	uint64_t arrivals;
	uint64_t ret_bytes;   /* payload bytes retained (retain.c) */
	struct core_stats stats;
	struct action *acts;
	size_t nacts, capacts;
};

/* core.c */
/* Channels, decision log and pending decisions of a local process, freed. */
void core_lproc_free(struct lproc *p, uint32_t n);
struct action *core_emit(struct core *c, enum action_kind kind);
void core_to_peers(struct core *c, const struct frame *f);
/* An event: {"event":"<kind>", <fields>} where fields is a printf format
 * for the rest of the JSON object (may be empty). */
void core_event(struct core *c, const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
uint32_t core_live_mask(const struct core *c, uint32_t g);
/* Move slot i (g*r+k) of the map to host; the old host is remembered. */
void core_set_host(struct core *c, size_t i, uint32_t host);
/* Frames of replica g.k may come from `from`: its host, or one it moved
 * from (sent before the move, still in flight after the news). */
bool core_was_at(const struct core *c, uint32_t g, uint32_t k, uint32_t from);
void core_note_past(struct core *c, size_t i, uint32_t host);
/* A copy of slot i from incarnation src_inc is stale (B48, B58, B64). */
bool core_copy_stale(const struct core *c, size_t i, uint32_t src_inc, bool fwd);
/* Incarnations up to inc of slot i are dead (rule 1: their frames are dropped). */
void core_dead_upto(struct core *c, size_t i, uint32_t inc);
/* ... and incarnation inc died for `reason` (0: not known). */
void core_dead_with(struct core *c, size_t i, uint32_t inc, uint8_t reason);

/* chan.c */
struct chan *chan_get(struct core *c, struct lproc *p, uint32_t src);
struct entry *chan_entry(struct chan *ch, uint64_t seq);
int chan_arrive(struct core *c, struct lproc *p, uint32_t dst, const struct f_data *d,
		struct mbuf *m, uint8_t flags);
void chan_consume(struct core *c, struct lproc *p, struct chan *ch, struct entry *e);
void chan_free(struct chan *ch);
void chan_forget(struct core *c, struct chan *ch, uint32_t bits);
void chan_membership(struct core *c, struct chan *ch);

/* match.c */
void match_try(struct core *c, uint32_t g);
void match_deliver(struct core *c, uint32_t g, struct chan *ch, struct entry *e);
struct entry *match_in_chan(struct chan *ch, int32_t tag);
struct entry *match_first_arrival(struct lproc *p, int32_t tag, struct chan **out);

/* member.c */
uint32_t core_coordinator(const struct core *c, uint32_t g, uint32_t except_k);
void member_fence(struct core *c, uint32_t g, uint32_t k, uint8_t reason);
int member_on_suspect(struct core *c, uint32_t from, const struct f_suspect *s);
int member_on_member(struct core *c, uint32_t from, const struct f_member *m);
const char *reason_name(uint8_t reason);

/* migrate.c */
void migrate_on_recv(struct core *c, uint32_t g);
int migrate_peer_frame(struct core *c, uint32_t from, const struct frame *f, struct mbuf *m);
bool migrate_redirect(struct core *c, uint32_t from, uint8_t flags, const struct f_data *d,
		      struct mbuf *m);
uint32_t core_member_mask(const struct core *c, uint32_t g);
int migrate_member(struct core *c, uint32_t from, const struct f_member *m);
/* news.c: a move's MAP (migrate_member above takes a copy's MEMBER joining news) */
int news_on_map(struct core *c, uint32_t from, const struct f_map *m);
void migrate_on_data(struct core *c, uint32_t from, const struct f_data *d, struct mbuf *m);
void migrate_hold(struct core *c, uint32_t from, uint8_t flags, const struct f_data *d,
		  struct mbuf *m);
void migrate_release_held(struct core *c, uint32_t g, uint32_t k);
void migrate_implicit_join(struct core *c, uint32_t from, const struct f_data *d);
void migrate_verified_news(struct core *c, const struct f_member *m);
/* Copy g.k resumed from a cut: keep messages until its first copy shows where. */
void migrate_expect_joined(struct core *c, uint32_t g, uint32_t k);
void migrate_expect_joining(struct core *c, uint32_t g, uint32_t k);
/* restore.c: the target side */
int restore_on_proc_state(struct core *c, uint32_t from, const struct f_proc_state *s);
int restore_on_cut_chan(struct core *c, uint32_t from, const struct f_cut_chan *k);
int restore_on_state_end(struct core *c, uint32_t from, const struct f_state_end *e);
void migrate_abort_local(struct core *c, uint32_t g);
void migrate_host_change(struct core *c, uint32_t h, bool up);
void migrate_source_lost(struct core *c, uint32_t h);
void migrate_reannounce(struct core *c, uint32_t h);
void migrate_sibling_lost(struct core *c, uint32_t g, uint32_t k, uint8_t reason);
struct action *migrate_peer_action(struct core *c, uint32_t host, uint8_t type);
/* regen.c */
void migrate_after_fence(struct core *c, uint32_t g, uint32_t k, uint8_t reason);
void migrate_tick(struct core *c);
/* member.c */
void member_resend_suspicions(struct core *c);
void member_relay_fences(struct core *c, uint32_t lost);
bool member_supersede_local(struct core *c, uint32_t g, uint32_t k, uint32_t inc);
void member_verified(struct core *c, uint32_t g, uint32_t k);
void member_heard_verified(struct core *c, uint32_t g, uint32_t k);
void membership_changed(struct core *c, uint32_t g);
int member_on_sync(struct core *c, uint32_t from, const struct frame *f);
void member_map_tick(struct core *c);

/* chan.c (cut) */
void chan_apply_cut(struct core *c, struct chan *ch, uint64_t low, const uint64_t *seqs,
		    uint32_t count);
uint32_t chan_expect(const struct core *c, const struct chan *ch, uint64_t seq);

/* retain.c: sender-side retention */
void retain_sent(struct core *c, uint32_t g, const struct f_data *d, struct mbuf *m,
		 const uint32_t *to);
int retain_on_ack(struct core *c, uint32_t from, const struct f_data_ack *a);
void retain_tick(struct core *c);
void retain_ack_tick(struct core *c);
void retain_ack_all(struct core *c, uint32_t g);
void retain_free(struct core *c, struct lproc *p);
void retain_cut(struct core *c, uint32_t g, uint32_t target);
int retain_on_cut_data(struct core *c, uint32_t from, const struct f_data *d, struct mbuf *m);

/* detect.c */
void detect_tick(struct core *c);
void detect_on_heard(struct core *c, uint32_t host);
/* A copy of e from sender replica k arrived (before e->seen records it). */
void detect_copy(struct core *c, const struct chan *ch, const struct entry *e, uint32_t k);
void detect_late_copy(struct core *c, uint32_t g, uint32_t k);
void detect_free(struct core *c);
uint64_t detect_lag_bound(const struct core *c);
/* How long a daemon cut off from the majority keeps running (rule 3). */
uint64_t detect_lease(const struct core *c);

/* anysrc.c */
void anysrc_membership(struct core *c, uint32_t g);
int anysrc_on_dlog_req(struct core *c, uint32_t from, const struct f_dlog_req *q, uint8_t flags);
int anysrc_on_dlog_end(struct core *c, uint32_t from, const struct f_dlog_end *e, uint8_t flags);
bool anysrc_enabled(const struct core *c);
void anysrc_try(struct core *c, uint32_t g);
#define DECISION_F_SYNC 1 /* header flag: adopted/re-sent by a new leader */
#define DECISION_F_FWD 2  /* DECISION, DLOG_REQ: forwarded by the host the
			   * replica moved from (answers go to the sender) */
#define DECISION_F_MOVED 4 /* DECISION, DLOG_REQ, DLOG_END: from a replica that
			    * moved to the sending host (its news may still be
			    * on the way, like a newer incarnation's DATA) */
#define DECISION_F_LEAD 8 /* DLOG_REQ: from a new leader syncing (not a
			   * follower's pull): its sender is verified */
int anysrc_on_decision(struct core *c, uint32_t from, const struct f_decision *d, uint8_t flags);
int anysrc_on_ack(struct core *c, const struct f_decision_ack *a);
/* dlog.c: the decision log (at most DLOG_KEEP consumed ones kept) */
#define DLOG_KEEP 65536
void dlog_free(struct dlog *l);
struct decision *dlog_find(struct dlog *l, uint64_t index);
int dlog_extend_front(struct dlog *l, uint64_t index);
int dlog_append(struct dlog *l, const struct decision *d);
void dlog_prune(struct dlog *l, uint64_t next);
uint64_t dlog_upto(const struct dlog *l);
void anysrc_pending(struct core *c, uint32_t g);
void anysrc_sibling_moved(struct core *c, uint32_t g, uint32_t k);
void anysrc_pull(struct core *c, uint32_t g);
/* Held DLOG_REQs whose sender is known now are answered (after every peer
 * frame and tick while some are held). */
void anysrc_retry_held(struct core *c);
/* A new leader stops waiting for a dead sibling's daemon that is lost or
 * silent too long (B42). */
void anysrc_tick(struct core *c);

#endif
