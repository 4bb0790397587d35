// SPDX-License-Identifier: GPL-2.0
/*
 * The KV store of one attached memory node (kvstore.h has the concurrency
 * model): its life (built at attach from the superblock, its shards and
 * their slots' buffers, killed, unmapped, freed) and what an operator
 * sees of it.  The slots' machine is in kslot.c, the fabric the core
 * runs on in kvfabric.c, the requests in kvreq.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "core/hashindex.h"
#include "core/store.h"
#include "fault.h"
#include "kvshard.h"
#include "mn.h"
#include "params.h"
#include "stats.h"

/* ---- the store's configuration, from the superblock ---- */

/* A checked superblock (cider_store_check()): its numbers are the lists'. */
static void cider_kvs_cfg(struct cider_cfg *cfg, const struct cider_mn_sb *sb)
{
	cfg->mode = sb->mode - 1;
	cfg->index = sb->index - 1;
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
	/* GETs of a key on a shard share one lookup (core/readcomb.c). */
	cfg->read_comb = true;
	/*
	 * The CN cache (core/cache.h), where the store allows it and the
	 * module parameter asks for it.  Either way a store with the feature
	 * may have other CNs that lease, and this one's writers end theirs
	 * (kvfabric.c: INVALs to every live node, or the lease waited out).
	 */
	cfg->cache = sb->flags & CIDER_SB_F_CACHE && READ_ONCE(cider_cache);
	cfg->cache_lease_ns = sb->cache_lease_ns;
	cfg->cache_margin_ns = sb->cache_margin_ns;
	cfg->cache_hot = 2;
	cfg->cache_stable_ns = 1000000;	/* a key stable for 1 ms */
	cfg->lock_qlen = sb->lock_qlen;	/* the lock table as formatted */
	cfg->lock_rec = sb->lock_rec;
}

/* ---- requests ---- */

struct cider_kv_pool *cider_kvs_pool(struct cider_mn *mn)
{
	struct cider_kvs *kvs = cider_kvs_of(mn);

	return kvs ? kvs->pool : NULL;
}

/* ---- what an operator can see ---- */

/* A client's machine by state names, and how it waits: a line's end. */
static void cider_client_show(struct seq_file *m, const struct cider_client *c)
{
	seq_printf(m, "%s > %s > %s%s%s\n", cider_client_state_name(c),
		   cider_client_sub_state_name(c), cider_client_leaf_state_name(c),
		   c->parked ? ", parked" : "", c->dead ? ", client dead" : "");
}

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
		if (!ks->req) {		/* dead or orphaned: no operation */
			seq_printf(m, "  slot %u %s\n", s, cider_kslot_state_names[ks->state]);
			continue;
		}
		seq_printf(m, "  slot %u %s op %u key %u bytes id %#llx: ", s,
			   cider_kslot_state_names[ks->state], ks->req->op, ks->req->key_len,
			   c->key);
		cider_client_show(m, c);
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
	for (i = 0; i <= CIDER_KV_SCAN; i++)
		for (j = 0; j < CIDER_RES_NR; j++)
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
		cst->resets += sh->clients[i].st.resets;
		cst->self_grants += sh->clients[i].st.self_grants;
		cst->read_combined += sh->clients[i].st.read_combined;
		cst->cache_hits += sh->clients[i].st.cache_hits;
		cst->cache_refreshes += sh->clients[i].st.cache_refreshes;
		cst->cache_misses += sh->clients[i].st.cache_misses;
		cst->lease_revokes += sh->clients[i].st.lease_revokes;
		cst->lease_waits += sh->clients[i].st.lease_waits;
		cst->lease_expired += sh->clients[i].st.lease_expired;
	}
	t->msgs_dropped += sh->cn.msgs_dropped;
	t->cache_evictions += sh->cn.cache.evictions;
	t->cache_invals += sh->cn.cache.invals;
	spin_unlock_bh(&sh->lock);
}

