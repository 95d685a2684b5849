// End-of-run judgements that need the daemons' views: membership agreement
// (I4), crashed replicas fenced (I5), no false fence (I8).
#include <cstdio>
#include <cstring>

#include "world.h"

namespace sim {

static constexpr uint64_t LEASE_NS = 250 * 1000000ull; // the core's default

void World::check_membership()
{
	char b[200];

	check_repaired();
	if (chk_->failed())
		return;
	std::string old;
	if (old_incarnation_runs(&old)) {
		// its slot was refilled, so it was fenced: its daemon must kill it
		chk_->fail(4, "I4 replica " + old + ", replaced by a copy, still runs at the end");
		return;
	}

	for (uint32_t pi = 0; pi < procs_.size(); pi++) {
		const Proc &p = procs_[pi];
		bool lost = p.st == Proc::CRASHED || host_dead_[p.host];
		int first = -1;

		bool doomed = chk_->doomed(p.g, p.k);
		bool excused = p.injected || host_dead_[p.host] || restore_lost(pi) || doomed ||
			       chk_->beyond_masking();

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
			if (chk_->must_fence(p.g, p.k) && alive) {
				// I4: sent or consumed a corrupt copy that a daemon
				// compared, for its running replica, with a majority of
				// the sender's live replicas' (all r live: faults.cc)
				snprintf(b, sizeof(b),
					 "I4 replica %u.%u %s, outvoted, but daemon %u still counts it "
					 "alive (never fenced)", p.g, p.k, chk_->doom_reason(p.g, p.k).c_str(), h);
				chk_->fail(4, b);
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
	if (!caps_.empty() || !broken_.empty())
		return false;
	for (const Proc &p : procs_)
		if (p.st != Proc::DONE && p.st != Proc::CRASHED && !host_dead_[p.host])
			return false;
	return true;
}

bool World::membership_settled() const
{
	// every live daemon has declared every dead host lost (what it does
	// then, relaying fences and news that died with that host, is part of
	// the repair the end-of-run views judge)
	for (uint32_t d = 0; d < cfg_.m; d++)
		for (uint32_t h = 0; h < cfg_.m; h++)
			if (host_dead_[h] && !host_dead_[d] && !core_isolated(cores_[d]) &&
			    !core_host_lost(cores_[d], h))
				return false;
	// ... and every replica to be fenced for a corrupt copy (I4) is: its
	// suspicion may wait for a coordinator's host to be declared lost and
	// goes again every 200 ms. The daemons go on doing so after the job's
	// processes ended; ending the run at their end judged the views before
	// (seeds 110, 1786: a consumer that finished first)
	for (const Proc &p : procs_) {
		if (p.st != Proc::CRASHED && !host_dead_[p.host] && !chk_->must_fence(p.g, p.k))
			continue;
		for (uint32_t h = 0; h < cfg_.m; h++)
			if (!host_dead_[h] && !core_isolated(cores_[h]) && core_alive(cores_[h], p.g, p.k))
				return false;
	}
	return true;
}

// Events that matter to I5's second half: a fence (the slot is to be
// regenerated), and the ways a repair can fail or be put off within a run
// (no free host, a copy or restore that failed, a source that refused:
// the coordinator tries again later, regen_busy, beyond most runs).
void World::repair_event(const char *text)
{
	unsigned g = 0, k = 0;
	const char *p;

	if (!(p = strstr(text, "\"group\":")) || sscanf(p, "\"group\":%u", &g) != 1 || g >= cfg_.n)
		return;
	// the daemons' own word on which slots were fenced: World::corrupt
	// checks the fault policy against it (faults.cc)
	if (strstr(text, "\"event\":\"fence\"") && (p = strstr(text, "\"rep\":")) &&
	    sscanf(p, "\"rep\":%u", &k) == 1 && k < cfg_.r)
		fenced_slots_[g] |= 1u << k;
	if (!cfg_.regen)
		return;
	if (strstr(text, "\"event\":\"fence\"")) {
		if ((p = strstr(text, "\"rep\":")) && sscanf(p, "\"rep\":%u", &k) == 1 && k < cfg_.r) {
			// the order is due at once for a process known dead, after
			// the lease for one that may still run (rule 3)
			bool now = strstr(text, "\"reason\":\"exit\"") != nullptr;

			fenced_at_[(size_t)g * cfg_.r + k] = (now_ ? now_ : 1) + (now ? 0 : LEASE_NS);
			fence_time_[(size_t)g * cfg_.r + k] = now_ ? now_ : 1;
			fences_[g]++;
		}
	} else if (strstr(text, "regen-no-host") || strstr(text, "migrate-failed") ||
		   strstr(text, "restore-failed") || strstr(text, "regen-refused")) {
		repair_trouble_[g] = now_ ? now_ : 1;
	}
}

// I5, second half: after a repairable fault the group is back to r
// replicas. Judged where the run shows the repair was possible: a slot of
// g fenced (the only fence g saw, so no other copy of g was under way or
// put off by one), not refilled at the end, while a sibling that could be
// its source (verified, on a live host) entered a receive — a safe point,
// where the copy is captured — well after the coordinator's order was due
// (the fence, the lease for a replica that may still run, a repair scan,
// the order's way), and no repair of g failed or found no host meanwhile.
void World::check_repaired()
{
	const uint64_t due_after = 50 * 1000000ull; // a repair scan, the order's way
	char b[240];

	if (!cfg_.regen)
		return;
	for (uint32_t g = 0; g < cfg_.n; g++) {
		if (fences_[g] != 1)
			continue;
		for (uint32_t k = 0; k < cfg_.r; k++) {
			size_t i = (size_t)g * cfg_.r + k;
			uint64_t tf = fenced_at_[i], due = tf + due_after;
			bool refilled = false, joining = false;

			// (trouble since the fence: the coordinator orders a copy of
			// a replica fenced for a mismatch at once, B45, not after
			// the lease, and that order may fail before the lease ends)
			if (!tf || repair_trouble_[g] >= fence_time_[i])
				continue;
			for (uint32_t h = 0; h < cfg_.m; h++)
				if (!host_dead_[h] && !core_isolated(cores_[h])) {
					refilled |= core_alive(cores_[h], g, k);
					for (uint32_t j = 0; j < cfg_.r; j++)
						joining |= core_alive(cores_[h], g, j) && core_joining(cores_[h], g, j);
				}
			if (refilled || joining)
				continue;
			for (uint32_t j = 0; j < cfg_.r; j++) {
				const Proc &q = procs_[(size_t)g * cfg_.r + j];

				if (j == k || q.st == Proc::CRASHED || q.fenced || host_dead_[q.host] ||
				    q.t_recv <= due)
					continue;
				snprintf(b, sizeof(b),
					 "I5 group %u not back to r: replica %u.%u due for regeneration at %.0f "
					 "ms, never regenerated, though %u.%u was at a safe point at %.0f ms", g, g, k,
					 tf / 1e6, g, j, q.t_recv / 1e6);
				chk_->fail(5, b);
				return;
			}
		}
	}
}

} // namespace sim
