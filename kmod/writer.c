// SPDX-License-Identifier: GPL-2.0
/*
 * Stream writer: ckpt_file_hdr, then sections framed as
 * ckpt_sect_hdr | payload | u32 crc32c(payload), then END
 * (runtime/ckpt/image.h). Sections are built in place in the buffer so a
 * payload is copied once, straight from the target's pages.
 */
#include <linux/string.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include "writer.h"

int mmw_file_hdr(struct mm_writer *w, u32 flags, u64 src_pid)
{
	struct ckpt_file_hdr h = {};

	memcpy(h.magic, CKPT_MAGIC, sizeof(h.magic));
	h.version = CKPT_IMAGE_VERSION;
	h.hdr_size = sizeof(h);
	h.flags = flags;
	h.page_size = CKPT_PAGE_SIZE;
	h.arch = CKPT_ARCH_X86_64;
	h.created_ns = ktime_get_real_ns();
	h.src_pid = src_pid;
	h.hdr_crc = mm_crc32c(&h, offsetof(struct ckpt_file_hdr, hdr_crc));
	return mm_buf_put(w->b, &h, sizeof(h));
}

long mmw_open(struct mm_writer *w, u32 type)
{
	size_t off = w->b->len;
	struct ckpt_sect_hdr *h = mm_buf_grab(w->b, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->type = type;
	return off;
}

int mmw_close(struct mm_writer *w, size_t hoff)
{
	struct ckpt_sect_hdr *h = (void *)(w->b->data + hoff);
	size_t plen = w->b->len - hoff - sizeof(*h);
	u32 crc = mm_crc32c(w->b->data + hoff + sizeof(*h), plen);

	h->magic = CKPT_SECT_MAGIC;
	h->seq = w->seq++;
	h->stored_len = plen;
	h->raw_len = plen;
	h->hdr_crc = mm_crc32c(h, offsetof(struct ckpt_sect_hdr, hdr_crc));
	return mm_buf_put(w->b, &crc, sizeof(crc));
}

int mmw_section(struct mm_writer *w, u32 type, const void *p, size_t n)
{
	long off = mmw_open(w, type);
	int err;

	if (off < 0)
		return off;
	err = mm_buf_put(w->b, p, n);
	return err ? err : mmw_close(w, off);
}

int mmw_end(struct mm_writer *w)
{
	struct ckpt_end e = {
		.n_sections = w->seq,
		.n_pages = w->n_pages,
		.stream_bytes = w->base + w->b->len,
	};

	return mmw_section(w, CKPT_S_END, &e, sizeof(e));
}
