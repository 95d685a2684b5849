// The same-host data path (docs/datapath.md) with real daemons and
// processes: msgrun --shm, every rank on one virtual host, r = 1. Named
// after the invariants: exactly once, per-pair order, MSG_ETRUNC keeps the
// message, MSG_ANYSRC; on every route a message can take (a ring, msgd with
// a ring record at its place, msgd after a closed ring, the stash of a
// process that left its rings as it does before a capture). Each job is
// bounded by msgrun --timeout and the harness's kill timer.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "harness.h"

namespace {

class DataPath : public ::testing::Test {
protected:
	void SetUp() override
	{
		base_ = MakeTempDir("datapath");
		ASSERT_FALSE(base_.empty());
		dir_ = base_ + "/job";
	}
	void TearDown() override
	{
		for (const std::string &p : KillLeftovers(base_))
			ADD_FAILURE() << "leftover process " << p;
		RemoveTree(base_);
	}

	// n ranks on one virtual host; shm: with the rings (and -v, so msgd's
	// log says whether it made them).
	RunResult Run(int n, bool shm, const std::string &prog, const std::vector<std::string> &args,
		      const std::vector<std::string> &env = {}, int timeout = 60,
		      bool every_rank_uses_rings = true)
	{
		std::vector<std::string> av = { MsgrunPath(), "-n", std::to_string(n), "-r", "1",
						"--virtual-hosts", "1", "--timeout",
						std::to_string(timeout), "--job-dir", dir_ };
		if (shm) {
			av.push_back("--shm");
			av.push_back("-v");
		} else {
			av.push_back("--no-shm");
		}
		av.push_back(ProgPath(prog));
		av.insert(av.end(), args.begin(), args.end());
		std::vector<std::string> e = env;
		e.push_back("MSG_TEST_SHM_REPORT=1");
		RunResult res = RunProgram(av, timeout + 15, nullptr, e);
		EXPECT_FALSE(res.timed_out) << "msgrun had to be killed\n" << res.err;
		if (shm && res.exit_code() == 0) {
			EXPECT_NE(res.err.find("same-host rings for"), std::string::npos)
				<< "msgd made no rings: the fast path was not tested\n" << res.err;
			// every rank received something through a ring
			for (int g = 0; g < n && every_rank_uses_rings; g++) {
				std::string key = "msg: rank " + std::to_string(g) + ": ";
				size_t p = res.err.find(key);
				unsigned long long sends = 0, recvs = 0;

				EXPECT_NE(p, std::string::npos) << res.err;
				if (p == std::string::npos)
					continue;
				EXPECT_EQ(sscanf(res.err.c_str() + p + key.size(),
						 "%llu sends and %llu receives", &sends, &recvs), 2);
				EXPECT_GT(recvs, 0u) << "rank " << g << " received nothing through a ring\n"
						     << res.err;
			}
		}
		return res;
	}

	std::string base_, dir_;
};

bool Has(const std::string &hay, const std::string &needle)
{
	return hay.find(needle) != std::string::npos;
}

} // namespace

// Reference: the same program through msgd only.
TEST_F(DataPath, ExactlyOnceOrderTruncAnysrc_DaemonPath)
{
	RunResult res = Run(4, false, "t_datapath", { "12" });
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_TRUE(Has(res.out, "datapath ok")) << res.out;
}

// Rings of the default size: small messages in them, 3 MiB ones through
// msgd with a record at their place.
TEST_F(DataPath, ExactlyOnceOrderTruncAnysrc_Rings)
{
	RunResult res = Run(4, true, "t_datapath", { "12" });
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_TRUE(Has(res.out, "datapath ok")) << res.out;
}

// 100 KB rings: they fill during the burst, so many messages go through
// msgd (after a bounded wait for room) with records at their places.
TEST_F(DataPath, ExactlyOnceOrderTruncAnysrc_FullRings)
{
	RunResult res = Run(4, true, "t_datapath", { "12" }, { "MSG_TEST_SHM_RING_BYTES=100000" });
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_TRUE(Has(res.out, "datapath ok")) << res.out;
}

// A burst of 30 1 MiB messages (7 fit in an 8 MiB ring) to a receiver that
// sleeps 8 ms before each receive, as one descheduled on a crowded host:
// the sender waits for room (up to 20 ms, its receiver does not wait for
// room itself) and every message goes through the ring. With the old 2 ms
// bound (MSG_TEST_SPACE_WAIT_FIXED, the negative control) most went round
// through msgd (4 of 30 through the ring), which slowed the receiver
// further: 1.3-2.0 against 6.3-7.7 GB/s for pingpong_msg at load 19.
static unsigned long long RingSendsOfRank0(const std::string &err)
{
	unsigned long long sends = 0;
	size_t p = err.find("msg: rank 0: ");

	if (p == std::string::npos ||
	    sscanf(err.c_str() + p, "msg: rank 0: %llu sends and", &sends) != 1)
		return 0;
	return sends;
}

