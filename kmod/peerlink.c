// SPDX-License-Identifier: GPL-2.0
/*
 * Links between compute nodes in different kernels (peerlink.h).
 *
 * A store that sends to compute node N for the first time asks its
 * connect work for a link: the work READs N's membership entry (member.c:
 * address, port, incarnation, which must be live), connects there with
 * rdma_cm, and the link carries the peer layer's messages (struct
 * cider_peer_wire) as RC SENDs.  Each direction has its own connection:
 * the connecting side only sends, the accepting side only receives, so
 * two CNs that start sending to each other at once never race for one.
 * Until the link is up, messages wait in its backlog; a link that breaks
 * or cannot be made drops what it holds (counted: the lease recovers)
 * and is made again on a later message, about once a second at most
 * (jittered, so that compute nodes cut off together do not retry in step).
 *
 * The listener (one for the module, on peer_port, any address) accepts a
 * connect only from a compute node whose id and incarnation it finds
 * live in the store's membership table, to a live store of this kernel
 * with the incarnation the connecting side named.  Receives are posted
 * CIDER_LINK_RX deep; a sender keeps at most CIDER_LINK_TX sends out, and
 * a receive not yet posted again makes the sender's NIC retry (RNR
 * retries without limit), so nothing is lost to a slow receiver.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "cider.h"
#include "member.h"
#include "mn.h"
#include "peer.h"
#include "peerlink.h"

#define CIDER_LINK_RX		32	/* receives posted per accepted link */
#define CIDER_LINK_TX		16	/* sends out per link */
#define CIDER_LINK_BACKLOG	64	/* messages waiting for the link */
#define CIDER_LINK_CONNECT_MS	5000
#define CIDER_LINK_RETRY	HZ	/* after a failed connect, +-25 % */

static unsigned int cider_peer_port;
module_param_named(peer_port, cider_peer_port, uint, 0444);
MODULE_PARM_DESC(peer_port, "Port other compute nodes connect to for CN-to-CN messages (default 0: any free one, announced in the membership table)");

enum { CIDER_LINK_CONNECTING, CIDER_LINK_LIVE, CIDER_LINK_DEAD };

struct cider_peer_link {
	struct list_head node;		/* the sink's accepted links */
	struct list_head all;		/* every link: device removal */
	struct cider_peer_sink *sink;
	u32 cn_id;			/* the other end */
	u64 incarnation;
	bool passive;			/* accepted: receives only */
	bool listed;			/* on its sink's list (links_lock) */
	struct rdma_cm_id *cm_id;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct completion cm_done;	/* the connect's outcome, once: */
	int cm_status;
	bool cm_reported;		/* under lock */
	spinlock_t lock;		/* _bh: everything below */
	int state;
	unsigned int tx_next, tx_out;
	unsigned int bl_head, bl_len;
	struct cider_peer_wire backlog[CIDER_LINK_BACKLOG];
	/* CIDER_LINK_RX receive buffers, then CIDER_LINK_TX send buffers */
	struct cider_peer_wire *buf;
	dma_addr_t dma;
	struct ib_cqe rx_cqe[CIDER_LINK_RX];
	struct ib_cqe tx_cqe;
};

static struct rdma_cm_id *cider_listener;
static u16 cider_listener_port;
static bool cider_listener_v6;	/* dual-stack: IPv6 peers too */
static LIST_HEAD(cider_links);
static DEFINE_MUTEX(cider_links_lock);

u16 cider_peerlink_port(int family)
{
	if (family == AF_INET || (family == AF_INET6 && cider_listener_v6))
		return cider_listener_port;
	return 0;
}

static size_t cider_link_buf_len(void)
{
	return (CIDER_LINK_RX + CIDER_LINK_TX) * sizeof(struct cider_peer_wire);
}

static struct cider_peer_wire *cider_link_tx_slot(struct cider_peer_link *l, unsigned int i)
{
	return &l->buf[CIDER_LINK_RX + i % CIDER_LINK_TX];
}

static dma_addr_t cider_link_dma(struct cider_peer_link *l, const struct cider_peer_wire *w)
{
	return l->dma + (w - l->buf) * sizeof(*w);
}

/* ---- the data path ---- */

/* A connected link's connection ended (any side): it sends and receives no more. */
static void cider_link_broken(struct cider_peer_link *l)
{
	spin_lock_bh(&l->lock);
	if (l->state != CIDER_LINK_DEAD)
		atomic64_inc(&l->sink->stats.link_failures);
	l->state = CIDER_LINK_DEAD;
	spin_unlock_bh(&l->lock);
}

