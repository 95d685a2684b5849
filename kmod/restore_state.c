// SPDX-License-Identifier: GPL-2.0
/*
 * Restore, past the point of no return: descriptors, signal state, and the
 * register state the ioctl returns to (pt_regs, fs/gs base, rseq).
 */
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/fs.h>
#include <linux/file.h>
#include <linux/fdtable.h>
#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/signal.h>
#include <linux/ptrace.h>
#include <asm/segment.h>
#include <asm/fsgsbase.h>
#include <asm/msr.h>
#include "restore.h"

/* Close everything but the fd 0-2 the image inherits (CKPT_FD_STDIO). */
static void close_others(struct mm_restore *r)
{
	bool keep[3] = { false, false, false };
	unsigned int fd, max;
	u32 i;

	for (i = 0; i < r->im.nr_fds; i++)
		if (r->im.fds[i].kind == CKPT_FD_STDIO)
			keep[r->im.fds[i].fd] = true;
	rcu_read_lock();
	max = files_fdtable(current->files)->max_fds;
	rcu_read_unlock();
	for (fd = 0; fd < max; fd++)
		if (fd > 2 || !keep[fd])
			close_fd(fd);
}

/*
 * fd_install() needs a reserved slot and 6.1 exports no way to reserve a
 * given number: reserve the lowest ones until ours comes up, then give
 * the extra ones back.
 */
static int install_at(struct file *file, int want, bool cloexec,
		      int *spare, int *nr_spare)
{
	for (;;) {
		int fd = get_unused_fd_flags(cloexec ? O_CLOEXEC : 0);

		if (fd < 0)
			return fd;
		if (fd == want) {
			fd_install(fd, file);
			return 0;
		}
		if (fd > want || *nr_spare == CKPT_MAX_FDS) {
			put_unused_fd(fd);
			return -EBUSY;
		}
		spare[(*nr_spare)++] = fd;
	}
}

int mmr_install_fds(struct mm_restore *r)
{
	int *spare, nr_spare = 0, err = 0, fd;
	u32 i;

	close_others(r);
	spare = kvcalloc(CKPT_MAX_FDS, sizeof(*spare), GFP_KERNEL);
	if (!spare)
		return -ENOMEM;
	/* Ascending fd order, so each reservation walk finds its number. */
	for (fd = 0; fd < CKPT_MAX_FDS && !err; fd++) {
		for (i = 0; i < r->im.nr_fds; i++) {
			const struct ckpt_fd *f = &r->im.fds[i];

			if (f->fd != fd || !r->fd_files[i])
				continue;
			err = install_at(r->fd_files[i], fd, f->fd_flags & FD_CLOEXEC,
					 spare, &nr_spare);
			if (err)
				mm_fail(r->e, err, CKPT_E_FILE, "cannot place fd %d", fd);
			else
				r->fd_files[i] = NULL;	/* the table owns it now */
			break;
		}
	}
	while (nr_spare)
		put_unused_fd(spare[--nr_spare]);
	kvfree(spare);
	return err;
}

static void set_itimer_real(const struct ckpt_itimer *it)
{
	struct signal_struct *sig = current->signal;
	u64 value = it->value_sec * NSEC_PER_SEC + it->value_usec * NSEC_PER_USEC;
	u64 incr = it->interval_sec * NSEC_PER_SEC + it->interval_usec * NSEC_PER_USEC;

	hrtimer_cancel(&sig->real_timer);
	spin_lock_irq(&current->sighand->siglock);
	sig->it_real_incr = incr;
	if (value)
		hrtimer_start(&sig->real_timer, ns_to_ktime(value), HRTIMER_MODE_REL);
	spin_unlock_irq(&current->sighand->siglock);
}

