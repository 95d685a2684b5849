/* mbuf: a reference-counted message payload. The protocol core keeps
 * references (queued, retained for catch-up); the shell fills and drains them.
 * One allocation per message: payloads are never staged twice. */
#ifndef MSG_UTIL_MBUF_H
#define MSG_UTIL_MBUF_H

#include <stddef.h>
#include <stdint.h>

struct mbuf {
	uint32_t refs;
	size_t len;
	/* The receiving daemon hashes a large payload as it lands, so hashing
	 * never stalls its loop for long (DESIGN §5: the receiver hashes). */
	void *hctx;               /* running digest, or NULL */
	void (*hfree)(void *ctx);
	uint64_t hashed;          /* bytes fed to hctx so far */
	uint8_t halg;             /* enum msg_digest_alg of hctx */
	int digested;             /* digest below is final */
	uint8_t digest[32];
	uint8_t data[];
};

struct mbuf *mbuf_new(size_t len);  /* refs = 1; NULL when out of memory */
struct mbuf *mbuf_get(struct mbuf *m);
void mbuf_put(struct mbuf *m);      /* frees at zero; NULL is a no-op */
/* Unmapping a very large payload (hundreds of MB) takes the kernel a
 * hundred milliseconds or more; a daemon hands such mappings to this hook
 * (another thread) so its event loop never stalls. NULL: unmap in place. */
#define MBUF_UNMAP_ASYNC_MIN (64u << 20)
void mbuf_set_unmapper(void (*unmap)(void *p, size_t len));

#endif
