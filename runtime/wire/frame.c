/* Frame codec. Each frame type's body layout is written once, as a function
 * over a cursor that either reads or writes (struct cur): the encoder and
 * the decoder are the same code, so they cannot disagree. Decoding never
 * trusts a length: every read is bounds-checked and every count capped. */
#include "wire/frame.h"

#include <stdlib.h>
#include <string.h>

struct cur {
	uint8_t *p;        /* write: output (NULL = count only); read: input */
	size_t len, cap;   /* bytes done / available */
	bool rd;
	int err;
};

static void io_bytes(struct cur *c, void *v, size_t n)
{
	if (c->err)
		return;
	if (c->len + n > c->cap || c->len + n < c->len) {
		c->err = FE_LEN;
		return;
	}
	if (c->rd)
		memcpy(v, c->p + c->len, n);
	else if (c->p)
		memcpy(c->p + c->len, v, n);
	c->len += n;
}

/* Little-endian integers (x86-64 is little-endian; the byte order is still
 * spelled out so the format is defined by the code, not by the host). */
static void io_uint(struct cur *c, void *v, size_t n)
{
	uint8_t b[8];
	uint64_t x = 0;
	size_t i;

	if (!c->rd) {
		memcpy(&x, v, n);
		for (i = 0; i < n; i++)
			b[i] = (uint8_t)(x >> (8 * i));
	}
	io_bytes(c, b, n);
	if (c->rd && !c->err) {
		for (i = 0; i < n; i++)
			x |= (uint64_t)b[i] << (8 * i);
		memcpy(v, &x, n);
	}
}

#define io_u8(c, v) io_uint(c, v, 1)
#define io_u16(c, v) io_uint(c, v, 2)
#define io_u32(c, v) io_uint(c, v, 4)
#define io_u64(c, v) io_uint(c, v, 8)

static void io_str(struct cur *c, char **s)
{
	uint32_t n = 0;

	if (!c->rd)
		n = (uint32_t)strlen(*s);
	io_u32(c, &n);
	if (c->err)
		return;
	if (n > FRAME_STR_MAX) {
		c->err = FE_FIELD;
		return;
	}
	if (c->rd) {
		*s = malloc(n + 1);
		if (!*s) {
			c->err = FE_NOMEM;
			return;
		}
		io_bytes(c, *s, n);
		(*s)[n] = 0;
		if (!c->err && memchr(*s, 0, n))
			c->err = FE_FIELD; /* embedded NUL: argv/env would be cut */
	} else {
		io_bytes(c, *s, n);
	}
}

static void io_strv(struct cur *c, uint32_t *count, char ***v, uint32_t max)
{
	uint32_t i;

	io_u32(c, count);
	if (c->err)
		return;
	if (*count > max) {
		c->err = FE_FIELD;
		return;
	}
	if (c->rd) {
		*v = calloc(*count + 1, sizeof(char *));
		if (!*v) {
			c->err = FE_NOMEM;
			return;
		}
	}
	for (i = 0; i < *count && !c->err; i++)
		io_str(c, &(*v)[i]);
}

/* A byte run whose length was read just before; points into the body. */
static void io_view(struct cur *c, const uint8_t **bytes, uint32_t n)
{
	if (c->err)
		return;
	if (c->len + n > c->cap) {
		c->err = FE_LEN;
		return;
	}
	if (c->rd)
		*bytes = c->p + c->len;
	else if (c->p)
		memcpy(c->p + c->len, *bytes, n);
	c->len += n;
}

static void layout_auth(struct cur *c, struct f_auth *a)
{
	io_u8(c, &a->role);
	io_u32(c, &a->host);
	io_u64(c, &a->job);
	io_bytes(c, a->nonce, sizeof(a->nonce));
	io_bytes(c, a->mac, sizeof(a->mac));
	if (c->rd && !c->err && a->role != ROLE_PEER && a->role != ROLE_CONTROL &&
	    a->role != ROLE_IMAGE && a->role != ROLE_DIRECT)
		c->err = FE_FIELD;
}