/* Ask @sink's work to look at its links (any context). */
static void cider_link_kick(struct cider_peer_sink *sink)
{
	rcu_read_lock();
	if (READ_ONCE(sink->live))	/* its close cancels the work after a grace period */
		queue_work(system_long_wq, &sink->connect_work);
	rcu_read_unlock();
}

static int cider_link_post_recv(struct cider_peer_link *l, unsigned int i)
{
	struct ib_sge sge = {
		.addr = cider_link_dma(l, &l->buf[i]),
		.length = sizeof(struct cider_peer_wire),
		.lkey = l->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_cqe = &l->rx_cqe[i], .sg_list = &sge, .num_sge = 1 };

	ib_dma_sync_single_for_device(l->dev, sge.addr, sge.length, DMA_FROM_DEVICE);
	return ib_post_recv(l->qp, &wr, NULL);
}

static void cider_link_rx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct cider_peer_link *l = cq->cq_context;
	unsigned int i = wc->wr_cqe - l->rx_cqe;
	const struct cider_peer_wire *w = &l->buf[i];

	if (wc->status != IB_WC_SUCCESS)
		return;		/* flushed: the link is going */
	ib_dma_sync_single_for_cpu(l->dev, cider_link_dma(l, w), sizeof(*w), DMA_FROM_DEVICE);
	/* The connection names its sender: a message must say the same. */
	if (wc->byte_len == sizeof(*w) &&
	    le32_to_cpu(w->from_cn) / CIDER_PEER_SHARDS == l->cn_id &&
	    le64_to_cpu(w->from_inc) == l->incarnation)
		cider_peer_inject(l->sink, w, wc->byte_len);
	else
		atomic64_inc(&l->sink->stats.invalid);
	/* Also before the CM saw the connection up: the first SEND can come first. */
	if (READ_ONCE(l->state) != CIDER_LINK_DEAD && cider_link_post_recv(l, i)) {
		/* No receive ring: the connection must go, or the sender stalls. */
		cider_link_broken(l);
		cider_link_kick(l->sink);
	}
}

/* Post @w (a TX slot's) now: the link is LIVE with a send to spare. */
static int cider_link_post_send(struct cider_peer_link *l, struct cider_peer_wire *w)
{
	struct ib_sge sge = {
		.addr = cider_link_dma(l, w),
		.length = sizeof(*w),
		.lkey = l->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_cqe = &l->tx_cqe, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
	};
	int ret;

	lockdep_assert_held(&l->lock);
	ib_dma_sync_single_for_device(l->dev, sge.addr, sge.length, DMA_TO_DEVICE);
	ret = ib_post_send(l->qp, &wr, NULL);
	if (!ret) {
		l->tx_next++;
		l->tx_out++;
		atomic64_inc(&l->sink->stats.remote);
	}
	return ret;
}

/* The backlog's next free entry, now taken.  Under the link's lock, with room. */
static struct cider_peer_wire *cider_link_backlog_add(struct cider_peer_link *l)
{
	return &l->backlog[(l->bl_head + l->bl_len++) % CIDER_LINK_BACKLOG];
}

/* Send from the backlog while there is room.  Under the link's lock. */
static void cider_link_push(struct cider_peer_link *l)
{
	struct cider_peer_wire *w;

	lockdep_assert_held(&l->lock);
	while (l->state == CIDER_LINK_LIVE && l->bl_len && l->tx_out < CIDER_LINK_TX) {
		w = cider_link_tx_slot(l, l->tx_next);
		*w = l->backlog[l->bl_head];
		l->bl_head = (l->bl_head + 1) % CIDER_LINK_BACKLOG;
		l->bl_len--;
		if (cider_link_post_send(l, w)) {
			l->state = CIDER_LINK_DEAD;
			atomic64_inc(&l->sink->stats.link_failures);
			atomic64_inc(&l->sink->stats.unreachable);	/* this one */
		}
	}
}

static void cider_link_tx_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct cider_peer_link *l = cq->cq_context;

	spin_lock_bh(&l->lock);
	l->tx_out--;
	if (wc->status != IB_WC_SUCCESS && l->state == CIDER_LINK_LIVE) {
		l->state = CIDER_LINK_DEAD;
		atomic64_inc(&l->sink->stats.link_failures);
	}
	cider_link_push(l);
	spin_unlock_bh(&l->lock);
}

/*
 * A message to CN @cn, whose link is asked for and not published yet,
 * waits in the store's early list until the connect work publishes the
 * link (cider_link_publish_out()), so that the first message to a CN is
 * not lost (its lock would wait out a lease).  0: it waits; -EAGAIN: the
 * link was published meanwhile; -ENOTCONN: no room, lost.
 */
