// Integration tests with real daemons and processes: msgrun starts m
// virtual hosts (one msgd each), the test programs of tests/progs run as
// n ranks x r replicas. Every run is bounded by msgrun --timeout and by the
// harness's own kill timer. After each job: exit status, output, no process
// left that mentions the job directory, and the job directory gone (unless
// kept on purpose).
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <set>
#include <chrono>
#include <cstring>
#include <map>
#include <sstream>
#include <thread>

#include "harness.h"

namespace {

struct Job {
	uint32_t n, r, m;
};

std::string Describe(const Job &j)
{
	return "n" + std::to_string(j.n) + "_r" + std::to_string(j.r) + "_m" + std::to_string(j.m);
}

class JobTest : public ::testing::Test {
protected:
	void SetUp() override
	{
		base_ = MakeTempDir("job");
		ASSERT_FALSE(base_.empty());
		dir_ = base_ + "/job";
	}
	void TearDown() override
	{
		ExpectNoLeftovers();
		RemoveTree(base_);
	}

	RunResult RunJob(const Job &j, const std::string &prog, const std::vector<std::string> &args,
			 const std::vector<std::string> &opts = {}, double timeout = 60,
			 const std::function<void(pid_t)> &tick = nullptr)
	{
		std::vector<std::string> av = { MsgrunPath(), "-n", std::to_string(j.n), "-r",
						std::to_string(j.r), "--virtual-hosts", std::to_string(j.m),
						"--timeout", std::to_string((int)timeout), "--job-dir", dir_ };
		av.insert(av.end(), opts.begin(), opts.end());
		av.push_back(ProgPath(prog));
		av.insert(av.end(), args.begin(), args.end());
		RunResult res = RunProgram(av, timeout + 15, tick);
		EXPECT_FALSE(res.timed_out) << "msgrun had to be killed\n" << res.err;
		return res;
	}

	// No process whose cwd or command line is under the job directory
	// (replicas run in it, the virtual hosts' msgd name their key file in
	// it). Waits a little: a killed process may still be exiting.
	void ExpectNoLeftovers()
	{
		for (const std::string &p : KillLeftovers(base_))
			ADD_FAILURE() << "leftover process " << p;
	}

	std::string base_, dir_;
};

int Count(const std::string &hay, const std::string &needle)
{
	int k = 0;
	for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1))
		k++;
	return k;
}

} // namespace

// ---- ping-pong, all-to-all, ring over r = 1, 2, 3 and 2..6 hosts ----------

class Topology : public JobTest, public ::testing::WithParamInterface<Job> {};

TEST_P(Topology, PingPong)
{
	Job j = GetParam();
	RunResult res = RunJob({ 2, j.r, j.m }, "t_pingpong", {});
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	// each byte of a rank's output once, whatever r is
	EXPECT_EQ(Count(res.out, "pingpong ok"), 1) << res.out;
	EXPECT_FALSE(Exists(dir_)) << "job directory left behind";
}

TEST_P(Topology, AllToAll)
{
	Job j = GetParam();
	RunResult res = RunJob(j, "t_alltoall", { "3" });
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_EQ(Count(res.out, "alltoall ok"), 1) << res.out;
	EXPECT_FALSE(Exists(dir_));
}

TEST_P(Topology, Ring)
{
	Job j = GetParam();
	RunResult res = RunJob(j, "t_ring", { "20" });
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_EQ(Count(res.out, "ring ok"), 1) << res.out;
	EXPECT_FALSE(Exists(dir_));
}

INSTANTIATE_TEST_SUITE_P(Replicas, Topology,
			 ::testing::Values(Job{ 4, 1, 2 }, Job{ 3, 2, 2 }, Job{ 4, 2, 4 },
					   Job{ 3, 3, 3 }, Job{ 5, 3, 6 }),
			 [](const ::testing::TestParamInfo<Job> &i) { return Describe(i.param); });

// Held sends (runtime/lib/io.c, docs/datapath.md §10): with r > 1 a send
// that was followed by the next call within the bound its last two times is
// held and written with the next frame. With every send eligible (a bound of
// 1000 s) exactly-once, per-pair order, contents and the ANYSRC phase still
// hold, and sends were held; a send followed by a pause (t_anysrc's senders
// sleep 20-320 us after each) is never held with the default 50 us bound; and
// MSG_HOLD_US=0 holds nothing. The count comes from MSG_TEST_HOLD_REPORT.
namespace {
long HeldSends(const std::string &err, long *total)
{
	long held = 0, all = 0;
	for (size_t p = err.find("sends held"); p != std::string::npos; p = err.find("sends held", p + 1)) {
		size_t b = err.rfind(": ", p);
		long h = 0, t = 0;
		if (b != std::string::npos && sscanf(err.c_str() + b + 2, "%ld of %ld", &h, &t) == 2) {
			held += h;
			all += t;
		}
	}
	*total = all;
	return held;
}

struct EnvSet {
	EnvSet(const char *k, const char *v) : k_(k) { setenv(k, v, 1); }
	~EnvSet() { unsetenv(k_); }
	const char *k_;
};
} // namespace

