// SPDX-License-Identifier: MIT
// Live snapshot for regeneration: the source keeps running (and sees no
// SIGCHLD); an image restored in a new process continues from the snapshot
// point and computes what the source computed.
#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

using namespace ckpt_test;

TEST(Live, SnapshotLeavesSourceRunningAndRestores)
{
	TmpDir dir;
	std::string img = dir.path + "/image";
	Result src = run({ bin("ckpt_t_live"), "live", img }, dir.path, 60000);
	ASSERT_TRUE(src.exited_ok()) << src.err;
	int spid = pid_after(src.err, "SNAPSHOT-DONE");
	ASSERT_GT(spid, 0) << src.err;
	EXPECT_NE(src.err.find("SNAPSHOT-DONE " + std::to_string(spid) + " CKPT_CAPTURED"), std::string::npos) << src.err;
	EXPECT_NE(src.out.find("sigchld=0"), std::string::npos) << src.out;

	Result r = run({ restorer(), img }, "/", 60000);
	ASSERT_TRUE(r.exited_ok()) << r.err;
	int rpid = pid_after(r.err, "RESTORED");
	ASSERT_GT(rpid, 0);
	EXPECT_NE(rpid, spid);
	EXPECT_EQ(r.out, src.out);
}

// Pre-copy: pages go out while the source runs; the final stop sends only
// what changed.  The subject changes memory in the ways that break naive
// tracking (DONTNEED, brk regrow, remap at the same address, mremap,
// PROT_NONE, new mappings).
static void precopy_restores(const std::vector<std::string> &env, const char *mode = "precopy")
{
	TmpDir dir;
	std::string img = dir.path + "/image";
	Result straight = run({ bin("ckpt_t_precopy"), "straight", "-" }, dir.path, 60000);
	ASSERT_TRUE(straight.exited_ok()) << straight.err;
	Result src = run({ bin("ckpt_t_precopy"), mode, img }, dir.path, 60000, nullptr, -1, env);
	ASSERT_TRUE(src.exited_ok()) << src.err;
	int spid = pid_after(src.err, "SOURCE");
	ASSERT_GT(spid, 0) << src.err;
	EXPECT_EQ(src.out, straight.out);
	Result r = run({ restorer(), img }, "/", 60000);
	ASSERT_TRUE(r.exited_ok()) << r.err;
	int rpid = pid_after(r.err, "RESTORED");
	ASSERT_GT(rpid, 0) << r.err;
	EXPECT_NE(rpid, spid);
	EXPECT_EQ(r.out, straight.out);
}

// The stop gathers its sections into a sink that a helper writes (CRCs
// computed by the helper).
TEST(Live, PrecopyRestoresWhatTheSourceComputes) { precopy_restores({}); }

// A sink far too small: it is written synchronously whenever it fills (the
// CRCs left for the helper are computed first), big sections bypass it.
TEST(Live, PrecopyWithAnOverflowingSink) { precopy_restores({ "MSG_CKPT_SINK_BYTES=65536" }); }

// No sink: the stop writes to the stream itself.
TEST(Live, PrecopyWithoutSink) { precopy_restores({ "MSG_CKPT_SINK_BYTES=0" }); }

// The prepared stop (the regeneration's default copy): nothing is tracked,
// so the stop must carry every change the source made since begin; its
// buffer made ready by a helper meanwhile, the cut after it is (the
// subject waits for READY) or before (the helper is stopped, the stop
// takes the faults), or with a buffer that overflows.
TEST(Live, PreparedStopRestoresWhatTheSourceComputes) { precopy_restores({}, "prepared"); }
TEST(Live, PreparedStopCutBeforeItsBufferIsReady) { precopy_restores({}, "prepared-early"); }
TEST(Live, PreparedStopWithAnOverflowingSink)
{
	precopy_restores({ "MSG_CKPT_SINK_BYTES=65536" }, "prepared");
}

