/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection for the data path: failures soft-RoCE never produces,
 * so that the selftests can drive every error path.  Knobs in
 * /sys/kernel/debug/cider/fault/ (root only):
 *
 *   post_fail_at, post_fail_times
 *	the next post_fail_times ib_post_send() chains longer than
 *	post_fail_at have their first post_fail_at work requests really
 *	posted, then fail with -ENOMEM at that one, as a full send queue
 *	would; one count per failed post
 *   refuse_atomics
 *	like the upstream mlx5 driver: post everything before the first
 *	atomic of a chain (the doorbell rings for it), then fail the
 *	atomic with -EOPNOTSUPP
 *   drop_cqes
 *	the next drop_cqes successful completions are discarded, as if the
 *	device had lost them: only the watchdog can end their batches
 *   swab_atomics
 *	atomic results come back byte-swapped, as from a device that gets
 *	the endianness of atomic responses wrong
 */
#ifndef _CIDER_FAULT_H
#define _CIDER_FAULT_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct dentry;

void cider_fault_init(struct dentry *root);
int cider_fault_post_send(struct ib_qp *qp, struct ib_send_wr *first,
			  const struct ib_send_wr **bad);
bool cider_fault_drop_cqe(void);
bool cider_fault_swab_atomics(void);

#endif
