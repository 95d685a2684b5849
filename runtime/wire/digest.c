#include "wire/digest.h"

#include <openssl/evp.h>
#include <string.h>

/* header-only: libmsg and the apps it links into need no libxxhash */
#define XXH_INLINE_ALL
#include <xxhash.h>

/* The header fields every digest starts with. */
static void identity(uint8_t id[28], uint32_t src, uint32_t dst, uint64_t seq, int32_t tag,
		     uint64_t size)
{
	memcpy(id, &src, 4);
	memcpy(id + 4, &dst, 4);
	memcpy(id + 8, &seq, 8);
	memcpy(id + 16, &tag, 4);
	memcpy(id + 20, &size, 8);
}

/* SHA-256 fetched once: EVP_sha256() in EVP_DigestInit_ex looks the
 * algorithm up (under a lock) on every call, and a fresh context per message
 * costs an allocation; together more than hashing a small message. The
 * daemon and the simulator are single-threaded; both pointers stay
 * reachable, so leak checkers do not report them. */
static EVP_MD *sha256_md(void)
{
	static EVP_MD *md;

	if (!md)
		md = EVP_MD_fetch(NULL, "SHA256", NULL);
	return md;
}

static void sha256_oneshot(uint8_t out[FRAME_DIGEST_LEN], const uint8_t id[28],
			   const void *payload, uint64_t size)
{
	static EVP_MD_CTX *ctx;
	EVP_MD *md = sha256_md();
	unsigned int len = FRAME_DIGEST_LEN;

	if (!ctx)
		ctx = EVP_MD_CTX_new();
	if (!ctx || !md || !EVP_DigestInit_ex(ctx, md, NULL) ||
	    !EVP_DigestUpdate(ctx, id, 28) ||
	    (size && !EVP_DigestUpdate(ctx, payload, size)) ||
	    !EVP_DigestFinal_ex(ctx, out, &len))
		memset(out, 0xff, FRAME_DIGEST_LEN); /* cannot happen with a working libcrypto */
}

static void xxh3_final(uint8_t out[FRAME_DIGEST_LEN], XXH3_state_t *s)
{
	XXH128_canonical_t c;

	XXH128_canonicalFromHash(&c, XXH3_128bits_digest(s));
	memcpy(out, c.digest, sizeof(c.digest));
	memset(out + sizeof(c.digest), 0, FRAME_DIGEST_LEN - sizeof(c.digest));
}

void msg_digest(enum msg_digest_alg alg, uint8_t out[FRAME_DIGEST_LEN], uint32_t src,
		uint32_t dst, uint64_t seq, int32_t tag, const void *payload, uint64_t size)
{
	uint8_t id[28];

	identity(id, src, dst, seq, tag, size);
	if (alg == DIGEST_XXH3) {
		XXH3_state_t s;

		XXH3_INITSTATE(&s);
		XXH3_128bits_reset(&s);
		XXH3_128bits_update(&s, id, sizeof(id));
		if (size)
			XXH3_128bits_update(&s, payload, size);
		xxh3_final(out, &s);
		return;
	}
	sha256_oneshot(out, id, payload, size);
}

static void sha_free(void *ctx)
{
	EVP_MD_CTX_free(ctx);
}

static void xxh3_free(void *s)
{
	XXH3_freeState(s);
}

void msg_digest_begin(enum msg_digest_alg alg, struct mbuf *m, uint32_t src, uint32_t dst,
		      uint64_t seq, int32_t tag)
{
	uint8_t id[28];

	identity(id, src, dst, seq, tag, m->len);
	if (alg == DIGEST_XXH3) {
		XXH3_state_t *s = XXH3_createState();

		if (!s)
			return;
		XXH3_128bits_reset(s);
		XXH3_128bits_update(s, id, sizeof(id));
		m->hctx = s;
		m->hfree = xxh3_free;
		m->halg = DIGEST_XXH3;
	} else {
		EVP_MD_CTX *ctx = EVP_MD_CTX_new();
		EVP_MD *md = sha256_md();

		if (!ctx)
			return;
		if (!md || !EVP_DigestInit_ex(ctx, md, NULL) ||
		    !EVP_DigestUpdate(ctx, id, sizeof(id))) {
			EVP_MD_CTX_free(ctx);
			return;
		}
		m->hctx = ctx;
		m->hfree = sha_free;
		m->halg = DIGEST_SHA256;
	}
	m->hashed = 0;
	m->digested = 0;
	msg_digest_feed(m, 0);
}

void msg_digest_feed(struct mbuf *m, uint64_t upto)
{
	unsigned int len = FRAME_DIGEST_LEN;
	int ok = 1;

	if (!m->hctx || upto < m->hashed || upto > m->len)
		return;
	if (upto > m->hashed) {
		if (m->halg == DIGEST_XXH3)
			XXH3_128bits_update(m->hctx, m->data + m->hashed, upto - m->hashed);
		else
			ok = EVP_DigestUpdate(m->hctx, m->data + m->hashed, upto - m->hashed);
		if (!ok)
			goto drop;
	}
	m->hashed = upto;
	if (m->hashed < m->len)
		return;
	if (m->halg == DIGEST_XXH3)
		xxh3_final(m->digest, m->hctx);
	else if (!EVP_DigestFinal_ex(m->hctx, m->digest, &len))
		goto drop;
	m->digested = 1;
drop:
	m->hfree(m->hctx);
	m->hctx = NULL;
}

int64_t msg_first_diff(const void *a, const void *b, uint64_t size)
{
	const uint8_t *x = a, *y = b;
	uint64_t i;

	for (i = 0; i < size; i++)
		if (x[i] != y[i])
			return (int64_t)i;
	return -1;
}
