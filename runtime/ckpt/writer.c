/* SPDX-License-Identifier: MIT */
/* Section framing on the output stream: header | payload | crc32c.
 * writev straight from the process's pages: no staging copy. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "capture_int.h"
#include "ksys.h"
#include "crc32c.h"

#define ZSTD_LEVEL 1

static int write_iov1(struct ckpt_ctx *c, struct iovec *v, int n);

/* errno is the application's, in libc's TLS block, which is written to the
 * image after this (sendmsg on a file fails with ENOTSOCK, a full
 * non-blocking socket gives EAGAIN): the capture's own failures must not
 * reach the image (t_tls).  v is consumed. */
static int write_iov(struct ckpt_ctx *c, struct iovec *v, int n)
{
	int saved = errno;
	int r = write_iov1(c, v, n);
	errno = saved;
	return r;
}

static int write_iov1(struct ckpt_ctx *c, struct iovec *v, int n)
{
	if (c->dry) { /* ckpt_prewarm: the write path runs, nothing is sent */
		for (int i = 0; i < n; i++)
			c->off += v[i].iov_len;
		return 0;
	}
	while (n > 0) {
		int k = n > CKPT_GATHER_IOV ? CKPT_GATHER_IOV : n;
		/* sendmsg with MSG_NOSIGNAL on a socket: a reader that is gone is
		 * an error for the capture, not a SIGPIPE that kills the process
		 * (pre-copy writes the stream from the process itself) */
		struct msghdr mh = { .msg_iov = v, .msg_iovlen = (size_t)k };
		ssize_t r = c->out_not_sock ? -1 : k_sendmsg(c->out_fd, &mh, MSG_NOSIGNAL);
		if (!c->out_not_sock && r < 0 && errno == ENOTSOCK)
			c->out_not_sock = 1;
		if (c->out_not_sock)
			r = k_writev(c->out_fd, v, k);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN) { /* non-blocking socket: wait, never spin */
			struct pollfd p = { c->out_fd, POLLOUT, 0 };
			poll(&p, 1, 1000);
			continue;
		}
		if (r <= 0)
			return ckpt_fail(c, CKPT_E_IO, "writing image at byte %llu: %s", (unsigned long long)c->off,
					 r < 0 ? strerror(errno) : "short write");
		c->off += (uint64_t)r;
		while (n > 0 && (size_t)r >= v->iov_len) {
			r -= (ssize_t)v->iov_len;
			v++, n--;
		}
		if (n > 0) {
			v->iov_base = (char *)v->iov_base + r;
			v->iov_len -= (size_t)r;
		}
	}
	return 0;
}

/* CRCs left for later (defer) are due when the bytes leave now. */
void ckpt_fix_crcs(struct ckpt_ctx *c)
{
	for (uint32_t i = 0; i < c->n_fix; i++) {
		uint32_t crc = ckpt_crc32c(0, c->obuf + c->fix[i].off, c->fix[i].len);
		memcpy(c->obuf + c->fix[i].off + c->fix[i].len, &crc, 4);
	}
	c->n_fix = 0;
}

/* refs: the obuf bytes gathered since the last piece become one. */
static void close_seg(struct ckpt_ctx *c)
{
	if (c->olen > c->gseg)
		c->gv[c->gn++] = (struct iovec){ c->obuf + c->gseg, c->olen - c->gseg };
	c->gseg = c->olen;
}

int ckpt_flush(struct ckpt_ctx *c)
{
	ckpt_fix_crcs(c);
	if (c->gn) {
		close_seg(c);
		int n = (int)c->gn;
		c->gn = 0, c->olen = c->gseg = c->gbytes = 0;
		return write_iov(c, c->gv, n);
	}
	if (!c->olen)
		return 0;
	struct iovec v = { c->obuf, c->olen };
	c->olen = c->gseg = 0;
	return write_iov(c, &v, 1);
}

/* Small writes (headers, single scattered pages) are gathered: one syscall
 * per 4 KiB page section would cost more than the copy.  With refs, a
 * piece at least this long is gathered by reference: copying the ~100 KiB
 * of scattered pages of a small process touched as many fresh obuf pages,
 * a page fault (~2 us here) each. */
#define REF_MIN 512

