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
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "core/client.h"
#include "core/localwc.h"
#include "core/race.h"
#include "core/store.h"
#include "cider_trace.h"
#include "fault.h"
#include "kvstore.h"
#include "mn.h"
#include "params.h"

#define CIDER_KVS_MAX_SHARDS	16	/* qnode ids: 12 bits of CN = 256 x 16 */
#define CIDER_KVS_SLOTS		32	/* core clients per shard (local WC: <= 64) */
/*
 * Hash store: a running slot holds a block buffer of the store's largest
 * block (128 KiB for 64 KiB values), DMA-mapped for the store's life.  A
 * shard runs only as many slots as fit this budget, at least
 * CIDER_KVS_MIN_SLOTS: 8 for 64 KiB values, all 32 up to 32 KiB blocks.
 */
#define CIDER_KVS_BLOCK_BUDGET	SZ_1M
#define CIDER_KVS_MIN_SLOTS	4
#define CIDER_KVS_RING		1024	/* freed blocks waiting out the grace period, per class */
/*
 * A slot's batch buffer: the core's verbs copy at most one coordinator's
 * lock record and, for the others, their own words (cider_kvs_verbs_fit()
 * checks every batch against it).
 */
#define CIDER_KVS_BATCH_ROOM	(sizeof_field(struct cider_client, lq_ring) + \
				 (CIDER_MAX_VERBS - 1) * sizeof_field(struct cider_verb, data))
/*
 * Messages between the shard's own queue nodes wait here for the end of
 * the core step that sent them: at most one to each queue node.
 */
#define CIDER_KVS_MAIL		CIDER_QNODES_PER_CN
#define CIDER_KVS_PICK_BYTES	64	/* of a key, hashed to choose its shard */

struct cider_shard;

/* A slot's life; the shard's lock guards it. */
enum cider_kslot_state {
	CIDER_KSLOT_FREE,
	CIDER_KSLOT_FILLING,	/* claimed: its submitter copies the bytes in */
	CIDER_KSLOT_RUNNING,	/* the core runs the operation */
	CIDER_KSLOT_DONE,	/* ended: the result waits for its submitter */
};

/* The kernel's side of one core client, and the operation's bytes. */
struct cider_kslot {
	struct cider_shard *sh;
	struct cider_kv_req *req;	/* from FILLING to the request's last put */
	u8 state;			/* enum cider_kslot_state */
	struct hrtimer timer;		/* the core's, and the no-memory retry */
	u32 token;
	struct hrtimer deadline;	/* the operation's bound: cider_kvs_bound_ns() */
	u64 ends_at;			/* ns: when it is reached */
	bool expired;			/* the bound ended the operation */
	u64 died_at;			/* ns: its client died (revived a lease later) */
	struct cider_verb *v;		/* the verbs the core posted */
	unsigned int nv;
	struct cider_batch *b;		/* the slot's own, mapped once: carries them */
	bool inflight;			/* that batch is with the data path */
	bool queued;			/* on the shard's run queue */
	u8 restart;			/* PUT: the core operation to run next */
	u8 attempts;			/* PUT: core operations run so far */
	struct list_head run;
	u8 *key;			/* the key, copied in once */
	u8 *val;			/* the value in, or a GET's value out */
	u32 val_cap;			/* bytes at val: grown by the slot's filler */
	void *blk;			/* hash: the core's block buffer (c->buf), */
	dma_addr_t blk_dma;		/* mapped on the shard's channel's device */
};

/*
 * What a shard's operations cost and how they ended (under its lock; the
 * debugfs file adds them up): the figures cider-sim reports, from the
 * verbs the NIC was asked to post.
 */
enum {
	CIDER_KVS_OK, CIDER_KVS_NOTFOUND, CIDER_KVS_EXISTS, CIDER_KVS_NOSPC, CIDER_KVS_UNKNOWN,
	CIDER_KVS_FAILED, CIDER_KVS_NR_RES
};

struct cider_kvs_stats {
	u64 ops[CIDER_KV_DELETE + 1][CIDER_KVS_NR_RES];	/* by CIDER_KV_* and result */
	u64 verbs[4];			/* by CIDER_V_* */
	u64 updates;			/* core UPDATEs ended (PUT runs as one) */
	u64 pessimistic;		/* of which went the locked way */
	u64 combined;			/* acknowledged, covered by another's write */
	u64 installers;			/* writes that covered others */
	u32 wc_seen[64];		/* recent installers (opid + 1), by opid */
	u64 expired;			/* operations ended by their bound */
	u64 revived;			/* dead clients given back to the shard */
};

struct cider_shard {
	spinlock_t lock;		/* taken with _bh; everything below */
	struct cider_kvs *kvs;
	unsigned int index;
	struct cider_channel *ch;
	struct ib_device *dma_dev;	/* the blocks' mapping, until unmapped */
	int dead;			/* -errno once the store died */
	unsigned int busy;		/* slots not free */
	u32 opid;
	struct list_head runq;		/* kslots to resume */
	struct cider_msg mail[CIDER_KVS_MAIL];	/* to its own agent, a ring: */
	unsigned int mail_head, mail_len;	/* delivered after the sender returns */
	struct list_head posts;		/* batches to submit after the unlock */
	struct list_head finished;	/* requests to complete after the unlock */
	struct cider_kvs_stats stats;
	wait_queue_head_t slot_wait;
	struct cider_fabric fab;
	struct cider_client clients[CIDER_KVS_SLOTS];
	struct cider_kslot slots[CIDER_KVS_SLOTS];
	struct cider_lwc lwc[CIDER_KVS_SLOTS];
	struct cider_slab_ent *ring;	/* CIDER_KVS_RING per size class */
	struct cider_cn cn;
};

