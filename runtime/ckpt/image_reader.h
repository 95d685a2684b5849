/* SPDX-License-Identifier: MIT */
/*
 * Streaming image parser (docs/image-format.md).  Freestanding (no libc):
 * the restorer, the fuzzer, msgd (to read the RUNTIME section) and tests
 * share it, so the code the fuzzer exercises is the code that restores.
 * It never trusts a length or address before checking it.
 */
#ifndef MSG_CKPT_IMAGE_READER_H
#define MSG_CKPT_IMAGE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reads up to n bytes; returns bytes read, 0 at end of stream, < 0 on error. */
typedef long (*ckpt_read_fn)(void *ctx, void *buf, size_t n);

struct ckpt_rd {
	ckpt_read_fn read;
	void *ctx;
	uint64_t off;          /* stream bytes consumed */
	uint32_t seq;          /* expected seq of the next section */
	uint32_t last_type;    /* type of the last section read (0: none) */
	uint64_t n_pages;      /* pages seen in PAGES sections */
	uint64_t cur_off;      /* stream offset of the current section header */
	struct ckpt_sect_hdr cur; /* current section */
	uint64_t left;         /* payload bytes of cur not yet read */
	int precopy;           /* CKPT_HF_PRECOPY stream */
	int final;             /* pre-copy: the final-stop part has begun */
	uint32_t crc;          /* running CRC of cur's payload */
	int code;              /* last error (CKPT_E_*) */
	char what[256];        /* names the cause */
};

/* Parsed metadata; pointers into the caller's buffer. */
struct ckpt_meta {
	const struct ckpt_file_ent *files;
	uint32_t n_files;
	uint32_t n_vmas;
	const struct ckpt_cpu *cpu;
	const struct ckpt_mm *mm;
	const struct ckpt_vma *vmas;
	const struct ckpt_fd *fds;
	uint32_t n_fds;
	uint32_t xsave_len;
	const struct ckpt_signals *sig;
	const struct ckpt_thread *th;
	const void *xsave; /* 64-byte aligned */
	const void *runtime;
	uint64_t runtime_len;
	/* pre-copy streams: the tracked layout PRE_PAGES are written into */
	const struct ckpt_vma *pre_vmas;
	uint32_t n_pre_vmas;
	int precopy;
	size_t used; /* bytes of the metadata buffer in use */
};

void ckpt_rd_init(struct ckpt_rd *rd, ckpt_read_fn fn, void *ctx);
/* Sets rd->code/what and returns code. */
int ckpt_rd_fail(struct ckpt_rd *rd, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

int ckpt_rd_file_hdr(struct ckpt_rd *rd, struct ckpt_file_hdr *h);
/* Reads and checks the next section header; returns its type or < 0. */
int ckpt_rd_sect(struct ckpt_rd *rd);
/* Reads n bytes of the current payload (n <= rd->left). */
int ckpt_rd_data(struct ckpt_rd *rd, void *dst, size_t n);
/* Checks the whole payload was read, then the trailing CRC. */
int ckpt_rd_finish(struct ckpt_rd *rd);

/* File header + every metadata section, checked.  On success rd->cur is
 * the first PAGES or the END header (payload not yet read). */
int ckpt_read_meta(struct ckpt_rd *rd, struct ckpt_meta *m, void *buf, size_t cap);
/* Pre-copy streams: after the PRE_PAGES (rd->cur is the final MM), reads the
 * final-stop metadata; rd->cur is then the first PAGES or END. */
int ckpt_read_final_meta(struct ckpt_rd *rd, struct ckpt_meta *m, void *buf, size_t cap);
/* rd->cur is PAGES or PRE_PAGES: reads and checks its ckpt_pages header; *vma is the VMA
 * the run lies in.  The caller then reads the data (rd->left bytes). */
int ckpt_rd_pages(struct ckpt_rd *rd, const struct ckpt_meta *m, struct ckpt_pages *ph, const struct ckpt_vma **vma);
/* rd->cur is END: reads it and checks counts and CRC. */
int ckpt_rd_end(struct ckpt_rd *rd);

/* True if page data may be written into this VMA. */
int ckpt_vma_carries_data(const struct ckpt_vma *v);

const char *ckpt_err_name(int code);

#ifdef __cplusplus
}
#endif

#endif