/* The messages to and from other compute nodes, and their links. */
static void cider_kvs_peer_collect(struct cider_peer_stats *ps, struct cider_stats_out *o)
{
	static const char *const sent[] = {
		"sent_handover", "sent_exec", "sent_exec_done", "sent_result", "sent_inval",
		"sent_inval_ack"
	};
	unsigned int i;

	BUILD_BUG_ON(ARRAY_SIZE(sent) != ARRAY_SIZE(ps->sent));
	for (i = 0; i < ARRAY_SIZE(sent); i++)
		cider_stat_put(o, sent[i], atomic64_read(&ps->sent[i]));
	cider_stat_put(o, "received", atomic64_read(&ps->received));
	cider_stat_put(o, "local", atomic64_read(&ps->local));
	cider_stat_put(o, "remote", atomic64_read(&ps->remote));
	cider_stat_put(o, "unreachable", atomic64_read(&ps->unreachable));
	cider_stat_put(o, "invalid", atomic64_read(&ps->invalid));
	cider_stat_put(o, "stale", atomic64_read(&ps->stale));
	cider_stat_put(o, "full", atomic64_read(&ps->full));
	cider_stat_put(o, "links_made", atomic64_read(&ps->links_made));
	cider_stat_put(o, "links_accepted", atomic64_read(&ps->links_accepted));
	cider_stat_put(o, "link_failures", atomic64_read(&ps->link_failures));
}

/* Each operation's results, then the verbs and the protocol's events. */
static void cider_kvs_kv_collect(const struct cider_kvs_stats *t,
				 const struct cider_client_stats *cst, struct cider_stats_out *o)
{
	static const char *const ops[] = { "", CIDER_KV_OPS(CIDER_VOCAB_NAME) };
	char name[CIDER_STAT_NAME_LEN];
	unsigned int i, j;

	for (i = CIDER_KV_GET; i <= CIDER_KV_SCAN; i++) {
		for (j = CIDER_RES_OK; j <= CIDER_RES_FAILED; j++) {
			snprintf(name, sizeof(name), "%s_%s", ops[i], cider_res_name(j));
			cider_stat_put(o, name, t->ops[i][j]);
		}
	}
	cider_stat_put(o, "verbs_read", t->verbs[CIDER_V_READ]);
	cider_stat_put(o, "verbs_write", t->verbs[CIDER_V_WRITE]);
	cider_stat_put(o, "verbs_cas", t->verbs[CIDER_V_CAS]);
	cider_stat_put(o, "verbs_faa", t->verbs[CIDER_V_FAA]);
	cider_stat_put(o, "updates", t->updates);
	cider_stat_put(o, "cas_fail", cst->cas_fail);
	cider_stat_put(o, "pessimistic", t->pessimistic);
	cider_stat_put(o, "combined", t->combined);
	cider_stat_put(o, "installers", t->installers);
	cider_stat_put(o, "coordinated", cst->coords);
	cider_stat_put(o, "corrupt_blocks", cst->corrupt);
	cider_stat_put(o, "expired", t->expired);
	cider_stat_put(o, "revived", t->revived);
	cider_stat_put(o, "lock_resets", cst->resets);
	cider_stat_put(o, "self_grants", cst->self_grants);
	cider_stat_put(o, "msgs_dropped", t->msgs_dropped);
	cider_stat_put(o, "read_combined", cst->read_combined);
	cider_stat_put(o, "cache_hits", cst->cache_hits);
	cider_stat_put(o, "cache_refreshes", cst->cache_refreshes);
	cider_stat_put(o, "cache_misses", cst->cache_misses);
	cider_stat_put(o, "cache_evictions", t->cache_evictions);
	cider_stat_put(o, "cache_invals", t->cache_invals);
	cider_stat_put(o, "lease_revokes", cst->lease_revokes);
	cider_stat_put(o, "lease_waits", cst->lease_waits);
	cider_stat_put(o, "lease_expired", cst->lease_expired);
}

int cider_kvs_stats_collect(struct cider_mn *mn, struct cider_stats_out *o,
			    enum cider_kvs_stats_group group)
{
	struct cider_kvs *kvs = cider_kvs_of(mn);
	struct cider_client_stats cst = {};
	struct cider_kvs_stats *t;
	unsigned int i;

	if (!kvs)
		return 0;
	if (group == CIDER_KVS_STATS_PEER) {
		cider_kvs_peer_collect(&kvs->sink.stats, o);
		return 0;
	}
	/* Too big for the stack: a counter left out would break the uapi's word. */
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	for (i = 0; i < kvs->nr_shards; i++)
		cider_kvs_stats_add(t, kvs->shards[i], &cst);
	cider_kvs_kv_collect(t, &cst, o);
	kfree(t);
	return 0;
}

/* debugfs mnN: "WORD name=value ..." for one group of the counters. */
static void cider_kvs_stats_line(struct seq_file *m, struct cider_mn *mn, const char *word,
				 enum cider_kvs_stats_group group)
{
	struct cider_stats_out o = {};
	unsigned int i;

