// Seed → run configuration. Small jobs on purpose: bugs in a protocol core
// show up on 2–6 hosts with a handful of ranks, and small runs let CI cover
// tens of thousands of schedules in a couple of minutes.
#include "config.h"

#include <cstdio>

#include "rng.h"
#include "core_c.h"

namespace sim {

static const char *const wnames[] = { "ring", "alltoall", "mgrwork", "dag" };

const char *workload_name(Workload w)
{
	return (unsigned)w < (unsigned)Workload::COUNT ? wnames[(unsigned)w] : "?";
}

bool workload_parse(const std::string &s, Workload *w)
{
	for (unsigned i = 0; i < (unsigned)Workload::COUNT; i++)
		if (s == wnames[i]) {
			*w = (Workload)i;
			return true;
		}
	return false;
}

SimCfg derive_cfg(uint64_t seed, const CfgPins &p)
{
	// A stream of its own: the workload and the scheduler draw from other
	// forks of the seed, so pinning one field does not reshuffle the rest.
	Rng g = Rng(seed).fork(1);
	SimCfg c;
	uint64_t rr = g.below(8);

	c.seed = seed;
	c.m = (uint32_t)g.range(2, 6);
	// r = 2 and 3 are where replication bugs live; r = 1 keeps the plain path honest
	c.r = rr == 0 ? 1 : rr < 4 ? 2 : 3;
	c.n = (uint32_t)g.range(2, 8);
	c.mode = g.chance(1, 4) ? CMP_VOTE : CMP_FIRST;
	c.work = (Workload)g.below((uint64_t)Workload::COUNT);
	c.max_proc_crashes = g.chance(1, 3) ? (uint32_t)g.range(1, 2) : 0;
	c.max_host_crashes = g.chance(1, 6) ? 1 : 0;
	c.max_cuts = g.chance(1, 4) ? (uint32_t)g.range(1, 3) : 0;
	if (p.m >= 0)
		c.m = (uint32_t)p.m;
	if (p.r >= 0)
		c.r = (uint32_t)p.r;
	if (p.n >= 0)
		c.n = (uint32_t)p.n;
	if (c.r > c.m)
		c.r = c.m; // the core refuses r > m (DESIGN §4); clamp instead of wasting the seed
	if (p.mode >= 0)
		c.mode = (uint8_t)p.mode;
	if (p.work >= 0)
		c.work = (Workload)p.work;
	if (p.units > 0)
		c.size_units = (uint32_t)p.units;
	if (p.crashes >= 0)
		c.max_proc_crashes = (uint32_t)p.crashes;
	if (p.host_crashes >= 0)
		c.max_host_crashes = (uint32_t)p.host_crashes;
	if (p.cuts >= 0)
		c.max_cuts = (uint32_t)p.cuts;
	if (p.migrations >= 0)
		c.max_migrations = (uint32_t)p.migrations;
	// never drawn from the seed: older seeds keep their runs
	if (p.corruptions >= 0)
		c.max_corruptions = (uint32_t)p.corruptions;
	c.corrupt_first = p.corrupt_first;
	c.corrupt_alone = !p.no_corrupt_alone;
	c.regen = p.regen || p.no_repair;
	c.no_repair = p.no_repair;
	c.flags = p.flags;
	c.test = p.test;
	c.wire = !p.no_wire;
	c.fifo = !p.no_fifo;
	c.bias_delays = !p.no_bias;
	c.lossy = p.lossy;
	if (p.step_limit)
		c.step_limit = p.step_limit;
	c.scale_op = p.scale_op;
	c.scale_pi = p.scale_pi;
	c.scale_target = p.scale_target;
	c.scale_after = p.scale_after;
	return c;
}

std::string cfg_describe(const SimCfg &c)
{
	char b[256];

	snprintf(b, sizeof(b),
		 "m=%u n=%u r=%u mode=%s work=%s units=%u crashes<=%u host-crashes<=%u cuts<=%u "
		 "migrations<=%u corruptions<=%u flags=%#x%s%s%s%s%s",
		 c.m, c.n, c.r, c.mode == CMP_VOTE ? "vote" : "first", workload_name(c.work),
		 c.size_units, c.max_proc_crashes, c.max_host_crashes, c.max_cuts, c.max_migrations,
		 c.max_corruptions, c.flags,
		 c.wire ? "" : " no-wire", c.fifo ? "" : " no-fifo", c.lossy ? " lossy" : "",
		 c.regen ? " regen" : "", c.no_repair ? " no-repair" : "");
	return b;
}

} // namespace sim
