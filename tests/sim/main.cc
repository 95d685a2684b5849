// msgsim: the deterministic simulator of the protocol core (docs/protocol-sim.md).
//
//   msgsim --seeds N [--start S]        sweep seeds S..S+N-1 (CI, nightly)
//   msgsim --seed S [--trace]           one run; prints its hash (and every step)
//   msgsim --seed S --replay TOKENS     replay a (shrunk) schedule of seed S
//   msgsim --expect I<k> ...            negative control: succeed only if the
//                                       sweep finds a violation of I<k>
//   msgsim --scale 64,256,1024          control-frame counts at 64 hosts
//
// On a violation it prints the seed, the invariant and the shortest failing
// schedule it can find, step by step, with the command that replays it, and
// exits 1.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "config.h"
#include "core_c.h"
#include "rng.h"
#include "sched.h"
#include "shrink.h"

namespace sim {
int scale_main(const std::vector<uint32_t> &ns, uint32_t m, uint32_t r);
int scale_check(const std::vector<uint32_t> &ns, uint32_t m, uint32_t r);
}

using namespace sim;

namespace {

struct Opts {
	uint64_t seeds = 0, start = 1, seed = 0, shrink_budget = 3000;
	bool one = false, trace = false, quiet = false, no_shrink = false, determinism = false;
	bool keep_going = false, scale_check = false;
	int expect = -1;
	std::string replay, scale, pins_text;
	CfgPins pins;
};

void usage()
{
	fprintf(stderr,
		"usage: msgsim (--seeds N [--start S] | --seed S [--replay TOKENS] [--trace] "
		"[--determinism] | --scale N1,N2,.. | --scale-check N1,N2,..)\n  [--keep-going] "
		"  [--expect I<k>] [--m M] [--n N] [--r R] [--mode first|vote] "
		"[--work ring|alltoall|mgrwork|dag] [--units U]\n"
		"  [--crashes K] [--host-crashes K] [--cuts K] [--migrations K] [--corruptions K [--corrupt-first] [--no-corrupt-alone]] [--regen] [--lossy]\n"
		"  [--no-dedupe] [--no-anysrc] [--no-order] [--no-forward] [--no-retain] [--no-crashed-data] [--no-dead-stores] [--vote-waits-guessed] [--no-supersede] [--no-promise] [--no-pull-ack] [--joining-no-store] [--reannounce-joining] [--take-second-replica] [--stale-state] [--moved-stays-joining] [--line-not-stale] [--cut-drops-old] [--cut-drops-unsure] [--no-retain-move] [--no-revive-retain] [--late-silent] [--no-skipped-places] [--entry-stale] [--answer-own-slot] [--keep-want] [--no-mismatch-fence] [--no-exit-detect] [--no-repair]\n"
		"  [--no-wire] [--no-fifo] [--no-bias] [--no-shrink]\n"
		"  [--shrink-budget N] [--quiet]\n");
}

bool parse(int argc, char **argv, Opts *o)
{
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
		bool pin = true; // options that shape the run are repeated in reproduce lines

		auto num = [&](uint64_t *out) {
			if (!v)
				return false;
			*out = strtoull(v, nullptr, 0);
			i++;
			return true;
		};
		uint64_t x = 0;

		if (a == "--seeds") {
			pin = false;
			if (!num(&o->seeds))
				return false;
		} else if (a == "--start") {
			pin = false;
			if (!num(&o->start))
				return false;
		} else if (a == "--seed") {
			pin = false;
			o->one = true;
			if (!num(&o->seed))
				return false;
		} else if (a == "--replay" && v) {
			pin = false;
			o->replay = v;
			i++;
		} else if (a == "--scale" && v) {
			pin = false;
			o->scale = v;
			i++;
		} else if (a == "--scale-check" && v) {
			pin = false;
			o->scale = v;
			o->scale_check = true;
			i++;
		} else if (a == "--expect" && v) {
			pin = false;
			o->expect = atoi(v[0] == 'I' ? v + 1 : v);
			i++;
		} else if (a == "--trace") {
			pin = false;
			o->trace = true;
		} else if (a == "--quiet") {
			pin = false;
			o->quiet = true;
		} else if (a == "--no-shrink") {
			pin = false;
			o->no_shrink = true;
		} else if (a == "--keep-going") {
			pin = false;
			o->keep_going = true;
		} else if (a == "--determinism") {
			pin = false;
			o->determinism = true;
		} else if (a == "--shrink-budget") {
			pin = false;
			if (!num(&o->shrink_budget))
				return false;
		} else if (a == "--m" && num(&x)) {
			o->pins.m = (int64_t)x;
		} else if (a == "--n" && num(&x)) {
			o->pins.n = (int64_t)x;
		} else if (a == "--r" && num(&x)) {
			o->pins.r = (int64_t)x;
		} else if (a == "--units" && num(&x)) {
			o->pins.units = (int64_t)x;
		} else if (a == "--crashes" && num(&x)) {
			o->pins.crashes = (int64_t)x;
		} else if (a == "--host-crashes" && num(&x)) {
			o->pins.host_crashes = (int64_t)x;
		} else if (a == "--cuts" && num(&x)) {
			o->pins.cuts = (int64_t)x;
		} else if (a == "--corruptions" && num(&x)) {
			o->pins.corruptions = (int64_t)x;
		} else if (a == "--corrupt-first") {
			o->pins.corrupt_first = true;
		} else if (a == "--no-corrupt-alone") {
			o->pins.no_corrupt_alone = true;
		} else if (a == "--no-exit-detect") {
			o->pins.flags |= JOB_F_TEST_NO_EXIT_DETECT;
		} else if (a == "--no-mismatch-fence") {
			o->pins.flags |= JOB_F_TEST_NO_MISMATCH_FENCE;
		} else if (a == "--migrations" && num(&x)) {
			o->pins.migrations = (int64_t)x;
		} else if (a == "--regen") {
			o->pins.regen = true;
		} else if (a == "--no-repair") {
			o->pins.no_repair = true;
		} else if (a == "--mode" && v) {
			o->pins.mode = !strcmp(v, "vote") ? CMP_VOTE : CMP_FIRST;
			i++;
		} else if (a == "--work" && v) {
			Workload w;

			if (!workload_parse(v, &w))
				return false;
			o->pins.work = (int)w;
			i++;
		} else if (a == "--scale-op" && v) {
			unsigned op = 0, pi = 0, t = 0;
			unsigned long long after = 0;

			if (sscanf(v, "%u,%u,%u,%llu", &op, &pi, &t, &after) != 4)
				return false;
			o->pins.scale_op = (int)op;
			o->pins.scale_pi = pi;
			o->pins.scale_target = t;
			o->pins.scale_after = after;
			i++;
		} else if (a == "--lossy") {
			o->pins.lossy = true;
		} else if (a == "--no-dedupe") {
			o->pins.flags |= JOB_F_TEST_NO_DEDUPE;
		} else if (a == "--no-anysrc") {
			o->pins.flags |= JOB_F_TEST_NO_ANYSRC_PROTOCOL;
		} else if (a == "--no-order") {
			o->pins.flags |= JOB_F_TEST_NO_ORDER;
		} else if (a == "--no-forward") {
			o->pins.flags |= CORE_F_TEST_NO_FORWARD;
		} else if (a == "--no-retain") {
			o->pins.flags |= CORE_F_TEST_NO_RETAIN;
		} else if (a == "--no-crashed-data") {
			o->pins.flags |= CORE_F_TEST_NO_CRASHED_DATA;
		} else if (a == "--no-dead-stores") {
			o->pins.flags |= CORE_F_TEST_NO_DEAD_STORES;
		} else if (a == "--vote-waits-guessed") {
			o->pins.flags |= CORE_F_TEST_VOTE_WAITS_GUESSED;
		} else if (a == "--no-supersede") {
			o->pins.flags |= CORE_F_TEST_NO_SUPERSEDE;
		} else if (a == "--no-promise") {
			o->pins.flags |= CORE_F_TEST_NO_PROMISE;
		} else if (a == "--stale-state") {
			o->pins.test |= CORE_T_STALE_STATE;
		} else if (a == "--moved-stays-joining") {
			o->pins.test |= CORE_T_MOVED_STAYS_JOINING;
		} else if (a == "--line-not-stale") {
			o->pins.test |= CORE_T_LINE_NOT_STALE;
		} else if (a == "--cut-drops-old") {
			o->pins.test |= CORE_T_CUT_DROPS_OLD;
		} else if (a == "--cut-drops-unsure") {
			o->pins.test |= CORE_T_CUT_DROPS_UNSURE;
		} else if (a == "--take-second-replica") {
			o->pins.test |= CORE_T_TAKE_SECOND_REPLICA;
		} else if (a == "--reannounce-joining") {
			o->pins.test |= CORE_T_REANNOUNCE_JOINING;
		} else if (a == "--joining-no-store") {
			o->pins.test |= CORE_T_JOINING_NO_STORE;
		} else if (a == "--no-pull-ack") {
			o->pins.flags |= CORE_F_TEST_NO_PULL_ACK;
		} else if (a == "--no-retain-move") {
			o->pins.flags |= CORE_F_TEST_NO_RETAIN_MOVE;
		} else if (a == "--no-revive-retain") {
			o->pins.flags |= CORE_F_TEST_NO_REVIVE_RETAIN;
		} else if (a == "--keep-want") {
			o->pins.flags |= CORE_F_TEST_KEEP_WANT;
		} else if (a == "--answer-own-slot") {
			o->pins.flags |= CORE_F_TEST_ANSWER_OWN_SLOT;
		} else if (a == "--entry-stale") {
			o->pins.flags |= CORE_F_TEST_ENTRY_STALE;
		} else if (a == "--no-skipped-places") {
			o->pins.flags |= CORE_F_TEST_NO_SKIPPED_PLACES;
		} else if (a == "--late-silent") {
			o->pins.flags |= CORE_F_TEST_LATE_SILENT;
		} else if (a == "--no-wire") {
			o->pins.no_wire = true;
		} else if (a == "--no-fifo") {
			o->pins.no_fifo = true;
		} else if (a == "--no-bias") {
			o->pins.no_bias = true;
		} else {
			return false;
		}
		if (pin) {
			bool flag = a.rfind("--no-", 0) == 0 || a == "--lossy" || a == "--regen" ||
				    a == "--corrupt-first";

			for (int j = i - (flag ? 0 : 1); j <= i; j++) {
				o->pins_text += ' ';
				o->pins_text += argv[j];
			}
		}
	}
	return o->one || o->seeds || !o->scale.empty();
}

