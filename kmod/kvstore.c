// SPDX-License-Identifier: GPL-2.0
/*
 * The KV store of one attached memory node: the kernel's fabric for the
 * protocol core (kvstore.h has the concurrency model).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/io_uring.h>
#include <linux/jhash.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "core/client.h"
#include "core/localwc.h"
#include "core/store.h"
#include "cider_trace.h"
#include "kvstore.h"
#include "mn.h"
#include "params.h"

#define CIDER_KVS_MAX_SHARDS	16	/* qnode ids: 12 bits of CN = 256 x 16 */
#define CIDER_KVS_SLOTS		32	/* core clients per shard (local WC: <= 64) */
#define CIDER_KVS_RING		1024	/* freed blocks waiting out the grace period */

struct cider_shard;

/* The kernel's side of one core client. */
struct cider_kslot {
	struct cider_shard *sh;
	struct cider_kv_req *req;	/* NULL: free */
	struct hrtimer timer;
	u32 token;
	struct cider_verb *v;		/* the batch the core posted */
	unsigned int nv;
	bool inflight;			/* that batch is with the data path */
	bool queued;			/* on the shard's run queue */
	u8 restart;			/* PUT: the core operation to run next */
	u8 attempts;			/* PUT: core operations run so far */
	struct list_head run;
};

/* A message for this shard's own agent, delivered after the sender returns. */
struct cider_kmsg {
	struct list_head node;
	struct cider_msg m;
};

struct cider_shard {
	spinlock_t lock;		/* taken with _bh; everything below */
	struct cider_kvs *kvs;
	unsigned int index;
	struct cider_channel *ch;
	int dead;			/* -errno once the store died */
	unsigned int busy;		/* slots in use */
	u32 opid;
	struct list_head runq;		/* kslots to resume */
	struct list_head mail;		/* cider_kmsg to deliver */
	struct list_head posts;		/* batches to submit after the unlock */
	struct list_head finished;	/* requests to complete after the unlock */
	wait_queue_head_t slot_wait;
	struct cider_fabric fab;
	struct cider_client clients[CIDER_KVS_SLOTS];
	struct cider_kslot slots[CIDER_KVS_SLOTS];
	struct cider_lwc lwc[CIDER_KVS_SLOTS];
	struct cider_slab_ent ring[CIDER_KVS_RING];
	struct cider_cn cn;
};

struct cider_kvs {
	struct cider_mn *mn;
	struct cider_cfg cfg;
	atomic_t dead;			/* -errno once the store died */
	unsigned int nr_shards;
	atomic64_t msgs_lost;		/* to other CNs: no CN-to-CN links yet */
	struct cider_shard *shards[];
};

static const struct cider_fabric_ops cider_kvs_fabric_ops;

/* -errno once the store died: this shard was killed, or any verb failed. */
static int cider_shard_dead(struct cider_shard *sh)
{
	return sh->dead ?: atomic_read(&sh->kvs->dead);
}

/* ---- the store's configuration, from the superblock ---- */

static const u8 cider_kvs_modes[] = {
	[CIDER_SB_MODE_OSYNC] = CIDER_MODE_OSYNC,
	[CIDER_SB_MODE_CASLOCK] = CIDER_MODE_CASLOCK,
	[CIDER_SB_MODE_MCS] = CIDER_MODE_MCS,
	[CIDER_SB_MODE_CIDER] = CIDER_MODE_CIDER,
};

