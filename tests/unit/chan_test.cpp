// Sequence numbers, exactly-once, comparison and matching (runtime/core
// chan.c, match.c), driven with scripted events on one core.
//
// Layout n=2 r=3 m=6: group 0 lives on hosts 0,1,2 and group 1 on hosts
// 3,4,5. Only host 0 (replica 0.0) is simulated; the test plays the three
// replicas of group 1 sending to it.
#include <algorithm>

#include "core_harness.h"

namespace {
constexpr uint32_t kRecv = 0;   // host of 0.0
std::string P(int i) { return "payload-" + std::to_string(i); }
} // namespace

TEST(Chan, ExactlyOnce_CopiesFromEverySenderReplica)
{
	World w(2, 3, 6, { kRecv });
	for (uint32_t k = 0; k < 3; k++)
		ASSERT_EQ(w.Data(1, k, 0, 0, 1, P(1)), 0);
	ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);
	ASSERT_EQ(w.Got(kRecv).size(), 1u);
	EXPECT_EQ(w.Got(kRecv)[0].payload, P(1));
	EXPECT_EQ(w.Got(kRecv)[0].seq, 1u);
	EXPECT_EQ(w.Stats(kRecv).delivered, 1u);
	EXPECT_EQ(w.Stats(kRecv).duplicates, 2u);
	EXPECT_EQ(w.Stats(kRecv).mismatches, 0u);
	// nothing else to receive: a second receive stays blocked
	ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);
	EXPECT_EQ(w.Got(kRecv).size(), 1u);
}

TEST(Chan, ExactlyOnce_CopiesAfterDeliveryAreComparedNotDelivered)
{
	World w(2, 3, 6, { kRecv });
	ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);
	ASSERT_EQ(w.Data(1, 2, 0, 0, 1, P(1)), 0);   // first copy: delivered at once
	ASSERT_EQ(w.Got(kRecv).size(), 1u);
	ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);  // blocked: nothing else was sent
	ASSERT_EQ(w.Data(1, 0, 0, 0, 1, P(1)), 0);
	ASSERT_EQ(w.Data(1, 1, 0, 0, 1, P(1)), 0);
	// the same replica's copy again (a forwarded or repeated copy)
	ASSERT_EQ(w.Data(1, 1, 0, 0, 1, P(1)), 0);
	EXPECT_EQ(w.Got(kRecv).size(), 1u);
	EXPECT_EQ(w.Stats(kRecv).delivered, 1u);
	EXPECT_GE(w.Stats(kRecv).duplicates, 2u); // never silently dropped
	EXPECT_EQ(w.Stats(kRecv).mismatches, 0u);
}

TEST(Chan, ExactlyOnce_NegativeControlNoDedupe)
{
	// JOB_F_TEST_NO_DEDUPE switches the rule off: a second replica's copy
	// of a consumed message is then delivered again, which the
	// ExactlyOnce tests above would catch. (n=2 r=2 m=4: 0.0 on host 0,
	// sender replicas 1.0 and 1.1 on hosts 2 and 3.)
	World w(2, 2, 4, { 0 }, CMP_FIRST, JOB_F_TEST_NO_DEDUPE);
	ASSERT_EQ(w.Recv(0, 0, 1), 0);
	ASSERT_EQ(w.Data(1, 0, 0, 0, 1, P(1)), 0);
	ASSERT_EQ(w.Data(1, 1, 0, 0, 1, P(1)), 0);
	ASSERT_EQ(w.Recv(0, 0, 1), 0);
	EXPECT_EQ(w.Got(0).size(), 2u) << "without dedupe the copy is delivered again";
}

TEST(Chan, PerPairOrder_OutOfOrderArrival)
{
	World w(2, 3, 6, { kRecv });
	ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);
	for (int s : { 3, 5, 2, 4 })
		ASSERT_EQ(w.Data(1, 0, 0, 0, (uint64_t)s, P(s)), 0);
	EXPECT_TRUE(w.Got(kRecv).empty()) << "seq 1 missing: nothing may be delivered";
	ASSERT_EQ(w.Data(1, 1, 0, 0, 1, P(1)), 0); // seq 1 from another replica
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);
	ASSERT_EQ(w.Got(kRecv).size(), 5u);
	for (int s = 1; s <= 5; s++) {
		EXPECT_EQ(w.Got(kRecv)[s - 1].seq, (uint64_t)s);
		EXPECT_EQ(w.Got(kRecv)[s - 1].payload, P(s));
	}
}

