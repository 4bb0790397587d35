// SPDX-License-Identifier: GPL-2.0
/*
 * Channels: one RC connection to a memory node per CPU.  Connection set-up
 * through rdma_cm, batched posting under an adaptive credit bound, the
 * completion path, and teardown.  See transport.h.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/slab.h>

#include "cider.h"
#include "cider_trace.h"
#include "fault.h"
#include "keyproof.h"
#include "params.h"
#include "transport.h"

/* In the enum's order: both come from the list (vocab.h). */
static const char *const cider_chan_state_names[] = {
	CIDER_CHAN_STATES(CIDER_VOCAB_NAME, CIDER_VOCAB_NAME)
};

const char *cider_chan_state_name(enum cider_chan_state s)
{
	return s < ARRAY_SIZE(cider_chan_state_names) ? cider_chan_state_names[s] : "?";
}

/*
 * The only place a channel's state changes: CONNECTING -> LIVE ->
 * STOPPED -> DRAINED, or CONNECTING -> STOPPED.  Entering STOPPED sets
 * the reason, and the first reason sticks.  Returns whether the state
 * changed, so that stopping is idempotent.
 */
static bool cider_channel_set_state(struct cider_channel *ch,
				    enum cider_chan_state new, int reason)
{
	enum cider_chan_state old = ch->state;

	lockdep_assert_held(&ch->lock);
	switch (new) {
	case CIDER_CHAN_LIVE:
		if (old != CIDER_CHAN_CONNECTING)
			return false;
		ch->established = true;
		break;
	case CIDER_CHAN_STOPPED:
		if (old != CIDER_CHAN_CONNECTING && old != CIDER_CHAN_LIVE)
			return false;
		WRITE_ONCE(ch->reason, reason);
		break;
	case CIDER_CHAN_DRAINED:
		if (old != CIDER_CHAN_STOPPED)
			return false;
		break;
	default:
		return false;
	}
	WRITE_ONCE(ch->state, new);
	trace_cider_chan_state(ch->name, ch->index, old, new, ch->reason);
	return true;
}

static bool cider_channel_live(const struct cider_channel *ch)
{
	return READ_ONCE(ch->state) == CIDER_CHAN_LIVE;
}

/* Log data-path errors: only live channels of an owner that wants it. */
static bool cider_channel_loud(const struct cider_channel *ch)
{
	return cider_channel_live(ch) && READ_ONCE(ch->verbose);
}

void cider_channel_set_verbose(struct cider_channel *ch, bool verbose)
{
	WRITE_ONCE(ch->verbose, verbose);
}

/*
 * Report the outcome of connection set-up, once.  From the CM handler
 * (serialized by rdma_cm's handler mutex) or, after the CM id is gone,
 * from cider_channel_destroy().
 */
static void cider_cm_done(struct cider_channel *ch, int status)
{
	if (ch->cm_reported)
		return;
	ch->cm_reported = true;
	WRITE_ONCE(ch->cm_status, status);
	complete_all(&ch->cm_done);
}

/*
 * The channel failed by itself: it stops accepting work, its owner
 * hears why, and a connect still under way fails with the same reason.
 * The owner hears first: a connect waiter woken by the failure must find
 * its owner already told (an attach says "lost while attaching" only
 * when its node is lost).  Process context (the CM handler).
 */
static void cider_channel_fail(struct cider_channel *ch, int reason)
{
	bool stopped;

	spin_lock_bh(&ch->lock);
	stopped = cider_channel_set_state(ch, CIDER_CHAN_STOPPED, reason);
	spin_unlock_bh(&ch->lock);
	if (stopped)
		ch->ops->error(ch, reason);
	cider_cm_done(ch, reason);
}

