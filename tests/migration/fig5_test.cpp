// The paper's Figure 5 scenarios, driven through the real protocol core
// (runtime/core) of three daemons with a scripted network: every frame one
// core addresses to another waits on its (from, to) link — a FIFO, like the
// TCP connection between two msgd — until the test releases it, so a delayed
// map update or a message in transit is a choice of the script, not a timing.
//
// Hosts: A = 0 (group 0, the sender), B = 1 (group 1, the migrating process,
// its source), C = 2 (the destination). n = 2, r = 1, m = 3.
//
// Asserted: nothing lost, nothing delivered twice, order per pair kept, and
// the extra control messages of the paper: 5a one forwarded message and one
// reactive update; 5b two forwarded messages and one reactive update.
// "Forwarded" = an F_DATA frame between daemons with DATA_F_FWD and without
// DATA_F_CUT (a cut's DATA frames are the queued messages the source hands
// the target with the image, the paper's "forward any message already in the
// queue", not an extra message of the scenario); "reactive update" = F_MAP
// with reactive = 1.
#include <gtest/gtest.h>

#include <cstdlib>
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

namespace {

enum { A = 0, B = 1, C = 2 };

struct Frame {
	uint32_t from, to;
	frame f;
	mbuf *m;
};

struct Sent { // every peer frame any core emitted, in order
	uint32_t from, to;
	uint8_t type, flags, reactive;
	uint64_t seq;
};

class Net {
public:
	explicit Net(uint32_t n = 2, uint32_t r = 1, uint32_t m = 3)
	{
		for (uint32_t h = 0; h < m; h++) {
			core_cfg cfg{};
			cfg.host = h;
			cfg.n = n;
			cfg.r = r;
			cfg.m = m;
			cfg.mode = CMP_FIRST;
			core *c = core_new(&cfg);
			EXPECT_NE(c, nullptr);
			cores_.push_back(c);
			for (uint32_t g = 0; g < n; g++) {
				uint32_t rep;
				if (core_is_local(c, g, &rep)) {
					EXPECT_EQ(core_local_start(c, g), 0);
				}
			}
		}
	}
	~Net()
	{
		for (auto &kv : links_)
			for (Frame &x : kv.second)
				Drop(x);
		for (core *c : cores_)
			core_free(c);
	}
	Net(const Net &) = delete;
	Net &operator=(const Net &) = delete;

	core *Core(uint32_t h) { return cores_.at(h); }

	void Pump(uint32_t h)
	{
		size_t na = 0;
		action *v = core_take_actions(Core(h), &na);
		for (size_t i = 0; i < na; i++) {
			action &a = v[i];
			switch (a.kind) {
			case A_LOCAL:
				if (a.f.h.type == L_DELIVER) {
					got_[h].push_back({ a.group, a.f.u.deliver.src, a.f.u.deliver.seq,
							    a.m ? std::string((const char *)a.m->data, a.m->len)
								: std::string() });
				} else {
					ADD_FAILURE() << "unexpected local frame type " << (int)a.f.h.type;
				}
				mbuf_put(a.m);
				break;
			case A_PEER: {
				Frame x{ h, a.host, a.f, a.m };
				if (x.f.h.type == F_DATA)
					x.f.u.data.chunk = (uint32_t)x.f.u.data.total;
				sent_.push_back({ h, a.host, a.f.h.type, a.f.h.flags,
						  a.f.h.type == F_MAP ? a.f.u.map.reactive : (uint8_t)0,
						  a.f.h.type == F_DATA ? a.f.u.data.seq : 0 });
				links_[{ h, a.host }].push_back(x);
				break;
			}
			case A_EVENT:
				events_[h].push_back(a.text);
				break;
			case A_CAPTURE:
				captures_[h]++;
				break;
			case A_KILL:
				kills_[h]++;
				mbuf_put(a.m);
				break;
			}
		}
		free(v);
	}