static void layout_data(struct cur *c, struct f_data *d)
{
	io_u32(c, &d->src);
	io_u32(c, &d->dst);
	io_u16(c, &d->src_rep);
	io_u16(c, &d->dst_rep);
	io_u32(c, &d->src_inc);
	io_u32(c, &d->epoch);
	io_u64(c, &d->seq);
	io_u32(c, &d->tag);
	io_u64(c, &d->total);
	io_u64(c, &d->off);
	io_u32(c, &d->chunk);
	io_u64(c, &d->site);
	if (c->rd && !c->err &&
	    (d->total > FRAME_MSG_MAX || d->chunk > FRAME_CHUNK_MAX ||
	     d->off > d->total || d->chunk > d->total - d->off ||
	     (d->chunk == 0 && d->total != 0) || d->seq == 0 || d->tag < 0))
		c->err = FE_FIELD;
}

static void layout_decision(struct cur *c, struct f_decision *d)
{
	io_u32(c, &d->group);
	io_u32(c, &d->term);
	io_u64(c, &d->index);
	io_u32(c, &d->src);
	io_u64(c, &d->seq);
	io_u16(c, &d->from_rep);
	if (c->rd && !c->err && (d->index == 0 || d->seq == 0))
		c->err = FE_FIELD;
}

static void layout_job_start(struct cur *c, struct f_job_start *j)
{
	io_u64(c, &j->job);
	io_u32(c, &j->n);
	io_u32(c, &j->r);
	io_u32(c, &j->m);
	io_u32(c, &j->host);
	io_u8(c, &j->mode);
	io_u32(c, &j->flags);
	io_u32(c, &j->hb_period_ms);
	io_u32(c, &j->hb_timeout_ms);
	io_u32(c, &j->lag_floor_ms);
	io_strv(c, &j->n_hosts, &j->hosts, FRAME_HOSTS_MAX);
	io_strv(c, &j->argc, &j->argv, FRAME_LIST_MAX);
	io_strv(c, &j->envc, &j->envp, FRAME_LIST_MAX);
	io_str(c, &j->jobdir);
	if (!c->rd && !j->keepdir) {
		char *none = "";

		io_str(c, &none);
	} else {
		io_str(c, &j->keepdir);
	}
	if (c->rd && !c->err &&
	    (j->n == 0 || j->n > (1u << 20) || j->r == 0 || j->r > 16 ||
	     j->m == 0 || j->m != j->n_hosts || j->host >= j->m ||
	     j->mode > CMP_VOTE || j->argc == 0))
		c->err = FE_FIELD;
}

static void layout_output(struct cur *c, struct f_output *o)
{
	io_u32(c, &o->group);
	io_u16(c, &o->rep);
	io_u8(c, &o->stream);
	io_u64(c, &o->off);
	io_u32(c, &o->len);
	if (c->rd && !c->err &&
	    (o->len > FRAME_OUTPUT_MAX || (o->stream != OUT_STDOUT && o->stream != OUT_STDERR)))
		c->err = FE_FIELD;
	io_view(c, &o->bytes, o->len);
}

static void layout_stdin(struct cur *c, struct f_stdin *s)
{
	io_u8(c, &s->eof);
	io_u32(c, &s->len);
	if (c->rd && !c->err && s->len > FRAME_OUTPUT_MAX)
		c->err = FE_FIELD;
	io_view(c, &s->bytes, s->len);
}

static void layout_stats(struct cur *c, struct f_stats *s)
{
	io_u32(c, &s->host);
	io_u64(c, &s->delivered);
	io_u64(c, &s->duplicates);
	io_u64(c, &s->mismatches);
	io_u64(c, &s->decisions);
	io_u64(c, &s->forwarded);
	io_u64(c, &s->bytes_queued);
}

