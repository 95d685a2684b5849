/* One valid frame of every type, with non-trivial field values. Shared by
 * the wire unit tests (round trips, truncations, bit flips) and by the
 * fuzzer's seed-corpus generator, so both cover every frame type. */
#ifndef MSG_TESTS_FRAME_SAMPLES_H
#define MSG_TESTS_FRAME_SAMPLES_H

#include <stddef.h>

#include "wire/frame.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills out[] (cap entries) with one sample frame per frame type, in type
 * order; returns how many. Pointers inside (strings, OUTPUT/STDIN bytes)
 * refer to static storage. */
size_t frame_samples(struct frame *out, size_t cap);

/* Payload bytes that follow a sample's body (DATA, L_SEND, L_DELIVER):
 * a deterministic pattern of frame_payload_len(f) bytes written to buf. */
void frame_sample_payload(const struct frame *f, unsigned char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
