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
 */
#ifndef _CIDER_KVSTORE_H
#define _CIDER_KVSTORE_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/types.h>

#include "uring.h"

struct cider_mn;
struct cider_kvs;

/* One KV operation on its way through a store. */
struct cider_kv_req {
	refcount_t ref;			/* submitter + store while running */
	struct cider_mn *mn;		/* a reference, dropped with the request */
	u8 op;				/* CIDER_KV_* */
	u64 key;			/* array index: the key */
	u64 val;			/* PUT/INSERT/UPDATE: the value */
	u64 got;			/* GET: the value read */
	int result;			/* -errno, or 0 */
	bool wrote;			/* a write was posted: failure = unknown */
	void (*complete)(struct cider_kv_req *r);	/* any context */
	struct completion done;		/* for synchronous callers */
	struct list_head node;		/* the shard's finished list */
	struct cider_uring_link ulink;	/* io_uring: the command */
	void __user *ubuf;		/* GET: the user's buffer */
	u32 ubuf_len;
	u32 store;
};

/* At attach, once the superblock is read: 0 or -ENOMEM. */
int cider_kvs_create(struct cider_mn *mn);
/* Lost or detached: every operation ends, none starts (process context). */
void cider_kvs_kill(struct cider_mn *mn, int reason);
/* With the node's last reference. */
void cider_kvs_free(struct cider_mn *mn);

/*
 * Run @r on @mn's store: 0 once it is under way (->complete runs when it
 * ends), or -errno before it started: -ENOTCONN store dead, -EAGAIN no
 * free slot (at once when @nowait, else after op_timeout_ms), -EINTR a
 * fatal signal while waiting.
 */
int cider_kvs_submit(struct cider_mn *mn, struct cider_kv_req *r, bool nowait);

void cider_kv_req_put(struct cider_kv_req *r);

struct seq_file;
/* debugfs: the operations under way and the queue nodes, by state name. */
void cider_kvs_show(struct seq_file *m, struct cider_mn *mn);

#endif
