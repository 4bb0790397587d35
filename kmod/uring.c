// SPDX-License-Identifier: GPL-2.0
/*
 * The completion of io_uring commands; see uring.h.  One atomic state per
 * command decides between the operation's end, which may come before the
 * command is even armed (a completion on another CPU while ->uring_cmd()
 * is still running), and a cancellation.
 *
 * Why arm only once the operation is under way: a command marked
 * cancelable stays on its ring's list until io_uring_cmd_done(), so a
 * command that fails to start (and returns its error synchronously, or
 * -EAGAIN to be issued again from a worker) must never have been marked.
 * Why an end before arming waits for it: marking takes the ring's lock
 * and lists the command; completing it first would list a freed command.
 */
#include <linux/sched.h>

#include "compat.h"
#include "uring.h"

enum cider_uring_state {
	CIDER_URING_STARTING,	/* ->uring_cmd() has not armed it yet */
	CIDER_URING_ARMED,	/* under way; the end or a cancel completes it */
	CIDER_URING_ENDED_EARLY,	/* ended before armed: arming completes it */
	CIDER_URING_ENDING,	/* task_cb is queued: it completes the command */
	CIDER_URING_CANCELLED,	/* completed -ECANCELED; the end does nothing */
};

void cider_uring_link_init(struct cider_uring_link *l, struct io_uring_cmd *cmd,
			   cider_uring_task_fn task_cb)
{
	l->cmd = cmd;
	l->task_cb = task_cb;
	atomic_set(&l->state, CIDER_URING_STARTING);
}

void cider_uring_link_arm(struct cider_uring_link *l, unsigned int issue_flags)
{
	cider_uring_mark_cancelable(l->cmd, issue_flags);
	if (atomic_cmpxchg(&l->state, CIDER_URING_STARTING, CIDER_URING_ARMED) ==
	    CIDER_URING_STARTING)
		return;
	/* Ended meanwhile: nobody else can own it, complete it now. */
	atomic_set(&l->state, CIDER_URING_ENDING);
	cider_uring_in_task(l->cmd, l->task_cb);
}

void cider_uring_link_end(struct cider_uring_link *l)
{
	int old = atomic_cmpxchg(&l->state, CIDER_URING_STARTING,
				 CIDER_URING_ENDED_EARLY);

	if (old == CIDER_URING_STARTING)
		return;
	if (atomic_cmpxchg(&l->state, CIDER_URING_ARMED, CIDER_URING_ENDING) ==
	    CIDER_URING_ARMED)
		cider_uring_in_task(l->cmd, l->task_cb);
	/* else cancelled: the command is gone, only the operation ends. */
}

bool cider_uring_link_cancel(struct cider_uring_link *l, unsigned int issue_flags)
{
	if (atomic_cmpxchg(&l->state, CIDER_URING_ARMED, CIDER_URING_CANCELLED) !=
	    CIDER_URING_ARMED)
		return false;	/* not armed yet (asked again later) or ending */
	io_uring_cmd_done(l->cmd, -ECANCELED, 0, issue_flags);
	return true;
}

bool cider_uring_task_gone(void)
{
	return current->flags & (PF_EXITING | PF_KTHREAD);
}

bool cider_uring_cancelling(unsigned int issue_flags)
{
	return issue_flags & CIDER_URING_F_CANCEL;
}
