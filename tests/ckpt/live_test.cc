// SPDX-License-Identifier: MIT
// Live snapshot for regeneration: the source keeps running (and sees no
// SIGCHLD); an image restored in a new process continues from the snapshot
// point and computes what the source computed.
#include <gtest/gtest.h>

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
static void precopy_restores(const std::vector<std::string> &env)
{
	TmpDir dir;
	std::string img = dir.path + "/image";
	Result straight = run({ bin("ckpt_t_precopy"), "straight", "-" }, dir.path, 60000);
	ASSERT_TRUE(straight.exited_ok()) << straight.err;
	Result src = run({ bin("ckpt_t_precopy"), "precopy", img }, dir.path, 60000, nullptr, -1, env);
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
