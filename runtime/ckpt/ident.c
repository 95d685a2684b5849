/* SPDX-License-Identifier: MIT */
/* Identity of mapped files (size + content CRC) and of the vDSO.  Content,
 * not inode: a copy on another host has other inodes but must be equal. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture_int.h"
#include "ksys.h"
#include "crc32c.h"
#include "identcache.h"

/* Hashing libc on every capture would cost ~0.5 ms: remember (dev, ino,
 * size, mtime) -> crc.  Filled before any page is written, so the cache's
 * own memory is consistent in the image. */
struct ident_cache {
	dev_t dev;
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
	uint32_t crc;
};
static struct ident_cache cache[64];
static unsigned n_cache;

static int cached(const struct stat *st, int64_t mt, uint32_t *crc)
{
	for (unsigned i = 0; i < n_cache; i++)
		if (cache[i].dev == st->st_dev && cache[i].ino == st->st_ino && cache[i].size == st->st_size &&
		    cache[i].mtime_ns == mt) {
			*crc = cache[i].crc;
			return 1;
		}
	return 0;
}

static int hash_fd(int fd, size_t size, uint32_t *crc)
{
	*crc = 0;
	if (size == 0)
		return 0;
	void *p = k_mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	*crc = ckpt_crc32c(0, p, size);
	k_munmap(p, size);
	return 0;
}

/* The per-host cache file (identcache.h), read into the arena on the first
 * miss of the in-process cache and written back if it gained entries. */
struct host_cache {
	struct ckpt_idc_ent *tab; /* NULL: not loaded (or unusable) */
	int tried, dirty;
};

static void host_load(struct ckpt_ctx *c, struct host_cache *h)
{
	char path[128];
	struct stat st;
	h->tried = 1;
	size_t n = sizeof(struct ckpt_idc_ent) * CKPT_IDCACHE_N;
	h->tab = ckpt_alloc(&c->a, n);
	if (!h->tab)
		return;
	ckpt_idc_path(path, sizeof(path), (unsigned long)k_geteuid(), 0);
	int fd = k_open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return; /* none yet: starts empty */
	if (k_fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == k_geteuid() && !(st.st_mode & 077) &&
	    st.st_size == (off_t)n) {
		if (k_read(fd, h->tab, n) != (ssize_t)n)
			memset(h->tab, 0, n);
	}
	k_close(fd);
}

static void host_store(struct host_cache *h)
{
	char path[128], tmp[128];
	if (!h->tab || !h->dirty)
		return;
	size_t n = sizeof(struct ckpt_idc_ent) * CKPT_IDCACHE_N;
	ckpt_idc_path(path, sizeof(path), (unsigned long)k_geteuid(), 0);
	ckpt_idc_path(tmp, sizeof(tmp), (unsigned long)k_geteuid(), (long)k_getpid());
	int fd = k_creat(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	int ok = write(fd, h->tab, n) == (ssize_t)n;
	k_close(fd);
	if (!ok || rename(tmp, path) != 0)
		unlink(tmp);
}

static int ident_one(struct ckpt_ctx *c, struct ckpt_file_ent *f, struct host_cache *h)
{
	struct stat st;
	int fd = -1;
	/* stat, and open only to hash on a miss: one system call, not three,
	 * per mapped file on the usual (cached) path */
	if (k_stat(f->path, &st) < 0)
		return ckpt_fail(c, (f->flags & CKPT_FE_EXE) ? CKPT_E_EXE : CKPT_E_LIB, "cannot open mapped file %s: %s",
				 f->path, strerror(errno));
	int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	f->size = (uint64_t)st.st_size;
	f->mtime_ns = (uint64_t)mt;
	int r = 0;
	struct ckpt_idc_key k = { (uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size, (uint64_t)mt,
				  (uint64_t)st.st_ctim.tv_sec * 1000000000u + (uint64_t)st.st_ctim.tv_nsec };
	if (!cached(&st, mt, &f->crc32c)) {
		if (!h->tried)
			host_load(c, h);
		if (!h->tab || !ckpt_idc_lookup(h->tab, &k, &f->crc32c)) {
			struct stat st2;
			fd = k_open(f->path, O_RDONLY | O_CLOEXEC);
			/* the file hashed must be the one stat'ed (no swap between) */
			r = fd < 0 || k_fstat(fd, &st2) < 0 || st2.st_ino != st.st_ino || st2.st_dev != st.st_dev ||
					    st2.st_size != st.st_size ?
				    -1 :
				    hash_fd(fd, (size_t)st.st_size, &f->crc32c);
			if (!r && h->tab) {
				ckpt_idc_insert(h->tab, &k, f->crc32c);
				h->dirty = 1;
			}
		}
		if (!r && n_cache < sizeof(cache) / sizeof(cache[0]))
			cache[n_cache++] = (struct ident_cache){ st.st_dev, st.st_ino, st.st_size, mt, f->crc32c };
	}
	if (fd >= 0)
		k_close(fd);
	if (r)
		return ckpt_fail(c, CKPT_E_LIB, "cannot read mapped file %s", f->path);
	return 0;
}

/* vDSO bytes + the layout of [vvar] [vvar_vclock] [vdso]. */
static void ident_vdso(struct ckpt_ctx *c)
{
	for (uint32_t i = 0; i < c->n_vmas; i++) {
		const struct ckpt_vma *v = &c->vmas[i];
		if (!(v->flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR)))
			continue;
		if (!c->mm.special_start)
			c->mm.special_start = v->start;
		c->mm.special_end = v->end;
		if (v->flags & CKPT_VMA_VDSO) {
			c->mm.vdso_start = v->start;
			c->mm.vdso_size = v->end - v->start;
			c->mm.vdso_crc = ckpt_crc32c(0, (const void *)(uintptr_t)v->start, c->mm.vdso_size);
		}
	}
}

int ckpt_collect_ident(struct ckpt_ctx *c)
{
	struct host_cache h = { 0 };
	for (uint32_t i = 0; i < c->n_files; i++) {
		int r = ident_one(c, &c->files[i], &h);
		if (r)
			return r;
	}
	host_store(&h);
	ident_vdso(c);
	return 0;
}
