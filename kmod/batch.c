// SPDX-License-Identifier: GPL-2.0
/*
 * Batches of one-sided work requests and their completion accounting.
 *
 * Only a batch's last work request is signalled.  An RC send queue
 * completes in order, so a completion for WR k of a batch also accounts
 * every earlier WR of that batch; a WR that fails (or is flushed) always
 * produces its own completion, signalled or not.  A batch is finished when
 * every WR that reached the NIC is accounted, or when its channel has
 * been drained (cider_channel_kill); WRs that never reached it (a failed
 * ib_post_send) are failed at once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/jiffies.h>

#include "fault.h"
#include "transport.h"

/* WR @i of @nr: chained to the next, the last one signalled. */
static void cider_wr_link(struct cider_batch *b, unsigned int i, unsigned int nr)
{
	struct cider_wr *w = &b->wr[i];

	w->wr.next = i + 1 < nr ? &b->wr[i + 1].wr : NULL;
	w->wr.send_flags = i + 1 < nr ? 0 : IB_SEND_SIGNALED;
}

struct cider_batch *cider_batch_alloc(unsigned int nr, size_t buf_len, gfp_t gfp)
{
	struct cider_batch *b;
	unsigned int i;

	b = kzalloc(struct_size(b, wr, nr), gfp);
	if (!b)
		return NULL;
	b->buf = kzalloc(buf_len, gfp | __GFP_NOWARN);
	if (!b->buf) {
		kfree(b);
		return NULL;
	}
	b->buf_len = buf_len;
	b->nr = nr;
	b->nr_max = nr;
	refcount_set(&b->ref, 2);
	INIT_LIST_HEAD(&b->node);
	init_completion(&b->done);
	for (i = 0; i < nr; i++) {
		b->wr[i].batch = b;
		b->wr[i].index = i;
		b->wr[i].cqe.done = cider_wr_done;
		b->wr[i].wr.wr_cqe = &b->wr[i].cqe;
		b->wr[i].wr.sg_list = &b->wr[i].sge;
		b->wr[i].wr.num_sge = 1;
		cider_wr_link(b, i, nr);
	}
	return b;
}

/*
 * A batch its owner keeps and submits again and again, one submission at
 * a time, its buffer mapped once on @dev for the owner's life: nothing is
 * allocated or mapped per submission.  cider_batch_alloc() (the owner
 * keeps a reference), cider_batch_premap(), then cider_batch_rearm()
 * before each submission; cider_batch_unpremap() before the owner's last
 * put.
 */
int cider_batch_premap(struct cider_batch *b, struct ib_device *dev)
{
	b->dma = ib_dma_map_single(dev, b->buf, b->buf_len, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, b->dma))
		return -ENOMEM;
	b->premapped = dev;
	return 0;
}

void cider_batch_unpremap(struct cider_batch *b)
{
	if (b->premapped)
		ib_dma_unmap_single(b->premapped, b->dma, b->buf_len, DMA_BIDIRECTIONAL);
	b->premapped = NULL;
}

/*
 * Ready for its next submission with @nr (<= allocated) work requests:
 * no WR of the last one is left set, and the submitter and the data path
 * hold a reference each, as for a new batch.  The last submission has
 * finished (its completion callback may still be running: it may rearm).
 */
void cider_batch_rearm(struct cider_batch *b, unsigned int nr)
{
	unsigned int i;

	b->nr = nr;
	b->acked = 0;
	b->posted = 0;
	b->status = 0;
	b->ch = NULL;
	b->keepalive = false;
	b->heartbeat = false;
	b->probe = false;
	b->agent = NULL;
	INIT_LIST_HEAD(&b->node);
	for (i = 0; i < nr; i++) {
		struct cider_wr *w = &b->wr[i];

		memset(&w->atomic, 0, sizeof(w->atomic));
		w->wr.wr_cqe = &w->cqe;
		w->wr.sg_list = &w->sge;
		w->wr.num_sge = 1;
		w->status = 0;
		w->ext = false;
		cider_wr_link(b, i, nr);
	}
	refcount_add(2, &b->ref);
}

static void cider_batch_set(struct cider_batch *b, unsigned int i, u8 op,
			    enum ib_wr_opcode opcode, u32 len, u32 off)
{
	struct cider_wr *w = &b->wr[i];

	w->op = op;
	w->buf_off = off;
	w->sge.length = len;
	w->wr.opcode = opcode;
}

void cider_batch_read(struct cider_batch *b, unsigned int i, u64 remote, u32 len, u32 off)
{
	cider_batch_set(b, i, CIDER_RDMA_READ, IB_WR_RDMA_READ, len, off);
	b->wr[i].rdma.remote_addr = remote;
}

void cider_batch_write(struct cider_batch *b, unsigned int i, u64 remote, u32 len, u32 off)
{
	cider_batch_set(b, i, CIDER_RDMA_WRITE, IB_WR_RDMA_WRITE, len, off);
	b->wr[i].rdma.remote_addr = remote;
}

void cider_batch_cas(struct cider_batch *b, unsigned int i, u64 remote, u64 cmp, u64 swp, u32 off)
{
	cider_batch_set(b, i, CIDER_RDMA_CAS, IB_WR_ATOMIC_CMP_AND_SWP, 8, off);
	b->wr[i].atomic.remote_addr = remote;
	b->wr[i].atomic.compare_add = cmp;
	b->wr[i].atomic.swap = swp;
}