// One receiver descheduled past 20 ms closes the ring for the rest of the
// burst (seen 1 in ~40 jobs at load 20-40): up to 3 jobs, one must keep it;
// the negative control's 2 ms bound loses to the 8 ms sleep in every job.
TEST_F(DataPath, BurstToASlowReceiverStaysInTheRing)
{
	unsigned long long best = 0;
	std::string err;

	for (int job = 0; job < 3 && best < 26; job++) {
		RunResult res = Run(2, true, "t_burst", { "30", "1024", "8" });
		EXPECT_EQ(res.exit_code(), 0) << res.err;
		EXPECT_TRUE(Has(res.out, "burst ok")) << res.out;
		best = std::max(best, RingSendsOfRank0(res.err));
		err = res.err;
	}
	EXPECT_GE(best, 26u) << err; // 30 unless a wait passed 20 ms
}

TEST_F(DataPath, BurstNegativeControl_TwoMsBoundGoesRound)
{
	RunResult res = Run(2, true, "t_burst", { "30", "1024", "8" },
			    { "MSG_TEST_SPACE_WAIT_FIXED=1" });
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_TRUE(Has(res.out, "burst ok")) << res.out;
	EXPECT_LE(RingSendsOfRank0(res.err), 20u) << res.err;
}

// 4 KiB rings: not even the records fit, senders close their side and the
// rest of each pair goes through msgd; receivers move to msgd's path.
TEST_F(DataPath, ExactlyOnceOrderTruncAnysrc_ClosedRings)
{
	RunResult res = Run(4, true, "t_datapath", { "12" }, { "MSG_TEST_SHM_RING_BYTES=4096" });
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_TRUE(Has(res.out, "datapath ok")) << res.out;
}

// Rank 1 leaves the rings after 8 receives (the 3rd of the burst: a
// barrier, the warm-up's 4 and a barrier come first; its own burst to
// itself is then surely in its ring, whatever the timing) as it does before a capture
// (close both sides, stash what its rings still hold, unmap the segment)
// while the other ranks' burst still sits in its rings.
TEST_F(DataPath, ExactlyOnceOrderTruncAnysrc_LeaveRingsWithMessagesQueued)
{
	RunResult res = Run(4, true, "t_datapath", { "12" }, { "MSG_TEST_SHM_DETACH=1:8" });
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_TRUE(Has(res.out, "datapath ok")) << res.out;
}

// Negative control for the stash: the same departure, but the queued
// messages are dropped instead of kept. t_datapath must notice (a missing
// message breaks the order check, or the job times out waiting for it).
TEST_F(DataPath, LeaveRingsNegativeControl_NoStashIsCaught)
{
	RunResult res = Run(4, true, "t_datapath", { "12" },
			    { "MSG_TEST_SHM_DETACH=1:8", "MSG_TEST_SHM_NO_STASH=1" }, 20);
	EXPECT_NE(res.exit_code(), 0) << "messages dropped at the departure, yet the test passed";
	EXPECT_FALSE(Has(res.out, "datapath ok")) << res.out;
}

// The integration programs of issue 2, with the rings.
TEST_F(DataPath, PingPongAllToAllRingWithRings)
{
	RunResult a = Run(2, true, "t_pingpong", {});
	EXPECT_EQ(a.exit_code(), 0) << a.err;
	EXPECT_TRUE(Has(a.out, "pingpong ok")) << a.out;
	RunResult b = Run(4, true, "t_alltoall", { "3" });
	EXPECT_EQ(b.exit_code(), 0) << b.err;
	EXPECT_TRUE(Has(b.out, "alltoall ok")) << b.out;
	RunResult c = Run(5, true, "t_ring", { "20" });
	EXPECT_EQ(c.exit_code(), 0) << c.err;
	EXPECT_TRUE(Has(c.out, "ring ok")) << c.out;
}

TEST_F(DataPath, AnysrcErrorsBigWithRings)
{
	RunResult a = Run(4, true, "t_anysrc", { "40", "150" });
	EXPECT_EQ(a.exit_code(), 0) << a.err;
	EXPECT_TRUE(Has(a.out, "anysrc ok")) << a.out;
	// their messages are few, or larger than a ring: not every rank sees one
	RunResult b = Run(2, true, "t_errors", {}, {}, 60, false);
	EXPECT_EQ(b.exit_code(), 0) << b.err;
	EXPECT_TRUE(Has(b.out, "errors ok")) << b.out;
	RunResult c = Run(2, true, "t_big", { "256" }, {}, 60, false);
	EXPECT_EQ(c.exit_code(), 0) << c.err;
	EXPECT_TRUE(Has(c.out, "big ok")) << c.out;
}

