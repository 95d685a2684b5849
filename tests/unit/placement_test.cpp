// Placement (paper, Figure 3; DESIGN §4): processes 0.0, 0.1, ..., 1.0, ...
// are dealt to hosts in ascending order; no two replicas of a group share a
// host; r > m is refused.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <set>

extern "C" {
#include "core/core.h"
}

TEST(Placement, PaperFigure3_n5_r3_m5)
{
	// the figure's table: host of replica k of group g
	const uint32_t want[5][3] = { { 0, 1, 2 }, { 3, 4, 0 }, { 1, 2, 3 }, { 4, 0, 1 }, { 2, 3, 4 } };
	uint32_t per_host[5] = { 0 };

	for (uint32_t g = 0; g < 5; g++)
		for (uint32_t k = 0; k < 3; k++) {
			EXPECT_EQ(core_place(g, k, 3, 5), want[g][k]) << g << "." << k;
			per_host[core_place(g, k, 3, 5)]++;
		}
	for (uint32_t h = 0; h < 5; h++)
		EXPECT_EQ(per_host[h], 3u) << "host " << h; // dealt evenly
}

TEST(Placement, NoTwoReplicasOfAGroupShareAHost)
{
	for (uint32_t m = 1; m <= 9; m++)
		for (uint32_t r = 1; r <= m; r++)
			for (uint32_t g = 0; g < 40; g++) {
				std::set<uint32_t> hosts;
				for (uint32_t k = 0; k < r; k++) {
					uint32_t h = core_place(g, k, r, m);
					EXPECT_LT(h, m);
					hosts.insert(h);
				}
				EXPECT_EQ(hosts.size(), r) << "g=" << g << " r=" << r << " m=" << m;
			}
}

TEST(Placement, CoreMapAgreesWithRule)
{
	const uint32_t n = 5, r = 3, m = 5;
	for (uint32_t h = 0; h < m; h++) {
		core_cfg cfg{};
		cfg.host = h;
		cfg.n = n;
		cfg.r = r;
		cfg.m = m;
		core *c = core_new(&cfg);
		ASSERT_NE(c, nullptr);
		for (uint32_t g = 0; g < n; g++) {
			uint32_t rep = 99, here = 0;
			for (uint32_t k = 0; k < r; k++) {
				EXPECT_EQ(core_host_of(c, g, k), core_place(g, k, r, m));
				here += core_place(g, k, r, m) == h;
			}
			EXPECT_EQ(core_is_local(c, g, &rep), here == 1);
			if (here) {
				EXPECT_EQ(core_place(g, rep, r, m), h);
			}
			EXPECT_EQ(core_leader(c, g), 0u); // everyone alive: replica 0 leads
		}
		core_free(c);
	}
}

TEST(Placement, BadConfigurationsRefused)
{
	auto make = [](uint32_t host, uint32_t n, uint32_t r, uint32_t m, uint8_t mode = CMP_FIRST) {
		core_cfg cfg{};
		cfg.host = host;
		cfg.n = n;
		cfg.r = r;
		cfg.m = m;
		cfg.mode = mode;
		core *c = core_new(&cfg);
		bool ok = c != nullptr;
		core_free(c);
		return ok;
	};
	EXPECT_TRUE(make(0, 5, 3, 5));
	EXPECT_TRUE(make(2, 1, 3, 3));
	EXPECT_FALSE(make(0, 5, 4, 3)) << "r > m must be refused";
	EXPECT_FALSE(make(0, 2, 3, 2)) << "r > m must be refused";
	EXPECT_FALSE(make(0, 0, 1, 1));
	EXPECT_FALSE(make(0, 1, 0, 1));
	EXPECT_FALSE(make(0, 1, 1, 0));
	EXPECT_FALSE(make(5, 5, 3, 5)) << "host index past m";
	EXPECT_FALSE(make(0, 2, 17, 20)) << "r past CORE_MAX_R";
	EXPECT_FALSE(make(0, 2, 1, 2, 7)) << "unknown comparison mode";
}

namespace {

// A core for host `host` of an n x r job on m hosts, its local processes started.
core *StartedCore(uint32_t host, uint32_t n, uint32_t r, uint32_t m)
{
	core_cfg cfg{};
	cfg.host = host;
	cfg.n = n;
	cfg.r = r;
	cfg.m = m;
	core *c = core_new(&cfg);
	if (!c)
		return nullptr;
	for (uint32_t g = 0; g < n; g++)
		if (core_is_local(c, g, nullptr) && core_local_start(c, g)) {
			core_free(c);
			return nullptr;
		}
	return c;
}

// Host h's heartbeat number `count` reaches c.
bool Heartbeat(core *c, uint32_t h, uint64_t count)
{
	frame f{};
	f.h.type = F_HEARTBEAT;
	f.u.heartbeat.host = h;
	f.u.heartbeat.count = count;
	return core_peer_frame(c, h, &f, nullptr) == 0;
}

} // namespace

