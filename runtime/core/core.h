/* The protocol core of one msgd, for one job: a pure state machine.
 *
 * Events go in (a local process sent, asked to receive, started, ended; a
 * frame arrived from a peer daemon; time passed) and actions come out (send
 * this frame to that host, deliver that message to a local process, log this
 * event). The core does no I/O and reads no clock: the daemon shell and the
 * deterministic simulator (tests/sim) drive the very same code.
 *
 * On one host each group has at most one replica, so a local process is
 * named by its group.
 */
#ifndef MSG_CORE_H
#define MSG_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/mbuf.h"
#include "wire/frame.h"

#define CORE_MAX_R 16

/* Negative control for I6 across a migration (a core-only test switch, not
 * on the wire: only the simulator sets it): the host a replica moved from
 * forgets to forward what still reaches it there (Figure 5a), and drops it. */
#define CORE_F_TEST_NO_FORWARD (1u << 31)
/* Negative control for the vote tie rule (chan.c, vote_tie): two live sender
 * replicas that disagree, no majority, wait for good (core-only switch). */
#define CORE_F_TEST_NO_VOTE_TIE (1u << 30)
/* Negative control for sender-side retention (retain.c): nothing is
 * retained, so nothing is sent again (core-only switch). */
#define CORE_F_TEST_NO_RETAIN (1u << 29)
/* Negative control for B41 (core.c, data_sender): a crashed replica's DATA
 * sent before its end is dropped as from a dead incarnation, like a
 * corrupt one's (core-only switch). */
#define CORE_F_TEST_NO_CRASHED_DATA (1u << 28)
/* Negative control for B42 (anysrc.c, dead_stores): a new ANYSRC leader
 * asks only live siblings for their stored decisions (core-only switch). */
#define CORE_F_TEST_NO_DEAD_STORES (1u << 27)
/* Negative control for B43 (chan.c, maybe_choose): a vote waits for a
 * copy whose start on the channel is only guessed (core-only switch). */
#define CORE_F_TEST_VOTE_WAITS_GUESSED (1u << 26)
/* Negative control for B47 and B48 (member.c member_supersede_local, and
 * the B48 places): a daemon that hears of a copy of a slot before the fence
 * of the incarnation it replaced keeps that one running and judges its
 * copies as the new one's; for B49 and B51, a fence or a suspicion for what
 * a replica sent or consumed does not follow it to where it moved
 * (core-only switch). */
#define CORE_F_TEST_NO_SUPERSEDE (1u << 25)
/* Negative control for B52 (anysrc.c, promised): a daemon that answered a
 * new ANYSRC leader's sync still takes an older leader's fresh decisions
 * (core-only switch; bits 6-10, 12-15 and 25-31 are the core's, the wire's JOB_F
 * flags are bits 0-5, 11 and 16-24: frame.h). */
#define CORE_F_TEST_NO_PROMISE (1u << 15)
/* Negative control for B53 and B55 (anysrc.c): a follower does not ack the
 * decisions its leader sends in answer to its pull, and the leader does
 * not take the pull as the ack of what it consumed (core-only switch). */
#define CORE_F_TEST_NO_PULL_ACK (1u << 14)
/* Negative control for B54 (retain.c, retain_cut): a move's cut leaves
 * out the messages its source's daemon still retains (core-only switch). */
#define CORE_F_TEST_NO_RETAIN_MOVE (1u << 13)
/* Negative control for B56 (retain.c, may_revive): a message sent while a
 * destination replica was dead of a crash is not kept for its revival by a
 * late move's news (core-only switch). */
#define CORE_F_TEST_NO_REVIVE_RETAIN (1u << 12)
/* Negative control for B57 (detect.c, detect_late_copy): a copy that comes
 * after its entry retired says nothing of its sender, so a copy resumed
 * behind its slowest live sibling is silent to the lag detector until it
 * catches up (core-only switch). */
