// SPDX-License-Identifier: GPL-2.0
/*
 * Channels: one RC connection to a memory node per CPU.  Connection set-up
 * through rdma_cm, batched posting under an adaptive credit bound, the
 * completion path, and teardown.  See channel.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/slab.h>

#include "cider.h"
#include "fault.h"
#include "mn.h"

static void cider_cm_done(struct cider_channel *ch, int status)
{
	ch->cm_status = status;
	complete(&ch->cm_done);
}

static void cider_qp_event(struct ib_event *ev, void *ctx)
{
	struct cider_channel *ch = ctx;

	/* rxe and others may signal COMM_EST before the CM sees the RTU. */
	switch (ev->event) {
	case IB_EVENT_COMM_EST:
		rdma_notify(ch->cm_id, IB_EVENT_COMM_EST);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
	case IB_EVENT_PATH_MIG_ERR:
		pr_err("mn%u: channel %u: %s\n", ch->mn->id, ch->index,
		       ib_event_msg(ev->event));
		cider_mn_lost(ch->mn, -EIO);
		break;
	default:
		break;
	}
}

/* Runs in the CM handler once the device is known. */
static int cider_channel_create_ib(struct cider_channel *ch)
{
	struct ib_device *dev = ch->cm_id->device;
	struct ib_qp_init_attr qa = {};
	int ret;

	WRITE_ONCE(ch->dev, dev);
	ch->sq_depth = min_t(u32, cider_sq_depth, dev->attrs.max_qp_wr - 1);
	/* One PD per device, shared by every channel on it (ibdev.c). */
	ch->pd = cider_ibdev_get_pd(dev);
	if (IS_ERR(ch->pd)) {
		ret = PTR_ERR(ch->pd);
		ch->pd = NULL;
		return ret;
	}
	/*
	 * Send completions, plus ib_drain_qp()'s two markers, from the
	 * device's shared CQ pool (each completion names its own handler
	 * through its ib_cqe, so sharing is free).  A shared CQ has no event
	 * handler of ours; an overrun would move the QP to the error state,
	 * which cider_qp_event() and the completion path report.
	 */
	ch->nr_cqe = ch->sq_depth + 2;
	ch->cq = ib_cq_pool_get(dev, ch->nr_cqe, ch->index, IB_POLL_SOFTIRQ);
	if (IS_ERR(ch->cq)) {
		ret = PTR_ERR(ch->cq);
		ch->cq = NULL;
		return ret;
	}
	qa.event_handler = cider_qp_event;
	qa.qp_context = ch;
	qa.send_cq = ch->cq;
	qa.recv_cq = ch->cq;
	qa.cap.max_send_wr = ch->sq_depth + 1;	/* +1: ib_drain_qp() */
	qa.cap.max_recv_wr = 1;			/* ib_drain_qp() only */
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(ch->cm_id, ch->pd, &qa);
	if (ret)
		return ret;
	ch->qp = ch->cm_id->qp;
	cider_credit_init(&ch->credit, ch->sq_depth,
			  (u64)cider_credit_interval_us * NSEC_PER_USEC,
			  cider_credit_stable, ktime_get_ns());
	cider_backoff_init(&ch->backoff, cider_backoff_t0_ns, 10,
			   NSEC_PER_MSEC, ktime_get_ns());
	return 0;
}

static int cider_channel_route_resolved(struct cider_channel *ch)
{
	struct ib_device_attr *attrs = &ch->dev->attrs;
	struct cider_cn_hello hello = {
		.magic = CIDER_CN_MAGIC,
		.cn_id = ch->mn->cn_id,
		.channel = ch->index,
	};
	struct rdma_conn_param param = {
		.private_data = &hello,
		.private_data_len = sizeof(hello),
		/* READs and atomics need both sides' RDMA-read resources. */
		.initiator_depth = min_t(int, attrs->max_qp_init_rd_atom, U8_MAX),
		.responder_resources = min_t(int, attrs->max_qp_rd_atom, U8_MAX),
		.retry_count = 7,
		.rnr_retry_count = 7,
	};

	return rdma_connect_locked(ch->cm_id, &param);
}