static void cider_qp_event(struct ib_event *ev, void *ctx)
{
	struct cider_channel *ch = ctx;

	/*
	 * Any context (mlx5 may call from its interrupt handler): no channel
	 * lock here.  The owner stops the channel from process context.
	 * rxe and others may signal COMM_EST before the CM sees the RTU.
	 */
	switch (ev->event) {
	case IB_EVENT_COMM_EST:
		rdma_notify(ch->cm_id, IB_EVENT_COMM_EST);
		break;
	case IB_EVENT_QP_FATAL:
	case IB_EVENT_QP_REQ_ERR:
	case IB_EVENT_QP_ACCESS_ERR:
	case IB_EVENT_PATH_MIG_ERR:
		pr_err("%s: channel %u: %s\n", ch->name, ch->index,
		       ib_event_msg(ev->event));
		ch->ops->error(ch, -EIO);
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

	cider_fault_cm_delay();
	/*
	 * Before the PD: device removal looks for channels on the device
	 * after it has stopped handing out PDs (ibdev.c), so it either
	 * finds this one or this one gets no PD.
	 */
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
	struct {
		struct cider_cn_hello hello;
		struct cider_cn_proof proof;
	} req = { .hello = {
		.magic = CIDER_CN_MAGIC,
		.cn_id = ch->cn_id,
		.channel = ch->index,
	} };
	struct rdma_conn_param param = {
		.private_data = &req,
		.private_data_len = ch->key ? sizeof(req) : sizeof(req.hello),
		/* READs and atomics need both sides' RDMA-read resources. */
		.initiator_depth = min_t(int, attrs->max_qp_init_rd_atom, U8_MAX),
		.responder_resources = min_t(int, attrs->max_qp_rd_atom, U8_MAX),
		.retry_count = 7,
		.rnr_retry_count = 7,
	};
	int ret;

	if (ch->key) {
		ret = cider_key_prove(ch->key, &req.hello,
				      (struct sockaddr *)&ch->cm_id->route.addr.src_addr,
				      (struct sockaddr *)&ch->cm_id->route.addr.dst_addr,
				      &ch->proof);
		if (ret)
			return ret;
		req.proof = ch->proof;
	}
	return rdma_connect_locked(ch->cm_id, &param);
}

/*
 * With a key, the accept must carry the node's proof after its hello
 * (core/keyproof.h).  An IB CM REP's private data comes padded with
 * zeros, so a node without a key fails the check like a wrong one.
 */
static int cider_channel_check_proof(struct cider_channel *ch,
				     const struct rdma_conn_param *p)
{
	struct cider_mn_proof mp;

	if (!ch->key)
		return 0;
	if (p->private_data_len < sizeof(ch->hello) + sizeof(mp))
		return -ENOKEY;
	memcpy(&mp, (const u8 *)p->private_data + sizeof(ch->hello), sizeof(mp));
	return cider_key_check(ch->key, &ch->proof, &ch->hello, &mp);
}

static int cider_channel_established(struct cider_channel *ch,
				     const struct rdma_cm_event *ev)
{
	const struct rdma_conn_param *p = &ev->param.conn;
	bool live;
	int ret;

	if (!p->private_data || p->private_data_len < sizeof(ch->hello))
		return -EPROTO;
	memcpy(&ch->hello, p->private_data, sizeof(ch->hello));
	if (ch->hello.magic != CIDER_MN_MAGIC ||
	    ch->hello.layout_version != CIDER_LAYOUT_VERSION)
		return -EPROTO;
	ret = cider_channel_check_proof(ch, p);
	if (ret)
		return ret;	/* the node says it once (mn.c) */
	ch->hello.size += cider_fault_hello_size_delta();
	spin_lock_bh(&ch->lock);
	live = cider_channel_set_state(ch, CIDER_CHAN_LIVE, 0);
	ch->last_active = jiffies;
	spin_unlock_bh(&ch->lock);
	return live ? 0 : READ_ONCE(ch->reason);
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
	pr_warn("%s: channel %u: unexpected CM event %s (%u), status %d; ignored\n",
		ch->name, ch->index, rdma_event_msg(ev->event), e, ev->status);
}

static int cider_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev);

/*
 * Why the memory node refused us when it said why (struct cider_mn_reject):
 * -EACCES not on its allow list, -EKEYREJECTED no or a wrong key proof,
 * -EKEYEXPIRED a proof out of its window; else a plain -ECONNREFUSED
 * (nobody listens, a full backlog, an older daemon).
 */
static int cider_channel_rejected(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct cider_mn_reject rej;
	const void *data;
	u8 len = 0;

	/* Only a reject by the other side's consumer carries its words. */
	data = rdma_consumer_reject_data(id, ev, &len);
	if (!data || len < sizeof(rej))
		return -ECONNREFUSED;
	memcpy(&rej, data, sizeof(rej));
	if (rej.magic != CIDER_MN_MAGIC)
		return -ECONNREFUSED;
	switch (rej.reason) {
	case CIDER_REJECT_NOT_ALLOWED:
		return -EACCES;
	case CIDER_REJECT_BAD_KEY:
		return -EKEYREJECTED;
	case CIDER_REJECT_STALE_PROOF:
		return -EKEYEXPIRED;
	default:
		return -ECONNREFUSED;
	}
}

