/* The msg wire format: every frame on every connection (daemon↔daemon over
 * TCP, msgrun/msgctl↔daemon over TCP, app↔daemon over a Unix socket) is a
 * 16-byte header followed by a body of `len` bytes. Frames that carry a
 * message payload (DATA, L_SEND, L_DELIVER) are followed by `payload` raw
 * bytes outside the body, so a receiver can read the payload straight into
 * its final place. All integers are little-endian. docs/protocol.md is the
 * specification; this header is its C form.
 */
#ifndef MSG_WIRE_FRAME_H
#define MSG_WIRE_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FRAME_MAGIC 0x3147534dU /* "MSG1" */
#define FRAME_VERSION 1
#define FRAME_HDR_LEN 16
#define FRAME_BODY_MAX (4u << 20)        /* control bodies (JOB_START, STATUS) */
#define FRAME_CHUNK_MAX (1u << 20)       /* a DATA frame's payload chunk */
#define FRAME_MSG_MAX ((uint64_t)16 << 30) /* one message */
#define FRAME_STR_MAX 65536
#define FRAME_LIST_MAX 4096
#define FRAME_HOSTS_MAX 1024
#define FRAME_NONCE_LEN 32
#define FRAME_MAC_LEN 32
#define FRAME_DIGEST_LEN 32
#define FRAME_OUTPUT_MAX 65536

enum frame_type {
	/* authentication (any TCP connection) */
	F_CHALLENGE = 1,
	F_AUTH = 2,
	F_AUTH_OK = 3,
	/* daemon ↔ daemon */
	F_DATA = 10,
	F_DECISION = 11,
	F_DECISION_ACK = 12,
	F_HEARTBEAT = 13,
	F_SUSPECT = 14,
	F_MEMBER = 15,
	F_DLOG_REQ = 16,
	F_DLOG_END = 17,
	F_DATA_ACK = 18, /* a receiver's daemon -> a sender's: copies it holds (retention) */
	/* launcher ↔ daemon */
	F_JOB_START = 20,
	F_JOB_READY = 21,
	F_PROC_EXIT = 22,
	F_OUTPUT = 23,
	F_STDIN = 24,
	F_JOB_KILL = 25,
	F_JOB_END = 26,
	F_STATS_REQ = 27,
	F_STATS = 28,
	F_JOB_GO = 29,
	F_EVENT = 30,
	F_INJECT = 31,
	F_STATUS_REQ = 32,
	F_STATUS = 33,
	/* migration and regeneration */
	F_MIGRATE = 34,
	F_PROC_STATE = 35,
	F_CUT_CHAN = 36,
	F_STATE_END = 37,
	F_MAP = 38,
	F_MEMBER_ACK = 39,
	F_IMAGE_HELLO = 50,
	F_IMAGE_GO = 51,
	F_HOST_ADD = 52,     /* msgctl -> a daemon: a fresh daemon stands for host h */
	F_HOST_UP = 53,      /* launcher -> daemons: host h is back at addr */
	F_MAP_SYNC_REQ = 54, /* rejoining daemon -> a peer: send me the map */
	F_DIRECT_HELLO = 55, /* a direct stream: the source daemon names the pair */
	/* app (libmsg) ↔ local daemon */
	L_HELLO = 40,
	L_WELCOME = 41,
	L_SEND = 42,
	L_RECV = 43,
	L_DELIVER = 44,
	L_TRUNC = 45,
	L_FINALIZE = 46,
	L_BYE = 47,
	L_ERROR = 48,
	L_CKPT = 60,
	L_CKPT_DONE = 61,
	L_DIRECT_REQ = 62,   /* libmsg asks for a direct stream to a rank */
	L_DIRECT = 63,       /* msgd: a stream's end (SCM_RIGHTS), a refusal, or leave */
	FRAME_TYPE_MAX = 64,
};

enum auth_role { ROLE_PEER = 1, ROLE_CONTROL = 2, ROLE_IMAGE = 3, ROLE_DIRECT = 4 };
enum cmp_mode { CMP_FIRST = 0, CMP_VOTE = 1 };
enum out_stream { OUT_STDOUT = 1, OUT_STDERR = 2 };

/* Job flags carried in JOB_START. The TEST_ ones switch a protective
 * mechanism off so that its test has a negative control. */
