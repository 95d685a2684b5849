/* SPDX-License-Identifier: GPL-2.0 */
/* Internal declarations shared by the msgmig module's files. */
#ifndef MSGMIG_INTERNAL_H
#define MSGMIG_INTERNAL_H

#include <linux/types.h>
#include <linux/mutex.h>
#include "uapi/msgmig.h"

struct task_struct;

/* A growable byte buffer holding one image (vmalloc: images are large). */
struct mm_buf {
	u8 *data;
	size_t len;
	size_t cap;
	size_t limit;	/* refuse to grow past this (ENOMEM, not OOM) */
};

size_t mm_buf_max(void);
int mm_buf_reserve(struct mm_buf *b, size_t more);
int mm_buf_put(struct mm_buf *b, const void *p, size_t n);
void *mm_buf_grab(struct mm_buf *b, size_t n);	/* append n zeroed bytes */
void mm_buf_free(struct mm_buf *b);

struct mm_stream;

/* One open file of /dev/msgmig. */
struct msgmig_session {
	struct mutex lock;	/* serialises ioctls and reads */
	struct mm_buf image;	/* last saved image (or its unread part) */
	struct mm_stream *stream; /* MSGMIG_SAVE_STREAM in progress, or NULL */
};

/* save_stream.c */
ssize_t msgmig_stream_read(struct msgmig_session *s, char __user *buf,
			   size_t len, loff_t *ppos);
void msgmig_stream_end(struct msgmig_session *s);

/* access.c */
int msgmig_may_save(struct task_struct *task);

/* stop.c */
int msgmig_stop_target(struct task_struct *task, bool *we_stopped);
void msgmig_release_target(struct task_struct *task, bool we_stopped, u32 flags);

struct mm_err;

/* save.c */
long msgmig_save(struct msgmig_session *s, struct msgmig_save *arg,
		 struct mm_err *e);

/* restore.c */
long msgmig_restore(struct msgmig_restore *arg, struct mm_err *e);
long msgmig_image_info(struct msgmig_image_info *arg, struct mm_err *e);

#endif /* MSGMIG_INTERNAL_H */