/* The events of connection set-up; false for any other. */
static bool cider_cm_setup_event(struct cider_channel *ch, struct rdma_cm_event *ev)
{
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = cider_channel_create_ib(ch);
		if (!ret)
			ret = rdma_resolve_route(ch->cm_id, CIDER_ATTACH_TIMEOUT_MS);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = cider_channel_route_resolved(ch);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		ret = cider_channel_established(ch, ev);
		/* Injected (fault.h): an event rxe does not produce, right now. */
		if (!ret)
			cider_fault_cm_event(ch->cm_id, ch->index, ev, cider_cm_handler);
		cider_cm_done(ch, ret);
		return true;
	case RDMA_CM_EVENT_REJECTED:
		ret = cider_channel_rejected(ch->cm_id, ev);
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		ret = -EHOSTUNREACH;
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		ret = -ECONNRESET;
		break;
	default:
		return false;
	}
	if (ret)
		cider_cm_done(ch, ret);
	return true;
}

static int cider_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct cider_channel *ch = id->context;

	if (cider_cm_setup_event(ch, ev))
		return 0;
	switch (ev->event) {
	case RDMA_CM_EVENT_DISCONNECTED:
	/* The address moved to another port or device: as nvme-rdma, recover. */
	case RDMA_CM_EVENT_ADDR_CHANGE:
		cider_channel_fail(ch, -ENOTCONN);
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/*
		 * A connected channel is handled by the ib_client's .remove,
		 * which ib_core calls before rdma_cm's own.  One that had not
		 * reached the device then (its address had just resolved)
		 * fails its connect now, so that its owner destroys the id
		 * that rdma_cm's removal waits for.
		 */
		cider_channel_fail(ch, -ENODEV);
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		break;
	default:
		cider_cm_unexpected(ch, ev);
		break;
	}
	return 0;	/* never let rdma_cm destroy the id under us */
}

