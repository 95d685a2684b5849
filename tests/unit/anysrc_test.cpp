// Deterministic MSG_ANYSRC (runtime/core/anysrc.c; DESIGN §5 and rule 6):
// the leader replica decides, siblings follow the decision even when their
// arrival order differs, and the leader's receive returns only once a
// majority stores the decision. Two or three cores are wired by the
// harness's router, which releases DECISION / DECISION_ACK frames in the
// order each test scripts.
//
// Layouts: r=2: n=3 m=6 (group 0 on hosts 0,1; senders 1 and 2 on 2..5).
//          r=3: n=3 m=9 (group 0 on hosts 0,1,2; senders on 3..8).
#include <random>

#include "core_harness.h"

namespace {
// Copies from sender replica 0 of `src` to replica `rep` of group 0.
void Arrive(World &w, uint32_t rep, uint32_t src, uint64_t seq)
{
	ASSERT_EQ(w.Data(src, 0, 0, rep, seq, "m" + std::to_string(src) + "." + std::to_string(seq)), 0);
}
} // namespace

TEST(Anysrc, AnysrcSameOrder_FollowerFollowsLeader)
{
	World w(3, 2, 6, { 0, 1 });
	Arrive(w, 0, 1, 1); // leader sees 1 then 2
	Arrive(w, 0, 2, 1);
	Arrive(w, 1, 2, 1); // follower sees 2 then 1
	Arrive(w, 1, 1, 1);
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(w.Recv(0, 0, MSG_ANYSRC), 0);
		ASSERT_EQ(w.Recv(1, 0, MSG_ANYSRC), 0);
		w.ReleaseAll();
	}
	EXPECT_EQ(w.Order(0), (std::vector<std::string>{ "1:1", "2:1" }));
	EXPECT_EQ(w.Order(1), w.Order(0));
	EXPECT_EQ(w.Stats(0).decisions, 2u);
	EXPECT_EQ(w.Stats(1).decisions, 0u);
	EXPECT_EQ(w.Stats(1).followed, 2u);
	EXPECT_EQ(w.Got(1)[0].payload, "m1.1");
}

TEST(Anysrc, AnysrcFollowerWaitsForDecision)
{
	World w(3, 2, 6, { 0, 1 });
	Arrive(w, 1, 2, 1);
	ASSERT_EQ(w.Recv(1, 0, MSG_ANYSRC), 0);
	EXPECT_TRUE(w.Got(1).empty()) << "a follower never picks by itself";
	Arrive(w, 0, 1, 1);
	ASSERT_EQ(w.Recv(0, 0, MSG_ANYSRC), 0);
	ASSERT_EQ(w.HeldCount(F_DECISION), 1u);
	ASSERT_EQ(w.Release(0, F_DECISION), 0);
	// the decision names 1:1, which has not reached the follower yet
	EXPECT_TRUE(w.Got(1).empty());
	Arrive(w, 1, 1, 1);
	ASSERT_EQ(w.Order(1), (std::vector<std::string>{ "1:1" }));
}

TEST(Anysrc, AnysrcLeaderDoesNotDeliverBeforeSiblingAck)
{
	World w(3, 2, 6, { 0, 1 });
	Arrive(w, 0, 2, 1);
	ASSERT_EQ(w.Recv(0, 0, MSG_ANYSRC), 0);
	EXPECT_TRUE(w.Got(0).empty()) << "decision not stored at a sibling yet";
	ASSERT_EQ(w.HeldCount(F_DECISION), 1u);
	const Held &d = w.HeldFrames().front();
	EXPECT_EQ(d.to, 1u);
	EXPECT_EQ(d.f.u.decision.index, 1u);
	EXPECT_EQ(d.f.u.decision.src, 2u);
	EXPECT_EQ(d.f.u.decision.seq, 1u);
	// more messages arriving do not let it through either
	Arrive(w, 0, 1, 1);
	EXPECT_TRUE(w.Got(0).empty());
	ASSERT_EQ(w.Release(0, F_DECISION), 0); // stored at the sibling: it acks
	EXPECT_TRUE(w.Got(0).empty());
	ASSERT_EQ(w.HeldCount(F_DECISION_ACK), 1u);
	ASSERT_EQ(w.Release(0, F_DECISION_ACK), 0);
	ASSERT_EQ(w.Order(0), (std::vector<std::string>{ "2:1" }));
}

