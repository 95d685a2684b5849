/* SPDX-License-Identifier: MIT */
/* Streaming image parser: framing, checksums and section order. */
#include "image_reader.h"

#include <stdarg.h>

#include "ckpt.h"
#include "crc32c.h"
#include "fmt.h"

int ckpt_meta_check(struct ckpt_rd *rd, const struct ckpt_meta *m);
int ckpt_meta_check_pre(struct ckpt_rd *rd, const struct ckpt_meta *m);
int ckpt_meta_check_precopied(struct ckpt_rd *rd, const struct ckpt_meta *m);

void ckpt_rd_init(struct ckpt_rd *rd, ckpt_read_fn fn, void *ctx)
{
	unsigned char *p = (unsigned char *)rd;
	for (size_t i = 0; i < sizeof(*rd); i++)
		p[i] = 0;
	rd->read = fn;
	rd->ctx = ctx;
}

int ckpt_rd_fail(struct ckpt_rd *rd, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ckpt_vfmt(rd->what, sizeof(rd->what), fmt, ap);
	va_end(ap);
	rd->code = code;
	return code;
}

/* Exactly n bytes or an error: a short stream is TRUNCATED. */
static int rd_raw(struct ckpt_rd *rd, void *dst, size_t n)
{
	unsigned char *p = dst;
	while (n) {
		long r = rd->read(rd->ctx, p, n);
		if (r == 0)
			return ckpt_rd_fail(rd, CKPT_E_TRUNCATED, "stream ends at byte %llu", (unsigned long long)rd->off);
		if (r < 0)
			return ckpt_rd_fail(rd, CKPT_E_IO, "read error %ld at byte %llu", r, (unsigned long long)rd->off);
		if ((size_t)r > n)
			return ckpt_rd_fail(rd, CKPT_E_IO, "reader returned too much");
		p += r;
		n -= (size_t)r;
		rd->off += (uint64_t)r;
	}
	return 0;
}

int ckpt_rd_file_hdr(struct ckpt_rd *rd, struct ckpt_file_hdr *h)
{
	static const char magic[8] = CKPT_MAGIC;
	int r = rd_raw(rd, h, sizeof(*h));
	if (r)
		return r;
	for (int i = 0; i < 8; i++)
		if (h->magic[i] != (unsigned char)magic[i])
			return ckpt_rd_fail(rd, CKPT_E_MAGIC, "bad magic: not a msg checkpoint image");
	if (ckpt_crc32c(0, h, 60) != h->hdr_crc)
		return ckpt_rd_fail(rd, CKPT_E_CHECKSUM, "file header checksum mismatch");
	if (h->version != CKPT_IMAGE_VERSION)
		return ckpt_rd_fail(rd, CKPT_E_VERSION, "image version %u, this restorer reads version %u", h->version,
				    CKPT_IMAGE_VERSION);
	rd->precopy = (h->flags & CKPT_HF_PRECOPY) != 0;
	if (h->hdr_size != sizeof(*h) || h->page_size != CKPT_PAGE_SIZE || h->arch != CKPT_ARCH_X86_64)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "header: size %u page %u arch %u unsupported", h->hdr_size,
				    h->page_size, h->arch);
	return 0;
}

static int is_pages(uint32_t t)
{
	return t == CKPT_S_PAGES || t == CKPT_S_PRE_PAGES;
}

static uint64_t max_len(uint32_t type)
{
	if (is_pages(type))
		return sizeof(struct ckpt_pages) + (uint64_t)CKPT_MAX_PAGES_PER_SECT * CKPT_PAGE_SIZE;
	return CKPT_MAX_META_LEN;
}

/* Metadata types strictly in order 1..7, RUNTIME optional, then PAGES*, END. */
static int order_plain(uint32_t last, uint32_t t)
{
	if (t >= CKPT_S_IDENT && t <= CKPT_S_THREAD)
		return t == last + 1;
	if (t == CKPT_S_RUNTIME)
		return last == CKPT_S_THREAD;
	if (t == CKPT_S_PAGES || t == CKPT_S_END)
		return last >= CKPT_S_THREAD && last <= CKPT_S_PAGES;
	return 0;
}