	size_t Pending(uint32_t from, uint32_t to) { return links_[{ from, to }].size(); }
	// Type of the oldest frame waiting on a link (0 if none).
	int Head(uint32_t from, uint32_t to)
	{
		auto &q = links_[{ from, to }];
		return q.empty() ? 0 : q.front().f.h.type;
	}
	// Release the oldest frame of link from -> to.
	void Step(uint32_t from, uint32_t to)
	{
		auto &q = links_[{ from, to }];
		ASSERT_FALSE(q.empty()) << "nothing on link " << from << "->" << to;
		Frame x = q.front();
		q.pop_front();
		EXPECT_EQ(core_peer_frame(Core(x.to), x.from, &x.f, x.m), 0)
			<< "frame type " << (int)x.f.h.type << " " << from << "->" << to;
		if (x.f.h.type == F_CUT_CHAN)
			free(x.f.u.cut_chan.seqs);
		Pump(x.to);
	}
	void Flush(uint32_t from, uint32_t to)
	{
		for (int guard = 0; Pending(from, to) && guard < 1000; guard++)
			Step(from, to);
	}
	// Release everything, link by link, until the network is quiet.
	void FlushAll()
	{
		for (int guard = 0; guard < 1000; guard++) {
			bool any = false;
			for (auto &kv : links_)
				if (!kv.second.empty()) {
					Step(kv.first.first, kv.first.second);
					any = true;
					break;
				}
			if (!any)
				return;
		}
		ADD_FAILURE() << "network never quiet";
	}

	void Send(uint32_t h, uint32_t g, uint32_t dst, uint64_t seq, const std::string &p)
	{
		l_send s{};
		s.dst = dst;
		s.seq = seq;
		s.size = p.size();
		mbuf *m = mbuf_new(p.size());
		memcpy(m->data, p.data(), p.size());
		EXPECT_EQ(core_local_send(Core(h), g, &s, m), 0);
		Pump(h);
	}
	void Recv(uint32_t h, uint32_t g, int32_t src)
	{
		l_recv r{};
		r.src = src;
		r.tag = MSG_ANYTAG;
		r.bufsize = 1 << 20;
		EXPECT_EQ(core_local_recv(Core(h), g, &r), 0);
		Pump(h);
	}
	// Move replica g.0 from `from` to `to`: the order (msgctl migrate), the
	// capture at the safe point, its completion.
	void Move(uint32_t g, uint32_t from, uint32_t to)
	{
		f_migrate mg{};
		mg.group = g;
		mg.rep = 0;
		mg.src_rep = 0;
		mg.target = to;
		mg.mode = MIG_MOVE;
		ASSERT_EQ(core_migrate(Core(from), &mg), 0);
		Pump(from);
		ASSERT_EQ(captures_[from], 1) << "capture at the safe point (inside msgrecv)";
		core_capture_done(Core(from), g, 0);
		Pump(from);
		EXPECT_EQ(kills_[from], 1) << "the source process ends once the image is safe";
	}

	struct Got {
		uint32_t group, src;
		uint64_t seq;
		std::string payload;
	};
	std::vector<Got> &Delivered(uint32_t h) { return got_[h]; }
	const std::vector<Sent> &Log() const { return sent_; }