static int cider_link_stash(struct cider_peer_sink *from, u32 cn, u32 to_cn,
			    const struct cider_msg *m)
{
	struct cider_peer_early *e;
	int ret = -ENOTCONN;

	spin_lock_bh(&from->early_lock);
	if (rcu_access_pointer(from->out[cn])) {
		ret = -EAGAIN;
	} else if (from->nr_early < CIDER_PEER_EARLY) {
		e = &from->early[from->nr_early++];
		e->cn = cn;
		e->to_cn = to_cn;
		e->m = *m;
		ret = 0;
	}
	spin_unlock_bh(&from->early_lock);
	return ret;
}

/* Ask for a link to @cn, unless one failed to be made a moment ago. */
static bool cider_link_want(struct cider_peer_sink *from, u32 cn)
{
	if (time_before(jiffies, READ_ONCE(from->retry_at[cn])))
		return false;
	if (!test_and_set_bit(cn, from->want))
		queue_work(system_long_wq, &from->connect_work);
	return true;
}

int cider_peerlink_send(struct cider_peer_sink *from, u32 cn, u32 to_cn,
			const struct cider_msg *m)
{
	struct cider_peer_link *l;
	int ret = 0;

	if (cn > CIDER_MAX_CN_ID)
		return -ENOTCONN;
	l = rcu_dereference(from->out[cn]);
	if (!l) {
		if (!cider_link_want(from, cn))
			return -ENOTCONN;
		ret = cider_link_stash(from, cn, to_cn, m);
		if (ret != -EAGAIN)
			return ret;
		/* Published meanwhile: once more, or lost if already gone. */
		l = rcu_dereference(from->out[cn]);
		if (!l)
			return -ENOTCONN;
	}
	if (READ_ONCE(l->state) == CIDER_LINK_DEAD) {
		cider_link_want(from, cn);	/* reaped, then made again */
		return -ENOTCONN;
	}
	spin_lock_bh(&l->lock);
	if (l->state == CIDER_LINK_DEAD) {
		ret = -ENOTCONN;
	} else if (l->bl_len == CIDER_LINK_BACKLOG) {
		ret = -ENOBUFS;
	} else {
		cider_peer_encode(from, l->incarnation, to_cn, m, cider_link_backlog_add(l));
		cider_link_push(l);
	}
	spin_unlock_bh(&l->lock);
	return ret;
}

/* ---- set-up and teardown ---- */

static struct cider_peer_link *cider_link_alloc(struct cider_peer_sink *sink, u32 cn,
						u64 inc, bool passive)
{
	struct cider_peer_link *l = kzalloc(sizeof(*l), GFP_KERNEL);
	unsigned int i;

	if (!l)
		return NULL;
	l->buf = kzalloc(cider_link_buf_len(), GFP_KERNEL);
	if (!l->buf) {
		kfree(l);
		return NULL;
	}
	l->sink = sink;
	l->cn_id = cn;
	l->incarnation = inc;
	l->passive = passive;
	l->state = CIDER_LINK_CONNECTING;
	spin_lock_init(&l->lock);
	init_completion(&l->cm_done);
	INIT_LIST_HEAD(&l->node);
	INIT_LIST_HEAD(&l->all);
	for (i = 0; i < CIDER_LINK_RX; i++)
		l->rx_cqe[i].done = cider_link_rx_done;
	l->tx_cqe.done = cider_link_tx_done;
	return l;
}

static void cider_link_qp_event(struct ib_event *ev, void *ctx)
{
	struct cider_peer_link *l = ctx;

	/* rxe may see the first packet before the CM sees the RTU (channel.c). */
	if (ev->event == IB_EVENT_COMM_EST)
		rdma_notify(l->cm_id, IB_EVENT_COMM_EST);
}

/* The QP and what it needs, on the device @l->cm_id resolved to. */
static int cider_link_create_ib(struct cider_peer_link *l)
{
	struct ib_qp_init_attr qa = {};
	unsigned int i;
	int ret;

	if (READ_ONCE(l->state) == CIDER_LINK_DEAD)
		return -ENODEV;		/* its device went while it resolved */
	l->dev = l->cm_id->device;
	l->pd = cider_ibdev_get_pd(l->dev);
	if (IS_ERR(l->pd)) {
		ret = PTR_ERR(l->pd);
		l->pd = NULL;
		return ret;
	}
	l->dma = ib_dma_map_single(l->dev, l->buf, cider_link_buf_len(), DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(l->dev, l->dma)) {
		l->dma = 0;
		return -ENOMEM;
	}
	l->cq = ib_alloc_cq(l->dev, l, CIDER_LINK_RX + CIDER_LINK_TX + 2, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(l->cq)) {
		ret = PTR_ERR(l->cq);
		l->cq = NULL;
		return ret;
	}
	qa.event_handler = cider_link_qp_event;
	qa.qp_context = l;
	qa.send_cq = l->cq;
	qa.recv_cq = l->cq;
	qa.cap.max_send_wr = CIDER_LINK_TX + 1;		/* +1: ib_drain_qp() */
	qa.cap.max_recv_wr = CIDER_LINK_RX + 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.sq_sig_type = IB_SIGNAL_REQ_WR;
	qa.qp_type = IB_QPT_RC;
	ret = rdma_create_qp(l->cm_id, l->pd, &qa);
	if (ret)
		return ret;
	l->qp = l->cm_id->qp;
	for (i = 0; l->passive && !ret && i < CIDER_LINK_RX; i++)
		ret = cider_link_post_recv(l, i);
	return ret;
}

