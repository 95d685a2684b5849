/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's view of the shared image format (runtime/ckpt/image.h,
 * normative; docs/image-format.md explains it): the error codes reported in
 * msgmig_*.reason and the stream writer/reader used by save and restore.
 */
#ifndef MSGMIG_FMT_H
#define MSGMIG_FMT_H

#include <linux/types.h>
#include <linux/build_bug.h>
#include "image.h"	/* runtime/ckpt/image.h, found through ccflags -I */

#define MSGMIG_IMAGE_VERSION CKPT_IMAGE_VERSION

/* Mirrors runtime/ckpt/ckpt.h (docs/image-format.md section 4). */
enum {
	CKPT_E_IO = -1, CKPT_E_NOMEM = -2, CKPT_E_THREADS = -3,
	CKPT_E_SOCKET = -4, CKPT_E_PIPE = -5, CKPT_E_IO_URING = -6,
	CKPT_E_FDKIND = -7, CKPT_E_SHARED = -8, CKPT_E_RESERVED = -9,
	CKPT_E_PROC = -10, CKPT_E_INVAL = -11,
	CKPT_E_MAGIC = -20, CKPT_E_VERSION = -21, CKPT_E_TRUNCATED = -22,
	CKPT_E_CHECKSUM = -23, CKPT_E_FORMAT = -24, CKPT_E_EXE = -25,
	CKPT_E_LIB = -26, CKPT_E_VDSO = -27, CKPT_E_CPU = -28,
	CKPT_E_FILE = -29, CKPT_E_MAP = -30, CKPT_E_COMPRESS = -31,
	CKPT_E_KERNEL = -32,
};

static_assert(sizeof(struct ckpt_file_hdr) == 64);
static_assert(sizeof(struct ckpt_sect_hdr) == 40);
static_assert(sizeof(struct ckpt_file_ent) == 32 + CKPT_PATH_MAX);
static_assert(sizeof(struct ckpt_cpu) == 320);
static_assert(sizeof(struct ckpt_vma) == 40);
static_assert(sizeof(struct ckpt_fd) == 40 + CKPT_PATH_MAX);
static_assert(sizeof(struct ckpt_regs) == 27 * 8);
static_assert(sizeof(struct ckpt_thread) == 27 * 8 + 40);
static_assert(sizeof(struct ckpt_pages) == 16);
static_assert(sizeof(struct ckpt_end) == 24);

/* Why an operation failed, reported to user space beside the errno. */
struct mm_err {
	int reason;		/* CKPT_E_* or 0 */
	char detail[128];
};

__printf(4, 5)
int mm_fail(struct mm_err *e, int err, int reason, const char *fmt, ...);

/* crc.c: CRC-32C as the format defines it (init ~0, final xor ~0). */
u32 mm_crc32c(const void *p, size_t n);
u32 mm_crc32c_update(u32 state, const void *p, size_t n); /* raw state */
#define MM_CRC_INIT 0xffffffffu
#define mm_crc32c_final(s) ((s) ^ 0xffffffffu)
int mm_crc_selftest(void);

struct file;
/* ident.c: size, CRC-32C of the whole content, and mtime of a file. */
int mm_hash_file(struct file *file, u64 *size, u32 *crc, u64 *mtime_ns);

#endif /* MSGMIG_FMT_H */