static void layout_status(struct cur *c, struct f_status *s)
{
	uint32_t i;

	io_u32(c, &s->host);
	io_u32(c, &s->n);
	io_u32(c, &s->r);
	io_u32(c, &s->m);
	io_u32(c, &s->count);
	if (c->err)
		return;
	if (s->count > STATUS_MAX) {
		c->err = FE_FIELD;
		return;
	}
	if (c->rd) {
		s->reps = calloc(s->count + 1, sizeof(*s->reps));
		if (!s->reps) {
			c->err = FE_NOMEM;
			return;
		}
	}
	for (i = 0; i < s->count && !c->err; i++) {
		struct f_status_rep *e = &s->reps[i];

		io_u32(c, &e->group);
		io_u16(c, &e->rep);
		io_u32(c, &e->host);
		io_u8(c, &e->state);
		io_u8(c, &e->local);
		io_u32(c, &e->inc);
		io_u32(c, &e->pid);
	}
}

static void layout_cut_chan(struct cur *c, struct f_cut_chan *k)
{
	uint32_t i;

	io_u32(c, &k->group);
	io_u16(c, &k->rep);
	io_u32(c, &k->src);
	io_u64(c, &k->consumed_low);
	io_u32(c, &k->count);
	if (c->err)
		return;
	if (k->count > CUT_MAX_SEQS) {
		c->err = FE_FIELD;
		return;
	}
	if (c->rd) {
		k->seqs = calloc(k->count + 1, sizeof(uint64_t));
		if (!k->seqs) {
			c->err = FE_NOMEM;
			return;
		}
	}
	for (i = 0; i < k->count && !c->err; i++)
		io_u64(c, &k->seqs[i]);
}

static void layout_mig(struct cur *c, struct frame *f)
{
	switch (f->h.type) {
	case F_MIGRATE:
		io_u32(c, &f->u.migrate.group);
		io_u16(c, &f->u.migrate.rep);
		io_u16(c, &f->u.migrate.src_rep);
		io_u32(c, &f->u.migrate.target);
		io_u8(c, &f->u.migrate.mode);
		io_u32(c, &f->u.migrate.inc);
		if (c->rd && !c->err &&
		    f->u.migrate.mode != MIG_MOVE && f->u.migrate.mode != MIG_COPY)
			c->err = FE_FIELD;
		break;
	case F_PROC_STATE:
		io_u32(c, &f->u.proc_state.group);
		io_u16(c, &f->u.proc_state.rep);
		io_u32(c, &f->u.proc_state.inc);
		io_u8(c, &f->u.proc_state.mode);
		io_u64(c, &f->u.proc_state.any_next);
		io_u64(c, &f->u.proc_state.out_off);
		io_u64(c, &f->u.proc_state.err_off);
		break;
	case F_CUT_CHAN:
		layout_cut_chan(c, &f->u.cut_chan);
		break;
	case F_STATE_END:
		io_u32(c, &f->u.state_end.group);
		io_u16(c, &f->u.state_end.rep);
		io_u32(c, &f->u.state_end.inc);
		break;
	case F_MAP:
		io_u32(c, &f->u.map.group);
		io_u16(c, &f->u.map.rep);
		io_u32(c, &f->u.map.host);
		io_u32(c, &f->u.map.inc);
		io_u32(c, &f->u.map.epoch);
		io_u8(c, &f->u.map.reactive);
		break;
	case F_MEMBER_ACK:
		io_u32(c, &f->u.member_ack.group);
		io_u16(c, &f->u.member_ack.rep);
		io_u32(c, &f->u.member_ack.inc);
		io_u32(c, &f->u.member_ack.from_host);
		break;
	case F_IMAGE_HELLO:
		io_u32(c, &f->u.image_hello.group);
		io_u16(c, &f->u.image_hello.rep);
		io_u32(c, &f->u.image_hello.inc);
		io_u8(c, &f->u.image_hello.mode);
		io_u64(c, &f->u.image_hello.out_off);
		io_u64(c, &f->u.image_hello.err_off);
		break;
	case F_IMAGE_GO:
	case F_MAP_SYNC_REQ:
		break;
	case F_HOST_ADD:
	case F_HOST_UP:
		io_u32(c, &f->u.host_add.host);
		io_str(c, &f->u.host_add.addr);
		break;
	case F_DIRECT_HELLO:
		io_u32(c, &f->u.direct_hello.src);
		io_u32(c, &f->u.direct_hello.dst);
		io_u32(c, &f->u.direct_hello.src_inc);
		io_u32(c, &f->u.direct_hello.dst_inc);
		break;
	case L_DIRECT_REQ:
		io_u32(c, &f->u.direct_req.dst);
		break;
	case L_DIRECT:
		io_u32(c, &f->u.direct.peer);
		io_u8(c, &f->u.direct.what);
		if (c->rd && !c->err &&
		    (f->u.direct.what < DIRECT_OUT || f->u.direct.what > DIRECT_LEAVE))
			c->err = FE_FIELD;
		break;
	case L_CKPT:
		io_u8(c, &f->u.ckpt.mode);
		break;
	case L_CKPT_DONE:
		io_u32(c, &f->u.ckpt_done.status);
		break;
	default:
		c->err = FE_TYPE;
	}
}

