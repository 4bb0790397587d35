/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The atomics agent: a user-space process (cider-agentd) that runs, on its
 * own queue pairs, the batches holding an atomic of memory nodes whose
 * RDMA device refuses atomics posted from the kernel (upstream mlx5).
 * Fetch and commit over io_uring as ublk does; the uapi header says what
 * the agent sees, Documentation/datapath.rst ("The atomics agent") why
 * the order of verbs holds.
 *
 * A node in agent mode embeds a struct cider_agent_dest; its batches that
 * hold an atomic go to cider_agent_submit() instead of a channel, whole.
 * Every such batch is finished exactly once, as a channel's would be: with
 * the agent's statuses, or not executed (never handed to the agent), or
 * "outcome unknown" (handed to an agent that died or stalled).
 */
#ifndef _CIDER_AGENT_H
#define _CIDER_AGENT_H

#include <linux/atomic.h>
#include <linux/types.h>

struct cider_batch;
struct file;
struct io_uring_cmd;

/* Where the agent sends a node's batches; the node's, for its life. */
struct cider_agent_dest {
	u32 mn_id;
	u32 generation;		/* new at attach and at every reconnect */
	u32 cn_id;
	u16 family;
	u16 port;		/* host byte order */
	u8 addr[16];
	u64 region_size;
	atomic_t held;		/* its batches on the agent path, unfinished */
	atomic64_t batches;	/* handed to the agent */
	atomic64_t verbs;
	atomic64_t failed;	/* ended without the agent's result */
};

void cider_agent_dest_init(struct cider_agent_dest *d);
bool cider_batch_has_atomic(const struct cider_batch *b);
int cider_agent_submit(struct cider_agent_dest *d, struct cider_batch *b);
void cider_agent_drain(struct cider_agent_dest *d);
bool cider_agent_registered(void);

long cider_agent_ioctl_register(struct file *file, void __user *uarg, unsigned int cmd);
bool cider_agent_uring_is_mine(const struct io_uring_cmd *cmd);
int cider_agent_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags);
void cider_agent_uring_cancel(struct io_uring_cmd *cmd, unsigned int issue_flags);
void cider_agent_release(struct file *file);

#endif /* _CIDER_AGENT_H */
