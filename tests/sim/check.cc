// Invariant checks (see check.h for the list). The first violation wins: the
// run stops there, and shrinking looks for the shortest schedule that still
// violates the same invariant.
#include "check.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "msg.h"
#include "world.h"

namespace sim {

Checker::Checker(uint32_t n, uint32_t r)
    : n_(n), r_(r), log_((size_t)n * r), canon_(n), tainted_((size_t)n * r),
      sent_bad_((size_t)n * r), consumed_bad_((size_t)n * r), must_fence_((size_t)n * r),
      ate_bad_((size_t)n * r), judged_((size_t)n * r), beyond_g_(n)
{
}

int Checker::content_class(uint32_t src, uint32_t dst, uint64_t seq, int32_t tag, uint64_t size,
			   uint64_t digest) const
{
	const Rec *x = rec(src, dst, seq);

	if (x && x->tag == tag && x->size == size && x->digest == digest)
		return 1;
	return bad_content(src, dst, seq, tag, size, digest) ? 2 : 0;
}

void Checker::outvoted(uint32_t src, uint32_t bad_reps, uint32_t dst, uint32_t dk, uint64_t seq)
{
	std::pair<uint64_t, uint64_t> key{ (uint64_t)src * n_ + dst, seq };
	size_t d = (size_t)dst * r_ + dk;

	for (uint32_t k = 0; k < r_; k++)
		if ((bad_reps & (1u << k)) && sent_bad_[(size_t)src * r_ + k])
			must_fence_[(size_t)src * r_ + k] = true;
	judged_[d].insert(key);
	if (ate_bad_[d].count(key))
		must_fence_[d] = true;
}

bool Checker::bad_content(uint32_t src, uint32_t dst, uint64_t seq, int32_t tag, uint64_t size,
			  uint64_t digest) const
{
	auto it = bad_.find({ (uint64_t)src * n_ + dst, seq });

	if (it == bad_.end())
		return false;
	for (const Rec &x : it->second)
		if (x.tag == tag && x.size == size && x.digest == digest && !x.tentative)
			return true;
	return false;
}

bool Checker::tentative_content(uint32_t src, uint32_t dst, uint64_t seq, int32_t tag,
				uint64_t size, uint64_t digest) const
{
	auto it = bad_.find({ (uint64_t)src * n_ + dst, seq });

	if (it == bad_.end())
		return false;
	for (const Rec &x : it->second)
		if (x.tag == tag && x.size == size && x.digest == digest && x.tentative)
			return true;
	return false;
}

std::string Checker::doom_reason(uint32_t g, uint32_t k) const
{
	size_t i = (size_t)g * r_ + k;

	return std::string(sent_bad_[i] ? "sent a corrupt copy" : "") +
	       (sent_bad_[i] && tainted_[i] ? ", " : "") +
	       (consumed_bad_[i] ? "consumed a corrupt copy" : tainted_[i] ? "was corrupted" : "");
}

void Checker::Got::add(uint64_t s)
{
	above.insert(s);
	while (!above.empty() && *above.begin() == low + 1) {
		above.erase(above.begin());
		low++;
	}
}

void Checker::fail(int inv, const std::string &what)
{
	if (v_.inv < 0) {
		v_.inv = inv;
		v_.what = what;
	}
}

const Checker::Rec *Checker::rec(uint32_t src, uint32_t dst, uint64_t seq) const
{
	auto it = sent_.find((uint64_t)src * n_ + dst);

	if (it == sent_.end() || seq == 0 || seq > it->second.size() || !it->second[seq - 1].set)
		return nullptr;
	return &it->second[seq - 1];
}

std::string Checker::ent_str(const LogEnt &e)
{
	char b[160];

	snprintf(b, sizeof(b), "%s%s from %u tag %d seq %" PRIu64 " size %" PRIu64 " digest %016" PRIx64,
		 e.trunc ? "TRUNC" : "msg", e.anysrc ? " (ANYSRC)" : "", e.src, e.tag, e.seq, e.size,
		 e.digest);
	return b;
}

void Checker::on_send(uint32_t g, uint32_t k, uint32_t dst, uint64_t seq, int32_t tag,
		      uint64_t size, uint64_t digest, bool bad)
{
	auto &v = sent_[(uint64_t)g * n_ + dst];
	char b[256];

	if (v.size() < seq)
		v.resize(seq);
	Rec &x = v[seq - 1];
	if (bad) {
		// what a sound replica sends is the reference; a corrupt copy
		// equal to it (an empty message: nothing to flip) is no fault
		if (x.set && x.tag == tag && x.size == size && x.digest == digest)
			return;
		// an empty message has no bytes to be wrong: until the sound
		// content is known it may be that very content
		bool maybe = !x.set && size == 0;

		bad_[{ (uint64_t)g * n_ + dst, seq }].push_back(
			Rec{ true, tag, size, digest, maybe ? (uint32_t)(g * r_ + k + 1) : 0 });
		if (!maybe) {
			sent_bad_[(size_t)g * r_ + k] = true;
			count_wrong(g);
		}
		return;
	}
	if (!x.set) {
		x.set = true;
		x.tag = tag;
		x.size = size;
		x.digest = digest;
		auto it = bad_.find({ (uint64_t)g * n_ + dst, seq });
		if (it == bad_.end())
			return;
		auto &vv = it->second;
		for (size_t i = 0; i < vv.size();) {
			if (!vv[i].tentative) {
				i++;
			} else if (vv[i].tag == tag && vv[i].size == size && vv[i].digest == digest) {
				vv.erase(vv.begin() + (long)i);
			} else {
				sent_bad_[vv[i].tentative - 1] = true;
				count_wrong((vv[i].tentative - 1) / r_);
				vv[i++].tentative = 0;
			}
		}
		if (vv.empty())
			bad_.erase(it);
		return;
	}
	// Replicas are deterministic: a different message under the same
	// (channel, seq) means two copies of g have diverged (I4).
	if (x.tag != tag || x.size != size || x.digest != digest) {
		snprintf(b, sizeof(b),
			 "I4 divergent copies: replica %u.%u sent %u->%u seq %" PRIu64
			 " as tag %d size %" PRIu64 ", a sibling sent tag %d size %" PRIu64,
			 g, k, g, dst, seq, tag, size, x.tag, x.size);
		fail(4, b);
	}
}

void Checker::log_append(uint32_t g, uint32_t k, const LogEnt &e)
{
	auto &mine = log_[(size_t)g * r_ + k];
	auto &canon = canon_[g];
	size_t i = mine.size();
	char b[512];

	mine.push_back(e);
	if (tainted_[(size_t)g * r_ + k])
		return; // a wrong state receives what it likes: it is to be fenced (I4)
	if (i == canon.size()) {
		canon.push_back(e);
		return;
	}
	if (!(canon[i] == e)) {
		snprintf(b, sizeof(b),
			 "I3 replicas of group %u diverge at receive #%zu: replica %u.%u got %s, "
			 "a sibling got %s",
			 g, i + 1, g, k, ent_str(e).c_str(), ent_str(canon[i]).c_str());
		fail(3, b);
	}
}

void Checker::on_deliver(uint32_t g, uint32_t k, const Op &want, const RecvRes &res)
{
	const Rec *x = rec(res.src, g, res.seq);
	Got &got = got_[((uint64_t)g * r_ + k) * n_ + res.src];
	char b[512];

	deliveries_++;
	if ((want.src != MSG_ANYSRC && (uint32_t)want.src != res.src) ||
	    (want.tag != MSG_ANYTAG && want.tag != res.tag) || res.size > want.size) {
		snprintf(b, sizeof(b),
			 "I0 replica %u.%u: receive(src %d, tag %d, buf %" PRIu64 ") answered with "
			 "%u->%u seq %" PRIu64 " tag %d size %" PRIu64,
			 g, k, want.src, want.tag, want.size, res.src, g, res.seq, res.tag, res.size);
		fail(0, b);
	}
	bool sound = x && x->tag == res.tag && x->size == res.size && x->digest == res.digest;

	if (!sound && bad_content(res.src, g, res.seq, res.tag, res.size, res.digest)) {
		// a corrupt copy was consumed: in mode vote never (r >= 3 live
		// sender replicas: it has no majority); in mode first the
		// receiver is now wrong itself and is to be fenced (rule 7)
		if (mode_ == CMP_VOTE) {
			snprintf(b, sizeof(b),
				 "I4 mode vote: replica %u.%u consumed %u->%u seq %" PRIu64
				 ", a corrupt copy its live siblings outvote", g, k, res.src, g, res.seq);
			fail(4, b);
		}
		size_t i = (size_t)g * r_ + k;
		std::pair<uint64_t, uint64_t> key{ (uint64_t)res.src * n_ + g, res.seq };

		tainted_[i] = true;
		consumed_bad_[i] = true;
		ate_bad_[i].insert(key);
		if (judged_[i].count(key))
			must_fence_[i] = true;
		count_wrong(g);
	} else if (!sound && !tentative_content(res.src, g, res.seq, res.tag, res.size, res.digest)) {
		snprintf(b, sizeof(b),
			 "I0 replica %u.%u got %u->%u seq %" PRIu64 " tag %d size %" PRIu64
			 " that no replica of %u sent with that content",
			 g, k, res.src, g, res.seq, res.tag, res.size, res.src);
		fail(0, b);
	}
	if (got.has(res.seq)) {
		snprintf(b, sizeof(b), "I1 exactly-once: replica %u.%u got %u->%u seq %" PRIu64 " twice",
			 g, k, res.src, g, res.seq);
		fail(1, b);
	} else {
		// non-overtaking: every earlier message of the channel that this
		// receive also matches must have been consumed already (a wrong
		// state may post other receives than its siblings')
		for (uint64_t s = got.low + 1; s < res.seq && !tainted_[(size_t)g * r_ + k]; s++) {
			const Rec *y = rec(res.src, g, s);

			if (y && !got.has(s) && (want.tag == MSG_ANYTAG || y->tag == want.tag)) {
				snprintf(b, sizeof(b),
					 "I2 order: replica %u.%u got %u->%u seq %" PRIu64
					 " before seq %" PRIu64 " (tag %d), which its receive "
					 "(tag %d) also matches",
					 g, k, res.src, g, res.seq, s, y->tag, want.tag);
				fail(2, b);
				break;
			}
		}
		got.add(res.seq);
	}
	log_append(g, k, LogEnt{ false, want.src == MSG_ANYSRC, res.src, res.tag, res.seq, res.size,
				 res.digest });
}

CheckerFork Checker::fork(uint32_t g, uint32_t k) const
{
	CheckerFork f;

	f.g = g;
	f.k = k;
	f.tainted = tainted_[(size_t)g * r_ + k];
	f.log_len = log_[(size_t)g * r_ + k].size();
	for (uint32_t src = 0; src < n_; src++) {
		auto it = got_.find(((uint64_t)g * r_ + k) * n_ + src);

		if (it != got_.end())
			f.got.push_back({ src, { it->second.low, it->second.above } });
	}
	return f;
}

// Mode first: a majority of group g is wrong — consumed a corrupt copy, or
// was corrupted itself (its state, or a copy it sent). r = 3 masks one
// arbitrary fault per group; two wrong replicas (a corrupted one and a
// consumer of another group's corrupt copy, seed 62) leave no majority
// to outvote either: beyond masking, as a majority of consumers is.
void Checker::count_wrong(uint32_t g)
{
	uint32_t wrong = 0;

	for (uint32_t j = 0; j < r_; j++) {
		size_t i = (size_t)g * r_ + j;

		wrong += consumed_bad_[i] || tainted_[i] || sent_bad_[i];
	}
	if (wrong * 2 > r_ && mode_ != CMP_VOTE)
		beyond_ = beyond_g_[g] = true;
}

void Checker::install(uint32_t g, uint32_t to, const CheckerFork &f)
{
	auto &from = log_[(size_t)f.g * r_ + f.k];

	log_[(size_t)g * r_ + to].assign(from.begin(), from.begin() + (long)f.log_len);
	// a copy is a new incarnation: it sent nothing yet, but a wrong state
	// copies as wrong (a move keeps what the replica did)
	tainted_[(size_t)g * r_ + to] = f.tainted || (f.k == to && tainted_[(size_t)g * r_ + to]);
	if (f.k != to) {
		sent_bad_[(size_t)g * r_ + to] = false;
		consumed_bad_[(size_t)g * r_ + to] = false;
		must_fence_[(size_t)g * r_ + to] = false;
		ate_bad_[(size_t)g * r_ + to].clear();
		judged_[(size_t)g * r_ + to].clear();
	}
	for (uint32_t src = 0; src < n_; src++)
		got_.erase(((uint64_t)g * r_ + to) * n_ + src);
	for (const auto &x : f.got) {
		Got &gt = got_[((uint64_t)g * r_ + to) * n_ + x.first];

		gt.low = x.second.first;
		gt.above = x.second.second;
	}
}

uint64_t Checker::logical_messages() const
{
	uint64_t s = 0;

	for (const auto &kv : sent_)
		s += kv.second.size();
	return s;
}

void Checker::on_trunc(uint32_t g, uint32_t k, const Op &want, uint32_t src, int32_t tag,
		       uint64_t size)
{
	char b[256];

	if ((want.src != MSG_ANYSRC && (uint32_t)want.src != src) ||
	    (want.tag != MSG_ANYTAG && want.tag != tag) || size <= want.size) {
		snprintf(b, sizeof(b),
			 "I0 replica %u.%u: receive(src %d, tag %d, buf %" PRIu64 ") answered "
			 "MSG_ETRUNC for a message from %u tag %d size %" PRIu64,
			 g, k, want.src, want.tag, want.size, src, tag, size);
		fail(0, b);
	}
	log_append(g, k, LogEnt{ true, want.src == MSG_ANYSRC, src, tag, 0, size, 0 });
}

void Checker::on_event(uint32_t host, const char *text)
{
	char b[320];

	// A digest mismatch must be one the simulator injected: a corrupt
	// copy of that very (channel, seq); any other means two sound copies
	// of a sender diverged (I4). Fences for a mismatch follow one; the
	// end-of-run views judge whom they hit. Two decisions for one ANYSRC
	// index mean replicas may consume differently (I3).
	unsigned src = 0, dst = 0;
	unsigned long long seq = 0;
	const char *p = strstr(text, "\"src\":");

	if (strstr(text, "\"event\":\"group-lost\""))
		group_lost_ = true;

	if (strstr(text, "\"event\":\"mismatch\"") && p &&
	    sscanf(p, "\"src\":%u,\"dst\":%u,\"seq\":%llu", &src, &dst, &seq) == 3 &&
	    bad_.count({ (uint64_t)src * n_ + dst, seq })) {
		return;
	}
	if (strstr(text, "mismatch") && !strstr(text, "\"event\":\"mismatch\"") && !bad_.empty())
		return;
	if (strstr(text, "mismatch")) {
		snprintf(b, sizeof(b), "I4 divergent copies: daemon %u reported: %s", host, text);
		fail(4, b);
	} else if (strstr(text, "conflicting") &&
		   !((p = strstr(text, "\"group\":")) && sscanf(p, "\"group\":%u", &src) == 1 &&
		     src < n_ && beyond_g_[src])) {
		// (a group a majority of whose replicas are wrong, mode first:
		// its wrong replicas lead and store decisions too, and each of
		// two coordinators may fence the other's; I3 is judged among its
		// sound replicas by their receives, log_append)
		snprintf(b, sizeof(b), "I3 conflicting ANYSRC decisions: daemon %u reported: %s", host,
			 text);
		fail(3, b);
	}
}

void Checker::at_quiescence(const std::vector<Proc> &procs)
{
	std::vector<uint64_t> chans;
	char b[320];

	std::string stuck;
	int nstuck = 0;

	// a wrong replica that still runs was never fenced (I4): say so rather
	// than that it is stuck (it may wait for what its siblings never send)
	for (const Proc &p : procs)
		if (must_fence(p.g, p.k) && p.st != Proc::CRASHED && p.st != Proc::DONE) {
			snprintf(b, sizeof(b), "I4 replica %u.%u %s and still runs at the end: never fenced",
				 p.g, p.k, doom_reason(p.g, p.k).c_str());
			fail(4, b);
			return;
		}

	// mode first: a group whose every replica crashed (a fault, not a
	// fence) or is wrong — its last sound ones crashed, then the survivor
	// consumed a corrupt copy and was fenced (7298, 8138) — has more than
	// r - 1 faults: its loss (a group-lost event; msgrun ends the job) is
	// beyond masking, as a wrong majority is
	for (uint32_t g = 0; g < n_ && mode_ != CMP_VOTE && group_lost_; g++) {
		uint32_t faulty = 0, wrong = 0;

		for (const Proc &p : procs) {
			size_t i = (size_t)p.g * r_ + p.k;
			bool bad = consumed_bad_[i] || tainted_[i] || sent_bad_[i];

			if (p.g != g)
				continue;
			wrong += bad;
			faulty += bad || (p.st == Proc::CRASHED && !p.fenced);
		}
		if (wrong && faulty == r_)
			beyond_ = beyond_g_[g] = true;
	}

	// every replica that is neither done nor gone, so the report shows the
	// whole chain of waits, not just its first link
	for (const Proc &p : procs) {
		if (p.st == Proc::CRASHED || p.st == Proc::DONE)
			continue;
		if (nstuck++ >= 8)
			continue;
		if (p.st == Proc::BLOCKED)
			snprintf(b, sizeof(b), "%s%u.%u in receive(src %d, tag %d) after %zu receives",
				 stuck.empty() ? "" : "; ", p.g, p.k, p.want.src, p.want.tag,
				 log_[(size_t)p.g * r_ + p.k].size());
		else
			snprintf(b, sizeof(b), "%s%u.%u never ran to its end", stuck.empty() ? "" : "; ", p.g,
				 p.k);
		stuck += b;
	}
	if (beyond_)
		return;
	if (nstuck) {
		fail(6, "I6 stuck (" + std::to_string(nstuck) + " replicas): " + stuck);
		return;
	}
	for (uint32_t g = 0; g < n_; g++) {
		bool any = false;

		for (uint32_t k = 0; k < r_; k++)
			any |= procs[(size_t)g * r_ + k].st == Proc::DONE;
		if (!any) {
			fail(6, "I6 group " + std::to_string(g) + " lost: no replica of it finished");
			return;
		}
	}
	for (auto &kv : sent_)
		chans.push_back(kv.first);
	std::sort(chans.begin(), chans.end()); // deterministic report order
	for (const Proc &p : procs) {
		if (p.st != Proc::DONE || tainted_[(size_t)p.g * r_ + p.k])
			continue;
		if (log_[(size_t)p.g * r_ + p.k].size() != canon_[p.g].size()) {
			snprintf(b, sizeof(b), "I3 replica %u.%u finished after %zu receives, a sibling after %zu",
				 p.g, p.k, log_[(size_t)p.g * r_ + p.k].size(), canon_[p.g].size());
			fail(3, b);
			return;
		}
		for (uint64_t key : chans) {
			uint32_t src = (uint32_t)(key / n_), dst = (uint32_t)(key % n_);
			const auto &v = sent_[key];
			auto it = got_.find(((uint64_t)p.g * r_ + p.k) * n_ + src);
			uint64_t have = it == got_.end() ? 0 : it->second.count();

			if (dst != p.g || have == v.size())
				continue;
			for (uint64_t s = 1; s <= v.size(); s++)
				if (v[s - 1].set && (it == got_.end() || !it->second.has(s))) {
					snprintf(b, sizeof(b),
						 "I6 lost: replica %u.%u finished without %u->%u seq %" PRIu64,
						 p.g, p.k, src, dst, s);
					fail(6, b);
					return;
				}
		}
	}
}

} // namespace sim