TEST_F(JobTest, HeldSendsKeepOrderAndOnlyBackToBackAreHeld)
{
	EnvSet report("MSG_TEST_HOLD_REPORT", "1");
	long total = 0;
	{
		EnvSet all("MSG_HOLD_US", "1000000000");
		RunResult res = RunJob({ 4, 3, 3 }, "t_alltoall", { "6" }, { "--output", "all" });
		EXPECT_EQ(res.exit_code(), 0) << res.err;
		EXPECT_EQ(Count(res.out, "alltoall ok"), 3) << res.out;
		EXPECT_GT(HeldSends(res.err, &total), 0) << res.err;
		EXPECT_GT(total, 0);
		res = RunJob({ 3, 3, 3 }, "t_ring", { "30" }, { "--output", "all" });
		EXPECT_EQ(res.exit_code(), 0) << res.err;
		EXPECT_EQ(Count(res.out, "ring ok"), 3) << res.out;
	}
	{
		RunResult res = RunJob({ 3, 3, 3 }, "t_anysrc", { "30", "50" }, { "--output", "all" });
		EXPECT_EQ(res.exit_code(), 0) << res.err;
		HeldSends(res.err, &total);
		EXPECT_GT(total, 0) << res.err;
		// rank 0's releases go back to back; the senders' paced sends not
		long paced = 0;
		for (size_t p = res.err.find("msg: rank "); p != std::string::npos;
		     p = res.err.find("msg: rank ", p + 1)) {
			unsigned g = 0, k = 0;
			long h = 0, t = 0;
			if (sscanf(res.err.c_str() + p, "msg: rank %u.%u: %ld of %ld", &g, &k, &h, &t) == 4 && g)
				paced += h;
		}
		EXPECT_EQ(paced, 0) << res.err;
	}
	{
		EnvSet off("MSG_HOLD_US", "0");
		RunResult res = RunJob({ 4, 3, 3 }, "t_alltoall", { "6" }, { "--output", "all" });
		EXPECT_EQ(res.exit_code(), 0) << res.err;
		EXPECT_EQ(HeldSends(res.err, &total), 0) << res.err;
	}
}

// Negative control for the checks above: with exactly-once switched off
// (--test-switch no-dedupe) a second sender replica's copy of a consumed
// message is delivered again and t_alltoall must notice. Whether a copy
// comes before or after its message is consumed is a race, so up to 3
// runs are tried.
TEST_F(JobTest, ExactlyOnceNegativeControl_NoDedupeIsCaught)
{
	int failed = 0;
	for (int run = 0; run < 3 && !failed; run++) {
		RunResult res = RunJob({ 3, 2, 3 }, "t_alltoall", { "3" }, { "--test-switch", "no-dedupe" }, 30);
		failed += res.exit_code() != 0;
		RemoveTree(dir_);
	}
	EXPECT_GT(failed, 0) << "duplicates delivered but the all-to-all test did not notice";
}

// ---- ANYSRC: the same consumption order in every replica -------------------

namespace {
// Runs t_anysrc keeping the job directory; returns each replica's order.
std::vector<std::string> AnysrcOrders(JobTest *t, const Job &j, const std::string &dir,
				      const std::vector<std::string> &opts, int K,
				      const std::function<RunResult(const Job &, const std::vector<std::string> &)> &run)
{
	(void)t;
	std::vector<std::string> o = opts;
	o.push_back("--keep-job-dir");
	RunResult res = run(j, o);
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	std::vector<std::string> orders;
	for (uint32_t k = 0; k < j.r; k++) {
		std::string f = dir + "/0." + std::to_string(k) + "/order.txt";
		std::string s = ReadFile(f);
		EXPECT_EQ(Count(s, "\n"), (int)((j.n - 1) * K)) << f;
		orders.push_back(s);
	}
	RemoveTree(dir);
	return orders;
}
} // namespace

class Anysrc : public JobTest, public ::testing::WithParamInterface<Job> {
protected:
	std::vector<std::string> Orders(const std::vector<std::string> &opts)
	{
		const int K = 40;
		return AnysrcOrders(this, GetParam(), dir_, opts, K,
				    [&](const Job &j, const std::vector<std::string> &o) {
					    return RunJob(j, "t_anysrc", { std::to_string(K), "150" }, o);
				    });
	}
};