void print_result_line(const SimCfg &cfg, const RunResult &r)
{
	printf("seed %" PRIu64 ": %s\n  steps %" PRIu64 ", messages %" PRIu64 ", deliveries %" PRIu64
	       ", ANYSRC decisions %" PRIu64 ", DATA frames %" PRIu64 ", control frames %" PRIu64
	       "\n  run hash %016" PRIx64 "\n",
	       cfg.seed, cfg_describe(cfg).c_str(), r.steps, r.messages, r.deliveries, r.decisions,
	       r.frames.data(), r.frames.control(), r.hash);
}

void print_steps(const SimCfg &cfg, const RunResult &r)
{
	size_t li = 0;

	for (size_t i = 0; i < r.trace.size(); i++) {
		printf("  %4zu %s\n", i + 1, choice_token(r.trace[i], cfg.r).c_str());
		for (; li < r.log.size() && r.log_step[li] == i; li++)
			printf("         %s\n", r.log[li].c_str());
	}
}

// The violation report: seed, invariant, shortest schedule, how to replay.
void report(const Opts &o, const SimCfg &cfg, const RunResult &r)
{
	std::vector<Choice> t = r.trace;
	ShrinkStats st;

	printf("VIOLATION of I%d at seed %" PRIu64 " (%s)\n  %s\n", r.v.inv, cfg.seed,
	       cfg_describe(cfg).c_str(), r.v.what.c_str());
	if (!o.no_shrink) {
		t = shrink(cfg, r.trace, r.v.inv, o.shrink_budget, &st);
		printf("shrunk the schedule from %zu to %zu steps (%" PRIu64 " replays)\n", st.from, st.to,
		       st.replays);
	}
	RunResult s = run_replay(cfg, t, true, true);
	printf("failing schedule (%zu steps), replayed: I%d: %s\n", s.trace.size(), s.v.inv,
	       s.v.what.c_str());
	print_steps(cfg, s);
	printf("reproduce: msgsim --seed %" PRIu64 "%s\n", cfg.seed, o.pins_text.c_str());
	printf("replay the schedule above: msgsim --seed %" PRIu64 "%s --replay '%s'\n", cfg.seed,
	       o.pins_text.c_str(), trace_tokens(s.trace, cfg.r).c_str());
}