/*
 * Stop @l (no sender can reach it any more), then free it.  Process
 * context, never from its own CM handler.  The id goes first: once
 * rdma_destroy_id() returns no handler of it runs, so the QP a handler
 * may have been creating meanwhile is there to destroy.
 */
static void cider_link_destroy(struct cider_peer_link *l)
{
	spin_lock_bh(&l->lock);
	l->state = CIDER_LINK_DEAD;
	spin_unlock_bh(&l->lock);
	if (l->cm_id) {
		rdma_disconnect(l->cm_id);
		rdma_destroy_id(l->cm_id);
	}
	if (l->qp) {
		ib_drain_qp(l->qp);
		ib_destroy_qp(l->qp);
	}
	if (l->cq)
		ib_free_cq(l->cq);
	if (l->dma)
		ib_dma_unmap_single(l->dev, l->dma, cider_link_buf_len(), DMA_BIDIRECTIONAL);
	if (l->pd)
		cider_ibdev_put_pd(l->dev);
	mutex_lock(&cider_links_lock);
	list_del(&l->all);
	mutex_unlock(&cider_links_lock);
	/* What waited for the link is lost: the lease recovers it. */
	atomic64_add(l->bl_len, &l->sink->stats.unreachable);
	kfree(l->buf);
	kfree(l);
}

static void cider_link_track(struct cider_peer_link *l)
{
	mutex_lock(&cider_links_lock);
	list_add_tail(&l->all, &cider_links);
	mutex_unlock(&cider_links_lock);
}

/* The connect's outcome, told once (its handler, or a device going away). */
static void cider_link_cm_done(struct cider_peer_link *l, int status)
{
	bool first;

	spin_lock_bh(&l->lock);
	first = !l->cm_reported;
	l->cm_reported = true;
	if (first)
		l->cm_status = status;
	spin_unlock_bh(&l->lock);
	if (first)
		complete(&l->cm_done);
}

static int cider_link_connect_event(struct cider_peer_link *l, struct rdma_cm_event *ev)
{
	struct cider_peer_hello hello;
	struct rdma_conn_param param = {
		.private_data = &hello, .private_data_len = sizeof(hello),
		.retry_count = 7, .rnr_retry_count = 7,
	};
	int ret;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = cider_link_create_ib(l);
		return ret ?: rdma_resolve_route(l->cm_id, CIDER_LINK_CONNECT_MS);
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		cider_peer_hello_fill(l->sink, l->cn_id, l->incarnation, &hello);
		return rdma_connect_locked(l->cm_id, &param);
	case RDMA_CM_EVENT_ESTABLISHED:
		/* Only a link still being made: a late one stays dead. */
		spin_lock_bh(&l->lock);
		ret = l->state == CIDER_LINK_CONNECTING ? 0 : -ENOTCONN;
		if (!ret) {
			l->state = CIDER_LINK_LIVE;
			cider_link_push(l);
		}
		spin_unlock_bh(&l->lock);
		if (!ret)
			cider_link_cm_done(l, 0);
		return ret;
	case RDMA_CM_EVENT_REJECTED:
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		return -EHOSTUNREACH;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return -ECONNRESET;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		cider_link_broken(l);
		return -ENOTCONN;
	default:
		return 0;
	}
}

/* A link's own events (the listener's come to cider_listen_handler()). */
static int cider_link_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct cider_peer_link *l = id->context;
	int ret = cider_link_connect_event(l, ev);

	if (ret)
		cider_link_cm_done(l, ret);
	return 0;	/* its owner destroys the id */
}