/* Pre-copy: IDENT CPU MM PRE_VMAS PRE_PAGES*, then the plain order from MM. */
static int order_ok(struct ckpt_rd *rd, uint32_t t)
{
	uint32_t last = rd->last_type;
	if (!rd->precopy || rd->final)
		return order_plain(last, t);
	if (t == CKPT_S_PRE_VMAS)
		return last == CKPT_S_MM;
	if (t == CKPT_S_PRE_PAGES)
		return last == CKPT_S_PRE_VMAS || last == CKPT_S_PRE_PAGES;
	if (t == CKPT_S_MM && (last == CKPT_S_PRE_VMAS || last == CKPT_S_PRE_PAGES)) {
		rd->final = 1;
		return 1;
	}
	return t <= CKPT_S_MM && order_plain(last, t);
}

int ckpt_rd_sect(struct ckpt_rd *rd)
{
	struct ckpt_sect_hdr *h = &rd->cur;
	rd->cur_off = rd->off;
	int r = rd_raw(rd, h, sizeof(*h));
	if (r)
		return r;
	if (h->magic != CKPT_SECT_MAGIC)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "section %u: bad section magic at byte %llu", rd->seq,
				    (unsigned long long)rd->cur_off);
	if (ckpt_crc32c(0, h, 36) != h->hdr_crc)
		return ckpt_rd_fail(rd, CKPT_E_CHECKSUM, "section %u: header checksum mismatch at byte %llu", rd->seq,
				    (unsigned long long)rd->cur_off);
	if (h->seq != rd->seq)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "section seq %u, expected %u", h->seq, rd->seq);
	if (!order_ok(rd, h->type))
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "section %u: type %u out of order after %u", h->seq, h->type,
				    rd->last_type);
	int z = (h->flags & CKPT_SF_ZSTD) != 0;
	if ((h->flags & ~CKPT_SF_ZSTD) || (z && !is_pages(h->type)) || h->raw_len > max_len(h->type) ||
	    (!z && h->stored_len != h->raw_len) || (z && h->stored_len > h->raw_len + 65536))
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "section %u (type %u): bad flags/lengths", h->seq, h->type);
	rd->seq++;
	rd->last_type = h->type;
	rd->left = h->stored_len;
	rd->crc = 0;
	return (int)h->type;
}

int ckpt_rd_data(struct ckpt_rd *rd, void *dst, size_t n)
{
	if (n > rd->left)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "section %u: payload shorter than its contents", rd->cur.seq);
	int r = rd_raw(rd, dst, n);
	if (r)
		return r;
	rd->crc = ckpt_crc32c(rd->crc, dst, n);
	rd->left -= n;
	return 0;
}

int ckpt_rd_finish(struct ckpt_rd *rd)
{
	uint32_t want;
	if (rd->left)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "section %u: %llu unexpected payload bytes", rd->cur.seq,
				    (unsigned long long)rd->left);
	int r = rd_raw(rd, &want, sizeof(want));
	if (r)
		return r;
	if (want != rd->crc)
		return ckpt_rd_fail(rd, CKPT_E_CHECKSUM, "section %u (type %u) at byte %llu: payload checksum mismatch",
				    rd->cur.seq, rd->cur.type, (unsigned long long)rd->cur_off);
	return 0;
}

/* Reads the current (metadata) payload into buf at *used, 64-byte aligned. */
static int rd_payload(struct ckpt_rd *rd, unsigned char *buf, size_t cap, size_t *used, const void **out)
{
	size_t at = (*used + 63) & ~(size_t)63;
	if (rd->cur.raw_len > cap || at > cap - rd->cur.raw_len)
		return ckpt_rd_fail(rd, CKPT_E_NOMEM, "metadata larger than the %llu-byte buffer",
				    (unsigned long long)cap);
	int r = ckpt_rd_data(rd, buf + at, rd->cur.raw_len);
	if (!r)
		r = ckpt_rd_finish(rd);
	*out = buf + at;
	*used = at + rd->cur.raw_len;
	return r;
}

