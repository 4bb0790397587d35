// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection for the data path; see fault.h.  Every knob is off by
 * default and costs one READ_ONCE() or atomic_read() on the fast path.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/delay.h>

#include "fault.h"

static u32 cider_fault_post_at;
static atomic_t cider_fault_post_times = ATOMIC_INIT(0);
static bool cider_fault_refuse_atomics;
static atomic_t cider_fault_drop = ATOMIC_INIT(0);
static bool cider_fault_swab;
static u32 cider_fault_cm_ev;
static atomic_t cider_fault_cm_ev_times = ATOMIC_INIT(0);
static u32 cider_fault_cm_ev_chan;
static s64 cider_fault_hello_delta;
static u32 cider_fault_cm_delay_ms;
static u32 cider_fault_remove_delay_ms;
static u32 cider_fault_store_delay_ms;
static u32 cider_fault_agent_delay_ms;
static atomic_t cider_fault_kv_stall_n = ATOMIC_INIT(0);
static atomic_t cider_fault_break_qps = ATOMIC_INIT(0);

void cider_fault_init(struct dentry *root)
{
	struct dentry *dir = debugfs_create_dir("fault", root);

	debugfs_create_u32("post_fail_at", 0600, dir, &cider_fault_post_at);
	debugfs_create_atomic_t("post_fail_times", 0600, dir, &cider_fault_post_times);
	debugfs_create_bool("refuse_atomics", 0600, dir, &cider_fault_refuse_atomics);
	debugfs_create_atomic_t("drop_cqes", 0600, dir, &cider_fault_drop);
	debugfs_create_bool("swab_atomics", 0600, dir, &cider_fault_swab);
	debugfs_create_u32("cm_event", 0600, dir, &cider_fault_cm_ev);
	debugfs_create_atomic_t("cm_event_times", 0600, dir, &cider_fault_cm_ev_times);
	debugfs_create_u32("cm_event_channel", 0600, dir, &cider_fault_cm_ev_chan);
	debugfs_create_x64("hello_size_delta", 0600, dir, (u64 *)&cider_fault_hello_delta);
	debugfs_create_u32("cm_delay_ms", 0600, dir, &cider_fault_cm_delay_ms);
	debugfs_create_u32("remove_delay_ms", 0600, dir, &cider_fault_remove_delay_ms);
	debugfs_create_u32("store_delay_ms", 0600, dir, &cider_fault_store_delay_ms);
	debugfs_create_u32("agent_delay_ms", 0600, dir, &cider_fault_agent_delay_ms);
	debugfs_create_atomic_t("kv_stall", 0600, dir, &cider_fault_kv_stall_n);
	debugfs_create_atomic_t("break_qps", 0600, dir, &cider_fault_break_qps);
}

/* Take one count of @v if any is left. */
static bool cider_fault_take(atomic_t *v)
{
	return atomic_add_unless(v, -1, 0);
}

static bool cider_wr_is_atomic(const struct ib_send_wr *wr)
{
	return wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       wr->opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * Where an injected fault cuts @first, and with which error; NULL when
 * the chain is posted as it is.
 */
static struct ib_send_wr *cider_fault_cut(struct ib_send_wr *first, int *err)
{
	u32 at = READ_ONCE(cider_fault_post_at);
	struct ib_send_wr *wr;
	u32 i;

	if (READ_ONCE(cider_fault_refuse_atomics)) {
		for (wr = first; wr; wr = wr->next) {
			if (cider_wr_is_atomic(wr)) {
				*err = -EOPNOTSUPP;
				return wr;
			}
		}
	}
	if (!atomic_read(&cider_fault_post_times))
		return NULL;
	for (wr = first, i = 0; wr && i < at; i++)
		wr = wr->next;
	if (!wr || !cider_fault_take(&cider_fault_post_times))
		return NULL;
	*err = -ENOMEM;
	return wr;
}

/*
 * ib_post_send() with the injected faults: the work requests before the
 * cut are really posted (one doorbell), then the post fails at the cut
 * with *bad pointing at it, exactly as a driver that refuses one work
 * request of a chain reports it.
 */
int cider_fault_post_send(struct ib_qp *qp, struct ib_send_wr *first,
			  const struct ib_send_wr **bad)
{
	struct ib_send_wr *cut, *prev;
	int err = 0, ret;

	cut = cider_fault_cut(first, &err);
	if (likely(!cut))
		return ib_post_send(qp, first, bad);
	if (cut != first) {
		for (prev = first; prev->next != cut; prev = prev->next)
			;
		prev->next = NULL;
		ret = ib_post_send(qp, first, bad);
		prev->next = cut;
		if (ret)
			return ret;
	}
	*bad = cut;
	return err;
}

bool cider_fault_drop_cqe(void)
{
	return atomic_read(&cider_fault_drop) && cider_fault_take(&cider_fault_drop);
}

bool cider_fault_break_qp(void)
{
	return atomic_read(&cider_fault_break_qps) && cider_fault_take(&cider_fault_break_qps);
}

bool cider_fault_swab_atomics(void)
{
	return READ_ONCE(cider_fault_swab);
}

/*
 * Right after @ev (ESTABLISHED) on @id, channel @index: deliver an
 * injected event to @handler, as rdma_cm would (same id, the handler
 * mutex held).
 */
void cider_fault_cm_event(struct rdma_cm_id *id, unsigned int index,
			  const struct rdma_cm_event *ev, rdma_cm_event_handler handler)
{
	struct rdma_cm_event inj = {};

	if (!atomic_read(&cider_fault_cm_ev_times) ||
	    index < READ_ONCE(cider_fault_cm_ev_chan) ||
	    !cider_fault_take(&cider_fault_cm_ev_times))
		return;
	inj.event = READ_ONCE(cider_fault_cm_ev);
	pr_info("injected CM event %s after %s\n", rdma_event_msg(inj.event),
		rdma_event_msg(ev->event));
	handler(id, &inj);
}

s64 cider_fault_hello_size_delta(void)
{
	return READ_ONCE(cider_fault_hello_delta);
}

void cider_fault_cm_delay(void)
{
	u32 ms = READ_ONCE(cider_fault_cm_delay_ms);

	if (unlikely(ms))
		msleep(ms);
}

void cider_fault_remove_delay(void)
{
	u32 ms = READ_ONCE(cider_fault_remove_delay_ms);

	if (unlikely(ms))
		msleep(ms);
}

void cider_fault_store_delay(void)
{
	u32 ms = READ_ONCE(cider_fault_store_delay_ms);

	if (unlikely(ms))
		msleep(ms);
}

void cider_fault_agent_delay(void)
{
	u32 ms = READ_ONCE(cider_fault_agent_delay_ms);

	if (unlikely(ms))
		msleep(ms);
}

bool cider_fault_kv_stall(void)
{
	return atomic_read(&cider_fault_kv_stall_n) && cider_fault_take(&cider_fault_kv_stall_n);
}
