// Running one simulated job: with the seeded random scheduler, or by
// replaying a given list of choices (reproduction and shrinking).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "check.h"
#include "config.h"
#include "world.h"

namespace sim {

// Scale mode: the control frames one operation caused (scale.cc).
struct ScaleOp {
	bool ok = false;
	std::string why;
	uint64_t control = 0, fwd_data = 0;
	uint64_t by_type[256] = {};
	uint32_t talkers = 0;
};

struct RunResult {
	Violation v;
	std::vector<Choice> trace;      // the choices applied, in order
	std::vector<std::string> log;   // per-step description (when asked for)
	std::vector<size_t> log_step;   // log line i belongs to trace step log_step[i]
	uint64_t hash = 0;              // of everything that happened: same seed, same hash
	uint64_t steps = 0, deliveries = 0, messages = 0, decisions = 0;
	uint64_t logical = 0;           // distinct messages (each sent by every replica)
	uint64_t sim_ns = 0;            // simulated time the run took
	FrameCounts frames;
	bool core_ok = true;
	bool scale_done = false;        // the scale mode's operation happened
	uint32_t talkers = 0;           // hosts that sent DATA to its group
};

// The seeded scheduler: picks what happens next among the enabled choices.
RunResult run_random(const SimCfg &cfg, bool log);
// Apply `choices` in order (skipping any that are not enabled at that
// point), then — if `finish` — heal every cut and run to quiescence with a
// fixed policy, so a shortened schedule still ends and can be judged.
RunResult run_replay(const SimCfg &cfg, const std::vector<Choice> &choices, bool finish, bool log);

std::string trace_tokens(const std::vector<Choice> &t, uint32_t r);
bool trace_parse(const std::string &s, uint32_t r, std::vector<Choice> *out);

} // namespace sim
