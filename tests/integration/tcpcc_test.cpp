// The congestion control of msgd's TCP connections (msgd --tcp-congestion,
// msgrun --tcp-congestion for its virtual hosts; docs/datapath.md §11):
// a job's direct streams carry what was asked, the default never paces, a
// name the kernel refuses is a clear error at start, and nothing is left.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "harness.h"

namespace {

class TcpCc : public ::testing::Test {
protected:
	void SetUp() override
	{
		base_ = MakeTempDir("tcpcc");
		ASSERT_FALSE(base_.empty());
	}
	void TearDown() override
	{
		for (const std::string &p : KillLeftovers(base_))
			ADD_FAILURE() << "leftover process " << p;
		RemoveTree(base_);
	}
	// 4 ranks on 2 virtual hosts over streams (t_datapath); cc: the
	// --tcp-congestion argument or "" for none.
	RunResult Run(const std::string &cc, const std::string &job)
	{
		std::vector<std::string> av = { MsgrunPath(), "-n", "4", "-r", "1", "--virtual-hosts",
						"2", "--timeout", "60", "--job-dir", base_ + "/" + job,
						"--direct" };
		if (!cc.empty()) {
			av.push_back("--tcp-congestion");
			av.push_back(cc);
		}
		av.push_back(ProgPath("t_datapath"));
		av.push_back("12");
		RunResult res = RunProgram(av, 75, nullptr,
					   { "MSG_TEST_DIRECT_REPORT=1", "MSG_TEST_DIRECT_SYNC=1" });
		EXPECT_FALSE(res.timed_out) << res.err;
		return res;
	}
	std::string base_;
};

// The congestion controls the ranks' streams reported.
std::set<std::string> Reported(const std::string &err)
{
	std::set<std::string> got;
	const std::string key = "congestion control of its streams: ";

	for (size_t p = 0; (p = err.find(key, p)) != std::string::npos; p += key.size())
		got.insert(err.substr(p + key.size(), err.find('\n', p) - p - key.size()));
	return got;
}

std::string SystemDefault()
{
	std::ifstream f("/proc/sys/net/ipv4/tcp_congestion_control");
	std::string s;
	f >> s;
	return s;
}

} // namespace

// reno is allowed to everyone (the kernel's fallback): every stream has it.
TEST_F(TcpCc, StreamsCarryTheNamedOne)
{
	RunResult res = Run("reno", "reno");
	ASSERT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_EQ(Reported(res.err), std::set<std::string>{ "reno" }) << res.err;
}

// The default (cubic,reno) never leaves a pacing one (bbr) on the streams.
TEST_F(TcpCc, DefaultIsCubicOrReno)
{
	RunResult res = Run("", "default");
	ASSERT_EQ(res.exit_code(), 0) << res.err;
	std::set<std::string> got = Reported(res.err);
	ASSERT_EQ(got.size(), 1u) << res.err;
	EXPECT_TRUE(*got.begin() == "cubic" || *got.begin() == "reno") << *got.begin();
}

// Negative control: "system" leaves the system's default on the streams
// (on a machine whose default is bbr, the test above then sees bbr).
TEST_F(TcpCc, SystemKeepsTheSystemDefault)
{
	RunResult res = Run("system", "system");
	ASSERT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_EQ(Reported(res.err), std::set<std::string>{ SystemDefault() }) << res.err;
}

// A name the kernel does not know: msgd refuses to start and says why;
// msgrun says which host, exits non-zero, and leaves nothing behind.
TEST_F(TcpCc, UnknownNameIsAClearErrorAtStart)
{
	RunResult res = Run("nosuch-cc,alsonot", "bad");
	EXPECT_NE(res.exit_code(), 0);
	EXPECT_NE(res.err.find("--tcp-congestion nosuch-cc,alsonot: none of these"),
		  std::string::npos)
		<< res.err;
	EXPECT_NE(res.err.find("msgd did not start"), std::string::npos) << res.err;
	EXPECT_FALSE(Exists(base_ + "/bad/0.0")) << "a replica started";
}

// With a host file the daemons are already running: msgrun cannot choose.
TEST_F(TcpCc, RefusedWithAHostFile)
{
	std::string hf = base_ + "/hosts";
	std::ofstream(hf) << "127.0.0.1:7420 slots=1\n";
	RunResult res = RunProgram({ MsgrunPath(), "-n", "1", "--hostfile", hf, "--tcp-congestion",
				     "reno", "/bin/true" },
				   20);
	EXPECT_EQ(res.exit_code(), 2) << res.err;
	EXPECT_NE(res.err.find("start each host's msgd with --tcp-congestion"), std::string::npos)
		<< res.err;
}