/* @cn's membership entry as a place to connect to: 0, or -errno. */
static int cider_link_dst(struct cider_peer_sink *sink, u32 cn, struct sockaddr_storage *dst,
			  u64 *inc)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)dst;
	struct sockaddr_in *sin = (struct sockaddr_in *)dst;
	struct cider_mn_member e;
	int ret;

	ret = cider_member_lookup(sink->mn, cn, &e);
	if (ret)
		return ret;
	/* Not attached, or no listener for its address's family. */
	if (!(e.claim & CIDER_CLAIM_LIVE) || !e.port)
		return -EHOSTUNREACH;
	memset(dst, 0, sizeof(*dst));
	if (e.family == AF_INET) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(e.port);
		memcpy(&sin->sin_addr, e.addr, 4);
	} else if (e.family == AF_INET6) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(e.port);
		memcpy(&sin6->sin6_addr, e.addr, 16);
		/* A link-local one (fe80::/10) names no interface here. */
		if (e.addr[0] == 0xfe && (e.addr[1] & 0xc0) == 0x80)
			return -EHOSTUNREACH;
	} else {
		return -EHOSTUNREACH;
	}
	*inc = cider_claim_incarnation(e.claim);
	return 0;
}

/*
 * The early messages to @cn leave the list: into @l's backlog, or (@l
 * NULL, or no room) lost.  Under the early lock and @l's.  Returns how
 * many were lost.
 */
static unsigned int cider_link_take_early(struct cider_peer_sink *sink, u32 cn,
					  struct cider_peer_link *l)
{
	unsigned int i, kept = 0, lost = 0;
	struct cider_peer_early *e;

	for (i = 0; i < sink->nr_early; i++) {
		e = &sink->early[i];
		if (e->cn != cn)
			sink->early[kept++] = *e;
		else if (l && l->bl_len < CIDER_LINK_BACKLOG)
			cider_peer_encode(sink, l->incarnation, e->to_cn, &e->m,
					  cider_link_backlog_add(l));
		else
			lost++;
	}
	sink->nr_early = kept;
	return lost;
}

/*
 * Publish @l as @sink's link to @cn with the early messages to @cn first
 * in its backlog.  Both locks are held across the publication so that no
 * sender puts a message in the backlog ahead of them, nor in the early
 * list after they moved.
 */
static void cider_link_publish_out(struct cider_peer_sink *sink, u32 cn,
				   struct cider_peer_link *l)
{
	unsigned int lost;

	spin_lock_bh(&sink->early_lock);
	spin_lock(&l->lock);
	rcu_assign_pointer(sink->out[cn], l);
	lost = cider_link_take_early(sink, cn, l);
	spin_unlock(&l->lock);
	spin_unlock_bh(&sink->early_lock);
	atomic64_add(lost, &sink->stats.unreachable);
}

/* No link to @cn could be made: what waited for it is lost (counted). */
static void cider_link_drop_early(struct cider_peer_sink *sink, u32 cn)
{
	unsigned int lost;

	spin_lock_bh(&sink->early_lock);
	lost = cider_link_take_early(sink, cn, NULL);
	spin_unlock_bh(&sink->early_lock);
	atomic64_add(lost, &sink->stats.unreachable);
}

/*
 * @sink's link to @cn, made now (its connect work, the only one that
 * publishes and unpublishes sink->out[]), or -errno.
 */
static int cider_link_connect(struct cider_peer_sink *sink, u32 cn)
{
	struct sockaddr_storage dst;
	struct cider_peer_link *l;
	u64 inc;
	int ret;

	ret = cider_link_dst(sink, cn, &dst, &inc);
	if (ret)
		return ret;
	l = cider_link_alloc(sink, cn, inc, false);
	if (!l)
		return -ENOMEM;
	l->cm_id = rdma_create_id(&init_net, cider_link_cm_handler, l, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(l->cm_id)) {
		ret = PTR_ERR(l->cm_id);
		l->cm_id = NULL;
		goto out;
	}
	cider_link_track(l);
	/* Published while connecting: messages wait in its backlog. */
	mutex_lock(&sink->links_lock);
	ret = sink->closing ? -ESHUTDOWN : 0;
	if (!ret)
		cider_link_publish_out(sink, cn, l);
	mutex_unlock(&sink->links_lock);
	if (ret)
		goto out;
	ret = rdma_resolve_addr(l->cm_id, NULL, (struct sockaddr *)&dst, CIDER_LINK_CONNECT_MS);
	if (ret)
		cider_link_cm_done(l, ret);
	if (!wait_for_completion_timeout(&l->cm_done, msecs_to_jiffies(2 * CIDER_LINK_CONNECT_MS)))
		cider_link_cm_done(l, -ETIMEDOUT);
	spin_lock_bh(&l->lock);
	ret = l->cm_status;
	if (!ret && l->state != CIDER_LINK_LIVE)
		ret = -ENOTCONN;	/* broke already (its device went) */
	spin_unlock_bh(&l->lock);
	if (!ret) {
		atomic64_inc(&sink->stats.links_made);
		return 0;
	}
	mutex_lock(&sink->links_lock);
	RCU_INIT_POINTER(sink->out[cn], NULL);
	mutex_unlock(&sink->links_lock);
	synchronize_rcu();	/* senders that found it are done */
out:
	cider_link_destroy(l);
	return ret;
}