#define CORE_F_TEST_LATE_SILENT (1u << 10)
/* Negative control for B59 (core.c data_sender, news.c news_on_map): a frame
 * of an older incarnation from a place our map skipped (a move chain whose
 * news came out of order) is a protocol error (core-only switch). */
#define CORE_F_TEST_NO_SKIPPED_PLACES (1u << 9)
/* Negative control for B61 (chan.c chan_forget): a dead incarnation's copy
 * marks its whole entry, as before B61, so the slot's new copy's own copy
 * of that seq is never judged either (core-only switch). */
#define CORE_F_TEST_ENTRY_STALE (1u << 8)
/* Negative control for B62 (anysrc.c anysrc_on_dlog_req): a DLOG_REQ from
 * our own replica's slot (a predecessor's, late) is answered (core-only
 * switch). */
#define CORE_F_TEST_ANSWER_OWN_SLOT (1u << 7)
/* Negative control for B63 (restore.c core_incoming): a copy restored where
 * an older copy of its slot was still being restored keeps that one's
 * receive (core-only switch). */
#define CORE_F_TEST_KEEP_WANT (1u << 6)

/* Core-only test switches past the flags word (it has no bit left): */
/* Negative control for B65 (anysrc.c, store_mask): a joining copy's store
 * is not needed for a decision (a lone leader decides alone). */
#define CORE_T_JOINING_NO_STORE (1u << 0)
/* Negative control for B66 (migrate.c, migrate_reannounce): a verified copy
 * is reannounced as joining only. */
#define CORE_T_REANNOUNCE_JOINING (1u << 1)
/* Negative control for B67 (restore.c, core_incoming_refused): an image of
 * a group whose other replica lives here is taken all the same. */
#define CORE_T_TAKE_SECOND_REPLICA (1u << 2)
/* Negative control for B68 (restore.c, state_for_this): a cut's frames of
 * an older incarnation of the slot apply to the one being restored. */
#define CORE_T_STALE_STATE (1u << 3)
/* Negative control for B69 (member.c, member_on_member): a copy's
 * verification heard after its move is dropped as old news. */
#define CORE_T_MOVED_STAYS_JOINING (1u << 4)
/* Negative control for B70 (core.c, core_copy_stale): a forwarded copy
 * from before a verified copy's line is judged as the copy's. */
#define CORE_T_LINE_NOT_STALE (1u << 5)
/* Negative control for B71 (anysrc.c, cut_backfill): a cut's decisions
 * below the restored process's next index are dropped. */
#define CORE_T_CUT_DROPS_OLD (1u << 6)
/* Negative control for B72 (migrate.c, cut_undecided): a stale copy from
 * an incarnation not known dead is left out of a cut. */
#define CORE_T_CUT_DROPS_UNSURE (1u << 7)

struct core_cfg {
	uint32_t host;   /* this daemon's index, 0..m-1 */
	uint32_t n, r, m;
	uint8_t mode;    /* enum cmp_mode */
	uint32_t flags;  /* JOB_F_* */
	uint32_t test;   /* CORE_T_* (the simulator's; 0 in msgd) */
	/* failure detection (DESIGN §6); 0 picks the default */
	uint64_t hb_period_ns;   /* heartbeat period (50 ms) */
	uint64_t hb_timeout_ns;  /* host silent this long is lost (250 ms) */
	uint64_t lease_ns;       /* cut off from the majority this long: fence own (hb_timeout) */
	uint64_t lag_floor_ns;   /* lag bound never below this (750 ms) */
};

enum action_kind {
	A_PEER,    /* send frame f (and payload m, if any) to host */
	A_LOCAL,   /* send frame f (and payload m) to the local process of group */
	A_EVENT,   /* a noteworthy event: a JSON object for the event log */
	A_KILL,    /* kill the local process of group (fenced) */
	A_CAPTURE, /* capture the local process of group: f.u.migrate says how */
};

struct action {
	enum action_kind kind;
	uint32_t host;
	uint32_t group;
	struct frame f;
	struct mbuf *m;  /* reference owned by the action */
	char text[192];
};

