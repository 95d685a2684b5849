// The simulated world: drives the real cores exactly as msgd does (events in,
// actions out, every peer frame through the wire codec) and runs the
// replicas' programs as libmsg would (per-destination sequence numbers,
// blocking receives, MSG_ETRUNC retried with a large enough buffer).
#include "world.h"

#include <cinttypes>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "msg.h"
#include "rng.h"

namespace sim {

uint64_t FrameCounts::data() const
{
	return by_type[F_DATA];
}

uint64_t FrameCounts::control() const
{
	uint64_t s = 0;

	for (unsigned t = 0; t < 256; t++)
		if (t != F_DATA)
			s += by_type[t];
	return s;
}

std::string choice_token(const Choice &c, uint32_t r)
{
	char b[96];

	switch (c.kind) {
	case Choice::RUN:
		snprintf(b, sizeof(b), "R%u.%u", c.a / r, c.a % r);
		break;
	case Choice::DELIVER:
		snprintf(b, sizeof(b), "D%u>%u", c.a, c.b);
		if (c.sub)
			snprintf(b + strlen(b), sizeof(b) - strlen(b), "#%u", c.sub);
		break;
	case Choice::TICK:
		snprintf(b, sizeof(b), "T%u", c.a);
		break;
	case Choice::IMAGE:
		snprintf(b, sizeof(b), "I%u:%u:%u", c.sub, c.a, c.b);
		break;
	default:
		snprintf(b, sizeof(b), "F%u:%u:%u", c.sub, c.a, c.b);
		break;
	}
	snprintf(b + strlen(b), sizeof(b) - strlen(b), "@%" PRIu64, c.t);
	return b;
}

bool choice_parse(const std::string &tok, uint32_t r, Choice *c)
{
	unsigned a = 0, b = 0, sub = 0;
	unsigned long long t = 0;
	const char *s = tok.c_str();
	const char *at = strchr(s, '@');

	*c = Choice{};
	if (!at || sscanf(at + 1, "%llu", &t) != 1)
		return false;
	c->t = t;
	switch (s[0]) {
	case 'R':
		if (sscanf(s + 1, "%u.%u", &a, &b) != 2)
			return false;
		c->kind = Choice::RUN;
		c->a = a * r + b;
		return true;
	case 'D':
		if (sscanf(s + 1, "%u>%u#%u", &a, &b, &sub) < 2)
			return false;
		c->kind = Choice::DELIVER;
		c->a = a;
		c->b = b;
		c->sub = (uint8_t)sub;
		return true;
	case 'T':
		if (sscanf(s + 1, "%u", &a) != 1)
			return false;
		c->kind = Choice::TICK;
		c->a = a;
		return true;
	case 'I':
		if (sscanf(s + 1, "%u:%u:%u", &sub, &a, &b) != 3)
			return false;
		c->kind = Choice::IMAGE;
		c->sub = (uint8_t)sub;
		c->a = a;
		c->b = b;
		return true;
	case 'F':
		if (sscanf(s + 1, "%u:%u:%u", &sub, &a, &b) != 3)
			return false;
		c->kind = Choice::FAULT;
		c->sub = (uint8_t)sub;
		c->a = a;
		c->b = b;
		return true;
	default:
		return false;
	}
}

World::World(const SimCfg &cfg, Job job, Checker *chk)
	: cfg_(cfg), job_(std::move(job)), chk_(chk), host_dead_(cfg.m, false),
	  conns_((size_t)cfg.m * cfg.m), procs_((size_t)cfg.n * cfg.r),
	  ready_pos_((size_t)cfg.n * cfg.r, -1), busy_pos_((size_t)cfg.m * cfg.m, -1),
	  hash_(mix64(FNV0, cfg.seed))
{
	restore_src_.assign((size_t)cfg.n * cfg.r, UINT32_MAX);
	restore_failed_.assign((size_t)cfg.n * cfg.m, false);
	fenced_at_.assign((size_t)cfg.n * cfg.r, 0);
	fence_time_.assign((size_t)cfg.n * cfg.r, 0);
	fences_.assign(cfg.n, 0);
	repair_trouble_.assign(cfg.n, 0);
	talkers_.assign(cfg.n, std::vector<bool>(cfg.m, false));
	move_ordered_.assign(cfg.n, false);
	corrupted_.assign(cfg.n, false);
	struck_.assign(cfg.n, 0);
	fenced_slots_.assign(cfg.n, 0);
	chk_->set_mode(cfg.mode);
	state_in_.assign((size_t)cfg.n * cfg.r, false);
	restore_inc_.assign((size_t)cfg.n * cfg.r, 0);
	for (uint32_t h = 0; h < cfg.m; h++) {
		struct core_cfg cc = {};

		cc.host = h;
		cc.n = cfg.n;
		cc.r = cfg.r;
		cc.m = cfg.m;
		cc.mode = cfg.mode;
		cc.flags = cfg.flags;
		cc.test = cfg.test;
		cores_.push_back(core_new(&cc));
		if (!cores_.back())
			cores_ok_ = false;
		else
			// the core's automatic regeneration after a fence (--regen)
			core_set_regen(cores_.back(), cfg.regen && !cfg.no_repair);
	}
	for (uint32_t g = 0; g < cfg.n; g++)
		for (uint32_t k = 0; k < cfg.r; k++) {
			uint32_t pi = g * cfg.r + k;
			Proc &p = procs_[pi];

			p.g = g;
			p.k = k;
			p.host = core_place(g, k, cfg.r, cfg.m);
			p.prog = job_.prog[g]->clone();
			set_ready(pi, true);
		}
}

World::~World()
{
	for (Conn &c : conns_)
		for (Wire &w : c.q) {
			mbuf_put(w.m);
			frame_release(&w.f);
		}
	for (struct core *c : cores_)
		core_free(c);
}

void World::note(const char *fmt, ...)
{
	char b[512];
	va_list ap;

	if (!log_)
		return;
	va_start(ap, fmt);
	vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	lines_.push_back(b);
}

void World::hash_u64(uint64_t v)
{
	hash_ = mix64(hash_, v);
}

void World::set_ready(uint32_t pi, bool on)
{
	int32_t &pos = ready_pos_[pi];

	if (on && pos < 0) {
		pos = (int32_t)ready_.size();
		ready_.push_back(pi);
	} else if (!on && pos >= 0) {
		uint32_t last = ready_.back();

		ready_[(size_t)pos] = last;
		ready_pos_[last] = pos;
		ready_.pop_back();
		pos = -1;
	}
}

void World::set_busy(uint32_t ci)
{
	const Conn &c = conns_[ci];
	bool on = !c.q.empty() && !c.cut && !host_dead_[ci % cfg_.m];
	int32_t &pos = busy_pos_[ci];

	if (on && pos < 0) {
		pos = (int32_t)busy_.size();
		busy_.push_back(ci);
	} else if (!on && pos >= 0) {
		uint32_t last = busy_.back();

		busy_[(size_t)pos] = last;
		busy_pos_[last] = pos;
		busy_.pop_back();
		pos = -1;
	}
}

bool World::enabled(const Choice &c) const
{
	switch (c.kind) {
	case Choice::RUN:
		return c.a < procs_.size() && ready_pos_[c.a] >= 0;
	case Choice::DELIVER:
		return c.a < cfg_.m && c.b < cfg_.m && busy_pos_[(size_t)c.a * cfg_.m + c.b] >= 0;
	case Choice::TICK:
		return c.a < cfg_.m && !host_dead_[c.a];
	case Choice::FAULT:
		return fault_legal(*this, c);
	case Choice::IMAGE:
		if (c.sub == 3) {
			for (const auto &b : broken_)
				if (b.first == c.a && b.second == c.b)
					return true;
			return false;
		}
		for (const Capture &cp : caps_)
			if (cp.g == c.a && cp.k == c.b)
				return c.sub == 1 ? cp.phase == 0 : cp.phase == 1;
		return false;
	}
	return false;
}

bool World::apply(const Choice &c)
{
	if (!enabled(c))
		return false;
	if (c.t > now_)
		now_ = c.t;
	hash_u64(((uint64_t)c.kind << 56) ^ ((uint64_t)c.sub << 48) ^ ((uint64_t)c.a << 24) ^ c.b);
	hash_u64(c.t);
	switch (c.kind) {
	case Choice::RUN:
		progress_++;
		run_proc(procs_[c.a]);
		break;
	case Choice::DELIVER:
		deliver(c.a, c.b, c.sub);
		break;
	case Choice::TICK:
		core_tick(cores_[c.a], now_);
		drain(c.a);
		break;
	case Choice::FAULT:
		note("fault: %s %u %u", fault_name(c.sub), c.a, c.b);
		fault_apply(*this, c);
		break;
	case Choice::IMAGE:
		progress_++;
		image_step(c.a, c.b, c.sub);
		break;
	}
	return true;
}

// Payload bytes: a function of the message's identity and of everything the
// sending replica received so far, so replicas that diverged send different
// bytes (and the comparison catches it) while faithful replicas agree.
static struct mbuf *make_payload(uint64_t key, uint64_t size, uint64_t *digest)
{
	struct mbuf *m = mbuf_new(size);
	Rng g(key);
	uint64_t i;