/*
 * Links of @sink whose connection ended, off the sink: an accepted one
 * is disconnected so that its sender makes its link again, a made one
 * is made again on the next message.
 */
static void cider_link_reap(struct cider_peer_sink *sink)
{
	struct cider_peer_link *l, *tmp;
	LIST_HEAD(dead);
	unsigned int cn;

	mutex_lock(&sink->links_lock);
	list_for_each_entry_safe(l, tmp, &sink->in, node) {
		if (READ_ONCE(l->state) == CIDER_LINK_DEAD) {
			l->listed = false;
			list_move_tail(&l->node, &dead);
		}
	}
	for (cn = 0; cn <= CIDER_MAX_CN_ID; cn++) {
		l = rcu_dereference_protected(sink->out[cn], lockdep_is_held(&sink->links_lock));
		if (l && READ_ONCE(l->state) == CIDER_LINK_DEAD) {
			RCU_INIT_POINTER(sink->out[cn], NULL);
			list_add_tail(&l->node, &dead);
		}
	}
	mutex_unlock(&sink->links_lock);
	if (list_empty(&dead))
		return;
	synchronize_rcu();	/* senders that found a made one are done */
	list_for_each_entry_safe(l, tmp, &dead, node)
		cider_link_destroy(l);
}

/* Reap the links that died, then make the ones messages asked for (process context). */
static void cider_link_connect_work(struct work_struct *work)
{
	struct cider_peer_sink *sink = container_of(work, struct cider_peer_sink, connect_work);
	struct cider_peer_link *l;
	unsigned int cn;
	bool closing;
	int ret;

	cider_link_reap(sink);
	for_each_set_bit(cn, sink->want, CIDER_MAX_CN_ID + 1) {
		clear_bit(cn, sink->want);
		mutex_lock(&sink->links_lock);
		closing = sink->closing;
		l = rcu_dereference_protected(sink->out[cn], lockdep_is_held(&sink->links_lock));
		mutex_unlock(&sink->links_lock);
		if (closing)
			return;
		if (l)		/* made meanwhile, or dead and reaped on the next run */
			continue;
		ret = cider_link_connect(sink, cn);
		if (ret) {
			cider_link_drop_early(sink, cn);
			/* Spread out: CNs a flap cut off from each other retry apart. */
			WRITE_ONCE(sink->retry_at[cn], jiffies + CIDER_LINK_RETRY * 3 / 4 +
				   get_random_u32() % (CIDER_LINK_RETRY / 2 + 1));
			atomic64_inc(&sink->stats.link_failures);
			pr_warn_ratelimited("mn%u: cn %u: no link to cn %u: %pe\n", sink->mn->id,
					    sink->cn_id, cn, ERR_PTR(ret));
		}
	}
}

void cider_peerlink_sink_init(struct cider_peer_sink *sink)
{
	mutex_init(&sink->links_lock);
	INIT_LIST_HEAD(&sink->in);
	INIT_WORK(&sink->connect_work, cider_link_connect_work);
	spin_lock_init(&sink->early_lock);
	sink->nr_early = 0;
}

void cider_peerlink_close(struct cider_peer_sink *sink)
{
	struct cider_peer_link *l, *tmp;
	LIST_HEAD(all);
	unsigned int cn;

	mutex_lock(&sink->links_lock);
	sink->closing = true;
	mutex_unlock(&sink->links_lock);
	cancel_work_sync(&sink->connect_work);
	/* Senders are gone (the sink was unregistered): no RCU wait. */
	mutex_lock(&sink->links_lock);
	list_for_each_entry(l, &sink->in, node)
		l->listed = false;
	list_splice_init(&sink->in, &all);
	for (cn = 0; cn <= CIDER_MAX_CN_ID; cn++) {
		l = rcu_dereference_protected(sink->out[cn], lockdep_is_held(&sink->links_lock));
		RCU_INIT_POINTER(sink->out[cn], NULL);
		if (l)
			list_add_tail(&l->node, &all);
	}
	mutex_unlock(&sink->links_lock);
	/* Whatever still waited for a link is lost with the store. */
	atomic64_add(sink->nr_early, &sink->stats.unreachable);
	sink->nr_early = 0;
	list_for_each_entry_safe(l, tmp, &all, node)
		cider_link_destroy(l);
}

