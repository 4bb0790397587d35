// SPDX-License-Identifier: GPL-2.0
/*
 * KV requests (kvstore.h): each store keeps a pool of them, made when the
 * store is, twice its slots, so that an operation allocates nothing.  A
 * request carries an operation from its command to its answer: its slot
 * is the store's only while the operation runs, and a GET's value lands
 * in the request's own buffer, which grows (in the submitter's process
 * context, by powers of two up to the store's longest value) to the
 * buffers its callers bring, unless the store's values are small enough
 * to have it whole from the start.
 *
 * A pool that runs dry (completions nobody reaps hold their requests:
 * io_uring's task work runs only when its task lets it) lends requests
 * allocated for the occasion and charged to the caller, freed with their
 * last reference: a full pool never blocks another user of the store.
 *
 * Every request taken is on its pool's list until it goes back, and the
 * pools are on one list, so that debugfs shows every request whatever its
 * node's state; the hot path takes only its own pool's lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "kvstore.h"
#include "mn.h"

struct cider_kv_pool {
	spinlock_t lock;		/* taken with _bh: the last put may be in softirq */
	struct list_head free;
	struct list_head live;		/* requests taken, lent ones too */
	struct list_head node;		/* cider_kv_pools */
	u32 val_max;			/* the store's longest value */
	bool eager;			/* GET buffers whole from the start */
	unsigned int nr;
	struct cider_kv_req reqs[];
};

static LIST_HEAD(cider_kv_pools);
static DEFINE_SPINLOCK(cider_kv_pools_lock);

/* A GET buffer of @len bytes for @r: 0 or -ENOMEM. */
static int cider_kv_req_grow(struct cider_kv_req *r, u32 len, gfp_t gfp)
{
	void *v = kvmalloc(len, gfp);

	if (!v)
		return -ENOMEM;
	kvfree(r->out);
	r->out = v;
	r->out_cap = len;
	return 0;
}

struct cider_kv_pool *cider_kv_pool_create(unsigned int nr, u32 val_max, bool eager)
{
	struct cider_kv_pool *p = kvzalloc(struct_size(p, reqs, nr), GFP_KERNEL);
	unsigned int i;

	if (!p)
		return NULL;
	spin_lock_init(&p->lock);
	INIT_LIST_HEAD(&p->free);
	INIT_LIST_HEAD(&p->live);
	INIT_LIST_HEAD(&p->node);	/* unlisted until whole */
	p->val_max = val_max;
	p->eager = eager;
	p->nr = nr;
	for (i = 0; i < nr; i++) {
		struct cider_kv_req *r = &p->reqs[i];

		r->pool = p;
		list_add_tail(&r->free, &p->free);
		if (eager && cider_kv_req_grow(r, val_max, GFP_KERNEL)) {
			cider_kv_pool_free(p);
			return NULL;
		}
	}
	spin_lock_bh(&cider_kv_pools_lock);
	list_add_tail(&p->node, &cider_kv_pools);
	spin_unlock_bh(&cider_kv_pools_lock);
	return p;
}

/* With the store: every request is back (each held a node reference). */
void cider_kv_pool_free(struct cider_kv_pool *p)
{
	unsigned int i;

	if (!p)
		return;
	spin_lock_bh(&cider_kv_pools_lock);
	list_del(&p->node);		/* a failed create's: on no list, a no-op */
	spin_unlock_bh(&cider_kv_pools_lock);
	for (i = 0; i < p->nr; i++)
		kvfree(p->reqs[i].out);
	kvfree(p);
}

/* One of the pool's, or one lent for the occasion; listed as taken. */
static struct cider_kv_req *cider_kv_pool_take(struct cider_kv_pool *p, bool nowait)
{
	struct cider_kv_req *r;

