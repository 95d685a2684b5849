/* SPDX-License-Identifier: MIT */
/* The address space: clear everything outside the restorer's range, put the
 * vDSO where the image had it, recreate every VMA at its address. */
#include "../ckpt.h"
#include "../crc32c.h"
#include "restorer.h"
#include "sys.h"

static int in_restorer(uint64_t s)
{
	return s >= CKPT_RESTORER_BASE && s < CKPT_RESTORER_BASE + CKPT_RESTORER_SPAN;
}

/* Our own file-backed segments become anonymous copies: then the kernel
 * lets PR_SET_MM_MAP point /proc/self/exe at the restored program (it
 * refuses while the old exe is still mapped). */
static void detach_from_file(const struct r_map *mp)
{
	uint64_t len = mp->end - mp->start;
	long tmp = sys6(__NR_mmap, 0, (long)len, R_PROT_READ | R_PROT_WRITE, R_MAP_PRIVATE | R_MAP_ANONYMOUS, -1, 0);
	if (tmp < 0 || !(mp->prot & R_PROT_READ))
		return;
	memcpy((void *)tmp, (const void *)(uintptr_t)mp->start, len);
	sys3(__NR_mprotect, tmp, len, mp->prot);
	/* The code doing this may sit in the range being replaced: the copy is
	 * identical, so execution continues in it. */
	if (sys5(__NR_mremap, tmp, len, len, 3 /* MAYMOVE|FIXED */, mp->start) != (long)mp->start)
		sys2(__NR_munmap, tmp, len);
}

/* msg-restore.map, a hard link to this executable installed beside it:
 * the same inode, so the same page cache pages, under another path.
 * The kernel refuses a new /proc/self/exe only while a mapping has the
 * old exe's path (replace_mm_exe_file compares paths), so the read-only
 * segments are mapped again from the link instead of copied: 62 pages
 * less to allocate and copy before READY, and the restored process's
 * unmapping of the restorer range drops them instead of freeing them
 * (~0.1 ms of its CPU before).  Written segments (.data) are copied. */
static long r_link_fd = -1;

static void open_link(const char *exe)
{
	char path[128];
	struct r_stat a, b;
	size_t n = 0;
	for (; exe[n] && n + 5 < sizeof(path); n++)
		path[n] = exe[n];
	if (exe[n])
		return;
	const char *sfx = ".map";
	for (int i = 0; i < 5; i++)
		path[n + i] = sfx[i];
	long fd = sys4(__NR_openat, R_AT_FDCWD, path, R_O_RDONLY | R_O_CLOEXEC | R_O_NOFOLLOW, 0);
	if (fd < 0)
		return;
	if (sys2(__NR_fstat, fd, &a) == 0 && sys4(__NR_newfstatat, R_AT_FDCWD, "/proc/self/exe", &b, 0) == 0 &&
	    a.dev == b.dev && a.ino == b.ino)
		r_link_fd = fd;
	else
		sys1(__NR_close, fd);
}

static int remap_from_link(const struct r_map *mp)
{
	if (r_link_fd < 0 || (mp->prot & R_PROT_WRITE))
		return 0;
	long r = sys6(__NR_mmap, (long)mp->start, (long)(mp->end - mp->start), mp->prot,
		      R_MAP_PRIVATE | R_MAP_FIXED | R_MAP_POPULATE, r_link_fd, (long)mp->pgoff);
	return r == (long)mp->start;
}

static int detach_own(const struct r_map *mp, void *arg)
{
	(void)arg;
	if (in_restorer(mp->start) && mp->name[0] == '/') {
		if (r_link_fd == -1)
			open_link(mp->name), r_link_fd = r_link_fd < 0 ? -2 : r_link_fd;
		if (!remap_from_link(mp))
			detach_from_file(mp);
	}
	return 0;
}

static int r_detached;
int r_maps_current;

static long r_read_maps(void)
{
	long n = r_read_file("/proc/self/maps", r_maps, sizeof(r_maps));
	r_maps_current = n >= 0;
	return n;
}



/* Done before the image's first byte (a pre-started restorer waiting on
 * its socket has it behind it): it depends on nothing in the image.  The
 * maps text in r_maps stays valid for r_teardown: only our own range
 * changed, and r_teardown leaves that alone. */
void r_detach_self(void)
{
	if (!r_maps_current && r_read_maps() < 0)
		return; /* r_teardown reads again and reports it */
	r_each_map_in(r_maps, detach_own, 0);
	if (r_link_fd >= 0)
		sys1(__NR_close, r_link_fd);
	r_link_fd = -2;
	r_detached = 1;
}