void mmr_signals(struct mm_restore *r)
{
	const struct ckpt_signals *s = r->im.sig;
	u64 unblockable = sigmask(SIGKILL) | sigmask(SIGSTOP);
	sigset_t set;
	int i;

	spin_lock_irq(&current->sighand->siglock);
	for (i = 0; i < 64; i++) {
		struct sigaction *sa = &current->sighand->action[i].sa;

		if (i + 1 == SIGKILL || i + 1 == SIGSTOP)
			continue;
		sa->sa_handler = (__sighandler_t)(unsigned long)s->act[i].handler;
		sa->sa_flags = s->act[i].flags & ~SA_IMMUTABLE;
		sa->sa_restorer = (__sigrestore_t)(unsigned long)s->act[i].restorer;
		sa->sa_mask.sig[0] = s->act[i].mask & ~unblockable;
	}
	spin_unlock_irq(&current->sighand->siglock);
	set_itimer_real(&s->itimer[ITIMER_REAL]);

	if (s->altstack_flags & SS_DISABLE || !s->altstack_size) {
		current->sas_ss_sp = 0;
		current->sas_ss_size = 0;
		current->sas_ss_flags = SS_DISABLE;
	} else {
		current->sas_ss_sp = s->altstack_sp;
		current->sas_ss_size = s->altstack_size;
		current->sas_ss_flags = s->altstack_flags & SS_FLAG_BITS;
	}
	/* The mask last, as the resume contract says. */
	set.sig[0] = s->blocked & ~unblockable;
	sigprocmask(SIG_SETMASK, &set, NULL);
}

/* The arithmetic flags the process may own (as sigreturn allows). */
#define USER_EFLAGS (X86_EFLAGS_AC | X86_EFLAGS_OF | X86_EFLAGS_DF | \
		     X86_EFLAGS_TF | X86_EFLAGS_SF | X86_EFLAGS_ZF | \
		     X86_EFLAGS_AF | X86_EFLAGS_PF | X86_EFLAGS_CF | \
		     X86_EFLAGS_RF)

static void set_bases(u64 fs, u64 gs)
{
	preempt_disable();
	loadsegment(fs, 0);
	x86_fsbase_write_cpu(fs);
	current->thread.fsindex = 0;
	current->thread.fsbase = fs;
	/* In the kernel the user's GS base is the inactive one. */
	if (!current->thread.gsindex)
		wrmsrl(MSR_KERNEL_GS_BASE, gs);
	current->thread.gsbase = gs;
	preempt_enable();
}

/* Returns the value the ioctl must return: it becomes the saved rax. */
long mmr_thread(struct mm_restore *r)
{
	const struct ckpt_thread *th = r->im.th;
	const struct ckpt_regs *s = &th->regs;
	struct pt_regs *regs = current_pt_regs();

	regs->r15 = s->r15;
	regs->r14 = s->r14;
	regs->r13 = s->r13;
	regs->r12 = s->r12;
	regs->bp = s->rbp;
	regs->bx = s->rbx;
	regs->r11 = s->r11;
	regs->r10 = s->r10;
	regs->r9 = s->r9;
	regs->r8 = s->r8;
	regs->cx = s->rcx;
	regs->dx = s->rdx;
	regs->si = s->rsi;
	regs->di = s->rdi;
	regs->ip = s->rip;
	regs->sp = s->rsp;
	regs->flags = (s->eflags & USER_EFLAGS) | X86_EFLAGS_IF | X86_EFLAGS_FIXED;
	regs->cs = __USER_CS;
	regs->ss = __USER_DS;
	regs->orig_ax = -1;	/* not in a system call: no restart on the way out */
	regs->ax = s->rax;
	set_bases(s->fs_base, s->gs_base);

	current->rseq = (struct rseq __user *)(unsigned long)th->rseq_addr;
	current->rseq_sig = th->rseq_sig;
	current->rseq_event_mask = 0;
	rseq_set_notify_resume(current);
	current->clear_child_tid = (int __user *)(unsigned long)th->clear_child_tid;
	return s->rax;
}