// msgd calls a process back from the rings: rank 0 of t_fail waits for rank 1
// in a ring (a futex) when `msgctl stall 0.0` comes; msgd sets its detach
// request and rings its bell, so it leaves the rings and meets the stall on
// msgd's path (it then sleeps in nanosleep inside libmsg). The same call-back
// brings a process to its capture. Returns whether rank 0 was seen stalled
// before rank 1 ended the job (after 4 s).
static bool StallReachesRingWaiter(const std::string &dir, const std::vector<std::string> &env)
{
	std::string bin = MsgrunPath().substr(0, MsgrunPath().rfind('/'));
	auto t0 = std::chrono::steady_clock::now();
	bool asked = false, stalled = false;
	RunResult res = RunProgram(
		{ MsgrunPath(), "-n", "2", "-r", "1", "--virtual-hosts", "1", "--shm", "--timeout",
		  "30", "--job-dir", dir, ProgPath("t_fail"), "exit", "4000" },
		45,
		[&](pid_t) {
			double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
					   .count();
			if (!asked && t > 1.0) {
				asked = true;
				std::string cmd = bin + "/msgctl --job-dir " + dir + " stall 0.0 >/dev/null 2>&1";
				EXPECT_EQ(system(cmd.c_str()), 0) << cmd;
			}
			if (asked && !stalled && t < 3.8)
				for (pid_t p : ProcessesMentioning(dir + "/0.0")) {
					std::string sc = ReadFile("/proc/" + std::to_string(p) + "/syscall");
					// 230: clock_nanosleep (lib_stall); 202 would be futex
					stalled |= sc.rfind("230 ", 0) == 0;
				}
		},
		env);
	EXPECT_FALSE(res.timed_out) << res.err;
	EXPECT_NE(res.exit_code(), 0) << "t_fail's rank 1 fails: the job must too";
	return stalled;
}

TEST_F(DataPath, MsgdCallsBackARingWaiter)
{
	EXPECT_TRUE(StallReachesRingWaiter(dir_, {}))
		<< "rank 0 never left its ring wait for the stall msgd asked for";
}

// Negative control: with the call-back switched off (MSG_TEST_SHM_NO_POKE),
// the stalled rank never hears of it while it waits in its ring.
TEST_F(DataPath, CallBackNegativeControl_NoPokeIsCaught)
{
	EXPECT_FALSE(StallReachesRingWaiter(dir_, { "MSG_TEST_SHM_NO_POKE=1" }))
		<< "rank 0 reached the stall without being called back: the test proves nothing";
}

// A migration while messages sit in a ring: t_selfmig (n = 1, so its only
// ring is the one to itself, and host 1 is free to move to) always has up to
// 10 messages queued to itself; `msgctl migrate 0.0 1` comes 1.5 s in. msgd
// calls it back from its ring, it moves the queued messages to its stash and
// is captured at its next receive; on host 1 it goes on from the stash
// (checked: order, content, nothing left over) through msgd.
static RunResult MigrateWithQueuedMessages(const std::string &dir, const std::string &events,
					   const std::vector<std::string> &env, int timeout = 40)
{
	std::string bin = MsgrunPath().substr(0, MsgrunPath().rfind('/'));
	auto t0 = std::chrono::steady_clock::now();
	bool asked = false;
	std::vector<std::string> e = env;
	e.push_back("MSG_TEST_SHM_REPORT=1");
	RunResult res = RunProgram(
		// a daemon starved for 250 ms on a loaded machine is not what this tests
		{ MsgrunPath(), "-n", "1", "-r", "1", "--virtual-hosts", "2", "--shm", "-v",
		  "--hb-timeout", "10000", "--timeout", std::to_string(timeout), "--job-dir", dir, "--events", events,
		  ProgPath("t_selfmig"), "40", "10", "10" },
		timeout + 15,
		[&](pid_t) {
			double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
					   .count();
			if (!asked && t > 1.5) {
				asked = true;
				std::string cmd = bin + "/msgctl --job-dir " + dir +
						  " migrate 0.0 1 >/dev/null 2>&1";
				EXPECT_EQ(system(cmd.c_str()), 0) << cmd;
			}
		},
		e);
	EXPECT_FALSE(res.timed_out) << res.err;
	EXPECT_TRUE(Has(res.err, "same-host rings for 1 processes")) << res.err;
	EXPECT_TRUE(Has(ReadFile(events), "\"migrate-restored\"")) << "no migration happened\n"
								      << res.err;
	return res;
}

#ifdef MSG_ASAN
// ASan's shadow memory overlaps the restorer's range: the capture refuses
// (CKPT_E_RESERVED), so a sanitizer build cannot move a process at all.
#define SKIP_IF_ASAN() GTEST_SKIP() << "sanitizer build: its processes cannot be captured"
#else
#define SKIP_IF_ASAN() (void)0
#endif