static void cider_kvs_cfg(struct cider_cfg *cfg, const struct cider_mn_sb *sb)
{
	cfg->mode = cider_kvs_modes[sb->mode];
	cfg->index = sb->index == CIDER_SB_INDEX_HASH ? CIDER_INDEX_HASH : CIDER_INDEX_ARRAY;
	cfg->local_wc = cfg->mode == CIDER_MODE_CIDER;
	cfg->backoff = true;		/* SMART's CAS backoff: the strongest osync */
	cfg->nr_cns = 1;
	cfg->clients_per_cn = CIDER_KVS_SLOTS;
	cfg->nr_keys = sb->nr_keys;
	cfg->index_off = sb->index_off;
	cfg->lock_off = sb->lock_off;
	cfg->nr_buckets = sb->nr_buckets;
	cfg->bucket_off = sb->bucket_off;
	cfg->ilock_off = sb->ilock_off;
	cfg->alloc_cursor = offsetof(struct cider_mn_sb, alloc_cursor);
	cfg->rfence = offsetof(struct cider_mn_sb, reader_fence);
	cfg->data_off = sb->data_off;
	cfg->chunk_size = sb->chunk_size;
	cfg->data_size_limit = sb->data_size;
	cfg->block_size = CIDER_BLOCK_SIZE;
	cfg->key_len = 8;
	cfg->lease_ns = sb->lease_ns;
	cfg->grace_ns = sb->grace_ns;
	cfg->backoff_t0_ns = 4000;	/* SMART: ~one round trip */
	cfg->initial_credit = 36;	/* CIDER Algorithm 1 */
	cfg->hotness = 2;
	cfg->aimd = 2;
	cfg->escalate = 2;		/* failed CASes before an UPDATE queues */
	cfg->lock_qlen = sb->lock_qlen;	/* the lock table as formatted */
	cfg->lock_rec = sb->lock_rec;
}

/* ---- carrying out what the core asked for, after the unlock ---- */

static void cider_kvs_req_finish(struct cider_shard *sh, struct cider_kslot *ks, int result)
{
	struct cider_kv_req *r = ks->req;

	r->result = result;
	ks->req = NULL;
	ks->inflight = false;
	sh->busy--;
	list_add_tail(&r->node, &sh->finished);
}

static void cider_shard_run(struct cider_shard *sh);

static void cider_shard_flush(struct cider_shard *sh)
	__releases(&sh->lock)
{
	struct cider_kv_req *r, *rt;
	struct cider_batch *b, *bt;
	LIST_HEAD(posts);
	LIST_HEAD(done);
	bool freed;

	cider_shard_run(sh);
	list_splice_init(&sh->posts, &posts);
	list_splice_init(&sh->finished, &done);
	freed = !list_empty(&done);
	spin_unlock_bh(&sh->lock);

	list_for_each_entry_safe(b, bt, &posts, node) {
		list_del_init(&b->node);
		/* A refused submit finishes the batch with its error. */
		cider_mn_submit(sh->kvs->mn, sh->ch, b);
		cider_batch_put(b);
	}
	list_for_each_entry(r, &done, node)
		r->complete(r);
	if (freed)
		wake_up(&sh->slot_wait);
	/* Last: the final reference to a request may be the node's last. */
	list_for_each_entry_safe(r, rt, &done, node) {
		list_del_init(&r->node);
		cider_kv_req_put(r);
	}
}

static void cider_kslot_start(struct cider_shard *sh, struct cider_kslot *ks, u8 op)
{
	struct cider_kv_req *r = ks->req;

	ks->restart = 0;
	ks->attempts++;
	cider_client_start(&sh->clients[ks - sh->slots], op, r->key, r->val, 8, sh->opid++);
}

/* Resume woken clients and deliver messages until nothing is left. */
static void cider_shard_run(struct cider_shard *sh)
{
	struct cider_kslot *ks;
	struct cider_kmsg *km;

	lockdep_assert_held(&sh->lock);
	for (;;) {
		ks = list_first_entry_or_null(&sh->runq, struct cider_kslot, run);
		if (ks) {
			struct cider_client *c = &sh->clients[ks - sh->slots];

			list_del_init(&ks->run);
			ks->queued = false;
			if (ks->restart)
				cider_kslot_start(sh, ks, ks->restart);
			else if (!c->parked)
				cider_client_resume(c);
			continue;
		}
		km = list_first_entry_or_null(&sh->mail, struct cider_kmsg, node);
		if (!km)
			return;
		list_del(&km->node);
		cider_cn_on_msg(&sh->cn, &km->m);
		kfree(km);
	}
}

/* ---- the fabric: called by the core with the shard's lock held ---- */

static struct cider_kslot *cider_kslot_of(struct cider_shard *sh, struct cider_client *c)
{
	return &sh->slots[c - sh->clients];
}

static u32 cider_verb_len(const struct cider_verb *v)
{
	return v->op == CIDER_V_CAS || v->op == CIDER_V_FAA ? 8 : v->len;
}

