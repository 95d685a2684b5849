// Placement (paper, Figure 3; DESIGN §4): processes 0.0, 0.1, ..., 1.0, ...
// are dealt to hosts in ascending order; no two replicas of a group share a
// host; r > m is refused.
#include <gtest/gtest.h>

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
