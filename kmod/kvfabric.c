// SPDX-License-Identifier: GPL-2.0
/*
 * The KV store's fabric (kvshard.h): what the protocol core calls, with
 * the shard's lock held (post, send, timer, wake, done), and the events
 * that resume it: a slot's batch back from the data path, its timer.
 * The core's verbs of one step become the slot's batch (one doorbell),
 * its messages to the shard's own queue nodes go through the shard's
 * ring; nothing is allocated here.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/moduleparam.h>
#include <linux/random.h>

#include "cider_trace.h"
#include "fault.h"
#include "kvshard.h"
#include "mn.h"

static void cider_kvs_batch_done(struct cider_batch *b);

/*
 * The protocol READs 8-byte words that others change by CAS and FAA (data
 * pointers, lock headers, ring entries, the reader fence) and trusts that
 * a READ returns a value the word held.  Soft-RoCE copies a READ's payload
 * with memcpy(), which need not move an aligned word at once: under
 * emulation 15 of 1,185,030 8-byte READs racing CASes came back torn (bytes
 * of two values), and a torn data pointer can name an old block of the
 * same key, whose bytes then pass every check (the likeliest cause of a
 * soak's GET returning a value overwritten 15 ms before; Documentation/
 * datapath.rst, "read_atomic").  An FAA of 0 reads the word
 * as the MN's atomics see it, at the cost of one atomic instead of one
 * READ.
 */
static bool cider_read_atomic = true;
module_param_named(read_atomic, cider_read_atomic, bool, 0644);
MODULE_PARM_DESC(read_atomic, "KV operations read 8-byte words by FAA of 0, which cannot tear (default on)");

static bool cider_verb_read_atomic(const struct cider_verb *v)
{
	return v->op == CIDER_V_READ && v->len == 8 && !(v->addr & 7) && !v->buf &&
	       !v->plain && READ_ONCE(cider_read_atomic);
}

static u32 cider_verb_len(const struct cider_verb *v)
{
	return v->op == CIDER_V_CAS || v->op == CIDER_V_FAA ? 8 : v->len;
}

/* A verb on the slot's block buffer moves its bytes in place (cider_batch_ext). */
static bool cider_verb_ext(const struct cider_kslot *ks, const struct cider_verb *v)
{
	return v->buf && v->buf == ks->blk;
}

/* Room a verb takes in the batch's own buffer. */
static u32 cider_verb_room(const struct cider_kslot *ks, const struct cider_verb *v)
{
	return cider_verb_ext(ks, v) ? 0 : ALIGN(cider_verb_len(v), 8);
}

static void cider_kvs_batch_verb(struct cider_batch *b, struct cider_kslot *ks,
				 unsigned int i, struct cider_verb *v, u32 off)
{
	switch (v->op) {
	case CIDER_V_READ:
		if (cider_verb_read_atomic(v))
			cider_batch_faa(b, i, v->addr, 0, off);
		else
			cider_batch_read(b, i, v->addr, v->len, off);
		break;
	case CIDER_V_WRITE:
		if (!cider_verb_ext(ks, v))
			memcpy(b->buf + off, v->buf ?: (void *)v->data, v->len);
		cider_batch_write(b, i, v->addr, v->len, off);
		break;
	case CIDER_V_CAS:
		cider_batch_cas(b, i, v->addr, v->arg0, v->arg1, off);
		break;
	default:
		cider_batch_faa(b, i, v->addr, v->arg0, off);
		break;
	}
	if (!cider_verb_ext(ks, v))
		return;
	cider_batch_ext(b, i, ks->blk_dma, ks->blk);
	if (v->op == CIDER_V_WRITE)	/* the block is final: the device may read it */
		ib_dma_sync_single_for_device(ks->sh->dma_dev, ks->blk_dma, v->len,
					      DMA_BIDIRECTIONAL);
}

static void cider_kvs_batch_done(struct cider_batch *b);

/* The core's verbs as one batch (one doorbell), in the slot's own. */
static struct cider_batch *cider_kvs_batch(struct cider_kslot *ks, struct cider_verb *v,
					   unsigned int n)
{
	struct cider_batch *b = ks->b;
	unsigned int i;
	u32 off;

	cider_batch_rearm(b, n);
	for (i = 0, off = 0; i < n; off += cider_verb_room(ks, &v[i]), i++) {
		ks->sh->stats.verbs[v[i].op & 3]++;
		cider_kvs_batch_verb(b, ks, i, &v[i], off);
	}
	b->priv = ks;
	b->complete = cider_kvs_batch_done;
	return b;
}