	if (!m)
		abort();
	for (i = 0; i + 8 <= size; i += 8) {
		uint64_t v = g.next();

		memcpy(m->data + i, &v, 8);
	}
	if (i < size) {
		uint64_t v = g.next();

		memcpy(m->data + i, &v, size - i);
	}
	*digest = fnv(FNV0, m->data, size);
	return m;
}

void World::run_proc(Proc &p)
{
	struct core *c = cores_[p.host];
	uint32_t pi = p.g * cfg_.r + p.k;
	Op op;
	int rc;

	core_now(c, now_);
	if (p.st == Proc::NEW) {
		rc = core_local_start(c, p.g);
		if (rc)
			chk_->fail(0, "I0 core_local_start refused replica " + std::to_string(p.g) + "." +
					      std::to_string(p.k));
		p.st = Proc::READY;
	}
	if (p.retry) {
		op = p.want;      // same receive, buffer now as large as the message
		p.retry = false;
	} else {
		op = p.prog->next(p.have_last ? &p.last : nullptr);
		p.have_last = false;
	}
	switch (op.kind) {
	case Op::SEND: {
		uint64_t digest, seq;
		struct l_send s = {};
		struct mbuf *m;

		if (p.next_seq.empty())
			p.next_seq.assign(cfg_.n, 0);
		seq = ++p.next_seq[op.dst];
		m = make_payload(mix64(mix64(mix64(mix64(p.hist, p.g), op.dst), seq), (uint64_t)op.tag),
				 op.size, &digest);
		bool bad = chk_->tainted(p.g, p.k);
		if (p.corrupt_next && op.size) {
			// as msgd's injection does: bit 0x10 of byte len/2, after
			// the process handed the message over (its state is sound)
			m->data[op.size / 2] ^= 0x10;
			digest = fnv(FNV0, m->data, op.size);
			p.corrupt_next = false;
			bad = true;
			note("%u.%u: this message goes out corrupt", p.g, p.k);
		}
		chk_->on_send(p.g, p.k, op.dst, seq, op.tag, op.size, digest, bad);
		// a replica of dst on this host gets its copy at once (core.c)
		for (uint32_t k = 0; k < cfg_.r && cfg_.max_corruptions; k++)
			if (procs_[op.dst * cfg_.r + k].host == p.host)
				copy_seen(p.host, p.g, p.k, op.dst, seq, op.tag, op.size, m->data);
		note("%u.%u send to %u tag %d seq %" PRIu64 " size %" PRIu64, p.g, p.k, op.dst, op.tag,
		     seq, op.size);
		s.dst = op.dst;
		s.tag = op.tag;
		s.seq = seq;
		s.size = op.size;
		messages_++;
		rc = core_local_send(c, p.g, &s, m);
		if (rc)
			chk_->fail(0, "I0 core_local_send refused a valid send, rc " + std::to_string(rc));
		break;
	}
	case Op::RECV: {
		struct l_recv r = {};

		p.want = op;
		p.st = Proc::BLOCKED;
		p.t_recv = now_;
		set_ready(pi, false);
		note("%u.%u receive(src %d, tag %d, buf %" PRIu64 ")", p.g, p.k, op.src, op.tag, op.size);
		r.src = op.src;
		r.tag = op.tag;
		r.bufsize = op.size;
		rc = core_local_recv(c, p.g, &r);
		if (rc)
			chk_->fail(0, "I0 core_local_recv refused a valid receive, rc " + std::to_string(rc));
		break;
	}
	case Op::END:
		p.st = Proc::DONE;
		set_ready(pi, false);
		note("%u.%u ends", p.g, p.k);
		core_local_finalize(c, p.g);  // msgFinalize, then the process ends
		core_local_exit(c, p.g, 0);
		break;
	}
	drain(p.host);
}

void World::deliver(uint32_t a, uint32_t b, uint8_t sub)
{
	uint32_t ci = a * cfg_.m + b;
	Conn &cn = conns_[ci];
	size_t idx = cfg_.fifo ? 0 : sub % cn.q.size();
	Wire w = std::move(cn.q[idx]);
	struct frame f;
	int rc;

	cn.q.erase(cn.q.begin() + (long)idx);
	set_busy(ci);
	if (w.f.h.type != F_HEARTBEAT)
		progress_++; // heartbeats flow forever; they are not the job moving
	f = w.f;
	if (cfg_.wire) {
		// exactly the receiving daemon's path: header, then body
		struct frame_hdr h;

		rc = frame_decode_hdr(w.bytes.data(), w.bytes.size(), &h);
		if (!rc)
			rc = frame_decode_body(&h, w.bytes.data() + FRAME_HDR_LEN, &f);
		if (rc || FRAME_HDR_LEN + f.h.len != w.bytes.size()) {
			char why[160] = "";

			if (w.f.h.type == F_DATA)
				snprintf(why, sizeof(why), " (%u.%u->%u.%u seq %" PRIu64 " tag %d total %" PRIu64
					 " chunk %u)", w.f.u.data.src, w.f.u.data.src_rep, w.f.u.data.dst,
					 w.f.u.data.dst_rep, w.f.u.data.seq, w.f.u.data.tag, w.f.u.data.total,
					 w.f.u.data.chunk);
			chk_->fail(0, std::string("I0 codec: a ") + frame_type_name(w.f.h.type) +
					      " frame does not decode: " + frame_strerror(rc) + why);
			mbuf_put(w.m);
			return;
		} else {
			size_t len = 0;
			uint8_t *again = frame_encode_alloc(&f, &len);

			if (!again || len != w.bytes.size() || memcmp(again, w.bytes.data(), len))
				chk_->fail(0, std::string("I0 codec: a ") + frame_type_name(f.h.type) +
						      " frame does not survive encode/decode/encode");
			free(again);
		}
	}
	if (f.h.type == F_DATA)
		note("deliver %u>%u DATA %u.%u->%u.%u seq %" PRIu64 " tag %d size %" PRIu64 "%s%s%s%s", a, b,
		     f.u.data.src, f.u.data.src_rep, f.u.data.dst, f.u.data.dst_rep, f.u.data.seq,
		     f.u.data.tag, f.u.data.total, f.u.data.src_inc > 1 ? " (newer inc)" : "",
		     (f.h.flags & DATA_F_FWD) ? " FWD" : "", (f.h.flags & DATA_F_CUT) ? " CUT" : "",
		     (f.h.flags & DATA_F_RET) ? " RET" : "");
	else if (f.h.type == F_DECISION)
		note("deliver %u>%u DECISION group %u #%" PRIu64 " = %u seq %" PRIu64 " from rep %u%s", a, b,
		     f.u.decision.group, f.u.decision.index, f.u.decision.src, f.u.decision.seq,
		     f.u.decision.from_rep, f.h.flags ? " (sync)" : "");
	else if (f.h.type == F_MEMBER)
		note("deliver %u>%u MEMBER %u.%u %s inc %u on %u epoch %u", a, b, f.u.member.group,
		     f.u.member.rep, f.u.member.state == MEMBER_DEAD ? "dead" :
		     f.u.member.state == MEMBER_JOINING ? "joining" : "live", f.u.member.inc,
		     f.u.member.host, f.u.member.epoch);
	else if (f.h.type == F_SUSPECT)
		note("deliver %u>%u SUSPECT %u.%u inc %u by %u reason %u", a, b, f.u.suspect.group,
		     f.u.suspect.rep, f.u.suspect.inc, f.u.suspect.by_host, f.u.suspect.reason);
	else
		note("deliver %u>%u %s", a, b, frame_type_name(f.h.type));
	// (the restore's own: a late STATE_END of an older incarnation of the
	// slot, another host's, is not its state)
	if (f.h.type == F_STATE_END && f.u.state_end.group < cfg_.n && f.u.state_end.rep < cfg_.r &&
	    !host_dead_[a]) {
		size_t s = (size_t)f.u.state_end.group * cfg_.r + f.u.state_end.rep;

		if (restore_src_[s] == a && restore_inc_[s] == f.u.state_end.inc)
			state_in_[s] = true;
	}
	if (f.h.type == F_DATA && w.m && f.u.data.off == 0 && w.m->len == f.u.data.total &&
	    !(f.h.flags & DATA_F_RET)) // kept for a moving sender, given to no receiver
		copy_seen(b, f.u.data.src, f.u.data.src_rep, f.u.data.dst, f.u.data.seq, f.u.data.tag,
			  f.u.data.total, w.m->data);
	core_now(cores_[b], now_);
	rc = core_peer_frame(cores_[b], a, &f, w.m);
	if (rc) {
		char why[200] = "";

		if (f.h.type == F_DATA)
			snprintf(why, sizeof(why), " (host %u>%u, flags %u, %u.%u->%u.%u inc %u seq %" PRIu64 ")",
				 a, b, f.h.flags, f.u.data.src, f.u.data.src_rep, f.u.data.dst,
				 f.u.data.dst_rep, f.u.data.src_inc, f.u.data.seq);
		else if (f.h.type == F_DECISION)
			snprintf(why, sizeof(why), " (host %u>%u, flags %u, group %u from_rep %u index %" PRIu64 ")",
				 a, b, f.h.flags, f.u.decision.group, f.u.decision.from_rep,
				 f.u.decision.index);
		chk_->fail(0, std::string("I0 core rejected a ") + frame_type_name(f.h.type) +
				      " frame its peer produced: " + frame_strerror(rc) + why);
	}
	frame_release(&f); // the decoded frame, or the one the core handed over
	drain(b);
}

void World::drain(uint32_t h)
{
	struct action *v;
	size_t n;

	// Bounded: each round takes what the previous round's actions caused
	// (a kill is followed by the process's exit, which the core hears).
	for (int round = 0; round < 64; round++) {
		v = core_take_actions(cores_[h], &n);
		for (size_t i = 0; i < n; i++) {
			struct action &a = v[i];

			switch (a.kind) {
			case A_PEER: {
				Wire w;

				counts_.by_type[a.f.h.type]++;
				if (a.f.h.type == F_DATA && (a.f.h.flags & DATA_F_FWD))
					counts_.fwd_data++;
				if (a.f.h.type == F_DATA && !(a.f.h.flags & DATA_F_FWD) &&
				    a.f.u.data.dst < cfg_.n)
					talkers_[a.f.u.data.dst][h] = true;
				hash_u64(((uint64_t)h << 40) ^ ((uint64_t)a.host << 8) ^ a.f.h.type);
				if (a.host >= cfg_.m || a.host == h) {
					chk_->fail(0, "I0 core addressed a peer frame to host " +
							      std::to_string(a.host) + " (" +
							      frame_type_name(a.f.h.type) + ")");
					mbuf_put(a.m);
					break;
				}
				if (host_dead_[a.host]) { // connection refused: the frame is gone
					mbuf_put(a.m);
					break;
				}
				w.f = a.f;
				w.m = a.m;
				if (w.f.h.type == F_DATA) {
					// the shell chunks DATA itself (run_peer); messages
					// here fit one chunk
					w.f.u.data.off = 0;
					w.f.u.data.chunk = (uint32_t)(w.f.u.data.total > FRAME_CHUNK_MAX ?
						FRAME_CHUNK_MAX : w.f.u.data.total);
				}
				if (cfg_.wire) {
					size_t len = 0;
					uint8_t *p = frame_encode_alloc(&w.f, &len);

					if (!p) {
						chk_->fail(0, std::string("I0 codec: cannot encode a ") +
								      frame_type_name(a.f.h.type) + " frame");
						mbuf_put(a.m);
						break;
					}
					w.bytes.assign(p, p + len);
					hash_ = fnv(hash_, p, len);
					free(p);
					frame_release(&w.f); // encoded: the receiver decodes its own
				}
				conns_[(size_t)h * cfg_.m + a.host].q.push_back(std::move(w));
				set_busy(h * cfg_.m + a.host);
				break;
			}
			case A_LOCAL:
				local_action(h, a);
				break;
			case A_EVENT:
				hash_ = fnv(hash_, a.text, strlen(a.text));
				note("daemon %u: %s", h, a.text);
				chk_->on_event(h, a.text);
				repair_event(a.text);
				break;
			case A_KILL:
				kill_local(h, a.group);
				break;
			case A_CAPTURE:
				capture(h, a.f.u.migrate);
				break;
			default:
				// a new kind of action the simulator does not model yet
				// (docs/protocol-sim.md, "Extending"): fail loudly
				chk_->fail(0, "I0 daemon " + std::to_string(h) + " emitted action kind " +
						      std::to_string((int)a.kind) + ", which the simulator "
						      "does not model yet");
				mbuf_put(a.m);
				break;
			}
		}
		free(v);
		if (!n)
			return;
	}
	chk_->fail(0, "I0 daemon " + std::to_string(h) + " keeps producing actions (64 rounds)");
}

void World::local_action(uint32_t h, const struct action &a)
{
	uint32_t rep = 0, pi;

	if (a.group >= cfg_.n || !core_is_local(cores_[h], a.group, &rep)) {
		chk_->fail(0, "I0 core addressed a local frame to group " + std::to_string(a.group) +
				      ", not on host " + std::to_string(h));
		mbuf_put(a.m);
		return;
	}
	pi = a.group * cfg_.r + rep;
	Proc &p = procs_[pi];
	if (p.host != h) {
		for (const Proc &o : olds_)
			if (o.g == a.group && o.host == h) {
				// for a set-aside earlier incarnation (held still):
				// it stays in its socket until the process is killed
				mbuf_put(a.m);
				return;
			}
	}
	if (p.st != Proc::BLOCKED) {
		chk_->fail(0, "I0 a local frame for replica " + std::to_string(p.g) + "." +
				      std::to_string(p.k) + ", which is not in a receive");
		mbuf_put(a.m);
		return;
	}
	if (a.f.h.type == L_DELIVER) {
		const struct l_deliver &d = a.f.u.deliver;
		RecvRes res = { d.src, d.tag, d.seq, d.size, 0 };

		if ((d.size && !a.m) || (a.m && a.m->len != d.size))
			chk_->fail(0, "I0 a delivery's payload does not have its announced size");
		res.digest = fnv(FNV0, a.m ? a.m->data : nullptr, a.m ? a.m->len : 0);
		note("%u.%u got %u->%u seq %" PRIu64 " tag %d size %" PRIu64, p.g, p.k, d.src, p.g,
		     d.seq, d.tag, d.size);
		chk_->on_deliver(p.g, p.k, p.want, res);
		p.hist = mix64(mix64(p.hist, res.digest), res.seq);
		p.last = res;
		p.have_last = true;
		hash_u64(p.hist);
	} else if (a.f.h.type == L_TRUNC) {
		const auto &t = a.f.u.trunc;

		note("%u.%u MSG_ETRUNC: %u tag %d size %" PRIu64 " > buffer %" PRIu64, p.g, p.k, t.src,
		     t.tag, t.size, p.want.size);
		chk_->on_trunc(p.g, p.k, p.want, t.src, t.tag, t.size);
		p.hist = mix64(p.hist, t.size);
		p.retry = true;
		p.want.size = t.size;
		hash_u64(p.hist);
	} else {
		chk_->fail(0, std::string("I0 unexpected local frame ") + frame_type_name(a.f.h.type));
	}
	mbuf_put(a.m);
	p.st = Proc::READY;
	set_ready(pi, true);
}

// I4's judge, from what the run shows: a daemon holding a running replica
// of dst has a corrupt copy and the sound copies of a majority of the
// sender's replicas (all r live: faults.cc), so rule 7 says who is wrong.
void World::copy_seen(uint32_t h, uint32_t src, uint32_t src_rep, uint32_t dst, uint64_t seq,
		      int32_t tag, uint64_t size, const uint8_t *data)
{
	uint32_t dk = cfg_.r, bit = 1u << src_rep;
	int cls;

	if (!cfg_.max_corruptions || src >= cfg_.n || dst >= cfg_.n || src_rep >= cfg_.r)
		return;
	for (uint32_t k = 0; k < cfg_.r; k++) {
		const Proc &q = procs_[dst * cfg_.r + k];

		if (q.host == h && q.st != Proc::DONE && q.st != Proc::CRASHED && !host_dead_[h])
			dk = k;
	}
	cls = dk < cfg_.r ? chk_->content_class(src, dst, seq, tag, size, fnv(FNV0, data, size)) : 0;
	if (!cls)
		return;
	auto &x = copies_[std::make_tuple(h, (uint64_t)src * cfg_.n + dst, seq,
					  procs_[dst * cfg_.r + dk].life)];
	(cls == 1 ? x.first : x.second) |= bit;
	if (x.second && (uint32_t)__builtin_popcount(x.first) >= cfg_.r / 2 + 1)
		chk_->outvoted(src, x.second, dst, dk, seq);
}


bool World::in_flight(uint8_t type, uint32_t from, uint32_t to) const
{
	for (uint32_t a = 0; a < cfg_.m; a++)
		for (uint32_t b = 0; b < cfg_.m; b++) {
			if ((from != ANY_HOST && a != from) || (to != ANY_HOST && b != to))
				continue;
			for (const Wire &w : conns_[(size_t)a * cfg_.m + b].q)
				if (w.f.h.type == type)
					return true;
		}
	return false;
}

bool World::old_incarnation_runs(std::string *why) const
{
	for (const Proc &o : olds_)
		if (!host_dead_[o.host]) {
			*why = std::to_string(o.g) + "." + std::to_string(o.k) + " on host " +
			       std::to_string(o.host);
			return true;
		}
	return false;
}

uint64_t World::decisions() const
{
	uint64_t s = 0;

	for (struct core *c : cores_)
		s += core_stats(c)->decisions;
	return s;
}

} // namespace sim