TEST(Anysrc, AnysrcSameOrder_ThreeReplicasMajorityAck)
{
	World w(3, 3, 9, { 0, 1, 2 });
	Arrive(w, 0, 1, 1);
	Arrive(w, 0, 2, 1);
	Arrive(w, 1, 2, 1);
	Arrive(w, 1, 1, 1);
	Arrive(w, 2, 2, 1);
	Arrive(w, 2, 1, 1);
	for (uint32_t h = 0; h < 3; h++)
		ASSERT_EQ(w.Recv(h, 0, MSG_ANYSRC), 0);
	ASSERT_EQ(w.HeldCount(F_DECISION), 2u);
	// only replica 1 stores the decision: with itself that is 2 of 3
	ASSERT_EQ(w.HeldFrames()[0].to, 1u);
	ASSERT_EQ(w.Release(0, F_DECISION), 0);
	ASSERT_EQ(w.Release(0, F_DECISION_ACK), 0);
	EXPECT_EQ(w.Order(0), (std::vector<std::string>{ "1:1" }));
	EXPECT_EQ(w.Order(1), w.Order(0));
	EXPECT_TRUE(w.Got(2).empty()) << "replica 2 has not heard the decision";
	// replica 2 hears it late, after more traffic: it still follows
	Arrive(w, 2, 1, 2);
	ASSERT_EQ(w.Release(0, F_DECISION), 0);
	EXPECT_EQ(w.Order(2), w.Order(0));
	// the ack that comes after the majority changes nothing
	w.ReleaseAll(F_DECISION_ACK);
	EXPECT_EQ(w.Got(0).size(), 1u);
}

TEST(Anysrc, AnysrcNegativeControl_NoProtocolDiverges)
{
	// The same script as AnysrcSameOrder_FollowerFollowsLeader with the
	// decision protocol switched off: each replica takes its own arrival
	// order, and the orders differ. This is what the positive tests detect.
	World w(3, 2, 6, { 0, 1 }, CMP_FIRST, JOB_F_TEST_NO_ANYSRC_PROTOCOL);
	Arrive(w, 0, 1, 1);
	Arrive(w, 0, 2, 1);
	Arrive(w, 1, 2, 1);
	Arrive(w, 1, 1, 1);
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(w.Recv(0, 0, MSG_ANYSRC), 0);
		ASSERT_EQ(w.Recv(1, 0, MSG_ANYSRC), 0);
		w.ReleaseAll();
	}
	EXPECT_EQ(w.HeldCount(F_DECISION), 0u);
	EXPECT_EQ(w.Order(0), (std::vector<std::string>{ "1:1", "2:1" }));
	EXPECT_EQ(w.Order(1), (std::vector<std::string>{ "2:1", "1:1" }));
}

TEST(Anysrc, AnysrcMixedWithNamedReceives)
{
	// a named receive between ANYSRC receives takes its message out of the
	// candidates; the decisions stay aligned in both replicas
	World w(3, 2, 6, { 0, 1 });
	Arrive(w, 0, 1, 1);
	Arrive(w, 0, 2, 1);
	Arrive(w, 0, 1, 2);
	Arrive(w, 1, 1, 2);
	Arrive(w, 1, 2, 1);
	Arrive(w, 1, 1, 1);
	for (uint32_t h = 0; h < 2; h++)
		ASSERT_EQ(w.Recv(h, 0, 2), 0);       // named: 2:1 everywhere
	for (int i = 0; i < 2; i++) {
		for (uint32_t h = 0; h < 2; h++)
			ASSERT_EQ(w.Recv(h, 0, MSG_ANYSRC), 0);
		w.ReleaseAll();
	}
	EXPECT_EQ(w.Order(0), (std::vector<std::string>{ "2:1", "1:1", "1:2" }));
	EXPECT_EQ(w.Order(1), w.Order(0));
}

