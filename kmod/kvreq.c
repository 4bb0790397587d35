// SPDX-License-Identifier: GPL-2.0
/*
 * KV requests (kvstore.h): each store keeps a pool of them, made when the
 * store is, so that an operation allocates nothing.  A request carries
 * an operation from its command to its answer: its slot is the store's
 * only while the operation runs, and a GET's value lands in the
 * request's own buffer, which grows (in the submitter's process context,
 * by powers of two up to the store's longest value) to the buffers its
 * callers bring.  Every request taken is also on one global list until
 * it goes back, so that debugfs shows it whatever its node's state.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "kvstore.h"
#include "mn.h"
#include "params.h"

struct cider_kv_pool {
	spinlock_t lock;		/* taken with _bh: the last put may be in softirq */
	struct list_head free;
	wait_queue_head_t wait;
	u32 val_max;			/* the store's longest value */
	unsigned int nr;
	struct cider_kv_req reqs[];
};

/* Every request taken from any pool; _bh as above. */
static LIST_HEAD(cider_kv_reqs);
static DEFINE_SPINLOCK(cider_kv_reqs_lock);

struct cider_kv_pool *cider_kv_pool_create(unsigned int nr, u32 val_max, bool eager)
{
	struct cider_kv_pool *p = kvzalloc(struct_size(p, reqs, nr), GFP_KERNEL);
	unsigned int i;

	if (!p)
		return NULL;
	p->nr = nr;
	spin_lock_init(&p->lock);
	INIT_LIST_HEAD(&p->free);
	init_waitqueue_head(&p->wait);
	p->val_max = val_max;
	for (i = 0; i < nr; i++) {
		struct cider_kv_req *r = &p->reqs[i];

		r->pool = p;
		list_add_tail(&r->free, &p->free);
		if (!eager)
			continue;
		r->out = kvmalloc(val_max, GFP_KERNEL);
		if (!r->out) {
			cider_kv_pool_free(p);
			return NULL;
		}
		r->out_cap = val_max;
	}
	return p;
}

/* With the store: every request is back (each held a node reference). */
void cider_kv_pool_free(struct cider_kv_pool *p)
{
	unsigned int i;

	if (!p)
		return;
	for (i = 0; i < p->nr; i++)
		kvfree(p->reqs[i].out);
	kvfree(p);
}

static struct cider_kv_req *cider_kv_pool_take(struct cider_kv_pool *p)
{
	struct cider_kv_req *r;

	spin_lock_bh(&p->lock);
	r = list_first_entry_or_null(&p->free, struct cider_kv_req, free);
	if (r)
		list_del_init(&r->free);
	spin_unlock_bh(&p->lock);
	return r;
}

/* A request fresh for one operation on @mn, whose reference it takes over. */
static void cider_kv_req_init(struct cider_kv_req *r, struct cider_mn *mn)
{
	refcount_set(&r->ref, 1);
	r->mn = mn;
	r->ks = NULL;
	r->op = 0;
	r->got_len = 0;
	r->result = 0;
	r->complete = NULL;
	init_completion(&r->done);
	INIT_LIST_HEAD(&r->node);
	r->born = ktime_get_ns();
	spin_lock_bh(&cider_kv_reqs_lock);
	list_add_tail(&r->live, &cider_kv_reqs);
	spin_unlock_bh(&cider_kv_reqs_lock);
}

struct cider_kv_req *cider_kv_req_get(struct cider_mn *mn, bool nowait)
{
	struct cider_kv_pool *p = cider_kvs_pool(mn);
	unsigned long wait = msecs_to_jiffies(READ_ONCE(cider_op_timeout_ms));
	struct cider_kv_req *r = NULL;
	long left;

	if (!p)
		return ERR_PTR(-EOPNOTSUPP);	/* no KV store on this node */
	r = cider_kv_pool_take(p);
	if (!r && nowait)
		return ERR_PTR(-EAGAIN);
	if (!r) {
		/* Bounded as the wait for a slot (kv.rst: EAGAIN). */
		left = wait_event_killable_timeout(p->wait, (r = cider_kv_pool_take(p)) != NULL,
						   wait);
		if (left < 0)
			return ERR_PTR(-EINTR);
		if (!r)
			return ERR_PTR(-EAGAIN);
	}
	cider_kv_req_init(r, mn);
	return r;
}

void cider_kv_req_put(struct cider_kv_req *r)
{
	struct cider_kv_pool *p = r->pool;
	struct cider_mn *mn = r->mn;

	if (!refcount_dec_and_test(&r->ref))
		return;
	spin_lock_bh(&cider_kv_reqs_lock);
	list_del(&r->live);
	spin_unlock_bh(&cider_kv_reqs_lock);
	spin_lock_bh(&p->lock);
	list_add(&r->free, &p->free);
	spin_unlock_bh(&p->lock);
	wake_up(&p->wait);
	/* Last: the pool goes with the node's last reference. */
	cider_mn_put(mn);
}

int cider_kv_req_out_room(struct cider_kv_req *r)
{
	u32 want = r->val_len, need;
	void *v;

	if (want <= r->out_cap)
		return 0;
	need = min_t(u32, roundup_pow_of_two(max_t(u32, want, 64)),
		     max_t(u32, r->pool->val_max, want));
	v = kvmalloc(need, GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	kvfree(r->out);
	r->out = v;
	r->out_cap = need;
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
	struct cider_kv_req *r;

	spin_lock_bh(&cider_kv_reqs_lock);
	list_for_each_entry(r, &cider_kv_reqs, live) {
		seq_printf(m, "req mn%u%s op %u age %llu ms refs %u result %d", r->store,
			   cider_mn_listed(r->mn) ? "" : " (unlisted)", r->op,
			   div_u64(now - r->born, NSEC_PER_MSEC), refcount_read(&r->ref),
			   r->result);
		cider_kvs_req_show_slot(m, r);
	}
	spin_unlock_bh(&cider_kv_reqs_lock);
}
