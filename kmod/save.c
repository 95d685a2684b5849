// SPDX-License-Identifier: GPL-2.0
/*
 * SAVE: find the target, check the caller may ptrace it, bring it to a
 * safe point, gather its state and write the image into the session's
 * buffer, then let it go (or kill it, for a migration).
 */
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/pid.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "save.h"

static struct task_struct *find_target(pid_t nr)
{
	struct pid *pid = find_get_pid(nr);
	struct task_struct *task;

	if (!pid)
		return NULL;
	task = get_pid_task(pid, PIDTYPE_PID);
	put_pid(pid);
	return task;
}

/* The caller-named runtime bytes, copied as they are in the target. */
static int write_runtime(struct mm_capture *c, struct mm_writer *w)
{
	long off = mmw_open(w, CKPT_S_RUNTIME);
	size_t at;
	int n;

	if (off < 0 || !mm_buf_grab(w->b, c->rt_len))
		return -ENOMEM;
	at = w->b->len - c->rt_len;
	n = access_process_vm(c->task, c->rt_addr, w->b->data + at, c->rt_len,
			      FOLL_FORCE);
	if (n != c->rt_len)
		return mm_fail(c->e, -EFAULT, CKPT_E_INVAL,
			       "runtime state %#llx+%llu not readable in the target",
			       c->rt_addr, c->rt_len);
	return mmw_close(w, off);
}

/* Everything before the first PAGES section. */
static int write_meta(struct mm_capture *c, struct mm_writer *wp)
{
	struct mm_buf *b = wp->b;
	struct mm_writer w = *wp;
	int err;

	err = mmw_file_hdr(&w, CKPT_HF_ORIGIN_KMOD, task_tgid_vnr(c->task));
	if (!err)
		err = mmw_section(&w, CKPT_S_IDENT, c->ents,
				  c->nr_ents * sizeof(*c->ents));
	if (!err)
		err = mmw_section(&w, CKPT_S_CPU, &c->cpu, sizeof(c->cpu));
	if (!err)
		err = mmw_section(&w, CKPT_S_MM, &c->mmi, sizeof(c->mmi));
	if (!err)
		err = mmw_section(&w, CKPT_S_VMAS, c->vmas,
				  c->nr_vmas * sizeof(*c->vmas));
	if (!err)
		err = mmw_section(&w, CKPT_S_FILES, c->fds,
				  c->nr_fds * sizeof(*c->fds));
	if (!err)
		err = mmw_section(&w, CKPT_S_SIGNALS, &c->sig, sizeof(c->sig));
	if (!err) {
		long off = mmw_open(&w, CKPT_S_THREAD);

		err = off < 0 ? off : mm_buf_put(b, &c->th, sizeof(c->th));
		if (!err)
			err = mm_buf_put(b, c->xsave, c->xsave_len);
		if (!err)
			err = mmw_close(&w, off);
	}
	if (!err && c->rt_len)
		err = write_runtime(c, &w);
	*wp = w;
	return err;
}

static int nomem(struct mm_capture *c, struct mm_writer *w, int err)
{
	if (err == -ENOMEM)
		mm_fail(c->e, err, CKPT_E_NOMEM, "image buffer (%zu bytes so far)",
			w->b->len);
	return err;
}

/* Everything but memory is gathered and written first, then the pages. */
static int capture_meta(struct mm_capture *c, struct mm_writer *w)
{
	int err;

	mmc_cpu(&c->cpu);
	err = mmc_collect_vmas(c);
	if (!err)
		err = mmc_ident(c);
	if (!err)
		err = mmc_mm(c);
	if (!err)
		err = mmc_fds(c);
	if (!err)
		err = mmc_signals(c);
	if (!err)
		err = mmc_thread(c);
	if (!err)
		err = write_meta(c, w);
	return nomem(c, w, err);
}

void mmc_free(struct mm_capture *c)
{
	mmc_put_files(c);
	kvfree(c->ents);
	kvfree(c->ent_files);
	kvfree(c->vmas);
	kvfree(c->fds);
	kfree(c->xsave);
	if (c->mm)
		mmput(c->mm);
	kvfree(c);
}