int ckpt_write_all(struct ckpt_ctx *c, const void *iov_in, int n)
{
	const struct iovec *iov = iov_in;
	size_t total = 0;
	for (int i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (!c->obuf)
		c->obuf = ckpt_alloc(&c->a, CKPT_OBUF);
	if (c->refs && !c->gv)
		c->gv = ckpt_alloc(&c->a, sizeof(*c->gv) * CKPT_GATHER_IOV);
	size_t cap = c->ocap ? c->ocap : CKPT_OBUF;
	if (!c->obuf || (c->refs && !c->gv) || total > (c->defer ? cap : CKPT_OBUF / 8)) {
		int r = ckpt_flush(c);
		struct iovec v[8];
		if (r || n > 8)
			return r ? r : ckpt_fail(c, CKPT_E_INVAL, "%d pieces", n);
		memcpy(v, iov, sizeof(*v) * (size_t)n);
		return write_iov(c, v, n);
	}
	/* full: the sink (obuf, or the list of pieces) is written now */
	if (c->olen + total > cap || (c->refs && c->gn + 2 * (uint32_t)n + 1 > CKPT_GATHER_IOV)) {
		int r = ckpt_flush(c);
		if (r)
			return r;
	}
	for (int i = 0; i < n; i++) {
		if (c->refs && iov[i].iov_len >= REF_MIN && iov[i].iov_base != c->bounce && iov[i].iov_base != c->zbuf) {
			close_seg(c);
			c->gv[c->gn++] = iov[i];
			c->gbytes += iov[i].iov_len;
			continue;
		}
		memcpy(c->obuf + c->olen, iov[i].iov_base, iov[i].iov_len);
		c->olen += iov[i].iov_len;
	}
	return 0;
}

int ckpt_write_hdr(struct ckpt_ctx *c)
{
	struct ckpt_file_hdr h;
	struct timespec ts;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CKPT_MAGIC, 8);
	h.version = CKPT_IMAGE_VERSION;
	h.hdr_size = sizeof(h);
	h.flags = c->hflags;
	h.page_size = CKPT_PAGE_SIZE;
	h.arch = CKPT_ARCH_X86_64;
	clock_gettime(CLOCK_REALTIME, &ts);
	h.created_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	h.src_pid = (uint64_t)k_getpid();
	h.hdr_crc = ckpt_crc32c(0, &h, 60);
	struct iovec v = { &h, sizeof(h) };
	return ckpt_write_all(c, &v, 1);
}

static void sect_hdr(struct ckpt_ctx *c, struct ckpt_sect_hdr *h, uint32_t type, uint32_t flags, uint64_t stored,
		     uint64_t raw)
{
	memset(h, 0, sizeof(*h));
	h->magic = CKPT_SECT_MAGIC;
	h->type = type;
	h->flags = flags;
	h->seq = c->seq++;
	h->stored_len = stored;
	h->raw_len = raw;
	h->hdr_crc = ckpt_crc32c(0, h, 36);
}

/* One section from up to two payload pieces. */
static int write_sect2(struct ckpt_ctx *c, uint32_t type, uint32_t flags, const void *a, size_t alen, const void *b,
		       size_t blen, uint64_t raw)
{
	struct ckpt_sect_hdr h;
	uint32_t crc = 0;
	size_t cap = c->ocap ? c->ocap : CKPT_OBUF;
	/* Gathered into the sink: the helper computes the CRC (off the stop). */
	int later = c->defer && c->fix && c->n_fix < c->cap_fix &&
		    c->olen + sizeof(h) + alen + blen + 4 <= cap;
	if (c->dry)
		; /* ckpt_prewarm: nothing is sent */
	else if (!later)
		crc = ckpt_crc32c(ckpt_crc32c(0, a, alen), b, blen);
	else
		c->fix[c->n_fix++] = (struct ckpt_crc_fix){ c->olen + sizeof(h), alen + blen };
	sect_hdr(c, &h, type, flags, alen + blen, raw);
	struct iovec v[4] = { { &h, sizeof(h) }, { (void *)a, alen }, { (void *)b, blen }, { &crc, 4 } };
	return ckpt_write_all(c, v, 4);
}

int ckpt_write_sect(struct ckpt_ctx *c, uint32_t type, const void *p, size_t len)
{
	return write_sect2(c, type, 0, p, len, NULL, 0, len);
}

int ckpt_zstd_init(struct ckpt_ctx *c)
{
	size_t ws = ZSTD_estimateCCtxSize(ZSTD_LEVEL);
	void *w = ckpt_alloc(&c->a, ws);
	c->zcap = ZSTD_compressBound((size_t)CKPT_MAX_PAGES_PER_SECT * CKPT_PAGE_SIZE);
	c->zbuf = ckpt_alloc(&c->a, c->zcap);
	c->zctx = w ? ZSTD_initStaticCCtx(w, ws) : NULL;
	if (!c->zctx || !c->zbuf)
		return ckpt_fail(c, CKPT_E_NOMEM, "no room for the zstd context");
	return 0;
}

int ckpt_write_pages_sect(struct ckpt_ctx *c, uint64_t addr, uint64_t npages, const void *data)
{
	struct ckpt_pages ph = { addr, npages };
	size_t bytes = npages * CKPT_PAGE_SIZE;
	c->n_pages += npages;
	if (c->zctx) {
		size_t z = ZSTD_compressCCtx(c->zctx, c->zbuf, c->zcap, data, bytes, ZSTD_LEVEL);
		if (!ZSTD_isError(z) && z < bytes) /* store raw when it does not pay */
			return write_sect2(c, c->pages_type, CKPT_SF_ZSTD, &ph, sizeof(ph), c->zbuf, z,
					   sizeof(ph) + bytes);
	}
	return write_sect2(c, c->pages_type, 0, &ph, sizeof(ph), data, bytes, sizeof(ph) + bytes);
}

int ckpt_write_end(struct ckpt_ctx *c)
{
	struct ckpt_end e = { c->seq, c->n_pages, c->off + c->olen + c->gbytes };
	int r = ckpt_write_sect(c, CKPT_S_END, &e, sizeof(e));
	return r || c->defer ? r : ckpt_flush(c);
}