TEST_F(DataPath, MigrationWithMessagesInTheRing)
{
	SKIP_IF_ASAN();
	RunResult res = MigrateWithQueuedMessages(dir_, base_ + "/events.json", {});
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_TRUE(Has(res.out, "selfmig ok")) << res.out;
	// the restored process reports; before the move the rings carried messages
	EXPECT_FALSE(Has(res.err, "0 sends and 0 receives through rings")) << res.err;
}

// Negative control: the same move with the queued messages dropped when the
// process leaves its ring (MSG_TEST_SHM_NO_STASH): t_selfmig must notice.
TEST_F(DataPath, MigrationNegativeControl_NoStashIsCaught)
{
	SKIP_IF_ASAN();
	RunResult res =
		MigrateWithQueuedMessages(dir_, base_ + "/events.json", { "MSG_TEST_SHM_NO_STASH=1" },
					  15);
	EXPECT_NE(res.exit_code(), 0) << "queued messages dropped at the move, yet it passed";
	EXPECT_FALSE(Has(res.out, "selfmig ok")) << res.out;
}

// --- The direct path across hosts (docs/datapath.md §6) -------------------
//
// r = 1 on two virtual hosts: pairs on different hosts talk over a TCP stream
// the daemons set up; same-host pairs go through msgd. libmsg reports per
// rank which routes its messages took (MSG_TEST_DIRECT_REPORT).

namespace {

struct Routes {
	unsigned long long sends = 0, recvs = 0, records = 0, pulled = 0;
	int ranks = 0;
};

Routes ParseRoutes(const std::string &err)
{
	Routes r;
	size_t p = 0;
	const std::string key = "through streams, ";

	while ((p = err.find("msg: rank ", p)) != std::string::npos) {
		unsigned g;
		unsigned long long s, v, rec, pull;
		if (sscanf(err.c_str() + p,
			   "msg: rank %u: %llu sends and %llu receives through streams, %llu records "
			   "for messages at msgd, %llu messages pulled",
			   &g, &s, &v, &rec, &pull) == 5) {
			r.sends += s;
			r.recvs += v;
			r.records += rec;
			r.pulled += pull;
			r.ranks++;
		}
		p++;
	}
	return r;
}

// "N finished in place after a spinning look", summed over the ranks.
unsigned long long ParseInPlace(const std::string &err)
{
	unsigned long long sum = 0, v;
	const std::string key = "messages pulled from msgd ahead of a stream, ";
	for (size_t p = 0; (p = err.find(key, p)) != std::string::npos; p++)
		if (sscanf(err.c_str() + p + key.size(), "%llu finished in place", &v) == 1)
			sum += v;
	return sum;
}

class Direct : public DataPath {
protected:
	RunResult RunX(int n, int hosts, bool direct, const std::string &prog,
		       const std::vector<std::string> &args, const std::vector<std::string> &env = {},
		       int timeout = 60)
	{
		std::vector<std::string> av = { MsgrunPath(), "-n", std::to_string(n), "-r", "1",
						"--virtual-hosts", std::to_string(hosts), "--timeout",
						std::to_string(timeout), "--job-dir", dir_,
						direct ? "--direct" : "--no-direct", ProgPath(prog) };
		av.insert(av.end(), args.begin(), args.end());
		std::vector<std::string> e = env;
		e.push_back("MSG_TEST_DIRECT_REPORT=1");
		RunResult res = RunProgram(av, timeout + 15, nullptr, e);
		EXPECT_FALSE(res.timed_out) << "msgrun had to be killed\n" << res.err;
		return res;
	}
	// t_datapath on 4 ranks, 2 hosts: ok, and the streams carried messages.
	// A first send waits for its stream (MSG_TEST_DIRECT_SYNC), so t_datapath's
	// warm-up sets the streams up before its burst.
	Routes Datapath(std::vector<std::string> env)
	{
		env.push_back("MSG_TEST_DIRECT_SYNC=1");
		RunResult res = RunX(4, 2, true, "t_datapath", { "12" }, env);
		EXPECT_EQ(res.exit_code(), 0) << res.err;
		EXPECT_TRUE(Has(res.out, "datapath ok")) << res.out;
		Routes r = ParseRoutes(res.err);
		EXPECT_EQ(r.ranks, 4) << res.err;
		EXPECT_GT(r.recvs, 0u) << "no message went through a stream\n" << res.err;
		return r;
	}
};

} // namespace

// Reference: --no-direct keeps every message on msgd's path.
TEST_F(Direct, NoDirectKeepsMsgdPath)
{
	RunResult res = RunX(4, 2, false, "t_datapath", { "12" });
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_TRUE(Has(res.out, "datapath ok")) << res.out;
	Routes r = ParseRoutes(res.err);
	EXPECT_EQ(r.sends + r.recvs, 0u) << res.err;
}

// Default socket buffers: small messages in records, 3 MiB ones in records
// too (they fit), per-pair order and exactly once with tags and MSG_ANYSRC.
TEST_F(Direct, ExactlyOnceOrderTruncAnysrc_Streams)
{
	Datapath({});
}