	spin_lock_bh(&p->lock);
	r = list_first_entry_or_null(&p->free, struct cider_kv_req, free);
	if (r) {
		list_del_init(&r->free);
		list_add_tail(&r->live, &p->live);
	}
	spin_unlock_bh(&p->lock);
	if (r)
		return r;
	r = kzalloc(sizeof(*r), nowait ? GFP_NOWAIT | __GFP_NOWARN : GFP_KERNEL_ACCOUNT);
	if (!r)
		return NULL;
	r->pool = p;
	r->lent = true;
	if (p->eager && cider_kv_req_grow(r, p->val_max, nowait ? GFP_NOWAIT | __GFP_NOWARN :
					  GFP_KERNEL_ACCOUNT)) {
		kfree(r);
		return NULL;
	}
	spin_lock_bh(&p->lock);
	list_add_tail(&r->live, &p->live);
	spin_unlock_bh(&p->lock);
	return r;
}

struct cider_kv_req *cider_kv_req_get(struct cider_mn *mn, bool nowait)
{
	struct cider_kv_pool *p = cider_kvs_pool(mn);
	struct cider_kv_req *r;

	if (!p)
		return ERR_PTR(-EOPNOTSUPP);	/* no KV store on this node */
	r = cider_kv_pool_take(p, nowait);
	if (!r)
		return ERR_PTR(nowait ? -EAGAIN : -ENOMEM);
	refcount_set(&r->ref, 1);
	r->mn = mn;
	r->ks = NULL;
	r->op = 0;
	r->got_len = 0;
	r->result = 0;
	r->ends_at = 0;
	r->complete = NULL;
	init_completion(&r->done);
	INIT_LIST_HEAD(&r->node);
	r->born = ktime_get_ns();
	return r;
}

void cider_kv_req_put(struct cider_kv_req *r)
{
	struct cider_kv_pool *p = r->pool;
	struct cider_mn *mn = r->mn;

	if (!refcount_dec_and_test(&r->ref))
		return;
	spin_lock_bh(&p->lock);
	list_del(&r->live);
	if (!r->lent)
		list_add(&r->free, &p->free);
	spin_unlock_bh(&p->lock);
	if (r->lent) {
		kvfree(r->out);
		kfree(r);
	}
	/* Last: the pool goes with the node's last reference. */
	cider_mn_put(mn);
}

int cider_kv_req_out_room(struct cider_kv_req *r, bool nowait)
{
	u32 want = r->val_len;

	if (want <= r->out_cap)
		return 0;
	/* kvmalloc() without GFP_KERNEL is kmalloc() alone: no sleep. */
	if (cider_kv_req_grow(r, min_t(u32, roundup_pow_of_two(max_t(u32, want, 64)),
				       max_t(u32, r->pool->val_max, want)),
			      nowait ? GFP_NOWAIT | __GFP_NOWARN : GFP_KERNEL))
		return nowait ? -EAGAIN : -ENOMEM;
	return 0;
}

int cider_kv_req_copy_value(struct cider_kv_req *r)
{
	if (WARN_ON_ONCE(r->got_len > r->val_len || r->got_len > r->out_cap))
		return -EIO;
	return copy_to_user(r->uval, r->out, r->got_len) ? -EFAULT : 0;
}

void cider_kv_reqs_show(struct seq_file *m)
{
	u64 now = ktime_get_ns();
	struct cider_kv_pool *p;
	struct cider_kv_req *r;

	spin_lock_bh(&cider_kv_pools_lock);
	list_for_each_entry(p, &cider_kv_pools, node) {
		spin_lock_bh(&p->lock);
		list_for_each_entry(r, &p->live, live) {
			seq_printf(m, "req mn%u%s%s op %u age %llu ms refs %u result %d",
				   r->store, cider_mn_listed(r->mn) ? "" : " (unlisted)",
				   r->lent ? " (lent)" : "", r->op,
				   div_u64(now - r->born, NSEC_PER_MSEC), refcount_read(&r->ref),
				   r->result);
			cider_kvs_req_show_slot(m, r);
		}
		spin_unlock_bh(&p->lock);
	}
	spin_unlock_bh(&cider_kv_pools_lock);
}
