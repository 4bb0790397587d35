/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernel lines cider.ko builds for, in one
 * place: Debian 12's 6.1 and 6.12 (bookworm-backports, Debian 13).  The
 * rest of the module calls these helpers and never tests a version.
 *
 * io_uring passthrough commands (IORING_OP_URING_CMD):
 *   6.5  the command's payload is reached through the SQE,
 *        io_uring_sqe_cmd(cmd->sqe), no longer as cmd->cmd; and task work
 *        can wake the waiter lazily (io_uring_cmd_do_in_task_lazy)
 *   6.7  a driver can mark a queued command cancelable: io_uring then
 *        calls ->uring_cmd() again with IO_URING_F_CANCEL when the ring or
 *        its task goes away, instead of waiting for the command to end
 *   6.8  struct io_uring_cmd and its helpers moved to <linux/io_uring/cmd.h>
 * Tracepoints:
 *   6.10 __assign_str() takes only the field: the source comes from the
 *        field's __string() declaration
 */
#ifndef _CIDER_COMPAT_H
#define _CIDER_COMPAT_H

#include <linux/version.h>

/*
 * Built against kernel @major.@minor or later.  The one use of
 * LINUX_VERSION_CODE (make checkpatch lets this file have it).
 */
#define CIDER_SINCE(major, minor) (KERNEL_VERSION(major, minor, 0) <= LINUX_VERSION_CODE)

#if CIDER_SINCE(6, 8)
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif

/* The command area of @cmd's SQE (80 bytes with IORING_SETUP_SQE128). */
static inline const void *cider_uring_payload(const struct io_uring_cmd *cmd)
{
#if CIDER_SINCE(6, 5)
	return io_uring_sqe_cmd(cmd->sqe);
#else
	return cmd->cmd;
#endif
}

/*
 * Run @cb in the submitter's task.  Each of our task works posts exactly
 * one CQE, which is what the lazy wake-up (from 6.5) counts on: a waiter
 * for several completions is woken once, not per command.
 */
static inline void cider_uring_in_task(struct io_uring_cmd *cmd,
				       void (*cb)(struct io_uring_cmd *, unsigned int))
{
#if CIDER_SINCE(6, 5)
	io_uring_cmd_do_in_task_lazy(cmd, cb);
#else
	io_uring_cmd_complete_in_task(cmd, cb);
#endif
}

/*
 * May a command answer -EAGAIN from its first, non-blocking issue, for
 * io_uring to issue it again from a worker?  Up to 6.9 io_uring then
 * copies the SQE and points the command at the copy.  From 6.10 (its
 * deferred SQE copy; Debian's 6.12 is such a kernel) it copies the SQE but
 * leaves cmd->sqe in the submission ring, which the application may have
 * filled with another command by the time the worker reads it: the
 * re-issue then runs that other command under this one's user_data (a
 * GET's CQE with another key's length, its buffer untouched; found by
 * python3-cider's batch test).  There a KV command waits for its slot in
 * its first issue instead.
 */
#define CIDER_URING_REISSUE_KEEPS_SQE (!CIDER_SINCE(6, 10))

#if CIDER_SINCE(6, 7)
#define CIDER_URING_CANCELABLE 1
/* ->uring_cmd() called to cancel a command marked cancelable. */
#define CIDER_URING_F_CANCEL IO_URING_F_CANCEL
#else
#define CIDER_URING_CANCELABLE 0
#define CIDER_URING_F_CANCEL 0
#endif

/*
 * Let io_uring cancel @cmd when its ring or task goes away (6.7+); before
 * 6.7 the exiting task waits for the command's end, which the data path's
 * watchdog bounds (op_timeout_ms).
 */
static inline void cider_uring_mark_cancelable(struct io_uring_cmd *cmd,
					       unsigned int issue_flags)
{
#if CIDER_URING_CANCELABLE
	io_uring_cmd_mark_cancelable(cmd, issue_flags);
#endif
}

/* In TP_fast_assign(): copy the string @src into the __string() @dst. */
#if CIDER_SINCE(6, 10)
#define cider_assign_str(dst, src) __assign_str(dst)
#else
#define cider_assign_str(dst, src) __assign_str(dst, src)
#endif

#endif /* _CIDER_COMPAT_H */