// 8 KiB socket buffers: streams fill, so messages go through msgd with a
// DAEMON record at their place (mixed with DATA records).
TEST_F(Direct, ExactlyOnceOrderTruncAnysrc_DaemonRecordsMixedIn)
{
	Routes r = Datapath({ "MSG_TEST_DIRECT_SNDBUF=8192" });
	EXPECT_GT(r.records, 0u) << "no DAEMON record: the small buffers did not bite";
}

// The switch at START: each sender asks for its streams only after 5
// messages to that peer (the warm-up's one and 4 of the burst), so 4 of
// each pair's burst are at msgd (unreceived: t_datapath sends its whole
// burst first) when the stream starts; the receiver takes them from msgd
// before the stream's records.
TEST_F(Direct, ExactlyOnceOrderTruncAnysrc_SwitchAtStart)
{
	Routes r = Datapath({ "MSG_TEST_DIRECT_AFTER=5" });
	EXPECT_GT(r.pulled, 0u) << "nothing was pulled from msgd ahead of a stream";
}

// Rank 1 leaves its streams at its 13th receive (the 6th of the burst: a
// barrier, the warm-up and a barrier come first) as before a capture, with
// the burst of its remote senders still in them (and in its memory).
TEST_F(Direct, ExactlyOnceOrderTruncAnysrc_LeaveWithMessagesInStreams)
{
	Datapath({ "MSG_TEST_DIRECT_LEAVE=1:12", "MSG_TEST_DIRECT_SNDBUF=65536" });
}

// Negative control: the same departure, but the leaver neither reads its
// streams to their end nor keeps what it read: t_datapath must notice.
TEST_F(Direct, LeaveNegativeControl_NoDrainIsCaught)
{
	RunResult res = RunX(4, 2, true, "t_datapath", { "12" },
			     { "MSG_TEST_DIRECT_LEAVE=1:12", "MSG_TEST_DIRECT_SNDBUF=65536",
			       "MSG_TEST_DIRECT_NO_DRAIN=1", "MSG_TEST_DIRECT_SYNC=1" },
			     20);
	EXPECT_NE(res.exit_code(), 0) << "messages dropped at the departure, yet the test passed";
	EXPECT_FALSE(Has(res.out, "datapath ok")) << res.out;
}

TEST_F(Direct, PingPongAllToAllRingAnysrcBigOverStreams)
{
	RunResult a = RunX(2, 2, true, "t_pingpong", {});
	EXPECT_EQ(a.exit_code(), 0) << a.err;
	EXPECT_TRUE(Has(a.out, "pingpong ok")) << a.out;
	RunResult b = RunX(4, 2, true, "t_alltoall", { "3" });
	EXPECT_EQ(b.exit_code(), 0) << b.err;
	EXPECT_TRUE(Has(b.out, "alltoall ok")) << b.out;
	RunResult c = RunX(5, 3, true, "t_ring", { "20" });
	EXPECT_EQ(c.exit_code(), 0) << c.err;
	EXPECT_TRUE(Has(c.out, "ring ok")) << c.out;
	RunResult d = RunX(4, 2, true, "t_anysrc", { "40", "150" });
	EXPECT_EQ(d.exit_code(), 0) << d.err;
	EXPECT_TRUE(Has(d.out, "anysrc ok")) << d.out;
	// a stream full for longer than 2 ms (its reader sleeps 3 ms per message)
	RunResult f = RunX(2, 2, true, "t_burst", { "30", "1024", "3" }, { "MSG_TEST_DIRECT_SYNC=1" });
	EXPECT_EQ(f.exit_code(), 0) << f.err;
	EXPECT_TRUE(Has(f.out, "burst ok")) << f.out;
	RunResult e = RunX(2, 2, true, "t_big", { "256" });
	EXPECT_EQ(e.exit_code(), 0) << e.err;
	EXPECT_TRUE(Has(e.out, "big ok")) << e.out;
	EXPECT_GT(ParseRoutes(a.err + b.err + c.err + d.err).recvs, 0u);
}

// START read by a spinning wait (the cross-host pingpong_msg hang of
// session 8): rank 0 sends its first ping through msgd while its stream is
// set up, pauses 20 ms, and by then its msgd passed it the end of rank 1's
// stream to it, whose START rank 1 writes 50 ms late
// (MSG_TEST_DIRECT_START_DELAY) behind its first pong, sent through msgd.
// Rank 0's receive waits on that stream, spinning (MSG_TEST_SPIN_ALWAYS,
// 300 ms): the spin reads START, and the pong, still at msgd, must be
// pulled then, not waited for on the drained stream. 3 jobs; without the
// fix 11 of 12 such jobs hung (the one that did not: its streams came late).
static const std::vector<std::string> kStartWhileSpinning = {
	"MSG_TEST_DIRECT_START_DELAY=1:50", "MSG_TEST_SPIN_ALWAYS=1", "MSG_SPIN_US=300000"
};

