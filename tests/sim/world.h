// The simulated world: m daemons (one real protocol core each), the TCP
// connections between them (per-connection FIFO queues of frames), and the
// n×r replica processes running their programs.
//
// The world only knows how to apply one Choice — deliver the head frame of a
// connection, run one operation of a process, tick a daemon's clock, inject a
// fault — and which choices are enabled. Which one happens next is the
// scheduler's business (sched.cc); whether the result is correct is the
// checker's (check.cc). A run is therefore fully described by its seed (the
// job) and its list of choices, which is what replay and shrinking use.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <tuple>
#include <memory>
#include <string>
#include <vector>

#include "core_c.h"

#include "check.h"
#include "config.h"
#include "faults.h"
#include "workload.h"

namespace sim {

struct Choice {
	enum Kind : uint8_t {
		RUN,      // a = process index g*r+k: one operation of its program
		DELIVER,  // a → b: the head frame of that connection arrives at b
		TICK,     // a: the daemon's timer fires
		FAULT,    // sub = fault kind (faults.h), a, b = its arguments
		IMAGE,    // a = group, b = target slot: sub 1 = the captured process
		          // reports its image written; 2 = the restored one connects;
		          // sub 3: a = group, b = target host: the restore of an image
		          // that broke (its source died) fails there, some time later
	} kind = RUN;
	uint8_t sub = 0;
	uint32_t a = 0, b = 0;
	uint64_t t = 0;   // simulated time (ns) at which it happens
};

std::string choice_token(const Choice &c, uint32_t r);
bool choice_parse(const std::string &tok, uint32_t r, Choice *c);

// Per-frame-type counters of peer frames emitted (the scale report).
struct FrameCounts {
	uint64_t by_type[256] = {};
	uint64_t fwd_data = 0;      // DATA frames forwarded (FWD: cut copies, forwarding)
	uint64_t data() const;
	uint64_t control() const;   // every peer frame that is not DATA
};

struct Proc {
	enum State : uint8_t { NEW, READY, BLOCKED, DONE, CRASHED } st = NEW;
	uint32_t g = 0, k = 0, host = 0;
	std::unique_ptr<Program> prog;
	bool have_last = false, retry = false;
	bool fenced = false;          // killed by its daemon
	bool capturing = false;       // its image is being written
	bool moved = false;           // it moved away (its end is not a fault)
	bool injected = false;        // crashed by the simulator (a fault)
	bool corrupt_next = false;    // its next non-empty message goes out corrupt
	RecvRes last{};
	Op want{};                    // the receive it is blocked in (or retries)
	std::vector<uint64_t> next_seq;  // per destination, like libmsg
	uint64_t hist = 0;            // hash of everything it received
	uint64_t t_recv = 0;          // when it last entered a receive (a safe point)
	uint64_t life = 0;            // which process holds the slot here (restores count)
};

struct Wire {
	struct frame f;               // as decoded by the receiver (or as sent)
	std::vector<uint8_t> bytes;   // encoded header+body when cfg.wire
	struct mbuf *m = nullptr;
};

// A capture under way (migration or regeneration, migrate.c): the image of
// replica g.src_k, taken at its safe point, becomes replica g.k on target.
struct Capture {
	uint32_t g = 0, src_k = 0, k = 0, src_host = 0, target = 0, inc = 0;
	uint8_t mode = 0;
	int phase = 0;                // 0 image being written, 1 written: restore
	bool restorer_dead = false;   // its target's restorer was killed (a copy's
	                              // source finishes its stop all the same)
	Proc snap;                    // the process as captured (program cloned)
	CheckerFork fork;             // what the checker knew of it
};

struct Conn {
	std::deque<Wire> q;
	bool cut = false;
};

class World {
public:
	World(const SimCfg &cfg, Job job, Checker *chk);
	~World();
	World(const World &) = delete;
	World &operator=(const World &) = delete;

	bool ok() const { return cores_ok_; }
	// a copy not verified yet (rule 4: joining) in its own daemon's view:
	// public state of the core, for the fault policy only
	bool joining(uint32_t pi) const
	{
		const Proc &p = procs_[pi];

		return p.host < cfg_.m && core_joining(cores_[p.host], p.g, p.k);
	}
	// Whether c can happen now (replay skips choices that cannot).
	bool enabled(const Choice &c) const;
	// Apply an enabled choice. Returns false if it was not enabled.
	bool apply(const Choice &c);

