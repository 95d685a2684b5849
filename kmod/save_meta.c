// SPDX-License-Identifier: GPL-2.0
/*
 * The target's state outside memory: CPU identity, mm layout (the
 * PR_SET_MM_MAP fields, auxv, cwd, umask, vDSO identity), signals, and the
 * register state it resumes with, read through the same regsets ptrace
 * uses (NT_PRSTATUS, NT_X86_XSTATE in the standard uabi format).
 */
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/mm.h>
#include <linux/sched/task_stack.h>
#include <linux/fs_struct.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/regset.h>
#include <linux/elf.h>
#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/signal.h>
#include <linux/errno.h>
#include <asm/processor.h>
#include <asm/cpufeature.h>
#include <asm/fpu/xcr.h>
#include "save.h"

/* Mirrors ckpt_cpu_probe() of the user-level engine, field for field. */
void mmc_cpu(struct ckpt_cpu *c)
{
	u32 r[4], maxleaf, i;

	memset(c, 0, sizeof(*c));
	cpuid_count(0, 0, &maxleaf, &r[1], &r[2], &r[3]);
	memcpy(c->vendor, &r[1], 4);
	memcpy(c->vendor + 4, &r[3], 4);
	memcpy(c->vendor + 8, &r[2], 4);
	cpuid_count(1, 0, &r[0], &r[1], &c->cpuid1_ecx, &c->cpuid1_edx);
	if (maxleaf >= 7)
		cpuid_count(7, 0, &r[0], &c->cpuid7_ebx, &c->cpuid7_ecx,
			    &c->cpuid7_edx);
	cpuid_count(0x80000001, 0, &r[0], &r[1], &c->cpuid_ext1_ecx,
		    &c->cpuid_ext1_edx);
	if (!(c->cpuid1_ecx & (1U << 27)) || maxleaf < 0xd)	/* OSXSAVE */
		return;
	c->xcr0 = xgetbv(XCR_XFEATURE_ENABLED_MASK);
	cpuid_count(0xd, 0, &r[0], &c->xsave_size, &r[2], &r[3]);
	cpuid_count(0xd, 1, &c->cpuid_d1_eax, &r[1], &r[2], &r[3]);
	c->n_comp = 32;
	for (i = 2; i < 32; i++)
		if (c->xcr0 & (1ULL << i))
			cpuid_count(0xd, i, &c->comp_size[i], &c->comp_offset[i],
				    &r[2], &r[3]);
}

static void vdso_layout(struct mm_capture *c)
{
	struct ckpt_mm *m = &c->mmi;
	u32 i;

	for (i = 0; i < c->nr_vmas; i++) {
		const struct ckpt_vma *v = &c->vmas[i];

		if (!(v->flags & (CKPT_VMA_VDSO | CKPT_VMA_VVAR)))
			continue;
		if (!m->special_start)
			m->special_start = v->start;
		m->special_end = v->end;
		if (v->flags & CKPT_VMA_VDSO) {
			m->vdso_start = v->start;
			m->vdso_size = v->end - v->start;
		}
	}
}