/* Build the slot's batch and queue it for the unlock. */
static void cider_kslot_post(struct cider_shard *sh, struct cider_kslot *ks)
{
	struct cider_batch *b = cider_kvs_batch(ks, ks->v, ks->nv);

	cider_kslot_set_state(ks, CIDER_KSLOT_POSTED);
	list_add_tail(&b->node, &sh->posts);
}

/*
 * Does every verb fit the buffer it names?  The core never asks otherwise.
 * Bytes go to the slot's block buffer (moved in place), a coordinator's
 * lock record (copied through the batch's buffer) or the verb's own words.
 */
static bool cider_kvs_verbs_fit(const struct cider_kslot *ks, const struct cider_client *c,
				const struct cider_verb *v, unsigned int n)
{
	unsigned int i;
	u32 room, used = 0;

	if (n > ks->b->nr_max)
		return false;
	for (i = 0; i < n; i++) {
		used += cider_verb_room(ks, &v[i]);
		if (cider_verb_ext(ks, &v[i]))
			room = ks->sh->kvs->blk_len;
		else if (v[i].buf == c->lq_ring)
			room = sizeof(c->lq_ring);
		else if (!v[i].buf)
			room = sizeof(v[i].data);
		else
			return false;
		if (v[i].len > room)
			return false;
	}
	return used <= ks->b->buf_len;
}

static void cider_kvs_post(void *fab, struct cider_client *c, struct cider_verb *v,
			   unsigned int n)
{
	struct cider_shard *sh = fab;
	struct cider_kslot *ks = cider_kslot_of(sh, c);
	unsigned int i;

	ks->v = v;
	ks->nv = n;
	if (WARN_ON_ONCE(!cider_kvs_verbs_fit(ks, c, v, n))) {
		/* Unsent, failed: the core ends the operation. */
		for (i = 0; i < n; i++)
			v[i].status = -EIO;
		cider_kslot_wake(sh, ks);
		return;
	}
	if (cider_fault_kv_stall())
		return;		/* lost on purpose: only the bound ends it */
	cider_kslot_post(sh, ks);
}

static void cider_kvs_send(void *fab, struct cider_cn *from, u32 to_cn,
			   const struct cider_msg *m)
{
	struct cider_shard *sh = fab;

	if (to_cn != sh->cn.id) {
		/*
		 * Another compute node's queue node, or another shard's of
		 * ours: through the peer layer, which only takes the
		 * addressee's inbox lock.
		 */
		cider_peer_send(&sh->kvs->sink, to_cn, m);
		return;
	}
	if (WARN_ON_ONCE(sh->mail_len == CIDER_KVS_MAIL)) {
		atomic64_inc(&sh->kvs->msgs_lost);	/* the lease recovers */
		return;
	}
	sh->mail[(sh->mail_head + sh->mail_len++) % CIDER_KVS_MAIL] = *m;
}

/*
 * A writer's INVAL (core/cache.h) to every other compute node with a
 * live claim in the membership table, as the heartbeat last read it: the
 * number sent, each of which answers once, or ~0 when the view is too
 * old to know who may hold a right (the writer waits the lease out).
 * A compute node missing from a fresh view claimed its entry after that
 * view's READ, so its first right comes from a READ at least
 * CIDER_KVS_CACHE_HOLD_NS after it: after this writer's WAITING bit.  A
 * message lost, or a node dead or unreachable, costs the lease.
 */
static u32 cider_kvs_broadcast(void *fab, struct cider_cn *from, const struct cider_msg *m)
{
	struct cider_shard *sh = fab;
	struct cider_mn *mn = sh->kvs->mn;
	unsigned long live[BITS_TO_LONGS(CIDER_MN_MAX_CNS)];
	const struct cider_client *c;
	u64 margin = sh->kvs->cfg.cache_margin_ns;
	struct cider_msg inval = *m;
	unsigned int cn;
	int n;

	if (WARN_ON_ONCE(m->from_slot >= CIDER_KVS_SLOTS))
		return ~0U;
	/* A margin of half the hold or more: no view is young enough. */
	if (margin >= CIDER_KVS_CACHE_HOLD_NS / 2)
		return ~0U;
	n = cider_member_view(mn, live, CIDER_KVS_CACHE_HOLD_NS / 2 - margin);
	if (n < 0)
		return ~0U;
	/* Each node serves the key on the shard its bytes choose there. */
	c = &sh->clients[m->from_slot];
	inval.count = cider_kvs_pick_hash(c->kbytes, c->klen);
	for_each_set_bit(cn, live, CIDER_MN_MAX_CNS)
		cider_peer_send(&sh->kvs->sink, cn * CIDER_PEER_SHARDS, &inval);
	return n;
}

