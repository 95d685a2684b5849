/* SPDX-License-Identifier: MIT */
/* Page data straight into place: read() targets the restored address, the
 * CRC is computed over the bytes where they landed. */
#include "../ckpt.h"
#include "restorer.h"
#include "sys.h"

unsigned char r_scratch[(CKPT_MAX_PAGES_PER_SECT + 1) * CKPT_PAGE_SIZE] __attribute__((aligned(4096)));

static void check(struct ckpt_rd *rd, int r)
{
	if (r < 0)
		r_die(r, "%s", rd->what);
}

static void one_section(struct ckpt_rd *rd, const struct ckpt_meta *m, int check_only)
{
	struct ckpt_pages ph;
	const struct ckpt_vma *v;
	check(rd, ckpt_rd_pages(rd, m, &ph, &v));
	size_t len = (size_t)ph.npages * CKPT_PAGE_SIZE;
	int via_mem = !check_only && rd->cur.type == CKPT_S_PAGES && r_open_for_pages(m, v);
	void *dst = check_only || via_mem ? (void *)r_scratch : (void *)(uintptr_t)ph.addr;
	/* One call allocates the run's pages (MADV_POPULATE_WRITE, Linux 5.14):
	 * cheaper than one fault per page inside read().  Best effort. */
	if (dst != r_scratch)
		sys3(__NR_madvise, ph.addr, (long)len, 23);
	if (rd->cur.flags & CKPT_SF_ZSTD) {
		r_zstd_read(rd, dst, len);
	} else {
		check(rd, ckpt_rd_data(rd, dst, (size_t)rd->left));
		check(rd, ckpt_rd_finish(rd));
	}
	if (via_mem && sys4(__NR_pwrite64, r_mem_fd, r_scratch, len, (long)ph.addr) != (long)len) {
		r_open_for_pages2(m, v, 0); /* writes refused: writable for a while, as before */
		memcpy((void *)(uintptr_t)ph.addr, r_scratch, len);
	}
}

void r_load_pages(struct ckpt_rd *rd, const struct ckpt_meta *m, int check_only)
{
	while (rd->cur.type == CKPT_S_PAGES) {
		one_section(rd, m, check_only);
		check(rd, ckpt_rd_sect(rd));
	}
	check(rd, ckpt_rd_end(rd));
}

void r_load_pre_pages(struct ckpt_rd *rd, const struct ckpt_meta *m, int check_only)
{
	while (rd->cur.type == CKPT_S_PRE_PAGES) {
		one_section(rd, m, check_only);
		check(rd, ckpt_rd_sect(rd));
	}
}
