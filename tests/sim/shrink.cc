// Delta-debugging over the list of choices: drop chunks (halves, quarters,
// ... single steps) and keep a candidate when its replay still violates the
// same invariant. A replay skips choices that are no longer enabled and, if
// the list ends first, runs the job to quiescence with a fixed policy, so
// every candidate is a complete, legal schedule; what is kept is the
// schedule as actually applied, so the result replays bit for bit.
#include "shrink.h"

namespace sim {

std::vector<Choice> shrink(const SimCfg &cfg, const std::vector<Choice> &trace, int inv,
			   uint64_t max_replays, ShrinkStats *st)
{
	std::vector<Choice> cur = trace;

	st->from = trace.size();
	for (size_t chunk = cur.size() / 2; chunk >= 1 && st->replays < max_replays; chunk /= 2) {
		size_t i = 0;

		while (i < cur.size() && st->replays < max_replays) {
			std::vector<Choice> cand;
			RunResult r;

			cand.reserve(cur.size());
			cand.insert(cand.end(), cur.begin(), cur.begin() + (long)i);
			if (i + chunk < cur.size())
				cand.insert(cand.end(), cur.begin() + (long)(i + chunk), cur.end());
			r = run_replay(cfg, cand, true, false);
			st->replays++;
			if (r.v.inv == inv && r.trace.size() < cur.size())
				cur = std::move(r.trace);  // retry the same position
			else
				i += chunk;
		}
		if (chunk == 1)
			break;
	}
	st->to = cur.size();
	return cur;
}

} // namespace sim
