// The faults the world applies and the kills its daemons order: a daemon
// killing its fenced replica, a corrupt or crashed replica, a lost host, a
// cut or lossy connection. What the cores make of them is theirs.
#include <csignal>

#include "msg.h"
#include "world.h"

namespace sim {

// The daemon fenced its local replica of g: the shell kills it, and reports
// its end to the core like any other process end.
void World::kill_local(uint32_t h, uint32_t g)
{
	uint32_t rep = 0;

	for (const Capture &cp : caps_)
		if (cp.g == g && cp.src_host == h && cp.mode == MIG_MOVE && cp.phase == 1)
			return; // the source process of a move ends once its image is safe
	bool local = g < cfg_.n && core_is_local(cores_[h], g, &rep);
	for (uint32_t k = 0; g < cfg_.n && !local && k < cfg_.r; k++) {
		// the core gave its slot up with the kill (B47: a copy of it runs
		// elsewhere); the daemon kills by its own table of processes
		const Proc &q = procs_[g * cfg_.r + k];

		if (q.host == h && q.st != Proc::CRASHED && q.st != Proc::DONE)
			local = true, rep = k;
	}
	for (const Proc &o : olds_)
		if (!local && o.g == g && o.host == h)
			local = true, rep = o.k;
	if (!local && g < cfg_.n && restore_failed_[(size_t)g * cfg_.m + h])
		return; // a move lost in its restore (restore.c move_lost)
	if (!local) {
		chk_->fail(0, "I0 daemon " + std::to_string(h) + " kills group " + std::to_string(g) +
				      ", which has no replica there");
		return;
	}
	Proc &p = procs_[g * cfg_.r + rep];
	hash_u64(0x4b1u ^ ((uint64_t)g << 8));
	for (size_t i = 0; i < olds_.size(); i++)
		if (olds_[i].g == g && olds_[i].host == h) {
			note("daemon %u kills %u.%u's earlier incarnation (fenced)", h, g, olds_[i].k);
			olds_.erase(olds_.begin() + (long)i);
			core_local_exit(cores_[h], g, SIGKILL);
			return;
		}
	if (p.host != h) {
		// an earlier incarnation that lived here is gone; its slot runs
		// elsewhere, or arrives here as an image: that restorer is killed
		// (also while the slot's Proc is a move's source, DONE as its
		// placeholder: the restore here is what the kill is for)
		kill_restorer(h, g);
		return;
	}
	if (p.st == Proc::CRASHED || p.st == Proc::DONE)
		return; // already gone
	abort_capture(p);
	note("daemon %u kills %u.%u (fenced)", h, p.g, p.k);
	strike(g * cfg_.r + rep);
	p.st = Proc::CRASHED;
	p.fenced = true;
	set_ready(g * cfg_.r + rep, false);
	core_local_exit(cores_[h], g, SIGKILL);
}

void World::corrupt(uint32_t pi, bool persistent)
{
	Proc &p = procs_[pi];

	note("corrupt %u.%u%s", p.g, p.k, persistent ? " (its state: it diverges from now on)" : "");
	// the policy (faults.cc) never corrupts a group another fault hit: a
	// fence of another slot that a daemon reported says it did
	if (fenced_slots_[p.g] & ~(1u << p.k))
		chk_->fail(0, "I0 fault policy: corrupt " + std::to_string(p.g) + "." +
				      std::to_string(p.k) + " after another replica of its group was fenced");
	corrupted_[p.g] = true;
	hash_u64(0xc0a1u ^ ((uint64_t)pi << 8) ^ persistent);
	if (persistent) {
		p.hist = mix64(p.hist, 0xbadc0de);
		chk_->taint(p.g, p.k);
	} else {
		p.corrupt_next = true;
	}
}

void World::crash_proc(uint32_t pi)
{
	Proc &p = procs_[pi];

	if (p.st == Proc::CRASHED || p.st == Proc::DONE)
		return;
	note("crash %u.%u", p.g, p.k);
	strike(pi);
	abort_capture(p);
	p.st = Proc::CRASHED;
	p.injected = true;
	set_ready(pi, false);
	if (!host_dead_[p.host]) {
		core_now(cores_[p.host], now_);
		core_local_exit(cores_[p.host], p.g, SIGKILL); // wait status of a killed process
		drain(p.host);
	}
}

void World::crash_host(uint32_t h, bool drop_outgoing)
{
	note("crash host %u%s", h, drop_outgoing ? " (unsent buffers lost)" : "");
	host_dead_[h] = true;
	// captures that needed this host fail as the daemons would see them fail
	for (size_t i = 0; i < caps_.size();) {
		Capture &cp = caps_[i];

		if (cp.target == h && cp.phase == 1 && cp.mode == MIG_MOVE) {
			// the moved process died with its new host
			Proc &src = procs_[cp.g * cfg_.r + cp.src_k];

			src.st = Proc::CRASHED;
			src.injected = true;
			strike(cp.g * cfg_.r + cp.src_k);
		} else if (cp.target == h && cp.phase == 0) {
			procs_[cp.g * cfg_.r + cp.src_k].capturing = false;
			core_capture_done(cores_[cp.src_host], cp.g, -1); // image connection broke
			drain(cp.src_host);
		} else if (cp.src_host == h && cp.phase == 0 && !host_dead_[cp.target]) {
			if (!cp.restorer_dead)
				broken_.emplace_back(cp.g, cp.target); // the image never comes: its restore fails later
		} else if (cp.target != h) {
			i++;
			continue;
		}
		caps_.erase(caps_.begin() + (long)i);
	}
	for (size_t i = 0; i < olds_.size();)
		if (olds_[i].host == h)
			olds_.erase(olds_.begin() + (long)i);
		else
			i++;
	for (uint32_t pi = 0; pi < procs_.size(); pi++)
		if (procs_[pi].host == h || restore_pending_from(pi, h))
			strike(pi); // (a restore whose cut was to come from h fails)
	for (uint32_t pi = 0; pi < procs_.size(); pi++)
		if (procs_[pi].host == h && procs_[pi].st != Proc::DONE) {
			procs_[pi].st = Proc::CRASHED;
			set_ready(pi, false);
		}
	for (uint32_t x = 0; x < cfg_.m; x++) {
		Conn &in = conns_[(size_t)x * cfg_.m + h];
		Conn &out = conns_[(size_t)h * cfg_.m + x];

		for (Wire &w : in.q) {
			mbuf_put(w.m);
			frame_release(&w.f);
		}
		in.q.clear();
		if (drop_outgoing) {
			for (Wire &w : out.q) {
				mbuf_put(w.m);
				frame_release(&w.f);
			}
			out.q.clear();
		}
		set_busy(x * cfg_.m + h);
		set_busy(h * cfg_.m + x);
	}
}

void World::set_cut(uint32_t a, uint32_t b, bool cut)
{
	note("%s %u|%u", cut ? "cut" : "heal", a, b);
	conns_[(size_t)a * cfg_.m + b].cut = cut;
	conns_[(size_t)b * cfg_.m + a].cut = cut;
	set_busy(a * cfg_.m + b);
	set_busy(b * cfg_.m + a);
}

void World::lose_head(uint32_t a, uint32_t b)
{
	Conn &c = conns_[(size_t)a * cfg_.m + b];

	if (c.q.empty())
		return;
	note("lose head of %u>%u: %s", a, b, frame_type_name(c.q.front().f.h.type));
	mbuf_put(c.q.front().m);
	frame_release(&c.q.front().f);
	c.q.pop_front();
	set_busy(a * cfg_.m + b);
}

} // namespace sim
