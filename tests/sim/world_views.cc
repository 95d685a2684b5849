// End-of-run judgements that need the daemons' views: membership agreement
// (I4), crashed replicas fenced (I5), no false fence (I8).
#include <cstdio>

#include "world.h"

namespace sim {

void World::check_membership()
{
	char b[200];

	for (uint32_t pi = 0; pi < procs_.size(); pi++) {
		const Proc &p = procs_[pi];
		bool lost = p.st == Proc::CRASHED || host_dead_[p.host];
		int first = -1;

		bool excused = p.injected || host_dead_[p.host] || restore_lost(pi);

		if (p.fenced && !excused && strict_fences_) {
			snprintf(b, sizeof(b),
				 "I8 false fence: replica %u.%u was killed by its daemon, but neither "
				 "it nor its host failed", p.g, p.k);
			chk_->fail(8, b);
			return;
		}
		for (uint32_t h = 0; h < cfg_.m; h++) {
			bool alive;

			if (host_dead_[h] || core_isolated(cores_[h]))
				continue;
			alive = core_alive(cores_[h], p.g, p.k);
			if (!alive && !excused && strict_fences_) {
				snprintf(b, sizeof(b),
					 "I8 false fence: daemon %u counts replica %u.%u dead, but "
					 "neither it nor its host failed", h, p.g, p.k);
				chk_->fail(8, b);
				return;
			}
			if (lost && alive) {
				snprintf(b, sizeof(b),
					 "I5 replica %u.%u is gone but daemon %u still counts it "
					 "alive (never fenced)", p.g, p.k, h);
				chk_->fail(5, b);
				return;
			}
			if (first < 0) {
				first = alive;
			} else if (first != (int)alive) {
				snprintf(b, sizeof(b),
					 "I4 membership views differ at quiescence: replica %u.%u is "
					 "%s to daemon %u, %s to another", p.g, p.k,
					 alive ? "alive" : "dead", h, alive ? "dead" : "alive");
				chk_->fail(4, b);
				return;
			}
		}
	}
}

bool World::all_finished() const
{
	if (!caps_.empty())
		return false;
	for (const Proc &p : procs_)
		if (p.st != Proc::DONE && p.st != Proc::CRASHED && !host_dead_[p.host])
			return false;
	return true;
}

bool World::membership_settled() const
{
	for (const Proc &p : procs_) {
		if (p.st != Proc::CRASHED && !host_dead_[p.host])
			continue;
		for (uint32_t h = 0; h < cfg_.m; h++)
			if (!host_dead_[h] && !core_isolated(cores_[h]) && core_alive(cores_[h], p.g, p.k))
				return false;
	}
	return true;
}

} // namespace sim
