// Regeneration races through the real protocol cores of six daemons, with
// the network scripted (core_harness.h): the chain behind last session's CI
// hang (apps-dirichlet-msg-r3-kill, fixed in 991cf41 and a5fe7e2; docs/
// protocol.md I5). A copy's source was fenced (lag) while its own copy was
// under way; the next coordinator copied the same slot again, and
//  - both copies had the same incarnation (inc + 1), so the first copy's late
//    restore failure was taken for the second's: it was fenced and killed on
//    its target (CopyAfterSourceFencedHasItsOwnIncarnation);
//  - a copy fenced before its image was out was still announced by its
//    source, and a daemon that had the fence first took the news: a joining
//    member with no process behind it, which its coordinator never repaired
//    (JoiningNewsOfAFencedCopyIsOnlyAcked).
//
// Layout: n = 2, r = 3, m = 6. Group 0 (the one repaired) on hosts 0, 1, 2;
// group 1 on hosts 3, 4, 5 (its processes idle: the test plays their part).
#include "core_harness.h"

namespace {

constexpr uint64_t kMs = 1000000ull;
constexpr uint32_t kHosts = 6;

// Every host ticks each 20 ms over (from, to]; heartbeats flow.
void Tick(World &w, uint64_t from_ms, uint64_t to_ms)
{
	for (uint64_t t = from_ms + 20; t <= to_ms; t += 20) {
		for (uint32_t h = 0; h < kHosts; h++) {
			core_tick(w.C(h), t * kMs);
			w.Pump(h);
		}
		w.ReleaseAll(F_HEARTBEAT);
	}
}

// Release every held frame except those on link from -> to (a slow TCP
// connection: FIFO, so they wait in order).
void ReleaseAllBut(World &w, uint32_t from, uint32_t to)
{
	w.ReleaseWhere([&](const Held &x) { return x.from != from || x.to != to; });
}

// Up to the first copy: 0.1's process is killed; its coordinator, host 0,
// fences it and orders a copy of 0.0 into slot 1 (its own replica, waiting
// in a receive: the capture starts at once). The copy's target starts its
// restore (the image connection's hello). Returns the first copy's order.
f_migrate KillAndFirstCopy(World &w)
{
	Tick(w, 1000, 1100);
	EXPECT_EQ(w.Recv(0, 0, 1), 0); // 0.0 and 0.2 wait for group 1
	EXPECT_EQ(w.Recv(2, 0, 1), 0);
	core_local_exit(w.C(1), 0, 9 /* SIGKILL */);
	w.Pump(1);
	w.ReleaseAll();
	EXPECT_TRUE(w.HasEvent(0, "fence", "\"group\":0,\"rep\":1"));
	EXPECT_EQ(w.Captures(0).size(), 1u) << "the coordinator copies 0.0 into the dead slot";
	if (w.Captures(0).empty())
		return f_migrate{};
	f_migrate first = w.Captures(0)[0];
	EXPECT_EQ(first.rep, 1);
	EXPECT_EQ(first.src_rep, 0);
	EXPECT_NE(first.target, 0u);
	EXPECT_NE(first.target, 2u);
	core_incoming(w.C(first.target), 0, 1, first.inc, MIG_COPY, 0);
	w.Pump(first.target);
	return first;
}

} // namespace

