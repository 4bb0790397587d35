// SPDX-License-Identifier: GPL-2.0
/*
 * Batches of one-sided work requests and their completion accounting.
 *
 * Only a batch's last work request is signalled.  An RC send queue
 * completes in order, so a completion for WR k of a batch also accounts
 * every earlier WR of that batch; a WR that fails (or is flushed) always
 * produces its own completion, signalled or not.  A batch is finished when
 * every WR that reached the NIC is accounted; WRs that never reached it
 * (a failed ib_post_send) are failed at once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/slab.h>
#include <linux/jiffies.h>

#include "cider.h"
#include "mn.h"

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
	refcount_set(&b->ref, 2);
	INIT_LIST_HEAD(&b->node);
	for (i = 0; i < nr; i++) {
		b->wr[i].batch = b;
		b->wr[i].index = i;
		b->wr[i].cqe.done = cider_wr_done;
		b->wr[i].wr.wr_cqe = &b->wr[i].cqe;
		b->wr[i].wr.sg_list = &b->wr[i].sge;
		b->wr[i].wr.num_sge = 1;
		if (i + 1 < nr)
			b->wr[i].wr.next = &b->wr[i + 1].wr;
	}
	b->wr[nr - 1].wr.send_flags = IB_SEND_SIGNALED;
	return b;
}

static void cider_batch_set(struct cider_batch *b, unsigned int i, u8 verb,
			    enum ib_wr_opcode op, u32 len, u32 off)
{
	struct cider_wr *w = &b->wr[i];

	w->verb = verb;
	w->buf_off = off;
	w->sge.length = len;
	w->wr.opcode = op;
}

void cider_batch_read(struct cider_batch *b, unsigned int i, u64 remote, u32 len, u32 off)
{
	cider_batch_set(b, i, CIDER_VERB_READ, IB_WR_RDMA_READ, len, off);
	b->wr[i].rdma.remote_addr = remote;
}

void cider_batch_write(struct cider_batch *b, unsigned int i, u64 remote, u32 len, u32 off)
{
	cider_batch_set(b, i, CIDER_VERB_WRITE, IB_WR_RDMA_WRITE, len, off);
	b->wr[i].rdma.remote_addr = remote;
}

void cider_batch_cas(struct cider_batch *b, unsigned int i, u64 remote, u64 cmp, u64 swp, u32 off)
{
	cider_batch_set(b, i, CIDER_VERB_CAS, IB_WR_ATOMIC_CMP_AND_SWP, 8, off);
	b->wr[i].atomic.remote_addr = remote;
	b->wr[i].atomic.compare_add = cmp;
	b->wr[i].atomic.swap = swp;
}

void cider_batch_faa(struct cider_batch *b, unsigned int i, u64 remote, u64 add, u32 off)
{
	cider_batch_set(b, i, CIDER_VERB_FAA, IB_WR_ATOMIC_FETCH_AND_ADD, 8, off);
	b->wr[i].atomic.remote_addr = remote;
	b->wr[i].atomic.compare_add = add;
}

/*
 * Bind the batch to @ch: remote addresses become the MN's virtual
 * addresses, the buffer is DMA-mapped on the channel's device.  Caller
 * holds mn->res_sem for reading.
 */
int cider_batch_map(struct cider_batch *b, struct cider_channel *ch)
{
	struct cider_mn *mn = ch->mn;
	unsigned int i;

	b->dma = ib_dma_map_single(ch->dev, b->buf, b->buf_len, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(ch->dev, b->dma))
		return -ENOMEM;
	b->dma_dev = ch->dev;
	b->ch = ch;
	for (i = 0; i < b->nr; i++) {
		struct cider_wr *w = &b->wr[i];

		w->sge.addr = b->dma + w->buf_off;
		w->sge.lkey = ch->pd->local_dma_lkey;
		if (w->verb == CIDER_VERB_READ || w->verb == CIDER_VERB_WRITE) {
			w->rdma.remote_addr += mn->base;
			w->rdma.rkey = mn->rkey;
		} else {
			w->atomic.remote_addr += mn->base;
			w->atomic.rkey = mn->rkey;
		}
	}
	return 0;
}

/* Every WR is accounted: unmap and hand the batch to its owner. */
void cider_batch_finish(struct cider_batch *b)
{
	unsigned int i;

	if (b->dma_dev) {
		ib_dma_unmap_single(b->dma_dev, b->dma, b->buf_len, DMA_BIDIRECTIONAL);
		b->dma_dev = NULL;
	}
	for (i = 0; i < b->nr && !b->status; i++)
		b->status = b->wr[i].status;
	b->complete(b);
	cider_batch_put(b);
}

void cider_batch_put(struct cider_batch *b)
{
	if (!refcount_dec_and_test(&b->ref))
		return;
	if (b->mn)
		cider_mn_put(b->mn);
	kfree(b->buf);
	kfree(b);
}

/* The value an atomic WR fetched (little-endian, as the MN stores it). */
u64 cider_batch_u64(struct cider_batch *b, unsigned int i)
{
	return le64_to_cpu(*(__le64 *)(b->buf + b->wr[i].buf_off));
}

static void cider_batch_wake(struct cider_batch *b)
{
	complete(b->priv);
}

/*
 * Run a kernel-owned batch to completion and wait.  Bounded: the MN's
 * watchdog declares it lost after op_timeout_ms, which flushes the batch.
 */
int cider_batch_run(struct cider_channel *ch, struct cider_batch *b)
{
	DECLARE_COMPLETION_ONSTACK(done);
	int ret;

	b->complete = cider_batch_wake;
	b->priv = &done;
	ret = cider_batch_map(b, ch);
	if (ret) {
		b->status = ret;
		cider_batch_put(b);	/* the data path's reference */
		return ret;
	}
	cider_channel_submit(ch, b);
	wait_for_completion(&done);
	return b->status;
}
