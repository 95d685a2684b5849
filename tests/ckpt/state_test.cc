// SPDX-License-Identifier: MIT
// Acceptance 1: one subject per kind of process state.  Each is
// checkpointed while running, killed, restored in a new process (different
// pid) and must print exactly what an uninterrupted run prints.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include "util.h"

using namespace ckpt_test;

static void restored_matches(const char *subject, const std::vector<std::string> &env)
{
	TmpDir dir;
	Scenario s = checkpoint_restore(std::string("ckpt_") + subject, {}, dir, {}, env);
	ASSERT_TRUE(s.straight.exited_ok()) << s.straight.err;
	ASSERT_FALSE(s.straight.out.empty());
	ASSERT_GT(s.captured_pid, 0) << "capture failed: " << s.captured.err;
	ASSERT_TRUE(WIFSIGNALED(s.captured.status) && WTERMSIG(s.captured.status) == SIGKILL)
		<< "the original must be killed after the capture";
	EXPECT_TRUE(s.captured.out.empty()) << "no output before the checkpoint";
	ASSERT_TRUE(s.restored.exited_ok()) << "status " << s.restored.status << " stderr: " << s.restored.err;
	ASSERT_GT(s.restored_pid, 0) << s.restored.err;
	EXPECT_NE(s.restored_pid, s.captured_pid) << "restore must run in a new process";
	EXPECT_EQ(s.restored.out, s.straight.out);
}

class State : public ::testing::TestWithParam<const char *> {};
TEST_P(State, RestoredRunMatchesUninterrupted) { restored_matches(GetParam(), {}); }

// Same with zstd-compressed page sections.
class StateZstd : public ::testing::TestWithParam<const char *> {};
TEST_P(StateZstd, RestoredRunMatchesUninterrupted) { restored_matches(GetParam(), { "CKPT_TEST_COMPRESS=1" }); }

// Same after ckpt_prewarm (a dry collection, as libmsg does at msgInit).
class StatePrewarm : public ::testing::TestWithParam<const char *> {};
TEST_P(StatePrewarm, RestoredRunMatchesUninterrupted) { restored_matches(GetParam(), { "CKPT_TEST_PREWARM=1" }); }

INSTANTIATE_TEST_SUITE_P(Ckpt, State,
			 ::testing::Values("t_heap", "t_globals", "t_stack", "t_tls", "t_mmap", "t_relro", "t_files",
					   "t_signals", "t_itimer", "t_sigpending", "t_brk", "t_vdso", "t_fpu", "t_mlock", "t_loop", "t_proc",
					   "t_runtime"),
			 [](const ::testing::TestParamInfo<const char *> &i) { return std::string(i.param); });

INSTANTIATE_TEST_SUITE_P(Ckpt, StateZstd, ::testing::Values("t_heap", "t_stack", "t_mmap", "t_relro", "t_loop"),
			 [](const ::testing::TestParamInfo<const char *> &i) { return std::string(i.param); });

INSTANTIATE_TEST_SUITE_P(Ckpt, StatePrewarm,
			 ::testing::Values("t_heap", "t_tls", "t_files", "t_signals", "t_sigpending", "t_itimer", "t_relro", "t_stack",
					   "t_fpu"),
			 [](const ::testing::TestParamInfo<const char *> &i) { return std::string(i.param); });