static void cider_kvs_batch_done(struct cider_batch *b);

/* The core's verbs as one batch: one doorbell. */
static struct cider_batch *cider_kvs_batch(struct cider_kslot *ks, struct cider_verb *v,
					   unsigned int n)
{
	struct cider_batch *b;
	unsigned int i;
	u32 len = 0, off;

	for (i = 0; i < n; i++)
		len += ALIGN(cider_verb_len(&v[i]), 8);
	b = cider_batch_alloc(n, len, GFP_ATOMIC);
	if (!b)
		return NULL;
	for (i = 0, off = 0; i < n; off += ALIGN(cider_verb_len(&v[i]), 8), i++) {
		switch (v[i].op) {
		case CIDER_V_READ:
			cider_batch_read(b, i, v[i].addr, v[i].len, off);
			break;
		case CIDER_V_WRITE:
			memcpy(b->buf + off, v[i].buf ?: (void *)v[i].data, v[i].len);
			cider_batch_write(b, i, v[i].addr, v[i].len, off);
			ks->req->wrote = true;
			break;
		case CIDER_V_CAS:
			cider_batch_cas(b, i, v[i].addr, v[i].arg0, v[i].arg1, off);
			ks->req->wrote = true;
			break;
		default:
			cider_batch_faa(b, i, v[i].addr, v[i].arg0, off);
			ks->req->wrote = true;
			break;
		}
	}
	b->priv = ks;
	b->complete = cider_kvs_batch_done;
	return b;
}

static void cider_kvs_post(void *fab, struct cider_client *c, struct cider_verb *v,
			   unsigned int n)
{
	struct cider_shard *sh = fab;
	struct cider_kslot *ks = cider_kslot_of(sh, c);
	struct cider_batch *b = cider_kvs_batch(ks, v, n);

	ks->v = v;
	ks->nv = n;
	ks->inflight = true;
	if (!b) {
		/* The core cannot fail a verb yet: end the operation here. */
		cider_client_crash(c);
		cider_kvs_req_finish(sh, ks, -ENOMEM);
		return;
	}
	list_add_tail(&b->node, &sh->posts);
}

static void cider_kvs_send(void *fab, struct cider_cn *from, u32 to_cn,
			   const struct cider_msg *m)
{
	struct cider_shard *sh = fab;
	struct cider_kmsg *km;

	if (to_cn != sh->cn.id) {
		/*
		 * A key maps to one shard on every CN, so only another CN's
		 * queue node is addressed here: CN-to-CN links come with
		 * several compute nodes.  The lease recovers the lock.
		 */
		atomic64_inc(&sh->kvs->msgs_lost);
		pr_warn_ratelimited("store of mn%u: message to cn %u lost: no CN-to-CN links yet\n",
				    sh->kvs->mn->id, to_cn);
		return;
	}
	km = kmalloc(sizeof(*km), GFP_ATOMIC);
	if (!km) {
		atomic64_inc(&sh->kvs->msgs_lost);
		return;
	}
	km->m = *m;
	list_add_tail(&km->node, &sh->mail);
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
	struct cider_kslot *ks = cider_kslot_of(sh, c);

	if (!ks->queued) {
		ks->queued = true;
		list_add_tail(&ks->run, &sh->runq);
	}
}

static const int cider_kvs_errno[] = {
	[CIDER_RES_OK] = 0,
	[CIDER_RES_NOTFOUND] = -ENOENT,
	[CIDER_RES_EXISTS] = -EEXIST,
	[CIDER_RES_NOSPC] = -ENOSPC,
	[CIDER_RES_UNKNOWN] = -ECOMM,
};

