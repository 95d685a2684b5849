// SPDX-License-Identifier: GPL-2.0
/*
 * Image reader: everything is checked before the restorer touches its
 * address space (resume contract, rule 5): the file header, each section's
 * header and payload CRC-32C, the section order and sequence, sizes and
 * limits, and the fields that are later used as addresses, indices and
 * strings (as runtime/ckpt/meta_check.c does for the user-level restorer).
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/errno.h>
#include "reader.h"

#define USER_TOP 0x800000000000ULL
#define BAD(e, reason, ...) mm_fail(e, -EINVAL, reason, __VA_ARGS__)

static int check_file_hdr(const struct mm_image *im, struct mm_err *e)
{
	const struct ckpt_file_hdr *h = (const void *)im->data;

	if (im->len < sizeof(*h))
		return mm_fail(e, -ENODATA, CKPT_E_TRUNCATED, "image shorter than its header");
	if (memcmp(h->magic, CKPT_MAGIC, sizeof(h->magic)))
		return BAD(e, CKPT_E_MAGIC, "not a msg checkpoint image");
	if (h->version != CKPT_IMAGE_VERSION)
		return BAD(e, CKPT_E_VERSION, "image version %u, msgmig.ko reads %u",
			   h->version, CKPT_IMAGE_VERSION);
	if (h->hdr_crc != mm_crc32c(h, offsetof(struct ckpt_file_hdr, hdr_crc)))
		return BAD(e, CKPT_E_CHECKSUM, "file header CRC");
	if (h->hdr_size != sizeof(*h) || h->page_size != CKPT_PAGE_SIZE ||
	    h->arch != CKPT_ARCH_X86_64)
		return BAD(e, CKPT_E_FORMAT, "header size/page size/arch");
	return 0;
}

/* Frame at *off: header CRC, magic, sequence, length, payload CRC. */
static int frame(const struct mm_image *im, size_t *off, u32 seq,
		 const struct ckpt_sect_hdr **hp, struct mm_err *e)
{
	const struct ckpt_sect_hdr *h;
	size_t left = im->len - *off;
	u32 crc;

	if (left < sizeof(*h))
		return mm_fail(e, -ENODATA, CKPT_E_TRUNCATED, "stream ends at byte %zu", *off);
	h = (const void *)(im->data + *off);
	if (h->magic != CKPT_SECT_MAGIC)
		return BAD(e, CKPT_E_FORMAT, "no section at byte %zu", *off);
	if (h->hdr_crc != mm_crc32c(h, offsetof(struct ckpt_sect_hdr, hdr_crc)))
		return BAD(e, CKPT_E_CHECKSUM, "section %u header CRC", seq);
	if (h->seq != seq)
		return BAD(e, CKPT_E_FORMAT, "section %u has sequence %u", seq, h->seq);
	if (h->stored_len > left - sizeof(*h) || left - sizeof(*h) - h->stored_len < 4)
		return mm_fail(e, -ENODATA, CKPT_E_TRUNCATED, "section %u cut short", seq);
	if (h->flags == CKPT_SF_ZSTD && h->type == CKPT_S_PAGES && !h->reserved)
		;	/* lengths checked by pages_section() */
	else if (h->flags || h->reserved || h->raw_len != h->stored_len)
		return BAD(e, CKPT_E_FORMAT, "section %u flags/lengths", seq);
	if (h->type != CKPT_S_PAGES && h->stored_len > CKPT_MAX_META_LEN)
		return BAD(e, CKPT_E_FORMAT, "section %u too long", seq);
	memcpy(&crc, (const u8 *)(h + 1) + h->stored_len, sizeof(crc));
	if (crc != mm_crc32c(h + 1, h->stored_len))
		return BAD(e, CKPT_E_CHECKSUM, "section %u (type %u) payload CRC", seq, h->type);
	*hp = h;
	*off += sizeof(*h) + h->stored_len + 4;
	return 0;
}

/* An array payload: a whole number of elements, at most @max. */
static int array(const struct ckpt_sect_hdr *h, size_t size, u32 max,
		 const void **p, u32 *n, struct mm_err *e)
{
	if (h->stored_len % size || h->stored_len / size > max)
		return BAD(e, CKPT_E_FORMAT, "section type %u: %llu bytes", h->type,
			   h->stored_len);
	*p = h + 1;
	*n = h->stored_len / size;
	return 0;
}

static int fixed(const struct ckpt_sect_hdr *h, size_t size, const void **p,
		 struct mm_err *e)
{
	if (h->stored_len != size)
		return BAD(e, CKPT_E_FORMAT, "section type %u: %llu bytes", h->type,
			   h->stored_len);
	*p = h + 1;
	return 0;
}