static int cider_channel_established(struct cider_channel *ch,
				     const struct rdma_cm_event *ev)
{
	const struct rdma_conn_param *p = &ev->param.conn;

	if (!p->private_data || p->private_data_len < sizeof(ch->hello))
		return -EPROTO;
	memcpy(&ch->hello, p->private_data, sizeof(ch->hello));
	if (ch->hello.magic != CIDER_MN_MAGIC ||
	    ch->hello.layout_version != CIDER_LAYOUT_VERSION)
		return -EPROTO;
	spin_lock_bh(&ch->lock);
	ch->live = true;
	ch->established = true;
	ch->last_active = jiffies;
	spin_unlock_bh(&ch->lock);
	return 0;
}

/*
 * An event this client does not expect (a multicast one, a connect
 * request, or one newer than this code): ignored, and each kind logged
 * once so that a flood of them cannot flood the log.
 */
static void cider_cm_unexpected(struct cider_channel *ch, const struct rdma_cm_event *ev)
{
	static DECLARE_BITMAP(seen, 64);
	unsigned int e = ev->event;

	if (e < 64 && test_and_set_bit(e, seen))
		return;
	pr_warn("mn%u: channel %u: unexpected CM event %s (%u), status %d; ignored\n",
		ch->mn->id, ch->index, rdma_event_msg(ev->event), e, ev->status);
}

static int cider_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct cider_channel *ch = id->context;
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = cider_channel_create_ib(ch);
		if (!ret)
			ret = rdma_resolve_route(id, CIDER_ATTACH_TIMEOUT_MS);
		if (ret)
			cider_cm_done(ch, ret);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = cider_channel_route_resolved(ch);
		if (ret)
			cider_cm_done(ch, ret);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		cider_cm_done(ch, cider_channel_established(ch, ev));
		break;
	case RDMA_CM_EVENT_REJECTED:
		cider_cm_done(ch, -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		cider_cm_done(ch, -EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		cider_cm_done(ch, -ECONNRESET);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	/* The address moved to another port or device: as nvme-rdma, recover. */
	case RDMA_CM_EVENT_ADDR_CHANGE:
		cider_mn_lost(ch->mn, -ENOTCONN);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * Handled by the ib_client's .remove, which ib_core calls
		 * before rdma_cm's own.
		 */
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		cider_cm_unexpected(ch, ev);
		break;
	}
	return 0;	/* never let rdma_cm destroy the id under us */
}

void cider_channel_init(struct cider_channel *ch, struct cider_mn *mn,
			unsigned int index)
{
	ch->mn = mn;
	ch->index = index;
	init_completion(&ch->cm_done);
	spin_lock_init(&ch->lock);
	INIT_LIST_HEAD(&ch->backlog);
	INIT_LIST_HEAD(&ch->inflight);
}

/* Start connecting; completion (or failure) is reported in ch->cm_done. */
int cider_channel_connect(struct cider_channel *ch, struct sockaddr *dst,
			  unsigned long timeout_ms)
{
	int ret;

	ch->cm_id = rdma_create_id(&init_net, cider_cm_handler, ch,
				   RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(ch->cm_id)) {
		ret = PTR_ERR(ch->cm_id);
		ch->cm_id = NULL;
		return ret;
	}
	return rdma_resolve_addr(ch->cm_id, NULL, dst, timeout_ms);
}

static void cider_fail_list(struct list_head *list, int status)
{
	struct cider_batch *b, *tmp;

	list_for_each_entry_safe(b, tmp, list, node) {
		list_del_init(&b->node);
		if (!b->status)
			b->status = status;
		cider_batch_finish(b);
	}
}

/* Stop posting; the first reason sticks.  Returns whether it was live. */
static bool cider_channel_stop(struct cider_channel *ch, int reason)
{
	bool was_live = ch->live;

	lockdep_assert_held(&ch->lock);
	ch->live = false;
	if (!ch->reason)
		WRITE_ONCE(ch->reason, reason);
	return was_live;
}

