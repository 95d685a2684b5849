/* Message digests: every receiver hashes each copy it receives itself and
 * compares; a sender's digest is never proof of its own payload (DESIGN §5
 * rule 7). SHA-256 through OpenSSL (SHA extensions: ≈1.5 GB/s here) so a
 * forged copy cannot match. */
#ifndef MSG_WIRE_DIGEST_H
#define MSG_WIRE_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "util/mbuf.h"
#include "wire/frame.h"

/* Digest of one message: its identity (src, dst, seq, tag, size) and
 * payload, so a copy with the right bytes under the wrong header differs. */
void msg_digest(uint8_t out[FRAME_DIGEST_LEN], uint32_t src, uint32_t dst, uint64_t seq,
		int32_t tag, const void *payload, uint64_t size);

/* The same digest, computed as the payload arrives into m: begin when its
 * header is known, feed what landed, and m->digest is final once all of it
 * has. */
void msg_digest_begin(struct mbuf *m, uint32_t src, uint32_t dst, uint64_t seq, int32_t tag);
void msg_digest_feed(struct mbuf *m, uint64_t upto);

/* First differing byte offset of two payloads, or -1 when equal. */
int64_t msg_first_diff(const void *a, const void *b, uint64_t size);

#endif