/* ---- the listener ---- */

/*
 * Is @h's sender live in @sink's membership table with that incarnation?
 * One READ on the memory node, in the CM handler: rdma_cm's work waits
 * for it (bounded by op_timeout_ms; at once when the node is lost).
 */
static int cider_link_check_sender(struct cider_peer_sink *sink, const struct cider_peer_hello *h)
{
	struct cider_mn_member e;
	int ret = cider_member_lookup(sink->mn, h->from_cn, &e);

	if (ret)
		return ret;
	if (e.claim != (le64_to_cpu(h->from_inc) << 1 | CIDER_CLAIM_LIVE))
		return -EACCES;
	return le64_to_cpu(h->to_inc) == sink->incarnation ? 0 : -ESTALE;
}

/*
 * The link accepted on @id becomes the sink's, unless the sink is
 * closing or the link's device went meanwhile: -errno.  Last step of the
 * handler: nobody else destroys a link before it is listed.
 */
static int cider_link_publish(struct cider_peer_link *l)
{
	struct cider_peer_sink *sink = l->sink;
	int ret;

	mutex_lock(&sink->links_lock);
	ret = sink->closing ? -ESHUTDOWN : 0;
	if (!ret && READ_ONCE(l->state) == CIDER_LINK_DEAD)
		ret = -ENODEV;
	if (!ret) {
		list_add_tail(&l->node, &sink->in);
		l->listed = true;
	}
	mutex_unlock(&sink->links_lock);
	return ret;
}

/*
 * @cn just connected to @sink as incarnation @inc: links to and from an
 * earlier incarnation of @cn (incarnations only grow) lead to a machine
 * that is gone (a CN that restarted, perhaps elsewhere, takes its id over
 * only once the old one's heartbeat stopped).  The one made to it might
 * not fail for seconds, until a send exhausted its retries, and one still
 * connecting would hold the connect work for as long; the one it made
 * here would receive nothing, ever.  End them now: the connect work reaps
 * them, and the next message makes a link to the address the membership
 * table has now.
 */
static void cider_link_supersede(struct cider_peer_sink *sink, u32 cn, u64 inc)
{
	struct cider_peer_link *l;
	bool stale = false;

	if (cn > CIDER_MAX_CN_ID)
		return;
	mutex_lock(&sink->links_lock);
	l = rcu_dereference_protected(sink->out[cn], lockdep_is_held(&sink->links_lock));
	if (l && l->incarnation < inc) {
		cider_link_broken(l);
		stale = true;
	}
	list_for_each_entry(l, &sink->in, node) {
		if (l->cn_id == cn && l->incarnation < inc) {
			cider_link_broken(l);
			stale = true;
		}
	}
	mutex_unlock(&sink->links_lock);
	/* One being made is on no list of the sink's, only on the module's. */
	mutex_lock(&cider_links_lock);
	list_for_each_entry(l, &cider_links, all)
		if (l->sink == sink && !l->passive && l->cn_id == cn && l->incarnation < inc)
			cider_link_cm_done(l, -ESTALE);
	mutex_unlock(&cider_links_lock);
	if (stale)
		cider_link_kick(sink);
}

/*
 * A connect request on the listener: a new link, accepted and listed, or
 * refused (-errno: rdma_cm then destroys @id, after we destroyed its QP).
 */
static int cider_link_accept(struct rdma_cm_id *id, const struct rdma_cm_event *ev)
{
	const struct cider_peer_hello *h = ev->param.conn.private_data;
	struct rdma_conn_param param = { .rnr_retry_count = 7 };
	struct cider_peer_sink *sink;
	struct cider_peer_link *l;
	int ret;

	if (!h || ev->param.conn.private_data_len < sizeof(*h) ||
	    le32_to_cpu(h->magic) != CIDER_PEER_HELLO_MAGIC || h->version != CIDER_PEER_VERSION)
		return -EPROTO;
	sink = cider_peer_get_sink(h);
	if (!sink)
		return -ENOENT;
	ret = cider_link_check_sender(sink, h);
	l = ret ? NULL : cider_link_alloc(sink, h->from_cn, le64_to_cpu(h->from_inc), true);
	if (!ret && !l)
		ret = -ENOMEM;
	if (ret)
		goto out;
	l->cm_id = id;
	id->context = l;
	cider_link_track(l);
	ret = cider_link_create_ib(l);
	ret = ret ?: rdma_accept(id, &param);
	ret = ret ?: cider_link_publish(l);
	if (ret) {
		/* rdma_cm destroys the id when the handler returns the error. */
		l->cm_id = NULL;
		if (l->qp) {
			rdma_destroy_qp(id);
			l->qp = NULL;
		}
		cider_link_destroy(l);
	} else {
		atomic64_inc(&sink->stats.links_accepted);
		cider_link_supersede(sink, h->from_cn, le64_to_cpu(h->from_inc));
	}
out:
	if (ret)
		pr_warn_ratelimited("refused a link from cn %u to cn %u: %pe\n", h->from_cn,
				    h->to_cn, ERR_PTR(ret));
	cider_peer_put_sink(sink);
	return ret;
}