/*
 * WRs [b->acked, upto) of @b are accounted: return their credits and count
 * them by op.
 */
static void cider_batch_ack(struct cider_channel *ch, struct cider_batch *b,
			    unsigned int upto, u64 now)
{
	unsigned int i;

	lockdep_assert_held(&ch->lock);
	if (upto <= b->acked)
		return;
	for (i = b->acked; i < upto; i++)
		ch->stats.done[b->wr[i].op]++;
	cider_credit_put(&ch->credit, upto - b->acked, now);
	b->acked = upto;
}

/*
 * A post failed at WR @from of @b: WRs from there on never reached the
 * NIC and fail with the post's error (cider_batch_finish() gives each of
 * them b->status).  The ones before it are on the NIC, none of them
 * signalled: the channel is killed, and its drain flushes them or, if
 * they executed silently, the cancel after the drain accounts them.
 * Returns whether @b is done.
 */
static bool cider_batch_unposted(struct cider_channel *ch, struct cider_batch *b,
				 unsigned int from, int err)
{
	lockdep_assert_held(&ch->lock);
	if (!b->status)
		b->status = err;
	b->posted = from;
	cider_credit_put(&ch->credit, b->nr - from, ktime_get_ns());
	return b->acked >= b->posted;
}

/*
 * ib_post_send() failed at @bad: batches before its batch are on the NIC,
 * its batch is from @bad on, later ones not at all.  Without @bad, assume
 * nothing was posted.
 */
static void cider_channel_unwind(struct cider_channel *ch, struct list_head *posting,
				 const struct ib_send_wr *bad, int err,
				 struct list_head *failed)
{
	struct cider_wr *bw = bad ? container_of(bad, struct cider_wr, wr) : NULL;
	bool past_bad = !bw;
	struct cider_batch *b, *tmp;

	list_for_each_entry_safe(b, tmp, posting, node) {
		unsigned int from = b->nr;

		if (bw && bw->batch == b) {
			from = bw->index;
			past_bad = true;
		} else if (past_bad) {
			from = 0;
		}
		if (from < b->nr && cider_batch_unposted(ch, b, from, err))
			list_move_tail(&b->node, failed);
		else
			list_move_tail(&b->node, &ch->inflight);
	}
}

/*
 * Post every backlogged batch that fits the credit bound, chained into one
 * ib_post_send() (one doorbell).  Batches that failed are moved to
 * @failed for the caller to finish unlocked.
 */
static void cider_channel_flush(struct cider_channel *ch, struct list_head *failed)
{
	struct cider_batch *b, *tmp, *prev = NULL;
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *first = NULL;
	LIST_HEAD(posting);
	unsigned int nwr = 0;
	int ret;

	lockdep_assert_held(&ch->lock);
	list_for_each_entry_safe(b, tmp, &ch->backlog, node) {
		if (!cider_credit_take(&ch->credit, b->nr))
			break;
		b->wr[b->nr - 1].wr.next = NULL;
		if (prev)
			prev->wr[prev->nr - 1].wr.next = &b->wr[0].wr;
		else
			first = &b->wr[0].wr;
		b->posted = b->nr;
		nwr += b->nr;
		prev = b;
		list_move_tail(&b->node, &posting);
	}
	if (!first)
		return;

	ch->stats.doorbells++;
	ch->stats.wrs += nwr;
	ret = cider_fault_post_send(ch->qp, first, &bad);
	if (likely(!ret)) {
		list_splice_tail(&posting, &ch->inflight);
		return;
	}

	/*
	 * A device that refuses one work request of a chain (mlx5 refuses
	 * kernel atomics this way) has rung the doorbell for the ones
	 * before it.  Those cannot be taken back: the channel stops and its
	 * drain and cancel account them; the rest fail now.
	 */
	ch->stats.post_errors++;
	if (ch->live && cider_mn_listed(ch->mn))
		pr_err("mn%u: %s: ib_post_send: %pe\n", ch->mn->id, ch->dev->name,
		       ERR_PTR(ret));
	cider_channel_stop(ch, ret);
	cider_channel_unwind(ch, &posting, bad, ret, failed);
	cider_mn_lost(ch->mn, ret);
}

