// A tiny world for driving protocol cores (runtime/core) with scripted
// events: one core per simulated host, the test playing every other party.
// Frames the cores address to each other (A_PEER) are held in a queue the
// test releases in the order it chooses, so races are scripted, not timed.
#ifndef MSG_TESTS_CORE_HARNESS_H
#define MSG_TESTS_CORE_HARNESS_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include "core/core.h"
#include "msg.h"
#include "util/mbuf.h"
}

struct Delivery {
	uint32_t group;
	uint32_t src;
	int32_t tag;
	uint64_t seq;     // 0 for L_TRUNC (the wire frame has none)
	uint64_t size;
	bool trunc;
	std::string payload;
};

struct Held {
	uint32_t from, to;
	frame f;
	mbuf *m;
};

inline mbuf *MakeBuf(const std::string &s)
{
	mbuf *m = mbuf_new(s.size());
	if (m && !s.empty())
		memcpy(m->data, s.data(), s.size());
	return m;
}

class World {
public:
	World(uint32_t n, uint32_t r, uint32_t m, std::vector<uint32_t> hosts, uint8_t mode = CMP_FIRST,
	      uint32_t flags = 0, uint32_t test = 0)
		: n_(n), r_(r), m_(m)
	{
		for (uint32_t h : hosts) {
			core_cfg cfg{};
			cfg.host = h;
			cfg.n = n;
			cfg.r = r;
			cfg.m = m;
			cfg.mode = mode;
			cfg.flags = flags;
			cfg.test = test;
			core *c = core_new(&cfg);
			EXPECT_NE(c, nullptr) << "core_new for host " << h;
			cores_[h] = c;
			for (uint32_t g = 0; g < n; g++) {
				uint32_t rep;
				if (core_is_local(c, g, &rep)) {
					EXPECT_EQ(core_local_start(c, g), 0);
				}
			}
		}
	}
	~World()
	{
		for (Held &x : held_)
			mbuf_put(x.m);
		for (auto &kv : cores_)
			core_free(kv.second);
	}
	World(const World &) = delete;
	World &operator=(const World &) = delete;

	core *C(uint32_t h) { return cores_.at(h); }
	uint32_t HostOf(uint32_t g, uint32_t k) const { return core_place(g, k, r_, m_); }

	// A copy of message (src.src_rep -> dst.dst_rep, seq) arriving at the
	// destination replica's host from the sender replica's host.
	int Data(uint32_t src, uint32_t src_rep, uint32_t dst, uint32_t dst_rep, uint64_t seq,
		 const std::string &payload, int32_t tag = 0)
	{
		frame f{};
		f.h.type = F_DATA;
		f.u.data = Copy(src, src_rep, dst, dst_rep, seq, payload.size(), tag);
		uint32_t to = HostOf(dst, dst_rep);
		int err = core_peer_frame(C(to), HostOf(src, src_rep), &f, MakeBuf(payload));
		Pump(to);
		return err;
	}
	static f_data Copy(uint32_t src, uint32_t src_rep, uint32_t dst, uint32_t dst_rep, uint64_t seq,
			   uint64_t size, int32_t tag = 0)
	{
		f_data d{};
		d.src = src;
		d.dst = dst;
		d.src_rep = (uint16_t)src_rep;
		d.dst_rep = (uint16_t)dst_rep;
		d.src_inc = 1;
		d.epoch = 1;
		d.seq = seq;
		d.tag = tag;
		d.total = size;
		d.chunk = (uint32_t)size;
		return d;
	}
	// The same copy to every replica of dst.
	void DataAll(uint32_t src, uint32_t src_rep, uint32_t dst, uint64_t seq, const std::string &p,
		     int32_t tag = 0)
	{
		for (uint32_t k = 0; k < r_; k++)
			if (cores_.count(HostOf(dst, k))) {
				EXPECT_EQ(Data(src, src_rep, dst, k, seq, p, tag), 0);
			}
	}
	int Recv(uint32_t host, uint32_t g, int32_t src, int32_t tag = MSG_ANYTAG, uint64_t size = 1 << 20)
	{
		l_recv r{};
		r.src = src;
		r.tag = tag;
		r.bufsize = size;
		int err = core_local_recv(C(host), g, &r);
		Pump(host);
		return err;
	}
	int Send(uint32_t host, uint32_t g, uint32_t dst, uint64_t seq, const std::string &p,
		 int32_t tag = 0)
	{
		l_send s{};
		s.dst = dst;
		s.tag = tag;
		s.seq = seq;
		s.size = p.size();
		int err = core_local_send(C(host), g, &s, MakeBuf(p));
		Pump(host);
		return err;
	}

