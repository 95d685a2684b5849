/* libFuzzer target: the frame parser (runtime/wire/frame.c). The input is a
 * byte stream of frames, parsed as a receiver does: header, then a body of
 * exactly h.len bytes in its own allocation (so ASan sees any over-read),
 * then the trailing payload skipped. A frame that decodes must re-encode to
 * the very same body bytes (one layout function per type: encoder and
 * decoder cannot disagree), and decode again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/frame.h"

static void check_roundtrip(const struct frame *f, const uint8_t *body, uint32_t len)
{
	long need = frame_encode(f, NULL, 0);
	uint8_t *out;
	struct frame g;
	struct frame_hdr h;

	if (need < FRAME_HDR_LEN)
		abort(); /* a decoded frame must be encodable */
	out = malloc((size_t)need);
	if (!out || frame_encode(f, out, (size_t)need) != need)
		abort();
	if ((uint32_t)(need - FRAME_HDR_LEN) != len || memcmp(out + FRAME_HDR_LEN, body, len))
		abort(); /* decode/encode asymmetry */
	if (frame_decode_hdr(out, (size_t)need, &h) || h.type != f->h.type || h.len != len ||
	    frame_decode_body(&h, out + FRAME_HDR_LEN, &g))
		abort();
	frame_release(&g);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	while (off < size) {
		struct frame_hdr h;
		struct frame f;
		uint8_t *body;
		uint64_t skip;
		int err = frame_decode_hdr(data + off, size - off, &h);

		if (err)
			return 0;
		if (size - off - FRAME_HDR_LEN < h.len)
			return 0;
		body = malloc(h.len ? h.len : 1);
		if (!body)
			return 0;
		memcpy(body, data + off + FRAME_HDR_LEN, h.len);
		err = frame_decode_body(&h, body, &f);
		if (!err) {
			check_roundtrip(&f, body, h.len);
			(void)frame_type_name(f.h.type);
			skip = frame_payload_len(&f);
			frame_release(&f);
		} else {
			(void)frame_strerror(err);
			free(body);
			return 0;
		}
		free(body);
		off += FRAME_HDR_LEN + h.len;
		if (skip > size - off)
			return 0;
		off += (size_t)skip;
	}
	return 0;
}
