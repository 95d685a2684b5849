/* SPDX-License-Identifier: GPL-2.0 */
/* Parsing and validating a whole image held in memory. */
#ifndef MSGMIG_READER_H
#define MSGMIG_READER_H

#include "fmt.h"

/* Pointers into the image buffer, valid once mm_parse() succeeded. */
struct mm_image {
	const u8 *data;
	size_t len;
	const struct ckpt_file_hdr *hdr;
	const struct ckpt_file_ent *ents;
	u32 nr_ents;
	const struct ckpt_cpu *cpu;
	const struct ckpt_mm *mm;
	const struct ckpt_vma *vmas;
	u32 nr_vmas;
	const struct ckpt_fd *fds;
	u32 nr_fds;
	const struct ckpt_signals *sig;
	const struct ckpt_thread *th;
	const u8 *xsave;
	size_t pages_off;	/* first PAGES (or END) section header */
	u64 n_pages;
};

/* Check framing, checksums, order, sizes and every field later used. */
int mm_parse(struct mm_image *im, const void *data, size_t len,
	     struct mm_err *e);

/* check.c: the semantic checks mm_parse() ends with. */
int mm_check_meta(const struct mm_image *im, struct mm_err *e);

/* One PAGES section: raw page data, or one zstd frame (CKPT_SF_ZSTD). */
struct mm_run {
	const struct ckpt_pages *ph;
	const u8 *data;
	size_t len;		/* bytes at data */
	bool zstd;
};

/* Walk the PAGES sections: *off starts at im->pages_off. */
int mm_next_pages(const struct mm_image *im, size_t *off, struct mm_run *run);

/* unzstd.c: decompress compressed runs into a scratch buffer. */
struct mm_unzstd {
	void *ws;
	void *dctx;
	u8 *out;		/* CKPT_MAX_PAGES_PER_SECT pages */
};

/* The run's page data, decompressed if needed; NULL if corrupt. */
const u8 *mm_run_pages(struct mm_unzstd *z, const struct mm_run *run,
		       struct mm_err *e);
void mm_unzstd_free(struct mm_unzstd *z);

#endif
