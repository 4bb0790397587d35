/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who completes an io_uring command that started an operation: the
 * operation's end or, from 6.7, a cancellation when the command's ring or
 * task goes away (kmod/compat.h).  Exactly one of them does.
 *
 * The link lives in the operation (not in the command, which is freed
 * once completed), and the operation's owner holds a reference for the
 * command until the command is completed:
 *
 *	cider_uring_link_init(&op->link, cmd, task_cb);	before starting it
 *	start the operation; on failure return the error as before
 *	cider_uring_link_arm(&op->link, issue_flags);	once it is under way
 *	return -EIOCBQUEUED;
 *
 *	cider_uring_link_end(&op->link);	the operation ended (any context):
 *						task_cb runs in the submitter's task
 *	cider_uring_link_cancel(&op->link, issue_flags)
 *				from ->uring_cmd() with IO_URING_F_CANCEL: true
 *				if it completed the command (-ECANCELED), and the
 *				caller drops the command's reference; the
 *				operation goes on and ends on its own references
 *
 * task_cb completes the command with io_uring_cmd_done(), reading the
 * operation before and dropping the command's reference after it.
 */
#ifndef _CIDER_URING_H
#define _CIDER_URING_H

#include <linux/atomic.h>
#include <linux/types.h>

struct io_uring_cmd;

typedef void (*cider_uring_task_fn)(struct io_uring_cmd *cmd, unsigned int issue_flags);

struct cider_uring_link {
	struct io_uring_cmd *cmd;
	cider_uring_task_fn task_cb;
	atomic_t state;			/* enum cider_uring_state (uring.c) */
};

void cider_uring_link_init(struct cider_uring_link *l, struct io_uring_cmd *cmd,
			   cider_uring_task_fn task_cb);
void cider_uring_link_arm(struct cider_uring_link *l, unsigned int issue_flags);
void cider_uring_link_end(struct cider_uring_link *l);
bool cider_uring_link_cancel(struct cider_uring_link *l, unsigned int issue_flags);

/*
 * In task_cb: the submitter is exiting, or task_cb runs in a kernel
 * thread (io_uring's fallback when the task could not take task work):
 * its user memory is not to be touched, the result is not copied out.
 */
bool cider_uring_task_gone(void);

/* ->uring_cmd()'s @issue_flags ask to cancel (never before 6.7). */
bool cider_uring_cancelling(unsigned int issue_flags);

#endif /* _CIDER_URING_H */