static void layout_body(struct cur *c, struct frame *f)
{
	switch (f->h.type) {
	case F_CHALLENGE:
		io_bytes(c, f->u.challenge.nonce, FRAME_NONCE_LEN);
		break;
	case F_AUTH:
		layout_auth(c, &f->u.auth);
		break;
	case F_AUTH_OK:
		io_bytes(c, f->u.auth_ok.mac, FRAME_MAC_LEN);
		break;
	case F_DATA:
		layout_data(c, &f->u.data);
		break;
	case F_DECISION:
		layout_decision(c, &f->u.decision);
		break;
	case F_DECISION_ACK:
		io_u32(c, &f->u.decision_ack.group);
		io_u64(c, &f->u.decision_ack.index);
		io_u16(c, &f->u.decision_ack.from_rep);
		break;
	case F_HEARTBEAT:
		io_u32(c, &f->u.heartbeat.host);
		io_u64(c, &f->u.heartbeat.count);
		break;
	case F_SUSPECT:
		io_u32(c, &f->u.suspect.group);
		io_u16(c, &f->u.suspect.rep);
		io_u32(c, &f->u.suspect.inc);
		io_u8(c, &f->u.suspect.reason);
		io_u32(c, &f->u.suspect.by_host);
		if (c->rd && !c->err && (f->u.suspect.reason == 0 || f->u.suspect.reason >= SUS_MAX))
			c->err = FE_FIELD;
		break;
	case F_MEMBER:
		io_u32(c, &f->u.member.group);
		io_u16(c, &f->u.member.rep);
		io_u8(c, &f->u.member.state);
		io_u32(c, &f->u.member.epoch);
		io_u32(c, &f->u.member.inc);
		io_u32(c, &f->u.member.host);
		io_u8(c, &f->u.member.reason);
		io_u32(c, &f->u.member.fwd_host);
		if (c->rd && !c->err && f->u.member.state != MEMBER_LIVE &&
		    f->u.member.state != MEMBER_DEAD && f->u.member.state != MEMBER_JOINING)
			c->err = FE_FIELD;
		break;
	case F_DLOG_REQ:
		io_u32(c, &f->u.dlog_req.group);
		io_u64(c, &f->u.dlog_req.from);
		io_u16(c, &f->u.dlog_req.from_rep);
		break;
	case F_DLOG_END:
		io_u32(c, &f->u.dlog_end.group);
		io_u16(c, &f->u.dlog_end.from_rep);
		io_u64(c, &f->u.dlog_end.next);
		io_u64(c, &f->u.dlog_end.have_upto);
		break;
	case F_DATA_ACK:
		io_u32(c, &f->u.data_ack.src);
		io_u32(c, &f->u.data_ack.dst);
		io_u16(c, &f->u.data_ack.src_rep);
		io_u16(c, &f->u.data_ack.dst_rep);
		io_u32(c, &f->u.data_ack.dst_inc);
		io_u64(c, &f->u.data_ack.upto);
		break;
	case F_EVENT:
		io_u64(c, &f->u.event.mono_ns);
		io_u32(c, &f->u.event.host);
		io_u32(c, &f->u.event.len);
		if (c->rd && !c->err && f->u.event.len > EVENT_TEXT_MAX)
			c->err = FE_FIELD;
		io_view(c, &f->u.event.json, f->u.event.len);
		break;
	case F_INJECT:
		io_u8(c, &f->u.inject.kind);
		io_u32(c, &f->u.inject.group);
		io_u16(c, &f->u.inject.rep);
		io_u32(c, &f->u.inject.arg);
		if (c->rd && !c->err && (f->u.inject.kind == 0 || f->u.inject.kind >= INJ_MAX))
			c->err = FE_FIELD;
		break;
	case F_STATUS:
		layout_status(c, &f->u.status);
		break;
	case F_JOB_START:
		layout_job_start(c, &f->u.job_start);
		break;
	case F_JOB_READY:
		io_u32(c, &f->u.job_ready.host);
		io_u32(c, &f->u.job_ready.nprocs);
		break;
	case F_PROC_EXIT:
		io_u32(c, &f->u.proc_exit.group);
		io_u16(c, &f->u.proc_exit.rep);
		io_u32(c, &f->u.proc_exit.host);
		io_u32(c, &f->u.proc_exit.status);
		break;
	case F_OUTPUT:
		layout_output(c, &f->u.output);
		break;
	case F_STDIN:
		layout_stdin(c, &f->u.in);
		break;
	case F_JOB_KILL:
		io_u32(c, &f->u.job_kill.signo);
		break;
	case F_JOB_END:
	case F_JOB_GO:
	case F_STATUS_REQ:
	case F_STATS_REQ:
	case L_FINALIZE:
	case L_BYE:
		break;
	case F_STATS:
		layout_stats(c, &f->u.stats);
		break;
	case L_HELLO:
		io_u32(c, &f->u.hello.version);
		io_u32(c, &f->u.hello.pid);
		io_u32(c, &f->u.hello.flags);
		break;
	case L_WELCOME:
		io_u32(c, &f->u.welcome.n);
		io_u32(c, &f->u.welcome.group);
		io_u32(c, &f->u.welcome.r);
		io_u16(c, &f->u.welcome.rep);
		io_u32(c, &f->u.welcome.flags);
		break;
	case L_SEND:
		io_u32(c, &f->u.send.dst);
		io_u32(c, &f->u.send.tag);
		io_u64(c, &f->u.send.seq);
		io_u64(c, &f->u.send.size);
		io_u64(c, &f->u.send.site);
		if (c->rd && !c->err && (f->u.send.size > FRAME_MSG_MAX || f->u.send.tag < 0))
			c->err = FE_FIELD;
		break;
	case L_RECV:
		io_u32(c, &f->u.recv.src);
		io_u32(c, &f->u.recv.tag);
		io_u64(c, &f->u.recv.bufsize);
		if (c->rd && !c->err && (f->u.recv.src < -1 || f->u.recv.tag < -1))
			c->err = FE_FIELD;
		break;
	case L_DELIVER:
		io_u32(c, &f->u.deliver.src);
		io_u32(c, &f->u.deliver.tag);
		io_u64(c, &f->u.deliver.seq);
		io_u64(c, &f->u.deliver.size);
		if (c->rd && !c->err && f->u.deliver.size > FRAME_MSG_MAX)
			c->err = FE_FIELD;
		break;
	case L_TRUNC:
		io_u32(c, &f->u.trunc.src);
		io_u32(c, &f->u.trunc.tag);
		io_u64(c, &f->u.trunc.size);
		break;
	case L_ERROR:
		io_u32(c, &f->u.error.code);
		break;
	default:
		layout_mig(c, f);
	}
}