static int unmap_foreign(const struct r_map *mp, void *arg)
{
	(void)arg;
	if (!r_detached && in_restorer(mp->start) && mp->name[0] == '/')
		detach_from_file(mp);
	if (in_restorer(mp->start) || r_streq(mp->name, "[vsyscall]"))
		return 0;
	long r = sys2(__NR_munmap, mp->start, mp->end - mp->start);
	if (r < 0)
		r_die(CKPT_E_MAP, "cannot unmap %s at %p (errno %ld)", mp->name, (void *)(uintptr_t)mp->start, -r);
	return 0;
}

void r_teardown(void)
{
	int r = r_maps_current ? r_each_map_in(r_maps, unmap_foreign, 0)
			       : r_each_map(r_maps, sizeof(r_maps), unmap_foreign, 0);
	r_maps_current = 0;
	if (r)
		r_die(CKPT_E_PROC, "cannot read /proc/self/maps");
}

/* ARCH_MAP_VDSO_64 takes the address as a hint: the vDSO must be found
 * where the image has it, with the image's bytes (mincore fails on an
 * unmapped range, before the CRC would fault). */
void r_place_vdso(const struct ckpt_meta *m)
{
	const struct ckpt_mm *mm = m->mm;
	unsigned char vec[64];
	if (!mm->special_end)
		return;
	long r = sys2(__NR_arch_prctl, R_ARCH_MAP_VDSO_64, mm->special_start);
	if (r < 0)
		r_die(CKPT_E_VDSO, "ARCH_MAP_VDSO_64 at %p failed (errno %ld)", (void *)(uintptr_t)mm->special_start, -r);
	if (mm->vdso_size > sizeof(vec) * CKPT_PAGE_SIZE || (mm->vdso_start & (CKPT_PAGE_SIZE - 1)) ||
	    sys3(__NR_mincore, mm->vdso_start, mm->vdso_size, vec) < 0 ||
	    ckpt_crc32c(0, (const void *)(uintptr_t)mm->vdso_start, mm->vdso_size) != mm->vdso_crc)
		r_die(CKPT_E_VDSO, "the kernel did not place the vDSO at %p, where the image needs it",
		      (void *)(uintptr_t)mm->vdso_start);
}

static long open_file(const struct ckpt_meta *m, int idx, long *fds)
{
	if (fds[idx] > 0)
		return fds[idx];
	const char *p = m->files[idx].path;
	long fd = sys4(__NR_openat, R_AT_FDCWD, p, R_O_RDONLY | R_O_CLOEXEC, 0);
	if (fd < 0)
		r_die((m->files[idx].flags & CKPT_FE_EXE) ? CKPT_E_EXE : CKPT_E_LIB, "cannot open %s (errno %ld)", p, -fd);
	return fds[idx] = fd;
}

/* A private file VMA of a plain image is mapped with its final protection
 * and opened for writing only when a PAGES run lands in it (GOT, RELRO,
 * .data): the text and read-only data of the executable and libraries,
 * most file VMAs, get no page and no mprotect. Bit per VMA index. */
static uint64_t r_opened[CKPT_MAX_VMAS / 64];
static int r_lazy;

static int lazy(const struct ckpt_vma *v)
{
	return r_lazy && (v->flags & CKPT_VMA_FILE) && !(v->flags & CKPT_VMA_SHARED);
}

/* A run for a read-only private file VMA (RELRO: GOT, .data.rel.ro) is
 * written through /proc/self/mem, which writes past the protection (the
 * page becomes the process's copy, as it was): no mprotect to writable
 * before and back after, 8 of the 12 mprotect calls of a small restore
 * (each splits and merges VMAs).  Kernels built to refuse such writes
 * (proc_mem.force_override=never) fail the pwrite: the caller then comes
 * back here with via_mem 0. */
long r_mem_fd = -1;

void r_open_mem(void)
{
	r_mem_fd = sys4(__NR_openat, R_AT_FDCWD, "/proc/self/mem", 2 /* O_RDWR */ | R_O_CLOEXEC, 0);
}

int r_open_for_pages(const struct ckpt_meta *m, const struct ckpt_vma *v)
{
	return r_open_for_pages2(m, v, r_mem_fd >= 0);
}

int r_open_for_pages2(const struct ckpt_meta *m, const struct ckpt_vma *v, int via_mem)
{
	uint64_t i = (uint64_t)(v - m->vmas);
	if (!lazy(v) || i >= m->n_vmas || (r_opened[i / 64] >> (i % 64) & 1) ||
	    (v->prot & (CKPT_PROT_READ | CKPT_PROT_WRITE)) == (CKPT_PROT_READ | CKPT_PROT_WRITE))
		return 0;
	if (via_mem && (v->prot & CKPT_PROT_READ))
		return 1;
	long r = sys3(__NR_mprotect, v->start, v->end - v->start, v->prot | R_PROT_READ | R_PROT_WRITE);
	if (r < 0)
		r_die(CKPT_E_MAP, "mprotect %p for its pages failed (errno %ld)", (void *)(uintptr_t)v->start, -r);
	r_opened[i / 64] |= 1ull << (i % 64);
	return 0;
}

