// A replacement daemon (msgctl add-host: core_rejoin) in its first second,
// driven alone with scripted frames: its peers learn that its host is back
// from the launcher (HOST_UP) on another connection, some late, and until
// then drop what it sends and send it nothing. (Both failures of
// mig-recur-10-host-losses on 2026-11-22.)
//  - It asks every peer for the map and asks again until one answers.
//  - During its grace it declares lost only a host it heard and then no
//    more: a peer that never spoke yet is not suspected (its replicas were
//    fenced on the replacement's word), nor does it count itself cut off;
//    after the grace a host that never spoke is lost as usual.
#include "core_harness.h"

namespace {

constexpr uint64_t kMs = 1000000ull;
constexpr uint32_t kM = 6, kSelf = 2;

struct Rejoiner {
	core *c = nullptr;
	std::vector<action> acts;
	Rejoiner()
	{
		core_cfg cfg{};
		cfg.host = kSelf;
		cfg.n = 4;
		cfg.r = 3;
		cfg.m = kM;
		cfg.mode = CMP_FIRST;
		c = core_new(&cfg);
		EXPECT_NE(c, nullptr);
		core_rejoin(c);
		Take();
	}
	~Rejoiner() { core_free(c); }
	Rejoiner(const Rejoiner &) = delete;
	Rejoiner &operator=(const Rejoiner &) = delete;
	void Take()
	{
		size_t n = 0;
		action *v = core_take_actions(c, &n);
		for (size_t i = 0; i < n; i++) {
			acts.push_back(v[i]);
			mbuf_put(v[i].m);
			acts.back().m = nullptr;
		}
		free(v);
	}
	// Ticks every 20 ms over (from, to]; the hosts in `talking` send a
	// heartbeat at each.
	void Run(uint64_t from_ms, uint64_t to_ms, std::vector<uint32_t> talking)
	{
		for (uint64_t t = from_ms + 20; t <= to_ms; t += 20) {
			core_tick(c, t * kMs);
			for (uint32_t h : talking) {
				frame f{};
				f.h.type = F_HEARTBEAT;
				f.u.heartbeat.host = h;
				EXPECT_EQ(core_peer_frame(c, h, &f, nullptr), 0);
			}
			Take();
		}
	}
	size_t Count(uint8_t type, uint32_t to = UINT32_MAX) const
	{
		size_t k = 0;
		for (const action &a : acts)
			k += a.kind == A_PEER && a.f.h.type == type && (to == UINT32_MAX || a.host == to);
		return k;
	}
	bool Lost(uint32_t h) const
	{
		std::string want = "\"lost\":" + std::to_string(h) + ",";
		for (const action &a : acts)
			if (a.kind == A_EVENT && strstr(a.text, "\"host-lost\"") && strstr(a.text, want.c_str()))
				return true;
		return false;
	}
};

} // namespace

TEST(Rejoin, AsksEveryPeerForTheMapUntilOneAnswers)
{
	Rejoiner r;
	for (uint32_t h = 0; h < kM; h++)
		EXPECT_EQ(r.Count(F_MAP_SYNC_REQ, h), h == kSelf ? 0u : 1u) << "host " << h;
	r.Run(1000, 1500, { 0, 1, 3, 4, 5 }); // nobody answers: the asks were dropped
	EXPECT_GE(r.Count(F_MAP_SYNC_REQ, 0), 3u) << "asked again every 200 ms";

	frame f{};
	f.h.type = F_STATUS;
	ASSERT_EQ(core_map_dump(r.c, &f.u.status), 0); // any consistent map will do
	ASSERT_EQ(core_peer_frame(r.c, 0, &f, nullptr), 0);
	free(f.u.status.reps);
	r.Take();
	size_t asked = r.Count(F_MAP_SYNC_REQ);
	r.Run(1500, 2000, { 0, 1, 3, 4, 5 });
	EXPECT_EQ(r.Count(F_MAP_SYNC_REQ), asked) << "asks go on after a map came";
}

TEST(Rejoin, PeersNotYetTalkingAreNotLostDuringTheGrace)
{
	Rejoiner r;
	// hosts 0, 1, 3, 4 heard HOST_UP at once, host 5 only 1 s later (beyond
	// the 250 ms heartbeat timeout); host 3 is heard, then goes silent
	r.Run(1000, 1200, { 0, 1, 3, 4 });
	r.Run(1200, 2000, { 0, 1, 4 });
	EXPECT_FALSE(r.Lost(5)) << "a peer that did not talk yet was declared lost";
	EXPECT_TRUE(r.Lost(3)) << "a host heard and then silent is lost even in the grace";
	size_t suspects = 0;
	for (const action &a : r.acts) {
		EXPECT_FALSE(a.kind == A_EVENT && strstr(a.text, "\"isolated\"")) << a.text;
		if (a.kind != A_PEER || a.f.h.type != F_SUSPECT)
			continue;
		suspects++;
		EXPECT_EQ(core_place(a.f.u.suspect.group, a.f.u.suspect.rep, 3, kM), 3u)
			<< "suspected " << a.f.u.suspect.group << "." << a.f.u.suspect.rep;
	}
	EXPECT_GE(suspects, 2u) << "1.0 and 3.0, on host 3";
	r.Run(2000, 2200, { 0, 1, 4, 5 });
	EXPECT_FALSE(r.Lost(5));
}

TEST(Rejoin, APeerThatNeverTalksIsLostAfterTheGrace)
{
	Rejoiner r;
	r.Run(1000, 2000, { 0, 1, 3, 4 });
	EXPECT_FALSE(r.Lost(5));
	r.Run(2000, 3500, { 0, 1, 3, 4 }); // the grace: 8 heartbeat timeouts (2 s)
	EXPECT_TRUE(r.Lost(5));
}