// I5: two copies of one slot never share an incarnation. The first copy's
// source (0.0) is fenced for lag while the copy is under way; after the
// lease the next coordinator (host 2) copies 0.2 into slot 1; that copy is
// restored and joins; only then does the first copy's target report its
// restore failed (the image stream died with 0.0). The failure concerns the
// first copy only: the second stays, everywhere, the slot's member, and is
// verified by its first message. With inc + 1 for both (before 991cf41) the
// failure fenced the second copy and killed it on its target.
TEST(Regen, CopyAfterSourceFencedHasItsOwnIncarnation)
{
	World w(2, 3, kHosts, { 0, 1, 2, 3, 4, 5 });
	f_migrate first = KillAndFirstCopy(w);
	ASSERT_NE(first.inc, 0u);

	Tick(w, 1100, 1300);
	core_suspect(w.C(2), 0, 0, SUS_LAG, "test: stalled in its own copy");
	w.Pump(2);
	w.ReleaseAll();
	ASSERT_TRUE(w.HasEvent(2, "fence", "\"group\":0,\"rep\":0"));
	ASSERT_FALSE(w.Kills(0).empty()) << "0.0 is killed by its fence";
	core_local_exit(w.C(0), 0, 9); // its daemon reaps it
	w.Pump(0);

	// the lease of slot 1 (killed at 1100) runs out before slot 0's
	// (fenced at 1300): host 2's repair scan copies slot 1
	Tick(w, 1300, 1500);
	ASSERT_EQ(w.Captures(2).size(), 1u) << "host 2 copies 0.2 into slot 1 after the lease";
	f_migrate second = w.Captures(2)[0];
	ASSERT_EQ(second.rep, 1);
	EXPECT_NE(second.inc, first.inc) << "two copies of one slot share incarnation " << first.inc;
	EXPECT_GT(second.inc, first.inc);

	const uint32_t t2 = second.target;
	const size_t kills_before = w.Kills(t2).size();
	core_incoming(w.C(t2), 0, 1, second.inc, MIG_COPY, 2);
	w.Pump(t2);
	core_capture_done(w.C(2), 0, 0);
	w.Pump(2);
	w.ReleaseAll();
	ASSERT_EQ(core_local_restored(w.C(t2), 0), 0);
	w.Pump(t2);
	ASSERT_TRUE(w.HasEvent(t2, "migrate-restored", "\"group\":0,\"rep\":1"));

	// late: the first copy's restore fails on its target
	core_restore_failed(w.C(first.target), 0);
	w.Pump(first.target);
	w.ReleaseAll();
	Tick(w, 1500, 1700);

	EXPECT_EQ(w.Kills(t2).size(), kills_before)
		<< "the first copy's failure killed the second copy on host " << t2;
	for (uint32_t h = 0; h < kHosts; h++) {
		EXPECT_TRUE(core_alive(w.C(h), 0, 1)) << "host " << h;
		EXPECT_EQ(core_inc(w.C(h), 0, 1), second.inc) << "host " << h;
		EXPECT_EQ(core_host_of(w.C(h), 0, 1), t2) << "host " << h;
	}

	// the second copy works: its first message matches 0.2's and verifies it
	ASSERT_EQ(w.Send(2, 0, 1, 1, "m1"), 0);
	ASSERT_EQ(w.Send(t2, 0, 1, 1, "m1"), 0);
	w.ReleaseAll();
	for (uint32_t h = 0; h < kHosts; h++)
		EXPECT_FALSE(core_joining(w.C(h), 0, 1)) << "host " << h << " still counts it joining";
}

