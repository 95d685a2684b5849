/* Internal state of the protocol core, shared by its files:
 * core.c (events, actions), chan.c (sequence, dedupe, comparison),
 * match.c (receive matching and delivery), anysrc.c (ANYSRC decisions). */
#ifndef MSG_CORE_IMPL_H
#define MSG_CORE_IMPL_H

#include "core/core.h"

#define MAX_VARIANTS 4

/* One distinct content seen for a (channel, seq): the copies that agree. */
struct variant {
	uint8_t digest[FRAME_DIGEST_LEN];
	int32_t tag;
	uint64_t size;
	struct mbuf *m;       /* payload until consumed */
	uint32_t seen;        /* sender replicas whose copy had this content */
};

/* One message of one inbound channel, until every live sender replica's
 * copy has been compared with it and it was consumed. */
struct entry {
	uint64_t seq;
	uint8_t nvar;
	int8_t chosen;        /* variant delivered, -1 until available */
	bool consumed;
	uint64_t arrival;     /* order it became available (ANYSRC candidates) */
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
};

struct core {
	struct core_cfg cfg;
	uint8_t *alive;       /* [n*r] */
	uint32_t *host;       /* [n*r] */
	uint32_t *inc;        /* [n*r] incarnation */
	uint32_t *epoch;      /* [n] membership epoch of each group */
	struct lproc *procs;  /* [n] */
	uint64_t arrivals;
	struct core_stats stats;
	struct action *acts;
	size_t nacts, capacts;
};

/* core.c */
struct action *core_emit(struct core *c, enum action_kind kind);
void core_event(struct core *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint32_t core_live_mask(const struct core *c, uint32_t g);

/* chan.c */
struct chan *chan_get(struct core *c, struct lproc *p, uint32_t src);
struct entry *chan_entry(struct chan *ch, uint64_t seq);
int chan_arrive(struct core *c, struct lproc *p, uint32_t dst, const struct f_data *d,
		struct mbuf *m);
void chan_consume(struct core *c, struct lproc *p, struct chan *ch, struct entry *e);
void chan_free(struct chan *ch);

/* match.c */
void match_try(struct core *c, uint32_t g);
void match_deliver(struct core *c, uint32_t g, struct chan *ch, struct entry *e);
struct entry *match_in_chan(struct chan *ch, int32_t tag);
struct entry *match_first_arrival(struct lproc *p, int32_t tag, struct chan **out);

/* anysrc.c */
bool anysrc_enabled(const struct core *c);
void anysrc_try(struct core *c, uint32_t g);
int anysrc_on_decision(struct core *c, uint32_t from, const struct f_decision *d);
int anysrc_on_ack(struct core *c, const struct f_decision_ack *a);
void dlog_free(struct dlog *l);

#endif