static int vdso_crc(struct mm_capture *c)
{
	struct ckpt_mm *m = &c->mmi;
	void *buf;
	int n;

	if (!m->vdso_size)
		return 0;
	if (m->vdso_size > (1 << 20))
		return mm_fail(c->e, -EINVAL, CKPT_E_VDSO, "vDSO of %llu bytes",
			       m->vdso_size);
	buf = kvmalloc(m->vdso_size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	n = access_process_vm(c->task, m->vdso_start, buf, m->vdso_size, FOLL_FORCE);
	if (n == m->vdso_size)
		m->vdso_crc = mm_crc32c(buf, n);
	kvfree(buf);
	return n == m->vdso_size ? 0 :
	       mm_fail(c->e, -EIO, CKPT_E_VDSO, "cannot read the target's vDSO");
}

static int fs_state(struct mm_capture *c)
{
	struct fs_struct *fs;
	struct path pwd;
	char *buf, *p;
	int err = 0;

	task_lock(c->task);
	fs = c->task->fs;
	if (!fs) {
		task_unlock(c->task);
		return mm_fail(c->e, -ESRCH, CKPT_E_INVAL, "target has no fs");
	}
	spin_lock(&fs->lock);
	c->mmi.umask = fs->umask;
	pwd = fs->pwd;
	path_get(&pwd);
	spin_unlock(&fs->lock);
	task_unlock(c->task);

	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf) {
		path_put(&pwd);
		return -ENOMEM;
	}
	p = d_path(&pwd, buf, PATH_MAX);
	if (IS_ERR(p) || strlen(p) >= CKPT_PATH_MAX || d_unlinked(pwd.dentry))
		err = mm_fail(c->e, -EOPNOTSUPP, CKPT_E_FILE, "cwd unusable");
	else
		strscpy(c->mmi.cwd, p, CKPT_PATH_MAX);
	kfree(buf);
	path_put(&pwd);
	return err;
}

int mmc_mm(struct mm_capture *c)
{
	struct mm_struct *mm = c->mm;
	struct ckpt_mm *m = &c->mmi;
	u32 w = 0;

	mmap_read_lock(mm);
	m->start_code = mm->start_code;
	m->end_code = mm->end_code;
	m->start_data = mm->start_data;
	m->end_data = mm->end_data;
	m->start_brk = mm->start_brk;
	m->brk = mm->brk;
	m->start_stack = mm->start_stack;
	spin_lock(&mm->arg_lock);
	m->arg_start = mm->arg_start;
	m->arg_end = mm->arg_end;
	m->env_start = mm->env_start;
	m->env_end = mm->env_end;
	spin_unlock(&mm->arg_lock);
	/* auxv as /proc/pid/auxv shows it: pairs up to and with AT_NULL. */
	while (w + 2 <= AT_VECTOR_SIZE && w + 2 <= CKPT_AUXV_WORDS) {
		m->auxv[w] = mm->saved_auxv[w];
		m->auxv[w + 1] = mm->saved_auxv[w + 1];
		w += 2;
		if (!m->auxv[w - 2])
			break;
	}
	mmap_read_unlock(mm);
	if (m->auxv[w - 2])
		return mm_fail(c->e, -EINVAL, CKPT_E_INVAL, "auxv too long");
	m->auxv_words = w;
	m->personality = c->task->personality;
	vdso_layout(c);
	return vdso_crc(c) ?: fs_state(c);
}

static void itimer_real(struct signal_struct *sig, struct ckpt_itimer *it)
{
	ktime_t rem = 0, incr = sig->it_real_incr;

	if (hrtimer_active(&sig->real_timer)) {
		rem = hrtimer_get_remaining(&sig->real_timer);
		if (rem <= 0)		/* as getitimer(): due now */
			rem = NSEC_PER_USEC;
	}
	it->value_sec = rem / NSEC_PER_SEC;
	it->value_usec = (rem % NSEC_PER_SEC) / NSEC_PER_USEC;
	it->interval_sec = incr / NSEC_PER_SEC;
	it->interval_usec = (incr % NSEC_PER_SEC) / NSEC_PER_USEC;
}

