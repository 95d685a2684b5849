// Message digests (runtime/wire/digest.c): both algorithms (SHA-256, the
// default, and XXH3-128 for --digest xxh3) cover header and payload, the
// streaming form equals the one-shot form whatever the feeding, and the
// job flag picks the algorithm.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "wire/digest.h"
}

namespace {

using Dig = std::vector<uint8_t>;

Dig OneShot(msg_digest_alg alg, const std::string &p, uint32_t src = 1, uint32_t dst = 2,
	    uint64_t seq = 3, int32_t tag = 4)
{
	Dig d(FRAME_DIGEST_LEN);
	msg_digest(alg, d.data(), src, dst, seq, tag, p.data(), p.size());
	return d;
}

Dig Streamed(msg_digest_alg alg, const std::string &p, size_t step)
{
	mbuf *m = mbuf_new(p.size());
	EXPECT_NE(m, nullptr);
	memcpy(m->data, p.data(), p.size());
	msg_digest_begin(alg, m, 1, 2, 3, 4);
	for (size_t at = 0; at < p.size(); at += step)
		msg_digest_feed(m, std::min(p.size(), at + step));
	EXPECT_TRUE(m->digested);
	Dig d(m->digest, m->digest + FRAME_DIGEST_LEN);
	mbuf_put(m);
	return d;
}

std::string Payload(size_t n)
{
	std::string s(n, '\0');
	for (size_t i = 0; i < n; i++)
		s[i] = (char)(i * 131 + (i >> 8));
	return s;
}

} // namespace

TEST(Digest, JobFlagPicksAlgorithm)
{
	EXPECT_EQ(msg_digest_alg_of(0), DIGEST_SHA256);
	EXPECT_EQ(msg_digest_alg_of(JOB_F_NO_REGEN), DIGEST_SHA256);
	EXPECT_EQ(msg_digest_alg_of(JOB_F_DIGEST_XXH3), DIGEST_XXH3);
}

TEST(Digest, Sha256KnownValue)
{
	// identity all zeros (src, dst, seq, tag 0; size 0): SHA-256 of 28 zero bytes
	Dig d = OneShot(DIGEST_SHA256, "", 0, 0, 0, 0);
	const uint8_t want[8] = { 0x3a, 0xdd, 0xfb, 0x14, 0x1c, 0xd7, 0xc9, 0xc4 };
	EXPECT_EQ(memcmp(d.data(), want, sizeof(want)), 0);
	// repeatable: the reused context leaves nothing behind
	EXPECT_EQ(OneShot(DIGEST_SHA256, "abc"), OneShot(DIGEST_SHA256, "abc"));
}

TEST(Digest, Xxh3IsSixteenBytesThenZeros)
{
	Dig d = OneShot(DIGEST_XXH3, Payload(100));
	EXPECT_EQ(Dig(d.begin() + 16, d.end()), Dig(FRAME_DIGEST_LEN - 16, 0));
	EXPECT_NE(Dig(d.begin(), d.begin() + 16), Dig(16, 0));
}

TEST(Digest, AlgorithmsDiffer)
{
	EXPECT_NE(OneShot(DIGEST_SHA256, "abc"), OneShot(DIGEST_XXH3, "abc"));
}

TEST(Digest, HeaderAndPayloadCovered)
{
	for (msg_digest_alg alg : { DIGEST_SHA256, DIGEST_XXH3 }) {
		std::string p = Payload(5000), q = p;
		q[4321] ^= 0x10; // one bit
		Dig base = OneShot(alg, p);
		EXPECT_NE(base, OneShot(alg, q)) << alg;
		EXPECT_NE(base, OneShot(alg, p.substr(0, 4999))) << alg;
		EXPECT_NE(base, OneShot(alg, p, 9, 2, 3, 4)) << alg;
		EXPECT_NE(base, OneShot(alg, p, 1, 9, 3, 4)) << alg;
		EXPECT_NE(base, OneShot(alg, p, 1, 2, 9, 4)) << alg;
		EXPECT_NE(base, OneShot(alg, p, 1, 2, 3, 9)) << alg;
		EXPECT_EQ(base, OneShot(alg, p)) << alg;
	}
}

TEST(Digest, StreamedEqualsOneShot)
{
	for (msg_digest_alg alg : { DIGEST_SHA256, DIGEST_XXH3 })
		for (size_t n : { (size_t)0, (size_t)1, (size_t)240, (size_t)4096, (size_t)70000 })
			for (size_t step : { (size_t)1000, (size_t)65536, (size_t)1 << 20 }) {
				if (n > 5000 && step < 4096)
					continue;
				EXPECT_EQ(Streamed(alg, Payload(n), step), OneShot(alg, Payload(n)))
					<< "alg " << alg << " size " << n << " step " << step;
			}
}
