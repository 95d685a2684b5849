// Deterministic randomness and hashing for the simulator.
//
// Everything random in a run comes from one seed through these functions, and
// nothing here depends on the platform's <random> (whose distributions are
// implementation-defined), so a seed reproduces the same run bit for bit on
// any machine and compiler.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sim {

// SplitMix64: tiny state, good enough statistics for choosing schedules.
struct Rng {
	uint64_t s;

	explicit Rng(uint64_t seed) : s(seed ^ 0x9e3779b97f4a7c15ull) {}

	uint64_t next()
	{
		uint64_t z = (s += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		return z ^ (z >> 31);
	}
	// Uniform in [0, n); n > 0. Multiply-shift: no modulo bias worth caring
	// about at these sizes, and no rejection loop (bounded work per call).
	uint64_t below(uint64_t n) { return (uint64_t)(((__uint128_t)next() * n) >> 64); }
	uint64_t range(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }
	// True with probability num/den.
	bool chance(uint64_t num, uint64_t den) { return below(den) < num; }
	// An independent stream for one purpose (workload, scheduler, ...), so
	// changing how one consumes randomness does not shift the others.
	Rng fork(uint64_t salt) { return Rng(next() ^ (salt * 0xd6e8feb86659fd93ull)); }
};

inline uint64_t mix64(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

// FNV-1a over bytes: the run hash and payload digests of the checker.
inline uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

constexpr uint64_t FNV0 = 0xcbf29ce484222325ull;

} // namespace sim