#define JOB_F_OUTPUT_ALL (1u << 0)
#define JOB_F_NO_REGEN (1u << 1)    /* detect and fence, but do not repair */
#define JOB_F_REJOIN (1u << 2)      /* a replacement daemon for a lost host */
#define JOB_F_DIGEST_XXH3 (1u << 3) /* compare copies by XXH3-128, not SHA-256 */
#define JOB_F_SHM (1u << 4)         /* same-host rings between processes (docs/datapath.md) */
#define JOB_F_DIRECT (1u << 5)      /* r = 1: direct TCP streams across hosts (docs/datapath.md §6) */
#define JOB_F_TEST_FIXED_QUORUM (1u << 11) /* the majority is of all hosts, lost ones too */
#define JOB_F_TEST_ISOLATED_TALKS (1u << 12) /* a daemon cut off by its lease goes on sending */
#define JOB_F_TEST_NO_ANYSRC_PROTOCOL (1u << 16)
#define JOB_F_TEST_NO_DEDUPE (1u << 17)
#define JOB_F_TEST_NO_EXIT_DETECT (1u << 18)
#define JOB_F_TEST_NO_HB_DETECT (1u << 19)
#define JOB_F_TEST_NO_LAG_DETECT (1u << 20)
#define JOB_F_TEST_NO_MISMATCH_FENCE (1u << 21)
#define JOB_F_TEST_NO_ORDER (1u << 22) /* named receives take the newest match */
#define JOB_F_TEST_NO_BACKLOG_DETECT (1u << 23)
#define JOB_F_TEST_FAIL_RESTORES (1u << 24) /* msgd reads each image, then fails it */

struct frame_hdr {
	uint8_t type;
	uint8_t flags;
	uint32_t len; /* body bytes */
};

struct f_challenge { uint8_t nonce[FRAME_NONCE_LEN]; };
struct f_auth {
	uint8_t role;
	uint32_t host;     /* sender's host index (peers) */
	uint64_t job;
	uint8_t nonce[FRAME_NONCE_LEN];
	uint8_t mac[FRAME_MAC_LEN];
};
struct f_auth_ok { uint8_t mac[FRAME_MAC_LEN]; };

/* One chunk of one copy of message (src→dst, seq). total is the message
 * size; the chunk [off, off+chunk) follows the body. */
struct f_data {
	uint32_t src, dst;
	uint16_t src_rep, dst_rep;
	uint32_t src_inc;
	uint32_t epoch;
	uint64_t seq;
	int32_t tag;
	uint64_t total;
	uint64_t off;
	uint32_t chunk;
	uint64_t site;   /* the sender's call site (divergence reports) */
};

/* L_SEND/F_DATA site: with this bit, an offset into the sender's main
 * executable (resolvable with its debug info); without, an address. */
#define MSG_SITE_EXE (1ull << 63)

/* ANYSRC decision `index` of group `group`: its next ANYSRC receive
 * consumes message (src, seq). */
struct f_decision {
	uint32_t group;
	uint32_t term;
	uint64_t index;
	uint32_t src;
	uint64_t seq;
	uint16_t from_rep;
};
struct f_decision_ack {
	uint32_t group;
	uint64_t index;
	uint16_t from_rep;
};
struct f_heartbeat { uint32_t host; uint64_t count; };

/* Why a replica is suspected (DESIGN §6). */
enum suspect_reason {
	SUS_EXIT = 1,      /* its process ended without msgFinalize */
	SUS_HOST = 2,      /* its host stopped answering heartbeats */
	SUS_LAG = 3,       /* its copies lag its siblings' beyond the bound */
	SUS_MISMATCH = 4,  /* its copy was outvoted */
	SUS_CONSUMED = 5,  /* it consumed a copy that was later outvoted (rule 7) */
	SUS_BACKLOG = 6,   /* its inbound backlog overflowed */
	SUS_NODECIDE = 7,  /* as ANYSRC leader it stopped deciding */
	SUS_MAX = 8,
};

/* A suspicion, sent to the coordinator of the suspect's group. */
struct f_suspect {
	uint32_t group;
	uint16_t rep;
	uint32_t inc;
	uint8_t reason;    /* enum suspect_reason */
	uint32_t by_host;
};

enum member_state { MEMBER_LIVE = 1, MEMBER_DEAD = 2, MEMBER_JOINING = 3 };

/* Membership news, from the group's coordinator to every host of the job. */
struct f_member {
	uint32_t group;
	uint16_t rep;
	uint8_t state;     /* enum member_state; dead is final */
	uint32_t epoch;
	uint32_t inc;
	uint32_t host;
	uint8_t reason;    /* why it died */
	uint32_t fwd_host; /* joining: the daemon forwarding to it, to ack to */
};