// Back-to-back regenerations by one coordinator spread over the hosts
// (MOSIX least load counts the copies already under way). n = 16, r = 3 on
// 6 hosts: the even ranks live on hosts 0, 1, 2 with replica 0 on host 0, so
// when host 2 is lost host 0 coordinates all 8 copies; hosts 3, 4, 5 hold no
// replica of them and are equally loaded. Before the fix all 8 went to host 3.
TEST(Placement, BackToBackRegenerationsSpread)
{
	const uint32_t n = 16, r = 3, m = 6, lost = 2;
	const uint64_t ms = 1000000ull;
	core *c = StartedCore(0, n, r, m);
	ASSERT_NE(c, nullptr);
	uint32_t per_target[6] = { 0 }, copies = 0;
	for (uint64_t t = 1; t <= 1500; t += 20) {
		core_tick(c, t * ms);
		for (uint32_t h = 1; h < m; h++) {
			if (h == lost)
				continue; // silent: lost after the heartbeat timeout
			ASSERT_TRUE(Heartbeat(c, h, t));
		}
		size_t na = 0;
		action *a = core_take_actions(c, &na);
		for (size_t i = 0; i < na; i++) {
			if (a[i].kind == A_EVENT && strstr(a[i].text, "\"event\":\"regen-start\"")) {
				const char *p = strstr(a[i].text, "\"target\":");
				ASSERT_NE(p, nullptr);
				uint32_t target = (uint32_t)atoi(p + 9);
				ASSERT_LT(target, m);
				per_target[target]++;
				copies++;
			}
			mbuf_put(a[i].m);
			frame_release(&a[i].f);
		}
		free(a);
	}
	EXPECT_EQ(copies, 8u);
	EXPECT_EQ(per_target[0] + per_target[1] + per_target[2], 0u) << "a sibling's host";
	for (uint32_t h = 3; h < m; h++) { // 8 copies over 3 hosts: 2 or 3 each
		EXPECT_TRUE(per_target[h] == 2 || per_target[h] == 3)
			<< "host " << h << " got " << per_target[h] << " of " << copies;
	}
	core_free(c);
}

// Two hosts of a group lost at once: each lost replica was the other's
// coordinator (lowest live replica but itself), so suspicions went to lost
// hosts and neither was fenced (campaign seed 1 run 24 hung for good). A
// replica on a host known lost coordinates nothing: the surviving replica's
// daemon fences both.
TEST(Placement, TwoHostsOfAGroupLostAtOnceAreFenced)
{
	const uint32_t n = 4, r = 3, m = 6;
	const uint64_t ms = 1000000ull;
	core *c = StartedCore(2, n, r, m); // rank 0 lives on hosts 0, 1, 2
	ASSERT_NE(c, nullptr);
	bool fenced[3] = { false, false, false };
	for (uint64_t t = 1; t <= 1500; t += 20) {
		core_tick(c, t * ms);
		for (uint32_t h = 3; h < m; h++) { // hosts 0 and 1 are silent
			ASSERT_TRUE(Heartbeat(c, h, t));
		}
		size_t na = 0;
		action *a = core_take_actions(c, &na);
		for (size_t i = 0; i < na; i++) {
			if (a[i].kind == A_EVENT && strstr(a[i].text, "\"event\":\"fence\"") &&
			    strstr(a[i].text, "\"group\":0,")) {
				const char *p = strstr(a[i].text, "\"rep\":");
				ASSERT_NE(p, nullptr);
				uint32_t k = (uint32_t)atoi(p + 6);
				ASSERT_LT(k, r);
				fenced[k] = true;
			}
			mbuf_put(a[i].m);
			frame_release(&a[i].f);
		}
		free(a);
	}
	EXPECT_TRUE(fenced[0]) << "0.0 (on lost host 0) never fenced";
	EXPECT_TRUE(fenced[1]) << "0.1 (on lost host 1) never fenced";
	EXPECT_FALSE(fenced[2]);
	EXPECT_FALSE(core_alive(c, 0, 0));
	EXPECT_FALSE(core_alive(c, 0, 1));
	core_free(c);
}
