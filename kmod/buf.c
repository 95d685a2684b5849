// SPDX-License-Identifier: GPL-2.0
/* Growable image buffer. */
#include <linux/vmalloc.h>
#include <linux/string.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include "msgmig.h"

/*
 * The most one image may take in kernel memory: 4 GiB, and never more than
 * half the RAM, so an oversized or hostile image fails with ENOMEM instead
 * of pushing the machine into the OOM killer.
 */
size_t mm_buf_max(void)
{
	return min_t(size_t, 4UL << 30, (totalram_pages() << PAGE_SHIFT) / 2);
}

int mm_buf_reserve(struct mm_buf *b, size_t more)
{
	size_t want, cap;
	u8 *p;

	if (more > b->limit || b->len > b->limit - more)
		return -ENOMEM;
	want = b->len + more;
	if (want <= b->cap)
		return 0;
	/* Double to keep appends amortised O(1); never past the limit. */
	cap = max_t(size_t, want, b->cap ? b->cap * 2 : 1 << 20);
	cap = min(cap, b->limit);
	p = vmalloc(cap);
	if (!p)
		return -ENOMEM;
	if (b->data) {
		memcpy(p, b->data, b->len);
		vfree(b->data);
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

int mm_buf_put(struct mm_buf *b, const void *p, size_t n)
{
	int err = mm_buf_reserve(b, n);

	if (err)
		return err;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	return 0;
}

void *mm_buf_grab(struct mm_buf *b, size_t n)
{
	void *p;

	if (mm_buf_reserve(b, n))
		return NULL;
	p = b->data + b->len;
	memset(p, 0, n);
	b->len += n;
	return p;
}

void mm_buf_free(struct mm_buf *b)
{
	vfree(b->data);
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}