	if (cider_kvs_stats_collect(mn, &o, group) || !o.n)
		return;
	o.st = kcalloc(o.n, sizeof(*o.st), GFP_KERNEL);
	if (!o.st)
		return;
	o.room = o.n;
	o.n = 0;
	if (cider_kvs_stats_collect(mn, &o, group)) {
		kfree(o.st);
		return;
	}
	seq_puts(m, word);
	for (i = 0; i < min(o.n, o.room); i++)
		seq_printf(m, " %s=%llu", o.st[i].name, o.st[i].value);
	seq_putc(m, '\n');
	kfree(o.st);
}

/*
 * debugfs mnN: one "kv" line of counters since attach, summed over the
 * shards, and one "peer" line (Documentation/kv.rst lists them).
 */
void cider_kvs_stats_show(struct seq_file *m, struct cider_mn *mn)
{
	cider_kvs_stats_line(m, mn, "kv", CIDER_KVS_STATS_KV);
	cider_kvs_stats_line(m, mn, "peer", CIDER_KVS_STATS_PEER);
}

void cider_kvs_req_show_slot(struct seq_file *m, struct cider_kv_req *r)
{
	struct cider_kslot *ks = READ_ONCE(r->ks);
	struct cider_shard *sh = ks ? ks->sh : NULL;
	struct cider_client *c;

	if (!sh) {
		seq_puts(m, " no slot\n");
		return;
	}
	c = cider_kslot_client(ks);
	spin_lock_bh(&sh->lock);
	if (ks->req != r) {	/* it ended meanwhile */
		seq_puts(m, " ended\n");
	} else {
		seq_printf(m, " shard %u slot %u %s: ", sh->index,
			   (unsigned int)(ks - sh->slots), cider_kslot_state_names[ks->state]);
		cider_client_show(m, c);
	}
	spin_unlock_bh(&sh->lock);
}

