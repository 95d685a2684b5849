// SPDX-License-Identifier: MIT
// Acceptance 3 (refusals): state the image cannot carry fails the capture
// with the specific error, naming the resource; the runtime's own
// descriptors and shared memory are accepted once excluded.
#include <gtest/gtest.h>

#include "util.h"

using namespace ckpt_test;

struct Refusal {
	const char *kind, *code, *names;
};

class Refuse : public ::testing::TestWithParam<Refusal> {};

TEST_P(Refuse, CaptureFailsNamingTheResource)
{
	const Refusal &p = GetParam();
	Result r = run({ bin("ckpt_t_refuse"), p.kind }, "/", 30000);
	ASSERT_TRUE(r.exited_ok()) << r.err;
	EXPECT_EQ(r.out.rfind(std::string(p.code) + " ", 0), 0u) << r.out;
	EXPECT_NE(r.out.find(p.names), std::string::npos) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
	Ckpt, Refuse,
	::testing::Values(Refusal{ "thread", "CKPT_E_THREADS", "second thread: tid" },
			  Refusal{ "socket", "CKPT_E_SOCKET", "fd 3: socket:[" },
			  Refusal{ "pipe", "CKPT_E_PIPE", "fd 3: pipe:[" },
			  Refusal{ "eventfd", "CKPT_E_FDKIND", "fd 3: anon_inode:[eventfd]" },
			  Refusal{ "io_uring", "CKPT_E_IO_URING", "fd 3: anon_inode:[io_uring]" },
			  Refusal{ "io_uring_mapped", "CKPT_E_IO_URING", "io_uring ring mapped at" },
			  Refusal{ "shared", "CKPT_E_SHARED", "writable shared mapping" },
			  Refusal{ "reserved", "CKPT_E_RESERVED", "overlaps the restorer's range" },
			  Refusal{ "flock", "CKPT_E_LOCK", "fd 3: /tmp/ckpt-lock-" },
			  Refusal{ "posix_lock", "CKPT_E_LOCK", "holds a file lock (lock: 1: POSIX" },
			  Refusal{ "ofd_lock", "CKPT_E_LOCK", "holds a file lock (lock: 1: OFDLCK" },
			  Refusal{ "mapped_lock", "CKPT_E_LOCK", "file lock held: 1: FLOCK" },
			  Refusal{ "sysv_shm", "CKPT_E_SYSV", "SysV shared memory segment (key 0x00000000, shmid" },
			  Refusal{ "sysv_shm_ro", "CKPT_E_SYSV", "SysV shared memory segment" },
			  Refusal{ "sem_undo", "CKPT_E_SYSV", "SysV semaphore undo list" },
			  Refusal{ "seccomp", "CKPT_E_SECCOMP", "seccomp filter mode (1 filters installed)" },
			  Refusal{ "mlockall_future", "CKPT_E_MLOCK", "mlockall(MCL_FUTURE)" }),
	[](const ::testing::TestParamInfo<Refusal> &i) { return std::string(i.param.kind); });

// The prepared stop's begin collects nothing: what the image cannot carry
// is refused at its cut, with the same error.
TEST(Refuse, PreparedStopRefusesAtItsCut)
{
	for (const Refusal &p : { Refusal{ "thread", "CKPT_E_THREADS", "second thread: tid" },
				  Refusal{ "pipe", "CKPT_E_PIPE", "fd 3: pipe:[" },
				  Refusal{ "shared", "CKPT_E_SHARED", "writable shared mapping" } }) {
		Result r = run({ bin("ckpt_t_refuse"), p.kind, "prepared" }, "/", 30000);
		ASSERT_TRUE(r.exited_ok()) << p.kind << ": " << r.err;
		EXPECT_EQ(r.out.rfind(std::string(p.code) + " ", 0), 0u) << p.kind << ": " << r.out;
		EXPECT_NE(r.out.find(p.names), std::string::npos) << r.out;
	}
	Result ok = run({ bin("ckpt_t_refuse"), "sem_no_undo", "prepared" }, "/", 30000);
	ASSERT_TRUE(ok.exited_ok()) << ok.err;
	EXPECT_EQ(ok.out, "CKPT_CAPTURED \n");
}

// A semaphore set used without SEM_UNDO leaves nothing in the process.
TEST(Refuse, SemaphoreWithoutUndoIsAccepted)
{
	Result r = run({ bin("ckpt_t_refuse"), "sem_no_undo" }, "/", 30000);
	ASSERT_TRUE(r.exited_ok()) << r.err;
	EXPECT_EQ(r.out, "CKPT_CAPTURED \n");
}

TEST(Refuse, ExcludedRuntimeResourcesAreLeftOut)
{
	Result r = run({ bin("ckpt_t_refuse"), "socket", "excluded" }, "/", 30000);
	ASSERT_TRUE(r.exited_ok()) << r.err;
	EXPECT_EQ(r.out, "CKPT_CAPTURED \n");
}
