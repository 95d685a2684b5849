/* SPDX-License-Identifier: MIT */
/* zstd-compressed PAGES sections: libzstd.a linked into the freestanding
 * restorer with a static context (no allocator).  libzstd is built with
 * the stack protector, so the restorer gives it a TLS block with a canary
 * until the image's own TLS base is installed at the very end. */
#include "../ckpt.h"
#include "restorer.h"
#include "sys.h"

#ifdef MSG_RESTORE_ZSTD
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

static uint64_t r_tcb[64] __attribute__((aligned(64)));
static unsigned char r_dctx_ws[1 << 20] __attribute__((aligned(64)));
static unsigned char r_zin[CKPT_MAX_PAGES_PER_SECT * CKPT_PAGE_SIZE + 65536];
static ZSTD_DCtx *r_dctx;

void r_zstd_init(void)
{
	r_tcb[0] = (uint64_t)(uintptr_t)r_tcb; /* %fs:0 is the TCB itself */
	r_tcb[5] = 0x5f3759df00d1ce00ull;      /* %fs:0x28: stack canary */
	sys2(__NR_arch_prctl, R_ARCH_SET_FS, r_tcb);
}

void r_zstd_read(struct ckpt_rd *rd, void *dst, size_t raw)
{
	size_t n = (size_t)rd->left;
	if (n > sizeof(r_zin))
		r_die(CKPT_E_FORMAT, "compressed section %u too large", rd->cur.seq);
	if (ckpt_rd_data(rd, r_zin, n) || ckpt_rd_finish(rd))
		r_die(rd->code, "%s", rd->what);
	if (!r_dctx) {
		if (ZSTD_estimateDCtxSize() > sizeof(r_dctx_ws))
			r_die(CKPT_E_COMPRESS, "zstd context larger than its buffer");
		r_dctx = ZSTD_initStaticDCtx(r_dctx_ws, sizeof(r_dctx_ws));
	}
	size_t got = ZSTD_decompressDCtx(r_dctx, dst, raw, r_zin, n);
	if (ZSTD_isError(got) || got != raw)
		r_die(CKPT_E_COMPRESS, "section %u: zstd data corrupt (%s)", rd->cur.seq,
		      ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short");
}

/* What libzstd's objects reference but never call with a static context. */
void *malloc(size_t n);
void *calloc(size_t n, size_t m);
void free(void *p);
void __stack_chk_fail(void);
unsigned long long ZSTD_trace_decompress_begin(const void *dctx);
void ZSTD_trace_decompress_end(unsigned long long ctx, const void *trace);
/* Weak hooks in libzstd: undefined weak calls cannot reach 0 from 1 TiB. */
unsigned long long ZSTD_trace_decompress_begin(const void *dctx)
{
	(void)dctx;
	return 0;
}
void ZSTD_trace_decompress_end(unsigned long long ctx, const void *trace)
{
	(void)ctx, (void)trace;
}
void *malloc(size_t n)
{
	(void)n;
	return 0;
}
void *calloc(size_t n, size_t m)
{
	(void)n, (void)m;
	return 0;
}
void free(void *p)
{
	(void)p;
}
void __stack_chk_fail(void)
{
	r_die(CKPT_E_KERNEL, "stack smashing detected in zstd");
}
#else
void r_zstd_init(void)
{
}

void r_zstd_read(struct ckpt_rd *rd, void *dst, size_t raw)
{
	(void)dst, (void)raw;
	r_die(CKPT_E_COMPRESS, "section %u is zstd-compressed: this restorer is built without zstd", rd->cur.seq);
}
#endif
