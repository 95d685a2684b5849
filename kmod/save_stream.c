// SPDX-License-Identifier: GPL-2.0
/*
 * MSGMIG_SAVE_STREAM: SAVE writes the metadata sections; the PAGES
 * sections and END are produced a few MiB at a time as read() drains the
 * buffer, so the image is never whole in kernel memory ("one socket, no
 * staging", DESIGN.md section 7). The target stays stopped until the end,
 * when it is released as the SAVE flags say; a stream abandoned early
 * (close, a new SAVE, an error) only lets it continue.
 */
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "save.h"

#define STREAM_CHUNK (4UL << 20)

struct mm_stream {
	struct mm_capture *c;	/* NULL once the target is released */
	struct task_struct *task;
	struct mm_writer w;
	struct mm_walk wk;
	struct mm_err err;	/* c->e points here once SAVE returned */
	int failed;		/* the error that ended the stream, returned again */
	bool complete;		/* END is in the buffer: no more to produce */
	unsigned long sw;	/* the target's switch count when stopped */
	bool we_stopped;
	u32 flags;
};

int msgmig_stream_start(struct msgmig_session *s, struct mm_capture *c,
			struct mm_buf *b, struct mm_writer *w, unsigned long sw,
			bool we_stopped, u32 flags)
{
	struct mm_stream *st = kzalloc(sizeof(*st), GFP_KERNEL);

	if (!st)
		return -ENOMEM;
	mm_buf_free(&s->image);
	s->image = *b;
	b->data = NULL;
	st->c = c;
	st->task = c->task;
	st->w = *w;
	st->w.b = &s->image;
	st->sw = sw;
	st->we_stopped = we_stopped;
	st->flags = flags;
	c->e = &st->err;
	c->arg = NULL;
	s->stream = st;
	return 0;
}

/* Drop the capture and the target, releasing it as @flags say. */
static void stream_close(struct mm_stream *st, u32 flags)
{
	if (!st->c)
		return;
	msgmig_release_target(st->task, st->we_stopped, flags);
	mmc_free(st->c);
	put_task_struct(st->task);
	st->c = NULL;
}

void msgmig_stream_end(struct msgmig_session *s)
{
	struct mm_stream *st = s->stream;

	if (!st)
		return;
	stream_close(st, 0);	/* unfinished: never kill */
	kfree(st);
	s->stream = NULL;
}

/* The buffer was read: replace it with the next pages (or END). */
static int stream_more(struct msgmig_session *s)
{
	struct mm_stream *st = s->stream;
	int ret;

	st->w.base += s->image.len;
	s->image.len = 0;
	ret = mmc_pages_step(st->c, &st->w, &st->wk, STREAM_CHUNK);
	if (ret <= 0)
		return ret;
	ret = mmw_end(&st->w);
	if (!ret && mmc_switches(st->task) != st->sw)
		ret = -EAGAIN;	/* it ran meanwhile: the image is not one state */
	st->complete = !ret;
	return ret;
}

ssize_t msgmig_stream_read(struct msgmig_session *s, char __user *buf,
			   size_t len, loff_t *ppos)
{
	struct mm_stream *st = s->stream;
	int err;

	for (;;) {
		u64 end = st->w.base + s->image.len;
		size_t n;

		if (*ppos < st->w.base || *ppos > end)
			return -ESPIPE;
		if (*ppos < end) {
			n = min_t(u64, len, end - *ppos);
			if (copy_to_user(buf, s->image.data + (*ppos - st->w.base), n))
				return -EFAULT;
			*ppos += n;
			return n;
		}
		if (st->failed)
			return st->failed;
		if (st->complete) {
			/* All read: only now may the target go (or die). */
			stream_close(st, st->flags);
			return 0;
		}
		err = stream_more(s);
		if (err) {
			stream_close(st, 0);
			s->image.len = 0;
			st->failed = err;
			return err;
		}
	}
}
