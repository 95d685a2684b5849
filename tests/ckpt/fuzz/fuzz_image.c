/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the image parser msg-restore uses (image_reader.c,
 * meta_check.c, cpu.c), fed arbitrary bytes as a stream.  Page data goes
 * to scratch instead of into place; zstd sections are decompressed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "ckpt.h"
#include "cpu.h"
#include "image_reader.h"

struct mem {
	const uint8_t *p;
	size_t n, at;
	size_t chunk; /* short reads, as a pipe gives */
};

static long mem_read(void *ctx, void *buf, size_t n)
{
	struct mem *m = ctx;
	size_t left = m->n - m->at;
	if (n > left)
		n = left;
	if (n > m->chunk)
		n = m->chunk;
	memcpy(buf, m->p + m->at, n);
	m->at += n;
	return (long)n;
}

static unsigned char *meta_buf, *scratch, *zin;
static ZSTD_DCtx *dctx;

static int pages(struct ckpt_rd *rd, const struct ckpt_meta *m)
{
	struct ckpt_pages ph;
	const struct ckpt_vma *v;
	int r = ckpt_rd_pages(rd, m, &ph, &v);
	if (r)
		return r;
	size_t raw = (size_t)ph.npages * CKPT_PAGE_SIZE, n = (size_t)rd->left;
	if (!(rd->cur.flags & CKPT_SF_ZSTD))
		return ckpt_rd_data(rd, scratch, n) ? rd->code : ckpt_rd_finish(rd);
	if (ckpt_rd_data(rd, zin, n) || ckpt_rd_finish(rd))
		return rd->code;
	size_t got = ZSTD_decompressDCtx(dctx, scratch, raw, zin, n);
	return ZSTD_isError(got) || got != raw ? CKPT_E_COMPRESS : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!meta_buf) {
		meta_buf = malloc(CKPT_MAX_META_LEN * 2);
		scratch = malloc((size_t)CKPT_MAX_PAGES_PER_SECT * CKPT_PAGE_SIZE);
		zin = malloc((size_t)CKPT_MAX_PAGES_PER_SECT * CKPT_PAGE_SIZE + 65536);
		dctx = ZSTD_createDCtx();
	}
	struct mem m = { data, size, 0, size ? 1 + data[size - 1] * 97u : 1 };
	struct ckpt_rd rd;
	struct ckpt_meta meta;
	ckpt_rd_init(&rd, mem_read, &m);
	int r = ckpt_read_meta(&rd, &meta, meta_buf, CKPT_MAX_META_LEN * 2);
	if (r)
		return 0;
	struct ckpt_cpu host;
	char what[200];
	ckpt_cpu_probe(&host);
	ckpt_cpu_compat(meta.cpu, &host, what, sizeof(what));
	if (meta.precopy) { /* pre-copy form: PRE_PAGES, then the final part */
		while (rd.cur.type == CKPT_S_PRE_PAGES)
			if (pages(&rd, &meta) || ckpt_rd_sect(&rd) < 0)
				return 0;
		if (ckpt_read_final_meta(&rd, &meta, meta_buf, CKPT_MAX_META_LEN * 2))
			return 0;
	}
	while (rd.cur.type == CKPT_S_PAGES) {
		if (pages(&rd, &meta) || ckpt_rd_sect(&rd) < 0)
			return 0;
	}
	ckpt_rd_end(&rd);
	return 0;
}