TEST(Chan, PerPairOrder_EachSenderReplicaOutOfOrder)
{
	// every sender replica's copies arrive in a different order; the
	// receiver still delivers 1..N once each, in order
	World w(2, 3, 6, { kRecv });
	const int N = 12;
	std::vector<int> order[3];
	for (int k = 0; k < 3; k++) {
		for (int s = 1; s <= N; s++)
			order[k].push_back(s);
		std::rotate(order[k].begin(), order[k].begin() + 4 * k + 1, order[k].end());
		if (k == 2)
			std::reverse(order[k].begin(), order[k].end());
	}
	for (int i = 0; i < N; i++)
		for (int k = 0; k < 3; k++)
			ASSERT_EQ(w.Data(1, (uint32_t)k, 0, 0, (uint64_t)order[k][i], P(order[k][i])), 0);
	for (int i = 0; i < N + 1; i++) // the last one stays blocked
		ASSERT_EQ(w.Recv(kRecv, 0, 1), 0) << i;
	ASSERT_EQ(w.Got(kRecv).size(), (size_t)N);
	for (int s = 1; s <= N; s++)
		EXPECT_EQ(w.Got(kRecv)[s - 1].seq, (uint64_t)s);
	EXPECT_EQ(w.Stats(kRecv).duplicates, 2u * N);
	EXPECT_EQ(w.Stats(kRecv).mismatches, 0u);
}

TEST(Chan, Mismatch_DifferingCopyCounted)
{
	World w(2, 3, 6, { kRecv });
	ASSERT_EQ(w.Data(1, 0, 0, 0, 1, "abcdefgh"), 0);
	ASSERT_EQ(w.Data(1, 1, 0, 0, 1, "abcdXfgh"), 0);  // corrupted at byte 4
	ASSERT_EQ(w.Data(1, 2, 0, 0, 1, "abcdefgh"), 0);
	ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);
	ASSERT_EQ(w.Got(kRecv).size(), 1u);
	EXPECT_EQ(w.Got(kRecv)[0].payload, "abcdefgh"); // first mode: the first copy
	EXPECT_EQ(w.Stats(kRecv).mismatches, 1u);
	EXPECT_EQ(w.Stats(kRecv).duplicates, 1u);
	bool logged = false;
	for (const std::string &e : w.Events(kRecv))
		logged |= e.find("mismatch") != std::string::npos &&
			  e.find("\"seq\":1") != std::string::npos &&
			  e.find("\"byte\":4") != std::string::npos;
	EXPECT_TRUE(logged) << "the mismatch report names channel, seq and byte";
	// the differing copy is never delivered, not even later
	ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);
	EXPECT_EQ(w.Got(kRecv).size(), 1u);
}

TEST(Chan, Mismatch_SameBytesUnderAnotherTagDiffer)
{
	// the digest covers the header: a copy with the right bytes and the
	// wrong tag is a mismatch, not a duplicate
	World w(2, 3, 6, { kRecv });
	ASSERT_EQ(w.Data(1, 0, 0, 0, 1, "same", 1), 0);
	ASSERT_EQ(w.Data(1, 1, 0, 0, 1, "same", 2), 0);
	EXPECT_EQ(w.Stats(kRecv).mismatches, 1u);
	EXPECT_EQ(w.Stats(kRecv).duplicates, 0u);
}

TEST(Chan, VoteMode_WaitsForMajority)
{
	World w(2, 3, 6, { kRecv }, CMP_VOTE);
	ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);
	ASSERT_EQ(w.Data(1, 0, 0, 0, 1, "good"), 0);
	EXPECT_TRUE(w.Got(kRecv).empty()) << "1 of 3 is no majority";
	ASSERT_EQ(w.Data(1, 1, 0, 0, 1, "evil"), 0);
	EXPECT_TRUE(w.Got(kRecv).empty()) << "1+1 disagreeing is no majority";
	ASSERT_EQ(w.Data(1, 2, 0, 0, 1, "good"), 0);
	ASSERT_EQ(w.Got(kRecv).size(), 1u);
	EXPECT_EQ(w.Got(kRecv)[0].payload, "good");
	EXPECT_EQ(w.Stats(kRecv).mismatches, 1u);
}

