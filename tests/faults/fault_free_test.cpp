// Issue 5 acceptance 4: no suspicion and no fence without faults, with two
// jobs at once on this machine's 2 cores, at the default detector settings.
#include <gtest/gtest.h>

#include <thread>

#include "jobs.h"

namespace {

using namespace faults;

struct App {
	std::string name;
	std::vector<std::string> args;
};

std::vector<App> Exemplars(const std::string &las)
{
	return {
		{ "integration", { "--intervals", "2000000" } },
		{ "dirichlet", { "--nx", "24", "--ny", "20", "--tol", "1e-9", "--max-error", "1e-6" } },
		{ "lidar", { "--input", las, "--tile", "32", "--max-rmse", "0.2" } },
	};
}

// Runs the three exemplars `rounds` times, two jobs at once (n=4 r=3 on
// 3 virtual hosts each: 24 processes on this machine's cores), default
// detector settings. Every run: answer checked ("ok"), no suspicion, no
// fence.
Fails FaultFree(int rounds)
{
	Jobs jobs;
	Fails f;
	std::string las = jobs.base() + "/terrain.las";
	RunResult gen = RunProgram({ BinPath("lidar_gen"), "--out", las, "--points", "30000", "--size",
				     "120", "--seed", "11", "--version", "1.2", "--format", "1" },
				   60);
	if (gen.exit_code() != 0)
		return { "lidar_gen failed: " + gen.err };
	auto apps = Exemplars(las);
	int runs = 0;
	for (int round = 0; round < rounds; round++)
		for (const auto &a : apps) {
			Run out[2];
			std::thread t([&] { out[1] = jobs.Go(4, 3, 3, {}, BinPath(a.name), a.args, 120); });
			out[0] = jobs.Go(4, 3, 3, {}, BinPath(a.name), a.args, 120);
			t.join();
			for (auto &run : out) {
				runs++;
				std::string what = a.name + " round " + std::to_string(round) + ": ";
				if (run.res.exit_code() != 0 || run.res.out.find(" ok") == std::string::npos)
					f.push_back(what + "answer not ok (exit " +
						    std::to_string(run.res.exit_code()) + "): " + run.res.out +
						    run.res.err);
				for (const auto &e : run.ev)
					if (e.kind() == "fence" || e.kind() == "suspicion")
						f.push_back(what + e.line);
			}
		}
	if (runs != rounds * 6)
		f.push_back("ran " + std::to_string(runs) + " jobs");
	return f;
}

} // namespace

TEST(FaultFree, QuickNoFenceUnderLoad)
{
	Fails f = FaultFree(1);
	EXPECT_TRUE(f.empty()) << Join(f);
}

// label slow: 20 runs of each exemplar (10 rounds x 2 jobs at once)
TEST(FaultFree, SlowNoFenceIn20RunsUnderLoad)
{
	Fails f = FaultFree(10);
	EXPECT_TRUE(f.empty()) << Join(f);
}
