/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the KV store's three rooms share (kvstore.h has the concurrency
 * model): the store and its shards (kvstore.c: their life, and what an
 * operator sees), the slots that carry operations through the core
 * (kslot.c: the slot machine) and the fabric the core calls and the data
 * path completes (kvfabric.c).
 */
#ifndef _CIDER_KVSHARD_H
#define _CIDER_KVSHARD_H

#include <linux/hrtimer.h>
#include <linux/jhash.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "core/client.h"
#include "core/localwc.h"
#include "cider.h"
#include "kvstore.h"
#include "peer.h"
#include "transport.h"
#include "vocab.h"

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
 * The CN cache per shard: 1,024 entries of at most 256 bytes of key and
 * value (larger ones are not kept): 328 KiB a shard on the hash index.
 */
#define CIDER_KVS_CACHE		1024
#define CIDER_KVS_CACHE_ROOM	256
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
/*
 * Messages from other compute nodes (peer.c) wait here for the shard's
 * inbox work: a queue node waits for at most a handover and a result, so
 * two per slot; beyond, a message is dropped and counted (the lease
 * recovers what it would have done).
 */
#define CIDER_KVS_INBOX		(2 * CIDER_KVS_SLOTS)
#define CIDER_KVS_PICK_BYTES	64	/* of a key, hashed to choose its shard */
/*
 * A store's new compute node takes no right in its CN cache for this
 * long, and a writer broadcasts its INVALs only to the nodes of a
 * membership view younger than half of it (the heartbeat reads one
 * every quarter second): every node a writer does not ask joined after
 * its view, so it cannot have read the word before the WAITING bit.
 */
#define CIDER_KVS_CACHE_HOLD_NS	(2 * NSEC_PER_SEC)
/*
 * Value buffers (a slot's, a request's GET buffer) of a store whose
 * values are at most this long are allocated whole with the store; the
 * others grow with the values they carry.
 */
#define CIDER_KVS_EAGER_VALUE	256

struct cider_shard;

/*
 * A slot's life (vocab.h: its states and which may follow which;
 * cider_kslot_set_state() checks every step); the shard's lock guards it.
 */
enum cider_kslot_state { CIDER_KSLOT_STATES(CIDER_KSLOT_ENUM) CIDER_KSLOT_NR_STATES };