void cider_batch_faa(struct cider_batch *b, unsigned int i, u64 remote, u64 add, u32 off)
{
	cider_batch_set(b, i, CIDER_RDMA_FAA, IB_WR_ATOMIC_FETCH_AND_ADD, 8, off);
	b->wr[i].atomic.remote_addr = remote;
	b->wr[i].atomic.compare_add = add;
}

/*
 * WR @i of a READ or WRITE moves its bytes to or from a buffer its owner
 * mapped on the channel's device at @dma, not the batch's own: large
 * blocks are not copied, and not mapped per batch.  The owner keeps the
 * mapping until the batch is finished and syncs it around the transfer.
 */
void cider_batch_ext(struct cider_batch *b, unsigned int i, u64 dma, void *cpu)
{
	b->wr[i].ext = true;
	b->wr[i].ext_dma = dma;
	b->wr[i].ext_cpu = cpu;
}

/*
 * Bind the batch to @ch: remote offsets become addresses in the remote
 * region at @base with key @rkey, the buffer is DMA-mapped on the
 * channel's device.  The caller keeps @ch's resources alive (the owner
 * fences teardown with RCU, see mn.c).
 */
int cider_batch_map(struct cider_batch *b, struct cider_channel *ch, u64 base, u32 rkey)
{
	unsigned int i;

	if (b->premapped && b->premapped != ch->dev)
		return -EXDEV;		/* mapped on another device: never */
	if (b->premapped) {
		ib_dma_sync_single_for_device(ch->dev, b->dma, b->buf_len, DMA_BIDIRECTIONAL);
	} else {
		b->dma = ib_dma_map_single(ch->dev, b->buf, b->buf_len, DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(ch->dev, b->dma))
			return -ENOMEM;
		b->dma_dev = ch->dev;
	}
	b->ch = ch;
	for (i = 0; i < b->nr; i++) {
		struct cider_wr *w = &b->wr[i];

		w->sge.addr = w->ext ? w->ext_dma : b->dma + w->buf_off;
		w->sge.lkey = ch->pd->local_dma_lkey;
		if (w->op == CIDER_RDMA_READ || w->op == CIDER_RDMA_WRITE) {
			w->rdma.remote_addr += base;
			w->rdma.rkey = rkey;
		} else {
			w->atomic.remote_addr += base;
			w->atomic.rkey = rkey;
		}
	}
	return 0;
}

/*
 * The status of WR @i, which has none from a completion of its own:
 * accounted by a later completion, it succeeded; never posted, it did not
 * execute and reports why the batch failed; posted but never accounted
 * (its channel was drained without a completion for it), a WRITE or
 * atomic may or may not have executed (-ECOMM) and a READ delivered
 * nothing.
 */
static int cider_wr_status(const struct cider_batch *b, unsigned int i)
{
	int why = b->status ?: -ECANCELED;

	if (i < b->acked)
		return 0;
	if (i < b->posted && b->wr[i].op != CIDER_RDMA_READ)
		return -ECOMM;
	return why;
}

/* Injected (fault.h): atomic results byte-swapped, as by a broken device. */
static void cider_batch_swab_atomics(struct cider_batch *b)
{
	unsigned int i;

	for (i = 0; i < b->nr; i++) {
		u64 *p = b->buf + b->wr[i].buf_off;

		if (!b->wr[i].status && (b->wr[i].op == CIDER_RDMA_CAS ||
					 b->wr[i].op == CIDER_RDMA_FAA))
			*p = swab64(*p);
	}
}

/*
 * Every WR is accounted, or its channel drained: unmap, give every WR its
 * final status and the batch its result, and hand it to its owner.  The
 * result is 0 when every WR succeeded, -ECOMM when any WR's outcome is
 * unknown, else the first WR's error.  Called exactly once per batch.
 */
void cider_batch_finish(struct cider_batch *b)
{
	bool unknown = false;
	int first = 0;
	unsigned int i;

	if (b->dma_dev) {
		ib_dma_unmap_single(b->dma_dev, b->dma, b->buf_len, DMA_BIDIRECTIONAL);
		b->dma_dev = NULL;
	} else if (b->premapped && b->ch) {
		ib_dma_sync_single_for_cpu(b->premapped, b->dma, b->buf_len, DMA_BIDIRECTIONAL);
	}
	for (i = 0; i < b->nr; i++) {
		struct cider_wr *w = &b->wr[i];

		if (!w->status)
			w->status = cider_wr_status(b, i);
		if (w->status == -ECOMM)
			unknown = true;
		else if (!first)
			first = w->status;
	}
	if (unlikely(cider_fault_swab_atomics()))
		cider_batch_swab_atomics(b);
	b->status = unknown ? -ECOMM : first;
	b->complete(b);
	cider_batch_put(b);
}

void cider_batch_put(struct cider_batch *b)
{
	if (!refcount_dec_and_test(&b->ref))
		return;
	if (b->release)
		b->release(b);
	kfree(b->buf);
	kfree(b);
}

/* The value an atomic WR fetched (little-endian, as the MN stores it). */
u64 cider_batch_u64(struct cider_batch *b, unsigned int i)
{
	return le64_to_cpu(*(__le64 *)(b->buf + b->wr[i].buf_off));
}

/* The completion callback of a synchronous waiter. */
void cider_batch_wake(struct cider_batch *b)
{
	complete(&b->done);
}
