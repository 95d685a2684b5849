/* SPDX-License-Identifier: GPL-2.0 */
/* State of one RESTORE (or IMAGE_INFO) in the calling process. */
#ifndef MSGMIG_RESTORE_H
#define MSGMIG_RESTORE_H

#include "msgmig.h"
#include "reader.h"

struct file;

struct mm_restore {
	struct mm_buf buf;		/* the whole image */
	struct mm_image im;
	struct mm_err *e;
	struct file **map_files;	/* per IDENT entry, opened read-only */
	struct file **fd_files;		/* per FILES entry; NULL for STDIO */
};

/* restore_load.c: everything that may fail before the point of no return. */
int mmr_load(struct mm_restore *r, int fd, bool keep_pos);
int mmr_check_target(struct mm_restore *r);
int mmr_open_files(struct mm_restore *r);
void mmr_free(struct mm_restore *r);

/* restore_fpu.c */
int mmr_check_fpu(struct mm_restore *r);
void mmr_fpu(struct mm_restore *r);

/* restore_mem.c */
int mmr_replace_mm(struct mm_restore *r);
int mmr_check_compressed(struct mm_restore *r);

/* restore_state.c */
int mmr_install_fds(struct mm_restore *r);
void mmr_signals(struct mm_restore *r);
long mmr_thread(struct mm_restore *r);

#endif