// Issue 6's vote tie: r = 3 in vote mode, one sender replica fenced, the two
// live ones disagree. No majority can come from them: the lowest live
// replica's copy is taken (the same in every receiver replica: detection
// only, like r = 2) and the tie is reported, instead of a receiver that
// hangs until a detector fences someone.
static void FenceSender(World &w, uint32_t host, uint32_t g, uint32_t k)
{
	frame f{};
	f.h.type = F_MEMBER;
	f.u.member.group = g;
	f.u.member.rep = (uint16_t)k;
	f.u.member.state = MEMBER_DEAD;
	f.u.member.epoch = 2;
	f.u.member.inc = 1;
	f.u.member.host = w.HostOf(g, k);
	f.u.member.reason = SUS_EXIT;
	ASSERT_EQ(core_peer_frame(w.C(host), w.HostOf(g, 0), &f, nullptr), 0);
	w.Pump(host);
}

static bool Mentions(const std::vector<std::string> &v, const char *s)
{
	for (const std::string &x : v)
		if (x.find(s) != std::string::npos)
			return true;
	return false;
}

TEST(Chan, VoteMode_TieOfTwoLiveTakesTheLowestAndReports)
{
	for (int order = 0; order < 2; order++) {
		World w(2, 3, 6, { kRecv }, CMP_VOTE);
		FenceSender(w, kRecv, 1, 2);
		ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);
		// the copies in either order: the choice does not depend on arrival
		ASSERT_EQ(w.Data(1, order ? 1 : 0, 0, 0, 1, order ? "evil" : "good"), 0);
		EXPECT_TRUE(w.Got(kRecv).empty()) << "one of two live copies is not yet a tie";
		ASSERT_EQ(w.Data(1, order ? 0 : 1, 0, 0, 1, order ? "good" : "evil"), 0);
		ASSERT_EQ(w.Got(kRecv).size(), 1u) << "order " << order;
		EXPECT_EQ(w.Got(kRecv)[0].payload, "good") << "the copy of 1.0, the lowest live";
		EXPECT_TRUE(Mentions(w.Events(kRecv), "vote-tie"));
		EXPECT_TRUE(Mentions(w.Events(kRecv), "mismatch"));
	}
}

TEST(Chan, NegativeControl_VoteTieRuleOffHangs)
{
	World w(2, 3, 6, { kRecv }, CMP_VOTE, CORE_F_TEST_NO_VOTE_TIE);
	FenceSender(w, kRecv, 1, 2);
	ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);
	ASSERT_EQ(w.Data(1, 0, 0, 0, 1, "good"), 0);
	ASSERT_EQ(w.Data(1, 1, 0, 0, 1, "evil"), 0);
	EXPECT_TRUE(w.Got(kRecv).empty()) << "without the tie rule two disagreeing copies wait";
	EXPECT_FALSE(Mentions(w.Events(kRecv), "vote-tie"));
}

TEST(Chan, VoteMode_MajorityOutvotesFirstCopy)
{
	World w(2, 3, 6, { kRecv }, CMP_VOTE);
	ASSERT_EQ(w.Data(1, 0, 0, 0, 1, "evil"), 0);
	ASSERT_EQ(w.Data(1, 1, 0, 0, 1, "good"), 0);
	ASSERT_EQ(w.Data(1, 2, 0, 0, 1, "good"), 0);
	ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);
	ASSERT_EQ(w.Got(kRecv).size(), 1u);
	EXPECT_EQ(w.Got(kRecv)[0].payload, "good");
}

TEST(Chan, FirstMode_DeliversFirstCopyAtOnce)
{
	World w(2, 3, 6, { kRecv }, CMP_FIRST);
	ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);
	ASSERT_EQ(w.Data(1, 2, 0, 0, 1, "x"), 0);
	EXPECT_EQ(w.Got(kRecv).size(), 1u);
}

