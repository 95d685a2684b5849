// A regenerated copy that resumed behind its slowest live sibling (B57;
// runtime/core/detect.c, detect_late_copy). Every copy it sends to a
// receiver that took the message from its siblings already comes after the
// entry retired: too late to compare, dropped. Before B57 such copies said
// nothing to the lag detector either, so the copy's silence was counted from
// its *previous* incarnation's last message, and once one host verified it
// (its receiver there lagged, so it compared the copy) the others fenced it
// for lag while it ran a few messages behind its survivor
// (mig-regen-small-kill-in-precopy, 2026-11-27: "seq 9619: silent 5533 ms").
//
// Layout: n = 3, r = 3, m = 6. Group 0 (the one repaired) on hosts 0, 1, 2;
// group 1, the receivers, on hosts 3, 4, 5; group 2 on hosts 0, 1, 2 (its
// replica on host 1 speaks now and then: the copy's host is alive).
//
//   0.1 dies -> host 0 copies 0.0 into slot 1, on host 1.
//   0.2 is fast: it sends 1..N before the copy's news reaches anyone.
//   0.0 is slow: it sends one message a tick; the copy, one tick behind it.
//   1.0 (host 3) takes nothing: it compares the copy and verifies it.
//   1.1, 1.2 (hosts 4, 5) take everything: the copy's copies come late.
#include "core_harness.h"

