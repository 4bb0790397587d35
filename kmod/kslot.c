// SPDX-License-Identifier: GPL-2.0
/*
 * The slot machine (kvshard.h): how an operation claims a slot of its
 * key's shard, runs through the core, ends (by the core, by its bound,
 * by the store's death) and gives the slot back, and how a slot whose
 * client died comes back.  Every step runs under the shard's lock and
 * goes through cider_kslot_set_state(), which knows which step may
 * follow which.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jhash.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "kvscan.h"
#include "kvshard.h"
#include "mn.h"
#include "params.h"

const char *const cider_kslot_state_names[CIDER_KSLOT_NR_STATES] = {
	CIDER_KSLOT_STATES(CIDER_VOCAB_NAME)
};

/* Which states may follow each (vocab.h). */
#define S(x) BIT(CIDER_KSLOT_##x)
static const u8 cider_kslot_next[CIDER_KSLOT_NR_STATES] = { CIDER_KSLOT_STATES(CIDER_KSLOT_NEXT) };
#undef S

void cider_kslot_set_state(struct cider_kslot *ks, enum cider_kslot_state s)
{
	lockdep_assert_held(&ks->sh->lock);
	WARN_ONCE(!(cider_kslot_next[ks->state] & BIT(s)), "cider: slot %s -> %s\n",
		  cider_kslot_state_names[ks->state], cider_kslot_state_names[s]);
	ks->state = s;
}

/* The errno of each of the core's results (core/vocab.h). */
static const int cider_kvs_errno[CIDER_RES_NR] = { CIDER_RESULTS(CIDER_RES_ERRNO) };

/*
 * The counter a request's result goes to: the core's result it means
 * (OK .. UNKNOWN); anything else, whatever ended it, is FAILED.
 */
static unsigned int cider_kvs_res(int result)
{
	unsigned int r;

	for (r = CIDER_RES_OK; r < CIDER_RES_FAILED; r++)
		if (cider_kvs_errno[r] == result)
			return r;
	return CIDER_RES_FAILED;
}

/*
 * The operation ended: its result (and a GET's value, already in the
 * request's buffer) goes with the request, and the slot is the shard's
 * again at once: free, or dead until its client is revived, or orphaned
 * until its batch comes back (the batch buffer and block are its).
 */
static void cider_kslot_finish(struct cider_shard *sh, struct cider_kslot *ks, int result)
{
	struct cider_kv_req *r = ks->req;
	bool dead = cider_kslot_client(ks)->dead;

	sh->stats.ops[r->op][cider_kvs_res(result)]++;
	r->result = result;
	/* Not waited for: this may be the deadline's own callback. */
	hrtimer_try_to_cancel(&ks->deadline);
	if (dead && !ks->died_at)
		ks->died_at = ktime_get_ns();
	list_add_tail(&r->node, &sh->finished);
	r->ks = NULL;
	ks->req = NULL;
	sh->busy--;
	sh->freed = true;
	cider_kslot_set_state(ks, ks->state == CIDER_KSLOT_POSTED ? CIDER_KSLOT_ORPHAN :
				  dead ? CIDER_KSLOT_DEAD : CIDER_KSLOT_FREE);
}

static void cider_shard_run(struct cider_shard *sh);

/* Carry out what the core asked for, after the unlock. */
void cider_shard_flush(struct cider_shard *sh)
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
	freed = sh->freed;
	sh->freed = false;
	spin_unlock_bh(&sh->lock);
	if (freed)
		wake_up(&sh->slot_wait);

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

