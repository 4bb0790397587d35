/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The transport: channels and batches, the doorbell-aware RDMA data path.
 *
 * A channel is one RC connection to a memory node with its own QP, so
 * CPUs never share a queue or a doorbell.  Work is submitted as batches:
 * a batch's work requests are chained, only its last one is signalled,
 * and whatever batches are ready go to the NIC with one ib_post_send()
 * (one doorbell).  The number of outstanding work requests per channel is
 * bounded by an adaptive credit limit (core/credit.c); batches that do not
 * fit wait in a backlog and are posted from the completion path as
 * credits return.
 *
 * The transport knows nothing of its owner (the memory node, mn.c): it
 * is told the remote address and key when a batch is mapped, and it
 * reports a channel that stopped by itself through its owner's ->error
 * callback, as rtrs does with its error handler.
 */
#ifndef _CIDER_TRANSPORT_H
#define _CIDER_TRANSPORT_H

#include <linux/cache.h>
#include <linux/completion.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "core/backoff.h"
#include "core/credit.h"
#include "core/layout.h"
#include "vocab.h"

struct cider_agent_dest;
struct cider_batch;
struct cider_channel;
struct crypto_shash;

/*
 * The one-sided operations of the data path.  Not "verb": the protocol
 * core (core/proto.h) has its own struct cider_verb, and both headers
 * must be includable together once the core runs in the kernel.
 */
enum cider_rdma_op { CIDER_VERBS(CIDER_RDMA_ENUM) CIDER_RDMA_NR_OPS };

/*
 * A channel's life; changed only by cider_channel_set_state() under
 * ch->lock.  See Documentation/datapath.rst for the diagram.
 */
enum cider_chan_state { CIDER_CHAN_STATES(CIDER_CHAN_STATE_ENUM, CIDER_CHAN_STATE_ENUM) };

struct cider_chan_ops {
	/*
	 * The channel stopped by itself (a work request failed, a post
	 * failed, the peer disconnected, the address moved): @reason is the
	 * -errno; once per channel.  Also on a fatal QP event, which may
	 * come from a driver's interrupt handler and may repeat: any
	 * context, and the owner must make a repeat harmless.
	 */
	void (*error)(struct cider_channel *ch, int reason);
};

struct cider_chan_stats {
	u64 batches;		/* batches submitted */
	u64 doorbells;		/* ib_post_send() calls */
	u64 wrs;		/* work requests posted */
	u64 cqes;		/* completions polled */
	u64 done[CIDER_RDMA_NR_OPS]; /* work requests completed, by op */
	u64 errors;		/* work requests completed in error */
	u64 post_errors;	/* ib_post_send() failures */
	u64 backlogged;		/* batches that waited for credits */
	u64 canceled;		/* batches failed after the drain */
	u64 keepalives;		/* liveness READs of an idle channel */
	u64 heartbeats;		/* membership heartbeats (member.c): FAA + READ */
};

struct cider_channel {
	const struct cider_chan_ops *ops;
	void *owner;		/* the owner's, for ops->error */
	char name[16];		/* "mn3": log lines start with it */
	u32 cn_id;		/* announced in the connection's hello */
	unsigned int index;
	/* Log errors: false while the owner says why in a line of its own. */
	bool verbose;		/* WRITE_ONCE by cider_channel_set_verbose() */
	struct rdma_cm_id *cm_id;
	struct ib_device *dev;	/* set once, in the CM handler */
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u32 sq_depth;
	unsigned int nr_cqe;	/* taken from the device's CQ pool */

	/* connection set-up, reported once through cm_done */
	struct completion cm_done;
	int cm_status;
	bool cm_reported;	/* CM handler (handler_mutex), then destroy */
	struct cider_mn_hello hello;
	/* The store's key (keyproof.h), the owner's, or NULL: no proof. */
	struct crypto_shash *key;
	struct cider_cn_proof proof;	/* the last connect's, to check the accept's */

	/* Taken with _bh everywhere: completions run in softirq. */
	spinlock_t lock;	/* everything below */
	enum cider_chan_state state;	/* READ_ONCE() without the lock */
	bool established;	/* was LIVE: has a connected QP to drain */
	int reason;		/* why it stopped: -errno, 0 before */
	unsigned long last_active;	/* jiffies of the last submit or completion */
	struct list_head backlog;	/* waiting for credits */
	struct list_head inflight;	/* posted, oldest first */
	struct cider_credit credit;
	struct cider_backoff backoff;
	struct cider_chan_stats stats;
} ____cacheline_aligned_in_smp;	/* CPUs' channels share no cache line */

