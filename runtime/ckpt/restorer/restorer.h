/* SPDX-License-Identifier: MIT */
/* msg-restore: phases of a restore, in the order main() runs them. */
#ifndef MSG_RESTORER_H
#define MSG_RESTORER_H

#include "../image_reader.h"
#include "rt.h"

#define R_MAX_KEEP 16

struct r_opts {
	int check_only;
	int verbose;
	int img_fd;
	int ready_fd; /* -1: none */
	int wait_fd;  /* -1: none; else a spare: the image's descriptor comes on it */
	int keep[R_MAX_KEEP];
	int n_keep;
};

/* Scratch in the restorer's bss: reads for identity hashing, check-only
 * page data, /proc/self/maps. */
extern unsigned char r_scratch[(CKPT_MAX_PAGES_PER_SECT + 1) * CKPT_PAGE_SIZE];
extern char r_maps[1 << 20];

/* verify.c: every check that needs no change of the address space. */
void r_verify(const struct ckpt_meta *m);
/* Before the image's first byte: the host's side of the checks (CPU,
 * identity cache, vDSO), and r_detach_self unless check_only. */
void r_prestart(int check_only);
/* A spare started long before its image: what the host may have learnt
 * since (the identity cache) is read again. */
void r_prestart_again(void);
/* The XSAVE area XRSTOR will load (pre-copy: known only at the final part). */
void r_verify_xsave(const struct ckpt_meta *m);
/* layout.c */
/* Our own file-backed segments become anonymous copies (PR_SET_MM_MAP
 * refuses a new /proc/self/exe while the old one is mapped). */
void r_detach_self(void);
void r_teardown(void);
extern int r_torn_down; /* r_prestart did r_teardown (nothing mapped outside our range since) */
void r_place_vdso(const struct ckpt_meta *m);
void r_map_vmas(const struct ckpt_meta *m);
/* Descriptors of the image's files by index (0: none yet); r_verify leaves
 * the files it checked of a plain image open here, so the file mapped is
 * the one checked and is not looked up twice; r_map_vmas closes them. */
extern long r_file_fds[CKPT_MAX_FILES];
/* Before page data is read into v (a VMA of m->vmas): write access. */
/* Makes v writable for a PAGES run; 1 if the run goes through /proc/self/mem
 * instead (a read-only private file VMA: RELRO), 0 if written in place. */
int r_open_for_pages(const struct ckpt_meta *m, const struct ckpt_vma *v);
/* /proc/self/mem, opened before READY (r_prestart); -1 if not available. */
extern long r_mem_fd;
void r_open_mem(void);
int r_open_for_pages2(const struct ckpt_meta *m, const struct ckpt_vma *v, int via_mem);
void r_final_protect(const struct ckpt_meta *m);
/* Pre-copy: maps PRE_VMAS; after the final metadata, drops what the final
 * layout no longer has (PRECOPIED VMAs keep their pages). */
void r_map_pre_vmas(const struct ckpt_meta *m);
void r_reconcile_pre(const struct ckpt_meta *m);
/* pages_in.c: PAGES sections until END (into place, or scratch if check_only). */
void r_load_pages(struct ckpt_rd *rd, const struct ckpt_meta *m, int check_only);
/* PRE_PAGES sections until the final part begins. */
void r_load_pre_pages(struct ckpt_rd *rd, const struct ckpt_meta *m, int check_only);
/* zstd_in.c: compressed PAGES payload (rd->left bytes) -> raw bytes at dst. */
void r_zstd_init(void);
void r_zstd_read(struct ckpt_rd *rd, void *dst, size_t raw);
/* state.c */
void r_restore_fds(const struct ckpt_meta *m, const struct r_opts *o);
void r_restore_misc(const struct ckpt_meta *m);
void r_restore_signals(const struct ckpt_meta *m);
/* Before READY: the restorer's own signal actions (r_restore_signals then
 * sets only those that differ). */
void r_read_own_signals(void);
void r_restore_mm(const struct ckpt_meta *m);
void r_restore_thread(const struct ckpt_meta *m);

/* start.S */
__attribute__((noreturn)) void r_jump(const struct ckpt_regs *r, const void *xsave, uint64_t rfbm,
				      const uint64_t *sigmask);

#endif