namespace {

constexpr uint64_t kMs = 1000000ull;
constexpr uint32_t kHosts = 6;
constexpr uint64_t kBefore = 5; // what all three send before 0.1 dies
constexpr uint64_t kFast = 60;  // what 0.2 sends before the copy's news

std::string Payload(uint64_t seq) { return "m" + std::to_string(seq); }

void Tick(World &w, uint64_t t_ms)
{
	for (uint32_t h = 0; h < kHosts; h++) {
		core_tick(w.C(h), t_ms * kMs);
		w.Pump(h);
	}
	w.ReleaseAll(F_HEARTBEAT);
}

// Receiver 1.k on host h takes every message of sender 0 it can (named
// receives, one at a time, as a process does).
struct Taker {
	uint32_t host;
	size_t seen = 0;
	bool pending = false;
	void Take(World &w)
	{
		for (int guard = 0; guard < 100000; guard++) {
			if (pending && w.Got(host).size() == seen)
				return;
			pending = false;
			seen = w.Got(host).size();
			ASSERT_EQ(w.Recv(host, 1, 0), 0);
			pending = w.Got(host).size() == seen;
			seen = w.Got(host).size();
		}
	}
};

bool LagSuspected(World &w, const std::string &who)
{
	for (uint32_t h = 0; h < kHosts; h++)
		for (const std::string &e : w.Events(h))
			if (e.find("\"detector\":\"lag\"") != std::string::npos &&
			    e.find(who) != std::string::npos)
				return true;
	return false;
}

// The whole script; returns whether the copy (0.1) was suspected of lag.
bool CopyBehindItsSurvivor(uint32_t flags, bool *verified_elsewhere)
{
	World w(3, 3, kHosts, { 0, 1, 2, 3, 4, 5 }, CMP_FIRST, flags);
	uint64_t t = 1000;

	for (uint32_t h = 0; h < kHosts; h++)
		core_set_load(w.C(h), 4000); // 2 cores, 8 runnable: the time bound is 3 s
	for (; t <= 1100; t += 20)
		Tick(w, t);
	// every replica of group 0 sends kBefore messages (the lag detector
	// hears 0.1 speak), taken everywhere
	for (uint64_t s = 1; s <= kBefore; s++)
		for (uint32_t k = 0; k < 3; k++)
			EXPECT_EQ(w.Send(k, 0, 1, s, Payload(s)), 0);
	w.ReleaseAll();
	Taker r3{ 3 }, r4{ 4 }, r5{ 5 };
	r3.Take(w);
	r4.Take(w);
	r5.Take(w);
	r3.pending = false; // (1.0 takes nothing more: its last receive is left unanswered)
	EXPECT_EQ(w.Recv(0, 0, 1), 0); // 0.0 and 0.2 wait for group 1
	EXPECT_EQ(w.Recv(2, 0, 1), 0);
	core_local_exit(w.C(1), 0, 9 /* SIGKILL */);
	w.Pump(1);
	w.ReleaseAll();
	EXPECT_EQ(w.Captures(0).size(), 1u) << "host 0 copies 0.0 into the dead slot";
	if (w.Captures(0).empty())
		return false;
	const f_migrate copy = w.Captures(0)[0];
	EXPECT_EQ(copy.target, 1u) << "the least loaded host";
	const uint32_t tgt = copy.target;
	core_incoming(w.C(tgt), 0, 1, copy.inc, MIG_COPY, 0);
	w.Pump(tgt);
	for (uint32_t k = 0; k < 3; k++) // group 1 answers: 0.0 and 0.2 run on
		w.DataAll(1, k, 0, 1, "go");

	// the cut: the copy resumes at kBefore + 1. Its news waits on host
	// 0's links while 0.2 runs ahead.
	core_capture_done(w.C(0), 0, 0);
	w.Pump(0);
	for (uint64_t s = kBefore + 1; s <= kBefore + kFast; s++)
		EXPECT_EQ(w.Send(2, 0, 1, s, Payload(s)), 0);
	w.ReleaseWhere([](const Held &x) { return x.from == 2; });
	r4.Take(w);
	r5.Take(w);
	w.ReleaseAll(); // the news, the cut
	EXPECT_EQ(core_local_restored(w.C(tgt), 0), 0);
	w.Pump(tgt);
	EXPECT_TRUE(w.HasEvent(tgt, "migrate-restored", "\"group\":0,\"rep\":1"));

	// 1.6 s: 0.0 sends one message a tick, the copy the one before; 0.2
	// sends one more each tick too (the group goes on), and 2.1, on the
	// copy's host, speaks.
	uint64_t slow = kBefore, fast = kBefore + kFast;
	const size_t kills = w.Kills(tgt).size();
	for (uint64_t step = 0; step < 80; step++, t += 20) {
		slow++;
		fast++;
		EXPECT_EQ(w.Send(0, 0, 1, slow, Payload(slow)), 0);
		if (slow > kBefore + 1 && w.Kills(tgt).size() == kills) { // (fenced: gone)
			EXPECT_EQ(w.Send(tgt, 0, 1, slow - 1, Payload(slow - 1)), 0);
		}
		EXPECT_EQ(w.Send(2, 0, 1, fast, Payload(fast)), 0);
		EXPECT_EQ(w.Send(1, 2, 1, step + 1, "x"), 0);
		w.ReleaseAll();
		r4.Take(w);
		r5.Take(w);
		Tick(w, t);
	}
	*verified_elsewhere = w.HasEvent(3, "member-verified", "\"group\":0,\"rep\":1");
	EXPECT_FALSE(LagSuspected(w, "\"group\":0,\"rep\":0")) << "the slow survivor itself";
	EXPECT_GT(w.Stats(4).late, 0u) << "the copy's copies never came late on host 4";
	return LagSuspected(w, "\"group\":0,\"rep\":1");
}

} // namespace

TEST(LateCopy, CopyBehindItsSurvivorIsNotFencedForLag)
{
	bool verified = false;
	EXPECT_FALSE(CopyBehindItsSurvivor(0, &verified));
	EXPECT_TRUE(verified) << "host 3 compared the copy's messages and verified it";
}

TEST(LateCopy, NegativeControl_LateCopiesSaySilent)
{
	bool verified = false;
	EXPECT_TRUE(CopyBehindItsSurvivor(CORE_F_TEST_LATE_SILENT, &verified));
	EXPECT_TRUE(verified);
}