TEST(Chan, TagMatching_InSeqOrder)
{
	World w(2, 3, 6, { kRecv });
	ASSERT_EQ(w.Data(1, 0, 0, 0, 1, "a5", 5), 0);
	ASSERT_EQ(w.Data(1, 0, 0, 0, 2, "b7", 7), 0);
	ASSERT_EQ(w.Data(1, 0, 0, 0, 3, "c5", 5), 0);
	ASSERT_EQ(w.Data(1, 0, 0, 0, 4, "d7", 7), 0);
	ASSERT_EQ(w.Recv(kRecv, 0, 1, 7), 0);
	ASSERT_EQ(w.Recv(kRecv, 0, 1, 5), 0);
	ASSERT_EQ(w.Recv(kRecv, 0, 1, 7), 0);
	ASSERT_EQ(w.Recv(kRecv, 0, 1, MSG_ANYTAG), 0);
	std::vector<std::string> got;
	for (const Delivery &d : w.Got(kRecv))
		got.push_back(d.payload);
	EXPECT_EQ(got, (std::vector<std::string>{ "b7", "a5", "d7", "c5" }));
	EXPECT_EQ(w.Got(kRecv)[0].tag, 7);
	EXPECT_EQ(w.Got(kRecv)[1].tag, 5);
}

TEST(Chan, TagMatching_NeverSkipsAGap)
{
	// seq 2 (tag 7) is here but seq 1 is not: whether seq 1 also has tag 7
	// is unknown, so a tag-7 receive must wait (the same in every replica)
	World w(2, 3, 6, { kRecv });
	ASSERT_EQ(w.Data(1, 0, 0, 0, 2, "second", 7), 0);
	ASSERT_EQ(w.Recv(kRecv, 0, 1, 7), 0);
	EXPECT_TRUE(w.Got(kRecv).empty());
	ASSERT_EQ(w.Data(1, 0, 0, 0, 1, "first", 7), 0);
	ASSERT_EQ(w.Got(kRecv).size(), 1u);
	EXPECT_EQ(w.Got(kRecv)[0].payload, "first");
}

TEST(Chan, Etrunc_LeavesMessageQueued)
{
	World w(2, 3, 6, { kRecv });
	std::string big(1000, 'z');
	ASSERT_EQ(w.Data(1, 0, 0, 0, 1, big), 0);
	ASSERT_EQ(w.Data(1, 0, 0, 0, 2, "next"), 0);
	ASSERT_EQ(w.Recv(kRecv, 0, 1, MSG_ANYTAG, 999), 0);
	ASSERT_EQ(w.Got(kRecv).size(), 1u);
	EXPECT_TRUE(w.Got(kRecv)[0].trunc);
	EXPECT_EQ(w.Got(kRecv)[0].size, 1000u);
	EXPECT_EQ(w.Got(kRecv)[0].src, 1u);
	EXPECT_EQ(w.Stats(kRecv).delivered, 0u);
	// again too small: still the same message, not the next one
	ASSERT_EQ(w.Recv(kRecv, 0, 1, MSG_ANYTAG, 10), 0);
	ASSERT_EQ(w.Got(kRecv).size(), 2u);
	EXPECT_TRUE(w.Got(kRecv)[1].trunc);
	EXPECT_EQ(w.Got(kRecv)[1].size, 1000u);
	ASSERT_EQ(w.Recv(kRecv, 0, 1, MSG_ANYTAG, 1000), 0);
	ASSERT_EQ(w.Got(kRecv).size(), 3u);
	EXPECT_FALSE(w.Got(kRecv)[2].trunc);
	EXPECT_EQ(w.Got(kRecv)[2].seq, 1u);
	EXPECT_EQ(w.Got(kRecv)[2].payload, big);
	ASSERT_EQ(w.Recv(kRecv, 0, 1, MSG_ANYTAG, 1000), 0);
	EXPECT_EQ(w.Got(kRecv).back().payload, "next");
}

TEST(Chan, EmptyMessage)
{
	World w(2, 3, 6, { kRecv });
	ASSERT_EQ(w.Data(1, 0, 0, 0, 1, ""), 0);
	ASSERT_EQ(w.Recv(kRecv, 0, 1, MSG_ANYTAG, 0), 0);
	ASSERT_EQ(w.Got(kRecv).size(), 1u);
	EXPECT_FALSE(w.Got(kRecv)[0].trunc);
	EXPECT_EQ(w.Got(kRecv)[0].size, 0u);
}