/* The kernel's side of one core client, and the operation's bytes. */
struct cider_kslot {
	struct cider_shard *sh;
	struct cider_kv_req *req;	/* from FILLING to the operation's end */
	u8 state;			/* enum cider_kslot_state */
	struct hrtimer timer;		/* the core's */
	u32 token;
	struct hrtimer deadline;	/* the operation's bound: cider_kvs_bound_ns() */
	u64 ends_at;			/* ns: when it is reached */
	bool expired;			/* the bound ended the operation */
	u64 died_at;			/* ns: its client died (revived a lease later) */
	struct cider_verb *v;		/* the verbs the core posted */
	unsigned int nv;
	struct cider_batch *b;		/* the slot's own, mapped once: carries them */
	struct list_head run;		/* on the shard's run queue, or empty */
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

struct cider_kvs_stats {
	u64 ops[CIDER_KV_SCAN + 1][CIDER_RES_NR];	/* by CIDER_KV_* and result (OK..FAILED) */
	u64 verbs[4];			/* by CIDER_V_* */
	u64 updates;			/* core UPDATEs and PUTs ended */
	u64 pessimistic;		/* of which went the locked way */
	u64 combined;			/* acknowledged, covered by another's write */
	u64 installers;			/* writes that covered others */
	u32 wc_seen[64];		/* recent installers (opid + 1), by opid */
	u64 expired;			/* operations ended by their bound */
	u64 revived;			/* dead clients given back to the shard */
	u64 msgs_dropped;		/* summed only: the core's, for queue nodes gone */
	u64 cache_evictions;		/* summed only: the CN cache's (core/cache.h) */
	u64 cache_invals;		/* summed only: INVALs the CN cache received */
};

struct cider_shard {
	spinlock_t lock;		/* taken with _bh; everything below */
	struct cider_kvs *kvs;
	unsigned int index;
	struct cider_channel *ch;
	struct ib_device *dma_dev;	/* the blocks' mapping, until unmapped */
	int dead;			/* -errno once the store died */
	unsigned int busy;		/* slots not free */
	bool freed;			/* a slot was freed: wake its waiters */
	u32 opid;
	struct list_head runq;		/* kslots to resume */
	struct cider_msg mail[CIDER_KVS_MAIL];	/* to its own agent, a ring: */
	unsigned int mail_head, mail_len;	/* delivered after the sender returns */
	/*
	 * From other compute nodes: a ring under inbox_lock, a leaf lock
	 * (taken under any shard's lock, never the other way round),
	 * emptied by inbox_work under the shard's lock.
	 */
	spinlock_t inbox_lock;
	struct cider_msg inbox[CIDER_KVS_INBOX];
	unsigned int inbox_head, inbox_len;
	struct work_struct inbox_work;
	struct list_head posts;		/* batches to submit after the unlock */
	struct list_head finished;	/* requests to complete after the unlock */
	struct cider_kvs_stats stats;
	wait_queue_head_t slot_wait;
	struct cider_fabric fab;
	struct cider_client clients[CIDER_KVS_SLOTS];
	struct cider_kslot slots[CIDER_KVS_SLOTS];
	struct cider_lwc lwc[CIDER_KVS_SLOTS];
	struct cider_slab_ent *ring;	/* CIDER_KVS_RING per size class */
	struct cider_cache_ent *cache_ent;	/* the CN cache's, or NULL (core/cache.h) */
	u8 *cache_room;
	struct cider_cn cn;
};

struct cider_kvs {
	struct cider_mn *mn;
	struct cider_cfg cfg;
	atomic_t dead;			/* -errno once the store died */
	bool down;			/* its node reconnects: quiesced, not resumed */
	unsigned int nr_shards;
	u32 key_max, val_max;		/* the store's limits: the slots' buffers */
	u32 blk_len;			/* hash: the largest block; array: 0 */
	unsigned int nr_slots;		/* slots a shard runs (the block budget) */
	atomic64_t msgs_lost;		/* to its own queue nodes: the mail ring full */
	struct cider_peer_sink sink;	/* how other compute nodes reach it (peer.h) */
	struct cider_kv_pool *pool;	/* its requests */
	u64 scan_key;			/* keys its SCAN cursors (kvscan.c) */
	struct cider_shard *shards[];
};

/* -errno once the store died: this shard was killed, or any verb failed. */
static inline int cider_shard_dead(struct cider_shard *sh)
{
	return sh->dead ?: atomic_read(&sh->kvs->dead);
}

/*
 * Its node lost its link and reconnects: no operation starts, those that
 * want to wait for the resume (from the loss, before the quiesce, to the
 * resume, after the node is LIVE and checked again).
 */
static inline bool cider_kvs_down(const struct cider_kvs *kvs)
{
	return READ_ONCE(kvs->down) || cider_mn_reconnecting(kvs->mn);
}

static inline struct cider_client *cider_kslot_client(struct cider_kslot *ks)
{
	return &ks->sh->clients[ks - ks->sh->slots];
}

static inline struct cider_kslot *cider_kslot_of(struct cider_shard *sh, struct cider_client *c)
{
	return &sh->slots[c - sh->clients];
}

/* kslot.c: the slot machine */
extern const char *const cider_kslot_state_names[CIDER_KSLOT_NR_STATES];
void cider_kslot_set_state(struct cider_kslot *ks, enum cider_kslot_state s);
void cider_kslot_init(struct cider_kslot *ks, struct cider_shard *sh);
void cider_kslot_start(struct cider_shard *sh, struct cider_kslot *ks, u8 op);
/* The hash of a key's first bytes and length that chooses its shard on every node. */
static inline u32 cider_kvs_pick_hash(const void *head, u32 key_len)
{
	return jhash(head, min_t(u32, key_len, CIDER_KVS_PICK_BYTES), key_len);
}

void cider_kslot_wake(struct cider_shard *sh, struct cider_kslot *ks);
void cider_kslot_done(struct cider_shard *sh, struct cider_kslot *ks);
void cider_kslot_abort(struct cider_shard *sh, struct cider_kslot *ks);
void cider_shard_flush(struct cider_shard *sh) __releases(&sh->lock);

/* kvfabric.c: what the core calls, and the data path's and clock's events */
extern const struct cider_fabric_ops cider_kvs_fabric_ops;
enum hrtimer_restart cider_kslot_timer(struct hrtimer *t);
void cider_shard_inbox_work(struct work_struct *work);
void cider_kvs_open(struct cider_kvs *kvs);
void cider_kvs_close(struct cider_kvs *kvs);

#endif

