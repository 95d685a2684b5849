// The seeded scheduler.
//
// Each step it picks one enabled choice: run one operation of a ready
// process, or deliver the head frame of one connection (so frames on one
// connection stay in order, as on TCP, while connections overtake each other
// freely), now and then a fault. Delays come from bias: at the start of a run
// some links and some processes are made "slow", and a slow one is passed
// over most of the times it is picked, so its frames sit in queues while the
// rest of the job moves on.
//
// Time: each step advances simulated time by a few microseconds; every
// daemon's timer fires every TICK_NS (core_tick: heartbeats, detectors), and
// the daemon hears the current time before every event (core_now), as msgd
// does with its monotonic clock. When nothing can happen the world waits:
// time jumps to the next timer, so heartbeat timeouts, leases and lag bounds
// play out as they would in real time. A run ends when every replica
// finished or is gone and the membership views have settled; nothing moving
// for STALL_NS of simulated time is a stuck run (I6).
#include "sched.h"

#include <sstream>

#include "faults.h"
#include "rng.h"

namespace sim {

namespace {

constexpr uint64_t MS = 1000000;
constexpr uint64_t TICK_NS = 10 * MS;   // well under hb_timeout/2: no "late tick"
constexpr uint64_t STALL_NS = 5000 * MS;

struct Run {
	const SimCfg &cfg;
	Checker chk;
	World w;
	RunResult res;
	bool log;
	uint64_t t = 0, t_progress = 0, last_progress = 0;
	std::vector<uint64_t> next_tick;
	bool ended = false;
	bool scale_done = false;

	Run(const SimCfg &c, bool lg)
		: cfg(c), chk(c.n, c.r), w(c, make_job(c), &chk), log(lg), next_tick(c.m)
	{
		w.set_log(lg);
		res.core_ok = w.ok();
		// timers of different daemons are not in phase
		for (uint32_t h = 0; h < c.m; h++)
			next_tick[h] = (h * 7919u % 10) * MS;
		if (!res.core_ok)
			chk.fail(0, "I0 core_new refused the configuration");
	}

	// Apply c if enabled; record it. False if it was not enabled.
	bool step(const Choice &c)
	{
		if (!w.apply(c))
			return false;
		res.trace.push_back(c);
		if (c.kind == Choice::TICK) {
			uint64_t &nt = next_tick[c.a];

			nt = nt + TICK_NS > c.t ? nt + TICK_NS : c.t + TICK_NS;
		}
		if (log) {
			for (auto &l : w.log()) {
				res.log.push_back(l);
				res.log_step.push_back(res.trace.size() - 1);
			}
			w.log().clear();
		}
		if (w.progress() != last_progress) {
			last_progress = w.progress();
			t_progress = t;
		}
		return true;
	}

	bool heal_one()
	{
		for (uint32_t a = 0; a < cfg.m; a++)
			for (uint32_t b = a + 1; b < cfg.m; b++)
				if (w.cut(a, b)) {
					Choice c;

					c.kind = Choice::FAULT;
					c.sub = FK_HEAL;
					c.a = a;
					c.b = b;
					c.t = t;
					return step(c);
				}
		return false;
	}

	// A due timer, if any (lowest host first: deterministic).
	bool timer(Choice *c)
	{
		for (uint32_t h = 0; h < cfg.m; h++)
			if (!w.host_dead(h) && next_tick[h] <= t) {
				*c = Choice{};
				c->kind = Choice::TICK;
				c->a = h;
				c->t = t;
				return true;
			}
		return false;
	}

	// Nothing can move: finish, heal, wait for the next timer, or give up.
	// Returns false when the run is over.
	bool idle()
	{
		uint64_t next = UINT64_MAX;

		// cuts only delay frames here (faults.h): what they hold is
		// delivered before the end-of-run views are judged
		if (heal_one())
			return true;
		if (w.all_finished() && w.membership_settled()) {
			chk.at_quiescence(w.procs());
			if (!chk.failed())
				w.check_membership();
			return false;
		}
		if (t - t_progress > STALL_NS) {
			chk.at_quiescence(w.procs());
			if (!chk.failed())
				w.check_membership();
			// mode first, a corrupt copy consumed by a majority of its
			// receiver group (beyond what r masks, checker): that group
			// may be lost, and msgrun ends the job on a group-lost
			// event. Stuck without one is a violation all the same.
			if (!chk.failed() && !(chk.beyond_masking() && chk.group_lost()))
				chk.fail(6, chk.beyond_masking() ?
						    "I6 nothing moves, yet the run is not over (beyond masking)" :
						    "I6 nothing moves, yet the run is not over");
			return false;
		}
		for (uint32_t h = 0; h < cfg.m; h++)
			if (!w.host_dead(h) && next_tick[h] < next)
				next = next_tick[h];
		if (next == UINT64_MAX) {
			chk.fail(6, "I6 every host is dead");
			return false;
		}
		t = next > t ? next : t;
		return true;
	}

	// A step of a capture under way (an image written, a restored process
	// connecting, a broken image's restore failing), now and then; always when nothing else can move.
	bool image(Rng *g, Choice *c)
	{
		const auto &caps = w.captures();
		const auto &broken = w.broken_images();
		size_t total = caps.size() + broken.size();
		bool idle_else = w.ready_procs().empty() && w.busy_conns().empty();

		if (!total || (g ? !(idle_else || g->chance(1, 16)) : !idle_else))
			return false;
		size_t pick = g ? g->below(total) : 0;
		c->kind = Choice::IMAGE;
		if (pick >= caps.size()) { // a broken image's restore fails
			c->sub = 3;
			c->a = broken[pick - caps.size()].first;
			c->b = broken[pick - caps.size()].second;
			return true;
		}
		const Capture &cp = caps[pick];
		c->sub = (uint8_t)(cp.phase == 0 ? 1 : 2);
		c->a = cp.g;
		c->b = cp.k;
		return true;
	}

