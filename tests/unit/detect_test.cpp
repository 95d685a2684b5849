// Two detectors of the pure core no injection reaches (runtime/core/detect.c,
// chan.c; DESIGN §6): an ANYSRC leader that stops deciding while a follower
// waits with candidates, and one replica's inbound backlog overflowing its
// window. Each has a negative control: the same script with the detector
// switched off (JOB_F_TEST_*) must not suspect anyone.
//
// Layout: n=3 r=2 m=6, group 0 on hosts 0 (leader) and 1, sender group 1 on
// hosts 2 and 3 (its processes idle: the test plays their copies).
#include "core_harness.h"

namespace {

constexpr uint64_t kMs = 1000000ull;

bool Suspected(World &w, uint32_t h, const std::string &who, const std::string &detector)
{
	for (const std::string &e : w.Events(h))
		if (e.find("\"suspicion\"") != std::string::npos && e.find(who) != std::string::npos &&
		    e.find("\"detector\":\"" + detector + "\"") != std::string::npos)
			return true;
	return false;
}

// Every host ticks each 20 ms from t0 for `ms`; heartbeats flow (a host
// that hears no majority would fence its own replicas: lease).
void Run(World &w, uint64_t t0, uint64_t ms)
{
	for (uint64_t t = t0; t <= t0 + ms * kMs; t += 20 * kMs) {
		for (uint32_t h = 0; h < 6; h++) {
			core_tick(w.C(h), t);
			w.Pump(h);
		}
		w.ReleaseAll(F_HEARTBEAT);
	}
}

// The follower 0.1 waits in an ANYSRC receive with a candidate; the leader
// 0.0 has the same copy but its process never asks: no decision comes.
bool NoDecisionScenario(uint32_t flags)
{
	World w(3, 2, 6, { 0, 1, 2, 3, 4, 5 }, CMP_FIRST, flags);
	Run(w, 1000 * kMs, 100);
	EXPECT_EQ(w.Data(1, 0, 0, 0, 1, "a"), 0);
	EXPECT_EQ(w.Data(1, 0, 0, 1, 1, "a"), 0);
	EXPECT_EQ(w.Recv(1, 0, MSG_ANYSRC), 0);
	EXPECT_TRUE(w.Got(1).empty()) << "a follower never picks by itself";
	Run(w, 1120 * kMs, 600);
	EXPECT_FALSE(Suspected(w, 1, "\"group\":0,\"rep\":0", "no-decision"))
		<< "suspected before the 750 ms bound";
	Run(w, 1740 * kMs, 2400);
	return Suspected(w, 1, "\"group\":0,\"rep\":0", "no-decision");
}

// 0.1's window from sender 1 would have to grow past its bound.
bool BacklogScenario(uint32_t flags)
{
	World w(3, 2, 6, { 0, 1 }, CMP_FIRST, flags);
	EXPECT_EQ(w.Data(1, 0, 0, 1, 1, "a"), 0);
	w.Data(1, 0, 0, 1, (1ull << 22) + 2, "b");
	EXPECT_EQ(w.Stats(1).delivered, 0u);
	return Suspected(w, 1, "\"group\":0,\"rep\":1", "backlog");
}

} // namespace

TEST(Detect, LeaderThatStopsDecidingIsSuspected)
{
	EXPECT_TRUE(NoDecisionScenario(0));
}

TEST(Detect, NegativeControl_NoDecisionWithoutLagDetector)
{
	EXPECT_FALSE(NoDecisionScenario(JOB_F_TEST_NO_LAG_DETECT));
}

TEST(Detect, BacklogOverflowOfOneReplicaIsSuspected)
{
	EXPECT_TRUE(BacklogScenario(0));
}

TEST(Detect, NegativeControl_NoBacklogDetector)
{
	EXPECT_FALSE(BacklogScenario(JOB_F_TEST_NO_BACKLOG_DETECT));
}