struct core_stats {
	uint64_t delivered;   /* messages handed to local processes */
	uint64_t duplicates;  /* copies compared against a delivered one and equal */
	uint64_t mismatches;  /* copies whose digest differed */
	uint64_t decisions;   /* ANYSRC decisions made (as leader) */
	uint64_t followed;    /* ANYSRC decisions followed */
	uint64_t forwarded;
	uint64_t bytes_queued;
	uint64_t dropped;     /* frames for processes not here */
	uint64_t suspicions;  /* raised here */
	uint64_t fences;      /* decided here as coordinator */
	uint64_t late;        /* copies that came after their message retired */
	uint64_t resent;      /* retained messages sent again to a new place (retain.c) */
};

struct core;

/* NULL on a bad configuration (r > m, zero sizes) or out of memory. */
struct core *core_new(const struct core_cfg *cfg);
void core_free(struct core *c);

/* Placement (paper, Figure 3): replica k of group g lives on host (g*r+k) mod m. */
uint32_t core_place(uint32_t g, uint32_t k, uint32_t r, uint32_t m);
uint32_t core_host_of(const struct core *c, uint32_t g, uint32_t k);
bool core_is_local(const struct core *c, uint32_t g, uint32_t *rep);
/* Lowest live replica of g: the group's ANYSRC leader. */
uint32_t core_leader(const struct core *c, uint32_t g);

/* Events. Each returns 0, or a negative MSG_E* / FE_* code when the input
 * is invalid (the shell then closes the offending connection). Payload
 * references passed in are taken over by the core. */
int core_local_start(struct core *c, uint32_t g);
int core_local_send(struct core *c, uint32_t g, const struct l_send *s, struct mbuf *m);
int core_local_recv(struct core *c, uint32_t g, const struct l_recv *r);
/* The receive in flight is withdrawn (L_RECV with RECV_F_CANCEL). */
int core_local_cancel(struct core *c, uint32_t g);
/* The process called msgFinalize: its end is not a fault. */
void core_local_finalize(struct core *c, uint32_t g);
/* Its process ended; status is the wait status. */
void core_local_exit(struct core *c, uint32_t g, int status);
/* Fault injection and debugging: suspicions about a held replica are logged
 * and ignored. */
void core_hold(struct core *c, uint32_t g, uint32_t k, bool hold);
/* A local suspicion from the shell (e.g. an injected fault it observed). */
void core_suspect(struct core *c, uint32_t g, uint32_t k, uint8_t reason, const char *detail);
/* Status of replica g.k as this daemon sees it. */
bool core_alive(const struct core *c, uint32_t g, uint32_t k);
uint32_t core_inc(const struct core *c, uint32_t g, uint32_t k);
bool core_isolated(const struct core *c);
/* This daemon declared host h lost (heartbeat timeout). */
bool core_host_lost(const struct core *c, uint32_t h);
bool core_joining(const struct core *c, uint32_t g, uint32_t k);

/* Migration (DESIGN §7). At the source: move replica rep of g to target
 * (MIG_MOVE), or copy it into dead slot k (MIG_COPY, coordinator's order).
 * The core asks the shell to capture at the process's next safe point
 * (A_CAPTURE) and sends the exact cut to the target; the shell reports the
 * outcome with core_capture_done (0 or a negative error). */
int core_migrate(struct core *c, const struct f_migrate *m);
void core_capture_done(struct core *c, uint32_t g, int status);
/* A copy's pre-copy spread over receives (DESIGN §7, docs/protocol.md):
 * pending: the process began it and goes on (no cut: deliver again);
 * ready: its first pass is done, capture it at its next safe point (the
 * shell then asks the process for the cut without a new image socket:
 * A_CAPTURE with CAPTURE_F_PRECOPIED). */
