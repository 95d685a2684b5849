// SPDX-License-Identifier: MIT
// Acceptance 2: restore inside a network namespace of its own (a stand-in
// for another host).  Needs root and iproute2; with CI=true a skip is a
// failure.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include "util.h"

using namespace ckpt_test;

namespace {

std::string ip_path()
{
	for (const char *p : { "/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip" })
		if (access(p, X_OK) == 0)
			return p;
	return "";
}

bool in_ci()
{
	const char *ci = getenv("CI");
	return ci && std::string(ci) == "true";
}

struct Netns {
	std::string ip, name;
	bool ok = false;
	Netns()
	{
		ip = ip_path();
		name = "ckpt-test-" + std::to_string(getpid());
		ok = !ip.empty() && run({ ip, "netns", "add", name }, "/", 10000).exited_ok();
	}
	~Netns()
	{
		if (ok)
			run({ ip, "netns", "delete", name }, "/", 10000);
	}
};

} // namespace

TEST(Netns, RestoreInAnotherNetworkNamespace)
{
	Netns ns;
	if (!ns.ok) {
		if (in_ci())
			FAIL() << "cannot create a network namespace (CI=true: a skip is a failure)";
		GTEST_SKIP() << "needs root and iproute2";
	}
	// The namespace really is another one.
	Result here = run({ "/usr/bin/readlink", "/proc/self/ns/net" }, "/", 10000);
	Result there = run({ ns.ip, "netns", "exec", ns.name, "/usr/bin/readlink", "/proc/self/ns/net" }, "/", 10000);
	ASSERT_TRUE(here.exited_ok() && there.exited_ok()) << there.err;
	ASSERT_NE(here.out, there.out);

	TmpDir dir;
	Scenario s = checkpoint_restore("ckpt_t_loop", { "4" }, dir, { ns.ip, "netns", "exec", ns.name });
	ASSERT_GT(s.captured_pid, 0) << s.captured.err;
	ASSERT_TRUE(s.restored.exited_ok()) << s.restored.err;
	EXPECT_NE(s.restored_pid, s.captured_pid);
	EXPECT_EQ(s.restored.out, s.straight.out);
}
