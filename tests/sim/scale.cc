// Scale mode: a big job (default 64 hosts, r = 3) under the same simulator,
// counting peer frames by type, to show how traffic grows with n.
// Target (issue 8): control frames per operation independent of n.
//
// Per ANYSRC decision the protocol sends DECISION to every live sibling and
// gets ACKs back; per message, one DATA copy from every sender replica to
// every destination replica. Heartbeats are per host and per unit of time,
// not per operation: they get a column of their own. Migration and
// regeneration runs still hit open core bugs (docs/protocol-sim.md, B5, B6):
// their columns say so instead of showing a number.
#include <cinttypes>
#include <cstdio>
#include <vector>

#include "core_c.h"
#include "sched.h"

namespace sim {

namespace {

const char *NOT_YET = "not measured yet";
// the core's default heartbeat period (core.h): heartbeats are counted per
// host and per period, which is what they cost whatever the job does
constexpr uint64_t HB_PERIOD_NS = 50000000;

void row(uint32_t n, uint32_t m, uint32_t r, Workload w, bool *ok)
{
	CfgPins p;
	SimCfg cfg;
	RunResult res;
	uint64_t dec, hb, other;
	char per_dec[32] = "–";

	p.m = m;
	p.n = n;
	p.r = r;
	p.mode = CMP_FIRST;
	p.work = (int)w;
	p.crashes = p.host_crashes = p.cuts = 0;
	p.step_limit = 100000000;
	cfg = derive_cfg(1, p);
	res = run_random(cfg, false);
	if (res.v.inv >= 0) {
		printf("| %u | %u | %u | %s | VIOLATION I%d: %s |\n", n, m, r, workload_name(w), res.v.inv,
		       res.v.what.c_str());
		*ok = false;
		return;
	}
	dec = res.frames.by_type[F_DECISION] + res.frames.by_type[F_DECISION_ACK];
	hb = res.frames.by_type[F_HEARTBEAT];
	other = res.frames.control() - dec - hb;
	if (res.decisions)
		snprintf(per_dec, sizeof(per_dec), "%.2f", (double)dec / (double)res.decisions);
	printf("| %u | %u | %u | %s | %" PRIu64 " | %.2f | %" PRIu64 " | %s | %.3f | %.1f | %s | %s |\n",
	       n, m, r, workload_name(w), res.logical,
	       res.logical ? (double)res.frames.data() / (double)res.logical : 0.0, res.decisions,
	       per_dec, res.logical ? (double)other / (double)res.logical : 0.0,
	       (double)hb / m / (double)(res.sim_ns / HB_PERIOD_NS + 1), NOT_YET, NOT_YET);
}

} // namespace

int scale_main(const std::vector<uint32_t> &ns, uint32_t m, uint32_t r)
{
	bool ok = true;

	printf("| n | hosts | r | workload | messages | DATA frames/message | ANYSRC decisions | "
	       "DECISION+ACK frames/decision | other control frames/message | "
	       "heartbeats/host/period | control frames/migration | control frames/regeneration |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (uint32_t n : ns) {
		row(n, m, r, Workload::MGRWORK, &ok);
		row(n, m, r, Workload::RING, &ok);
	}
	return ok ? 0 : 1;
}

} // namespace sim