/*
 * Queue @b and post what fits.  A batch the send queue can never hold is
 * refused (non-zero return, nothing done); otherwise @b is finished
 * exactly once, by the completion path or at once when the channel has
 * stopped.  Process context.
 */
int cider_channel_submit(struct cider_channel *ch, struct cider_batch *b)
{
	LIST_HEAD(failed);

	if (b->nr > ch->sq_depth)
		return -EINVAL;
	spin_lock_bh(&ch->lock);
	if (!ch->live) {
		spin_unlock_bh(&ch->lock);
		b->status = READ_ONCE(ch->reason) ?: READ_ONCE(ch->mn->dead_reason) ?: -ENOTCONN;
		cider_batch_finish(b);
		return 0;
	}
	b->deadline = jiffies + msecs_to_jiffies(READ_ONCE(cider_op_timeout_ms));
	ch->last_active = jiffies;
	ch->stats.batches++;
	ch->stats.keepalives += b->keepalive;
	if (!list_empty(&ch->backlog) || ch->credit.inflight + b->nr > ch->credit.limit)
		ch->stats.backlogged++;
	list_add_tail(&b->node, &ch->backlog);
	cider_channel_flush(ch, &failed);
	spin_unlock_bh(&ch->lock);
	cider_fail_list(&failed, -EIO);
	return 0;
}

/*
 * The -errno a WR that completed with @status reports.  The responder's
 * refusals and local errors mean the operation did not execute; after
 * any other error (a flush above all) a WRITE or atomic may have executed
 * on the node before its acknowledgment was lost: -ECOMM, "outcome
 * unknown", so that nobody retries a FAA blindly.  A READ changes
 * nothing, so it reports why the channel died.
 */
static int cider_wc_errno(const struct cider_wr *w, enum ib_wc_status status,
			  int reason)
{
	switch (status) {
	case IB_WC_REM_ACCESS_ERR:
	case IB_WC_REM_INV_REQ_ERR:
		return -EREMOTEIO;
	case IB_WC_LOC_LEN_ERR:
	case IB_WC_LOC_QP_OP_ERR:
	case IB_WC_LOC_PROT_ERR:
	case IB_WC_LOC_ACCESS_ERR:
		return -EIO;
	default:
		if (w->op != CIDER_RDMA_READ)
			return -ECOMM;
		return status == IB_WC_WR_FLUSH_ERR ? reason : -EIO;
	}
}

void cider_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct cider_wr *w = container_of(wc->wr_cqe, struct cider_wr, cqe);
	struct cider_batch *b = w->batch;
	struct cider_channel *ch = b->ch;
	bool fatal = false, done;
	LIST_HEAD(failed);

	if (likely(wc->status == IB_WC_SUCCESS) && unlikely(cider_fault_drop_cqe()))
		return;		/* injected: lost by the "device" */

	spin_lock_bh(&ch->lock);
	ch->stats.cqes++;
	ch->last_active = jiffies;
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		ch->stats.errors++;
		if (wc->status != IB_WC_WR_FLUSH_ERR && ch->live && cider_mn_listed(ch->mn))
			pr_err("mn%u: %s: %s on channel %u\n", ch->mn->id, ch->dev->name,
			       ib_wc_status_msg(wc->status), ch->index);
		/* The QP is in the error state now. */
		fatal = cider_channel_stop(ch, wc->status == IB_WC_WR_FLUSH_ERR ?
					   -ENOTCONN : -EIO);
		w->status = cider_wc_errno(w, wc->status, ch->reason);
		list_splice_tail_init(&ch->backlog, &failed);
	}
	cider_batch_ack(ch, b, w->index + 1, ktime_get_ns());
	done = b->acked >= b->posted;
	if (done)
		list_del_init(&b->node);
	if (ch->live)
		cider_channel_flush(ch, &failed);
	spin_unlock_bh(&ch->lock);

	if (fatal)
		cider_mn_lost(ch->mn, READ_ONCE(ch->reason));
	if (done)
		cider_batch_finish(b);
	cider_fail_list(&failed, READ_ONCE(ch->reason) ?: -ENOTCONN);
}