static int want_len(struct ckpt_rd *rd, uint64_t n)
{
	if (rd->cur.raw_len != n)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "section %u (type %u): length %llu, expected %llu", rd->cur.seq,
				    rd->cur.type, (unsigned long long)rd->cur.raw_len, (unsigned long long)n);
	return 0;
}

static int want_array(struct ckpt_rd *rd, uint64_t elem, uint32_t max, uint32_t *n)
{
	if (rd->cur.raw_len % elem || rd->cur.raw_len / elem > max)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "section %u (type %u): bad array length %llu", rd->cur.seq,
				    rd->cur.type, (unsigned long long)rd->cur.raw_len);
	*n = (uint32_t)(rd->cur.raw_len / elem);
	return 0;
}

static int store(struct ckpt_rd *rd, struct ckpt_meta *m, const void *p)
{
	switch (rd->cur.type) {
	case CKPT_S_IDENT:
		m->files = p;
		break;
	case CKPT_S_CPU:
		m->cpu = p;
		break;
	case CKPT_S_MM:
		m->mm = p;
		break;
	case CKPT_S_VMAS:
		m->vmas = p;
		break;
	case CKPT_S_PRE_VMAS:
		m->pre_vmas = p;
		break;
	case CKPT_S_FILES:
		m->fds = p;
		break;
	case CKPT_S_SIGNALS:
		m->sig = p;
		break;
	case CKPT_S_THREAD:
		m->th = p;
		m->xsave = (const unsigned char *)p + sizeof(struct ckpt_thread);
		m->xsave_len = m->th->xsave_len;
		if (rd->cur.raw_len != sizeof(struct ckpt_thread) + (uint64_t)m->xsave_len)
			return ckpt_rd_fail(rd, CKPT_E_FORMAT, "THREAD: xsave_len %u does not match section length",
					    m->xsave_len);
		break;
	case CKPT_S_RUNTIME:
		m->runtime = p;
		m->runtime_len = rd->cur.raw_len;
		break;
	}
	return 0;
}

static int check_len(struct ckpt_rd *rd, struct ckpt_meta *m)
{
	switch (rd->cur.type) {
	case CKPT_S_IDENT:
		return want_array(rd, sizeof(struct ckpt_file_ent), CKPT_MAX_FILES, &m->n_files);
	case CKPT_S_CPU:
		return want_len(rd, sizeof(struct ckpt_cpu));
	case CKPT_S_MM:
		return want_len(rd, sizeof(struct ckpt_mm));
	case CKPT_S_VMAS:
		return want_array(rd, sizeof(struct ckpt_vma), CKPT_MAX_VMAS, &m->n_vmas);
	case CKPT_S_PRE_VMAS:
		return want_array(rd, sizeof(struct ckpt_vma), CKPT_MAX_VMAS, &m->n_pre_vmas);
	case CKPT_S_FILES:
		return want_array(rd, sizeof(struct ckpt_fd), CKPT_MAX_FDS, &m->n_fds);
	case CKPT_S_SIGNALS:
		return want_len(rd, sizeof(struct ckpt_signals));
	case CKPT_S_THREAD:
		if (rd->cur.raw_len < sizeof(struct ckpt_thread) + 576 || rd->cur.raw_len > sizeof(struct ckpt_thread) + 65536)
			return ckpt_rd_fail(rd, CKPT_E_FORMAT, "THREAD: bad length %llu",
					    (unsigned long long)rd->cur.raw_len);
		return 0;
	}
	return 0;
}

/* Metadata sections until page data, END, or the final part of a pre-copy
 * stream begins (rd->cur is then that section, its payload unread). */
static int read_sections(struct ckpt_rd *rd, struct ckpt_meta *m, void *buf, size_t cap, int have_cur)
{
	int was_final = rd->final;
	for (;;) {
		int t = have_cur ? (int)rd->cur.type : ckpt_rd_sect(rd);
		have_cur = 0;
		if (t < 0)
			return t;
		if (is_pages(t) || t == CKPT_S_END || rd->final != was_final)
			return 0;
		const void *p = 0;
		int r = check_len(rd, m);
		if (!r)
			r = rd_payload(rd, buf, cap, &m->used, &p);
		if (!r)
			r = store(rd, m, p);
		if (r)
			return r;
	}
}