TEST_F(Direct, StartReadBySpinningWaitPullsWhatIsAtMsgd)
{
	Routes total;
	for (int run = 0; run < 3 && !HasFailure(); run++) {
		RunResult res = RunX(2, 2, true, "t_pingpong", { "20" }, kStartWhileSpinning, 20);
		EXPECT_EQ(res.exit_code(), 0) << "job " << run << "\n" << res.err;
		EXPECT_TRUE(Has(res.out, "pingpong ok")) << res.out;
		Routes r = ParseRoutes(res.err);
		total.pulled += r.pulled;
		total.recvs += r.recvs;
	}
	EXPECT_GT(total.recvs, 0u) << "no message went through a stream";
	EXPECT_GT(total.pulled, 0u) << "no message was pulled after a START: the race was not set up";
}

// Negative control: reading START wakes no wait (MSG_TEST_DIRECT_START_NO_NEWS),
// as before the fix: a job hangs until msgrun's --timeout (11 of 12 jobs
// did; up to 3 here, one hang is enough).
TEST_F(Direct, StartNegativeControl_NoNewsHangs)
{
	std::vector<std::string> env = kStartWhileSpinning;
	env.push_back("MSG_TEST_DIRECT_START_NO_NEWS=1");
	int hung = 0;
	for (int run = 0; run < 3 && !hung; run++) {
		RunResult res = RunX(2, 2, true, "t_pingpong", { "20" }, env, 6);
		hung += res.exit_code() != 0 && !Has(res.out, "pingpong ok");
	}
	EXPECT_GT(hung, 0) << "START woke no wait, yet every job finished";
}

// A large message that reaches a spinning receive (rank 0 sends 1 MiB every
// 5 ms on a stream set up before its first send, MSG_TEST_DIRECT_SYNC;
// rank 1 spins up to 300 ms for each): the look that finds it reads
// its first 64 KiB into the read-ahead; the receive copies that part and
// reads the rest straight into its buffer (no malloc'd copy of the whole).
// Every message is checked byte for byte; the in-place count shows the path
// was taken (MSG_TEST_DIRECT_NO_KEEP_BIG=1, the old copy, makes it 0).
TEST_F(Direct, SpinningReceiveFinishesLargeMessagesInPlace)
{
	unsigned long long in_place = 0;
	for (int run = 0; run < 3 && !HasFailure() && !in_place; run++) {
		RunResult res = RunX(2, 2, true, "t_burst", { "20", "1024", "0", "5" },
				     { "MSG_TEST_DIRECT_SYNC=1", "MSG_TEST_SPIN_ALWAYS=1", "MSG_SPIN_US=300000" }, 30);
		EXPECT_EQ(res.exit_code(), 0) << res.err;
		EXPECT_TRUE(Has(res.out, "burst ok")) << res.out;
		in_place += ParseInPlace(res.err);
	}
	EXPECT_GT(in_place, 0u) << "no large message was finished in place after a spinning look";
}

TEST_F(Direct, SpinningReceiveInPlaceNegativeControl_OldCopy)
{
	RunResult res = RunX(2, 2, true, "t_burst", { "20", "1024", "0", "5" },
			     { "MSG_TEST_DIRECT_SYNC=1", "MSG_TEST_SPIN_ALWAYS=1", "MSG_SPIN_US=300000",
			       "MSG_TEST_DIRECT_NO_KEEP_BIG=1" }, 30);
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_TRUE(Has(res.out, "burst ok")) << res.out;
	EXPECT_EQ(ParseInPlace(res.err), 0u) << res.err;
}

// A move of an r = 1 rank whose MSG_ANYSRC receive waits at msgd (watching
// its streams; rank 0 pauses 50 ms before each send): msgd begins the
// capture and asks the rank to leave its streams; the rank withdraws its
// receive to leave them, and the capture (L_CKPT) may reach it outside any
// receive at msgd. The rank must take it there (msgrecv is the safe point
// wherever it waits), not call it a protocol error: the CI failure of
// tests/qemu/engine_host.sh. Test switches make the crossing likely (about
// every other job, against one in eight without them): msgd asks the rank
// to leave only once the capture has begun (MSG_TEST_DIRECT_LATE_POKE), and
// the rank lingers after leaving (MSG_TEST_DIRECT_LEAVE_PAUSE); 5 jobs.
TEST_F(Direct, MoveWhileAnysrcReceiveWaitsAtMsgd)
{
	SKIP_IF_ASAN();
	for (int run = 0; run < 5 && !HasFailure(); run++) {
		std::string events = base_ + "/events" + std::to_string(run) + ".json";
		std::string dir = base_ + "/job" + std::to_string(run);
		RunResult res = RunProgram(
			{ MsgrunPath(), "-n", "2", "-r", "1", "--virtual-hosts", "3", "--direct",
			  "--timeout", "60", "--job-dir", dir, "--events", events, "--inject",
			  "migrate 1.0->2@0.3s", ProgPath("t_ring"), "30", "anysrc", "50" },
			75, nullptr,
			{ "MSG_TEST_DIRECT_LEAVE_PAUSE=50", "MSG_TEST_DIRECT_LATE_POKE=1" });
		EXPECT_FALSE(res.timed_out) << res.err;
		EXPECT_EQ(res.exit_code(), 0) << "job " << run << "\n" << res.err;
		EXPECT_TRUE(Has(res.out, "ring ok n=2 laps=30")) << res.out;
		EXPECT_TRUE(Has(ReadFile(events), "\"migrate-restored\""))
			<< "no migration happened\n" << res.err;
	}
}