void cider_channel_init(struct cider_channel *ch, const struct cider_chan_ops *ops,
			void *owner, const char *name, u32 cn_id, unsigned int index)
{
	ch->ops = ops;
	ch->owner = owner;
	strscpy(ch->name, name, sizeof(ch->name));
	ch->cn_id = cn_id;
	ch->index = index;
	ch->state = CIDER_CHAN_CONNECTING;
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
 * @failed for the caller to finish unlocked.  Returns whether the post
 * failed: the channel has stopped, and the caller tells its owner.
 */
static bool cider_channel_flush(struct cider_channel *ch, struct list_head *failed)
{
	struct cider_batch *b, *tmp, *prev = NULL;
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *first = NULL;
	LIST_HEAD(posting);
	unsigned int nwr = 0;
	bool stopped;
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
		return false;

	ch->stats.doorbells++;
	ch->stats.wrs += nwr;
	ret = cider_fault_post_send(ch->qp, first, &bad);
	if (likely(!ret)) {
		list_splice_tail(&posting, &ch->inflight);
		return false;
	}

	/*
	 * A device that refuses one work request of a chain (mlx5 refuses
	 * kernel atomics this way) has rung the doorbell for the ones
	 * before it.  Those cannot be taken back: the channel stops and its
	 * drain and cancel account them; the rest fail now.
	 */
	ch->stats.post_errors++;
	if (cider_channel_loud(ch))
		pr_err("%s: %s: ib_post_send: %pe\n", ch->name, ch->dev->name,
		       ERR_PTR(ret));
	stopped = cider_channel_set_state(ch, CIDER_CHAN_STOPPED, ret);
	cider_channel_unwind(ch, &posting, bad, ret, failed);
	return stopped;
}

/*
 * Queue @b and post what fits.  A batch the send queue can never hold is
 * refused (non-zero return, nothing done); otherwise @b is finished
 * exactly once, by the completion path or at once when the channel has
 * stopped.  Process context, or under rcu_read_lock().
 */
int cider_channel_submit(struct cider_channel *ch, struct cider_batch *b)
{
	bool failed_post;
	LIST_HEAD(failed);

	if (b->nr > ch->sq_depth)
		return -EINVAL;
	spin_lock_bh(&ch->lock);
	if (ch->state != CIDER_CHAN_LIVE) {
		b->status = ch->reason ?: -ENOTCONN;
		spin_unlock_bh(&ch->lock);
		cider_batch_finish(b);
		return 0;
	}
	b->deadline = jiffies + msecs_to_jiffies(READ_ONCE(cider_op_timeout_ms));
	ch->last_active = jiffies;
	ch->stats.batches++;
	ch->stats.keepalives += b->keepalive;
	ch->stats.heartbeats += b->heartbeat;
	if (!list_empty(&ch->backlog) || ch->credit.inflight + b->nr > ch->credit.limit)
		ch->stats.backlogged++;
	list_add_tail(&b->node, &ch->backlog);
	failed_post = cider_channel_flush(ch, &failed);
	spin_unlock_bh(&ch->lock);
	if (failed_post)
		ch->ops->error(ch, READ_ONCE(ch->reason));
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

/* WR @w completed in error: the QP is in the error state now. */
static bool cider_wr_failed(struct cider_channel *ch, struct cider_wr *w,
			    enum ib_wc_status status, struct list_head *failed)
{
	bool stopped;

	lockdep_assert_held(&ch->lock);
	ch->stats.errors++;
	if (status != IB_WC_WR_FLUSH_ERR && cider_channel_loud(ch))
		pr_err("%s: %s: %s on channel %u\n", ch->name, ch->dev->name,
		       ib_wc_status_msg(status), ch->index);
	stopped = cider_channel_set_state(ch, CIDER_CHAN_STOPPED,
					  status == IB_WC_WR_FLUSH_ERR ? -ENOTCONN : -EIO);
	w->status = cider_wc_errno(w, status, ch->reason);
	list_splice_tail_init(&ch->backlog, failed);
	return stopped;
}

void cider_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct cider_wr *w = container_of(wc->wr_cqe, struct cider_wr, cqe);
	struct cider_batch *b = w->batch;
	struct cider_channel *ch = b->ch;
	bool stopped = false, done;
	LIST_HEAD(failed);

	if (likely(wc->status == IB_WC_SUCCESS) && unlikely(cider_fault_drop_cqe()))
		return;		/* injected: lost by the "device" */

	spin_lock_bh(&ch->lock);
	ch->stats.cqes++;
	ch->last_active = jiffies;
	if (unlikely(wc->status != IB_WC_SUCCESS))
		stopped = cider_wr_failed(ch, w, wc->status, &failed);
	cider_batch_ack(ch, b, w->index + 1, ktime_get_ns());
	done = b->acked >= b->posted;
	if (done)
		list_del_init(&b->node);
	if (ch->state == CIDER_CHAN_LIVE)
		stopped |= cider_channel_flush(ch, &failed);
	spin_unlock_bh(&ch->lock);

	if (stopped)
		ch->ops->error(ch, READ_ONCE(ch->reason));
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
	cider_channel_set_state(ch, CIDER_CHAN_DRAINED, 0);
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
 * Idempotent.  Process context; the owner serializes kills of a channel.
 */
void cider_channel_kill(struct cider_channel *ch, int reason)
{
	bool drain, connected;
	LIST_HEAD(failed);

	spin_lock_bh(&ch->lock);
	cider_channel_set_state(ch, CIDER_CHAN_STOPPED, reason);
	drain = ch->state == CIDER_CHAN_STOPPED;
	/* Never LIVE after STOPPED: this cannot change any more. */
	connected = ch->established;
	list_splice_tail_init(&ch->backlog, &failed);
	spin_unlock_bh(&ch->lock);
	if (!drain)
		return;		/* drained already */
	cider_fail_list(&failed, READ_ONCE(ch->reason));
	/* Only a connected QP can have work posted to drain. */
	if (connected) {
		rdma_disconnect(ch->cm_id);
		ib_drain_qp(ch->qp);
	}
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
	ret = ch->state == CIDER_CHAN_LIVE &&
	      list_empty(&ch->inflight) && list_empty(&ch->backlog) &&
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
	cider_channel_kill(ch, -ENOTCONN);
	if (ch->cm_id) {
		rdma_destroy_id(ch->cm_id);
		ch->cm_id = NULL;
	}
	/*
	 * No handler runs any more: release an owner still waiting for
	 * this channel to connect (the device went away under it).
	 */
	cider_cm_done(ch, -ENODEV);
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

/*
 * A destroyed channel made ready to connect again (its node reconnects):
 * nothing of the old connection is left, its counters stay.
 */
void cider_channel_reset(struct cider_channel *ch)
{
	WARN_ON(ch->cm_id || ch->qp || ch->cq || ch->pd);
	spin_lock_bh(&ch->lock);
	ch->state = CIDER_CHAN_CONNECTING;
	ch->established = false;
	WRITE_ONCE(ch->reason, 0);
	spin_unlock_bh(&ch->lock);
	reinit_completion(&ch->cm_done);
	ch->cm_status = 0;
	ch->cm_reported = false;
	memset(&ch->hello, 0, sizeof(ch->hello));
}

/* Connected, its resources complete: work may be mapped and posted on it. */
bool cider_channel_ready(struct cider_channel *ch)
{
	bool ret;

	spin_lock_bh(&ch->lock);
	ret = ch->state == CIDER_CHAN_LIVE;
	spin_unlock_bh(&ch->lock);
	return ret;
}

/*
 * Injected (fault.h): the QP to the error state, where a link that broke
 * leaves it once the NIC's retries ran out.  Everything posted is
 * flushed back, and so is the next post: the channel stops as it would.
 */
void cider_channel_break(struct cider_channel *ch)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	if (cider_channel_ready(ch))
		ib_modify_qp(ch->qp, &attr, IB_QP_STATE);
}
