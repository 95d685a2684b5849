/* SPDX-License-Identifier: MIT */
/* Checks before the restorer touches its address space: CPU, XSAVE area,
 * executable and libraries (size + content CRC), vDSO bytes and layout. */
#include "../ckpt.h"
#include "../cpu.h"
#include "../crc32c.h"
#include "../identcache.h"
#include "restorer.h"
#include "sys.h"

/* The host's side of every check, gathered before the image's first byte
 * (r_prestart): the CPU probe, the identity cache, the vDSO's place and
 * bytes. None of it depends on the image. */
static struct special {
	uint64_t start, end, vdso, vdso_end;
	uint32_t crc;
} r_host_special;

static void verify_cpu(const struct ckpt_meta *m)
{
	struct ckpt_cpu host;
	char what[200];
	ckpt_cpu_probe_once(&host);
	if (ckpt_cpu_compat(m->cpu, &host, what, sizeof(what)))
		r_die(CKPT_E_CPU, "%s", what);
}

void r_verify_xsave(const struct ckpt_meta *m)
{
	struct ckpt_cpu host;
	ckpt_cpu_probe_once(&host);
	if (m->xsave_len != host.xsave_size)
		r_die(CKPT_E_CPU, "XSAVE area of %u bytes, host uses %u", m->xsave_len, host.xsave_size);
	/* XRSTOR faults on bad headers/MXCSR: refuse now, not at the jump. */
	const unsigned char *x = m->xsave;
	uint32_t mxcsr = *(const uint32_t *)(const void *)(x + 24);
	uint64_t bv = *(const uint64_t *)(const void *)(x + 512);
	for (int i = 520; i < 576; i++)
		if (x[i])
			r_die(CKPT_E_FORMAT, "XSAVE header byte %d not zero", i);
	if ((mxcsr & 0xffff0000u) || (bv & ~host.xcr0))
		r_die(CKPT_E_FORMAT, "XSAVE area: bad MXCSR %x or xstate_bv %llx", mxcsr, (unsigned long long)bv);
}

/* The per-host identity cache (identcache.h), shared with captures. */
static struct ckpt_idc_ent r_idc[CKPT_IDCACHE_N];
static int r_idc_state; /* 0 not read, 1 usable, -1 unusable */
static int r_idc_dirty;

static void idc_load(void)
{
	char path[128];
	struct r_stat st;
	unsigned long uid = (unsigned long)sys0(__NR_geteuid);
	r_idc_state = -1;
	ckpt_idc_path(path, sizeof(path), uid, 0);
	long fd = sys4(__NR_openat, R_AT_FDCWD, path, R_O_RDONLY | R_O_CLOEXEC | R_O_NOFOLLOW, 0);
	if (fd < 0) {
		r_idc_state = 1; /* none yet */
		return;
	}
	if (sys2(__NR_fstat, fd, &st) == 0 && (st.mode & 0170000) == 0100000 && st.uid == uid && !(st.mode & 077) &&
	    st.size == (int64_t)sizeof(r_idc) && sys3(__NR_read, fd, r_idc, sizeof(r_idc)) == (long)sizeof(r_idc))
		r_idc_state = 1;
	else
		memset(r_idc, 0, sizeof(r_idc));
	sys1(__NR_close, fd);
}

static void idc_store(void)
{
	char path[128], tmp[128];
	if (r_idc_state != 1 || !r_idc_dirty)
		return;
	unsigned long uid = (unsigned long)sys0(__NR_geteuid);
	ckpt_idc_path(path, sizeof(path), uid, 0);
	ckpt_idc_path(tmp, sizeof(tmp), uid, sys0(__NR_getpid));
	long fd = sys4(__NR_openat, R_AT_FDCWD, tmp, R_O_WRONLY | R_O_CREAT | R_O_EXCL | R_O_CLOEXEC | R_O_NOFOLLOW,
		       0600);
	if (fd < 0)
		return;
	long w = sys3(__NR_write, fd, r_idc, sizeof(r_idc));
	sys1(__NR_close, fd);
	if (w != (long)sizeof(r_idc) || sys2(__NR_rename, tmp, path) < 0)
		sys1(__NR_unlink, tmp);
}