static void cider_kvs_timer(void *fab, struct cider_client *c, u64 delay_ns, u32 token)
{
	struct cider_kslot *ks = cider_kslot_of(fab, c);

	ks->token = token;
	hrtimer_start(&ks->timer, ns_to_ktime(delay_ns), HRTIMER_MODE_REL_SOFT);
}

static void cider_kvs_wake(void *fab, struct cider_client *c)
{
	struct cider_shard *sh = fab;

	cider_kslot_wake(sh, cider_kslot_of(sh, c));
}

static void cider_kvs_done(void *fab, struct cider_client *c)
{
	struct cider_shard *sh = fab;

	cider_kslot_done(sh, cider_kslot_of(sh, c));
}

static void cider_kvs_trace(void *fab, struct cider_client *c, u8 type, u64 lock, u64 a, u64 b)
{
	struct cider_shard *sh = fab;

	trace_cider_lock(sh->kvs->mn->id, sh->cn.id, c->index, type, lock, a, b);
}

static u64 cider_kvs_now(void *fab)
{
	return ktime_get_ns();
}

static u32 cider_kvs_rand(void *fab)
{
	return get_random_u32();
}

const struct cider_fabric_ops cider_kvs_fabric_ops = {
	.post = cider_kvs_post,
	.send = cider_kvs_send,
	.broadcast = cider_kvs_broadcast,
	.timer = cider_kvs_timer,
	.wake = cider_kvs_wake,
	.done = cider_kvs_done,
	.trace = cider_kvs_trace,
	.now = cider_kvs_now,
	.rand = cider_kvs_rand,
};

/*
 * A message from another compute node for shard @shard (peer.h): into the
 * shard's inbox, for its work.  Any context, maybe under another shard's
 * lock.
 */
static int cider_kvs_deliver(struct cider_peer_sink *sink, unsigned int shard,
			     const struct cider_msg *m)
{
	struct cider_kvs *kvs = container_of(sink, struct cider_kvs, sink);
	struct cider_shard *sh;
	int ret = 0;

	/* An INVAL names a node, not a shard: the key's, here. */
	if (m->type == CIDER_MSG_INVAL)
		shard = m->count % kvs->nr_shards;
	if (shard >= kvs->nr_shards)
		return -ENOENT;
	sh = kvs->shards[shard];
	spin_lock_bh(&sh->inbox_lock);
	if (sh->inbox_len == CIDER_KVS_INBOX)
		ret = -ENOBUFS;
	else
		sh->inbox[(sh->inbox_head + sh->inbox_len++) % CIDER_KVS_INBOX] = *m;
	spin_unlock_bh(&sh->inbox_lock);
	if (!ret)
		queue_work(system_highpri_wq, &sh->inbox_work);
	return ret;
}

/* The shard's inbox, into the core under the shard's lock. */
void cider_shard_inbox_work(struct work_struct *work)
{
	struct cider_shard *sh = container_of(work, struct cider_shard, inbox_work);
	struct cider_msg m;

	spin_lock_bh(&sh->lock);
	for (;;) {
		spin_lock(&sh->inbox_lock);
		if (!sh->inbox_len) {
			spin_unlock(&sh->inbox_lock);
			break;
		}
		m = sh->inbox[sh->inbox_head];
		sh->inbox_head = (sh->inbox_head + 1) % CIDER_KVS_INBOX;
		sh->inbox_len--;
		spin_unlock(&sh->inbox_lock);
		if (!cider_shard_dead(sh))
			cider_cn_on_msg(&sh->cn, &m);
	}
	cider_shard_flush(sh);
}

