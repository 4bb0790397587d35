/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The KV store of one attached memory node: the protocol core (core/)
 * running over the node's channels.
 *
 * Concurrency: the compute node is split by key hash into shards, each a
 * core CN of its own (its queue nodes, block allocator, hot-key table and
 * local write-combining state) bound to one channel and run under one
 * spinlock taken with _bh (completions and soft hrtimers run in
 * softirq).  A key always maps to the same shard, so the per-key state
 * the core keeps is consistent under that lock alone, and no lock is
 * shared across shards on the hot path.  The core never blocks: what it
 * asks for while the lock is held (batches to post, messages, requests
 * finished) is collected and carried out after the unlock.
 *
 * A key runs on the shard its bytes choose on every node (the CN cache's
 * INVALs go there): one whose bytes changed between the shard's choice
 * and the copy is refused (kslot.c).
 *
 * Buffers: every operation slot owns a key buffer, a batch for the verbs
 * of the core's steps (one in flight at a time) and, for the hash index,
 * the core's block buffer, the last two DMA-mapped once when the store is
 * created, and a value buffer its filler grows to the values it carries.
 * Messages between the shard's own queue nodes go through a ring of the
 * shard: nothing is allocated or mapped per verb batch or message.
 * The submitter copies the key and value in once (process context, the
 * slot claimed); the core copies a GET's value into the request's own
 * buffer, from which its submitter copies it out.  The slot is free again
 * as soon as the operation ends: the result goes with the request
 * (kvreq.c), whose pool the store keeps.
 */
#ifndef _CIDER_KVSTORE_H
#define _CIDER_KVSTORE_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/types.h>

#include "mn.h"
#include "uring.h"

struct cider_mn;
struct cider_kvs;
struct seq_file;
struct cider_kslot;
struct cider_kv_pool;

/* One KV operation on its way through a store (kvreq.c). */
struct cider_kv_req {
	refcount_t ref;			/* submitter + store while running */
	struct cider_mn *mn;		/* a reference, dropped with the request */
	struct cider_kslot *ks;		/* its slot: from the claim to the end */
	u8 op;				/* CIDER_KV_* */
	const void __user *ukey;
	u32 key_len;
	void __user *uval;		/* PUT/INSERT/UPDATE: the value; GET: the buffer */
	u32 val_len;
	u32 got_len;			/* GET: the value's length; SCAN: the records' bytes */
	u64 scan_pos;			/* SCAN: the page's first index position, */
	u32 scan_count;			/* how many it visits, */
	u64 got_pos;			/* and the cursor of the next page */
	int result;			/* -errno, or 0 */
	void (*complete)(struct cider_kv_req *r);	/* any context */
	struct completion done;		/* for synchronous callers */
	struct list_head node;		/* the shard's finished list */
	struct cider_uring_link ulink;	/* io_uring: the command */
	u32 store;
	struct list_head live;		/* on its pool's list while taken */
	u64 born;			/* ns, when taken */
	u64 ends_at;			/* ns: its bound, once it runs (kslot.c) */
	/* the pool's, kept across operations */
	struct cider_kv_pool *pool;
	bool lent;			/* allocated: the pool was empty */
	struct list_head free;		/* in the pool, while not taken */
	u8 *out;			/* GET: the value lands here */
	u32 out_cap;			/* bytes at out */
};

/*
 * A store's requests, nr of them, made with it (0 allocations per
 * operation), with GET buffers of @val_max bytes if @eager; freed with
 * it, once every request is back.
 */
struct cider_kv_pool *cider_kv_pool_create(unsigned int nr, u32 val_max, bool eager);
void cider_kv_pool_free(struct cider_kv_pool *p);
/* @mn's store's pool, or NULL without a store. */
struct cider_kv_pool *cider_kvs_pool(struct cider_mn *mn);
/*
 * A request for one operation on @mn, taking over the caller's reference
 * to @mn (dropped with the request's last put): the pool's, or when none
 * is free one allocated for it.  -EOPNOTSUPP without a store, -ENOMEM
 * (-EAGAIN when @nowait: it would have to sleep).
 */
struct cider_kv_req *cider_kv_req_get(struct cider_mn *mn, bool nowait);
/* GET: room in ->out for val_len bytes: 0, -ENOMEM (-EAGAIN when @nowait). */
int cider_kv_req_out_room(struct cider_kv_req *r, bool nowait);

/*
 * The store is its node's user (mn.h): created once the node is probed,
 * killed when it is lost or detached, unmapped at its teardown, freed
 * with it.  Registered at module load.
 */
extern const struct cider_mn_client cider_kvs_client;

/* @mn's store, whole, or NULL (none yet, or not a KV store). */
static inline struct cider_kvs *cider_kvs_of(struct cider_mn *mn)
{
	return cider_mn_user(mn);
}

/*
 * Run @r on @mn's store: 0 once it is under way (->complete runs when it
 * ends), or -errno before it started: -ENOTCONN store dead, -EAGAIN no
 * free slot (at once when @nowait, else after op_timeout_ms), -EINTR a
 * fatal signal while waiting.
 */
int cider_kvs_submit(struct cider_mn *mn, struct cider_kv_req *r, bool nowait);

/*
 * A finished GET: copy its value (got_len bytes) to the user's buffer.
 * Process context of the submitter; 0 or -EFAULT.
 */
int cider_kv_req_copy_value(struct cider_kv_req *r);

/*
 * The last put gives the request back to its pool.  Every request taken
 * is listed until then, whatever its node's state: debugfs "requests"
 * shows them all (a node's own files go at detach, or were never made).
 */
void cider_kv_req_put(struct cider_kv_req *r);
/* debugfs: every KV request taken, its node, age, slot and machine. */
void cider_kv_reqs_show(struct seq_file *m);
/* Its slot and the slot's machine, if it runs (a line's end). */
void cider_kvs_req_show_slot(struct seq_file *m, struct cider_kv_req *r);

/* debugfs: the operations under way and the queue nodes, by state name. */
void cider_kvs_show(struct seq_file *m, struct cider_mn *mn);
/* debugfs: the store's counters as one "kv k=v ..." line (none without a store). */
void cider_kvs_stats_show(struct seq_file *m, struct cider_mn *mn);
/* The store's counters by name (stats.h): its operations, or its peer messages. */
enum cider_kvs_stats_group { CIDER_KVS_STATS_KV, CIDER_KVS_STATS_PEER };
struct cider_stats_out;
int cider_kvs_stats_collect(struct cider_mn *mn, struct cider_stats_out *o,
			    enum cider_kvs_stats_group group);
int cider_kvs_peer_inject(struct cider_mn *mn, const void *buf, size_t len);

#endif