static int meta_section(struct mm_image *im, const struct ckpt_sect_hdr *h,
			struct mm_err *e)
{
	switch (h->type) {
	case CKPT_S_IDENT:
		return array(h, sizeof(*im->ents), CKPT_MAX_FILES,
			     (const void **)&im->ents, &im->nr_ents, e);
	case CKPT_S_CPU:
		return fixed(h, sizeof(*im->cpu), (const void **)&im->cpu, e);
	case CKPT_S_MM:
		return fixed(h, sizeof(*im->mm), (const void **)&im->mm, e);
	case CKPT_S_VMAS:
		return array(h, sizeof(*im->vmas), CKPT_MAX_VMAS,
			     (const void **)&im->vmas, &im->nr_vmas, e);
	case CKPT_S_FILES:
		return array(h, sizeof(*im->fds), CKPT_MAX_FDS,
			     (const void **)&im->fds, &im->nr_fds, e);
	case CKPT_S_SIGNALS:
		return fixed(h, sizeof(*im->sig), (const void **)&im->sig, e);
	case CKPT_S_THREAD:
		im->th = (const void *)(h + 1);
		if (h->stored_len < sizeof(*im->th) ||
		    h->stored_len != sizeof(*im->th) + im->th->xsave_len)
			return BAD(e, CKPT_E_FORMAT, "THREAD: %llu bytes", h->stored_len);
		im->xsave = (const u8 *)(im->th + 1);
		return 0;
	}
	return 0;	/* RUNTIME: opaque to the kernel */
}

/* Section order: IDENT CPU MM VMAS FILES SIGNALS THREAD [RUNTIME] PAGES* END */
static bool in_order(u32 prev, u32 type)
{
	if (type >= CKPT_S_IDENT && type <= CKPT_S_THREAD)
		return type == prev + 1;
	if (type == CKPT_S_RUNTIME)
		return prev == CKPT_S_THREAD;
	if (type == CKPT_S_PAGES || type == CKPT_S_END)
		return prev >= CKPT_S_THREAD;
	return false;
}

static int pages_section(struct mm_image *im, const struct ckpt_sect_hdr *h,
			 struct mm_err *e)
{
	const struct ckpt_pages *ph = (const void *)(h + 1);

	if (h->stored_len < sizeof(*ph) || !ph->npages ||
	    ph->npages > CKPT_MAX_PAGES_PER_SECT ||
	    h->raw_len != sizeof(*ph) + ph->npages * CKPT_PAGE_SIZE ||
	    (ph->addr & (CKPT_PAGE_SIZE - 1)))
		return BAD(e, CKPT_E_FORMAT, "PAGES section %u malformed", h->seq);
	/* A compressed frame is checked when it is decompressed. */
	if (!(h->flags & CKPT_SF_ZSTD) && h->stored_len != h->raw_len)
		return BAD(e, CKPT_E_FORMAT, "PAGES section %u length", h->seq);
	im->n_pages += ph->npages;
	return 0;
}

static int end_section(struct mm_image *im, const struct ckpt_sect_hdr *h,
		       size_t hoff, size_t next, struct mm_err *e)
{
	const struct ckpt_end *end;

	if (fixed(h, sizeof(*end), (const void **)&end, e))
		return -EINVAL;
	if (end->n_sections != h->seq || end->n_pages != im->n_pages ||
	    end->stream_bytes != hoff)
		return BAD(e, CKPT_E_FORMAT, "END counts do not match the stream");
	if (next != im->len)
		return BAD(e, CKPT_E_FORMAT, "%zu bytes after END", im->len - next);
	return 0;
}

static int walk(struct mm_image *im, struct mm_err *e)
{
	const struct ckpt_sect_hdr *h;
	size_t off = sizeof(struct ckpt_file_hdr), hoff;
	u32 seq = 0, prev = 0;
	int err;

	for (;; seq++) {
		hoff = off;
		err = frame(im, &off, seq, &h, e);
		if (err)
			return err;
		if (!in_order(prev, h->type))
			return BAD(e, CKPT_E_FORMAT, "section %u: type %u after %u",
				   seq, h->type, prev);
		if (h->type <= CKPT_S_RUNTIME)
			err = meta_section(im, h, e);
		else if (h->type == CKPT_S_PAGES)
			err = pages_section(im, h, e);
		else
			return end_section(im, h, hoff, off, e);
		if (err)
			return err;
		if (prev < CKPT_S_PAGES && h->type <= CKPT_S_RUNTIME)
			im->pages_off = off;
		prev = h->type;
	}
}

int mm_next_pages(const struct mm_image *im, size_t *off, struct mm_run *run)
{
	const struct ckpt_sect_hdr *h = (const void *)(im->data + *off);

	if (h->type != CKPT_S_PAGES)
		return 0;
	run->ph = (const void *)(h + 1);
	run->data = (const u8 *)(run->ph + 1);
	run->len = h->stored_len - sizeof(*run->ph);
	run->zstd = h->flags & CKPT_SF_ZSTD;
	*off += sizeof(*h) + h->stored_len + 4;
	return 1;
}

int mm_parse(struct mm_image *im, const void *data, size_t len,
	     struct mm_err *e)
{
	int err;

	memset(im, 0, sizeof(*im));
	im->data = data;
	im->len = len;
	err = check_file_hdr(im, e);
	if (!err)
		err = walk(im, e);
	if (!err)
		err = mm_check_meta(im, e);
	return err;
}