// A move of an r = 1 rank mid-stream: t_dmove's two ranks (hosts 0 and 1)
// always have messages in flight to each other; `msgctl migrate 1.0 2`
// comes 1.5 s in. msgd calls rank 1 back from its streams, it leaves them
// (what they held goes to its stash, its sender sees LEAVE and goes on
// through msgd) and is captured at its next receive; on host 2 both go on
// through msgd, every message checked for order and content.
TEST_F(Direct, MoveMidStreamWithMessagesInFlightBothWays)
{
	SKIP_IF_ASAN();
	std::string bin = MsgrunPath().substr(0, MsgrunPath().rfind('/'));
	std::string events = base_ + "/events.json";
	auto t0 = std::chrono::steady_clock::now();
	bool asked = false;
	RunResult res = RunProgram(
		{ MsgrunPath(), "-n", "2", "-r", "1", "--virtual-hosts", "3", "--direct",
		  "--hb-timeout", "10000", "--timeout", "60", "--job-dir", dir_, "--events", events,
		  ProgPath("t_dmove"), "60", "8", "10" },
		75,
		[&](pid_t) {
			double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
					   .count();
			if (!asked && t > 1.5) {
				asked = true;
				std::string cmd = bin + "/msgctl --job-dir " + dir_ +
						  " migrate 1.0 2 >/dev/null 2>&1";
				EXPECT_EQ(system(cmd.c_str()), 0) << cmd;
			}
		},
		{ "MSG_TEST_DIRECT_REPORT=1" });
	EXPECT_FALSE(res.timed_out) << res.err;
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_TRUE(Has(res.out, "dmove ok")) << res.out;
	EXPECT_TRUE(Has(ReadFile(events), "\"migrate-restored\"")) << "no migration happened\n"
								      << res.err;
	// rank 0 never moved: its report covers the time before the move
	EXPECT_GT(ParseRoutes(res.err).recvs, 0u) << "no message went through a stream\n" << res.err;
}

// --- Same-host rings in a job across hosts (docs/datapath.md §8) ---------
//
// r = 1, 4 ranks on two virtual hosts (0 and 2 on host 0, 1 and 3 on host
// 1): same-host pairs talk over rings, the others over direct streams (or
// msgd with --no-direct), and every receive watches both. libmsg reports
// both routes per rank (MSG_TEST_SHM_REPORT, MSG_TEST_DIRECT_REPORT).

namespace {

struct RingRoutes {
	unsigned long long sends = 0, recvs = 0;
	int ranks = 0;
};

RingRoutes ParseRings(const std::string &err)
{
	RingRoutes r;
	size_t p = 0;

	while ((p = err.find("msg: rank ", p)) != std::string::npos) {
		unsigned g;
		unsigned long long s, v;
		int end = 0; // set only when the whole line matched (not "streams")
		if (sscanf(err.c_str() + p, "msg: rank %u: %llu sends and %llu receives through rings%n",
			   &g, &s, &v, &end) == 3 &&
		    end > 0) {
			r.sends += s;
			r.recvs += v;
			r.ranks++;
		}
		p++;
	}
	return r;
}

class Mixed : public Direct {
protected:
	// t_datapath on 4 ranks, 2 hosts; ok, and both routes carried messages.
	RunResult Both(std::vector<std::string> env, bool direct = true, int timeout = 60)
	{
		env.push_back("MSG_TEST_SHM_REPORT=1");
		env.push_back("MSG_TEST_DIRECT_SYNC=1");
		RunResult res = RunX(4, 2, direct, "t_datapath", { "12" }, env, timeout);
		return res;
	}
	void ExpectBothRoutes(const RunResult &res, bool direct = true)
	{
		EXPECT_EQ(res.exit_code(), 0) << res.err;
		EXPECT_TRUE(Has(res.out, "datapath ok")) << res.out;
		RingRoutes rr = ParseRings(res.err);
		EXPECT_EQ(rr.ranks, 4) << res.err;
		EXPECT_GT(rr.recvs, 0u) << "no message went through a ring\n" << res.err;
		Routes st = ParseRoutes(res.err);
		if (direct)
			EXPECT_GT(st.recvs, 0u) << "no message went through a stream\n" << res.err;
		else
			EXPECT_EQ(st.sends + st.recvs, 0u) << res.err;
	}
};

} // namespace