static const char *const type_names[FRAME_TYPE_MAX] = {
	[F_CHALLENGE] = "CHALLENGE", [F_AUTH] = "AUTH", [F_AUTH_OK] = "AUTH_OK",
	[F_DATA] = "DATA", [F_DECISION] = "DECISION", [F_DECISION_ACK] = "DECISION_ACK",
	[F_HEARTBEAT] = "HEARTBEAT", [F_SUSPECT] = "SUSPECT", [F_MEMBER] = "MEMBER",
	[F_DLOG_REQ] = "DLOG_REQ", [F_DLOG_END] = "DLOG_END", [F_DATA_ACK] = "DATA_ACK",
	[F_EVENT] = "EVENT",
	[F_INJECT] = "INJECT", [F_STATUS_REQ] = "STATUS_REQ", [F_STATUS] = "STATUS", [F_JOB_START] = "JOB_START", [F_JOB_READY] = "JOB_READY",
	[F_PROC_EXIT] = "PROC_EXIT", [F_OUTPUT] = "OUTPUT", [F_STDIN] = "STDIN",
	[F_JOB_KILL] = "JOB_KILL", [F_JOB_END] = "JOB_END", [F_STATS_REQ] = "STATS_REQ",
	[F_STATS] = "STATS", [F_JOB_GO] = "JOB_GO", [L_HELLO] = "L_HELLO", [L_WELCOME] = "L_WELCOME",
	[L_SEND] = "L_SEND", [L_RECV] = "L_RECV", [L_DELIVER] = "L_DELIVER",
	[L_TRUNC] = "L_TRUNC", [L_FINALIZE] = "L_FINALIZE", [L_BYE] = "L_BYE",
	[L_ERROR] = "L_ERROR", [F_MIGRATE] = "MIGRATE", [F_PROC_STATE] = "PROC_STATE",
	[F_CUT_CHAN] = "CUT_CHAN", [F_STATE_END] = "STATE_END", [F_MAP] = "MAP",
	[F_MEMBER_ACK] = "MEMBER_ACK", [F_HOST_ADD] = "HOST_ADD", [F_HOST_UP] = "HOST_UP",
	[F_MAP_SYNC_REQ] = "MAP_SYNC_REQ", [F_IMAGE_HELLO] = "IMAGE_HELLO", [F_IMAGE_GO] = "IMAGE_GO",
	[L_CKPT] = "L_CKPT", [L_CKPT_DONE] = "L_CKPT_DONE", [F_DIRECT_HELLO] = "DIRECT_HELLO",
	[L_DIRECT_REQ] = "L_DIRECT_REQ", [L_DIRECT] = "L_DIRECT",
};

