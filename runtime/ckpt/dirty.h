/* SPDX-License-Identifier: MIT */
/* Dirty-page tracking without soft-dirty: userfaultfd write-protect in
 * async mode (the kernel just clears the protection on a write) read back
 * with PAGEMAP_SCAN.  Debian 12's 6.1 uapi headers lack both, so the
 * kernel ABI is spelled out here. */
#ifndef MSG_CKPT_DIRTY_H
#define MSG_CKPT_DIRTY_H

#include <linux/ioctl.h>
#include <linux/userfaultfd.h>
#include <stdint.h>

#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif

struct ckpt_page_region {
	uint64_t start, end, categories;
};

struct ckpt_pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};

#define CKPT_PAGEMAP_SCAN _IOWR('f', 16, struct ckpt_pm_scan_arg)
#define CKPT_PM_SCAN_WP_MATCHING (1 << 0)
#define CKPT_PM_SCAN_CHECK_WPASYNC (1 << 1)
#define CKPT_PAGE_IS_WPALLOWED (1 << 0)
#define CKPT_PAGE_IS_WRITTEN (1 << 1)
#define CKPT_PAGE_IS_PRESENT (1 << 3)
#define CKPT_PAGE_IS_SWAPPED (1 << 4)

/* Opens an async write-protect userfaultfd; < 0 if the kernel lacks it. */
int ckpt_uffd_open(void);
/* A synchronous write-protect userfaultfd (no WP_ASYNC, kernel faults
 * too, remove/unmap/remap events); < 0 if not allowed here. */
int ckpt_uffd_open_sync(void);
/* Registers [start,end) for WP (no protection yet). */
int ckpt_uffd_register(int uffd, uint64_t start, uint64_t end);
/* Registers [start,end) for WP and write-protects it. */
int ckpt_uffd_track(int uffd, uint64_t start, uint64_t end);
/* Regions of [start,end) written since protected; with rearm, protects them
 * again.  Returns the number of regions in vec, or < 0; *walk_end is where
 * the scan stopped (vec full or max_pages reached). */
long ckpt_scan_written(int pagemap_fd, uint64_t start, uint64_t end, int rearm, struct ckpt_page_region *vec,
		       uint64_t vec_len, uint64_t max_pages, uint64_t *walk_end);

#endif
