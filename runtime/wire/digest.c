#include "wire/digest.h"

#include <openssl/evp.h>
#include <string.h>

void msg_digest(uint8_t out[FRAME_DIGEST_LEN], uint32_t src, uint32_t dst, uint64_t seq,
		int32_t tag, const void *payload, uint64_t size)
{
	uint8_t id[28];
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned int len = FRAME_DIGEST_LEN;

	memcpy(id, &src, 4);
	memcpy(id + 4, &dst, 4);
	memcpy(id + 8, &seq, 8);
	memcpy(id + 16, &tag, 4);
	memcpy(id + 20, &size, 8);
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) ||
	    !EVP_DigestUpdate(ctx, id, sizeof(id)) ||
	    (size && !EVP_DigestUpdate(ctx, payload, size)) ||
	    !EVP_DigestFinal_ex(ctx, out, &len))
		memset(out, 0xff, FRAME_DIGEST_LEN); /* cannot happen with a working libcrypto */
	EVP_MD_CTX_free(ctx);
}

static void ctx_free(void *ctx)
{
	EVP_MD_CTX_free(ctx);
}

void msg_digest_begin(struct mbuf *m, uint32_t src, uint32_t dst, uint64_t seq, int32_t tag)
{
	uint64_t size = m->len;
	uint8_t id[28];
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (!ctx)
		return;
	memcpy(id, &src, 4);
	memcpy(id + 4, &dst, 4);
	memcpy(id + 8, &seq, 8);
	memcpy(id + 16, &tag, 4);
	memcpy(id + 20, &size, 8);
	if (!EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) || !EVP_DigestUpdate(ctx, id, sizeof(id))) {
		EVP_MD_CTX_free(ctx);
		return;
	}
	m->hctx = ctx;
	m->hfree = ctx_free;
	m->hashed = 0;
	m->digested = 0;
	msg_digest_feed(m, 0);
}

void msg_digest_feed(struct mbuf *m, uint64_t upto)
{
	unsigned int len = FRAME_DIGEST_LEN;

	if (!m->hctx || upto < m->hashed || upto > m->len)
		return;
	if (upto > m->hashed && !EVP_DigestUpdate(m->hctx, m->data + m->hashed, upto - m->hashed))
		goto drop;
	m->hashed = upto;
	if (m->hashed < m->len)
		return;
	if (!EVP_DigestFinal_ex(m->hctx, m->digest, &len))
		goto drop;
	m->digested = 1;
drop:
	EVP_MD_CTX_free(m->hctx);
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