struct cider_kvs {
	struct cider_mn *mn;
	struct cider_cfg cfg;
	atomic_t dead;			/* -errno once the store died */
	unsigned int nr_shards;
	u32 key_max, val_max;		/* the store's limits: the slots' buffers */
	u32 blk_len;			/* hash: the largest block; array: 0 */
	unsigned int nr_slots;		/* slots a shard runs (the block budget) */
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
	cfg->block_size = cfg->index == CIDER_INDEX_HASH ? CIDER_SLOT_UNIT : CIDER_BLOCK_SIZE;
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

static unsigned int cider_kvs_res(int result)
{
	switch (result) {
	case 0: return CIDER_KVS_OK;
	case -ENOENT: return CIDER_KVS_NOTFOUND;
	case -EEXIST: return CIDER_KVS_EXISTS;
	case -ENOSPC: return CIDER_KVS_NOSPC;
	case -ECOMM: return CIDER_KVS_UNKNOWN;
	default: return CIDER_KVS_FAILED;
	}
}

static struct cider_client *cider_kslot_client(struct cider_kslot *ks)
{
	return &ks->sh->clients[ks - ks->sh->slots];
}

/* The operation ended: its result waits in the slot for its submitter. */
static void cider_kvs_req_finish(struct cider_shard *sh, struct cider_kslot *ks, int result)
{
	struct cider_kv_req *r = ks->req;

	sh->stats.ops[r->op][cider_kvs_res(result)]++;
	r->result = result;
	ks->state = CIDER_KSLOT_DONE;
	ks->restart = 0;
	/* Not waited for: this may be the deadline's own callback. */
	hrtimer_try_to_cancel(&ks->deadline);
	if (cider_kslot_client(ks)->dead && !ks->died_at)
		ks->died_at = ktime_get_ns();
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

	cider_shard_run(sh);
	list_splice_init(&sh->posts, &posts);
	list_splice_init(&sh->finished, &done);
	spin_unlock_bh(&sh->lock);

	list_for_each_entry_safe(b, bt, &posts, node) {
		list_del_init(&b->node);
		/* A refused submit finishes the batch with its error. */
		cider_mn_submit(sh->kvs->mn, sh->ch, b);
		cider_batch_put(b);
	}
	list_for_each_entry(r, &done, node)
		r->complete(r);
	/* Last: the final reference to a request may be the node's last. */
	list_for_each_entry_safe(r, rt, &done, node) {
		list_del_init(&r->node);
		cider_kv_req_put(r);
	}
}

/* Run core operation @op on the slot's bytes. */
static void cider_kslot_start(struct cider_shard *sh, struct cider_kslot *ks, u8 op)
{
	struct cider_kv_req *r = ks->req;
	struct cider_kv_args a = {
		.op = op, .key = ks->key, .key_len = r->key_len, .value = ks->val,
		.value_len = r->val_len, .out = ks->val, .out_len = r->val_len,
		.opid = sh->opid++,
	};

	ks->restart = 0;
	ks->attempts++;
	cider_client_start(cider_kslot_client(ks), &a);
}

/* Resume woken clients and deliver messages until nothing is left. */
static void cider_shard_run(struct cider_shard *sh)
{
	struct cider_kslot *ks;
	struct cider_msg m;

	lockdep_assert_held(&sh->lock);
	for (;;) {
		ks = list_first_entry_or_null(&sh->runq, struct cider_kslot, run);
		if (ks) {
			struct cider_client *c = &sh->clients[ks - sh->slots];

			list_del_init(&ks->run);
			ks->queued = false;
			/* A dead client never runs again: its operation would hang. */
			if (ks->restart && WARN_ON_ONCE(c->dead))
				cider_kvs_req_finish(sh, ks, -ENOTCONN);
			else if (ks->restart)
				cider_kslot_start(sh, ks, ks->restart);
			else if (!c->parked)
				cider_client_resume(c);
			continue;
		}
		if (!sh->mail_len)
			return;
		m = sh->mail[sh->mail_head];
		sh->mail_head = (sh->mail_head + 1) % CIDER_KVS_MAIL;
		sh->mail_len--;
		cider_cn_on_msg(&sh->cn, &m);
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
	cider_batch_ext(b, i, ks->blk_dma);
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

static void cider_kvs_wake(void *fab, struct cider_client *c);

/* Build the slot's batch and queue it for the unlock. */
static void cider_kslot_post(struct cider_shard *sh, struct cider_kslot *ks)
{
	struct cider_batch *b = cider_kvs_batch(ks, ks->v, ks->nv);

	ks->inflight = true;
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
		cider_kvs_wake(sh, c);
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
		 * A key maps to one shard on every CN, so only another CN's
		 * queue node is addressed here: CN-to-CN links come with
		 * several compute nodes.  The lease recovers the lock.
		 */
		atomic64_inc(&sh->kvs->msgs_lost);
		pr_warn_ratelimited("store of mn%u: message to cn %u lost: no CN-to-CN links yet\n",
				    sh->kvs->mn->id, to_cn);
		return;
	}
	if (WARN_ON_ONCE(sh->mail_len == CIDER_KVS_MAIL)) {
		atomic64_inc(&sh->kvs->msgs_lost);	/* the lease recovers */
		return;
	}
	sh->mail[(sh->mail_head + sh->mail_len++) % CIDER_KVS_MAIL] = *m;
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

static const int cider_kvs_errno[CIDER_RES_NR] = {
	[CIDER_RES_OK] = 0,
	[CIDER_RES_NOTFOUND] = -ENOENT,
	[CIDER_RES_EXISTS] = -EEXIST,
	[CIDER_RES_NOSPC] = -ENOSPC,
	[CIDER_RES_UNKNOWN] = -ECOMM,
	[CIDER_RES_FAILED] = -ENOTCONN,
	[CIDER_RES_INVALID] = -EINVAL,
};

/*
 * An UPDATE ended: was it locked, and was its write covered by another's
 * (local or queue write combining)?  Installers are told apart by opid
 * among the shard's recent ones: a batch's members end with its writer.
 */
static void cider_kvs_count_update(struct cider_shard *sh, const struct cider_client *c)
{
	struct cider_kvs_stats *st = &sh->stats;
	u32 *seen = &st->wc_seen[c->writer % ARRAY_SIZE(st->wc_seen)];

	if (c->op != CIDER_UPDATE)
		return;
	st->updates++;
	st->pessimistic += c->pess;
	if (c->res != CIDER_RES_OK || c->writer == c->opid)
		return;
	st->combined++;
	if (*seen != c->writer + 1) {
		*seen = c->writer + 1;
		st->installers++;
	}
}

static void cider_kvs_done(void *fab, struct cider_client *c)
{
	struct cider_shard *sh = fab;
	struct cider_kslot *ks = cider_kslot_of(sh, c);
	int ret;

	if (WARN_ON_ONCE(ks->state != CIDER_KSLOT_RUNNING))
		return;
	cider_kvs_count_update(sh, c);
	/*
	 * PUT is UPDATE, or INSERT when the key is absent; a concurrent
	 * INSERT or DELETE in between sends it back (a few times at most).
	 * An attempt aborted after its outcome was settled (the store died
	 * while it released a lock) wrote nothing, nor did the ones before
	 * it; its client is dead and would never run the next one.
	 */
	if (ks->req->op == CIDER_KV_PUT &&
	    (c->res == CIDER_RES_NOTFOUND || c->res == CIDER_RES_EXISTS)) {
		if (c->dead) {
			cider_kvs_req_finish(sh, ks, ks->expired ? -ETIMEDOUT : -ENOTCONN);
			return;
		}
		if (ks->attempts < 4) {
			ks->restart = c->res == CIDER_RES_NOTFOUND ? CIDER_INSERT : CIDER_UPDATE;
			cider_kvs_wake(fab, c);
			return;
		}
	}
	ks->req->got_len = c->got_len;
	/* Nothing it did took effect: say why it did not happen. */
	if (c->res == CIDER_RES_FAILED && ks->expired)
		ret = -ETIMEDOUT;
	else
		ret = c->res < CIDER_RES_NR ? cider_kvs_errno[c->res] : -EIO;
	cider_kvs_req_finish(sh, ks, ret);
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

/* The store dies with its first failure: the node is lost or refused us. */
static void cider_kvs_die(struct cider_kvs *kvs, int status)
{
	if (atomic_cmpxchg(&kvs->dead, 0, status) == 0)
		cider_mn_lost(kvs->mn, status);
}

/*
 * An operation that will not be resumed ends: the core says whether it
 * may have taken effect.  A PUT between its attempts wrote nothing.
 */
static void cider_kslot_abort(struct cider_shard *sh, struct cider_kslot *ks)
{
	if (ks->state != CIDER_KSLOT_RUNNING || ks->inflight)
		return;
	if (ks->restart)
		cider_kvs_req_finish(sh, ks, -ENOTCONN);
	else
		cider_client_abort(cider_kslot_client(ks));
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
		if (v->op == CIDER_V_READ && cider_verb_ext(ks, v))
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
	ks->inflight = false;
	if (ks->state != CIDER_KSLOT_RUNNING)
		goto out;
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

static enum hrtimer_restart cider_kslot_timer(struct hrtimer *t)
{
	struct cider_kslot *ks = container_of(t, struct cider_kslot, timer);
	struct cider_shard *sh = ks->sh;

	spin_lock_bh(&sh->lock);
	if (!cider_shard_dead(sh) && ks->state == CIDER_KSLOT_RUNNING)
		cider_client_timer(cider_kslot_client(ks), ks->token);
	cider_shard_flush(sh);
	return HRTIMER_NORESTART;
}

/*
 * The bound of every KV operation, from the moment it starts to run: two
 * verb timeouts (a batch overdue for op_timeout_ms declares the node lost,
 * whose kill ends the operation; twice leaves room for the watchdog's
 * period and the kill's drain) and ten leases (a lock wait ends by
 * handover, by the holder's release or, when the holder is dead, by the
 * lease; the simulator's bound for the protocol under contention).
 * Documentation/kv.rst states it.
 */
static u64 cider_kvs_bound_ns(const struct cider_kvs *kvs)
{
	return 2ULL * READ_ONCE(cider_op_timeout_ms) * NSEC_PER_MSEC + 10 * kvs->cfg.lease_ns;
}

u64 cider_kvs_bound_ms(struct cider_mn *mn)
{
	return mn->kvs ? div_u64(cider_kvs_bound_ns(mn->kvs), NSEC_PER_MSEC) : 0;
}

/*
 * An operation past its bound is a bug somewhere (a lost completion, wake
 * or message; a wait the protocol failed to bound): it ends now, with
 * -ETIMEDOUT if nothing it did can have taken effect, else -ECOMM, and
 * the log says where its machine stood.  Its client dies; the shard gets
 * it back a lease later (cider_kslot_revive()).
 */
static void cider_kslot_expire(struct cider_shard *sh, struct cider_kslot *ks)
{
	struct cider_client *c = cider_kslot_client(ks);

	sh->stats.expired++;
	pr_warn_ratelimited("mn%u shard %u slot %u: KV op %u past its bound of %llu ms, ended: %s > %s > %s%s%s%s%s\n",
			    sh->kvs->mn->id, sh->index, (unsigned int)(ks - sh->slots),
			    ks->req->op, div_u64(cider_kvs_bound_ns(sh->kvs), NSEC_PER_MSEC),
			    cider_client_state_name(c), cider_client_sub_state_name(c),
			    cider_client_leaf_state_name(c), c->parked ? ", parked" : "",
			    ks->inflight ? ", verbs out" : "",
			    ks->restart ? ", between attempts" : "",
			    c->dead ? ", client dead" : "");
	ks->expired = true;
	/* Between a PUT's attempts, or a client that lost its operation. */
	if (ks->restart || !c->busy || c->dead)
		cider_kvs_req_finish(sh, ks, -ETIMEDOUT);
	else
		cider_client_abort(c);	/* ->done ends the request */
}

static enum hrtimer_restart cider_kslot_deadline(struct hrtimer *t)
{
	struct cider_kslot *ks = container_of(t, struct cider_kslot, deadline);
	struct cider_shard *sh = ks->sh;

	spin_lock_bh(&sh->lock);
	/* Not a later operation of the slot: a stale callback sees its bound ahead. */
	if (ks->state == CIDER_KSLOT_RUNNING && ktime_get_ns() >= ks->ends_at)
		cider_kslot_expire(sh, ks);
	cider_shard_flush(sh);
	return HRTIMER_NORESTART;
}

/* ---- requests ---- */

/* The request's last reference: its slot is free again. */
static void cider_kslot_release(struct cider_kslot *ks)
{
	struct cider_shard *sh = ks->sh;

	spin_lock_bh(&sh->lock);
	ks->state = CIDER_KSLOT_FREE;
	ks->req = NULL;
	sh->busy--;
	spin_unlock_bh(&sh->lock);
	wake_up(&sh->slot_wait);
}

/* Every KV request alive; taken with _bh (the last put may be in softirq). */
static LIST_HEAD(cider_kv_reqs);
static DEFINE_SPINLOCK(cider_kv_reqs_lock);

void cider_kv_req_track(struct cider_kv_req *r)
{
	r->born = ktime_get_ns();
	spin_lock_bh(&cider_kv_reqs_lock);
	list_add_tail(&r->live, &cider_kv_reqs);
	spin_unlock_bh(&cider_kv_reqs_lock);
}

void cider_kv_req_put(struct cider_kv_req *r)
{
	if (!refcount_dec_and_test(&r->ref))
		return;
	spin_lock_bh(&cider_kv_reqs_lock);
	list_del(&r->live);
	spin_unlock_bh(&cider_kv_reqs_lock);
	if (r->ks)
		cider_kslot_release(r->ks);
	if (r->mn)
		cider_mn_put(r->mn);
	kfree(r);
}

int cider_kv_req_copy_value(struct cider_kv_req *r)
{
	if (WARN_ON_ONCE(!r->ks || r->got_len > r->val_len))
		return -EIO;
	return copy_to_user(r->uval, r->ks->val, r->got_len) ? -EFAULT : 0;
}

/*
 * The key's shard, from a hash of its first bytes and its length (a
 * shard is a CN of its own, so a key that changes under us stays
 * correct: kvstore.h).
 */
static int cider_kvs_pick(struct cider_kvs *kvs, struct cider_kv_req *r,
			  struct cider_shard **shp)
{
	u8 head[CIDER_KVS_PICK_BYTES];
	u32 n = min_t(u32, r->key_len, sizeof(head));

	if (copy_from_user(head, r->ukey, n))
		return -EFAULT;
	*shp = kvs->shards[jhash(head, n, r->key_len) % kvs->nr_shards];
	return 0;
}

/*
 * A free slot whose client died (its operation failed or was ended by its
 * bound): its client comes back as a new incarnation once nothing of the
 * old one can act, no verb out (the caller checked) and a lease since it
 * died, so that the shard keeps its capacity.
 */
static bool cider_kslot_revive(struct cider_shard *sh, struct cider_kslot *ks)
{
	struct cider_client *c = cider_kslot_client(ks);
	u64 now = ktime_get_ns();

	if (!ks->died_at)
		ks->died_at = now;	/* never seen dead before: from now */
	if (now - ks->died_at < sh->kvs->cfg.lease_ns || !cider_client_revive(c))
		return false;
	ks->died_at = 0;
	sh->stats.revived++;
	return true;
}

/* A free slot, claimed for @r (FILLING): 1, 0 none free, -ENOTCONN store dead. */
static int cider_shard_claim(struct cider_shard *sh, struct cider_kv_req *r)
{
	int dead = 0;
	unsigned int i;

	spin_lock_bh(&sh->lock);
	dead = cider_shard_dead(sh);
	for (i = 0; !dead && i < sh->kvs->nr_slots; i++) {
		struct cider_kslot *ks = &sh->slots[i];

		if (ks->state != CIDER_KSLOT_FREE || ks->inflight)
			continue;
		if (sh->clients[i].dead && !cider_kslot_revive(sh, ks))
			continue;
		ks->state = CIDER_KSLOT_FILLING;
		ks->req = r;
		ks->attempts = 0;
		r->ks = ks;
		sh->busy++;
		break;
	}
	spin_unlock_bh(&sh->lock);
	/*
	 * Whatever killed the store (-ENODEV, -ETIMEDOUT, -EIO, ...; MN_INFO
	 * reports it), an operation that does not start is -ENOTCONN to user
	 * space: the uapi's one errno for "it did not happen".
	 */
	return dead ? -ENOTCONN : r->ks ? 1 : 0;
}

/*
 * Wait (bounded, killable) for a slot unless @nowait: 0 or -errno.  A
 * freed slot wakes the waiters; a dead client becomes usable a lease
 * after it died with nobody to say so, hence a look every lease.
 */
static int cider_shard_claim_wait(struct cider_shard *sh, struct cider_kv_req *r, bool nowait)
{
	unsigned long end = jiffies + msecs_to_jiffies(READ_ONCE(cider_op_timeout_ms));
	long slice = max_t(long, 1, nsecs_to_jiffies(sh->kvs->cfg.lease_ns));
	int ret = cider_shard_claim(sh, r);

	if (ret || nowait)
		return ret < 0 ? ret : ret ? 0 : -EAGAIN;
	while (!ret) {
		long left = (long)(end - jiffies);

		if (left <= 0)
			return -EAGAIN;
		left = wait_event_killable_timeout(sh->slot_wait,
						   (ret = cider_shard_claim(sh, r)) != 0,
						   min(left, slice));
		if (left < 0)
			return -EINTR;
	}
	return ret < 0 ? ret : 0;
}

/*
 * Room for @r's value in its claimed slot (FILLING: nobody else, not even
 * a local write-combining batch, can reach the old buffer).  It only
 * grows, by powers of two from 64 bytes up to the store's limit, so a slot
 * reallocates at most about a dozen times in its life.
 */
static int cider_kslot_val_room(struct cider_kslot *ks, const struct cider_kv_req *r)
{
	/* At least 8: the array store's values (val_max >= 8 >= val_len). */
	u32 want = max_t(u32, r->val_len, 8), need;
	void *v;

	if (want <= ks->val_cap)
		return 0;
	need = min_t(u32, roundup_pow_of_two(max_t(u32, want, 64)), ks->sh->kvs->val_max);
	v = kvmalloc(need, GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	kvfree(ks->val);
	ks->val = v;
	WRITE_ONCE(ks->val_cap, need);	/* debugfs reads it under the lock */
	return 0;
}

/* The bytes, once, into the claimed slot (process context, may fault). */
static int cider_kslot_fill(struct cider_kslot *ks, struct cider_kv_req *r)
{
	int ret = cider_kslot_val_room(ks, r);

	if (ret)
		return ret;
	if (copy_from_user(ks->key, r->ukey, r->key_len))
		return -EFAULT;
	if (r->op != CIDER_KV_GET && r->val_len &&
	    copy_from_user(ks->val, r->uval, r->val_len))
		return -EFAULT;
	return 0;
}

static const u8 cider_kvs_core_op[] = {
	[CIDER_KV_GET] = CIDER_SEARCH,
	[CIDER_KV_PUT] = CIDER_UPDATE,
	[CIDER_KV_INSERT] = CIDER_INSERT,
	[CIDER_KV_UPDATE] = CIDER_UPDATE,
	[CIDER_KV_DELETE] = CIDER_DELETE,
};

/* Filled: run it, unless the copy failed or the store died meanwhile. */
static int cider_kslot_run(struct cider_kslot *ks, struct cider_kv_req *r, int filled)
{
	struct cider_shard *sh = ks->sh;
	int ret;

	spin_lock_bh(&sh->lock);
	ret = filled ?: cider_shard_dead(sh) ? -ENOTCONN : 0;
	if (ret) {
		spin_unlock_bh(&sh->lock);
		return ret;		/* the slot goes with the request */
	}
	ks->state = CIDER_KSLOT_RUNNING;
	refcount_inc(&r->ref);		/* the store's, until it completes */
	ks->expired = false;
	ks->ends_at = ktime_get_ns() + cider_kvs_bound_ns(sh->kvs);
	hrtimer_start(&ks->deadline, ns_to_ktime(ks->ends_at), HRTIMER_MODE_ABS_SOFT);
	cider_kslot_start(sh, ks, cider_kvs_core_op[r->op]);
	cider_shard_flush(sh);
	return 0;
}

int cider_kvs_submit(struct cider_mn *mn, struct cider_kv_req *r, bool nowait)
{
	struct cider_shard *sh;
	int ret;

	if (!mn->kvs)
		return -ENOTCONN;
	if (r->key_len > mn->kvs->key_max || r->val_len > mn->kvs->val_max)
		return -EINVAL;		/* kv.c checked: never */
	ret = cider_kvs_pick(mn->kvs, r, &sh);
	if (!ret)
		ret = cider_shard_claim_wait(sh, r, nowait);
	if (ret)
		return ret;
	return cider_kslot_run(r->ks, r, cider_kslot_fill(r->ks, r));
}

/* ---- what an operator can see ---- */

static const char *const cider_kslot_state_names[] = {
	[CIDER_KSLOT_FREE] = "free",
	[CIDER_KSLOT_FILLING] = "filling",
	[CIDER_KSLOT_RUNNING] = "running",
	[CIDER_KSLOT_DONE] = "done",
};

static void cider_shard_show(struct seq_file *m, struct cider_shard *sh)
{
	unsigned long long val_bytes = 0;
	unsigned int s;

	spin_lock_bh(&sh->lock);
	for (s = 0; s < CIDER_KVS_SLOTS; s++)
		val_bytes += READ_ONCE(sh->slots[s].val_cap);
	seq_printf(m, "shard %u cn %u busy %u dead %d slots %u value_bytes %llu block_bytes %llu\n",
		   sh->index, sh->cn.id, sh->busy, cider_shard_dead(sh), sh->kvs->nr_slots,
		   val_bytes, (unsigned long long)sh->kvs->nr_slots * sh->kvs->blk_len);
	for (s = 0; s < CIDER_KVS_SLOTS; s++) {
		const struct cider_client *c = &sh->clients[s];
		const struct cider_kslot *ks = &sh->slots[s];

		if (ks->state == CIDER_KSLOT_FREE)
			continue;
		seq_printf(m, "  slot %u %s op %u key %u bytes id %#llx: %s > %s > %s%s%s%s\n", s,
			   cider_kslot_state_names[ks->state], ks->req->op, ks->req->key_len,
			   c->key, cider_client_state_name(c), cider_client_sub_state_name(c),
			   cider_client_leaf_state_name(c), c->parked ? ", parked" : "",
			   ks->inflight ? ", verbs out" : "", c->dead ? ", client dead" : "");
	}
	for (s = 0; s < CIDER_QNODES_PER_CN; s++) {
		const struct cider_qnode *q = &sh->cn.q[s];

		if (q->id)
			seq_printf(m, "  qnode %#llx key %#llx lock %#llx %s\n", q->id, q->key,
				   q->laddr, cider_qstate_name(q->state));
	}
	spin_unlock_bh(&sh->lock);
}

static void cider_kvs_stats_add(struct cider_kvs_stats *t, struct cider_shard *sh,
				struct cider_client_stats *cst)
{
	unsigned int i, j;

	spin_lock_bh(&sh->lock);
	for (i = 0; i <= CIDER_KV_DELETE; i++)
		for (j = 0; j < CIDER_KVS_NR_RES; j++)
			t->ops[i][j] += sh->stats.ops[i][j];
	for (i = 0; i < ARRAY_SIZE(t->verbs); i++)
		t->verbs[i] += sh->stats.verbs[i];
	t->updates += sh->stats.updates;
	t->pessimistic += sh->stats.pessimistic;
	t->combined += sh->stats.combined;
	t->installers += sh->stats.installers;
	t->expired += sh->stats.expired;
	t->revived += sh->stats.revived;
	for (i = 0; i < CIDER_KVS_SLOTS; i++) {
		cst->cas_fail += sh->clients[i].st.cas_fail;
		cst->coords += sh->clients[i].st.coords;
		cst->corrupt += sh->clients[i].st.corrupt;
	}
	spin_unlock_bh(&sh->lock);
}

/*
 * debugfs mnN: one "kv" line of key=value counters since attach, summed
 * over the shards (Documentation/kv.rst lists them).
 */
void cider_kvs_stats_show(struct seq_file *m, struct cider_mn *mn)
{
	static const char *const ops[] = { "", "get", "put", "insert", "update", "delete" };
	static const char *const res[] = { "ok", "notfound", "exists", "nospc", "unknown",
					   "failed" };
	struct cider_kvs_stats *t;
	unsigned int i, j;
	struct cider_client_stats cst = {};

	if (!mn->kvs)
		return;
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return;
	for (i = 0; i < mn->kvs->nr_shards; i++)
		cider_kvs_stats_add(t, mn->kvs->shards[i], &cst);
	seq_puts(m, "kv");
	for (i = CIDER_KV_GET; i <= CIDER_KV_DELETE; i++)
		for (j = 0; j < CIDER_KVS_NR_RES; j++)
			seq_printf(m, " %s_%s=%llu", ops[i], res[j], t->ops[i][j]);
	seq_printf(m, " verbs_read=%llu verbs_write=%llu verbs_cas=%llu verbs_faa=%llu",
		   t->verbs[CIDER_V_READ], t->verbs[CIDER_V_WRITE], t->verbs[CIDER_V_CAS],
		   t->verbs[CIDER_V_FAA]);
	seq_printf(m, " updates=%llu cas_fail=%llu pessimistic=%llu combined=%llu installers=%llu",
		   t->updates, cst.cas_fail, t->pessimistic, t->combined, t->installers);
	seq_printf(m, " coordinated=%llu corrupt_blocks=%llu expired=%llu revived=%llu\n",
		   cst.coords, cst.corrupt, t->expired, t->revived);
	kfree(t);
}

/* One request: its node, and its slot's and machine's state (shard lock). */
static void cider_kv_req_show(struct seq_file *m, struct cider_kv_req *r, u64 now)
{
	struct cider_kslot *ks = r->ks;
	struct cider_shard *sh = ks ? ks->sh : NULL;
	struct cider_client *c;

	seq_printf(m, "req mn%u%s op %u age %llu ms refs %u result %d", r->store,
		   r->mn ? (cider_mn_listed(r->mn) ? "" : " (unlisted)") : " (none)", r->op,
		   div_u64(now - r->born, NSEC_PER_MSEC), refcount_read(&r->ref), r->result);
	if (!sh) {
		seq_puts(m, " no slot\n");
		return;
	}
	c = cider_kslot_client(ks);
	spin_lock_bh(&sh->lock);
	seq_printf(m, " shard %u slot %u %s: %s > %s > %s%s%s%s\n", sh->index,
		   (unsigned int)(ks - sh->slots), cider_kslot_state_names[ks->state],
		   cider_client_state_name(c), cider_client_sub_state_name(c),
		   cider_client_leaf_state_name(c), c->parked ? ", parked" : "",
		   ks->inflight ? ", verbs out" : "", c->dead ? ", client dead" : "");
	spin_unlock_bh(&sh->lock);
}

void cider_kv_reqs_show(struct seq_file *m)
{
	u64 now = ktime_get_ns();
	struct cider_kv_req *r;

	spin_lock_bh(&cider_kv_reqs_lock);
	list_for_each_entry(r, &cider_kv_reqs, live)
		cider_kv_req_show(m, r, now);
	spin_unlock_bh(&cider_kv_reqs_lock);
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

/*
 * A slot's buffers: its batch (the verbs of one core step, with their
 * words) and block buffer are mapped by cider_shard_map(), once.  The
 * value buffer comes with the first operation that needs it
 * (cider_kslot_val_room()): a store formatted for 64 KiB values would
 * otherwise cost 2 MiB per shard before anyone stored a byte.
 */
static int cider_kslot_alloc(struct cider_kvs *kvs, struct cider_kslot *ks)
{
	ks->key = kvmalloc(kvs->key_max, GFP_KERNEL);
	if (!ks->key)
		return -ENOMEM;
	ks->b = cider_batch_alloc(CIDER_MAX_VERBS, CIDER_KVS_BATCH_ROOM, GFP_KERNEL);
	if (!ks->b)
		return -ENOMEM;
	cider_batch_put(ks->b);		/* the slot's reference alone, while idle */
	if (!kvs->blk_len)
		return 0;
	/* DMA-mapped: physically contiguous, not vmalloc. */
	ks->blk = kmalloc(kvs->blk_len, GFP_KERNEL | __GFP_NOWARN);
	return ks->blk ? 0 : -ENOMEM;
}

/* Slot @ks's batch and block buffers, mapped on @dev for the store's life. */
static int cider_kslot_map(struct cider_kslot *ks, struct ib_device *dev)
{
	u32 len = ks->sh->kvs->blk_len;

	if (cider_batch_premap(ks->b, dev))
		return -ENOMEM;
	if (!len)
		return 0;
	ks->blk_dma = ib_dma_map_single(dev, ks->blk, len, DMA_BIDIRECTIONAL);
	if (!ib_dma_mapping_error(dev, ks->blk_dma))
		return 0;
	cider_batch_unpremap(ks->b);
	return -ENOMEM;
}

static void cider_kslot_unmap(struct cider_kslot *ks, struct ib_device *dev)
{
	cider_batch_unpremap(ks->b);
	if (ks->sh->kvs->blk_len)
		ib_dma_unmap_single(dev, ks->blk_dma, ks->sh->kvs->blk_len, DMA_BIDIRECTIONAL);
}

static void cider_shard_unmap(struct cider_shard *sh)
{
	struct ib_device *dev;
	unsigned int s;

	spin_lock_bh(&sh->lock);
	dev = sh->dma_dev;
	sh->dma_dev = NULL;
	spin_unlock_bh(&sh->lock);
	for (s = 0; dev && s < sh->kvs->nr_slots; s++)
		cider_kslot_unmap(&sh->slots[s], dev);
}

/* Every running slot's buffers, mapped once on the shard's channel's device. */
static int cider_shard_map(struct cider_shard *sh)
{
	struct ib_device *dev = sh->ch->dev;
	unsigned int s;

	for (s = 0; s < sh->kvs->nr_slots; s++) {
		if (cider_kslot_map(&sh->slots[s], dev)) {
			while (s--)
				cider_kslot_unmap(&sh->slots[s], dev);
			return -ENOMEM;
		}
	}
	sh->dma_dev = dev;
	return 0;
}

static int cider_shard_init(struct cider_kvs *kvs, struct cider_shard *sh, unsigned int i)
{
	u32 classes = kvs->cfg.index == CIDER_INDEX_HASH ? CIDER_NR_CLASSES : 1;
	struct cider_mn *mn = kvs->mn;
	unsigned int s;
	int ret;

	spin_lock_init(&sh->lock);
	sh->kvs = kvs;
	sh->index = i;
	sh->ch = &mn->chans[i % mn->nr_chans];
	INIT_LIST_HEAD(&sh->runq);
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
		hrtimer_init(&ks->deadline, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
		ks->deadline.function = cider_kslot_deadline;
		/* Slots past the budget never run: no buffers. */
		ret = s < kvs->nr_slots ? cider_kslot_alloc(kvs, ks) : 0;
		if (ret)
			return ret;
	}
	sh->ring = kvcalloc((size_t)CIDER_KVS_RING * classes, sizeof(*sh->ring), GFP_KERNEL);
	if (!sh->ring)
		return -ENOMEM;
	ret = cider_shard_map(sh);
	if (ret)
		return ret;
	/* Each shard is a CN of its own to the protocol: ids 16 per CN. */
	cider_cn_init(&sh->cn, mn->cn_id * CIDER_KVS_MAX_SHARDS + i, &kvs->cfg, &sh->fab,
		      sh->clients, sh->lwc, CIDER_KVS_SLOTS, sh->ring, CIDER_KVS_RING);
	/* After the init, which clears the clients. */
	for (s = 0; s < CIDER_KVS_SLOTS; s++) {
		sh->clients[s].buf = sh->slots[s].blk;
		sh->clients[s].buf_len = sh->slots[s].blk ? kvs->blk_len : 0;
	}
	return 0;
}

/* The store's limits; the hash index's blocks hold the longest key and value. */
static int cider_kvs_limits(struct cider_kvs *kvs, const struct cider_mn_sb *sb)
{
	int cls;

	kvs->key_max = sb->max_key_len;
	kvs->val_max = max_t(u32, sb->max_value_len, 8);
	kvs->nr_slots = CIDER_KVS_SLOTS;
	if (sb->index == CIDER_SB_INDEX_ARRAY)
		return 0;
	cls = cider_block_class(kvs->key_max, kvs->val_max);
	if (cls < 0)
		return -EPROTO;		/* cider_store_check() refuses it first */
	kvs->blk_len = cider_class_size((u32)cls);
	kvs->nr_slots = clamp_t(unsigned int, CIDER_KVS_BLOCK_BUDGET / kvs->blk_len,
				CIDER_KVS_MIN_SLOTS, CIDER_KVS_SLOTS);
	return 0;
}

static void cider_kvs_destroy(struct cider_kvs *kvs);

/*
 * Built whole, then published: the node can be lost while it attaches,
 * and its kill (cider_kvs_kill(), from a work) must find no store or a
 * complete one, never shards whose timers are not set up yet.
 */
int cider_kvs_create(struct cider_mn *mn)
{
	unsigned int i, n = min_t(unsigned int, mn->nr_chans, CIDER_KVS_MAX_SHARDS);
	struct cider_kvs *kvs;
	int ret;

	kvs = kzalloc(struct_size(kvs, shards, n), GFP_KERNEL);
	if (!kvs)
		return -ENOMEM;
	kvs->mn = mn;
	kvs->nr_shards = n;
	cider_kvs_cfg(&kvs->cfg, &mn->sb);
	ret = cider_kvs_limits(kvs, &mn->sb);
	for (i = 0; !ret && i < n; i++) {
		kvs->shards[i] = kvzalloc(sizeof(*kvs->shards[i]), GFP_KERNEL);
		cider_fault_store_delay();
		ret = kvs->shards[i] ? cider_shard_init(kvs, kvs->shards[i], i) : -ENOMEM;
	}
	if (ret) {
		cider_kvs_destroy(kvs);
		return ret;
	}
	/* Pairs with the acquire in kill and unmap: they see it whole. */
	smp_store_release(&mn->kvs, kvs);
	return 0;
}

/* Operations parked on a timer or a message will not be resumed: end them. */
static void cider_shard_kill(struct cider_shard *sh, int reason)
{
	unsigned int s;

	spin_lock_bh(&sh->lock);
	if (!sh->dead)
		sh->dead = reason;
	/* One with a batch out ends when the data path finishes it. */
	for (s = 0; s < CIDER_KVS_SLOTS; s++)
		cider_kslot_abort(sh, &sh->slots[s]);
	cider_shard_flush(sh);
}

/*
 * The node is lost or being detached: every operation ends, with
 * -ENOTCONN or -ECOMM, and no new one starts.  Process context.
 */
void cider_kvs_kill(struct cider_mn *mn, int reason)
{
	/* Pairs with cider_kvs_create()'s release: whole or none. */
	struct cider_kvs *kvs = smp_load_acquire(&mn->kvs);
	unsigned int i, s;

	if (!kvs)
		return;
	atomic_cmpxchg(&kvs->dead, 0, reason);
	for (i = 0; i < kvs->nr_shards && kvs->shards[i]; i++) {
		cider_shard_kill(kvs->shards[i], reason);
		/*
		 * Run from the kill work after the channels drained, or at
		 * teardown once they are gone: every batch came back, so every
		 * operation has ended and no bound is still needed.
		 */
		for (s = 0; s < CIDER_KVS_SLOTS; s++) {
			hrtimer_cancel(&kvs->shards[i]->slots[s].timer);
			hrtimer_cancel(&kvs->shards[i]->slots[s].deadline);
		}
		wake_up_all(&kvs->shards[i]->slot_wait);
	}
}

/*
 * Teardown, after the kill and with the channels destroyed: no verb can
 * touch a slot's block any more.  Idempotent.
 */
static void cider_kvs_unmap_shards(struct cider_kvs *kvs)
{
	unsigned int i;

	for (i = 0; kvs && i < kvs->nr_shards && kvs->shards[i]; i++)
		cider_shard_unmap(kvs->shards[i]);
}

void cider_kvs_unmap(struct cider_mn *mn)
{
	/* Pairs with cider_kvs_create()'s release: whole or none. */
	cider_kvs_unmap_shards(smp_load_acquire(&mn->kvs));
}

static void cider_shard_free(struct cider_shard *sh)
{
	unsigned int s;

	for (s = 0; s < CIDER_KVS_SLOTS; s++) {
		if (sh->slots[s].b)
			cider_batch_put(sh->slots[s].b);
		kvfree(sh->slots[s].key);
		kvfree(sh->slots[s].val);
		kfree(sh->slots[s].blk);
	}
	kvfree(sh->ring);
	kvfree(sh);
}

/* Unmap and free a store: a published one at the end, or a failed create. */
static void cider_kvs_destroy(struct cider_kvs *kvs)
{
	unsigned int i;

	cider_kvs_unmap_shards(kvs);	/* a failed create: the device is still there */
	for (i = 0; i < kvs->nr_shards && kvs->shards[i]; i++)
		cider_shard_free(kvs->shards[i]);
	kfree(kvs);
}

/*
 * The node's last reference is gone: nobody can submit, and the kill
 * (at teardown) stopped every timer.  Any context.
 */
void cider_kvs_free(struct cider_mn *mn)
{
	if (mn->kvs)
		cider_kvs_destroy(mn->kvs);
	mn->kvs = NULL;
}