// I5: a copy fenced before its image was out never joins. The first copy's
// source (0.0) is fenced for lag by host 2, whose news reaches 0.0's daemon
// late (a slow link). The copy's target hears of that fence, its restore
// fails, and it suspects the copy to host 2, which fences the copy's
// incarnation (one it never heard of). Only then does the source, not yet
// told of anything, finish its capture and announce the copy as joining:
// every daemon that had the fence first must only acknowledge that news,
// and the coordinator repairs the slot again. Taken (before a5fe7e2), the
// news made the slot a joining member with no process behind it, at the
// coordinator too, whose repair scan then never copied it again.
TEST(Regen, JoiningNewsOfAFencedCopyIsOnlyAcked)
{
	World w(2, 3, kHosts, { 0, 1, 2, 3, 4, 5 });
	f_migrate first = KillAndFirstCopy(w);
	ASSERT_NE(first.inc, 0u);
	const uint32_t t1 = first.target;

	Tick(w, 1100, 1300);
	core_suspect(w.C(2), 0, 0, SUS_LAG, "test: stalled in its own copy");
	w.Pump(2);
	ReleaseAllBut(w, 2, 0); // the source's daemon does not hear of it yet
	ASSERT_TRUE(w.HasEvent(2, "fence", "\"group\":0,\"rep\":0"));
	ASSERT_FALSE(core_alive(w.C(t1), 0, 0));

	core_restore_failed(w.C(t1), 0);
	w.Pump(t1);
	ReleaseAllBut(w, 2, 0);
	ASSERT_TRUE(w.HasEvent(2, "fence", "\"group\":0,\"rep\":1"))
		<< "host 2 fences the copy's incarnation on its target's suspicion";

	// the source's capture completes: it announces the copy
	core_capture_done(w.C(0), 0, 0);
	w.Pump(0);
	ReleaseAllBut(w, 2, 0);
	w.ReleaseAll(); // now the source hears of its own fence, and of the copy's
	for (uint32_t h = 0; h < kHosts; h++)
		EXPECT_FALSE(core_alive(w.C(h), 0, 1) && core_inc(w.C(h), 0, 1) == first.inc)
			<< "host " << h << " counts the fenced copy (inc " << first.inc << ") as a member";

	// the coordinator (host 2) repairs slot 1 again, with a newer copy
	core_local_exit(w.C(0), 0, 9);
	w.Pump(0);
	Tick(w, 1300, 1700);
	bool again = false;
	for (const f_migrate &m : w.Captures(2))
		again |= m.rep == 1 && m.inc > first.inc;
	EXPECT_TRUE(again) << "host 2 never copied slot 1 again";
}

// B67: a move and a copy of one group, ordered by different daemons at once,
// picked the same host; the second image replaced the replica already there
// (two replicas of a group on one host, msgsim seed 159 of --regen
// --migrations 2 --r 3 --crashes 1). The target refuses it before its GO and
// changes nothing: the copy under way stays, and so does a running replica.
// Negative control: CORE_T_TAKE_SECOND_REPLICA takes the image all the same.
void SecondReplicaOfAGroup(uint32_t test, bool refused)
{
	World w(2, 3, kHosts, { 0, 1, 2, 3, 4, 5 }, CMP_FIRST, 0, test);
	f_migrate first = KillAndFirstCopy(w);
	ASSERT_NE(first.inc, 0u);
	uint32_t rep = 9;

	// a move of 0.2 (host 2) to where the copy of slot 1 is being restored
	EXPECT_EQ(core_incoming_refused(w.C(first.target), 0, 2), refused);
	EXPECT_EQ(core_incoming(w.C(first.target), 0, 2, 2, MIG_MOVE, 2), refused ? -1 : 0);
	w.Pump(first.target);
	ASSERT_TRUE(core_is_local(w.C(first.target), 0, &rep));
	EXPECT_EQ(rep, refused ? 1u : 2u) << "the copy under way is still the replica there";
	EXPECT_EQ(w.HasEvent(first.target, "restore-refused", "\"group\":0,\"rep\":2"), refused);

	// a copy of slot 1 to host 0, where 0.0 runs
	EXPECT_EQ(core_incoming_refused(w.C(0), 0, 1), refused);
	EXPECT_EQ(core_incoming(w.C(0), 0, 1, first.inc + 1, MIG_COPY, 2), refused ? -1 : 0);
	w.Pump(0);
	ASSERT_TRUE(core_is_local(w.C(0), 0, &rep));
	EXPECT_EQ(rep, refused ? 0u : 1u) << "0.0 is still the replica on host 0";
}

TEST(Regen, ImageOfASecondReplicaOfAGroupIsRefused)
{
	SecondReplicaOfAGroup(0, true);
}

TEST(Regen, NegativeControlImageOfASecondReplicaTaken)
{
	SecondReplicaOfAGroup(CORE_T_TAKE_SECOND_REPLICA, false);
}