int ckpt_read_meta(struct ckpt_rd *rd, struct ckpt_meta *m, void *buf, size_t cap)
{
	struct ckpt_file_hdr h;
	unsigned char *z = (unsigned char *)m;
	for (size_t i = 0; i < sizeof(*m); i++)
		z[i] = 0;
	int r = ckpt_rd_file_hdr(rd, &h);
	if (!r)
		r = read_sections(rd, m, buf, cap, 0);
	if (r)
		return r;
	m->precopy = rd->precopy;
	if (rd->precopy)
		return ckpt_meta_check_pre(rd, m);
	return ckpt_meta_check(rd, m);
}

int ckpt_read_final_meta(struct ckpt_rd *rd, struct ckpt_meta *m, void *buf, size_t cap)
{
	if (!rd->precopy || !rd->final || rd->cur.type != CKPT_S_MM)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "expected the final MM section of a pre-copy stream");
	int r = read_sections(rd, m, buf, cap, 1);
	if (!r)
		r = ckpt_meta_check(rd, m);
	if (!r)
		r = ckpt_meta_check_precopied(rd, m);
	return r;
}

int ckpt_vma_carries_data(const struct ckpt_vma *v)
{
	if (v->flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR | CKPT_VMA_VSYSCALL | CKPT_VMA_SHARED))
		return 0;
	return (v->flags & (CKPT_VMA_ANON | CKPT_VMA_FILE)) != 0;
}

/* Binary search: the VMA holding addr, or 0. */
static const struct ckpt_vma *find_vma(const struct ckpt_vma *vmas, uint32_t n, uint64_t addr)
{
	uint32_t lo = 0, hi = n;
	if (!vmas)
		return 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct ckpt_vma *v = &vmas[mid];
		if (addr < v->start)
			hi = mid;
		else if (addr >= v->end)
			lo = mid + 1;
		else
			return v;
	}
	return 0;
}

int ckpt_rd_pages(struct ckpt_rd *rd, const struct ckpt_meta *m, struct ckpt_pages *ph, const struct ckpt_vma **vma)
{
	if (!is_pages(rd->cur.type))
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "expected PAGES section");
	int r = ckpt_rd_data(rd, ph, sizeof(*ph));
	if (r)
		return r;
	int pre = rd->cur.type == CKPT_S_PRE_PAGES;
	const struct ckpt_vma *v = find_vma(pre ? m->pre_vmas : m->vmas, pre ? m->n_pre_vmas : m->n_vmas, ph->addr);
	uint64_t bytes = ph->npages * CKPT_PAGE_SIZE;
	if (ph->npages == 0 || ph->npages > CKPT_MAX_PAGES_PER_SECT || (ph->addr & (CKPT_PAGE_SIZE - 1)) || !v ||
	    !ckpt_vma_carries_data(v) || bytes > v->end - ph->addr)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "PAGES section %u: run %p+%llu pages outside any data VMA",
				    rd->cur.seq, (void *)(uintptr_t)ph->addr, (unsigned long long)ph->npages);
	if (rd->cur.raw_len != sizeof(*ph) + bytes)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "PAGES section %u: length does not match %llu pages",
				    rd->cur.seq, (unsigned long long)ph->npages);
	rd->n_pages += ph->npages;
	*vma = v;
	return 0;
}

int ckpt_rd_end(struct ckpt_rd *rd)
{
	struct ckpt_end e;
	uint64_t at = rd->cur_off;
	uint32_t nsect = rd->cur.seq;
	if (rd->cur.type != CKPT_S_END)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "expected END section");
	if (rd->cur.raw_len != sizeof(e))
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "END: bad length");
	int r = ckpt_rd_data(rd, &e, sizeof(e));
	if (!r)
		r = ckpt_rd_finish(rd);
	if (r)
		return r;
	if (e.n_sections != nsect || e.n_pages != rd->n_pages || e.stream_bytes != at)
		return ckpt_rd_fail(rd, CKPT_E_FORMAT, "END: counts differ (sections %llu/%u pages %llu/%llu)",
				    (unsigned long long)e.n_sections, nsect, (unsigned long long)e.n_pages,
				    (unsigned long long)rd->n_pages);
	return 0;
}