/* Other compute nodes reach @kvs from now on (its node's incarnation is claimed). */
void cider_kvs_open(struct cider_kvs *kvs)
{
	struct cider_mn *mn = kvs->mn;

	kvs->sink.mn = mn;
	kvs->sink.cn_id = mn->cn_id;
	kvs->sink.incarnation = cider_member_incarnation(&mn->member);
	kvs->sink.deliver = cider_kvs_deliver;
	cider_peer_register(&kvs->sink);
}

/*
 * debugfs mnN-peer: @len bytes as if another compute node had sent them
 * to @mn's store.  0, or -EOPNOTSUPP without a store.  Process context.
 */
int cider_kvs_peer_inject(struct cider_mn *mn, const void *buf, size_t len)
{
	struct cider_kvs *kvs = cider_kvs_of(mn);

	if (!kvs)
		return -EOPNOTSUPP;
	local_bh_disable();	/* as a receive completion would run */
	cider_peer_inject(&kvs->sink, buf, len);
	local_bh_enable();
	return 0;
}

/* Nothing reaches @kvs any more, and its inbox is empty.  Process context. */
void cider_kvs_close(struct cider_kvs *kvs)
{
	unsigned int i;

	cider_peer_unregister(&kvs->sink);
	for (i = 0; i < kvs->nr_shards && kvs->shards[i]; i++)
		cancel_work_sync(&kvs->shards[i]->inbox_work);
}

/*
 * A verb failed: the node is lost or refused us.  The store dies with it,
 * unless the node reconnects: then only this operation ends (the failed
 * verb ends it in the core), and the store waits for its node.
 */
static void cider_kvs_die(struct cider_kvs *kvs, int status)
{
	if (!cider_mn_lost(kvs->mn, status))
		atomic_cmpxchg(&kvs->dead, 0, status);
}

/* The batch's verbs back in the core's hands, each with its status. */
static void cider_kvs_unpack(struct cider_kslot *ks, struct cider_batch *b)
{
	unsigned int i;
	u32 off;

	for (i = 0, off = 0; i < ks->nv; off += cider_verb_room(ks, &ks->v[i]), i++) {
		struct cider_verb *v = &ks->v[i];

		v->status = b->wr[i].status;
		if (v->status)
			continue;
		if (v->op == CIDER_V_READ && b->wr[i].op == CIDER_RDMA_FAA)
			v->data[0] = cider_batch_u64(b, i);	/* read atomically */
		else if (v->op == CIDER_V_READ && cider_verb_ext(ks, v))
			ib_dma_sync_single_for_cpu(ks->sh->dma_dev, ks->blk_dma, v->len,
						   DMA_BIDIRECTIONAL);
		else if (v->op == CIDER_V_READ)
			memcpy(v->buf ?: (void *)v->data, b->buf + off, v->len);
		else if (v->op != CIDER_V_WRITE)
			v->old = cider_batch_u64(b, i);
	}
}

static void cider_kvs_batch_done(struct cider_batch *b)
{
	struct cider_kslot *ks = b->priv;
	struct cider_shard *sh = ks->sh;

	spin_lock_bh(&sh->lock);
	/* Its operation ended by its bound meanwhile: the slot is the shard's. */
	if (ks->state == CIDER_KSLOT_ORPHAN) {
		cider_kslot_set_state(ks, CIDER_KSLOT_DEAD);
		goto out;
	}
	if (WARN_ON_ONCE(ks->state != CIDER_KSLOT_POSTED))
		goto out;
	cider_kslot_set_state(ks, CIDER_KSLOT_RUNNING);
	if (b->status)
		cider_kvs_die(sh->kvs, b->status);
	if (cider_shard_dead(sh) && !b->status) {
		cider_kslot_abort(sh, ks);	/* killed while this batch was out */
	} else {
		/* A failed verb ends the operation in the core. */
		cider_kvs_unpack(ks, b);
		cider_client_resume(cider_kslot_client(ks));
	}
out:
	cider_shard_flush(sh);
}

/* The core's timer (a backoff, a lock wait's poll). */
enum hrtimer_restart cider_kslot_timer(struct hrtimer *t)
{
	struct cider_kslot *ks = container_of(t, struct cider_kslot, timer);
	struct cider_shard *sh = ks->sh;

	spin_lock_bh(&sh->lock);
	if (!cider_shard_dead(sh) && ks->state == CIDER_KSLOT_RUNNING)
		cider_client_timer(cider_kslot_client(ks), ks->token);
	cider_shard_flush(sh);
	return HRTIMER_NORESTART;
}