	// One step. g: the random policy; NULL: the fixed policy used to finish
	// a replayed (shortened) schedule. Returns false when the run is over.
	bool advance(Rng *g, const std::vector<uint8_t> &slow_conn, const std::vector<uint8_t> &slow_proc)
	{
		const auto &rp = w.ready_procs();
		const auto &bc = w.busy_conns();
		Choice c;

		// the m daemons and their links work in parallel: one step of
		// this sequential world is a slice 1/m as long (so heartbeats keep
		// up at 64 hosts as they do on a real network)
		t += (g ? g->range(1000, 50000) : 10000) / cfg.m;
		if (timer(&c))
			return step(c), true;
		if (w.quiescent())
			return idle();
		c.t = t;
		if (image(g, &c))
			return step(c), true;
		if (rp.empty() && bc.empty())
			return true; // only captures pending, none picked this time
		if (!g) {
			if (!bc.empty()) {
				c.kind = Choice::DELIVER;
				c.a = bc[0] / cfg.m;
				c.b = bc[0] % cfg.m;
			} else {
				c.kind = Choice::RUN;
				c.a = rp[0];
			}
			step(c);
			return true;
		}
		if (cfg.scale_op && !scale_done && res.trace.size() >= cfg.scale_after) {
			c = Choice{};
			c.t = t;
			c.kind = Choice::FAULT;
			c.sub = cfg.scale_op == 1 ? FK_MIGRATE : FK_CRASH_PROC;
			c.a = cfg.scale_pi;
			c.b = cfg.scale_target;
			if (fault_legal(w, c)) {
				scale_done = true;
				step(c);
				return true;
			}
		}
		if (!cfg.scale_op &&
		    (cfg.max_proc_crashes || cfg.max_host_crashes || cfg.max_cuts || cfg.lossy ||
		     cfg.max_migrations || cfg.max_corruptions) &&
		    g->chance(1, 48) && fault_propose(w, *g, &c)) {
			c.t = t;
			step(c);
			return true;
		}
		// uniformly over ready processes and busy connections; a slow one
		// is usually passed over (bounded retries keep a step O(1))
		for (int tries = 0; tries < 4; tries++) {
			uint64_t x = g->below(rp.size() + bc.size());

			c = Choice{};
			c.t = t;
			if (x < rp.size()) {
				c.kind = Choice::RUN;
				c.a = rp[x];
				if (tries < 3 && slow_proc[c.a] && !g->chance(1, 8))
					continue;
			} else {
				uint32_t ci = bc[x - rp.size()];

				c.kind = Choice::DELIVER;
				c.a = ci / cfg.m;
				c.b = ci % cfg.m;
				c.sub = cfg.fifo ? 0 : (uint8_t)g->below(256);
				if (tries < 3 && slow_conn[ci] && !g->chance(1, 8))
					continue;
			}
			break;
		}
		step(c);
		return true;
	}

	void loop(Rng *g, const std::vector<uint8_t> &sc, const std::vector<uint8_t> &sp)
	{
		for (uint64_t i = 0; i < cfg.step_limit; i++)
			if (chk.failed() || !advance(g, sc, sp))
				return;
		chk.fail(6, "I6 the run did not end within the step limit (livelock?)");
	}

	RunResult done()
	{
		res.v = chk.violation();
		res.hash = w.hash();
		res.steps = res.trace.size();
		res.deliveries = chk.deliveries();
		res.messages = w.messages();
		res.decisions = w.decisions();
		res.logical = chk.logical_messages();
		res.sim_ns = t;
		res.frames = w.frames();
		res.scale_done = scale_done;
		if (cfg.scale_op)
			res.talkers = w.talkers(cfg.scale_pi / cfg.r);
		return std::move(res);
	}
};

} // namespace

RunResult run_random(const SimCfg &cfg, bool log)
{
	Run run(cfg, log);
	Rng g = Rng(cfg.seed).fork(3);
	std::vector<uint8_t> slow_conn((size_t)cfg.m * cfg.m), slow_proc((size_t)cfg.n * cfg.r);

	for (auto &s : slow_conn)
		s = cfg.bias_delays && g.chance(1, 4);
	for (auto &s : slow_proc)
		s = cfg.bias_delays && g.chance(1, 4);
	if (!run.chk.failed())
		run.loop(&g, slow_conn, slow_proc);
	return run.done();
}

RunResult run_replay(const SimCfg &cfg, const std::vector<Choice> &choices, bool finish, bool log)
{
	Run run(cfg, log);

	for (const Choice &c : choices) {
		if (run.chk.failed())
			break;
		run.t = c.t > run.t ? c.t : run.t;
		run.step(c);
	}
	if (finish && !run.chk.failed())
		run.loop(nullptr, {}, {});
	return run.done();
}

std::string trace_tokens(const std::vector<Choice> &t, uint32_t r)
{
	std::string s;

	for (size_t i = 0; i < t.size(); i++) {
		if (i)
			s += ',';
		s += choice_token(t[i], r);
	}
	return s;
}

bool trace_parse(const std::string &s, uint32_t r, std::vector<Choice> *out)
{
	std::stringstream ss(s);
	std::string tok;

	out->clear();
	while (std::getline(ss, tok, ',')) {
		Choice c;

		if (tok.empty())
			continue;
		if (!choice_parse(tok, r, &c))
			return false;
		out->push_back(c);
	}
	return true;
}

} // namespace sim
