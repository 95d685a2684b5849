/* msgd: one daemon per host. It keeps the inter-host connections, launches
 * the local replicas of each job, runs one protocol core per job and carries
 * out the core's actions. Files: main.c (arguments, listening, signals),
 * server.c (accepting and authenticating connections), control.c (frames
 * from msgrun/msgctl), peer.c (connections to other daemons), local.c
 * (frames from local processes), spawn.c (launching and reaping them),
 * job.c (job lifecycle, running core actions), keep.c (--keep-fenced). */
#ifndef MSG_DAEMON_H
#define MSG_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/core.h"
#include "daemon/conn.h"
#include "daemon/loop.h"
#include "wire/auth.h"

#define MSG_APP_FD 3 /* the process's connection to msgd, same in every replica */
#define DIGEST_AS_IT_LANDS (64u << 10) /* larger payloads are hashed while they arrive */

struct job;

struct pipe_reader {
	struct op op;
	struct lp *lp;
	int fd;
	uint8_t stream;
	uint64_t off;
	uint8_t buf[16384];
};

/* A local replica of one group. */
struct lp {
	struct job *job;
	uint32_t g, rep;
	pid_t pid;
	struct conn *conn;
	struct pipe_reader out, err;
	int stdin_fd;
	int open_pipes;
	bool reaped, reported;
	int status;
	bool fenced;          /* killed on the core's order */
	uint64_t sends;       /* messages it sent here (L_SEND), from its start */
	uint64_t corrupt_at;  /* injection: flip a bit in message number corrupt_at
			       * (or the first non-empty one after it); 0: none */
	bool stalled;         /* injection: it stopped making progress */
	bool migrating;       /* captured for a move: its end is no exit of the rank */
	uint8_t cap_mode;     /* the capture it was asked for (L_CKPT): mode, */
	uint16_t cap_rep;     /* ...and the replica slot it fills */
	/* a copy begun EARLY (image.c): its image connection while it is
	 * being made (dialing), then held here (watched: a target that dies
	 * fails the copy) until the process takes it; wanted: the process is
	 * owed it, with these L_CKPT flags (0: its first stream, CKPT_F_CUT:
	 * its cut) */
	bool img_dialing, img_wanted;
	struct conn *img_conn;
	uint8_t img_flags;
	uint32_t img_gen;     /* which early copy the connection being made is for */
	bool superseded;      /* a newer incarnation of its group was restored here */
	struct lp *prev;      /* an older process of the group, still to reap */
	bool restored;        /* started from an image */
	bool spare;           /* ...by the job's spare msg-restore (spawn.c) */
	bool connected;       /* its libmsg said hello */
	bool restore_failed;  /* msg-restore ended before the process existed */
	bool exit_sent;       /* its F_PROC_EXIT went to the launcher */
	bool keep_pending;    /* --keep-fenced: its core is to be collected */
	char keep_cwd[256];   /* where the kernel writes that core */
	bool shm;             /* it was given the same-host segment */
	bool shm_poked;       /* ...and asked back onto msgd's path */
	bool direct_given;    /* it was passed a direct stream's end */
	bool direct_poked;    /* ...and asked to leave its streams (for good) */
};

struct job {
	struct job *next;
	uint64_t id;
	uint8_t key[AUTH_KEY_LEN];
	struct core_cfg cfg;
	struct core *core;
	struct f_job_start spec;  /* owns its strings */
	struct conn **peer_out;   /* [m] */
	struct conn *control;     /* the launcher */
	struct lp **lps;          /* [n]; NULL where no replica is local */
	uint32_t nlocal, ndone;
	bool launched, ending;
	bool killed;              /* the launcher ended it: start nothing new */
	int shm_state;            /* same-host rings: 0 undecided, 1 yes, -1 no */
	void *shm;                /* the segment (shmseg.c), or NULL */
	size_t shm_len;
	int shm_fd;
	struct spare *spare;      /* a msg-restore started ahead (spawn.c), or NULL */
};

/* How a local process is captured for a move or a copy (DESIGN §7). */
enum ckpt_engine {
	ENGINE_USER = 0, /* libmsg captures itself (L_CKPT) */
	ENGINE_KMOD = 1, /* msgd saves it through /dev/msgmig (msgmig.ko) */
};

struct daemon {
	uint8_t site_key[AUTH_KEY_LEN];
	enum ckpt_engine engine;  /* --ckpt-engine, resolved at startup */
	bool engine_auto;         /* --ckpt-engine=auto: user when a kmod save is refused */
	int listen_fd;
	bool once;                /* exit when the (only) job ends */
	uint64_t cut_until;       /* injection: peers cut off until (ns; ~0 forever) */
	bool cut_links;           /* --cut-links: a cut takes the host's links down */
	struct job *jobs;
	uint32_t njobs_seen;
};