/* Run core operation @op on the slot's bytes (RUNNING). */
void cider_kslot_start(struct cider_shard *sh, struct cider_kslot *ks, u8 op)
{
	struct cider_kv_req *r = ks->req;
	struct cider_kv_args a = {
		.op = op, .key = ks->key, .key_len = r->key_len, .value = ks->val,
		.value_len = r->val_len, .opid = sh->opid++,
	};

	if (op == CIDER_SEARCH || op == CIDER_SCAN) {	/* straight into the request's buffer */
		a.value = NULL;
		a.value_len = 0;
		a.out = r->out;
		a.out_len = r->val_len;
		a.cursor = r->scan_pos;
		a.count = r->scan_count;
	}
	cider_client_start(cider_kslot_client(ks), &a);
}

/* Resume the slot's woken client from the run queue. */
void cider_kslot_wake(struct cider_shard *sh, struct cider_kslot *ks)
{
	if (list_empty(&ks->run))
		list_add_tail(&ks->run, &sh->runq);
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
			struct cider_client *c = cider_kslot_client(ks);

			list_del_init(&ks->run);
			if (ks->state == CIDER_KSLOT_RUNNING && !c->parked)
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

/*
 * An UPDATE ended: was it locked, and was its write covered by another's
 * (local or queue write combining)?  Installers are told apart by opid
 * among the shard's recent ones: a batch's members end with its writer.
 */
static void cider_kvs_count_update(struct cider_shard *sh, const struct cider_client *c)
{
	struct cider_kvs_stats *st = &sh->stats;
	u32 *seen = &st->wc_seen[c->writer % ARRAY_SIZE(st->wc_seen)];

	if (!cider_op_updates(c->op))
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

/*
 * The core ended the slot's operation (RUNNING, or POSTED when its bound
 * aborted it with a batch out).  PUT is an operation of the core: it
 * never ends NOTFOUND or EXISTS.
 */
void cider_kslot_done(struct cider_shard *sh, struct cider_kslot *ks)
{
	struct cider_client *c = cider_kslot_client(ks);
	int ret;

	if (WARN_ON_ONCE(ks->state != CIDER_KSLOT_RUNNING && ks->state != CIDER_KSLOT_POSTED))
		return;
	cider_kvs_count_update(sh, c);
	ks->req->got_len = c->got_len;
	/* While the store is here: the cursor is keyed by it. */
	if (c->op == CIDER_SCAN)
		ks->req->got_pos = cider_kv_scan_cursor(sh->kvs, c->got);
	/* Nothing it did took effect: say why it did not happen. */
	if (c->res == CIDER_RES_FAILED && ks->expired)
		ret = -ETIMEDOUT;
	else if (c->res == CIDER_RES_NONE)
		ret = -EIO;	/* a GET read a block of another key (kv.rst) */
	else
		ret = c->res < CIDER_RES_NR ? cider_kvs_errno[c->res] : -EIO;
	cider_kslot_finish(sh, ks, ret);
}

/*
 * An operation that will not be resumed (the store died) ends: the core
 * says whether it may have taken effect.  One with a batch out ends when
 * the batch comes back.
 */
void cider_kslot_abort(struct cider_shard *sh, struct cider_kslot *ks)
{
	if (ks->state == CIDER_KSLOT_RUNNING)
		cider_client_abort(cider_kslot_client(ks));
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
	pr_warn_ratelimited("mn%u shard %u slot %u: KV op %u past its bound of %llu ms, ended: %s, %s > %s > %s%s%s\n",
			    sh->kvs->mn->id, sh->index, (unsigned int)(ks - sh->slots),
			    ks->req->op, div_u64(cider_kvs_bound_ns(sh->kvs), NSEC_PER_MSEC),
			    cider_kslot_state_names[ks->state], cider_client_state_name(c),
			    cider_client_sub_state_name(c), cider_client_leaf_state_name(c),
			    c->parked ? ", parked" : "", c->dead ? ", client dead" : "");
	ks->expired = true;
	/* A client that lost its operation. */
	if (!c->busy || c->dead)
		cider_kslot_finish(sh, ks, -ETIMEDOUT);
	else
		cider_client_abort(c);	/* ->done ends the request */
}

static enum hrtimer_restart cider_kslot_deadline(struct hrtimer *t)
{
	struct cider_kslot *ks = container_of(t, struct cider_kslot, deadline);
	struct cider_shard *sh = ks->sh;

	spin_lock_bh(&sh->lock);
	/* Not a later operation of the slot: a stale callback sees its bound ahead. */
	if ((ks->state == CIDER_KSLOT_RUNNING || ks->state == CIDER_KSLOT_POSTED) &&
	    ktime_get_ns() >= ks->ends_at)
		cider_kslot_expire(sh, ks);
	cider_shard_flush(sh);
	return HRTIMER_NORESTART;
}

void cider_kslot_init(struct cider_kslot *ks, struct cider_shard *sh)
{
	ks->sh = sh;
	INIT_LIST_HEAD(&ks->run);
	hrtimer_init(&ks->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	ks->timer.function = cider_kslot_timer;
	hrtimer_init(&ks->deadline, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	ks->deadline.function = cider_kslot_deadline;
}

/* ---- an operation's way in ---- */

/*
 * The key's shard, from a hash of its first bytes and its length; the
 * copy of the whole key is checked against it (cider_kslot_fill()).
 */
static int cider_kvs_pick(struct cider_kvs *kvs, struct cider_kv_req *r,
			  struct cider_shard **shp)
{
	u8 head[CIDER_KVS_PICK_BYTES];
	u32 n = min_t(u32, r->key_len, sizeof(head));

	if (copy_from_user(head, r->ukey, n))
		return -EFAULT;
	*shp = kvs->shards[cider_kvs_pick_hash(head, r->key_len) % kvs->nr_shards];
	return 0;
}

/*
 * A slot whose client died (its operation failed or was ended by its
 * bound): its client comes back as a new incarnation once nothing of the
 * old one can act, no verb out (DEAD, not ORPHAN) and a lease since it
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

/* A slot, claimed for @r (FILLING): 1, 0 none free, -ENOTCONN store dead. */
static int cider_shard_claim(struct cider_shard *sh, struct cider_kv_req *r)
{
	unsigned int i;
	bool down;
	int dead;

	spin_lock_bh(&sh->lock);
	dead = cider_shard_dead(sh);
	/* Its node reconnects: no slot now (cider_shard_claim_wait() waits). */
	down = cider_kvs_down(sh->kvs);
	for (i = 0; !dead && !down && i < sh->kvs->nr_slots; i++) {
		struct cider_kslot *ks = &sh->slots[i];

		if (ks->state != CIDER_KSLOT_FREE && ks->state != CIDER_KSLOT_DEAD)
			continue;
		if (ks->state == CIDER_KSLOT_DEAD && !cider_kslot_revive(sh, ks))
			continue;
		cider_kslot_set_state(ks, CIDER_KSLOT_FILLING);
		ks->req = r;
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
 * after it died with nobody to say so, hence a look every lease.  While
 * the node reconnects no slot is given; past the bound that is
 * -ENOTCONN, the operation did not happen.
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
			return cider_kvs_down(sh->kvs) ? -ENOTCONN : -EAGAIN;
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
static int cider_kslot_val_room(struct cider_kslot *ks, const struct cider_kv_req *r,
				bool nowait)
{
	/* At least 8: the array store's values (val_max >= 8 >= val_len). */
	bool reads = r->op == CIDER_KV_GET || r->op == CIDER_KV_SCAN;
	u32 want = reads ? 0 : max_t(u32, r->val_len, 8), need;
	void *v;

	if (want <= ks->val_cap)
		return 0;
	need = min_t(u32, roundup_pow_of_two(max_t(u32, want, 64)), ks->sh->kvs->val_max);
	/* kvmalloc() without GFP_KERNEL is kmalloc() alone: no sleep. */
	v = kvmalloc(need, nowait ? GFP_NOWAIT | __GFP_NOWARN : GFP_KERNEL);
	if (!v)
		return nowait ? -EAGAIN : -ENOMEM;
	kvfree(ks->val);
	ks->val = v;
	WRITE_ONCE(ks->val_cap, need);	/* debugfs reads it under the lock */
	return 0;
}

/* The bytes, once, into the claimed slot (process context, may fault). */
static int cider_kslot_fill(struct cider_kslot *ks, struct cider_kv_req *r, bool nowait)
{
	int ret = cider_kslot_val_room(ks, r, nowait);

	if (ret)
		return ret;
	if (copy_from_user(ks->key, r->ukey, r->key_len))
		return -EFAULT;
	/*
	 * The caller changed the key between the two copies: it would run on
	 * a shard other nodes' INVALs for it do not reach (kvfabric.c).
	 */
	if (cider_kvs_pick_hash(ks->key, r->key_len) % ks->sh->kvs->nr_shards != ks->sh->index)
		return -EINVAL;
	if (r->op != CIDER_KV_GET && r->op != CIDER_KV_SCAN && r->val_len &&
	    copy_from_user(ks->val, r->uval, r->val_len))
		return -EFAULT;
	return 0;
}

/* By CIDER_KV_*, from 1 (vocab.h; the order asserted here). */
enum { CIDER_KV_INDEX_NONE, CIDER_KV_OPS(CIDER_KV_OP_INDEX) };
CIDER_KV_OPS(CIDER_KV_OP_CHECK)
static const u8 cider_kvs_core_op[] = { 0, CIDER_KV_OPS(CIDER_KV_CORE_OP) };

/* Filled: run it, unless the copy failed or the store died meanwhile. */
static int cider_kslot_run(struct cider_kslot *ks, struct cider_kv_req *r, int filled)
{
	struct cider_shard *sh = ks->sh;
	int ret;

	spin_lock_bh(&sh->lock);
	/* Its node lost meanwhile: it never ran, and the caller may retry. */
	ret = filled ?: cider_shard_dead(sh) || cider_kvs_down(sh->kvs) ? -ENOTCONN : 0;
	if (ret) {
		/* It never ran: free again at once. */
		r->ks = NULL;
		ks->req = NULL;
		sh->busy--;
		cider_kslot_set_state(ks, CIDER_KSLOT_FREE);
		spin_unlock_bh(&sh->lock);
		wake_up(&sh->slot_wait);
		return ret;
	}
	cider_kslot_set_state(ks, CIDER_KSLOT_RUNNING);
	refcount_inc(&r->ref);		/* the store's, until it completes */
	ks->expired = false;
	ks->ends_at = ktime_get_ns() + cider_kvs_bound_ns(sh->kvs);
	r->ends_at = ks->ends_at;
	hrtimer_start(&ks->deadline, ns_to_ktime(ks->ends_at), HRTIMER_MODE_ABS_SOFT);
	cider_kslot_start(sh, ks, cider_kvs_core_op[r->op]);
	cider_shard_flush(sh);
	return 0;
}

int cider_kvs_submit(struct cider_mn *mn, struct cider_kv_req *r, bool nowait)
{
	struct cider_kvs *kvs = cider_kvs_of(mn);
	struct cider_shard *sh;
	int ret;

	if (!kvs)
		return -ENOTCONN;
	if (r->key_len > kvs->key_max ||
	    (r->op != CIDER_KV_SCAN && r->val_len > kvs->val_max))
		return -EINVAL;		/* kv.c checked: never */
	ret = cider_kvs_pick(kvs, r, &sh);
	if (!ret && (r->op == CIDER_KV_GET || r->op == CIDER_KV_SCAN))
		ret = cider_kv_req_out_room(r, nowait);
	if (!ret)
		ret = cider_shard_claim_wait(sh, r, nowait);
	if (ret)
		return ret;
	return cider_kslot_run(r->ks, r, cider_kslot_fill(r->ks, r, nowait));
}
