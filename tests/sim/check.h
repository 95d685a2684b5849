// The invariant checker. It sees what the application processes see (every
// send, every completed or truncated receive) plus the cores' events, and
// checks the invariants of docs/protocol-sim.md after every step; at
// quiescence it checks that nothing was lost and nobody is stuck. It never
// looks inside a core: it judges the protocol by its observable behaviour,
// so a core refactoring cannot make the checker vacuous.
//
// Invariant numbers follow issue 8 / docs/protocol.md:
//   I0 well-formed: the core accepted valid input, frames survive the codec,
//      a delivery answers a posted receive, matches its source/tag/size and
//      carries exactly the bytes that were sent
//   I1 exactly-once delivery
//   I2 order per pair (non-overtaking per channel and tag)
//   I3 identical receive sequence — ANYSRC order included — in all replicas
//   I4 no two divergent live copies of a group
//   I5 every group back to r verified replicas (needs regeneration: not yet)
//   I6 no message lost: at quiescence every live replica finished and got
//      every message sent to it
//   I8 no false fence: only a replica that failed (or whose host did) is
//      fenced (the simulator knows which faults it injected)
// (I7 is kept free for the migration invariants to come; I4 also covers
// membership: at quiescence the live daemons agree on who is alive.)
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "workload.h"

namespace sim {

struct Proc;

// The checker's knowledge of one replica, carried over to a copy of it.
struct CheckerFork {
	size_t log_len = 0;
	uint32_t g = 0, k = 0;
	bool tainted = false;    // its state is wrong (corrupted, or consumed a corrupt copy)
	std::vector<std::pair<uint32_t, std::pair<uint64_t, std::set<uint64_t>>>> got;
};

struct Violation {
	int inv = -1;            // -1: none
	std::string what;
};

class Checker {
public:
	Checker(uint32_t n, uint32_t r);

	// bad: a corrupted send (FK_CORRUPT), or any send of a tainted replica
	void on_send(uint32_t g, uint32_t k, uint32_t dst, uint64_t seq, int32_t tag,
		     uint64_t size, uint64_t digest, bool bad = false);
	void on_deliver(uint32_t g, uint32_t k, const Op &want, const RecvRes &res);
	void on_trunc(uint32_t g, uint32_t k, const Op &want, uint32_t src, int32_t tag,
		      uint64_t size);
	void on_event(uint32_t host, const char *text);
	void fail(int inv, const std::string &what);
	void at_quiescence(const std::vector<Proc> &procs);
	// Migration/regeneration: snapshot replica g.k at its capture, and make
	// replica g.to continue from that snapshot when restored.
	CheckerFork fork(uint32_t g, uint32_t k) const;
	void install(uint32_t g, uint32_t to, const CheckerFork &f);

	// Corruption (I4): the comparison mode decides what a receiver may
	// consume; a replica whose state is wrong from now on; whether replica
	// g.k is to end fenced (it sent a corrupt copy, or consumed one).
	void set_mode(uint8_t mode) { mode_ = mode; }
	void taint(uint32_t g, uint32_t k) { tainted_[(size_t)g * r_ + k] = true; }
	bool tainted(uint32_t g, uint32_t k) const { return tainted_[(size_t)g * r_ + k]; }
	// (a wrong state that sent nothing wrong yet is invisible: not doomed)
	bool doomed(uint32_t g, uint32_t k) const
	{
		return consumed_bad_[(size_t)g * r_ + k] || sent_bad_[(size_t)g * r_ + k];
	}
	// Content class of a copy of (src -> dst, seq): 1 sound, 2 corrupt, 0 unknown.
	int content_class(uint32_t src, uint32_t dst, uint64_t seq, int32_t tag, uint64_t size,
			  uint64_t digest) const;
	// A daemon compared copies of (src -> dst, seq) for its running replica
	// dst.dk, and a majority of the sender's (all live) replicas sent the
	// sound content: the senders in bad_reps are outvoted, and dst.dk is too
	// if it consumed the corrupt one (mode first). Such replicas must end
	// fenced (I4).
	void outvoted(uint32_t src, uint32_t bad_reps, uint32_t dst, uint32_t dk, uint64_t seq);
	bool must_fence(uint32_t g, uint32_t k) const
	{
		return must_fence_[(size_t)g * r_ + k] && !beyond_;
	}
	// Mode first: a majority of some group consumed corrupt copies. Their
	// (equal) wrong messages then outvote the sound sibling, and the group
	// may be lost: first detects what it cannot mask (DESIGN §5, rule 7;
	// faults test Corrupt.FirstFencesEveryConsumerAndTheSender). The run is
	// still judged for I0-I3 and the views' agreement; who is fenced (I4's
	// fencing, I8) and the job's end (I6) are not.
	bool beyond_masking() const { return beyond_; }
	void count_wrong(uint32_t g);
	// some daemon reported a group with no replica left: msgrun ends the
	// job then (launcher/events.c, events_group_lost)
	bool group_lost() const { return group_lost_; }
	// why (for reports): "sent a corrupt copy", "consumed a corrupt copy", ...
	std::string doom_reason(uint32_t g, uint32_t k) const;

