// The majority after host losses (DESIGN §5 rule 3; runtime/core/detect.c,
// quorum_hosts): a daemon counts the majority of the hosts not lost already.
//
// Placement (host = (g*r+k) mod m), n=3 r=3 m=5:
//   host 0: 0.0 1.2   host 1: 0.1 2.0   host 2: 0.2 2.1   host 3: 1.0 2.2
//   host 4: 1.1
// Hosts 1 and 2 die, 1.2 s apart (each loss repaired onto 0, 3 and 4 before
// the next), then host 0 is cut off for good. Hosts 3 and 4 are two of the
// three hosts left: a majority, so they go on with two replicas per rank and
// host 0 fences its own. Counted of all five hosts (the negative control,
// --test-switch fixed-quorum) they are two of five: they fence every process
// they have and the job dies with two of its hosts healthy (campaign run 145
// of session 9 died that way when one daemon was late under load).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "events.h"
#include "harness.h"
#include "jobs.h"

namespace {

using namespace faults;

Fails QuorumScenario(Jobs &jobs, const std::vector<std::string> &extra)
{
	std::vector<std::string> o = { "--inject",
				       "kill-host 1@0.4s; kill-host 2@1.6s; cut 0@2.8s" };
	o.insert(o.end(), extra.begin(), extra.end());
	// ~6 s of traffic (600 rounds paced 10 ms): the cut falls well inside it
	Run run = jobs.Go(3, 3, 5, o, ProgPath("f_stream"), { "600", "1000", "10" }, 40);
	Fails f;
	CheckAnswer(run, f, 3);
	for (int h : { 3, 4 }) {
		auto iso = Select(run.ev, [&](const Event &e) {
			return e.kind() == "isolated" && e.num("host") == h;
		});
		if (!iso.empty())
			f.push_back("majority side: host " + std::to_string(h) +
				    " declared itself isolated: " + iso.front().line);
		auto lost0 = Select(run.ev, [&](const Event &e) {
			return e.kind() == "host-lost" && e.num("host") == h && e.num("lost") == 0;
		});
		if (lost0.empty())
			f.push_back("majority side: host " + std::to_string(h) +
				    " never declared host 0 lost");
	}
	if (Select(run.ev, [](const Event &e) { return e.kind() == "isolated" && e.num("host") == 0; })
		    .empty())
		f.push_back("minority: host 0 never logged 'isolated'");
	AddEvidence(f, run);
	return f;
}

} // namespace

TEST(Quorum, AfterTwoLossesTheThreeLeftCountTheirOwnMajority)
{
	Jobs jobs;
	Fails f = QuorumScenario(jobs, {});
	EXPECT_TRUE(f.empty()) << Join(f);
}

TEST(Quorum, NegativeControl_FixedQuorumIsolatesTheMajority)
{
	Jobs jobs;
	Fails f = QuorumScenario(jobs, { "--test-switch", "fixed-quorum" });
	EXPECT_TRUE(Mentions(f, "declared itself isolated")) << Join(f);
}