TEST(Chan, LateCopyAfterRetirementIgnored)
{
	World w(2, 1, 2, { 0 });
	ASSERT_EQ(w.Data(1, 0, 0, 0, 1, "once"), 0);
	ASSERT_EQ(w.Recv(0, 0, 1), 0);
	ASSERT_EQ(w.Got(0).size(), 1u);
	// every live sender replica's copy compared and consumed: retired
	ASSERT_EQ(w.Data(1, 0, 0, 0, 1, "once"), 0);
	ASSERT_EQ(w.Recv(0, 0, 1), 0);
	EXPECT_EQ(w.Got(0).size(), 1u);
}

TEST(Chan, MulticastToEveryReplicaOfDestination)
{
	// host 0 holds 0.0 and sends to group 1 (replicas on hosts 3, 4, 5)
	World w(2, 3, 6, { 0 });
	ASSERT_EQ(w.Send(0, 0, 1, 1, "hi", 3), 0);
	std::vector<uint32_t> to;
	for (const Held &x : w.HeldFrames()) {
		ASSERT_EQ(x.f.h.type, F_DATA);
		EXPECT_EQ(x.f.u.data.seq, 1u);
		EXPECT_EQ(x.f.u.data.tag, 3);
		EXPECT_EQ(x.f.u.data.src_rep, 0);
		EXPECT_EQ(w.HostOf(1, x.f.u.data.dst_rep), x.to);
		to.push_back(x.to);
	}
	std::sort(to.begin(), to.end());
	EXPECT_EQ(to, (std::vector<uint32_t>{ 3, 4, 5 }));
}

TEST(Chan, LocalCopyDeliveredWithoutNetwork)
{
	// n=2 r=1 m=1: both groups on host 0; a send is delivered in place
	World w(2, 1, 1, { 0 });
	ASSERT_EQ(w.Recv(0, 1, 0), 0);
	ASSERT_EQ(w.Send(0, 0, 1, 1, "local"), 0);
	EXPECT_EQ(w.HeldCount(), 0u);
	ASSERT_EQ(w.Got(0).size(), 1u);
	EXPECT_EQ(w.Got(0)[0].group, 1u);
	EXPECT_EQ(w.Got(0)[0].payload, "local");
}

TEST(Chan, InvalidInputRefused)
{
	World w(2, 3, 6, { kRecv });
	frame f{};
	f.h.type = F_DATA;
	f.u.data = World::Copy(1, 0, 0, 0, 1, 1);
	// from the wrong host: 1.0 lives on host 3, not 4
	EXPECT_NE(core_peer_frame(w.C(kRecv), 4, &f, MakeBuf("x")), 0);
	// from itself, or a host that does not exist
	EXPECT_NE(core_peer_frame(w.C(kRecv), kRecv, &f, MakeBuf("x")), 0);
	EXPECT_NE(core_peer_frame(w.C(kRecv), 6, &f, MakeBuf("x")), 0);
	// a group past n, a replica past r
	f.u.data.src = 2;
	EXPECT_NE(core_peer_frame(w.C(kRecv), 3, &f, MakeBuf("x")), 0);
	f.u.data.src = 1;
	f.u.data.src_rep = 3;
	EXPECT_NE(core_peer_frame(w.C(kRecv), 3, &f, MakeBuf("x")), 0);
	f.u.data.src_rep = 0;
	// a payload whose size disagrees with the header
	EXPECT_NE(core_peer_frame(w.C(kRecv), 3, &f, MakeBuf("xy")), 0);
	// frames a daemon never sends to a peer
	frame g{};
	g.h.type = L_SEND;
	EXPECT_NE(core_peer_frame(w.C(kRecv), 3, &g, nullptr), 0);
	// local receive from a rank past n
	EXPECT_EQ(w.Recv(kRecv, 0, 2), MSG_ERANK);
	EXPECT_EQ(w.Recv(kRecv, 0, -2), MSG_ERANK);
	// a local send with seq 0 or to a rank past n
	EXPECT_NE(w.Send(kRecv, 0, 1, 0, "x"), 0);
	EXPECT_NE(w.Send(kRecv, 0, 2, 1, "x"), 0);
	w.Pump(kRecv);
	EXPECT_TRUE(w.Got(kRecv).empty());
	EXPECT_EQ(w.Stats(kRecv).delivered, 0u);
}