/*
 * After the drain nothing of this channel completes any more: what is
 * still outstanding had its completion lost, or ran unsignalled ahead of
 * a post that failed.  Fail it, so that every batch finishes.
 */
static void cider_channel_cancel(struct cider_channel *ch)
{
	LIST_HEAD(left);
	struct cider_batch *b;

	spin_lock_bh(&ch->lock);
	list_splice_tail_init(&ch->inflight, &left);
	list_splice_tail_init(&ch->backlog, &left);
	list_for_each_entry(b, &left, node)
		ch->stats.canceled++;
	spin_unlock_bh(&ch->lock);
	cider_fail_list(&left, READ_ONCE(ch->reason) ?: -ENOTCONN);
}

/*
 * Stop the channel for good, as the in-kernel ULPs do: nothing more is
 * posted, the backlog fails with @reason, the QP goes to the error state
 * (rdma_disconnect) and is drained, so every posted WR is flushed back
 * through cider_wr_done(), and whatever is still outstanding after that
 * is failed.  Afterwards every batch ever submitted has finished.
 * Process context; serialized by the node's res_sem.
 */
void cider_channel_kill(struct cider_channel *ch, int reason)
{
	LIST_HEAD(failed);

	if (!ch->cm_id || ch->drained)
		return;
	spin_lock_bh(&ch->lock);
	cider_channel_stop(ch, reason);
	list_splice_tail_init(&ch->backlog, &failed);
	spin_unlock_bh(&ch->lock);
	cider_fail_list(&failed, READ_ONCE(ch->reason));
	/* Only a connected QP can have work posted to drain. */
	if (ch->established) {
		rdma_disconnect(ch->cm_id);
		ib_drain_qp(ch->qp);
	}
	ch->drained = true;
	cider_channel_cancel(ch);
}

/* Has the oldest outstanding batch outlived op_timeout_ms? */
bool cider_channel_overdue(struct cider_channel *ch)
{
	struct cider_batch *b;
	bool late = false;

	spin_lock_bh(&ch->lock);
	b = list_first_entry_or_null(&ch->inflight, struct cider_batch, node);
	if (!b)
		b = list_first_entry_or_null(&ch->backlog, struct cider_batch, node);
	if (b)
		late = time_after(jiffies, b->deadline);
	spin_unlock_bh(&ch->lock);
	return late;
}

/* Live, with nothing outstanding or waiting, for at least @idle jiffies? */
bool cider_channel_idle(struct cider_channel *ch, unsigned long idle)
{
	bool ret;

	spin_lock_bh(&ch->lock);
	ret = ch->live && list_empty(&ch->inflight) && list_empty(&ch->backlog) &&
	      time_after(jiffies, ch->last_active + idle);
	spin_unlock_bh(&ch->lock);
	return ret;
}

/*
 * Release everything.  The kill drains first: every posted batch has been
 * finished before anything is freed.  The CM id goes next so that no
 * handler runs on a half-destroyed channel.
 */
void cider_channel_destroy(struct cider_channel *ch)
{
	if (ch->cm_id) {
		cider_channel_kill(ch, -ENOTCONN);
		rdma_destroy_id(ch->cm_id);
		ch->cm_id = NULL;
		/*
		 * No handler runs any more: release an attach still waiting
		 * for this channel (the device went away under it).
		 */
		if (!completion_done(&ch->cm_done)) {
			WRITE_ONCE(ch->cm_status, -ENODEV);
			complete_all(&ch->cm_done);
		}
	}
	WARN_ON(!list_empty(&ch->inflight) || !list_empty(&ch->backlog));
	if (ch->qp) {
		ib_destroy_qp(ch->qp);
		ch->qp = NULL;
	}
	if (ch->cq) {
		ib_cq_pool_put(ch->cq, ch->nr_cqe);
		ch->cq = NULL;
	}
	if (ch->pd) {
		cider_ibdev_put_pd(ch->dev);
		ch->pd = NULL;
	}
}
