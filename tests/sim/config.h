// One simulated run's configuration: everything is derived from the seed
// unless the command line pins it (docs/protocol-sim.md, "Reproducing").
#pragma once

#include <cstdint>
#include <string>

namespace sim {

enum class Workload : uint8_t { RING, ALLTOALL, MGRWORK, DAG, COUNT };

const char *workload_name(Workload w);
bool workload_parse(const std::string &s, Workload *w);

struct SimCfg {
	uint64_t seed = 1;
	uint32_t m = 3, n = 4, r = 2;
	uint8_t mode = 0;        // enum cmp_mode
	uint32_t flags = 0;      // JOB_F_* handed to every core (negative controls)
	uint32_t test = 0;       // CORE_T_* handed to every core (core.h)
	Workload work = Workload::DAG;
	uint32_t size_units = 1; // scales message counts (scale mode raises it)
	// Faults the scheduler may inject, as far as the core supports them
	// (faults.cc decides which ones are legal at a given point).
	uint32_t max_proc_crashes = 0;
	uint32_t max_host_crashes = 0;
	uint32_t max_cuts = 0;
	uint32_t max_migrations = 0; // moves (msgctl migrate) the scheduler may order
	uint32_t max_corruptions = 0; // replicas that send a wrong message (faults.cc)
	bool corrupt_first = false;  // ... also in mode first (not yet judged in full)
	bool corrupt_alone = true;   // only in a group no other fault hit (faults.cc);
	                             // off: the policy check's negative control
	bool wire = true;        // round-trip every peer frame through the codec
	bool fifo = true;        // per-connection FIFO (TCP); off = robustness run
	bool bias_delays = true; // slow links/processes are picked less often
	bool lossy = false;      // may lose one frame: the I6 negative control
	bool regen = false;      // the core's automatic regeneration
	bool no_repair = false;  // negative control for I5's second half: judged as
	                         // with regen, but the cores' regeneration is off
	uint64_t step_limit = 400000;
	// Scale mode (scale.cc): one operation ordered at a fixed point of the
	// run, as soon as it is legal after scale_after steps: 0 none, 1 move
	// process scale_pi to host scale_target, 2 crash process scale_pi
	// (regenerated, with regen on).
	int scale_op = 0;
	uint32_t scale_pi = 0, scale_target = 0;
	uint64_t scale_after = 0;
};

// Pinned values from the command line; unset fields come from the seed.
struct CfgPins {
	int64_t m = -1, n = -1, r = -1, mode = -1, units = -1;
	int work = -1;
	int64_t crashes = -1, host_crashes = -1, cuts = -1, migrations = -1, corruptions = -1;
	bool regen = false, no_repair = false, corrupt_first = false, no_corrupt_alone = false;
	uint32_t flags = 0;
	uint32_t test = 0;  // CORE_T_* (core.h)
	bool no_wire = false, no_fifo = false, no_bias = false, lossy = false;
	uint64_t step_limit = 0;
	int scale_op = 0;                 // --scale-op OP,PI,TARGET,AFTER (scale.cc)
	uint32_t scale_pi = 0, scale_target = 0;
	uint64_t scale_after = 0;
};

SimCfg derive_cfg(uint64_t seed, const CfgPins &pins);
std::string cfg_describe(const SimCfg &c);

} // namespace sim
