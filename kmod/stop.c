// SPDX-License-Identifier: GPL-2.0
/*
 * Bringing the target to a safe point. A runtime process is normally
 * blocked in a system call (msgrecv); SIGSTOP interrupts it and it parks in
 * the group stop with its user registers saved in pt_regs and its FPU state
 * written back to memory at the switch-out, which is what the saver reads.
 */
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/signal.h>
#include "msgmig.h"

#define STOP_TIMEOUT_MS 5000

static bool is_parked(struct task_struct *task)
{
	return (task_is_stopped(task) || task_is_traced(task)) &&
	       !READ_ONCE(task->on_cpu);
}

int msgmig_stop_target(struct task_struct *task, bool *we_stopped)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(STOP_TIMEOUT_MS);
	int err;

	*we_stopped = false;
	if (!task_is_stopped(task) && !task_is_traced(task)) {
		err = kill_pid(task_tgid(task), SIGSTOP, 1);
		if (err)
			return err;
		*we_stopped = true;
	}
	/* Bounded wait: a task in uninterruptible sleep may take a while. */
	while (!is_parked(task)) {
		if (task->exit_state || (task->flags & PF_EXITING))
			return -ESRCH;
		if (fatal_signal_pending(current))
			return -EINTR;
		if (time_after(jiffies, deadline))
			return -ETIMEDOUT;
		usleep_range(200, 1000);
	}
	return 0;
}

void msgmig_release_target(struct task_struct *task, bool we_stopped, u32 flags)
{
	if (flags & MSGMIG_SAVE_KILL)
		kill_pid(task_tgid(task), SIGKILL, 1);
	else if (we_stopped && !(flags & MSGMIG_SAVE_LEAVE_STOPPED))
		kill_pid(task_tgid(task), SIGCONT, 1);
}