TEST_P(Anysrc, AnysrcSameOrderInEveryReplica)
{
	// two runs: different races, each must agree across its replicas
	for (int run = 0; run < 2; run++) {
		std::vector<std::string> o = Orders({});
		for (size_t k = 1; k < o.size(); k++)
			EXPECT_EQ(o[k], o[0]) << "replica " << k << " of rank 0 consumed another order";
	}
}

TEST_P(Anysrc, AnysrcNegativeControl_NoProtocolDiverges)
{
	// With the decision protocol off each replica takes its own arrival
	// order. The race is real but not forced: senders local to one replica
	// of rank 0 are remote to the other, so the orders usually differ on
	// the first run; a run where the schedules happened to line up proves
	// nothing, so up to 6 runs are tried before calling the control failed.
	int diverged = 0, runs = 0;
	for (; runs < 6 && !diverged; runs++) {
		std::vector<std::string> o = Orders({ "--test-switch", "no-anysrc-protocol" });
		for (size_t k = 1; k < o.size(); k++)
			diverged += o[k] != o[0];
	}
	EXPECT_GT(diverged, 0) << "the orders never diverged in " << runs
			       << " runs: the test cannot tell the protocol works";
	RecordProperty("runs_until_divergence", runs);
}

INSTANTIATE_TEST_SUITE_P(Replicas, Anysrc, ::testing::Values(Job{ 5, 2, 3 }, Job{ 4, 3, 4 }),
			 [](const ::testing::TestParamInfo<Job> &i) { return Describe(i.param); });

// ---- API errors ------------------------------------------------------------

class Errors : public JobTest, public ::testing::WithParamInterface<Job> {};

TEST_P(Errors, EtruncEinitErank)
{
	RunResult res = RunJob(GetParam(), "t_errors", {});
	EXPECT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_EQ(Count(res.out, "errors ok"), 1) << res.out;
}

INSTANTIATE_TEST_SUITE_P(Replicas, Errors,
			 ::testing::Values(Job{ 2, 1, 2 }, Job{ 3, 2, 2 }, Job{ 2, 3, 3 }),
			 [](const ::testing::TestParamInfo<Job> &i) { return Describe(i.param); });

TEST(NotLaunched, MsgInitializeSaysNotLaunched)
{
	// no MSG_FD at all, an empty one, and one naming a closed descriptor
	for (const char *env : { "MSG_FD_UNUSED=1", "MSG_FD=", "MSG_FD=97" }) {
		std::vector<std::string> e = { env };
		if (!strncmp(env, "MSG_FD_", 7))
			unsetenv("MSG_FD");
		RunResult res = RunProgram({ ProgPath("t_errors"), "notlaunched" }, 20, nullptr, e);
		EXPECT_EQ(res.exit_code(), 0) << env << ": " << res.err;
		EXPECT_NE(res.out.find("notlaunched ok"), std::string::npos) << env;
	}
}

// ---- a failing rank ends the job; nothing is left behind -------------------

struct Failure {
	const char *how;
	int code;          // msgrun's exit code
	const char *what;  // in msgrun's message
};

class RankFailure : public JobTest, public ::testing::WithParamInterface<Failure> {};

TEST_P(RankFailure, EndsJobNamingRankHostAndStatus)
{
	Failure f = GetParam();
	// sanitizer builds: let SIGSEGV kill the program instead of ASan's
	// handler turning it into exit code 1 (the variable is ignored
	// otherwise); replicas inherit msgrun's environment
	const char *old = getenv("ASAN_OPTIONS");
	std::string saved = old ? old : "";
	setenv("ASAN_OPTIONS", "detect_leaks=0:handle_segv=0", 1);
	RunResult res = RunJob({ 3, 1, 2 }, "t_fail", { f.how, "200" }, {}, 30);
	if (old)
		setenv("ASAN_OPTIONS", saved.c_str(), 1);
	else
		unsetenv("ASAN_OPTIONS");
	EXPECT_EQ(res.exit_code(), f.code) << res.err;
	// rank 1 (replica 1.0) lives on host 1 by the placement rule
	EXPECT_NE(res.err.find("rank 1"), std::string::npos) << res.err;
	EXPECT_NE(res.err.find("host 1"), std::string::npos) << res.err;
	EXPECT_NE(res.err.find(f.what), std::string::npos) << res.err;
	ExpectNoLeftovers();
	EXPECT_FALSE(Exists(dir_)) << "job directory left behind";
}

INSTANTIATE_TEST_SUITE_P(How, RankFailure,
			 ::testing::Values(Failure{ "exit", 3, "code 3" },
					   Failure{ "segv", 128 + SIGSEGV, "signal 11" },
					   Failure{ "kill", 128 + SIGKILL, "signal 9" }),
			 [](const ::testing::TestParamInfo<Failure> &i) { return std::string(i.param.how); });