void core_capture_pending(struct core *c, uint32_t g);
void core_capture_ready(struct core *c, uint32_t g);
#define CAPTURE_F_PRECOPIED 1
/* Diagnostics: one wait-state event per local replica (and wait-chan per
 * channel it waits on or has messages in): what a stuck job waits for. */
void core_dump_waits(struct core *c);
/* A capture of local g waits for its next receive (the shell may have to
 * bring the process to msgd's path first: docs/datapath.md). */
bool core_capture_waiting(const struct core *c, uint32_t g);
/* ... and one whose capture has begun (the L_CKPT is on its way) */
bool core_capture_begun(const struct core *c, uint32_t g);
/* At the target: an image for replica g.k, incarnation inc, is arriving
 * from the daemon of host `from` (the source: the image connection's
 * authenticated peer; UINT32_MAX: not known, its PROC_STATE will say). */
int core_incoming(struct core *c, uint32_t g, uint32_t k, uint32_t inc, uint8_t mode,
		  uint32_t from);
/* Whether that image must be refused (core_incoming then returns -1 and
 * changes nothing): another live replica of g runs or is being restored
 * here. A move and a copy of one group ordered by different daemons at
 * once can pick the same host; no two replicas of a group share one. The
 * shell closes the image connection before its GO: the source's capture
 * fails, a move leaves the replica where it was, a copy is made again
 * elsewhere. */
bool core_incoming_refused(const struct core *c, uint32_t g, uint32_t k);
/* At the target: the restore failed before the process existed. A move
 * whose source already ended (its state came, or comes later) leaves
 * nothing of the replica: it is fenced, and an A_KILL of g here says the
 * slot's process ended. */
void core_restore_failed(struct core *c, uint32_t g);
/* At the target: the restored process connected. */
int core_local_restored(struct core *c, uint32_t g);
/* Placement of a new or moved replica of g (MOSIX least marginal cost among
 * live hosts without a replica of g); UINT32_MAX if there is none. */
uint32_t core_choose_host(const struct core *c, uint32_t g);
/* A replacement daemon for a lost host: it holds no replica; it asks a peer
 * for the current map (F_MAP_SYNC_REQ, answered with an F_STATUS dump). */
void core_rejoin(struct core *c);
/* The map dump of this core (for msgctl and for rejoining daemons); the
 * caller frees reps. */
int core_map_dump(const struct core *c, struct f_status *out);
/* Host h is back (a replacement daemon): hear it again, place on it. */
void core_host_up(struct core *c, uint32_t h);
/* How oversubscribed this host is, in thousandths (runnable tasks per core,
 * at least 1000): a replica that waits for a core is not hung, so the stall
 * bound grows with it. The shell measures; the core only uses it. */
void core_set_load(struct core *c, uint32_t milli);
/* Automatic regeneration after a fence (on by default). */
void core_set_regen(struct core *c, bool on);
/* How long a spread pre-copy may go on before its cut is taken anyway
 * (tests: long, so a fault can be placed inside it). */
void core_set_precopy_max(struct core *c, uint64_t ns);
/* A frame from peer daemon `from`. DATA frames arrive reassembled: f->u.data
 * describes the whole message (off 0, chunk = total) and m holds it. */
int core_peer_frame(struct core *c, uint32_t from, const struct frame *f, struct mbuf *m);
/* Bytes of a frame still being received arrived from peer `from`: it is
 * alive, though its heartbeats may be queued behind a long message. */
void core_peer_heard(struct core *c, uint32_t from);
/* Time passes: the shell calls this before every batch of events, and
 * periodically, with a monotonic clock; the simulator with its own. */
void core_tick(struct core *c, uint64_t now_ns);
/* Only advance the clock (before an event; cheaper than a tick). */
void core_now(struct core *c, uint64_t now_ns);

/* Actions produced so far, in order; the caller takes them all (and the
 * mbuf references in them) and the list is emptied. */
struct action *core_take_actions(struct core *c, size_t *n);

const struct core_stats *core_stats(const struct core *c);

#endif