const char *frame_type_name(int type)
{
	if (type <= 0 || type >= FRAME_TYPE_MAX || !type_names[type])
		return "UNKNOWN";
	return type_names[type];
}

const char *frame_strerror(int err)
{
	switch (err) {
	case FE_OK: return "ok";
	case FE_SHORT: return "incomplete frame";
	case FE_MAGIC: return "bad magic (not a msg frame)";
	case FE_VERSION: return "unsupported frame version";
	case FE_TYPE: return "unknown frame type";
	case FE_LEN: return "frame length out of bounds";
	case FE_FIELD: return "frame field out of range";
	case FE_TRAIL: return "trailing bytes after frame fields";
	case FE_NOMEM: return "out of memory decoding frame";
	}
	return "unknown frame error";
}

static uint32_t body_max(uint8_t type)
{
	switch (type) {
	case F_JOB_START:
	case F_STATUS: return FRAME_BODY_MAX;
	case F_CUT_CHAN: return 64 + CUT_MAX_SEQS * 8;
	case F_EVENT: return EVENT_TEXT_MAX + 64;
	case F_OUTPUT:
	case F_STDIN: return FRAME_OUTPUT_MAX + 64;
	default: return 256;
	}
}

int frame_decode_hdr(const uint8_t *p, size_t n, struct frame_hdr *h)
{
	uint32_t magic;

	if (n < FRAME_HDR_LEN)
		return FE_SHORT;
	magic = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	if (magic != FRAME_MAGIC)
		return FE_MAGIC;
	if (p[4] != FRAME_VERSION)
		return FE_VERSION;
	h->type = p[5];
	h->flags = p[6];
	h->len = (uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24;
	if (h->type == 0 || h->type >= FRAME_TYPE_MAX || !type_names[h->type])
		return FE_TYPE;
	if (h->len > body_max(h->type))
		return FE_LEN;
	return FE_OK;
}

int frame_decode_body(const struct frame_hdr *h, const uint8_t *body, struct frame *f)
{
	struct cur c = { .p = (uint8_t *)body, .cap = h->len, .rd = true };

	memset(f, 0, sizeof(*f));
	f->h = *h;
	layout_body(&c, f);
	if (!c.err && c.len != c.cap)
		c.err = FE_TRAIL;
	if (c.err)
		frame_release(f);
	return c.err;
}

static void free_strv(char **v, uint32_t n)
{
	uint32_t i;

	if (!v)
		return;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void frame_release(struct frame *f)
{
	if (f->h.type == F_STATUS) {
		free(f->u.status.reps);
		f->u.status.reps = NULL;
	}
	if (f->h.type == F_HOST_ADD || f->h.type == F_HOST_UP) {
		free(f->u.host_add.addr);
		f->u.host_add.addr = NULL;
	}
	if (f->h.type == F_CUT_CHAN) {
		free(f->u.cut_chan.seqs);
		f->u.cut_chan.seqs = NULL;
	}
	if (f->h.type == F_JOB_START) {
		struct f_job_start *j = &f->u.job_start;

		/* counts may be partial after a failed decode: arrays are
		 * calloc'd so unset entries are NULL */
		free_strv(j->hosts, j->n_hosts);
		free_strv(j->argv, j->argc);
		free_strv(j->envp, j->envc);
		free(j->jobdir);
		free(j->keepdir);
		j->hosts = j->argv = j->envp = NULL;
		j->jobdir = j->keepdir = NULL;
	}
}

uint64_t frame_payload_len(const struct frame *f)
{
	switch (f->h.type) {
	case F_DATA: return f->u.data.chunk;
	case L_SEND: return f->u.send.size;
	case L_DELIVER: return f->u.deliver.size;
	default: return 0;
	}
}

long frame_encode(const struct frame *f, uint8_t *out, size_t cap)
{
	struct frame tmp = *f;
	struct cur c = { .p = out ? out + FRAME_HDR_LEN : NULL,
			 .cap = out ? (cap >= FRAME_HDR_LEN ? cap - FRAME_HDR_LEN : 0) : SIZE_MAX };
	uint32_t len;

	if (out && cap < FRAME_HDR_LEN)
		return FE_LEN;
	layout_body(&c, &tmp);
	if (c.err)
		return c.err;
	if (c.len > body_max(f->h.type))
		return FE_LEN;
	if (out) {
		len = (uint32_t)c.len;
		out[0] = FRAME_MAGIC & 0xff;
		out[1] = (FRAME_MAGIC >> 8) & 0xff;
		out[2] = (FRAME_MAGIC >> 16) & 0xff;
		out[3] = (FRAME_MAGIC >> 24) & 0xff;
		out[4] = FRAME_VERSION;
		out[5] = f->h.type;
		out[6] = f->h.flags;
		out[7] = 0;
		out[8] = len & 0xff;
		out[9] = (len >> 8) & 0xff;
		out[10] = (len >> 16) & 0xff;
		out[11] = (len >> 24) & 0xff;
		memset(out + 12, 0, 4);
	}
	return (long)(FRAME_HDR_LEN + c.len);
}

uint8_t *frame_encode_alloc(const struct frame *f, size_t *len)
{
	long need = frame_encode(f, NULL, 0);
	uint8_t *buf;

	if (need < 0)
		return NULL;
	buf = malloc((size_t)need);
	if (!buf)
		return NULL;
	if (frame_encode(f, buf, (size_t)need) != need) {
		free(buf);
		return NULL;
	}
	*len = (size_t)need;
	return buf;
}