int one_seed(const Opts &o)
{
	SimCfg cfg = derive_cfg(o.seed, o.pins);
	RunResult r;

	if (!o.replay.empty()) {
		std::vector<Choice> t;

		if (!trace_parse(o.replay, cfg.r, &t)) {
			fprintf(stderr, "msgsim: bad --replay schedule\n");
			return 2;
		}
		r = run_replay(cfg, t, true, o.trace);
	} else {
		r = run_random(cfg, o.trace);
	}
	if (o.trace)
		print_steps(cfg, r);
	print_result_line(cfg, r);
	if (o.determinism) {
		// the same seed twice, and its recorded schedule replayed: one hash
		RunResult again = o.replay.empty() ? run_random(cfg, false) : r;
		RunResult rep = run_replay(cfg, r.trace, false, false);

		printf("  determinism: rerun %016" PRIx64 ", replay %016" PRIx64 "\n", again.hash, rep.hash);
		if (again.hash != r.hash || rep.hash != r.hash) {
			printf("NOT DETERMINISTIC\n");
			return 1;
		}
	}
	if (r.v.inv >= 0) {
		if (o.expect >= 0 && r.v.inv == o.expect) {
			printf("expected violation I%d found: %s\n", r.v.inv, r.v.what.c_str());
			return 0;
		}
		report(o, cfg, r);
		return 1;
	}
	if (o.expect >= 0) {
		printf("expected a violation of I%d, none found\n", o.expect);
		return 1;
	}
	return 0;
}

