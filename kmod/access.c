// SPDX-License-Identifier: GPL-2.0
/*
 * Who may save whom. The rule is ptrace's (PTRACE_MODE_ATTACH_REALCREDS),
 * but ptrace_may_access() is not exported to modules in 6.1, so the
 * credential and dumpability parts of __ptrace_may_access() are repeated
 * here. The LSM hook (Yama) is not reachable from a module either: a
 * caller that has itself ptrace-attached the target has passed it, so
 * that case is always allowed; see docs/kmod.md.
 */
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/coredump.h>
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/ptrace.h>
#include <linux/mm_types.h>
#include "msgmig.h"

static bool same_creds(const struct cred *c, const struct cred *t)
{
	return uid_eq(c->uid, t->euid) && uid_eq(c->uid, t->suid) &&
	       uid_eq(c->uid, t->uid) && gid_eq(c->gid, t->egid) &&
	       gid_eq(c->gid, t->sgid) && gid_eq(c->gid, t->gid);
}

static bool traced_by_us(struct task_struct *task)
{
	bool ret;

	rcu_read_lock();
	ret = task->ptrace && rcu_dereference(task->parent) == current;
	rcu_read_unlock();
	return ret;
}

int msgmig_may_save(struct task_struct *task)
{
	const struct cred *tcred;
	struct mm_struct *mm;
	bool ok;

	if (task->flags & PF_KTHREAD)
		return -EPERM;
	/* Saving our own group would wait for ourselves to stop. */
	if (same_thread_group(task, current))
		return -EINVAL;
	if (traced_by_us(task))
		return 0;

	rcu_read_lock();
	tcred = __task_cred(task);
	ok = same_creds(current_cred(), tcred) ||
	     ns_capable(tcred->user_ns, CAP_SYS_PTRACE);
	rcu_read_unlock();
	if (!ok)
		return -EPERM;

	/* Pairs with the barrier in commit_creds(), as in ptrace. */
	smp_rmb();
	task_lock(task);
	mm = task->mm;
	ok = !mm || get_dumpable(mm) == SUID_DUMP_USER ||
	     ns_capable(mm->user_ns, CAP_SYS_PTRACE);
	task_unlock(task);
	return ok ? 0 : -EPERM;
}
