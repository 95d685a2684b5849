/* Message digests: every receiver hashes each copy it receives itself and
 * compares; a sender's digest is never proof of its own payload (DESIGN §5
 * rule 7). Digests stay inside a daemon: they never travel in a frame.
 *
 * Two algorithms, chosen per job (JOB_F_DIGEST_XXH3, msgrun --digest):
 * SHA-256 through OpenSSL (SHA extensions: ≈1.5 GB/s here), the default, so
 * a forged copy cannot match; XXH3-128 (≈10x faster) for jobs whose faults
 * are accidental only (crashes, bit flips), never a malicious replica.
 * A digest is FRAME_DIGEST_LEN bytes; XXH3's 16 are followed by zeros. */
#ifndef MSG_WIRE_DIGEST_H
#define MSG_WIRE_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "util/mbuf.h"
#include "wire/frame.h"

enum msg_digest_alg { DIGEST_SHA256 = 0, DIGEST_XXH3 = 1 };

static inline enum msg_digest_alg msg_digest_alg_of(uint32_t job_flags)
{
	return (job_flags & JOB_F_DIGEST_XXH3) ? DIGEST_XXH3 : DIGEST_SHA256;
}

/* Digest of one message: its identity (src, dst, seq, tag, size) and
 * payload, so a copy with the right bytes under the wrong header differs. */
void msg_digest(enum msg_digest_alg alg, uint8_t out[FRAME_DIGEST_LEN], uint32_t src,
		uint32_t dst, uint64_t seq, int32_t tag, const void *payload, uint64_t size);

/* The same digest, computed as the payload arrives into m: begin when its
 * header is known, feed what landed, and m->digest is final once all of it
 * has. */
void msg_digest_begin(enum msg_digest_alg alg, struct mbuf *m, uint32_t src, uint32_t dst,
		      uint64_t seq, int32_t tag);
void msg_digest_feed(struct mbuf *m, uint64_t upto);

/* First differing byte offset of two payloads, or -1 when equal. */
int64_t msg_first_diff(const void *a, const void *b, uint64_t size);

#endif
