// The workloads. Static ones (ring, all-to-all, DAG) are per-rank scripts;
// manager–worker reacts to what it receives (which worker answered decides
// who gets the next task), the pattern that makes MSG_ANYSRC matter.
//
// Why none can deadlock (sends never block in the core's model):
// - Scripts come from one global list of events (send e, then its receive),
//   and each rank's script follows that list's order. Take the earliest
//   receive still blocked: every operation before it in the list finished,
//   so its message was sent. A receive naming (src, tag) gets exactly its
//   message, because earlier messages of that channel with that tag were
//   consumed by earlier receives of the same rank.
// - ANYSRC receives use tags of their own ("ANYSRC class", >= ANY_TAG0)
//   that no named receive asks for, and the k-th ANYSRC receive of tag T at a
//   rank happens after k messages of tag T to it were sent: one is always
//   there, whichever ones earlier ANYSRC receives took.
// - A named MSG_ANYTAG receive would also match an ANYSRC-class message of
//   its channel that an ANYSRC receive has not taken yet; so a channel
//   carries either ANYTAG receives or ANYSRC-class messages, never both
//   (the all-to-all phases make that safe by counting, see there).
// - Manager–worker: the manager answers every result with a task or STOP,
//   workers answer every task; the manager ends when all results are in.
#include "workload.h"

#include <algorithm>

#include "msg.h"

namespace sim {

namespace {

constexpr int32_t ANY_TAG0 = 100;   // ANYSRC-class tags
constexpr int32_t TAG_TASK = 1, TAG_RESULT = 2, TAG_STOP = 3;

class Script : public Program {
public:
	explicit Script(std::shared_ptr<const std::vector<Op>> ops) : ops_(std::move(ops)) {}
	Op next(const RecvRes *) override { return pc_ < ops_->size() ? (*ops_)[pc_++] : Op{}; }
	std::unique_ptr<Program> clone() const override { return std::make_unique<Script>(*this); }

private:
	std::shared_ptr<const std::vector<Op>> ops_;
	size_t pc_ = 0;
};

uint64_t msg_size(Rng &g)
{
	uint64_t k = g.below(16);

	if (k == 0)
		return 0;                 // empty messages have no payload bytes at all
	if (k < 12)
		return g.range(1, 48);
	if (k < 15)
		return g.range(49, 1500);
	return g.range(1501, 70000);      // bigger than a typical receive buffer
}

// Receive buffer for a message of `size`: usually large enough; sometimes too
// small, so MSG_ETRUNC (which must not lose the message) is exercised.
uint64_t buf_for(Rng &g, uint64_t size)
{
	if (size && g.chance(1, 10))
		return g.below(size);
	return g.chance(1, 2) ? size : size + g.below(4096);
}

Op send_op(uint32_t dst, int32_t tag, uint64_t size)
{
	Op o;

	o.kind = Op::SEND;
	o.dst = dst;
	o.tag = tag;
	o.size = size;
	return o;
}

Op recv_op(int32_t src, int32_t tag, uint64_t buf)
{
	Op o;

	o.kind = Op::RECV;
	o.src = src;
	o.tag = tag;
	o.size = buf;
	return o;
}

struct Builder {
	const SimCfg &cfg;
	Rng g;
	std::vector<std::vector<Op>> ops;
	Job job;

	Builder(const SimCfg &c, Rng rng) : cfg(c), g(rng), ops(c.n) { job.uses_anysrc.assign(c.n, false); }

