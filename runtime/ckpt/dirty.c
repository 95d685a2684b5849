/* SPDX-License-Identifier: MIT */
#include "dirty.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int ckpt_uffd_open(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (fd < 0)
		return -1;
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED };
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Synchronous write-protect (background snapshot, bgsnap.c): a write to a
 * protected page blocks until the helper resolves it.  Not user-mode only:
 * the kernel's own writes (read() into a buffer, rseq, signal frames) must
 * block too, not fail with EFAULT; that needs CAP_SYS_PTRACE (or
 * vm.unprivileged_userfaultfd=1).  The events tell the helper of munmap,
 * mremap and MADV_DONTNEED, which change memory without a write fault. */
int ckpt_uffd_open_sync(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -1;
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_WP_UNPOPULATED | UFFD_FEATURE_EVENT_REMOVE |
					      UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMAP };
	if (ioctl(fd, UFFDIO_API, &api) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int ckpt_uffd_register(int uffd, uint64_t start, uint64_t end)
{
	struct uffdio_register reg = { .range = { start, end - start }, .mode = UFFDIO_REGISTER_MODE_WP };
	return ioctl(uffd, UFFDIO_REGISTER, &reg);
}

int ckpt_uffd_track(int uffd, uint64_t start, uint64_t end)
{
	struct uffdio_register reg = { .range = { start, end - start }, .mode = UFFDIO_REGISTER_MODE_WP };
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) < 0)
		return -1;
	struct uffdio_writeprotect wp = { .range = { start, end - start }, .mode = UFFDIO_WRITEPROTECT_MODE_WP };
	return ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
}

long ckpt_scan_written(int pagemap_fd, uint64_t start, uint64_t end, int rearm, struct ckpt_page_region *vec,
		       uint64_t vec_len, uint64_t max_pages, uint64_t *walk_end)
{
	struct ckpt_pm_scan_arg a = {
		.size = sizeof(a),
		.flags = rearm ? CKPT_PM_SCAN_WP_MATCHING : 0,
		.start = start,
		.end = end,
		.vec = (uint64_t)(uintptr_t)vec,
		.vec_len = vec_len,
		.max_pages = max_pages,
		/* only VMAs still registered: a brk regrow or a new mapping inside an
		 * old range is not tracked (and is sent whole at the stop) */
		.category_mask = CKPT_PAGE_IS_WRITTEN | CKPT_PAGE_IS_WPALLOWED,
		.return_mask = CKPT_PAGE_IS_WRITTEN,
	};
	long n = ioctl(pagemap_fd, CKPT_PAGEMAP_SCAN, &a);
	*walk_end = a.walk_end;
	return n;
}