int mmc_signals(struct mm_capture *c)
{
	struct task_struct *t = c->task;
	struct ckpt_signals *s = &c->sig;
	unsigned long sp = user_stack_pointer(task_pt_regs(t));
	bool cpu_timers;
	int i;

	spin_lock_irq(&t->sighand->siglock);
	for (i = 0; i < 64; i++) {
		const struct sigaction *sa = &t->sighand->action[i].sa;

		s->act[i].handler = (unsigned long)sa->sa_handler;
		s->act[i].flags = sa->sa_flags;
		s->act[i].restorer = (unsigned long)sa->sa_restorer;
		s->act[i].mask = sa->sa_mask.sig[0];
	}
	s->blocked = t->blocked.sig[0];
	s->pending = t->pending.signal.sig[0] |
		     t->signal->shared_pending.signal.sig[0];
	itimer_real(t->signal, &s->itimer[ITIMER_REAL]);
	cpu_timers = t->signal->it[0].expires || t->signal->it[1].expires;
	spin_unlock_irq(&t->sighand->siglock);
	if (cpu_timers)
		return mm_fail(c->e, -EOPNOTSUPP, CKPT_E_INVAL,
			       "ITIMER_VIRTUAL/ITIMER_PROF armed: not readable from a module");

	s->altstack_sp = t->sas_ss_sp;
	s->altstack_size = t->sas_ss_size;
	if (!t->sas_ss_size)
		s->altstack_flags = SS_DISABLE;
	else if (sp > t->sas_ss_sp && sp - t->sas_ss_sp <= t->sas_ss_size)
		s->altstack_flags = SS_ONSTACK;
	s->altstack_flags |= t->sas_ss_flags & SS_FLAG_BITS;
	return 0;
}

static const struct user_regset *find_regset(const struct user_regset_view *v,
					     unsigned int note)
{
	unsigned int i;

	for (i = 0; i < v->n; i++)
		if (v->regsets[i].core_note_type == note)
			return &v->regsets[i];
	return NULL;
}

/*
 * A target stopped while blocked in a system call has the kernel's restart
 * code in rax; resuming must repeat the call, as the kernel would have done
 * (the paper's "repeat the msgrecv"). A restart_block is kernel state that
 * does not travel, so -ERESTART_RESTARTBLOCK also repeats the original call.
 */
static void repeat_syscall(struct ckpt_regs *r)
{
	long ax = (long)r->rax;

	if ((long)r->orig_rax >= 0 &&
	    (ax == -ERESTARTSYS || ax == -ERESTARTNOINTR ||
	     ax == -ERESTARTNOHAND || ax == -ERESTART_RESTARTBLOCK)) {
		r->rax = r->orig_rax;
		r->rip -= 2;	/* the 2-byte syscall instruction */
	}
	r->orig_rax = (u64)-1;
}

static int get_regset(struct mm_capture *c, unsigned int note, void **buf)
{
	const struct user_regset *rs;

	rs = find_regset(task_user_regset_view(c->task), note);
	if (!rs)
		return -ENODEV;
	return regset_get_alloc(c->task, rs, rs->n * rs->size, buf);
}

int mmc_thread(struct mm_capture *c)
{
	struct ckpt_thread *th = &c->th;
	void *buf = NULL;
	int n;

	n = get_regset(c, NT_PRSTATUS, &buf);
	if (n != sizeof(th->regs)) {
		kfree(buf);
		return mm_fail(c->e, n < 0 ? n : -EIO, CKPT_E_KERNEL,
			       "NT_PRSTATUS regset: %d", n);
	}
	memcpy(&th->regs, buf, sizeof(th->regs));
	kfree(buf);
	repeat_syscall(&th->regs);
	if (c->task->rseq) {
		th->rseq_addr = (unsigned long)c->task->rseq;
		th->rseq_len = 32;	/* 6.1 keeps no length: the original ABI */
		th->rseq_sig = c->task->rseq_sig;
	}
	th->clear_child_tid = (unsigned long)c->task->clear_child_tid;
	th->tid = task_pid_vnr(c->task);

	n = get_regset(c, boot_cpu_has(X86_FEATURE_XSAVE) ? NT_X86_XSTATE :
		       NT_PRFPREG, &c->xsave);
	if (n < 0)
		return mm_fail(c->e, n, CKPT_E_KERNEL, "FPU regset: %d", n);
	if (c->cpu.xsave_size && n != c->cpu.xsave_size)
		return mm_fail(c->e, -EOPNOTSUPP, CKPT_E_CPU,
			       "XSAVE regset %d bytes, CPUID says %u", n,
			       c->cpu.xsave_size);
	c->xsave_len = n;
	th->xsave_len = n;
	return 0;
}