extern struct daemon g_msgd;

/* job.c */
struct job *job_find(uint64_t id);
struct job *job_create(struct conn *control, struct frame *start, char *why, size_t whylen);
void job_launch(struct job *j);
void job_run_actions(struct job *j);
void job_proc_done(struct lp *lp);
void job_end(struct job *j, const char *why);
void job_kill(struct job *j, int signo);

uint64_t mono_ns(void);
void job_clock(struct job *j);   /* tell the core the time before an event */
void job_event(struct job *j, const char *json);

/* tcpcc.c: the congestion control of msgd's TCP connections (--tcp-congestion
 * LIST|system: the first of LIST the kernel takes; given = named by the
 * user, so that none taken is an error) */
int tcpcc_pick(const char *spec, bool given, char *why, size_t whylen);
void tcpcc_apply(int fd);

/* keep.c: a fence's kill (with --keep-fenced, by a core-dumping signal);
 * after the reap, the core moved out of the job directory */
void keep_fence(struct lp *lp);
void keep_collect(struct lp *lp);
bool daemon_cut(void);           /* peers are cut off (injected partition) */
/* peer.c: answer a daemon's challenge with the job key, as role (peer,
 * image stream, direct stream); cli_nonce gets our nonce for its reply. */
void peer_answer_challenge(struct conn *c, struct job *j, uint8_t role,
			   const uint8_t srv_nonce[FRAME_NONCE_LEN],
			   uint8_t cli_nonce[FRAME_NONCE_LEN]);
/* links.c (--cut-links): a real cut, every link but lo down, healing after
 * ms (0: for good); links_tick brings them up when due. */
int links_cut(uint32_t ms);
void links_tick(uint64_t now);

/* inject.c */
void inject_apply(struct job *j, struct conn *from, const struct f_inject *in, uint8_t flags);
void status_send(struct job *j, struct conn *to);
int ticker_start(void);
void priority_start(void);  /* priority.c: nice -10, a real-time watchdog */
void priority_tick(void);   /* the loop ticked */
unsigned priority_boosts(void);

/* server.c */
int server_start(int listen_fd);

/* control.c */
extern const struct conn_ops control_ops;

/* peer.c */
extern const struct conn_ops peer_in_ops;
struct conn *peer_out(struct job *j, uint32_t host);
struct conn *peer_dial(struct job *j, uint32_t host, const struct conn_ops *ops,
		       const char *name, void *user);

/* local.c */
extern const struct conn_ops local_ops;

/* shmseg.c: the same-host segment. fd_for: a descriptor of it for lp's
 * L_WELCOME, or -1 (the job does not use it); poke: call g back to msgd's
 * path; check: poke processes whose capture waits (after core actions). */
int shmseg_fd_for(struct job *j, struct lp *lp);
void shmseg_poke(struct job *j, uint32_t g);
void shmseg_check(struct job *j);
void shmseg_free(struct job *j);

/* direct.c: direct streams across hosts (docs/datapath.md §6). request:
 * lp's L_DIRECT_REQ; check: call back processes whose capture waits. */
extern const struct conn_ops direct_in_ops;
void direct_request(struct job *j, struct lp *lp, uint32_t dst);
void direct_check(struct job *j);

/* image.c */
extern const struct conn_ops image_ops;
int image_put_go(int fd, const struct frame *go);
void image_capture(struct job *j, const struct f_migrate *mg);
void image_trace(struct job *j, const char *step, uint32_t g);
void image_capture_cut(struct job *j, const struct f_migrate *mg);
/* An early copy's stream to its process (with L_CKPT flags), now or once
 * its connection is made; drop: none is owed any more (closed). */
void image_give_stream(struct lp *lp, uint8_t flags);
void image_drop_stream(struct lp *lp);
/* The capture of g ended (status 0 or an error): an event naming the engine. */
void image_captured_event(struct job *j, uint32_t g, uint32_t rep, uint8_t mode,
			  const char *engine, int status, const char *detail);
const char *image_copy_engine(uint32_t g, uint32_t rep, uint8_t flags);

/* spawn.c */
int spawn_restore(struct job *j, const struct f_image_hello *h, int img_fd);
int spawn_proc(struct job *j, uint32_t g, uint32_t rep);
int spawn_signals_start(void);
void spawn_kill_all(struct job *j, int signo);
void spawn_spare_tick(struct job *j); /* start the job's spare restorer if due */

#endif
