// An isolated daemon goes silent (rule 3; runtime/core/core.c
// drop_peer_frames). The majority's daemons stall together past the lease
// (a loaded machine): the two others, hearing only each other, isolate
// themselves and fence their replicas. When the majority runs again it must
// declare both lost, or their dead replicas stay members and the next
// loss leaves ranks short (the recur run of session 15). Negative control:
// with the silence switched off (JOB_F_TEST_ISOLATED_TALKS) nobody is
// declared lost.
//
//   hosts 0 1 | 2 3 4      n=5 r=3 m=5, lease = heartbeat timeout = 250 ms
//   ticking   | stalled 400 ms, then everyone ticks for 1.5 s
#include "core_harness.h"

namespace {

constexpr uint64_t kMs = 1000000ull;

bool In(uint32_t h, const std::vector<uint32_t> &v)
{
	return std::find(v.begin(), v.end(), h) != v.end();
}

// The hosts in `up` tick each 20 ms for `ms`; frames between them arrive,
// frames to the others wait in their (TCP) queues.
uint64_t Run(World &w, uint64_t t, uint64_t ms, const std::vector<uint32_t> &up)
{
	for (uint64_t end = t + ms * kMs; t <= end; t += 20 * kMs) {
		for (uint32_t h : up) {
			core_tick(w.C(h), t);
			w.Pump(h);
		}
		w.ReleaseWhere([&](const Held &x) { return In(x.from, up) && In(x.to, up); });
	}
	return t;
}

bool MajorityDeclaresTheIsolatedLost(uint32_t flags)
{
	const std::vector<uint32_t> all = { 0, 1, 2, 3, 4 }, minority = { 0, 1 };
	World w(5, 3, 5, all, CMP_FIRST, flags);
	uint64_t t = Run(w, 1000 * kMs, 200, all);
	t = Run(w, t, 400, minority);
	EXPECT_TRUE(w.HasEvent(0, "isolated", "") && w.HasEvent(1, "isolated", ""))
		<< "two of five hosts, cut off for longer than the lease";
	EXPECT_FALSE(w.HasEvent(0, "host-lost", "") || w.HasEvent(1, "host-lost", ""))
		<< "a minority declares nobody lost";
	Run(w, t, 1500, all);
	bool lost = true;
	for (uint32_t h : { 2u, 3u, 4u })
		for (uint32_t x : minority)
			lost = lost && w.HasEvent(h, "host-lost", "\"lost\":" + std::to_string(x));
	return lost;
}

} // namespace

TEST(Isolation, AnIsolatedDaemonIsSilentSoTheMajorityDeclaresItLost)
{
	EXPECT_TRUE(MajorityDeclaresTheIsolatedLost(0));
}

TEST(Isolation, NegativeControl_IsolatedTalksAndPassesForAlive)
{
	EXPECT_FALSE(MajorityDeclaresTheIsolatedLost(JOB_F_TEST_ISOLATED_TALKS));
}
