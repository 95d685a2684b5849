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

/* Where a page walk is: the VMA index and the address inside it. */
struct mm_walk {
	u32 vma;
	u64 addr;
};

/* save.c */
void mmc_free(struct mm_capture *c);
unsigned long mmc_switches(struct task_struct *task);

/* save_stream.c: MSGMIG_SAVE_STREAM, pages produced as read() asks. */
int msgmig_stream_start(struct msgmig_session *s, struct mm_capture *c,
			struct mm_buf *b, struct mm_writer *w, unsigned long sw,
			bool we_stopped, u32 flags);

/* save_mem.c */
int mmc_collect_vmas(struct mm_capture *c);
int mmc_ident(struct mm_capture *c);
/* Append PAGES sections until @budget bytes were added or the walk ended
 * (returns 1), with no section left open; <0 on error. */
int mmc_pages_step(struct mm_capture *c, struct mm_writer *w,
		   struct mm_walk *wk, size_t budget);
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