	// Enabled choices of the two common kinds, without building lists: the
	// scheduler samples them (sched.cc).
	const std::vector<uint32_t> &ready_procs() const { return ready_; }
	const std::vector<uint32_t> &busy_conns() const { return busy_; }
	// an earlier incarnation still running (olds_) at the end of a run
	bool old_incarnation_runs(std::string *why) const;
	bool quiescent() const
	{
		return ready_.empty() && busy_.empty() && caps_.empty() && broken_.empty();
	}

	// Fault hooks (faults.cc decides legality; these only carry them out).
	void crash_proc(uint32_t pi);
	void crash_host(uint32_t h, bool drop_outgoing);
	void set_cut(uint32_t a, uint32_t b, bool cut);
	void lose_head(uint32_t a, uint32_t b);
	// Fault hook: corrupt replica pi's next message (persistent: and its
	// state, so it sends wrong messages from then on).
	void corrupt(uint32_t pi, bool persistent);
	// The fault policy's view of corruption: pi is to be fenced (it sent or
	// consumed a corrupt copy, or is about to send one); g was corrupted.
	bool doomed(uint32_t pi) const
	{
		return procs_[pi].corrupt_next || chk_->doomed(procs_[pi].g, procs_[pi].k) ||
		       chk_->tainted(procs_[pi].g, procs_[pi].k);
	}
	bool corrupted_group(uint32_t g) const { return corrupted_[g]; }
	// a replica of g consumed a corrupt copy (mode first): g holds a
	// wrong replica as if it had been corrupted itself
	bool tainted_group(uint32_t g) const
	{
		for (uint32_t k = 0; k < cfg_.r; k++)
			if (chk_->tainted(g, k))
				return true;
		return false;
	}
	// replica slots of g that a fault hit so far in the run (crashed, lost
	// with a host, killed by a daemon): the fault policy corrupts only a
	// group no other fault hit (faults.cc)
	uint32_t struck(uint32_t g) const { return struck_[g]; }
	// Fault hook: ask daemon of replica pi to move it to host target.
	bool migrate(uint32_t pi, uint32_t target);
	const std::vector<Capture> &captures() const { return caps_; }
	// Images that broke: (group, target host) whose restore has yet to fail.
	const std::vector<std::pair<uint32_t, uint32_t>> &broken_images() const { return broken_; }
	FaultLog fault_log;

	const SimCfg &cfg() const { return cfg_; }
	const Job &job() const { return job_; }
	const std::vector<Proc> &procs() const { return procs_; }
	bool host_dead(uint32_t h) const { return host_dead_[h]; }
	bool cut(uint32_t a, uint32_t b) const { return conns_[(size_t)a * cfg_.m + b].cut; }
	size_t queued(uint32_t a, uint32_t b) const { return conns_[(size_t)a * cfg_.m + b].q.size(); }
	uint64_t now() const { return now_; }
	uint64_t hash() const { return hash_; }
	const FrameCounts &frames() const { return counts_; }
	uint64_t decisions() const;   // ANYSRC decisions made, summed over daemons
	uint64_t messages() const { return messages_; }  // application sends
	uint64_t progress() const { return progress_; }  // processes run + frames delivered
	// Membership views at quiescence: live daemons agree, crashed replicas
	// are dead everywhere (reported to the checker).
	void check_membership();
	bool membership_settled() const;  // every lost replica dead in every live view
	bool all_finished() const;        // every replica done or gone
	static constexpr uint32_t ANY_HOST = UINT32_MAX;
	// A frame of this type queued from → to (ANY_HOST: any).
	bool in_flight(uint8_t type, uint32_t from, uint32_t to) const;
	// Verbose trace lines of the last applied choice (when logging is on).
	void set_log(bool on) { log_ = on; }
	// Whether a fence of a replica that no fault touched is a violation (I8).
	void set_strict_fences(bool on) { strict_fences_ = on; }
	std::vector<std::string> &log() { return lines_; }

private:
	void run_proc(Proc &p);
	void deliver(uint32_t a, uint32_t b, uint8_t sub);
	void drain(uint32_t h);
	void local_action(uint32_t h, const struct action &a);
	void kill_local(uint32_t h, uint32_t g);
	void capture(uint32_t h, const struct f_migrate &mg);
	void abort_capture(Proc &p);
	void kill_restorer(uint32_t h, uint32_t g);
	void broken_image_fails(uint32_t g, uint32_t t);
	void image_step(uint32_t g, uint32_t k, uint8_t step);
	void set_ready(uint32_t pi, bool on);
	void set_busy(uint32_t ci);
	void note(const char *fmt, ...) __attribute__((format(printf, 2, 3)));
	void repair_event(const char *text);
	void check_repaired();
	void hash_u64(uint64_t v);
	void copy_seen(uint32_t h, uint32_t src, uint32_t src_rep, uint32_t dst, uint64_t seq,
		       int32_t tag, uint64_t size, const uint8_t *data);