// Background snapshot (the default stop): the image must be the memory at
// the cut bit for bit although the source rewrites it, top down, at once
// after the stop while the helper saves it bottom up (a write to a page not
// saved yet waits until the helper copied it); the source's own result must
// be its uninterrupted one. The pattern changes per run (seed). Returns what
// went wrong, empty if nothing.
static std::vector<std::string> bgsnap_scenario(const std::vector<std::string> &env)
{
	std::vector<std::string> bad;
	TmpDir dir;
	std::string img = dir.path + "/image";
	std::string seed = std::to_string((unsigned)time(nullptr) ^ ((unsigned)getpid() << 8));
	Result straight = run({ bin("ckpt_t_bgsnap"), "straight", "-", seed }, dir.path, 60000);
	std::vector<std::string> e = env;
	e.push_back("MSG_CKPT_BGSNAP=1");
	Result src = run({ bin("ckpt_t_bgsnap"), "snap", img, seed }, dir.path, 60000, nullptr, -1, e);
	if (!straight.exited_ok() || !src.exited_ok())
		return { "a run failed: " + straight.err + src.err };
	if (src.out != straight.out)
		bad.push_back("the source's result differs from its uninterrupted one: " + src.out + " vs " +
			      straight.out);
	if (src.err.find("BGSNAP") == std::string::npos)
		bad.push_back("no background snapshot ran: " + src.err);
	Result r = run({ restorer(), img }, "/", 60000);
	if (!r.exited_ok() || pid_after(r.err, "RESTORED") <= 0)
		return { "the restore failed: " + r.err };
	std::string cut = straight.out.substr(0, straight.out.find('\n'));
	if (r.out.substr(0, r.out.find('\n')) != cut)
		bad.push_back("the image is not the memory at the cut (seed " + seed + "): " + r.out + " vs " + cut +
			      "; source: " + src.err);
	else if (r.out != straight.out)
		bad.push_back("the restored copy computed something else: " + r.out);
	return bad;
}

static std::string join(const std::vector<std::string> &v)
{
	std::string s;
	for (const auto &x : v)
		s += x + "\n";
	return s;
}

// MSG_TEST_BGSNAP_HOLD_MS: the helper only serves faults for 300 ms after
// the cut before it saves on its own, so the writes after the cut surely
// reach pages not saved yet whatever the load (its negative control below
// relies on that); the last run without it (the race as it comes).
TEST(Live, BgsnapImageIsTheCutWhileTheSourceWrites)
{
	for (int i = 0; i < 3; i++) {
		auto bad = bgsnap_scenario(i < 2 ? std::vector<std::string>{ "MSG_TEST_BGSNAP_HOLD_MS=300" }
						 : std::vector<std::string>{});
		EXPECT_TRUE(bad.empty()) << join(bad);
	}
}

// The same with post-cut chunks of one page and before-cut chunks of 64 KiB.
TEST(Live, BgsnapSmallChunks)
{
	auto bad = bgsnap_scenario({ "MSG_CKPT_BG_CHUNK_KB=4", "MSG_CKPT_BG_PRE_CHUNK_KB=64", "MSG_TEST_BGSNAP_HOLD_MS=100" });
	EXPECT_TRUE(bad.empty()) << join(bad);
}

// Negative control: the fault handler unprotects without saving the page's
// contents first: the image then holds writes made after the cut.
TEST(Live, BgsnapNegativeControl_NoCopyOnFault)
{
	auto bad = bgsnap_scenario({ "MSG_TEST_BGSNAP_NO_COPY_ON_FAULT=1", "MSG_TEST_BGSNAP_HOLD_MS=300" });
	// (the restored copy's memory is then wrong, its own stack included: it
	// prints another cut, or goes astray before it prints)
	std::string all = join(bad);
	EXPECT_TRUE(all.find("not the memory at the cut") != std::string::npos ||
		    all.find("the restore failed") != std::string::npos)
		<< all;
	EXPECT_EQ(all.find("a run failed"), std::string::npos) << all;
}

// The pre-copy subject (DONTNEED, brk regrow, remap, mremap, PROT_NONE
// between steps) through the background snapshot (MSG_CKPT_BGSNAP=1).
TEST(Live, PrecopyWithTheBackgroundSnapshot) { precopy_restores({ "MSG_CKPT_BGSNAP=1" }); }
