// Captures: migration (move) and regeneration (copy) as the shell carries
// them out (runtime/daemon/image.c): the target hears of the image first, the
// image is written, the restored process connects and repeats its msgrecv.
#include <cinttypes>
#include <cstdio>

#include "world.h"

namespace sim {

// A_CAPTURE at host h: the daemon hands its process (blocked in msgrecv, its
// safe point) the image connection to the target, whose daemon hears of the
// incoming image first (IMAGE_HELLO: core_incoming). The image itself is
// written later (IMAGE choice 1), the restored process connects after that
// (IMAGE choice 2).
void World::capture(uint32_t h, const struct f_migrate &mg)
{
	uint32_t rep = 0;
	Capture cp;

	if (mg.group >= cfg_.n || !core_is_local(cores_[h], mg.group, &rep) || rep != mg.src_rep ||
	    mg.target >= cfg_.m || mg.rep >= cfg_.r) {
		chk_->fail(0, "I0 daemon " + std::to_string(h) + " asks to capture group " +
				      std::to_string(mg.group) + ", which has no such replica there");
		return;
	}
	Proc &p = procs_[mg.group * cfg_.r + rep];
	note("daemon %u captures %u.%u for %s to host %u as %u.%u inc %u", h, p.g, p.k,
	     mg.mode == MIG_MOVE ? "a move" : "a copy", mg.target, p.g, mg.rep, mg.inc);
	if (p.st != Proc::BLOCKED || host_dead_[mg.target]) {
		// gone, or no image connection: the capture fails (the daemon's
		// image_capture path)
		core_capture_done(cores_[h], mg.group, -1);
		move_ordered_[mg.group] = false;
		return;
	}
	if (core_incoming_refused(cores_[mg.target], mg.group, mg.rep)) {
		// another replica of the group lives at the target (a move and a
		// copy ordered at once): its daemon closes the image connection
		// before the GO, so the capture fails (B67)
		note("daemon %u refuses the image of %u.%u: a replica of %u lives there", mg.target,
		     mg.group, mg.rep, mg.group);
		core_capture_done(cores_[h], mg.group, -1);
		move_ordered_[mg.group] = false;
		return;
	}
	cp.g = mg.group;
	cp.src_k = rep;
	cp.k = mg.rep;
	cp.src_host = h;
	cp.target = mg.target;
	cp.inc = mg.inc;
	cp.mode = mg.mode;
	cp.snap.g = p.g;
	cp.snap.k = mg.rep;
	cp.snap.host = mg.target;
	cp.snap.prog = p.prog->clone();
	cp.snap.want = p.want;
	cp.snap.next_seq = p.next_seq;
	cp.snap.hist = p.hist;
	cp.fork = chk_->fork(p.g, p.k);
	p.capturing = true;
	restore_src_[(size_t)mg.group * cfg_.r + mg.rep] = h;
	restore_inc_[(size_t)mg.group * cfg_.r + mg.rep] = mg.inc;
	state_in_[(size_t)mg.group * cfg_.r + mg.rep] = false;
	restore_failed_[(size_t)mg.group * cfg_.m + mg.target] = false;
	core_now(cores_[mg.target], now_);
	if (core_incoming(cores_[mg.target], mg.group, mg.rep, mg.inc, mg.mode, h))
		chk_->fail(0, "I0 core_incoming refused an image it was asked about just before");
	caps_.push_back(std::move(cp));
	drain(mg.target);
}

// A fence reached the target of an image of g: its daemon kills the
// restorer (the shell's A_KILL), so the capture fails on both sides.
void World::kill_restorer(uint32_t h, uint32_t g)
{
	for (size_t i = 0; i < caps_.size(); i++) {
		Capture &cp = caps_[i];

		if (cp.g != g || cp.target != h)
			continue;
		if (cp.restorer_dead)
			continue;
		note("daemon %u kills the restorer of %u.%u (fenced)", h, g, cp.k);
		if (cp.phase == 0 && cp.mode == MIG_COPY) {
			// a live copy's source writes its stop into memory and a
			// helper streams it: its daemon hears "captured" all the same
			cp.restorer_dead = true;
			core_now(cores_[h], now_);
			restore_failed_[(size_t)g * cfg_.m + h] = true;
		core_restore_failed(cores_[h], g);
			drain(h);
			return;
		}
		if (cp.phase == 0) {
			Proc &src = procs_[g * cfg_.r + cp.src_k];

			src.capturing = false;
			if (!host_dead_[cp.src_host]) {
				core_now(cores_[cp.src_host], now_);
				core_capture_done(cores_[cp.src_host], g, -1); // image connection broke
				drain(cp.src_host);
			}
		}
		if (cp.phase == 1 && cp.mode == MIG_MOVE) {
			// the moved process never runs: its source's placeholder
			// (DONE) is the replica, killed with its restorer
			Proc &src = procs_[g * cfg_.r + cp.src_k];

			if (src.moved && src.st == Proc::DONE) {
				strike(g * cfg_.r + cp.src_k);
				src.st = Proc::CRASHED;
				src.fenced = true;
			}
		}
		caps_.erase(caps_.begin() + (long)i);
		move_ordered_[g] = false;
		core_now(cores_[h], now_);
		restore_failed_[(size_t)g * cfg_.m + h] = true;
		core_restore_failed(cores_[h], g);
		drain(h);
		return;
	}
}

// IMAGE choice 3: the restore of a broken image fails at its target (unless
// a newer image of the group arrived there meanwhile: the daemon's slot for
// the group is that one now).
void World::broken_image_fails(uint32_t g, uint32_t t)
{
	for (size_t i = 0; i < broken_.size(); i++) {
		if (broken_[i].first != g || broken_[i].second != t)
			continue;
		broken_.erase(broken_.begin() + (long)i);
		for (const Capture &cp : caps_)
			if (cp.g == g && cp.target == t)
				return;
		if (host_dead_[t])
			return;
		note("the restore of a broken image of %u fails on host %u", g, t);
		core_now(cores_[t], now_);
		restore_failed_[(size_t)g * cfg_.m + t] = true;
		core_restore_failed(cores_[t], g);
		drain(t);
		return;
	}
}

void World::image_step(uint32_t g, uint32_t k, uint8_t step)
{
	size_t i;

	if (step == 3) {
		broken_image_fails(g, k);
		return;
	}

	for (i = 0; i < caps_.size(); i++)
		if (caps_[i].g == g && caps_[i].k == k)
			break;
	Capture &cp = caps_[i];
	if (step == 1) {
		// the image is safe: the source daemon sends the cut
		Proc &src = procs_[g * cfg_.r + cp.src_k];

		note("%u.%u image written (%s)", g, cp.src_k, cp.mode == MIG_MOVE ? "move" : "copy");
		src.capturing = false;
		cp.phase = 1;
		core_now(cores_[cp.src_host], now_);
		core_capture_done(cores_[cp.src_host], g, 0);
		if (cp.mode == MIG_MOVE && src.st != Proc::CRASHED) {
			src.st = Proc::DONE; // placeholder until the moved one runs
			src.moved = true;
			set_ready(g * cfg_.r + cp.src_k, false);
		}
		drain(cp.src_host);
		if (cp.restorer_dead) { // nobody restores it
			caps_.erase(caps_.begin() + (long)i);
			move_ordered_[g] = false;
		}
		return;
	}
	// the restored process connects and repeats its msgrecv
	uint32_t pi = g * cfg_.r + k;
	Proc &p = procs_[pi];
	struct l_recv r = {};
	int rc;

	note("%u.%u restored on host %u (inc %u)", g, k, cp.target, cp.inc);
	set_ready(pi, false);
	if (p.st != Proc::DONE && p.st != Proc::CRASHED && p.host != cp.target && !host_dead_[p.host] &&
	    cp.mode == MIG_COPY) {
		// the slot's previous incarnation was fenced (a copy replaces only
		// a dead replica) but runs on until its daemon hears of it: one
		// Proc per slot cannot hold both, so it is set aside, held still
		note("%u.%u inc-old on host %u runs on, held until its daemon kills it", g, k, p.host);
		olds_.push_back(std::move(p));
	}
	p = std::move(cp.snap);
	p.life = ++lives_;
	p.st = Proc::BLOCKED;
	chk_->install(g, k, cp.fork);
	caps_.erase(caps_.begin() + (long)i);
	move_ordered_[g] = false;
	core_now(cores_[p.host], now_);
	rc = core_local_restored(cores_[p.host], g);
	if (rc)
		chk_->fail(0, "I0 core_local_restored refused " + std::to_string(g) + "." +
				      std::to_string(k) + ", rc " + std::to_string(rc));
	r.src = p.want.src;
	r.tag = p.want.tag;
	r.bufsize = p.want.size;
	rc = core_local_recv(cores_[p.host], g, &r);
	if (rc)
		chk_->fail(0, "I0 the restored " + std::to_string(g) + "." + std::to_string(k) +
				      " cannot repeat its receive, rc " + std::to_string(rc));
	drain(p.host);
}

// The process died while its image was being written: the image connection
// breaks, the target gives up the restore.
void World::abort_capture(Proc &p)
{
	if (!p.capturing)
		return;
	p.capturing = false;
	for (size_t i = 0; i < caps_.size(); i++)
		if (caps_[i].g == p.g && caps_[i].src_k == p.k && caps_[i].phase == 0) {
			uint32_t t = caps_[i].target;
			bool failed = caps_[i].restorer_dead;

			caps_.erase(caps_.begin() + (long)i);
			move_ordered_[p.g] = false;
			// the target's restorer sees the stream end later: its failure
			// may come after a newer copy of the slot was ordered elsewhere
			if (!host_dead_[t] && !failed)
				broken_.emplace_back(p.g, t);
			return;
		}
}

bool World::migrate(uint32_t pi, uint32_t target)
{
	const Proc &p = procs_[pi];
	struct f_migrate mg = {};
	int rc;

	mg.group = p.g;
	mg.rep = (uint16_t)p.k;
	mg.src_rep = (uint16_t)p.k;
	mg.target = target;
	mg.mode = MIG_MOVE;
	note("migrate %u.%u from host %u to host %u", p.g, p.k, p.host, target);
	core_now(cores_[p.host], now_);
	rc = core_migrate(cores_[p.host], &mg);
	if (rc)
		note("daemon %u refuses the move (rc %d)", p.host, rc);
	else
		move_ordered_[p.g] = true; // (the core cannot refuse a second move of the
					   // group to the same target: msgctl's concern)
	drain(p.host);
	return rc == 0;
}

} // namespace sim
