// Scale mode: a big job (default 64 hosts, r = 3) under the same simulator,
// counting peer frames by type, to show how traffic grows with n.
// Target (issue 8): control frames per operation independent of n.
//
// Per ANYSRC decision the protocol sends DECISION to every live sibling and
// gets ACKs back; per message, one DATA copy from every sender replica to
// every destination replica. Heartbeats are per host and per unit of time,
// not per operation: they get a column of their own.
//
// Migration and regeneration: the same job with one operation ordered at a
// fixed point (a move of one replica of rank n/2, or a crash of one that is
// then regenerated). Without faults a job sends no control frame but
// heartbeats and ANYSRC decisions, so every other control frame of such a
// run belongs to the operation: that is its cost, by type. Forwarded DATA
// (the cut's queued messages, copies forwarded after the move) is counted
// apart: it is the messages the process is owed, not control.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "core_c.h"
#include "sched.h"

namespace sim {

namespace {

// the core's default heartbeat period (core.h): heartbeats are counted per
// host and per period, which is what they cost whatever the job does
constexpr uint64_t HB_PERIOD_NS = 50000000;

CfgPins pins_for(uint32_t n, uint32_t m, uint32_t r, Workload w)
{
	CfgPins p;

	p.m = m;
	p.n = n;
	p.r = r;
	p.mode = CMP_FIRST;
	p.work = (int)w;
	p.crashes = p.host_crashes = p.cuts = p.migrations = 0;
	p.step_limit = 100000000;
	return p;
}

void row(uint32_t n, uint32_t m, uint32_t r, Workload w, bool *ok)
{
	SimCfg cfg = derive_cfg(1, pins_for(n, m, r, w));
	RunResult res;
	uint64_t dec, hb, acks, other;
	char per_dec[32] = "–";

	res = run_random(cfg, false);
	if (res.v.inv >= 0) {
		printf("| %u | %u | %u | %s | VIOLATION I%d: %s |\n", n, m, r, workload_name(w), res.v.inv,
		       res.v.what.c_str());
		*ok = false;
		return;
	}
	dec = res.frames.by_type[F_DECISION] + res.frames.by_type[F_DECISION_ACK];
	hb = res.frames.by_type[F_HEARTBEAT];
	acks = res.frames.by_type[F_DATA_ACK];
	other = res.frames.control() - dec - hb - acks;
	if (res.decisions)
		snprintf(per_dec, sizeof(per_dec), "%.2f", (double)dec / (double)res.decisions);
	printf("| %u | %u | %u | %s | %" PRIu64 " | %.2f | %.2f | %" PRIu64 " | %s | %.3f | %.1f |\n",
	       n, m, r, workload_name(w), res.logical,
	       res.logical ? (double)res.frames.data() / (double)res.logical : 0.0,
	       res.logical ? (double)acks / (double)res.logical : 0.0, res.decisions,
	       per_dec, res.logical ? (double)other / (double)res.logical : 0.0,
	       (double)hb / m / (double)(res.sim_ns / HB_PERIOD_NS + 1));
}

} // namespace

// One operation (1 move, 2 crash + regeneration) in a job of n ranks.
ScaleOp scale_op(uint32_t n, uint32_t m, uint32_t r, Workload w, int op)
{
	CfgPins p = pins_for(n, m, r, w);
	ScaleOp o;
	SimCfg cfg;
	RunResult res;
	uint32_t g = n / 2, k = r > 1 ? 1 : 0;

	if (op == 1)
		p.migrations = 1;
	else
		p.crashes = 1;
	p.regen = op == 2;
	p.scale_op = op;
	p.scale_pi = g * r + k;
	// a host that holds no replica of g (placement: g*r+j mod m)
	p.scale_target = (uint32_t)(((uint64_t)g * r + r) % m);
	p.scale_after = 20 * (uint64_t)n; // well into the run: its channels are busy
	cfg = derive_cfg(1, p);
	res = run_random(cfg, false);
	if (!res.v.what.empty() || !res.scale_done)
		fprintf(stderr, "reproduce: msgsim --seed 1 --m %u --n %u --r %u --mode first --work %s "
			"--crashes %u --host-crashes 0 --cuts 0 --migrations %u%s --scale-op %d,%u,%u,%llu\n",
			m, n, r, workload_name(w), op == 2, op == 1, op == 2 ? " --regen" : "", op,
			p.scale_pi, p.scale_target, (unsigned long long)p.scale_after);
	o.ok = res.v.inv < 0 && res.scale_done;
	o.why = res.v.inv >= 0 ? "I" + std::to_string(res.v.inv) + ": " + res.v.what :
		!res.scale_done ? std::string("the operation never became legal") : std::string();
	for (uint32_t t = 0; t < 256; t++) {
		// per-message costs (a message's copies and their retention acks,
		// a decision and its acks), not the operation's
		if (t == F_DATA || t == F_HEARTBEAT || t == F_DECISION || t == F_DECISION_ACK ||
		    t == F_DATA_ACK)
			continue;
		o.by_type[t] = res.frames.by_type[t];
		o.control += res.frames.by_type[t];
	}
	o.fwd_data = res.frames.fwd_data;
	o.talkers = res.talkers;
	return o;
}

static void op_row(uint32_t n, uint32_t m, uint32_t r, Workload w, int op, bool *ok)
{
	ScaleOp o = scale_op(n, m, r, w, op);

	if (!o.ok) {
		printf("| %u | %u | %s | %s | FAILED: %s |\n", n, m, workload_name(w),
		       op == 1 ? "migration" : "regeneration", o.why.c_str());
		*ok = false;
		return;
	}
	printf("| %u | %u | %s | %s | %u | **%" PRIu64 "** | %" PRIu64 " | %" PRIu64 " | %" PRIu64
	       " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " | %" PRIu64 " |\n",
	       n, m, workload_name(w), op == 1 ? "migration" : "regeneration", o.talkers, o.control,
	       o.by_type[F_MAP], o.by_type[F_MEMBER], o.by_type[F_MEMBER_ACK],
	       o.by_type[F_PROC_STATE] + o.by_type[F_CUT_CHAN] + o.by_type[F_STATE_END],
	       o.by_type[F_SUSPECT] + o.by_type[F_MIGRATE],
	       o.by_type[F_DLOG_REQ] + o.by_type[F_DLOG_END],
	       o.control - o.by_type[F_MAP] - o.by_type[F_MEMBER] - o.by_type[F_MEMBER_ACK] -
		       o.by_type[F_PROC_STATE] - o.by_type[F_CUT_CHAN] - o.by_type[F_STATE_END] -
		       o.by_type[F_SUSPECT] - o.by_type[F_MIGRATE] - o.by_type[F_DLOG_REQ] -
		       o.by_type[F_DLOG_END],
	       o.fwd_data);
}

int scale_main(const std::vector<uint32_t> &ns, uint32_t m, uint32_t r)
{
	bool ok = true;

	printf("| n | hosts | r | workload | messages | DATA frames/message | DATA_ACK frames/message | "
	       "ANYSRC decisions | DECISION+ACK frames/decision | other control frames/message | "
	       "heartbeats/host/period |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (uint32_t n : ns) {
		row(n, m, r, Workload::MGRWORK, &ok);
		row(n, m, r, Workload::RING, &ok);
	}
	printf("\nOne operation on replica %s of rank n/2 (r = %u): control frames it caused, by type\n\n",
	       r > 1 ? "1" : "0", r);
	printf("| n | hosts | workload | operation | hosts that talk to the rank | control frames | "
	       "MAP | MEMBER | MEMBER_ACK | PROC_STATE+CUT_CHAN+STATE_END | SUSPECT+MIGRATE | "
	       "DLOG_REQ+DLOG_END | other | forwarded DATA (not control) |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int op = 1; op <= 2; op++)
		for (uint32_t n : ns) {
			op_row(n, m, r, Workload::MGRWORK, op, &ok);
			op_row(n, m, r, Workload::RING, op, &ok);
		}
	return ok ? 0 : 1;
}

// The acceptance check (issue 8): the control frames of one migration and
// of one regeneration do not depend on n. A move costs the same at every n
// (its MAP news to every other host, and the cut:
// PROC_STATE, one CUT_CHAN per inbound channel, STATE_END). A regeneration
// costs the fence, the joining news and its acks (each to every host), the
// cut, and the verification news: each daemon that sees the copy's first
// matching message before it hears another's verification tells every host,
// so that term is (hosts the copy talks to) x (hosts) at most, whatever n.
int scale_check(const std::vector<uint32_t> &ns, uint32_t m, uint32_t r)
{
	int bad = 0;

	for (int op = 1; op <= 2; op++)
		for (Workload w : { Workload::MGRWORK, Workload::RING }) {
			std::vector<ScaleOp> v;

			for (uint32_t n : ns) {
				v.push_back(scale_op(n, m, r, w, op));
				const ScaleOp &o = v.back();
				uint64_t lo = op == 1 ? 1ull * (m - 1) + 3 : 3ull * (m - 1) + 3;
				uint64_t hi = op == 1 ? lo + o.talkers :
					      (3ull + o.talkers) * (m - 1) + 3 + o.talkers + 2;

				printf("%s %s n=%u: %s%" PRIu64 " control frames (%u hosts talk to it; "
				       "bound %" PRIu64 "..%" PRIu64 ")\n", workload_name(w),
				       op == 1 ? "migration" : "regeneration", n, o.ok ? "" : "FAILED ",
				       o.control, o.talkers, lo, hi);
				if (!o.ok) {
					printf("  %s\n", o.why.c_str());
					bad++;
				} else if (o.control < lo || o.control > hi) {
					printf("  outside the bound in hosts and talkers\n");
					bad++;
				}
			}
			for (size_t i = 1; op == 1 && i < v.size(); i++)
				if (v[i].control != v[0].control) {
					printf("  control frames per migration depend on n: %" PRIu64 " at n=%u, "
					       "%" PRIu64 " at n=%u\n", v[0].control, ns[0], v[i].control, ns[i]);
					bad++;
				}
		}
	printf("%s\n", bad ? "scale check FAILED" : "scale check: control frames per migration and "
							 "per regeneration are independent of n");
	return bad ? 1 : 0;
}

} // namespace sim