static int check_target(struct task_struct *task, struct mm_err *e)
{
	int err;

	if (task->exit_state || (task->flags & PF_EXITING))
		return mm_fail(e, -ESRCH, CKPT_E_INVAL, "pid %d is exiting",
			       task_pid_vnr(task));
	err = msgmig_may_save(task);
	if (err)
		return mm_fail(e, err, CKPT_E_INVAL,
			       "not allowed to ptrace pid %d", task_pid_vnr(task));
	if (task != task->group_leader || !thread_group_empty(task))
		return mm_fail(e, -EOPNOTSUPP, CKPT_E_THREADS,
			       "pid %d has more than one thread", task_pid_vnr(task));
	return 0;
}

/* Did the target run while we looked? Its context-switch counts tell. */
unsigned long mmc_switches(struct task_struct *task)
{
	return READ_ONCE(task->nvcsw) + READ_ONCE(task->nivcsw);
}

/* Pages and END at once; the target is still stopped. */
static int capture_rest(struct mm_capture *c, struct mm_writer *w,
			unsigned long sw)
{
	int err = mmc_write_pages(c, w);

	if (!err)
		err = mmw_end(w);
	if (!err && mmc_switches(c->task) != sw)
		err = mm_fail(c->e, -EAGAIN, CKPT_E_INVAL,
			      "pid %d ran during the capture (continued by someone?)",
			      task_pid_vnr(c->task));
	return nomem(c, w, err);
}

static struct mm_capture *new_capture(struct task_struct *task,
				      struct msgmig_save *a, struct mm_err *e)
{
	struct mm_capture *c = kvzalloc(sizeof(*c), GFP_KERNEL);

	if (!c)
		return NULL;
	c->task = task;
	c->e = e;
	c->rt_addr = a->runtime_addr;
	c->rt_len = a->runtime_len;
	c->arg = a;	/* only used while SAVE runs */
	c->mm = get_task_mm(task);
	if (!c->mm) {
		kvfree(c);
		return NULL;
	}
	return c;
}

long msgmig_save(struct msgmig_session *s, struct msgmig_save *a,
		 struct mm_err *e)
{
	struct mm_buf b = { .limit = mm_buf_max() };
	struct mm_writer w = { .b = &b };
	struct task_struct *task;
	struct mm_capture *c = NULL;
	bool we_stopped = false;
	unsigned long sw;
	int err;

	msgmig_stream_end(s);	/* a new SAVE drops an unfinished stream */
	task = find_target(a->pid);
	if (!task)
		return mm_fail(e, -ESRCH, CKPT_E_INVAL, "no process %d", a->pid);
	err = check_target(task, e);
	if (err)
		goto out_task;
	err = msgmig_stop_target(task, &we_stopped);
	if (err) {
		mm_fail(e, err, CKPT_E_INVAL, "pid %d did not stop", a->pid);
		goto out_release;
	}
	/* A thread created before the stop took effect would be left out. */
	if (!thread_group_empty(task)) {
		err = mm_fail(e, -EOPNOTSUPP, CKPT_E_THREADS,
			      "pid %d has more than one thread", a->pid);
		goto out_release;
	}
	sw = mmc_switches(task);
	c = new_capture(task, a, e);
	err = c ? capture_meta(c, &w) : -ESRCH;
	if (!err && (a->flags & MSGMIG_SAVE_STREAM)) {
		err = msgmig_stream_start(s, c, &b, &w, sw, we_stopped, a->flags);
		if (!err)
			return 0;	/* the stream owns the task, capture, buffer */
	} else if (!err) {
		err = capture_rest(c, &w, sw);
	}
out_release:
	/* Never kill a target whose image we failed to take. */
	msgmig_release_target(task, we_stopped, err ? 0 : a->flags);
	if (c)
		mmc_free(c);
	if (!err) {
		mm_buf_free(&s->image);
		s->image = b;
		a->image_size = b.len;
		a->nr_pages = w.n_pages;
	} else {
		mm_buf_free(&b);
	}
out_task:
	put_task_struct(task);
	return err;
}
