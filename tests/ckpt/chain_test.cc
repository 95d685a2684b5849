// SPDX-License-Identifier: MIT
// A restored process is captured again and restored again (regeneration
// chains), and restores work whatever the ASLR setting on either side.
#include <gtest/gtest.h>

#include "util.h"

using namespace ckpt_test;

static bool captured(const std::string &e) { return e.find("CAPTURED ") != std::string::npos; }

TEST(Chain, RestoredProcessCanBeCapturedAgain)
{
	TmpDir dir;
	std::string i1 = dir.path + "/one", i2 = dir.path + "/two";
	Result straight = run({ bin("ckpt_t_chain"), "straight", "-" }, dir.path, 30000);
	ASSERT_TRUE(straight.exited_ok());
	Result c1 = run({ bin("ckpt_t_chain"), "capture", i1, i2 }, dir.path, 30000, captured);
	int p1 = pid_after(c1.err, "CAPTURED");
	ASSERT_GT(p1, 0) << c1.err;
	Result c2 = run({ restorer(), i1 }, "/", 30000, captured); // restored, then captures itself
	int r1 = pid_after(c2.err, "RESTORED"), p2 = pid_after(c2.err, "CAPTURED");
	ASSERT_GT(r1, 0) << c2.err;
	ASSERT_EQ(p2, r1) << "the restored process made the second image";
	Result fin = run({ restorer(), i2 }, "/", 30000);
	ASSERT_TRUE(fin.exited_ok()) << fin.err;
	int r2 = pid_after(fin.err, "RESTORED");
	EXPECT_NE(r2, p2);
	EXPECT_NE(r2, p1);
	EXPECT_EQ(fin.out, straight.out);
}

TEST(Chain, AslrOffOnEitherSide)
{
	TmpDir dir;
	std::string img = dir.path + "/img";
	Result straight = run({ bin("ckpt_t_heap"), "straight", "-" }, dir.path, 30000);
	Result c = run({ "/usr/bin/setarch", "-R", bin("ckpt_t_heap"), "capture", img }, dir.path, 30000, captured);
	ASSERT_GT(pid_after(c.err, "CAPTURED"), 0) << c.err;
	for (bool norand : { true, false }) {
		std::vector<std::string> a = { restorer(), img };
		if (norand)
			a.insert(a.begin(), { "/usr/bin/setarch", "-R" });
		Result r = run(a, "/", 30000);
		ASSERT_TRUE(r.exited_ok()) << r.err;
		EXPECT_EQ(r.out, straight.out);
	}
}
