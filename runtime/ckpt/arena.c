/* SPDX-License-Identifier: MIT */
/* Scratch memory of a capture: one private mapping, excluded from the image. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "capture_int.h"
#include "ksys.h"

int ckpt_arena_init(struct arena *a, size_t cap)
{
	void *p = k_mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return CKPT_E_NOMEM;
	a->base = p;
	a->cap = cap;
	a->used = 0;
	return 0;
}

void ckpt_arena_free(struct arena *a)
{
	if (a->base)
		k_munmap(a->base, a->cap);
	a->base = NULL;
}

/* The arena of the last synchronous capture (ckpt_capture, ckpt_prewarm),
 * kept for the next one: its mmap, ~35 first-touch faults and its munmap
 * were 40-60 us of a 1 MiB capture.  Kept are only the pages it wrote,
 * zeroed again (ckpt_alloc's memory is zero), and the mapping is cut
 * after the last of them, so a later mlockall(MCL_CURRENT) of the
 * application locks at most KEEP_SPAN, not 96 MiB of reservation.  The
 * next capture grows it in place (mremap) or, if something was mapped
 * behind it meanwhile, starts a fresh arena. */
#define KEEP_SPAN (16u << 20)
#define KEEP_PAGES 512u /* resident pages zeroed at most (2 MiB) */

static struct {
	unsigned char *base;
	size_t len;
} g_kept;

void ckpt_arena_drop_kept(void)
{
	if (g_kept.base)
		sys2(__NR_munmap, g_kept.base, g_kept.len);
	g_kept.base = NULL;
}

int ckpt_arena_take(struct arena *a, size_t cap)
{
	if (g_kept.base && cap >= g_kept.len) {
		/* an mlockall(MCL_CURRENT) since locked it: a locked mapping
		 * grown by mremap is populated whole */
		sys2(__NR_munlock, g_kept.base, g_kept.len);
		long p = sys5(__NR_mremap, g_kept.base, g_kept.len, cap, 0 /* in place */, 0);
		if (p == (long)(uintptr_t)g_kept.base) {
			*a = (struct arena){ g_kept.base, cap, 0 };
			g_kept.base = NULL;
			return 0;
		}
	}
	ckpt_arena_drop_kept();
	return ckpt_arena_init(a, cap);
}

void ckpt_arena_keep(struct arena *a)
{
	unsigned char vec[KEEP_SPAN / CKPT_PAGE_SIZE];
	size_t n = (a->used + CKPT_PAGE_SIZE - 1) / CKPT_PAGE_SIZE, last = 0, res = 0;
	ckpt_arena_drop_kept();
	if (!a->base || n > sizeof(vec) || sys3(__NR_mincore, a->base, n * CKPT_PAGE_SIZE, vec) != 0) {
		ckpt_arena_free(a);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (vec[i] & 1)
			last = i + 1, res++;
	if (res > KEEP_PAGES || !last) {
		ckpt_arena_free(a);
		return;
	}
	/* Resident pages are zeroed in place; the rest below `last` were never
	 * touched or are swapped out (stale data): dropped, unless there is no
	 * swap (then none is out; sysinfo is one cheap call, a madvise per
	 * hole ~8). */
	struct sysinfo si;
	int holes = sys1(__NR_sysinfo, &si) != 0 || si.totalswap != 0;
	for (size_t i = 0; i < last;) {
		size_t j = i;
		if (vec[i] & 1) {
			while (j < last && (vec[j] & 1))
				j++;
			memset(a->base + i * CKPT_PAGE_SIZE, 0, (j - i) * CKPT_PAGE_SIZE);
		} else {
			while (j < last && !(vec[j] & 1))
				j++;
			if (holes)
				sys3(__NR_madvise, a->base + i * CKPT_PAGE_SIZE, (j - i) * CKPT_PAGE_SIZE,
				     MADV_DONTNEED);
		}
		i = j;
	}
	sys2(__NR_munmap, a->base + last * CKPT_PAGE_SIZE, a->cap - last * CKPT_PAGE_SIZE);
	g_kept.base = a->base, g_kept.len = last * CKPT_PAGE_SIZE;
	a->base = NULL;
}

void *ckpt_alloc(struct arena *a, size_t n)
{
	size_t at = (a->used + 63) & ~(size_t)63;
	if (at > a->cap || n > a->cap - at)
		return NULL;
	a->used = at + n;
	return a->base + at; /* fresh anonymous pages are zero */
}

char *ckpt_read_proc(struct ckpt_ctx *c, const char *path, size_t *len)
{
	int fd = k_open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ckpt_fail(c, CKPT_E_PROC, "open %s: %s", path, strerror(errno));
		return NULL;
	}
	/* /proc files have no size: grow into the rest of the arena. */
	size_t at = (c->a.used + 63) & ~(size_t)63, n = 0;
	char *buf = (char *)c->a.base + at;
	size_t room = c->a.cap - at - 1;
	for (;;) {
		ssize_t r = k_read(fd, buf + n, room - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == room)
			break;
	}
	k_close(fd);
	buf[n] = 0;
	c->a.used = at + n + 1;
	*len = n;
	return buf;
}