// Default rings and socket buffers: tags, MSG_ANYSRC (round robin over
// rings and streams), MSG_ETRUNC, 3 MiB messages.
TEST_F(Mixed, ExactlyOnceOrderTruncAnysrc_RingsAndStreams)
{
	ExpectBothRoutes(Both({}));
}

// --no-direct: same-host pairs over rings, the others through msgd; a
// MSG_ANYSRC receive waits at msgd and on the rings at once.
TEST_F(Mixed, ExactlyOnceOrderTruncAnysrc_RingsAndMsgd)
{
	ExpectBothRoutes(Both({}, false), false);
}

// Small rings and socket buffers: DAEMON records on both routes, all
// standing for L_TAG_DIRECT messages at msgd.
TEST_F(Mixed, ExactlyOnceOrderTruncAnysrc_FullRingsAndStreams)
{
	RunResult res = Both({ "MSG_TEST_SHM_RING_BYTES=100000", "MSG_TEST_DIRECT_SNDBUF=8192" });
	ExpectBothRoutes(res);
	EXPECT_GT(ParseRoutes(res.err).records, 0u) << "no DAEMON record: the small buffers did not bite";
}

// 4 KiB rings: senders close their rings and go on through msgd while a
// receive of any source may wait there; a plain message of a ring's sender
// must not pass its ring's records (they go to the stash first).
TEST_F(Mixed, ExactlyOnceOrderTruncAnysrc_ClosedRings)
{
	ExpectBothRoutes(Both({ "MSG_TEST_SHM_RING_BYTES=4096" }));
}

// Rank 1 leaves its rings after 8 receives and its streams after 12, as
// before a capture, with messages queued in both.
TEST_F(Mixed, ExactlyOnceOrderTruncAnysrc_LeaveRingsAndStreams)
{
	ExpectBothRoutes(Both({ "MSG_TEST_SHM_DETACH=1:8", "MSG_TEST_DIRECT_LEAVE=1:12",
				"MSG_TEST_DIRECT_SNDBUF=65536" }));
}

// Negative control: the same departure from the rings, dropping what they
// held: t_datapath must notice.
TEST_F(Mixed, LeaveRingsNegativeControl_NoStashIsCaught)
{
	RunResult res = Both({ "MSG_TEST_SHM_DETACH=1:8", "MSG_TEST_SHM_NO_STASH=1" }, true, 20);
	EXPECT_NE(res.exit_code(), 0) << "messages dropped at the departure, yet the test passed";
	EXPECT_FALSE(Has(res.out, "datapath ok")) << res.out;
}

// A move mid-run: t_dmove on 4 ranks and 3 hosts, pairs (0, 3) on host 0
// over rings and (1, 2) over a stream, messages always in flight both ways;
// `msgctl migrate 3.0 2` comes 1.5 s in. msgd calls rank 3 back from its
// rings (what they held goes to its stash; rank 0 sees its ring closed and
// follows onto msgd's path) and captures it; on host 2 the pair goes on
// through msgd while (1, 2) keeps its stream. Every message is checked.
TEST_F(Mixed, MoveARingRankMidRun)
{
	SKIP_IF_ASAN();
	std::string bin = MsgrunPath().substr(0, MsgrunPath().rfind('/'));
	std::string events = base_ + "/events.json";
	auto t0 = std::chrono::steady_clock::now();
	bool asked = false;
	RunResult res = RunProgram(
		{ MsgrunPath(), "-n", "4", "-r", "1", "--virtual-hosts", "3", "--direct", "--shm",
		  "--hb-timeout", "10000", "--timeout", "60", "--job-dir", dir_, "--events", events,
		  ProgPath("t_dmove"), "60", "8", "10" },
		75,
		[&](pid_t) {
			double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
					   .count();
			if (!asked && t > 1.5) {
				asked = true;
				std::string cmd = bin + "/msgctl --job-dir " + dir_ +
						  " migrate 3.0 2 >/dev/null 2>&1";
				EXPECT_EQ(system(cmd.c_str()), 0) << cmd;
			}
		},
		{ "MSG_TEST_DIRECT_REPORT=1", "MSG_TEST_SHM_REPORT=1" });
	EXPECT_FALSE(res.timed_out) << res.err;
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_TRUE(Has(res.out, "dmove ok")) << res.out;
	EXPECT_TRUE(Has(ReadFile(events), "\"migrate-restored\"")) << "no migration happened\n"
									<< res.err;
	// rank 0 never moved: its report covers the rings before the move
	EXPECT_GT(ParseRings(res.err).recvs, 0u) << "no message went through a ring\n" << res.err;
	EXPECT_GT(ParseRoutes(res.err).recvs, 0u) << "no message went through a stream\n" << res.err;
}