TEST_F(JobTest, SigtermToMsgrunTearsDownTheJob)
{
	double sent = 0;
	size_t seen = 0;
	auto start = std::chrono::steady_clock::now();
	RunResult res = RunJob({ 3, 2, 3 }, "t_fail", { "exit", "60000" }, {}, 30, [&](pid_t pid) {
		double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
		if (!seen && t > 1.0) // the leftover scan's positive control
			seen = ProcessesMentioning(base_).size();
		if (!sent && t > 1.5) {
			kill(pid, SIGTERM);
			sent = t;
		}
	});
	EXPECT_EQ(res.exit_code(), 128 + SIGTERM) << res.err;
	// while it ran, the scan found its 6 replicas and 3 daemons
	EXPECT_GE(seen, 9u) << "ProcessesMentioning cannot see a running job";
	double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
	EXPECT_LT(took - sent, 10) << "teardown took too long";
	ExpectNoLeftovers();
	EXPECT_FALSE(Exists(dir_));
}

// ---- a 1 GiB message, streamed: nobody holds more than size + 64 MiB -------


namespace {
long BigMib()
{
	return getenv("MSG_TEST_BIG_MIB") ? atol(getenv("MSG_TEST_BIG_MIB")) : 1024;
}
} // namespace

// The memory bound, with host-failure detection given time: while a
// message of this size is in flight nothing else is heard from its sender
// (see BigMessage1GiBWithDefaultDetection), which is a separate concern.
TEST_F(JobTest, BigMessage1GiBStreamedWithinMemoryBound)
{
	const long mib = BigMib();
	[[maybe_unused]] const long limit_kib = (mib + 64) * 1024;
	std::map<pid_t, long> msgd_hwm;
	RunResult res = RunJob({ 2, 1, 2 }, "t_big", { std::to_string(mib) }, { "--hb-timeout", "10000" },
			       120, [&](pid_t pid) {
		for (pid_t d : ChildrenNamed(pid, "msgd")) {
			long k = VmHwmKib(d);
			if (k > msgd_hwm[d])
				msgd_hwm[d] = k;
		}
	});
	ASSERT_EQ(res.exit_code(), 0) << res.err;
	EXPECT_NE(res.out.find("big ok"), std::string::npos) << res.out;
	std::map<int, long> app_hwm;
	std::istringstream in(res.out);
	std::string w;
	while (in >> w)
		if (w == "vmhwm_kib") {
			int rank;
			long kib;
			in >> rank >> kib;
			app_hwm[rank] = kib;
		}
	ASSERT_EQ(app_hwm.size(), 2u) << res.out;
	ASSERT_EQ(msgd_hwm.size(), 2u) << "did not see both msgd of the job";
	for (auto &kv : app_hwm)
		RecordProperty("rank" + std::to_string(kv.first) + "_vmhwm_kib", (int)kv.second);
	int i = 0;
	for (auto &kv : msgd_hwm)
		RecordProperty("msgd" + std::to_string(i++) + "_vmhwm_kib", (int)kv.second);
#ifdef MSG_ASAN
	GTEST_SKIP() << "sanitizer build: shadow memory makes the RSS bound meaningless; the "
			"transfer itself was checked";
#else
	for (auto &kv : app_hwm)
		EXPECT_LE(kv.second, limit_kib) << "rank " << kv.first << " peak RSS " << kv.second / 1024
						<< " MiB for a " << mib << " MiB message";
	for (auto &kv : msgd_hwm)
		EXPECT_LE(kv.second, limit_kib) << "msgd " << kv.first << " peak RSS " << kv.second / 1024
						<< " MiB for a " << mib << " MiB message";
#endif
}

// The same transfer with the default heartbeat settings, two jobs at once
// (as ctest -j2 runs them): a host busy moving one big message to a peer is
// alive, and unmapping 1 GiB afterwards must not silence its daemon.
TEST_F(JobTest, BigMessage1GiBWithDefaultDetection)
{
	const long mib = BigMib();
	RunResult res[2];
	auto go = [&](int i) {
		res[i] = RunProgram({ MsgrunPath(), "-n", "2", "-r", "1", "--virtual-hosts", "2", "--timeout",
				      "120", "--job-dir", dir_ + std::to_string(i), ProgPath("t_big"),
				      std::to_string(mib) },
				    140);
	};
	std::thread other(go, 1);
	go(0);
	other.join();
	for (auto &r : res) {
		EXPECT_FALSE(r.timed_out) << r.err;
		EXPECT_EQ(r.exit_code(), 0) << r.err;
		EXPECT_NE(r.out.find("big ok"), std::string::npos) << r.out;
		EXPECT_EQ(r.err.find("host-lost"), std::string::npos) << r.err;
	}
}
