/* SPDX-License-Identifier: GPL-2.0 */
/* What a capture gathers from a stopped target before writing the image. */
#ifndef MSGMIG_SAVE_H
#define MSGMIG_SAVE_H

#include "writer.h"

struct task_struct;
struct mm_struct;
struct file;

struct mm_capture {
	struct task_struct *task;
	struct mm_struct *mm;
	struct mm_err *e;

	struct ckpt_file_ent *ents;	/* IDENT, exe first */
	struct file **ent_files;	/* a reference per entry */
	u32 nr_ents, cap_ents;

	struct ckpt_vma *vmas;		/* VMAS, address order */
	u32 nr_vmas, cap_vmas;

	struct ckpt_fd *fds;		/* FILES */
	u32 nr_fds;

	struct ckpt_cpu cpu;
	struct ckpt_mm mmi;
	struct ckpt_signals sig;
	struct ckpt_thread th;
	void *xsave;			/* standard-format XSAVE area */
	u32 xsave_len;

	u64 rt_addr, rt_len;		/* target bytes for RUNTIME, if any */
	const struct msgmig_save *arg;	/* exclusions */
};

bool mmc_fd_excluded(const struct mm_capture *c, unsigned int fd);

/* save_mem.c */
int mmc_collect_vmas(struct mm_capture *c);
int mmc_ident(struct mm_capture *c);
int mmc_write_pages(struct mm_capture *c, struct mm_writer *w);
void mmc_put_files(struct mm_capture *c);

/* save_meta.c */
void mmc_cpu(struct ckpt_cpu *cpu);
int mmc_mm(struct mm_capture *c);
int mmc_signals(struct mm_capture *c);
int mmc_thread(struct mm_capture *c);

/* save_files.c */
int mmc_fds(struct mm_capture *c);

#endif