TEST(Anysrc, AnysrcDecisionFromWrongHostRefused)
{
	World w(3, 2, 6, { 0, 1 });
	frame f{};
	f.h.type = F_DECISION;
	f.u.decision.group = 0;
	f.u.decision.term = 1;
	f.u.decision.index = 1;
	f.u.decision.src = 1;
	f.u.decision.seq = 1;
	f.u.decision.from_rep = 0;
	// replica 0 of group 0 lives on host 0; host 4 may not speak for it
	EXPECT_NE(core_peer_frame(w.C(1), 4, &f, nullptr), 0);
	f.u.decision.group = 3;
	EXPECT_NE(core_peer_frame(w.C(1), 0, &f, nullptr), 0);
	f.u.decision.group = 0;
	f.u.decision.src = 3;
	EXPECT_NE(core_peer_frame(w.C(1), 0, &f, nullptr), 0);
	w.Pump(1);
}

// Randomised schedules: every replica gets the messages in its own random
// order, receives are posted and router frames released at random moments
// (FIFO per daemon-to-daemon link, as over TCP; the order across links and
// against message arrivals is random).
// Every replica must consume the same sequence, each message exactly once,
// and each sender's messages in their sequence order.
// Returns how many seeds ended with replicas in different orders.
static int RandomSchedules(uint32_t r, int seeds, uint32_t flags = 0)
{
	int diverged = 0;
	const uint32_t n = 4, m = 4 * r, K = 6; // senders 1..3, K messages each
	const uint32_t total = (n - 1) * K;
	for (int seed = 1; seed <= seeds; seed++) {
		SCOPED_TRACE("seed " + std::to_string(seed) + " r " + std::to_string(r));
		std::mt19937 rng((uint32_t)seed);
		std::vector<uint32_t> hosts;
		for (uint32_t k = 0; k < r; k++)
			hosts.push_back(k);
		World w(n, r, m, hosts, CMP_FIRST, flags);
		std::vector<std::vector<std::pair<uint32_t, uint64_t>>> todo(r);
		for (uint32_t k = 0; k < r; k++) {
			for (uint32_t s = 1; s < n; s++)
				for (uint64_t q = 1; q <= K; q++)
					todo[k].push_back({ s, q });
			std::shuffle(todo[k].begin(), todo[k].end(), rng);
		}
		std::vector<uint32_t> posted(r, 0);
		for (int step = 0; step < 20000; step++) {
			bool done = true;
			for (uint32_t k = 0; k < r; k++)
				done &= w.Got(k).size() == total;
			if (done)
				break;
			switch (rng() % 3) {
			case 0: {
				uint32_t k = rng() % r;
				if (!todo[k].empty()) {
					auto [s, q] = todo[k].back();
					todo[k].pop_back();
					Arrive(w, k, s, q);
				}
				break;
			}
			case 1:
				if (w.HeldCount()) {
					EXPECT_EQ(w.ReleaseLink(rng()), 0);
				}
				break;
			case 2: {
				uint32_t k = rng() % r;
				if (posted[k] == w.Got(k).size() && posted[k] < total) {
					EXPECT_EQ(w.Recv(k, 0, MSG_ANYSRC), 0);
					posted[k]++;
				}
				break;
			}
			}
		}
		for (uint32_t k = 0; k < r; k++) {
			EXPECT_EQ(w.Got(k).size(), total) << "replica " << k << " stalled";
			std::vector<uint64_t> last(n, 0);
			for (const Delivery &d : w.Got(k)) {
				EXPECT_EQ(d.seq, last[d.src] + 1) << "per-pair order / exactly once";
				last[d.src] = d.seq;
			}
			if (w.Order(k) != w.Order(0)) {
				diverged++;
				break;
			}
		}
	}
	return diverged;
}

TEST(Anysrc, AnysrcSameOrder_RandomSchedulesTwoReplicas)
{
	EXPECT_EQ(RandomSchedules(2, 300), 0);
}

TEST(Anysrc, AnysrcSameOrder_RandomSchedulesThreeReplicas)
{
	EXPECT_EQ(RandomSchedules(3, 200), 0);
}

TEST(Anysrc, AnysrcNegativeControl_RandomSchedulesDiverge)
{
	// the same schedules without the decision protocol: most diverge
	EXPECT_GT(RandomSchedules(2, 50, JOB_F_TEST_NO_ANYSRC_PROTOCOL), 25);
}
