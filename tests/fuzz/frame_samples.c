#include "frame_samples.h"

#include <string.h>

static char *hosts[] = { "127.0.0.1:7420", "127.0.0.2:7421", "10.0.0.3:7422" };
static char *argv_[] = { "/bin/app", "--size", "42" };
static char *envp_[] = { "PATH=/usr/bin", "MSG_FD=3" };
static char jobdir[] = "/tmp/msg-job";
static char keepdir[] = "/tmp/msg-fenced";
static char newaddr[] = "127.0.0.9:7500";
static const unsigned char outbytes[] = "hello from rank 1\n";
static const unsigned char inbytes[] = "input line\n";
static const unsigned char evjson[] = "{\"ev\":\"fence\",\"group\":1}";
static uint64_t cut_seqs[3] = { 9, 11, 12 };
static struct f_status_rep reps[2] = {
	{ .group = 0, .rep = 1, .host = 1, .state = MEMBER_LIVE, .local = 1, .inc = 1, .pid = 42 },
	{ .group = 1, .rep = 0, .host = 2, .state = MEMBER_DEAD, .local = 0, .inc = 2, .pid = -1 },
};

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(seed + i * 7u);
}

size_t frame_samples(struct frame *out, size_t cap)
{
	struct frame v[64];
	size_t n = 0, i;

	memset(v, 0, sizeof(v));
#define ADD(t) (v[n].h.type = (t), &v[n++].u)
	fill(ADD(F_CHALLENGE)->challenge.nonce, FRAME_NONCE_LEN, 1);
	{
		struct f_auth *a = &ADD(F_AUTH)->auth;
		a->role = ROLE_PEER;
		a->host = 2;
		a->job = 0x0123456789abcdefULL;
		fill(a->nonce, FRAME_NONCE_LEN, 3);
		fill(a->mac, FRAME_MAC_LEN, 5);
	}
	fill(ADD(F_AUTH_OK)->auth_ok.mac, FRAME_MAC_LEN, 9);
	ADD(F_DATA)->data = (struct f_data){ .src = 1, .dst = 2, .src_rep = 1, .dst_rep = 2,
					     .src_inc = 7, .epoch = 3, .seq = 5, .tag = 11,
					     .total = 100, .off = 40, .chunk = 24,
					     .site = 0x401234 };
	ADD(F_DECISION)->decision = (struct f_decision){ .group = 3, .term = 2, .index = 9,
							 .src = 1, .seq = 4, .from_rep = 0 };
	ADD(F_DECISION_ACK)->decision_ack = (struct f_decision_ack){ .group = 3, .index = 9,
								     .from_rep = 2 };
	ADD(F_HEARTBEAT)->heartbeat = (struct f_heartbeat){ .host = 4, .count = 1000 };
	ADD(F_SUSPECT)->suspect = (struct f_suspect){ .group = 1, .rep = 2, .inc = 1,
						      .reason = SUS_LAG, .by_host = 3 };
	ADD(F_MEMBER)->member = (struct f_member){ .group = 1, .rep = 2, .state = MEMBER_DEAD,
						   .epoch = 4, .inc = 1, .host = 2,
						   .reason = SUS_EXIT };
	ADD(F_DLOG_REQ)->dlog_req = (struct f_dlog_req){ .group = 2, .from = 5, .from_rep = 1 };
	ADD(F_DLOG_END)->dlog_end = (struct f_dlog_end){ .group = 2, .from_rep = 1, .next = 6,
							 .have_upto = 9 };
	ADD(F_DATA_ACK)->data_ack = (struct f_data_ack){ .src = 1, .dst = 2, .src_rep = 2,
							 .dst_rep = 1, .dst_inc = 3, .upto = 17 };
	ADD(F_JOB_START)->job_start = (struct f_job_start){
		.job = 0xfeedULL, .n = 5, .r = 3, .m = 3, .host = 1, .mode = CMP_VOTE,
		.flags = JOB_F_OUTPUT_ALL, .hb_period_ms = 50, .hb_timeout_ms = 250,
		.lag_floor_ms = 400, .n_hosts = 3, .hosts = hosts, .argc = 3, .argv = argv_,
		.envc = 2, .envp = envp_, .jobdir = jobdir, .keepdir = keepdir };
	ADD(F_JOB_READY)->job_ready = (struct f_job_ready){ .host = 1, .nprocs = 3 };
	ADD(F_PROC_EXIT)->proc_exit = (struct f_proc_exit){ .group = 2, .rep = 1, .host = 0,
							    .status = 9 };
	ADD(F_OUTPUT)->output = (struct f_output){ .group = 1, .rep = 0, .stream = OUT_STDERR,
						   .off = 77, .len = sizeof(outbytes) - 1,
						   .bytes = outbytes };
	ADD(F_STDIN)->in = (struct f_stdin){ .eof = 1, .len = sizeof(inbytes) - 1, .bytes = inbytes };
	ADD(F_JOB_KILL)->job_kill.signo = 15;
	ADD(F_JOB_END);
	ADD(F_STATS_REQ);
	ADD(F_STATS)->stats = (struct f_stats){ .host = 2, .delivered = 10, .duplicates = 20,
						.mismatches = 1, .decisions = 3, .forwarded = 4,
						.bytes_queued = 5 };
	ADD(F_JOB_GO);
	ADD(F_EVENT)->event = (struct f_event){ .mono_ns = 123456789, .host = 1,
						.len = sizeof(evjson) - 1, .json = evjson };
	ADD(F_INJECT)->inject = (struct f_inject){ .kind = INJ_STALL, .group = 1, .rep = 0,
						   .arg = 500 };
	ADD(F_STATUS_REQ);
	ADD(F_STATUS)->status = (struct f_status){ .host = 1, .n = 2, .r = 2, .m = 3, .count = 2,
						   .reps = reps };
	ADD(L_HELLO)->hello = (struct l_hello){ .version = 1, .pid = 1234 };
	ADD(L_WELCOME)->welcome = (struct l_welcome){ .n = 4, .group = 2, .r = 3, .rep = 1,
						      .flags = 0 };
	ADD(L_SEND)->send = (struct l_send){ .dst = 3, .tag = 8, .seq = 12, .size = 33,
					     .site = 0x401000 };
	ADD(L_RECV)->recv = (struct l_recv){ .src = -1, .tag = -1, .bufsize = 4096 };
	ADD(L_DELIVER)->deliver = (struct l_deliver){ .src = 1, .tag = 8, .seq = 12, .size = 33 };
	ADD(L_TRUNC)->trunc.src = 1;
	v[n - 1].u.trunc.tag = 8;
	v[n - 1].u.trunc.size = 1ULL << 33;
	ADD(F_MIGRATE)->migrate = (struct f_migrate){ .group = 2, .rep = 1, .src_rep = 0,
						      .target = 3, .mode = MIG_COPY, .inc = 5 };
	ADD(F_PROC_STATE)->proc_state = (struct f_proc_state){ .group = 2, .rep = 1, .inc = 5,
							       .mode = MIG_MOVE, .any_next = 4,
							       .out_off = 100, .err_off = 7 };
	ADD(F_CUT_CHAN)->cut_chan = (struct f_cut_chan){ .group = 2, .rep = 1, .src = 0,
							 .consumed_low = 7, .count = 3,
							 .seqs = cut_seqs };
	ADD(F_STATE_END)->state_end = (struct f_state_end){ .group = 2, .rep = 1, .inc = 5 };
	ADD(F_MAP)->map = (struct f_map){ .group = 2, .rep = 1, .host = 3, .inc = 5, .epoch = 6,
					  .reactive = 1 };
	ADD(F_MEMBER_ACK)->member_ack = (struct f_member_ack){ .group = 2, .rep = 1, .inc = 5,
							       .from_host = 0 };
	ADD(F_IMAGE_HELLO)->image_hello = (struct f_image_hello){ .group = 2, .rep = 1, .inc = 5,
								  .mode = MIG_COPY, .out_off = 1,
								  .err_off = 2 };
	ADD(F_IMAGE_GO);
	ADD(F_HOST_ADD)->host_add = (struct f_host_add){ .host = 2, .addr = newaddr };
	ADD(F_HOST_UP)->host_add = (struct f_host_add){ .host = 2, .addr = newaddr };
	ADD(F_MAP_SYNC_REQ);
	ADD(F_DIRECT_HELLO)->direct_hello = (struct f_direct_hello){ .src = 1, .dst = 2, .src_inc = 1,
								     .dst_inc = 3 };
	ADD(L_DIRECT_REQ)->direct_req.dst = 2;
	ADD(L_DIRECT)->direct = (struct l_direct){ .peer = 2, .what = DIRECT_IN };
	ADD(L_CKPT)->ckpt.mode = 1;
	ADD(L_CKPT_DONE)->ckpt_done.status = 0;
	ADD(L_FINALIZE);
	ADD(L_BYE);
	ADD(L_ERROR)->error.code = -2;
#undef ADD
	for (i = 0; i < n && i < cap; i++)
		out[i] = v[i];
	return n < cap ? n : cap;
}

void frame_sample_payload(const struct frame *f, unsigned char *buf, size_t len)
{
	fill(buf, len, f->h.type * 13u);
}