static int cider_listen_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct cider_peer_link *l = id->context;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return cider_link_accept(id, ev) ? -ECONNREFUSED : 0;
	if (!l || id == cider_listener)
		return 0;
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		spin_lock_bh(&l->lock);
		if (l->state == CIDER_LINK_CONNECTING)
			l->state = CIDER_LINK_LIVE;
		spin_unlock_bh(&l->lock);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		/* Its work destroys it: never from its own handler. */
		cider_link_broken(l);
		cider_link_kick(l->sink);
		break;
	default:
		break;
	}
	return 0;
}

/* A listener on the wildcard address of @family (AF_INET6: both families). */
static struct rdma_cm_id *cider_listen_on(int family)
{
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_addr = IN6ADDR_ANY_INIT,
		.sin6_port = htons(cider_peer_port),
	};
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_ANY),
		.sin_port = htons(cider_peer_port),
	};
	struct sockaddr *addr = family == AF_INET6 ? (struct sockaddr *)&sin6 :
						     (struct sockaddr *)&sin;
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, cider_listen_handler, NULL, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return id;
	ret = family == AF_INET6 ? rdma_set_afonly(id, 0) : 0;
	ret = ret ?: rdma_bind_addr(id, addr);
	ret = ret ?: rdma_listen(id, 64);
	if (ret) {
		rdma_destroy_id(id);
		return ERR_PTR(ret);
	}
	return id;
}

int cider_peerlink_init(void)
{
	struct rdma_cm_id *id;

	if (cider_peer_port > U16_MAX)
		return -EINVAL;
	/* Both families on one port; IPv4 alone if binding :: fails. */
	id = cider_listen_on(AF_INET6);
	cider_listener_v6 = !IS_ERR(id);
	if (IS_ERR(id))
		id = cider_listen_on(AF_INET);
	if (IS_ERR(id))
		return PTR_ERR(id);
	cider_listener = id;
	/* Bound: the port rdma_cm chose if peer_port was 0 (same offset in both). */
	cider_listener_port = ntohs(cider_listener_v6 ?
		((struct sockaddr_in6 *)&id->route.addr.src_addr)->sin6_port :
		((struct sockaddr_in *)&id->route.addr.src_addr)->sin_port);
	pr_info("compute nodes reach this one on port %u (%s)\n", cider_listener_port,
		cider_listener_v6 ? "IPv4 and IPv6" : "IPv4 only");
	return 0;
}

void cider_peerlink_exit(void)
{
	if (cider_listener)
		rdma_destroy_id(cider_listener);
	cider_listener = NULL;
	cider_listener_port = 0;
	cider_listener_v6 = false;
}

/*
 * rdma_cm waits for every id on a removed device to be destroyed, and our
 * ib_client's .remove runs before its own: every link on @ibdev goes now.
 * A store's links usually share its node's device, whose removal closed
 * them already; the others are marked dead (a connect under way ends
 * -ENODEV) and their sinks' works destroy them, waited for here.  The
 * sinks are held by their nodes' references meanwhile.
 */
void cider_peerlink_device_removed(struct ib_device *ibdev)
{
	struct cider_peer_sink *sinks[16];
	struct cider_peer_link *l;
	unsigned int n, i;

	do {
		n = 0;
		mutex_lock(&cider_links_lock);
		list_for_each_entry(l, &cider_links, all) {
			if (l->dev != ibdev)
				continue;
			cider_link_broken(l);
			if (!l->passive)
				cider_link_cm_done(l, -ENODEV);
			for (i = 0; i < n && sinks[i] != l->sink; i++)
				;
			if (i < n || n == ARRAY_SIZE(sinks))
				continue;	/* held already, or next round */
			if (kref_get_unless_zero(&l->sink->mn->ref))
				sinks[n++] = l->sink;
		}
		mutex_unlock(&cider_links_lock);
		for (i = 0; i < n; i++) {
			queue_work(system_long_wq, &sinks[i]->connect_work);
			flush_work(&sinks[i]->connect_work);
			cider_peer_put_sink(sinks[i]);
		}
		/* One still being accepted fails its publish and goes by itself. */
		if (n)
			msleep(20);
	} while (n);
}
