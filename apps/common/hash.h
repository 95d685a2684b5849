/* Checksums that do not depend on how the data was partitioned: every value
 * is hashed with its global index and the hashes are added mod 2^64, so any
 * split of the data, summed in any order, gives the same 64-bit result. */
#ifndef APPS_HASH_H
#define APPS_HASH_H

#include <stdint.h>
#include <string.h>

static inline uint64_t hash_mix64(uint64_t x)
{
	/* splitmix64 finaliser: a good avalanche for index/value pairs. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* Contribution of value v at global index idx. */
static inline uint64_t hash_point(uint64_t idx, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, sizeof bits);
	return hash_mix64(hash_mix64(idx) ^ bits);
}

#endif
