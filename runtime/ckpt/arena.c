/* SPDX-License-Identifier: MIT */
/* Scratch memory of a capture: one private mapping, excluded from the image. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
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