	// Collect a core's actions: deliveries are recorded, peer frames held.
	void Pump(uint32_t h)
	{
		size_t na = 0;
		action *v = core_take_actions(C(h), &na);
		for (size_t i = 0; i < na; i++) {
			action &a = v[i];
			switch (a.kind) {
			case A_LOCAL: {
				Delivery d{};
				d.group = a.group;
				if (a.f.h.type == L_DELIVER) {
					d.src = a.f.u.deliver.src;
					d.tag = a.f.u.deliver.tag;
					d.seq = a.f.u.deliver.seq;
					d.size = a.f.u.deliver.size;
					if (a.m)
						d.payload.assign((const char *)a.m->data, a.m->len);
					EXPECT_EQ(a.m ? a.m->len : 0, d.size);
				} else {
					EXPECT_EQ(a.f.h.type, L_TRUNC);
					d.trunc = true;
					d.src = a.f.u.trunc.src;
					d.tag = a.f.u.trunc.tag;
					d.size = a.f.u.trunc.size;
				}
				got_[h].push_back(d);
				mbuf_put(a.m);
				break;
			}
			case A_PEER: {
				Held x{ h, a.host, a.f, a.m };
				if (x.f.h.type == F_DATA) // the shell reassembles chunks
					x.f.u.data.chunk = (uint32_t)x.f.u.data.total;
				held_.push_back(x);
				break;
			}
			case A_EVENT:
				events_[h].push_back(a.text);
				break;
			default: // A_KILL and later kinds: recorded as events
				if (a.kind == A_KILL)
					kills_[h].push_back(a.group);
				if (a.kind == A_CAPTURE)
					captures_[h].push_back(a.f.u.migrate);
				events_[h].push_back("action " + std::to_string((int)a.kind));
				mbuf_put(a.m);
				break;
			}
		}
		free(v);
	}

	// Held frames to simulated hosts, optionally of one type.
	size_t HeldCount(int type = 0) const
	{
		size_t k = 0;
		for (const Held &x : held_)
			k += (!type || x.f.h.type == type) && cores_.count(x.to);
		return k;
	}
	// Release the i-th held frame (among frames of `type` if nonzero,
	// addressed to a simulated host). Returns the core's status.
	int Release(size_t i = 0, int type = 0)
	{
		for (auto it = held_.begin(); it != held_.end(); ++it) {
			if ((type && it->f.h.type != type) || !cores_.count(it->to))
				continue;
			if (i--)
				continue;
			Held x = *it;
			held_.erase(it);
			int err = core_peer_frame(C(x.to), x.from, &x.f, x.m);
			Pump(x.to);
			return err;
		}
		ADD_FAILURE() << "no held frame to release";
		return -1;
	}
	// Release the oldest held frame of the k-th (from, to) link: links are
	// TCP connections, FIFO, so only the order across links is free.
	int ReleaseLink(size_t k)
	{
		std::vector<std::pair<uint32_t, uint32_t>> links;
		for (const Held &x : held_)
			if (cores_.count(x.to) &&
			    std::find(links.begin(), links.end(), std::make_pair(x.from, x.to)) == links.end())
				links.push_back({ x.from, x.to });
		if (links.empty())
			return 0;
		auto want = links[k % links.size()];
		size_t i = 0;
		for (const Held &x : held_) {
			if (!cores_.count(x.to))
				continue;
			if (std::make_pair(x.from, x.to) == want)
				return Release(i);
			i++;
		}
		return -1;
	}
	void ReleaseAll(int type = 0)
	{
		for (int guard = 0; HeldCount(type) && guard < 10000; guard++)
			EXPECT_EQ(Release(0, type), 0);
	}
	std::deque<Held> &HeldFrames() { return held_; }
	// Release, oldest first, every held frame `pick` selects; the others
	// keep their place (a slow link: FIFO, so they wait in order).
	template <class Pick> void ReleaseWhere(Pick pick)
	{
		for (int guard = 0; guard < 100000; guard++) {
			size_t i = 0;
			bool found = false;
			for (const Held &x : held_) {
				if (!cores_.count(x.to))
					continue;
				if (pick(x)) {
					found = true;
					break;
				}
				i++;
			}
			if (!found)
				return;
			EXPECT_EQ(Release(i), 0);
		}
	}
	// Host h logged an event of this kind whose text holds `what`.
	bool HasEvent(uint32_t h, const std::string &kind, const std::string &what)
	{
		for (const std::string &e : events_[h])
			if (e.find("\"event\":\"" + kind + "\"") != std::string::npos &&
			    e.find(what) != std::string::npos)
				return true;
		return false;
	}

	std::vector<Delivery> &Got(uint32_t h) { return got_[h]; }
	std::vector<std::string> &Events(uint32_t h) { return events_[h]; }
	// Groups whose local process host h was told to kill (A_KILL), in order.
	std::vector<uint32_t> &Kills(uint32_t h) { return kills_[h]; }
	// Captures host h was asked for (A_CAPTURE: group, slot, target, inc).
	std::vector<f_migrate> &Captures(uint32_t h) { return captures_[h]; }
	const struct core_stats &Stats(uint32_t h) { return *core_stats(C(h)); }
	// "src:seq" of each delivery at host h, in order
	std::vector<std::string> Order(uint32_t h)
	{
		std::vector<std::string> o;
		for (const Delivery &d : got_[h])
			if (!d.trunc)
				o.push_back(std::to_string(d.src) + ":" + std::to_string(d.seq));
		return o;
	}

private:
	uint32_t n_, r_, m_;
	std::map<uint32_t, core *> cores_;
	std::deque<Held> held_;
	std::map<uint32_t, std::vector<Delivery>> got_;
	std::map<uint32_t, std::vector<std::string>> events_;
	std::map<uint32_t, std::vector<uint32_t>> kills_;
	std::map<uint32_t, std::vector<f_migrate>> captures_;
};

#endif