/* INJECT header flag: corrupt's arg counts the process's messages from its
 * start (msgrun --inject 'corrupt G.K@send=N'), not from the injection
 * (msgctl corrupt G.K N). */
#define INJECT_F_FROM_START 1

/* DATA header flags: a forwarded copy (not from the sender's own daemon);
 * a queued message of a migration's cut (compared at the source already);
 * a message the replica moving to the receiving host sent and its old
 * daemon still retains, part of the move's cut: kept there, delivered to
 * no one, re-sent if the host its copies went out from is lost (epoch:
 * that host; docs/protocol.md §5 Retention). */
#define DATA_F_FWD 1
#define DATA_F_CUT 2
#define DATA_F_RET 4
#define DATA_F_STALE 8

/* MIG_RESUMED is no migration: in L_CKPT from a target daemon it tells a
 * process restored from a kernel-module image (which resumes by repeating
 * the read it was blocked in, docs/kmod.md) to say hello again and repeat
 * its request, as a process restored by its own capture does by itself. */
enum mig_mode { MIG_MOVE = 1, MIG_COPY = 2, MIG_RESUMED = 3 };

/* Move replica `rep` of `group` to `target` (MOVE: rep == src_rep), or fill
 * the dead slot `rep` with a copy of live replica `src_rep` (COPY). Sent to
 * the daemon of src_rep by msgctl (move) or by the group's coordinator. */
struct f_migrate {
	uint32_t group;
	uint16_t rep, src_rep;
	uint32_t target;
	uint8_t mode;
	uint32_t inc;      /* the new incarnation */
};

/* The exact cut of a captured process, source daemon -> target daemon:
 * PROC_STATE, one CUT_CHAN per inbound channel, forwarded DATA (queued
 * messages) and DECISIONs (flag sync), then STATE_END. */
struct f_proc_state {
	uint32_t group;
	uint16_t rep;
	uint32_t inc;
	uint8_t mode;
	uint64_t any_next;
	uint64_t out_off, err_off;
};
#define CUT_MAX_SEQS 4096
struct f_cut_chan {
	uint32_t group;
	uint16_t rep;
	uint32_t src;
	uint64_t consumed_low;
	uint32_t count;    /* consumed seqs above consumed_low */
	uint64_t *seqs;    /* malloc'd on decode */
};
struct f_state_end { uint32_t group; uint16_t rep; uint32_t inc; };

/* Where a replica is now: sent to the hosts that talked to it when it
 * moves, and as a reactive update to a host that sent to its old place. */
struct f_map {
	uint32_t group;
	uint16_t rep;
	uint32_t host;
	uint32_t inc;
	uint32_t epoch;
	uint8_t reactive;
};
struct f_member_ack { uint32_t group; uint16_t rep; uint32_t inc; uint32_t from_host; };
struct f_host_add { uint32_t host; char *addr; };

/* An image connection: after AUTH (ROLE_IMAGE) the source daemon names the
 * replica; the target answers IMAGE_GO and reads nothing more itself: the
 * rest of the stream is the image, for msg-restore. */
#define IMAGE_F_KMOD 1 /* IMAGE_HELLO header flag: the image comes from msgmig.ko */
struct f_image_hello {
	uint32_t group;
	uint16_t rep;
	uint32_t inc;
	uint8_t mode;
	uint64_t out_off, err_off;
};

/* A direct stream (docs/datapath.md §6): after AUTH (ROLE_DIRECT) the
 * source daemon names the ordered pair src -> dst and both incarnations; the
 * target answers IMAGE_GO (then neither daemon reads the stream again) or
 * closes the connection with a logged reason. */
struct f_direct_hello { uint32_t src, dst, src_inc, dst_inc; };

/* L_DIRECT: what msgd tells libmsg about a stream with rank `peer`. */
enum direct_what {
	DIRECT_OUT = 1,     /* the descriptor rides along: we write to peer */
	DIRECT_IN = 2,      /* the descriptor rides along: we read from peer */
	DIRECT_REFUSED = 3, /* no stream to peer (ever): everything goes via msgd */
	DIRECT_LEAVE = 4,   /* leave every stream (a capture or a stall waits) */
};
struct l_direct { uint32_t peer; uint8_t what; };
#define DIRECT_F_RETRY 1 /* L_DIRECT header flag: refused for now (the peer had not started) */
/* L_RECV header flag: cancel the receive in flight. msgd answers it with
 * L_ERROR MSG_EINTERNAL_AGAIN, unless it was answered already (then the
 * cancel is dropped): either way the receive has exactly one answer. */
