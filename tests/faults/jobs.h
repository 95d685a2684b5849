// The fault tests' jobs: msgrun on virtual hosts with an event log, and the
// list-of-failed-checks style every scenario uses (faults_test.cpp,
// fault_free_test.cpp).
#ifndef MSG_TESTS_FAULTS_JOBS_H
#define MSG_TESTS_FAULTS_JOBS_H

#include <signal.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "events.h"
#include "harness.h"

namespace faults {

using Fails = std::vector<std::string>;

inline std::string Join(const Fails &f)
{
	std::string s;
	for (const auto &x : f)
		s += "  - " + x + "\n";
	return s;
}

inline bool Mentions(const Fails &f, const std::string &needle)
{
	for (const auto &x : f)
		if (x.find(needle) != std::string::npos)
			return true;
	return false;
}

inline std::string Rep(int g, int k)
{
	return std::to_string(g) + "." + std::to_string(k);
}

inline int HostOf(int g, int k, int r, int m)
{
	return (g * r + k) % m;
}

inline std::string BinPath(const std::string &name)
{
	return std::string(MSG_BIN_DIR) + "/" + name;
}

struct Run {
	RunResult res;
	std::vector<Event> ev;
	std::string dir; // job directory (kept with keep=true)
};

// msgrun ended by itself, exited 0, and f_stream's checked answer for n ranks came.
inline void CheckAnswer(const Run &run, Fails &f, int n)
{
	if (run.res.timed_out)
		f.push_back("msgrun had to be killed by the test");
	if (run.res.exit_code() != 0)
		f.push_back("msgrun exited " + std::to_string(run.res.exit_code()));
	if (run.res.out.find("stream ok n=" + std::to_string(n)) == std::string::npos)
		f.push_back("checked answer: no 'stream ok' (stdout: " + run.res.out + ")");
}

// A scenario that failed a check carries the job's events and stderr.
inline void AddEvidence(Fails &f, const Run &run, bool with_stdout = false)
{
	if (!f.empty())
		f.push_back("events:\n" + Dump(run.ev) + (with_stdout ? "stdout:\n" + run.res.out : "") +
			    "stderr:\n" + run.res.err);
}

// One job: msgrun -n n -r r --virtual-hosts m --events ... opts prog args.
class Jobs {
public:
	Jobs()
	{
		base_ = MakeTempDir("faults");
	}
	~Jobs()
	{
		// no process left under our directory (a fenced replica must be gone)
		for (const std::string &p : KillLeftovers(base_))
			ADD_FAILURE() << "leftover process " << p;
		RemoveTree(base_);
	}
	// env: extra NAME=VALUE for msgrun (and so every daemon and replica)
	Run Go(int n, int r, int m, const std::vector<std::string> &opts, const std::string &prog,
	       const std::vector<std::string> &args, int timeout = 40, bool keep = false,
	       const std::vector<std::string> &env = {})
	{
		Run run;
		int id = seq_++;
		run.dir = base_ + "/job" + std::to_string(id);
		std::string evf = base_ + "/events" + std::to_string(id) + ".jsonl";
		std::vector<std::string> av = { MsgrunPath(), "-n", std::to_string(n), "-r",
						std::to_string(r), "--virtual-hosts", std::to_string(m),
						"--timeout", std::to_string(timeout), "--job-dir", run.dir,
						"--events", evf };
		if (keep)
			av.push_back("--keep-job-dir");
		av.insert(av.end(), opts.begin(), opts.end());
		av.push_back(prog);
		av.insert(av.end(), args.begin(), args.end());
		run.res = RunProgram(av, timeout + 20, nullptr, env);
		run.ev = ReadEvents(evf);
		return run;
	}
	const std::string &base() const { return base_; }

private:
	std::string base_;
	int seq_ = 0;
};

} // namespace faults

#endif