/* *keep: the descriptor, left open (else closed). */
static int file_crc(const char *path, uint64_t *size, uint32_t *crc, long *keep)
{
	struct r_stat st;
	long fd = sys4(__NR_openat, R_AT_FDCWD, path, R_O_RDONLY | R_O_CLOEXEC, 0);
	if (fd < 0)
		return (int)fd;
	if (sys2(__NR_fstat, fd, &st) < 0) {
		sys1(__NR_close, fd);
		return -1;
	}
	*size = (uint64_t)st.size;
	*crc = 0;
	struct ckpt_idc_key k = { st.dev, st.ino, (uint64_t)st.size, st.mtime * 1000000000ull + st.mtime_ns,
				  st.ctime * 1000000000ull + st.ctime_ns };
	if (!r_idc_state) /* not pre-started (r_prestart) */
		idc_load();
	if (r_idc_state == 1 && ckpt_idc_lookup(r_idc, &k, crc)) {
		if (keep)
			*keep = fd;
		else
			sys1(__NR_close, fd);
		return 0;
	}
	/* Mapped, not read: no copy and no scratch pages to fault in. */
	long p = st.size ? sys6(__NR_mmap, 0, st.size, R_PROT_READ, R_MAP_PRIVATE, fd, 0) : 0;
	if (keep && p >= 0)
		*keep = fd;
	else
		sys1(__NR_close, fd);
	if (p < 0)
		return (int)p;
	if (st.size) {
		*crc = ckpt_crc32c(0, (const void *)p, (size_t)st.size);
		sys2(__NR_munmap, p, st.size);
	}
	if (r_idc_state == 1) {
		ckpt_idc_insert(r_idc, &k, *crc);
		r_idc_dirty = 1;
	}
	return 0;
}

static void verify_files(const struct ckpt_meta *m)
{
	for (uint32_t i = 0; i < m->n_files; i++) {
		const struct ckpt_file_ent *f = &m->files[i];
		int code = (f->flags & CKPT_FE_EXE) ? CKPT_E_EXE : CKPT_E_LIB;
		uint64_t size = 0;
		uint32_t crc = 0;
		/* pre-copy: the final part's file table is the one mapped */
		int r = file_crc(f->path, &size, &crc, m->precopy || i >= CKPT_MAX_FILES ? 0 : &r_file_fds[i]);
		if (r)
			r_die(code, "%s: cannot read it on this host (errno %d)", f->path, -r);
		if (size != f->size || crc != f->crc32c)
			r_die(code, "%s differs: size %llu crc %x here, image has size %llu crc %x", f->path,
			      (unsigned long long)size, crc, (unsigned long long)f->size, f->crc32c);
	}
	idc_store();
}

static int find_special(const struct r_map *mp, void *arg)
{
	struct special *s = arg;
	int vdso = r_streq(mp->name, "[vdso]");
	if (!vdso && !r_streq(mp->name, "[vvar]") && !r_streq(mp->name, "[vvar_vclock]"))
		return 0;
	if (!s->start)
		s->start = mp->start;
	s->end = mp->end;
	if (vdso)
		s->vdso = mp->start, s->vdso_end = mp->end;
	return 0;
}

static void probe_vdso(void)
{
	struct special *s = &r_host_special;
	if (r_each_map(r_maps, sizeof(r_maps), find_special, s) == 0)
		r_maps_current = 1;
	if (s->vdso)
		s->crc = ckpt_crc32c(0, (const void *)(uintptr_t)s->vdso, s->vdso_end - s->vdso);
}

static void verify_vdso(const struct ckpt_meta *m)
{
	const struct special s = r_host_special;
	const struct ckpt_mm *mm = m->mm;
	if (!mm->special_end)
		return;
	if (!s.vdso)
		r_die(CKPT_E_VDSO, "this host has no vDSO");
	if (s.vdso_end - s.vdso != mm->vdso_size || s.crc != mm->vdso_crc)
		r_die(CKPT_E_VDSO, "vDSO differs: %llu bytes crc %x here, image has %llu bytes crc %x",
		      (unsigned long long)(s.vdso_end - s.vdso), s.crc, (unsigned long long)mm->vdso_size, mm->vdso_crc);
	if (s.vdso - s.start != mm->vdso_start - mm->special_start || s.end - s.start != mm->special_end - mm->special_start)
		r_die(CKPT_E_VDSO, "vvar/vdso layout differs from the image's");
}

int r_torn_down;

void r_prestart(int check_only)
{
	struct ckpt_cpu host;
	ckpt_cpu_probe_once(&host);
	idc_load();
	probe_vdso(); /* reads r_maps, which r_teardown uses later */
	if (!check_only) {
		r_detach_self();
		r_read_own_signals();
		r_open_mem();
		/* the launch's stack, vvar and vDSO go now: they are no image's
		 * (4 munmaps, ~12 us, were in the restore) */
		r_teardown();
		r_torn_down = 1;
	}
}

void r_prestart_again(void)
{
	idc_load();
}

void r_verify(const struct ckpt_meta *m)
{
	verify_cpu(m);
	verify_files(m);
	verify_vdso(m);
	if (m->th)
		r_verify_xsave(m);
}