	Job finish()
	{
		for (auto &v : ops)
			job.prog.push_back(std::make_unique<Script>(
				std::make_shared<const std::vector<Op>>(std::move(v))));
		return std::move(job);
	}
};

// Token ring: rank 0 starts each round, every rank forwards to the next.
Job ring(Builder &b)
{
	uint32_t n = b.cfg.n, rounds = (uint32_t)b.g.range(2, 6) * b.cfg.size_units;

	for (uint32_t k = 0; k < rounds; k++) {
		int32_t tag = (int32_t)b.g.below(3);
		bool anytag = b.g.chance(1, 3);

		for (uint32_t i = 0; i < n; i++) {
			uint32_t to = (i + 1) % n;
			uint64_t size = msg_size(b.g);

			// rank 0 sends first; the others forward what they got
			if (i == 0) {
				b.ops[0].push_back(send_op(to, tag, size));
			} else {
				b.ops[i].push_back(recv_op((int32_t)(i - 1), anytag ? MSG_ANYTAG : tag,
							   buf_for(b.g, size)));
				b.ops[i].push_back(send_op(to, tag, size));
			}
		}
		b.ops[0].push_back(recv_op((int32_t)(n - 1), anytag ? MSG_ANYTAG : tag, 1u << 20));
	}
	return b.finish();
}

// Phases of all-to-all exchange. In an ANYSRC phase every rank receives its
// n-1 messages with MSG_ANYSRC under the phase's own tag: the count of that
// tag's receives equals the count of its messages, so the phase consumes all
// of them before the rank's next phase, and a later ANYTAG receive never
// sees a leftover ANYSRC-class message.
Job alltoall(Builder &b)
{
	uint32_t n = b.cfg.n, phases = (uint32_t)b.g.range(1, 3) * b.cfg.size_units;

	for (uint32_t p = 0; p < phases; p++) {
		bool any = b.g.chance(1, 2);
		int32_t tag = any ? ANY_TAG0 + (int32_t)p : (int32_t)b.g.below(4);
		std::vector<uint64_t> size((size_t)n * n);

		for (auto &s : size)
			s = msg_size(b.g);
		for (uint32_t i = 0; i < n; i++) {
			std::vector<uint32_t> order;

			for (uint32_t j = 0; j < n; j++)
				if (j != i)
					order.push_back(j);
			for (size_t k = order.size(); k > 1; k--)
				std::swap(order[k - 1], order[b.g.below(k)]);
			for (uint32_t j : order)
				b.ops[i].push_back(send_op(j, tag, size[(size_t)i * n + j]));
		}
		for (uint32_t i = 0; i < n; i++) {
			std::vector<uint32_t> order;

			for (uint32_t j = 0; j < n; j++)
				if (j != i)
					order.push_back(j);
			for (size_t k = order.size(); k > 1; k--)
				std::swap(order[k - 1], order[b.g.below(k)]);
			for (uint32_t j : order) {
				if (any) {
					b.ops[i].push_back(recv_op(MSG_ANYSRC, tag, 1u << 17));
					b.job.uses_anysrc[i] = true;
				} else {
					b.ops[i].push_back(recv_op((int32_t)j,
						b.g.chance(1, 3) ? MSG_ANYTAG : tag,
						buf_for(b.g, size[(size_t)j * n + i])));
				}
			}
		}
	}
	return b.finish();
}

// A random DAG of sends with matching receives (see the top of the file).
Job dag(Builder &b)
{
	uint32_t n = b.cfg.n, events = (uint32_t)b.g.range(8, 40) * b.cfg.size_units;
	// per channel: 1 = carries ANYTAG receives, 2 = carries ANYSRC-class messages
	std::vector<uint8_t> use((size_t)n * n, 0);

	for (uint32_t e = 0; e < events; e++) {
		uint32_t s = (uint32_t)b.g.below(n), d = (uint32_t)b.g.below(n);
		uint64_t size = msg_size(b.g), k = b.g.below(10);

		if (d == s && !b.g.chance(1, 8))
			d = (s + 1) % n; // self-sends are legal but should stay rare
		uint8_t &u = use[(size_t)s * n + d];
		if (k < 3 && u != 1 && d != s) {
			int32_t tag = ANY_TAG0 + (int32_t)b.g.below(2);

			u = 2;
			b.ops[s].push_back(send_op(d, tag, size));
			b.ops[d].push_back(recv_op(MSG_ANYSRC, tag, b.g.chance(1, 6) ? b.g.below(64) : 1u << 17));
			b.job.uses_anysrc[d] = true;
		} else if (k < 5 && u != 2) {
			u = 1;
			b.ops[s].push_back(send_op(d, (int32_t)b.g.below(4), size));
			b.ops[d].push_back(recv_op((int32_t)s, MSG_ANYTAG, buf_for(b.g, size)));
		} else {
			int32_t tag = (int32_t)b.g.below(4);

			b.ops[s].push_back(send_op(d, tag, size));
			b.ops[d].push_back(recv_op((int32_t)s, tag, buf_for(b.g, size)));
		}
	}
	return b.finish();
}

class Manager : public Program {
public:
	Manager(uint32_t n, uint32_t tasks, bool anytag, uint64_t seed)
		: n_(n), tasks_(tasks), anytag_(anytag), seed_(seed) {}

	Op next(const RecvRes *last) override
	{
		// first, one task (or STOP, when there are fewer tasks) per worker
		if (boot_ < n_ - 1) {
			uint32_t w = ++boot_;

			return give(w);
		}
		if (last && !pending_stop_) {
			results_++;
			pending_stop_ = true;
			return give(last->src);
		}
		pending_stop_ = false;
		if (results_ == tasks_)
			return Op{};
		return recv_op(MSG_ANYSRC, anytag_ ? MSG_ANYTAG : TAG_RESULT, 1u << 17);
	}
	std::unique_ptr<Program> clone() const override { return std::make_unique<Manager>(*this); }

private:
	Op give(uint32_t w)
	{
		if (sent_ < tasks_) {
			sent_++;
			// sizes vary with the task so workers' results differ in size
			return send_op(w, TAG_TASK, mix64(seed_, sent_) % 300);
		}
		return send_op(w, TAG_STOP, 0);
	}

	uint32_t n_, tasks_;
	bool anytag_;
	uint64_t seed_;
	uint32_t boot_ = 0, sent_ = 0, results_ = 0;
	bool pending_stop_ = false;
};

class Worker : public Program {
public:
	explicit Worker(uint64_t seed) : seed_(seed) {}

	Op next(const RecvRes *last) override
	{
		if (!last)
			return recv_op(0, MSG_ANYTAG, 1u << 17);
		if (last->tag == TAG_STOP)
			return Op{};
		// the result's size depends on the task: replicas agree only if
		// they got the same task
		return send_op(0, TAG_RESULT, mix64(seed_, last->digest) % 200);
	}
	std::unique_ptr<Program> clone() const override { return std::make_unique<Worker>(*this); }

private:
	uint64_t seed_;
};

Job mgrwork(Builder &b)
{
	uint32_t n = b.cfg.n, tasks = (uint32_t)b.g.range(n, 4 * n) * b.cfg.size_units;
	uint64_t seed = b.g.next();
	Job j;

	if (n < 2)
		return ring(b);
	j.uses_anysrc.assign(n, false);
	j.uses_anysrc[0] = true;
	j.prog.push_back(std::make_unique<Manager>(n, tasks, b.g.chance(1, 2), seed));
	for (uint32_t i = 1; i < n; i++)
		j.prog.push_back(std::make_unique<Worker>(seed + i));
	return j;
}

} // namespace

Job make_job(const SimCfg &cfg)
{
	Builder b(cfg, Rng(cfg.seed).fork(2));

	switch (cfg.work) {
	case Workload::RING:
		return ring(b);
	case Workload::ALLTOALL:
		return alltoall(b);
	case Workload::MGRWORK:
		return mgrwork(b);
	default:
		return dag(b);
	}
}

} // namespace sim