/* debugfs: every operation under way and every queue node, by state. */
void cider_kvs_show(struct seq_file *m, struct cider_mn *mn)
{
	struct cider_kvs *kvs = cider_kvs_of(mn);
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
	if (kvs->val_max <= CIDER_KVS_EAGER_VALUE) {
		ks->val = kvmalloc(kvs->val_max, GFP_KERNEL);
		if (!ks->val)
			return -ENOMEM;
		ks->val_cap = kvs->val_max;
	}
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

/* The shard's CN cache, if the store runs one; freed with the shard. */
static int cider_shard_cache(struct cider_shard *sh)
{
	if (!sh->kvs->cfg.cache)
		return 0;
	sh->cache_ent = kvcalloc(CIDER_KVS_CACHE, sizeof(*sh->cache_ent), GFP_KERNEL);
	sh->cache_room = kvcalloc(CIDER_KVS_CACHE, CIDER_KVS_CACHE_ROOM, GFP_KERNEL);
	if (!sh->cache_ent || !sh->cache_room)
		return -ENOMEM;
	cider_cache_init(&sh->cn.cache, sh->cache_ent, sh->cache_room, CIDER_KVS_CACHE,
			 CIDER_KVS_CACHE_ROOM);
	/* The claim is taken: writers' views have this node within the hold. */
	cider_cache_hold(&sh->cn, ktime_get_ns() + CIDER_KVS_CACHE_HOLD_NS);
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
	spin_lock_init(&sh->inbox_lock);
	INIT_WORK(&sh->inbox_work, cider_shard_inbox_work);
	init_waitqueue_head(&sh->slot_wait);
	sh->fab.ops = &cider_kvs_fabric_ops;
	sh->fab.priv = sh;
	for (s = 0; s < CIDER_KVS_SLOTS; s++) {
		struct cider_kslot *ks = &sh->slots[s];

		cider_kslot_init(ks, sh);
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
	ret = cider_shard_cache(sh);
	if (ret)
		return ret;
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
static int cider_kvs_create(struct cider_mn *mn)
{
	unsigned int i, n = min_t(unsigned int, mn->nr_chans, CIDER_KVS_MAX_SHARDS);
	struct cider_kvs *kvs;
	int ret;

	kvs = kzalloc(struct_size(kvs, shards, n), GFP_KERNEL);
	if (!kvs)
		return -ENOMEM;
	kvs->mn = mn;
	kvs->nr_shards = n;
	kvs->scan_key = get_random_u64();
	cider_kvs_cfg(&kvs->cfg, &mn->sb);
	ret = cider_kvs_limits(kvs, &mn->sb);
	for (i = 0; !ret && i < n; i++) {
		kvs->shards[i] = kvzalloc(sizeof(*kvs->shards[i]), GFP_KERNEL);
		cider_fault_store_delay();
		ret = kvs->shards[i] ? cider_shard_init(kvs, kvs->shards[i], i) : -ENOMEM;
	}
	if (!ret) {
		/* Twice the slots: room for operations waiting for one. */
		kvs->pool = cider_kv_pool_create(2 * n * kvs->nr_slots, kvs->val_max,
						 kvs->val_max <= CIDER_KVS_EAGER_VALUE);
		ret = kvs->pool ? 0 : -ENOMEM;
	}
	if (ret) {
		cider_kvs_destroy(kvs);
		return ret;
	}
	/*
	 * Reachable by other compute nodes before its kill can find it, so
	 * that the kill always closes what the open opened.
	 */
	cider_kvs_open(kvs);
	/* Pairs with the acquire in cider_kvs_of(): kill and unmap see it whole. */
	cider_mn_set_user(mn, kvs);
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
static void cider_kvs_kill(struct cider_mn *mn, int reason)
{
	struct cider_kvs *kvs = cider_kvs_of(mn);	/* whole or none */
	unsigned int i, s;

	if (!kvs)
		return;
	atomic_cmpxchg(&kvs->dead, 0, reason);
	cider_kvs_close(kvs);		/* no message from another CN comes in */
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
 * The node lost its link and reconnects (mn.h): its channels drained, so
 * no batch is out.  Every operation ends, as the kill would end it, but
 * the store stays: new operations wait for the resume, and the slots of
 * the ended ones come back a lease later (cider_kslot_revive()), when
 * any lock they held has been recovered.  Process context.
 */
static void cider_kvs_quiesce(struct cider_mn *mn, int reason)
{
	struct cider_kvs *kvs = cider_kvs_of(mn);
	unsigned int i, s;

	if (!kvs)
		return;
	WRITE_ONCE(kvs->down, true);
	for (i = 0; i < kvs->nr_shards; i++) {
		struct cider_shard *sh = kvs->shards[i];

		spin_lock_bh(&sh->lock);
		for (s = 0; s < CIDER_KVS_SLOTS; s++)
			cider_kslot_abort(sh, &sh->slots[s]);
		cider_shard_flush(sh);
	}
}

/* Reconnected, the same node and member: operations start again. */
static void cider_kvs_resume(struct cider_mn *mn)
{
	struct cider_kvs *kvs = cider_kvs_of(mn);
	unsigned int i;

	if (!kvs)
		return;
	WRITE_ONCE(kvs->down, false);
	for (i = 0; i < kvs->nr_shards; i++)
		wake_up_all(&kvs->shards[i]->slot_wait);
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

/*
 * The node leaves the membership table next: its CN caches stop (a
 * writer whose view no longer has this node neither asks nor waits).
 */
static void cider_kvs_leave(struct cider_mn *mn)
{
	struct cider_kvs *kvs = cider_kvs_of(mn);
	unsigned int i;

	for (i = 0; kvs && i < kvs->nr_shards && kvs->shards[i]; i++) {
		spin_lock_bh(&kvs->shards[i]->lock);
		kvs->shards[i]->cn.cache.nr = 0;
		spin_unlock_bh(&kvs->shards[i]->lock);
	}
}

static void cider_kvs_unmap(struct cider_mn *mn)
{
	cider_kvs_unmap_shards(cider_kvs_of(mn));	/* whole or none */
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
	kvfree(sh->cache_ent);
	kvfree(sh->cache_room);
	kvfree(sh);
}

/* Unmap and free a store: a published one at the end, or a failed create. */
static void cider_kvs_destroy(struct cider_kvs *kvs)
{
	unsigned int i;

	cider_kvs_unmap_shards(kvs);	/* a failed create: the device is still there */
	for (i = 0; i < kvs->nr_shards && kvs->shards[i]; i++)
		cider_shard_free(kvs->shards[i]);
	cider_kv_pool_free(kvs->pool);
	kfree(kvs);
}

/*
 * The node's last reference is gone: nobody can submit, and the kill
 * (at teardown) stopped every timer.  Any context.
 */
static void cider_kvs_free(struct cider_mn *mn)
{
	struct cider_kvs *kvs = cider_kvs_of(mn);

	if (kvs)
		cider_kvs_destroy(kvs);
	cider_mn_set_user(mn, NULL);
}

const struct cider_mn_client cider_kvs_client = {
	.add = cider_kvs_create,
	.kill = cider_kvs_kill,
	.quiesce = cider_kvs_quiesce,
	.resume = cider_kvs_resume,
	.leave = cider_kvs_leave,
	.stop = cider_kvs_unmap,
	.release = cider_kvs_free,
};
