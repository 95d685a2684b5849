// Shrinking a failing schedule to a short one that fails the same way.
#pragma once

#include <vector>

#include "sched.h"

namespace sim {

struct ShrinkStats {
	uint64_t replays = 0;
	size_t from = 0, to = 0;
};

// Returns the shortest trace found (as applied, so it replays exactly) that
// still violates invariant `inv`. Bounded by max_replays replays.
std::vector<Choice> shrink(const SimCfg &cfg, const std::vector<Choice> &trace, int inv,
			   uint64_t max_replays, ShrinkStats *st);

} // namespace sim
