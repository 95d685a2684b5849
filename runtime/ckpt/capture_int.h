/* SPDX-License-Identifier: MIT */
/* Internal state of one capture.  Everything here lives in a private arena
 * mapping that is left out of the image, so the capture never writes to
 * memory it is saving (heap, globals) while pages are being streamed. */
#ifndef MSG_CKPT_CAPTURE_INT_H
#define MSG_CKPT_CAPTURE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ckpt.h"
#include "image.h"

#define CKPT_MAX_EXCL 12

struct arena {
	unsigned char *base;
	size_t cap, used;
};

struct ckpt_ctx {
	struct arena a;
	const struct ckpt_opts *o;
	struct ckpt_error *err;
	int out_fd;
	uint32_t hflags;
	const char *status; /* /proc/self/status, read once per collection */
	int out_not_sock;   /* out_fd is no socket: writev, not sendmsg */
	int dry;            /* ckpt_prewarm: collect only, go on past refusals */
	int keep_arena;     /* ckpt_capture, ckpt_prewarm: the arena is kept after */

	struct ckpt_file_ent *files;
	uint32_t n_files, cap_files;
	struct ckpt_vma *vmas;
	uint32_t n_vmas, cap_vmas;
	struct ckpt_fd *fds;
	uint32_t n_fds, cap_fds;
	struct ckpt_cpu cpu;
	struct ckpt_mm mm;
	struct ckpt_signals sig;
	struct ckpt_thread th;
	void *xsave; /* 64-byte aligned, th.xsave_len bytes */

	uintptr_t ex_start[CKPT_MAX_EXCL], ex_end[CKPT_MAX_EXCL];
	int n_ex;

	/* writer */
	uint32_t seq;
	uint64_t off, n_pages;
	void *zctx, *zbuf;
	size_t zcap;
	void *bounce; /* CKPT_MAX_PAGES_PER_SECT pages for unreadable memory */
	int mem_fd, pagemap_fd;
	uint32_t pages_type;    /* CKPT_S_PAGES, or CKPT_S_PRE_PAGES while pre-copying */
	int own_fds[4];         /* the engine's own descriptors: never in the image */
	uint64_t *pm;           /* pagemap buffer, CKPT_MAX_PAGES_PER_SECT entries */
	struct ckpt_page_region *scan_vec; /* PAGEMAP_SCAN results (pages.c) */
	int no_scan;           /* this kernel has no PAGEMAP_SCAN */
	unsigned char *obuf;    /* gathered small writes */
	size_t olen;
	size_t ocap;            /* obuf capacity (0: CKPT_OBUF) */
	int defer;              /* obuf is a sink sent later by a helper (pre-copy stop): gather everything */
	/* defer: payload CRCs left for the helper (offset, length in obuf;
	 * the CRC goes right after the payload) */
	struct ckpt_crc_fix {
		uint64_t off, len;
	} *fix;
	uint32_t n_fix, cap_fix;
	/* refs (ckpt_capture only: the memory stays as it is until the last
	 * flush): payloads are gathered by reference, not copied into obuf;
	 * gv lists the pieces in stream order, obuf from gseg on is not in it yet */
	int refs;
	struct iovec *gv;
	uint32_t gn;
	size_t gseg, gbytes; /* gbytes: referenced bytes not yet written */
};

#define CKPT_OBUF (1u << 20)
#define CKPT_GATHER_IOV 1024 /* UIO_MAXIOV: one sendmsg */

/* capture.c: shared with precopy.c */
#include <signal.h>
int ckpt_prepare(struct ckpt_ctx **cp, int out_fd, const struct ckpt_opts *o, struct ckpt_error *err, sigset_t *old);
int ckpt_prepare_bare(struct ckpt_ctx **cp, int out_fd, const struct ckpt_opts *o, struct ckpt_error *err,
		      sigset_t *old);
int ckpt_collect(struct ckpt_ctx *c, const uint64_t *blocked);
void ckpt_finish_ctx(struct ckpt_ctx *c, const sigset_t *old);
int ckpt_on_restored(void);

