// Scale mode: a big job (default 64 hosts, r = 3) under the same simulator,
// counting peer frames by type, to show how control traffic grows with n.
// Target (issue 8): control frames per operation independent of n.
//
// Per ANYSRC decision the protocol sends DECISION to every live sibling and
// gets ACKs back; per message it sends one DATA copy from every sender
// replica to every destination replica and no control frame. Migration and
// regeneration do not exist in the core yet: their columns say so instead of
// showing a number.
#include <cinttypes>
#include <cstdio>
#include <vector>

#include "core_c.h"
#include "sched.h"

namespace sim {

namespace {

const char *NOT_YET = "not implemented yet";

void row(uint32_t n, uint32_t m, uint32_t r, Workload w, bool *ok)
{
	CfgPins p;
	SimCfg cfg;
	RunResult res;
	uint64_t ctl, dec_frames;
	char per_dec[32] = "–", per_msg[32] = "–", nondec[32];

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
	ctl = res.frames.control();
	dec_frames = res.frames.by_type[F_DECISION] + res.frames.by_type[F_DECISION_ACK];
	if (res.decisions)
		snprintf(per_dec, sizeof(per_dec), "%.2f", (double)dec_frames / (double)res.decisions);
	if (res.messages)
		snprintf(per_msg, sizeof(per_msg), "%.3f", (double)ctl / (double)res.messages);
	snprintf(nondec, sizeof(nondec), "%" PRIu64, ctl - dec_frames);
	printf("| %u | %u | %u | %s | %" PRIu64 " | %.2f | %" PRIu64 " | %s | %s | %s | %s | %s |\n", n,
	       m, r, workload_name(w), res.messages,
	       res.messages ? (double)res.frames.data() / (double)res.messages : 0.0, res.decisions,
	       per_dec, nondec, per_msg, NOT_YET, NOT_YET);
}

} // namespace

int scale_main(const std::vector<uint32_t> &ns, uint32_t m, uint32_t r)
{
	bool ok = true;

	printf("| n | hosts | r | workload | messages | DATA frames/message | ANYSRC decisions | "
	       "control frames/decision | other control frames | control frames/message | "
	       "control frames/migration | control frames/regeneration |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (uint32_t n : ns) {
		row(n, m, r, Workload::MGRWORK, &ok);
		row(n, m, r, Workload::RING, &ok);
	}
	return ok ? 0 : 1;
}

} // namespace sim