struct cider_wr {
	struct ib_cqe cqe;
	union {
		struct ib_rdma_wr rdma;
		struct ib_atomic_wr atomic;
		struct ib_send_wr wr;
	};
	struct ib_sge sge;
	struct cider_batch *batch;
	u16 index;
	u8 op;			/* enum cider_rdma_op */
	int status;		/* final -errno or 0, see cider_batch_finish() */
	u32 buf_off;		/* of this WR's bytes in the batch buffer */
	bool ext;		/* its bytes are in its owner's mapped buffer: */
	u64 ext_dma;		/* at this DMA address (cider_batch_ext) */
	void *ext_cpu;		/* and here (the atomics agent copies them) */
};

struct cider_batch {
	struct list_head node;	/* channel backlog or inflight */
	struct cider_channel *ch;
	refcount_t ref;		/* submitter + data path */
	unsigned int nr;	/* work requests */
	unsigned int acked;	/* WRs [0, acked) accounted */
	unsigned int posted;	/* WRs [0, posted) reached the NIC */
	/*
	 * While the batch runs: why WRs that did not complete failed (a
	 * post error or the channel's reason), or 0.  Once finished: the
	 * batch's result, see cider_batch_finish().
	 */
	int status;
	unsigned long deadline;	/* jiffies */
	void (*complete)(struct cider_batch *b);
	/* The owner's, called by the last put before the batch is freed. */
	void (*release)(struct cider_batch *b);
	void *priv;		/* the owner's */
	struct cider_agent_dest *agent;	/* on the agent path: its node (agent.h) */
	bool keepalive;		/* a liveness READ (counted apart) */
	bool probe;		/* checks a node not yet verified (mn.h: verified) */
	bool heartbeat;		/* a membership heartbeat (counted apart) */
	struct completion done;	/* for synchronous waiters */
	void *buf;
	size_t buf_len;
	dma_addr_t dma;
	struct ib_device *dma_dev;	/* mapped for this submission only */
	struct ib_device *premapped;	/* mapped for the owner's life */
	unsigned int nr_max;		/* work requests allocated */
	struct cider_wr wr[];
};

/* channel.c */
void cider_channel_init(struct cider_channel *ch, const struct cider_chan_ops *ops,
			void *owner, const char *name, u32 cn_id, unsigned int index);
int cider_channel_connect(struct cider_channel *ch, struct sockaddr *dst,
			  unsigned long timeout_ms);
void cider_channel_set_verbose(struct cider_channel *ch, bool verbose);
int cider_channel_submit(struct cider_channel *ch, struct cider_batch *b);
void cider_channel_kill(struct cider_channel *ch, int reason);
void cider_channel_destroy(struct cider_channel *ch);
void cider_channel_reset(struct cider_channel *ch);
bool cider_channel_ready(struct cider_channel *ch);
void cider_channel_break(struct cider_channel *ch);
bool cider_channel_overdue(struct cider_channel *ch);
bool cider_channel_idle(struct cider_channel *ch, unsigned long idle);
const char *cider_chan_state_name(enum cider_chan_state s);

/* batch.c */
struct cider_batch *cider_batch_alloc(unsigned int nr, size_t buf_len, gfp_t gfp);
void cider_batch_read(struct cider_batch *b, unsigned int i, u64 remote, u32 len, u32 off);
void cider_batch_write(struct cider_batch *b, unsigned int i, u64 remote, u32 len, u32 off);
void cider_batch_cas(struct cider_batch *b, unsigned int i, u64 remote, u64 cmp, u64 swp, u32 off);
void cider_batch_faa(struct cider_batch *b, unsigned int i, u64 remote, u64 add, u32 off);
void cider_batch_ext(struct cider_batch *b, unsigned int i, u64 dma, void *cpu);
int cider_batch_map(struct cider_batch *b, struct cider_channel *ch, u64 base, u32 rkey);
int cider_batch_premap(struct cider_batch *b, struct ib_device *dev);
void cider_batch_unpremap(struct cider_batch *b);
void cider_batch_rearm(struct cider_batch *b, unsigned int nr);
void cider_batch_finish(struct cider_batch *b);
void cider_batch_put(struct cider_batch *b);
void cider_batch_wake(struct cider_batch *b);
u64 cider_batch_u64(struct cider_batch *b, unsigned int i);
void cider_wr_done(struct ib_cq *cq, struct ib_wc *wc);

#endif