TEST(Chan, CopyForAReplicaNotHereIsDropped)
{
	World w(2, 3, 6, { kRecv });
	// 0.1 lives on host 1, not on host 0
	frame f{};
	f.h.type = F_DATA;
	f.u.data = World::Copy(1, 0, 0, 1, 1, 1);
	EXPECT_EQ(core_peer_frame(w.C(kRecv), 3, &f, MakeBuf("x")), 0);
	w.Pump(kRecv);
	// dropped, or redirected to where 0.1 lives (a reactive map update or
	// a forward): never delivered to 0.0
	EXPECT_TRUE(w.Stats(kRecv).dropped == 1 || !w.HeldFrames().empty());
	ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);
	EXPECT_TRUE(w.Got(kRecv).empty());
}

TEST(Chan, Xxh3Digest_MismatchAndDuplicates)
{
	// --digest xxh3 (JOB_F_DIGEST_XXH3): the same comparison, a cheaper digest
	World w(2, 3, 6, { kRecv }, CMP_FIRST, JOB_F_DIGEST_XXH3);
	ASSERT_EQ(w.Data(1, 0, 0, 0, 1, "abcdefgh"), 0);
	ASSERT_EQ(w.Data(1, 1, 0, 0, 1, "abcdXfgh"), 0);
	ASSERT_EQ(w.Data(1, 2, 0, 0, 1, "abcdefgh"), 0);
	ASSERT_EQ(w.Data(1, 0, 0, 0, 2, "same", 1), 0);
	ASSERT_EQ(w.Data(1, 1, 0, 0, 2, "same", 2), 0); // right bytes, wrong tag
	EXPECT_EQ(w.Stats(kRecv).mismatches, 2u);
	EXPECT_EQ(w.Stats(kRecv).duplicates, 1u);
	ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);
	ASSERT_EQ(w.Got(kRecv).size(), 1u);
	EXPECT_EQ(w.Got(kRecv)[0].payload, "abcdefgh");
}

TEST(Chan, RetainedCopyOfAMoveIsValidatedAndNeverDelivered)
{
	// DATA_F_RET: a moving sender's retained message in its cut (B54). Here
	// no replica of group 1 moves in: kept by no one, handed to no process.
	World w(2, 3, 6, { kRecv });
	frame f{};
	f.h.type = F_DATA;
	f.h.flags = DATA_F_RET;
	f.u.data = World::Copy(1, 0, 0, 0, 1, 1);
	f.u.data.epoch = 3; // the host whose daemon sent its copies
	EXPECT_EQ(core_peer_frame(w.C(kRecv), 3, &f, MakeBuf("x")), 0);
	// out of range: no such host, group, replica; no seq; a wrong size
	f.u.data.epoch = 6;
	EXPECT_NE(core_peer_frame(w.C(kRecv), 3, &f, MakeBuf("x")), 0);
	f.u.data.epoch = 3;
	f.u.data.dst = 2;
	EXPECT_NE(core_peer_frame(w.C(kRecv), 3, &f, MakeBuf("x")), 0);
	f.u.data.dst = 0;
	f.u.data.src_rep = 3;
	EXPECT_NE(core_peer_frame(w.C(kRecv), 3, &f, MakeBuf("x")), 0);
	f.u.data.src_rep = 0;
	f.u.data.seq = 0;
	EXPECT_NE(core_peer_frame(w.C(kRecv), 3, &f, MakeBuf("x")), 0);
	f.u.data.seq = 1;
	EXPECT_NE(core_peer_frame(w.C(kRecv), 3, &f, MakeBuf("xy")), 0);
	w.Pump(kRecv);
	ASSERT_EQ(w.Recv(kRecv, 0, 1), 0);
	EXPECT_TRUE(w.Got(kRecv).empty());
	EXPECT_EQ(w.Stats(kRecv).delivered, 0u);
}