	size_t Forwards() const
	{
		size_t k = 0;
		for (const Sent &s : sent_)
			k += s.type == F_DATA && (s.flags & DATA_F_FWD) && !(s.flags & DATA_F_CUT);
		return k;
	}
	size_t CutData() const
	{
		size_t k = 0;
		for (const Sent &s : sent_)
			k += s.type == F_DATA && (s.flags & DATA_F_CUT);
		return k;
	}
	size_t Maps(bool reactive) const
	{
		size_t k = 0;
		for (const Sent &s : sent_)
			k += s.type == F_MAP && (bool)s.reactive == reactive;
		return k;
	}
	std::string Trace() const
	{
		std::string t;
		for (const Sent &s : sent_) {
			t += std::to_string(s.from) + "->" + std::to_string(s.to) + " type " +
			     std::to_string(s.type) + " flags " + std::to_string(s.flags);
			if (s.type == F_MAP)
				t += s.reactive ? " (reactive update)" : " (update)";
			if (s.type == F_DATA)
				t += " seq " + std::to_string(s.seq);
			t += "\n";
		}
		return t;
	}
	std::vector<std::string> &Events(uint32_t h) { return events_[h]; }

private:
	static void Drop(Frame &x)
	{
		if (x.f.h.type == F_CUT_CHAN)
			free(x.f.u.cut_chan.seqs);
		mbuf_put(x.m);
	}
	std::vector<core *> cores_;
	std::map<std::pair<uint32_t, uint32_t>, std::deque<Frame>> links_;
	std::vector<Sent> sent_;
	std::map<uint32_t, std::vector<Got>> got_;
	std::map<uint32_t, std::vector<std::string>> events_;
	std::map<uint32_t, int> captures_, kills_;
};

std::string Msg(uint64_t seq) { return "m" + std::to_string(seq) + std::string(40, 'x'); }

// Every message 0 -> 1 with seq 1..last delivered to group 1 exactly once, in
// order, with its payload, and only at host `at`.
void ExpectExactlyOnceInOrder(Net &net, uint32_t at, uint64_t last)
{
	std::vector<uint64_t> seqs;
	for (uint32_t h : { A, B, C })
		for (auto &d : net.Delivered(h))
			if (d.group == 1) {
				EXPECT_EQ(h, at) << "seq " << d.seq << " delivered at host " << h;
				EXPECT_EQ(d.src, 0u);
				EXPECT_EQ(d.payload, Msg(d.seq)) << "payload of seq " << d.seq;
				seqs.push_back(d.seq);
			}
	std::vector<uint64_t> want;
	for (uint64_t s = 1; s <= last; s++)
		want.push_back(s);
	EXPECT_EQ(seqs, want) << "delivered (exactly once, in order) at host " << at << "\n"
			      << net.Trace();
}

// The process restored at C repeats its msgrecv.
void RestoreAt(Net &net, uint32_t h)
{
	EXPECT_EQ(core_local_restored(net.Core(h), 1), 0);
	net.Pump(h);
	net.Recv(h, 1, 0);
}

// Figure 5(a): a message in transit when the migration starts.
TEST(Figure5, A_InTransitBeforeMigration)
{
	Net net;
	net.Recv(B, 1, 0);                   // the process waits in msgrecv: its safe point
	net.Send(A, 0, 1, 1, Msg(1));        // (1) A sends; the message is in transit to B
	ASSERT_EQ(net.Pending(A, B), 1u);
	net.Move(1, B, C);                   // (2) B's map updated, updates sent to A and C
	ASSERT_EQ(net.Pending(B, A), 1u);
	ASSERT_EQ(net.Head(B, A), F_MAP);
	net.Flush(B, C);                     // (3) C: the cut, then the update
	net.Step(B, A);                      // (3) A updates its map
	RestoreAt(net, C);
	EXPECT_EQ(net.Forwards(), 0u);
	net.Step(A, B);                      // (4) the message reaches B: not local any more
	EXPECT_EQ(net.Forwards(), 1u) << "(5) B forwards it to C";
	EXPECT_EQ(net.Maps(true), 1u) << "(5) B sends a reactive update to A";
	ASSERT_EQ(net.Pending(B, C), 1u);
	ASSERT_EQ(net.Pending(B, A), 1u);
	net.Flush(B, C);
	net.Flush(B, A);
	net.Recv(C, 1, 0);
	net.Send(A, 0, 1, 2, Msg(2));        // (6) later messages go straight to C
	EXPECT_EQ(net.Pending(A, B), 0u);
	EXPECT_EQ(net.Pending(A, C), 1u);
	net.FlushAll();
	ExpectExactlyOnceInOrder(net, C, 2);
	// the scenario's extra messages: one forwarded message, one reactive update
	EXPECT_EQ(net.Forwards(), 1u) << net.Trace();
	EXPECT_EQ(net.Maps(true), 1u) << net.Trace();
	EXPECT_EQ(net.CutData(), 0u) << "nothing was queued at B";
	EXPECT_EQ(net.Maps(false), 2u) << "the move's own updates, one per other host";
}

// Figure 5(b): the destination receives a message for the migrating process
// before its own process update.
TEST(Figure5, B_EarlyMessageAtDestination)
{
	Net net;
	net.Recv(B, 1, 0);
	net.Move(1, B, C);                   // (1) B sends updates to A and C
	ASSERT_GE(net.Pending(B, C), 2u);    // C's update (with the cut) is delayed
	net.Step(B, A);                      // (2) A receives its update
	net.Send(A, 0, 1, 1, Msg(1));        // (3) A sends to C
	ASSERT_EQ(net.Pending(A, C), 1u) << "A sends to the new host";
	net.Step(A, C);                      // (4) C does not know the process yet
	EXPECT_EQ(net.Forwards(), 1u) << "(5) C forwards it to B";
	ASSERT_EQ(net.Pending(C, B), 1u);
	net.Step(C, B);                      // (7) B receives the forwarded message
	EXPECT_EQ(net.Forwards(), 2u) << "(8) B forwards it back to C\n" << net.Trace();
	EXPECT_EQ(net.Maps(true), 1u) << "(8) and sends a reactive update\n" << net.Trace();
	net.Flush(B, C);                     // (6) C's update arrives (after the forward: FIFO)
	RestoreAt(net, C);
	net.Send(A, 0, 1, 2, Msg(2));
	net.FlushAll();
	net.Recv(C, 1, 0);
	net.FlushAll();
	ExpectExactlyOnceInOrder(net, C, 2);
	EXPECT_EQ(net.Forwards(), 2u) << net.Trace();
	EXPECT_EQ(net.Maps(true), 1u) << net.Trace();
	EXPECT_EQ(net.CutData(), 0u);
}

// 5(b) with the forwarded-back copy arriving before the update at C while the
// B -> C link still holds the cut: it must be held at C (rule 5), not bounced
// again, and delivered once the cut is there.
TEST(Figure5, B_ForwardedBackIsHeldNotBounced)
{
	Net net;
	net.Recv(B, 1, 0);
	net.Move(1, B, C);
	size_t cut_frames = net.Pending(B, C);
	net.Step(B, A);
	net.Send(A, 0, 1, 1, Msg(1));
	net.Step(A, C);
	net.Step(C, B);
	ASSERT_EQ(net.Pending(B, C), cut_frames + 1);
	// the forwarded-back copy is behind the cut on B -> C (FIFO); release the
	// cut and update first, then the copy
	for (size_t i = 0; i < cut_frames; i++)
		net.Step(B, C);
	net.Step(B, C);
	EXPECT_EQ(net.Pending(C, B), 0u) << "not bounced again\n" << net.Trace();
	RestoreAt(net, C);
	net.FlushAll();
	ExpectExactlyOnceInOrder(net, C, 1);
	EXPECT_EQ(net.Forwards(), 2u) << net.Trace();
}

// 5(a) with queued and several in-transit messages: the queued ones go with
// the cut (also one that arrives during the capture), every in-transit one is
// forwarded with its reactive update, later ones go direct; nothing lost or
// doubled, order kept.
TEST(Figure5, A_QueuedAndManyInTransit)
{
	Net net;
	net.Send(A, 0, 1, 1, Msg(1));
	net.Send(A, 0, 1, 2, Msg(2));
	net.Flush(A, B);                     // queued at B: the process computes
	f_migrate mg{};
	mg.group = 1;
	mg.target = C;
	mg.mode = MIG_MOVE;
	ASSERT_EQ(core_migrate(net.Core(B), &mg), 0);
	net.Pump(B);
	net.Recv(B, 1, 0);                   // its next msgrecv: the safe point, capture
	EXPECT_TRUE(net.Delivered(B).empty()) << "nothing delivered to a captured process";
	net.Send(A, 0, 1, 3, Msg(3));
	net.Step(A, B);                      // arrives during the capture: goes with the cut
	core_capture_done(net.Core(B), 1, 0);
	net.Pump(B);
	net.Send(A, 0, 1, 4, Msg(4));        // in transit
	net.Send(A, 0, 1, 5, Msg(5));        // in transit
	net.Flush(B, C);
	RestoreAt(net, C);
	net.Flush(A, B);                     // 4 and 5 reach B: forwarded, reactive updates
	net.Flush(B, A);
	net.Send(A, 0, 1, 6, Msg(6));
	EXPECT_EQ(net.Pending(A, C), 1u) << "seq 6 goes straight to C";
	net.FlushAll();
	for (int i = 0; i < 6; i++) {
		net.Recv(C, 1, 0);
		net.FlushAll();
	}
	ExpectExactlyOnceInOrder(net, C, 6);
	EXPECT_EQ(net.CutData(), 3u) << "seq 1-3 with the cut";
	EXPECT_EQ(net.Forwards(), 2u) << "seq 4 and 5";
	// one reactive update per message that reached the old host (the
	// paper's rule), so two here
	EXPECT_EQ(net.Maps(true), 2u) << net.Trace();
}

} // namespace
