// SPDX-License-Identifier: MIT
// The image travels over one stream, never touching disk: the capturing
// process writes into a pipe / socket, msg-restore reads from the other
// end at the same time and restores.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "util.h"

using namespace ckpt_test;

static void stream_restore(int rd, int wr, const std::vector<std::string> &env, const std::string &mb = "16")
{
	TmpDir dir;
	Result straight = run({ bin("ckpt_t_loop"), "straight", "-", mb }, dir.path, 60000);
	ASSERT_TRUE(straight.exited_ok());
	Result restored;
	std::thread t([&] { restored = run({ restorer(), "--fd", "3" }, "/", 60000, nullptr, rd); });
	Result cap = run(
		{ bin("ckpt_t_loop"), "capture", "fd:3", mb }, dir.path, 60000,
		[](const std::string &e) { return e.find("CAPTURED ") != std::string::npos; }, wr, env);
	close(wr);
	t.join();
	close(rd);
	int cpid = pid_after(cap.err, "CAPTURED");
	ASSERT_GT(cpid, 0) << cap.err;
	ASSERT_TRUE(restored.exited_ok()) << restored.err;
	EXPECT_NE(pid_after(restored.err, "RESTORED"), cpid);
	EXPECT_EQ(restored.out, straight.out);
}

TEST(Stream, OverAPipe)
{
	int p[2];
	ASSERT_EQ(pipe(p), 0);
	stream_restore(p[0], p[1], {});
}

TEST(Stream, OverASocket)
{
	int s[2];
	ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, s), 0);
	stream_restore(s[0], s[1], {});
}

// Memory the kernel rewrites under a running capture (the rseq area, on
// every CPU migration) must not make a section's CRC disagree with its
// bytes: many short captures, each restored.
TEST(Stream, RepeatedCapturesStayConsistent)
{
	for (int i = 0; i < 20; i++) {
		int p[2];
		ASSERT_EQ(pipe(p), 0);
		stream_restore(p[0], p[1], {}, "1");
		if (HasFatalFailure())
			return;
	}
}
