/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Fault injection for the data path: failures soft-RoCE never produces,
 * so that the selftests can drive every error path.  Built only with
 * CIDER_FAULT_INJECTION (Kbuild: the test builds); without it each hook
 * below is an inline that injects nothing, and the module has neither
 * the knobs nor their code.  Not the kernel's fault_attr: Debian's stock
 * kernels, where most selftests run, are built without
 * CONFIG_FAULT_INJECTION.  Knobs in /sys/kernel/debug/cider/fault/ (root
 * only):
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
 *   cm_event, cm_event_times, cm_event_channel
 *	the next cm_event_times channels with index cm_event_channel or
 *	higher that reach ESTABLISHED receive, right after it, a CM event of
 *	kind cm_event (enum rdma_cm_event_type: 10 DISCONNECTED,
 *	14 ADDR_CHANGE, ...), as rdma_cm would deliver it; rxe never moves
 *	an address (that takes a bonding fail-over)
 *   hello_size_delta
 *	added to the region size a memory node's connection hello
 *	announces, as from a node whose hello and superblock disagree
 *   cm_delay_ms, remove_delay_ms, store_delay_ms
 *	widen three race windows: the CM handler sleeps before it takes the
 *	device's resources for a channel whose address just resolved, the
 *	ib_client's .remove sleeps after it has stopped every node on the
 *	device, before it checks that nothing uses the device any more, and
 *	an attach sleeps while it builds the node's KV store (a shard
 *	allocated, not yet set up), where the node can be lost
 *   agent_delay_ms
 *	each batch for the atomics agent waits this long in the agent's task
 *	before it is handed out: the agent path runs late against the
 *	kernel's channels, to show no order the core relies on spans the two
 *   kv_stall
 *	the next kv_stall verb batches a KV store's core asks to post are
 *	dropped, neither posted nor failed, as a lost wake-up or a lost
 *	completion would leave them: only the operation's bound
 *	(kvstore.c) ends such an operation
 *   break_qps
 *	the next break_qps channels a memory node's watchdog visits (every
 *	250 ms, each channel of each node in turn) have their QP moved to
 *	the error state, where a link that broke leaves it once the NIC's
 *	retries ran out: what was posted is flushed back, and the node
 *	reconnects
 */
#ifndef _CIDER_FAULT_H
#define _CIDER_FAULT_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

struct dentry;

#ifdef CIDER_FAULT_INJECTION
void cider_fault_init(struct dentry *root);
int cider_fault_post_send(struct ib_qp *qp, struct ib_send_wr *first,
			  const struct ib_send_wr **bad);
bool cider_fault_drop_cqe(void);
bool cider_fault_break_qp(void);
bool cider_fault_swab_atomics(void);
void cider_fault_cm_event(struct rdma_cm_id *id, unsigned int index,
			  const struct rdma_cm_event *ev, rdma_cm_event_handler handler);
s64 cider_fault_hello_size_delta(void);
void cider_fault_cm_delay(void);
void cider_fault_remove_delay(void);
void cider_fault_store_delay(void);
void cider_fault_agent_delay(void);
bool cider_fault_kv_stall(void);
#else
static inline void cider_fault_init(struct dentry *root) { }

static inline int cider_fault_post_send(struct ib_qp *qp, struct ib_send_wr *first,
					const struct ib_send_wr **bad)
{
	return ib_post_send(qp, first, bad);
}

static inline bool cider_fault_drop_cqe(void) { return false; }
static inline bool cider_fault_break_qp(void) { return false; }
static inline bool cider_fault_swab_atomics(void) { return false; }

static inline void cider_fault_cm_event(struct rdma_cm_id *id, unsigned int index,
					const struct rdma_cm_event *ev,
					rdma_cm_event_handler handler) { }

static inline s64 cider_fault_hello_size_delta(void) { return 0; }
static inline void cider_fault_cm_delay(void) { }
static inline void cider_fault_remove_delay(void) { }
static inline void cider_fault_store_delay(void) { }
static inline void cider_fault_agent_delay(void) { }
static inline bool cider_fault_kv_stall(void) { return false; }
#endif

#endif