#define RECV_F_CANCEL 1
/* Tag bit of a message that went through msgd while a direct stream of its
 * pair was open (a DAEMON record stands for it): MSG_ANYTAG receives at msgd
 * do not match it, only a receive for its record does. */
#define L_TAG_DIRECT 0x40000000

/* A new ANYSRC leader asks a sibling for its stored decisions >= from; the
 * sibling answers with DECISION frames and then DLOG_END. */
struct f_dlog_req { uint32_t group; uint64_t from; uint16_t from_rep; };
struct f_dlog_end { uint32_t group; uint16_t from_rep; uint64_t next; uint64_t have_upto; };

/* Sender-side retention (docs/protocol.md §5): replica dst.dst_rep,
 * incarnation dst_inc, at the sending daemon's host holds every copy of
 * channel src -> dst from sender replica src_rep up to seq `upto`
 * (cumulative; UINT64_MAX: it needs none any more). The sender replica's
 * daemon releases what it retained for that replica up to there. */
struct f_data_ack {
	uint32_t src, dst;
	uint16_t src_rep, dst_rep;
	uint32_t dst_inc;
	uint64_t upto;
};

struct f_job_start {
	uint64_t job;
	uint32_t n, r, m;
	uint32_t host;     /* index of the receiving daemon */
	uint8_t mode;      /* enum cmp_mode */
	uint32_t flags;    /* JOB_F_* */
	uint32_t hb_period_ms, hb_timeout_ms, lag_floor_ms; /* 0: defaults */
	uint32_t n_hosts;
	char **hosts;      /* "addr:port", n_hosts of them */
	uint32_t argc;
	char **argv;
	uint32_t envc;
	char **envp;
	char *jobdir;
	char *keepdir;     /* --keep-fenced: where fenced replicas' cores go; "" none */
};
struct f_job_ready { uint32_t host; uint32_t nprocs; };
#define JOB_READY_F_CREATED 1 /* header flag: the job is created, not yet launched */
struct f_proc_exit {
	uint32_t group;
	uint16_t rep;
	uint32_t host;
	int32_t status; /* wait(2) status */
};
struct f_output {
	uint32_t group;
	uint16_t rep;
	uint8_t stream;
	uint64_t off;
	uint32_t len;
	const uint8_t *bytes; /* points into the decoded body */
};
struct f_stdin { uint8_t eof; uint32_t len; const uint8_t *bytes; };
struct f_job_kill { int32_t signo; };
struct f_stats {
	uint32_t host;
	uint64_t delivered, duplicates, mismatches, decisions, forwarded;
	uint64_t bytes_queued;
};

#define EVENT_TEXT_MAX 1024

/* One event-log line from a daemon: JSON object text without the times,
 * which the launcher adds. */
struct f_event { uint64_t mono_ns; uint32_t host; uint32_t len; const uint8_t *json; };

enum inject_kind {
	INJ_KILL = 1, INJ_STALL = 2, INJ_CORRUPT = 3, INJ_KILL_HOST = 4, INJ_CUT = 5,
	INJ_HOLD = 6, INJ_HEAL = 7, INJ_MIGRATE = 8, INJ_EVICT = 9, INJ_MAX = 10,
};
struct f_inject { uint8_t kind; uint32_t group; uint16_t rep; uint32_t arg; };

/* Status of one daemon for msgctl: its host, then one entry per replica of
 * the job as this daemon's map sees it. */
struct f_status_rep { uint32_t group; uint16_t rep; uint32_t host; uint8_t state;
		      uint8_t local; uint32_t inc; int32_t pid; };
#define STATUS_MAX 4096
struct f_status {
	uint32_t host;
	uint32_t n, r, m;
	uint32_t count;
	struct f_status_rep *reps; /* malloc'd on decode: frame_release */
};

struct l_hello { uint32_t version; int32_t pid; uint32_t flags; };
#define HELLO_F_RESTORED 1 /* a restored process reconnecting */
/* L_CKPT_DONE header flags: the engine of a live copy (for the event log) */
#define CKPT_DONE_F_PRECOPY 1 /* pre-copy, userfaultfd write-protect */
#define CKPT_DONE_F_FORK 2    /* fork (no userfaultfd write-protect here) */
/* ... and of a pre-copy spread over receives (status 0, no cut yet): begun,
 * the process goes on (PENDING); its first pass is done, take the cut at
 * the next receive (READY: sent later, on its own). The cut's L_CKPT then
 * comes without a socket; the last L_CKPT_DONE is the usual one. */