	SimCfg cfg_;
	Job job_;
	Checker *chk_;
	std::vector<struct core *> cores_;
	std::vector<bool> host_dead_;
	std::vector<Conn> conns_;          // [a*m+b]
	std::vector<Proc> procs_;          // [g*r+k]
	std::vector<Capture> caps_;
	// Earlier incarnations displaced by a restored copy of their slot while
	// they still ran elsewhere: fenced (for a mismatch) but not yet killed,
	// because their daemon had not heard the fence. They are held still
	// (a slow process) until that daemon kills them; frames for them drop.
	std::vector<Proc> olds_;
	// [group*m + host]: a restore of the group failed there (the daemon
	// may then kill the slot it gave up: msgd reports that end, job.c)
	std::vector<bool> restore_failed_;
	std::vector<std::pair<uint32_t, uint32_t>> broken_; // see broken_images()
	// per replica slot: the host a capture's state (the cut) comes from, and
	// whether its STATE_END reached the target while that host was up (a
	// restore whose source host died first cannot complete: that replica
	// failed with the host)
	std::vector<std::vector<bool>> talkers_; // [dst group][host]: a daemon sent it DATA
	std::vector<bool> move_ordered_;         // [group]: a move was ordered, not done yet
	std::vector<bool> corrupted_;            // [group]: a replica of it was corrupted
	std::vector<uint32_t> struck_;           // [group]: see struck()
	std::vector<uint32_t> fenced_slots_;     // [group]: slots a daemon reported fenced
	void strike(uint32_t pi) { struck_[procs_[pi].g] |= 1u << procs_[pi].k; }
	// with corruptions: per (host, src*n+dst, seq), the sender replicas whose
	// sound / corrupt copy reached that host while its replica of dst ran
	// sound / corrupt copies per (host, channel, seq, receiver's life): a
	// restored receiver's daemon starts from its cut, not from what its
	// predecessor there held
	std::map<std::tuple<uint32_t, uint64_t, uint64_t, uint64_t>, std::pair<uint32_t, uint32_t>> copies_;
	uint64_t lives_ = 0;
public:
	bool move_ordered(uint32_t g) const { return move_ordered_[g]; }
private:
public:
	uint32_t talkers(uint32_t g) const
	{
		uint32_t n = 0;

		for (bool b : talkers_[g])
			n += b;
		return n;
	}
private:
	// I5's second half (world_views.cc): per replica slot, when it was first
	// fenced; per group, when a repair of it last failed or found no host
	std::vector<uint64_t> fenced_at_, repair_trouble_;
	std::vector<uint64_t> fence_time_;       // [slot] when its (first) fence was heard
	std::vector<uint32_t> fences_;           // [group] fence events seen
	std::vector<uint32_t> restore_src_, restore_inc_;
	std::vector<bool> state_in_;
public:
	// replica pi is being restored with its state (the cut) still to come
	// from host h: it dies with h
	bool restore_pending_from(uint32_t pi, uint32_t h) const
	{
		return restore_src_[pi] == h && !state_in_[pi];
	}
	// its process may run at its target, but its cut was to come from a
	// host that died: it is lost with that host (the core fails it)
	bool restore_lost(uint32_t pi) const
	{
		return restore_src_[pi] != UINT32_MAX && host_dead_[restore_src_[pi]] && !state_in_[pi];
	}
private:
	std::vector<uint32_t> ready_, busy_;
	std::vector<int32_t> ready_pos_, busy_pos_;
	bool cores_ok_ = true, log_ = false, strict_fences_ = true;
	uint64_t now_ = 0, hash_, messages_ = 0, progress_ = 0;
	FrameCounts counts_;
	std::vector<std::string> lines_;
};

} // namespace sim