	bool failed() const { return v_.inv >= 0; }
	const Violation &violation() const { return v_; }
	uint64_t deliveries() const { return deliveries_; }
	uint64_t logical_messages() const;  // distinct (channel, seq) sent

private:
	struct Rec {
		bool set = false;
		int32_t tag = 0;
		uint64_t size = 0, digest = 0;
		uint32_t tentative = 0;  // bad_: 1 + the sender slot while it may
		                         // still equal the sound content (empty)
	};
	struct Got {             // what one replica consumed from one channel
		uint64_t low = 0;        // every seq <= low consumed
		std::set<uint64_t> above;
		bool has(uint64_t s) const { return s <= low || above.count(s); }
		void add(uint64_t s);
		uint64_t count() const { return low + above.size(); }
	};
	struct LogEnt {
		bool trunc;
		bool anysrc;
		uint32_t src;
		int32_t tag;
		uint64_t seq, size, digest;
		bool operator==(const LogEnt &o) const
		{
			return trunc == o.trunc && src == o.src && tag == o.tag && seq == o.seq &&
			       size == o.size && digest == o.digest;
		}
	};

	const Rec *rec(uint32_t src, uint32_t dst, uint64_t seq) const;
	// a content of (src -> dst, seq) sent by a corrupt or tainted replica
	// (and not, or not yet, by a sound one)
	bool bad_content(uint32_t src, uint32_t dst, uint64_t seq, int32_t tag, uint64_t size,
			 uint64_t digest) const;
	bool tentative_content(uint32_t src, uint32_t dst, uint64_t seq, int32_t tag, uint64_t size,
			       uint64_t digest) const;
	void log_append(uint32_t g, uint32_t k, const LogEnt &e);
	static std::string ent_str(const LogEnt &e);

	uint32_t n_, r_;
	std::unordered_map<uint64_t, std::vector<Rec>> sent_;     // key src*n+dst
	std::unordered_map<uint64_t, Got> got_;                   // key (g*r+k)*n+src
	std::vector<std::vector<LogEnt>> log_;                    // [g*r+k]
	std::vector<std::vector<LogEnt>> canon_;                  // [g]
	// corrupt contents by (src*n+dst, seq): tag, size, digest
	std::map<std::pair<uint64_t, uint64_t>, std::vector<Rec>> bad_;
	std::vector<bool> tainted_, sent_bad_, consumed_bad_, must_fence_;   // [g*r+k]
	// [g*r+k]: (src*n+dst, seq) it consumed corrupt / its daemon saw outvoted
	std::vector<std::set<std::pair<uint64_t, uint64_t>>> ate_bad_, judged_;
	uint8_t mode_ = 0;
	bool beyond_ = false;
	std::vector<bool> beyond_g_;  // [g]: that group is beyond masking
	bool group_lost_ = false;
	uint64_t deliveries_ = 0;
	Violation v_;
};

} // namespace sim