#define CKPT_DONE_F_PENDING 4
#define CKPT_DONE_F_READY 8
/* ... and the answer to an EARLY L_CKPT by a process that takes no
 * prepared stop (status 0): give me the stream now; it waits in its
 * receive for the L_CKPT that brings it. */
#define CKPT_DONE_F_WANT_STREAM 16
/* L_CKPT header flags. EARLY: a copy's first L_CKPT, before its image
 * connection is made (docs/protocol.md): the process begins a prepared
 * stop and answers PENDING, or answers WANT_STREAM. CUT: the cut of a copy
 * begun at an earlier receive; the stream comes with it unless the process
 * holds it already. DROP: that copy failed before its cut; nothing to
 * answer. */
#define CKPT_F_EARLY 1
#define CKPT_F_CUT 2
#define CKPT_F_DROP 4
struct l_welcome { uint32_t n, group, r; uint16_t rep; uint32_t flags; };
struct l_send { uint32_t dst; int32_t tag; uint64_t seq; uint64_t size; uint64_t site; };
struct l_recv { int32_t src; int32_t tag; uint64_t bufsize; };
struct l_deliver { uint32_t src; int32_t tag; uint64_t seq; uint64_t size; };
struct l_error { int32_t code; };

/* A decoded frame. */
struct frame {
	struct frame_hdr h;
	union {
		struct f_challenge challenge;
		struct f_auth auth;
		struct f_auth_ok auth_ok;
		struct f_data data;
		struct f_decision decision;
		struct f_decision_ack decision_ack;
		struct f_heartbeat heartbeat;
		struct f_suspect suspect;
		struct f_member member;
		struct f_dlog_req dlog_req;
		struct f_dlog_end dlog_end;
		struct f_data_ack data_ack;
		struct f_event event;
		struct f_inject inject;
		struct f_status status;
		struct f_migrate migrate;
		struct f_proc_state proc_state;
		struct f_cut_chan cut_chan;
		struct f_state_end state_end;
		struct f_map map;
		struct f_member_ack member_ack;
		struct f_image_hello image_hello;
		struct f_host_add host_add; /* HOST_ADD and HOST_UP */
		struct f_direct_hello direct_hello;
		struct l_direct_req { uint32_t dst; } direct_req;
		struct l_direct direct;
		struct l_ckpt { uint8_t mode; } ckpt;
		struct l_ckpt_done { int32_t status; } ckpt_done;
		struct f_job_start job_start;
		struct f_job_ready job_ready;
		struct f_proc_exit proc_exit;
		struct f_output output;
		struct f_stdin in;
		struct f_job_kill job_kill;
		struct f_stats stats;
		struct l_hello hello;
		struct l_welcome welcome;
		struct l_send send;
		struct l_recv recv;
		struct l_deliver deliver;
		struct l_trunc { uint32_t src; int32_t tag; uint64_t size; } trunc;
		struct l_error error;
	} u;
};

enum frame_err {
	FE_OK = 0,
	FE_SHORT = -1,    /* need more bytes (header decode only) */
	FE_MAGIC = -2,
	FE_VERSION = -3,
	FE_TYPE = -4,
	FE_LEN = -5,      /* body length out of bounds for its type */
	FE_FIELD = -6,    /* a field out of range */
	FE_TRAIL = -7,    /* body has bytes past its fields */
	FE_NOMEM = -8,
};

const char *frame_strerror(int err);
const char *frame_type_name(int type);

/* Header: decode the first 16 bytes; validates magic, version, type and the
 * body length bound for the type. */
int frame_decode_hdr(const uint8_t *p, size_t n, struct frame_hdr *h);
/* Body: decode h->len bytes into f (h copied in). JOB_START allocates its
 * string arrays: release them with frame_release(). OUTPUT/STDIN point into
 * body, which must outlive f. */
int frame_decode_body(const struct frame_hdr *h, const uint8_t *body, struct frame *f);
void frame_release(struct frame *f);

/* Trailing payload bytes that follow the body of f (DATA chunk, L_SEND and
 * L_DELIVER payloads), 0 for other frames. */
uint64_t frame_payload_len(const struct frame *f);

/* Encode f (header + body, not the trailing payload). Returns the number of
 * bytes written to out (cap bytes), or a negative FE_* error. With out==NULL
 * returns the size needed. */
long frame_encode(const struct frame *f, uint8_t *out, size_t cap);
/* Encode into a fresh malloc'd buffer. */
uint8_t *frame_encode_alloc(const struct frame *f, size_t *len);

#endif