/* capture_err.c */
int ckpt_fail(struct ckpt_ctx *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* MSG_CKPT_TRACE=1: phase's CPU time since the last call on stderr (NULL: start) */
void ckpt_trace(const char *phase);
/* /proc/self/status of this collection (read on first use), NULL if unreadable */
const char *ckpt_status(struct ckpt_ctx *c);
long ckpt_status_field(const char *s, const char *name, long dflt);

/* arena.c */
int ckpt_arena_init(struct arena *a, size_t cap);
void ckpt_arena_free(struct arena *a);
/* A synchronous capture's arena: the last one's, kept and zeroed
 * (ckpt_arena_keep), or a fresh one; drop_kept unmaps the kept one. */
int ckpt_arena_take(struct arena *a, size_t cap);
void ckpt_arena_keep(struct arena *a);
void ckpt_arena_drop_kept(void);
void *ckpt_alloc(struct arena *a, size_t n); /* zeroed, 64-byte aligned; NULL if full */
/* Reads a whole /proc file into the arena, NUL-terminated. */
char *ckpt_read_proc(struct ckpt_ctx *c, const char *path, size_t *len);

/* maps.c: VMAs (minus excluded ranges) and the file table; refusals. */
int ckpt_collect_vmas(struct ckpt_ctx *c);
/* ident.c */
int ckpt_collect_ident(struct ckpt_ctx *c);
/* fds.c */
int ckpt_collect_fds(struct ckpt_ctx *c);
int ckpt_check_threads(struct ckpt_ctx *c);
/* refuse.c: locks, SysV undo, seccomp, mlock (marks CKPT_VMA_LOCKED) */
int ckpt_check_fd_locks(struct ckpt_ctx *c, int fd, const char *link);
int ckpt_check_process(struct ckpt_ctx *c);
int ckpt_probe_mcl_future(struct ckpt_error *err);
/* procstate.c: mm, signals, thread misc. */
int ckpt_collect_mm(struct ckpt_ctx *c);
int ckpt_collect_signals(struct ckpt_ctx *c, const uint64_t *blocked);
int ckpt_collect_thread(struct ckpt_ctx *c);

/* writer.c */
int ckpt_write_all(struct ckpt_ctx *c, const void *iov, int n);
int ckpt_flush(struct ckpt_ctx *c);
void ckpt_fix_crcs(struct ckpt_ctx *c);
int ckpt_write_hdr(struct ckpt_ctx *c);
int ckpt_write_sect(struct ckpt_ctx *c, uint32_t type, const void *p, size_t len);
int ckpt_write_pages_sect(struct ckpt_ctx *c, uint64_t addr, uint64_t npages, const void *data);
int ckpt_write_end(struct ckpt_ctx *c);
int ckpt_zstd_init(struct ckpt_ctx *c);

/* pages.c */
int ckpt_write_memory(struct ckpt_ctx *c);
/* Carries the pages of [start,end) inside v by pagemap classification; marks
 * pages sent in `sent` (bit per page from v_base) if non-NULL. */
int ckpt_write_range(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t start, uint64_t end, uint64_t *sent,
		     uint64_t base);
/* Writes n pages at addr as they are now (bounce for our stack/unreadable). */
int ckpt_write_run(struct ckpt_ctx *c, const struct ckpt_vma *v, uint64_t addr, uint64_t n);
/* image_out.c pieces */
int ckpt_open_proc_fds(struct ckpt_ctx *c);
void ckpt_close_proc_fds(struct ckpt_ctx *c);
int ckpt_write_meta_final(struct ckpt_ctx *c);

/* image_out.c: the whole stream, header to END. */
int ckpt_write_image(struct ckpt_ctx *c);

/* arch_x86_64.S: like setjmp: 0 now, 1 when resumed from an image. */
int ckpt_arch_save(struct ckpt_regs *r, void *xsave, uint64_t xcr0) __attribute__((returns_twice));

#endif