int sweep(const Opts &o)
{
	auto t0 = std::chrono::steady_clock::now();
	uint64_t steps = 0, deliveries = 0, msgs = 0, suite = FNV0, done = 0, bad = 0;

	for (uint64_t s = o.start; s < o.start + o.seeds; s++) {
		SimCfg cfg = derive_cfg(s, o.pins);
		RunResult r = run_random(cfg, false);

		done++;
		steps += r.steps;
		deliveries += r.deliveries;
		msgs += r.messages;
		suite = mix64(suite, r.hash);
		if (r.v.inv < 0)
			continue;
		if (o.keep_going) {
			// survey mode: one line per failing seed, no shrinking
			printf("seed %" PRIu64 " I%d: %s [%s]\n", s, r.v.inv, r.v.what.c_str(),
			       cfg_describe(cfg).c_str());
			bad++;
			continue;
		}
		if (o.expect >= 0 && r.v.inv == o.expect) {
			printf("negative control caught: I%d at seed %" PRIu64 " after %" PRIu64 " seeds\n",
			       r.v.inv, s, done);
			report(o, cfg, r);
			return 0;
		}
		report(o, cfg, r);
		return 1;
	}
	double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	if (bad) {
		printf("%" PRIu64 " of %" PRIu64 " seeds from %" PRIu64 " violated an invariant\n", bad, done,
		       o.start);
		return 1;
	}
	printf("%" PRIu64 " seeds from %" PRIu64 ": no violation; %" PRIu64 " steps, %" PRIu64
	       " messages, %" PRIu64 " deliveries; %.1f s, %.0f seeds/s; suite hash %016" PRIx64 "\n",
	       done, o.start, steps, msgs, deliveries, secs, secs > 0 ? (double)done / secs : 0.0, suite);
	if (o.expect >= 0) {
		printf("negative control NOT caught: no violation of I%d in %" PRIu64 " seeds\n", o.expect,
		       done);
		return 1;
	}
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	Opts o;

	if (!parse(argc, argv, &o)) {
		usage();
		return 2;
	}
	setvbuf(stdout, nullptr, _IOLBF, 0);
	if (!o.scale.empty()) {
		std::vector<uint32_t> ns;

		for (const char *p = o.scale.c_str(); *p;) {
			ns.push_back((uint32_t)strtoul(p, const_cast<char **>(&p), 10));
			if (*p == ',')
				p++;
			else if (*p)
				return usage(), 2;
		}
		return (o.scale_check ? scale_check : scale_main)(ns, o.pins.m > 0 ? (uint32_t)o.pins.m : 64,
								  o.pins.r > 0 ? (uint32_t)o.pins.r : 3);
	}
	return o.one ? one_seed(o) : sweep(o);
}
