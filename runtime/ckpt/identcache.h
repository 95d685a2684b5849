/* SPDX-License-Identifier: MIT */
/*
 * Per-host cache of file identities (CRC-32C of the whole content), shared
 * by every capture and every restorer of one user on the host: hashing libc
 * and the executable on each capture and again on each restore was the
 * largest fixed cost of a small checkpoint.  An entry is valid while the
 * file's (dev, ino, size, mtime, ctime) are unchanged: any write or
 * truncate moves ctime, and ctime cannot be set from user space.
 *
 * File: CKPT_IDCACHE_DIR "/msg-ckpt-ident-<euid>", CKPT_IDCACHE_N entries
 * of struct ckpt_idc_ent; used only if it is a regular file owned by the
 * euid with no group/other permissions.  Replaced whole (temporary file +
 * rename), so readers never see a torn table; each entry also carries its
 * own CRC.  Freestanding: the I/O is the caller's.
 */
#ifndef MSG_CKPT_IDENTCACHE_H
#define MSG_CKPT_IDENTCACHE_H

#include <stdint.h>

#define CKPT_IDCACHE_DIR "/dev/shm"
#define CKPT_IDCACHE_N 256u

struct ckpt_idc_ent {
	uint64_t dev, ino, size, mtime_ns, ctime_ns;
	uint32_t crc;   /* the file's content CRC-32C */
	uint32_t check; /* crc32c of the 44 bytes above; 0 = empty slot */
};

struct ckpt_idc_key {
	uint64_t dev, ino, size, mtime_ns, ctime_ns;
};

/* 1 and *crc if tab holds key. */
int ckpt_idc_lookup(const struct ckpt_idc_ent *tab, const struct ckpt_idc_key *k, uint32_t *crc);
/* Puts key -> crc into tab (same file's slot, else a free one, else by inode). */
void ckpt_idc_insert(struct ckpt_idc_ent *tab, const struct ckpt_idc_key *k, uint32_t crc);
/* "<dir>/msg-ckpt-ident-<uid>" and the temporary "<...>.<pid>" into buf. */
void ckpt_idc_path(char *buf, unsigned cap, unsigned long uid, long tmp_pid);

#endif
