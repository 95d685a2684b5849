// SPDX-License-Identifier: GPL-2.0
/* Compressed PAGES sections (CKPT_SF_ZSTD): one zstd frame per section. */
#include <linux/zstd.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include "reader.h"

static int unzstd_init(struct mm_unzstd *z)
{
	size_t ws = zstd_dctx_workspace_bound();

	if (z->dctx)
		return 0;
	z->ws = kvmalloc(ws, GFP_KERNEL);
	z->out = vmalloc(CKPT_MAX_PAGES_PER_SECT * CKPT_PAGE_SIZE);
	if (!z->ws || !z->out)
		return -ENOMEM;
	z->dctx = zstd_init_dctx(z->ws, ws);
	return z->dctx ? 0 : -ENOMEM;
}

const u8 *mm_run_pages(struct mm_unzstd *z, const struct mm_run *run,
		       struct mm_err *e)
{
	size_t want = run->ph->npages * CKPT_PAGE_SIZE, got;

	if (!run->zstd)
		return run->data;
	if (unzstd_init(z)) {
		mm_fail(e, -ENOMEM, CKPT_E_NOMEM, "zstd context");
		return NULL;
	}
	got = zstd_decompress_dctx(z->dctx, z->out, want, run->data, run->len);
	if (zstd_is_error(got) || got != want) {
		mm_fail(e, -EINVAL, CKPT_E_COMPRESS, "PAGES at %llx: %s",
			run->ph->addr, zstd_is_error(got) ?
			zstd_get_error_name(got) : "short frame");
		return NULL;
	}
	return z->out;
}

void mm_unzstd_free(struct mm_unzstd *z)
{
	kvfree(z->ws);
	vfree(z->out);
	z->ws = NULL;
	z->out = NULL;
	z->dctx = NULL;
}