static void cider_kvs_done(void *fab, struct cider_client *c)
{
	struct cider_shard *sh = fab;
	struct cider_kslot *ks = cider_kslot_of(sh, c);

	if (WARN_ON_ONCE(!ks->req))
		return;
	/*
	 * PUT is UPDATE, or INSERT when the key is absent; a concurrent
	 * INSERT or DELETE in between sends it back (a few times at most).
	 */
	if (ks->req->op == CIDER_KV_PUT && ks->attempts < 4 &&
	    (c->res == CIDER_RES_NOTFOUND || c->res == CIDER_RES_EXISTS)) {
		ks->restart = c->res == CIDER_RES_NOTFOUND ? CIDER_INSERT : CIDER_UPDATE;
		cider_kvs_wake(fab, c);
		return;
	}
	ks->req->got = c->got;
	cider_kvs_req_finish(sh, ks, c->res < ARRAY_SIZE(cider_kvs_errno) && c->res ?
			     cider_kvs_errno[c->res] : -EIO);
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

static const struct cider_fabric_ops cider_kvs_fabric_ops = {
	.post = cider_kvs_post,
	.send = cider_kvs_send,
	.timer = cider_kvs_timer,
	.wake = cider_kvs_wake,
	.done = cider_kvs_done,
	.trace = cider_kvs_trace,
	.now = cider_kvs_now,
	.rand = cider_kvs_rand,
};

/* ---- events from the data path and the clock ---- */

/* A verb failed: the node is lost or refused us.  The store dies. */
static void cider_kslot_fail(struct cider_shard *sh, struct cider_kslot *ks, int status)
{
	struct cider_kv_req *r = ks->req;

	cider_client_crash(&sh->clients[ks - sh->slots]);
	cider_kvs_req_finish(sh, ks, r->wrote ? -ECOMM : -ENOTCONN);
	if (atomic_cmpxchg(&sh->kvs->dead, 0, status) == 0)
		cider_mn_lost(sh->kvs->mn, status);
}

static void cider_kvs_batch_done(struct cider_batch *b)
{
	struct cider_kslot *ks = b->priv;
	struct cider_shard *sh = ks->sh;
	unsigned int i;
	u32 off;

	spin_lock_bh(&sh->lock);
	ks->inflight = false;
	if (!ks->req)
		goto out;
	if (b->status || cider_shard_dead(sh)) {
		cider_kslot_fail(sh, ks, b->status ?: cider_shard_dead(sh));
		goto out;
	}
	for (i = 0, off = 0; i < ks->nv; off += ALIGN(cider_verb_len(&ks->v[i]), 8), i++) {
		struct cider_verb *v = &ks->v[i];

		if (v->op == CIDER_V_READ)
			memcpy(v->buf ?: (void *)v->data, b->buf + off, v->len);
		else if (v->op != CIDER_V_WRITE)
			v->old = cider_batch_u64(b, i);
	}
	cider_client_resume(&sh->clients[ks - sh->slots]);
out:
	cider_shard_flush(sh);
}

static enum hrtimer_restart cider_kslot_timer(struct hrtimer *t)
{
	struct cider_kslot *ks = container_of(t, struct cider_kslot, timer);
	struct cider_shard *sh = ks->sh;

	spin_lock_bh(&sh->lock);
	if (!cider_shard_dead(sh) && ks->req)
		cider_client_timer(&sh->clients[ks - sh->slots], ks->token);
	cider_shard_flush(sh);
	return HRTIMER_NORESTART;
}

/* ---- requests ---- */

void cider_kv_req_put(struct cider_kv_req *r)
{
	if (!refcount_dec_and_test(&r->ref))
		return;
	if (r->mn)
		cider_mn_put(r->mn);
	kfree(r);
}

static struct cider_shard *cider_kvs_shard(struct cider_kvs *kvs, u64 key)
{
	return kvs->shards[jhash_2words((u32)key, (u32)(key >> 32), 0) % kvs->nr_shards];
}

/* A free slot, claimed; NULL when there is none. */
static struct cider_kslot *cider_shard_claim(struct cider_shard *sh)
{
	unsigned int i;

	lockdep_assert_held(&sh->lock);
	for (i = 0; i < CIDER_KVS_SLOTS; i++) {
		struct cider_kslot *ks = &sh->slots[i];

		/* A crashed client is lost to the shard (kvstore.h). */
		if (!ks->req && !sh->clients[i].dead && !ks->inflight)
			return ks;
	}
	return NULL;
}

/* With the lock held: 1 started, 0 no slot, -errno store dead. */
static const u8 cider_kvs_core_op[] = {
	[CIDER_KV_GET] = CIDER_SEARCH,
	[CIDER_KV_PUT] = CIDER_UPDATE,
	[CIDER_KV_INSERT] = CIDER_INSERT,
	[CIDER_KV_UPDATE] = CIDER_UPDATE,
	[CIDER_KV_DELETE] = CIDER_DELETE,
};

static int cider_shard_try_start(struct cider_shard *sh, struct cider_kv_req *r)
{
	struct cider_kslot *ks;

	lockdep_assert_held(&sh->lock);
	if (cider_shard_dead(sh))
		return cider_shard_dead(sh);
	ks = cider_shard_claim(sh);
	if (!ks)
		return 0;
	ks->req = r;
	ks->attempts = 0;
	sh->busy++;
	refcount_inc(&r->ref);		/* the store's */
	cider_kslot_start(sh, ks, cider_kvs_core_op[r->op]);
	return 1;
}

static int cider_shard_start(struct cider_shard *sh, struct cider_kv_req *r)
{
	int ret;

	spin_lock_bh(&sh->lock);
	ret = cider_shard_try_start(sh, r);
	if (ret)
		cider_shard_flush(sh);
	else
		spin_unlock_bh(&sh->lock);
	return ret;
}

int cider_kvs_submit(struct cider_mn *mn, struct cider_kv_req *r, bool nowait)
{
	struct cider_shard *sh;
	long left;
	int ret;

	if (!mn->kvs)
		return -ENOTCONN;
	sh = cider_kvs_shard(mn->kvs, r->key);
	ret = cider_shard_start(sh, r);
	if (ret || nowait)
		return ret < 0 ? ret : ret ? 0 : -EAGAIN;
	left = wait_event_killable_timeout(sh->slot_wait,
					   (ret = cider_shard_start(sh, r)) != 0,
					   msecs_to_jiffies(READ_ONCE(cider_op_timeout_ms)));
	if (left < 0)
		return -EINTR;
	if (!left)
		return -EAGAIN;
	return ret < 0 ? ret : 0;
}

/* ---- what an operator can see ---- */

static void cider_shard_show(struct seq_file *m, struct cider_shard *sh)
{
	unsigned int s;

	spin_lock_bh(&sh->lock);
	seq_printf(m, "shard %u cn %u busy %u dead %d\n", sh->index, sh->cn.id, sh->busy,
		   cider_shard_dead(sh));
	for (s = 0; s < CIDER_KVS_SLOTS; s++) {
		const struct cider_client *c = &sh->clients[s];
		const struct cider_kslot *ks = &sh->slots[s];

		if (!ks->req)
			continue;
		seq_printf(m, "  slot %u op %u key %llu: %s > %s > %s%s%s\n", s, ks->req->op,
			   ks->req->key, cider_client_state_name(c),
			   cider_client_sub_state_name(c), cider_client_leaf_state_name(c),
			   c->parked ? ", parked" : "", ks->inflight ? ", verbs out" : "");
	}
	for (s = 0; s < CIDER_QNODES_PER_CN; s++) {
		const struct cider_qnode *q = &sh->cn.q[s];

		if (q->id)
			seq_printf(m, "  qnode %#llx key %llu lock %#llx %s\n", q->id, q->key,
				   q->laddr, cider_qstate_name(q->state));
	}
	spin_unlock_bh(&sh->lock);
}

/* debugfs: every operation under way and every queue node, by state. */
void cider_kvs_show(struct seq_file *m, struct cider_mn *mn)
{
	struct cider_kvs *kvs = mn->kvs;
	unsigned int i;

	if (!kvs) {
		seq_puts(m, "no KV store served on this node\n");
		return;
	}
	seq_printf(m, "store dead=%d shards=%u msgs_lost=%lld\n", atomic_read(&kvs->dead),
		   kvs->nr_shards, (long long)atomic64_read(&kvs->msgs_lost));
	for (i = 0; i < kvs->nr_shards; i++)
		cider_shard_show(m, kvs->shards[i]);
}

/* ---- life of a store ---- */

static void cider_shard_init(struct cider_kvs *kvs, struct cider_shard *sh, unsigned int i)
{
	struct cider_mn *mn = kvs->mn;
	unsigned int s;

	spin_lock_init(&sh->lock);
	sh->kvs = kvs;
	sh->index = i;
	sh->ch = &mn->chans[i % mn->nr_chans];
	INIT_LIST_HEAD(&sh->runq);
	INIT_LIST_HEAD(&sh->mail);
	INIT_LIST_HEAD(&sh->posts);
	INIT_LIST_HEAD(&sh->finished);
	init_waitqueue_head(&sh->slot_wait);
	sh->fab.ops = &cider_kvs_fabric_ops;
	sh->fab.priv = sh;
	for (s = 0; s < CIDER_KVS_SLOTS; s++) {
		struct cider_kslot *ks = &sh->slots[s];

		ks->sh = sh;
		INIT_LIST_HEAD(&ks->run);
		hrtimer_init(&ks->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
		ks->timer.function = cider_kslot_timer;
	}
	/* Each shard is a CN of its own to the protocol: ids 16 per CN. */
	cider_cn_init(&sh->cn, mn->cn_id * CIDER_KVS_MAX_SHARDS + i, &kvs->cfg, &sh->fab,
		      sh->clients, sh->lwc, CIDER_KVS_SLOTS, sh->ring, CIDER_KVS_RING);
}

int cider_kvs_create(struct cider_mn *mn)
{
	unsigned int i, n = min_t(unsigned int, mn->nr_chans, CIDER_KVS_MAX_SHARDS);
	struct cider_kvs *kvs;

	/* KV operations on it then fail with -EOPNOTSUPP; raw ones work. */
	if (mn->sb.index != CIDER_SB_INDEX_ARRAY)
		return 0;
	kvs = kzalloc(struct_size(kvs, shards, n), GFP_KERNEL);
	if (!kvs)
		return -ENOMEM;
	kvs->mn = mn;
	kvs->nr_shards = n;
	cider_kvs_cfg(&kvs->cfg, &mn->sb);
	for (i = 0; i < n; i++) {
		kvs->shards[i] = kvzalloc(sizeof(*kvs->shards[i]), GFP_KERNEL);
		if (!kvs->shards[i]) {
			mn->kvs = kvs;
			cider_kvs_free(mn);
			return -ENOMEM;
		}
		cider_shard_init(kvs, kvs->shards[i], i);
	}
	mn->kvs = kvs;
	return 0;
}

/* Operations parked on a timer or a message will not be resumed: end them. */
static void cider_shard_kill(struct cider_shard *sh, int reason)
{
	unsigned int s;

	spin_lock_bh(&sh->lock);
	if (!sh->dead)
		sh->dead = reason;
	for (s = 0; s < CIDER_KVS_SLOTS; s++) {
		struct cider_kslot *ks = &sh->slots[s];

		/* One with a batch out ends when the data path finishes it. */
		if (ks->req && !ks->inflight)
			cider_kslot_fail(sh, ks, reason);
	}
	cider_shard_flush(sh);
}

/*
 * The node is lost or being detached: every operation ends, with
 * -ENOTCONN or -ECOMM, and no new one starts.  Process context.
 */
void cider_kvs_kill(struct cider_mn *mn, int reason)
{
	struct cider_kvs *kvs = mn->kvs;
	unsigned int i, s;

	if (!kvs)
		return;
	atomic_cmpxchg(&kvs->dead, 0, reason);
	for (i = 0; i < kvs->nr_shards && kvs->shards[i]; i++) {
		cider_shard_kill(kvs->shards[i], reason);
		for (s = 0; s < CIDER_KVS_SLOTS; s++)
			hrtimer_cancel(&kvs->shards[i]->slots[s].timer);
		wake_up_all(&kvs->shards[i]->slot_wait);
	}
}

/*
 * The node's last reference is gone: nobody can submit, and the kill
 * (at teardown) stopped every timer.  Any context.
 */
void cider_kvs_free(struct cider_mn *mn)
{
	struct cider_kvs *kvs = mn->kvs;
	struct cider_kmsg *km, *t;
	unsigned int i;

	if (!kvs)
		return;
	for (i = 0; i < kvs->nr_shards && kvs->shards[i]; i++) {
		list_for_each_entry_safe(km, t, &kvs->shards[i]->mail, node)
			kfree(km);
		kvfree(kvs->shards[i]);
	}
	kfree(kvs);
	mn->kvs = NULL;
}