static int needs_final_protect(const struct ckpt_meta *m, const struct ckpt_vma *v)
{
	uint64_t i = (uint64_t)(v - m->vmas);
	if (!ckpt_vma_carries_data(v) || v->prot == (CKPT_PROT_READ | CKPT_PROT_WRITE))
		return 0;
	return !lazy(v) || (r_opened[i / 64] >> (i % 64) & 1);
}

static void map_one(const struct ckpt_meta *m, const struct ckpt_vma *v, long *fds)
{
	uint64_t len = v->end - v->start;
	long prot = v->prot, flags = R_MAP_FIXED, fd = -1, off = 0;
	if (ckpt_vma_carries_data(v) && !lazy(v))
		prot |= R_PROT_READ | R_PROT_WRITE; /* pages are read in; final protection later */
	if (v->flags & CKPT_VMA_FILE) {
		fd = open_file(m, v->file_idx, fds);
		off = (long)v->pgoff;
		flags |= (v->flags & CKPT_VMA_SHARED) ? R_MAP_SHARED : R_MAP_PRIVATE;
	} else {
		flags |= R_MAP_PRIVATE | R_MAP_ANONYMOUS | ((v->flags & CKPT_VMA_STACK) ? R_MAP_GROWSDOWN : 0);
	}
	long r = sys6(__NR_mmap, (long)v->start, (long)len, prot, flags, fd, off);
	if (r != (long)v->start)
		r_die(CKPT_E_MAP, "cannot map %p-%p %s (errno %ld)", (void *)(uintptr_t)v->start,
		      (void *)(uintptr_t)v->end, (v->flags & CKPT_VMA_FILE) ? m->files[v->file_idx].path : "anon",
		      r < 0 ? -r : 0);
}

/* fds per IDENT entry, opened once; bss so it needs no allocator. */
long r_file_fds[CKPT_MAX_FILES];

void r_map_vmas(const struct ckpt_meta *m)
{
	r_lazy = !m->precopy; /* pre-copy VMAs were mapped open before the final layout */
	for (uint32_t i = 0; i < m->n_vmas; i++) {
		const struct ckpt_vma *v = &m->vmas[i];
		if (!(v->flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR | CKPT_VMA_VSYSCALL | CKPT_VMA_PRECOPIED)))
			map_one(m, v, r_file_fds);
	}
	for (uint32_t i = 0; i < m->n_files; i++)
		if (r_file_fds[i] > 0)
			sys1(__NR_close, r_file_fds[i]);
}

void r_final_protect(const struct ckpt_meta *m)
{
	for (uint32_t i = 0; i < m->n_vmas; i++) {
		const struct ckpt_vma *v = &m->vmas[i];
		if (v->flags & CKPT_VMA_LOCKED) { /* mlock'ed at capture: locked again */
			long r = sys2(__NR_mlock, v->start, v->end - v->start);
			if (r < 0)
				r_die(CKPT_E_MAP, "cannot mlock %p-%p (errno %ld; RLIMIT_MEMLOCK?)",
				      (void *)(uintptr_t)v->start, (void *)(uintptr_t)v->end, -r);
		}
		if (!needs_final_protect(m, v))
			continue;
		long r = sys3(__NR_mprotect, v->start, v->end - v->start, v->prot);
		if (r < 0)
			r_die(CKPT_E_MAP, "mprotect %p failed (errno %ld)", (void *)(uintptr_t)v->start, -r);
	}
}

void r_map_pre_vmas(const struct ckpt_meta *m)
{
	for (uint32_t i = 0; i < m->n_pre_vmas; i++)
		map_one(m, &m->pre_vmas[i], r_file_fds);
}

static void unmap_range(uint64_t s, uint64_t e)
{
	if (s < e && sys2(__NR_munmap, s, e - s) < 0)
		r_die(CKPT_E_MAP, "cannot unmap %p", (void *)(uintptr_t)s);
}

void r_reconcile_pre(const struct ckpt_meta *m)
{
	for (uint32_t i = 0; i < m->n_pre_vmas; i++) {
		uint64_t s = m->pre_vmas[i].start, e = m->pre_vmas[i].end, pos = s;
		for (uint32_t j = 0; j < m->n_vmas; j++) {
			const struct ckpt_vma *v = &m->vmas[j];
			if (!(v->flags & CKPT_VMA_PRECOPIED) || v->end <= s || v->start >= e)
				continue;
			unmap_range(pos, v->start < e ? v->start : e);
			if (v->end > pos)
				pos = v->end;
		}
		unmap_range(pos, e);
	}
}
