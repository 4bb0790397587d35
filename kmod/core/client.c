// SPDX-License-Identifier: GPL-2.0
/*
 * A compute-node client running one KV operation at a time on the
 * pointer-array index (CIDER paper §4.4):
 *
 *   SEARCH  READ the data pointer, READ the block: lock-free in all modes.
 *   INSERT  optimistic in all modes: write the block, CAS the empty
 *           pointer.
 *   UPDATE  osync: write the block, CAS the pointer, retry on failure.
 *           caslock / mcs: the same under the key's lock.
 *           cider: optimistic or pessimistic by the key's credits
 *           (contention.c); pessimistic UPDATEs combine along the queue
 *           (writecomb.c).
 *   DELETE  CAS the pointer to empty with its version advanced; under the
 *           lock in caslock, mcs and cider (always the executor there).
 */
#include "core.h"

void cider_park(struct cider_client *c)
{
	c->parked = true;
	c->timer_fired = false;
}

void cider_arm(struct cider_client *c, u64 delay_ns)
{
	cider_park(c);
	c->token++;
	c->cn->fab->ops->timer(c->cn->fab->priv, c, delay_ns, c->token);
}

/* Resume a parked client soon (a message changed what it waits for). */
void cider_wake(struct cider_client *c)
{
	if (c->dead || !c->parked)
		return;
	c->parked = false;
	c->token++;		/* a pending timer is now stale */
	c->timer_fired = false;
	c->cn->fab->ops->wake(c->cn->fab->priv, c);
}

void cider_client_timer(struct cider_client *c, u32 token)
{
	if (c->dead || !c->parked || token != c->token)
		return;
	c->parked = false;
	c->timer_fired = true;
	cider_client_resume(c);
}

/*
 * Does hash slot word @w still hold this client's key?  Keys leave a slot
 * only by DELETE, which advances its version; UPDATEs keep version and
 * fingerprint.
 */
static bool cider_slot_is(const struct cider_client *c, u64 w)
{
	return !cider_slot_empty(w) && cider_slot_fp(w) == c->fp &&
	       cider_slot_ver(w) == c->lver;
}

/*
 * The size class of the block for (key, c->wvlen).  A length no class
 * holds ends the operation with CIDER_RES_NOSPC; (u32)-1 would index past
 * the class table.
 */
static bool cider_block_set_class(struct cider_client *c)
{
	int cls = cider_block_class(cfg_of(c)->key_len, c->wvlen);

	if (cls < 0) {
		c->res = CIDER_RES_NOSPC;
		return false;
	}
	c->cls = (u32)cls;
	return true;
}

/* Has this optimistic UPDATE lost often enough to join the queue? */
static bool cider_exec_escalates(const struct cider_client *c)
{
	return !c->pess && c->op == CIDER_UPDATE && cider_cont_escalate(c->cn, c->retries);
}

/*
 * Sub-protothread: install c->wval (UPDATE) or empty the key (DELETE) by
 * CAS on the data pointer, starting from c->ptr and following whatever
 * optimistic writers leave there.  c->retries counts the failed CASes.
 */
bool cider_exec_write(struct cider_client *c)
{
	const struct cider_cfg *cfg = cfg_of(c);
	struct cider_cn *cn = c->cn;
	u64 old;

	PT_BEGIN(&c->pt_l1);
	c->retries = 0;
	c->blk = 0;
	if (c->op == CIDER_UPDATE) {
		cider_lwc_close(c);
		if (cider_hashed(c) && !cider_block_set_class(c))
			PT_EXIT(&c->pt_l1);
		PT_SPAWN(&c->pt_l1, cider_alloc_block(c));
		if (!c->blk) {
			c->res = CIDER_RES_NOSPC;
			PT_EXIT(&c->pt_l1);
		}
	}
	for (;;) {
		if (!w_off(c, c->ptr) && c->ptr_hint) {
			/*
			 * A hint (from the queue) may seed a CAS but never decide
			 * "absent": INSERTs are optimistic and take no lock.
			 */
			c->ptr_hint = false;
			v_reset(c);
			v_read(c, c->paddr, 8);
			cider_post(c);
			PT_YIELD(&c->pt_l1);
			c->ptr = c->v[0].data[0];
		}
		if (cider_hashed(c) && !cider_slot_is(c, c->ptr)) {
			/* The slot no longer holds this key: find it again. */
			c->relocate = true;
			cider_block_unused(c);
			PT_EXIT(&c->pt_l1);
		}
		if (!w_off(c, c->ptr)) {
			c->res = CIDER_RES_NOTFOUND;
			cider_block_unused(c);
			PT_EXIT(&c->pt_l1);
		}
		if (cider_exec_escalates(c)) {
			/*
			 * Only now: c->ptr is known to hold the key.  A hash slot
			 * that changed keys must be found again, not queued on
			 * (the soak found writes combined into another key's).
			 */
			c->escalate = true;	/* to the lock queue (contention.c) */
			cider_block_unused(c);
			PT_EXIT(&c->pt_l1);
		}
		v_reset(c);
		if (c->op == CIDER_UPDATE) {
			if (!c->retries && cider_hashed(c) && !cider_block_build(c)) {
				c->res = CIDER_RES_NOSPC;
				cider_block_unused(c);
				PT_EXIT(&c->pt_l1);
			} else if (!c->retries && !cider_hashed(c)) {
				v_write(c, c->blk, c->key, c->wval);
			}
			c->cmp = w_make(c, w_ver(c, c->ptr), c->blk);
		} else {
			c->cmp = w_make(c, w_ver(c, c->ptr) + 1, 0);
		}
		v_cas(c, c->paddr, c->ptr, c->cmp);
		cider_post(c);
		PT_YIELD(&c->pt_l1);
		old = c->v[c->nv - 1].old;
		if (cfg->backoff)
			cider_backoff_account(&cn->backoff, c->retries > 0, cider_now(c));
		if (old == c->ptr)
			break;
		c->retries++;
		c->st.cas_fail++;
		c->ptr = old;
		if (cider_exec_escalates(c))
			continue;	/* no backoff: to the queue, once checked */
		if (cfg->backoff && !c->pess) {	/* optimistic: osync, cider */
			cider_arm(c, cider_backoff_delay(&cn->backoff, c->retries - 1,
							 cn->fab->ops->rand(cn->fab->priv)));
			PT_YIELD(&c->pt_l1);
		}
	}
	/* The replaced (or removed) block is unreachable now: recycle it. */
	cider_block_unlinked(c, c->ptr);
	c->blk = 0;
	c->ptr = c->cmp;
	c->res = CIDER_RES_OK;
	c->writer = c->op == CIDER_UPDATE ? c->wop : c->opid;
	PT_END(&c->pt_l1);
}

/* Sub-protothread: INSERT, optimistic in every mode. */
static bool cider_insert(struct cider_client *c)
{
	u64 old;

	PT_BEGIN(&c->pt_l1);
	if (cider_hashed(c) && !cider_block_set_class(c))
		PT_EXIT(&c->pt_l1);
	PT_SPAWN(&c->pt_l1, cider_alloc_block(c));
	if (!c->blk) {
		c->res = CIDER_RES_NOSPC;
		PT_EXIT(&c->pt_l1);
	}
	v_reset(c);
	if (cider_hashed(c) && !cider_block_build(c)) {
		c->res = CIDER_RES_NOSPC;
		cider_block_unused(c);
		PT_EXIT(&c->pt_l1);
	} else if (!cider_hashed(c)) {
		v_write(c, c->blk, c->key, c->val);
	}
	for (;;) {
		if (w_off(c, c->ptr) && cider_hashed(c)) {
			/* Another key's INSERT took the empty slot first. */
			c->relocate = true;
			cider_block_unused(c);
			PT_EXIT(&c->pt_l1);
		}
		if (w_off(c, c->ptr)) {
			c->res = CIDER_RES_EXISTS;
			cider_block_unused(c);
			PT_EXIT(&c->pt_l1);
		}
		c->cmp = w_make(c, w_ver(c, c->ptr), c->blk);
		v_cas(c, c->paddr, c->ptr, c->cmp);
		cider_post(c);
		PT_YIELD(&c->pt_l1);
		old = c->v[c->nv - 1].old;
		if (old == c->ptr)
			break;
		c->st.cas_fail++;
		c->ptr = old;
		v_reset(c);
	}
	c->blk = 0;
	c->res = CIDER_RES_OK;
	c->writer = c->opid;
	PT_END(&c->pt_l1);
}

/* Should this UPDATE or DELETE take the lock? */
static bool cider_pessimistic(struct cider_client *c)
{
	switch (cfg_of(c)->mode) {
	case CIDER_MODE_OSYNC:
		return false;
	case CIDER_MODE_CIDER:
		return c->op == CIDER_DELETE || cider_cont_pessimistic(c->cn, c->key);
	default:
		return true;
	}
}

static bool cider_op_run(struct cider_client *c)
{
	const struct cider_cfg *cfg = cfg_of(c);
	struct cider_qnode *q;

	PT_BEGIN(&c->pt_op);
again:
	c->restart = false;
	c->relocate = false;
	c->ptr_hint = false;
	c->escalate = false;
	c->nf_at_read = false;
	c->res = CIDER_RES_NONE;
	c->batch = 1;
	c->wval = c->val;
	c->wvlen = c->vlen;
	c->wop = c->opid;
	if (c->op == CIDER_UPDATE && cfg->local_wc && !c->lw && !c->fenced &&
	    cider_lwc_join(c)) {
		c->lw_member = true;
		while (c->lw_member) {
			cider_park(c);
			PT_YIELD(&c->pt_op);
		}
		if (c->res != CIDER_RES_NONE) {		/* combined on this CN */
			c->batch = 2;
			c->lw = NULL;
			PT_EXIT(&c->pt_op);
		}
		if (!cider_lwc_is_combiner(c)) {
			c->lw = NULL;			/* the combiner died */
			goto again;
		}
	}

	if (c->late >= CIDER_LATE_READS && !c->fenced)
		PT_SPAWN(&c->pt_op, cider_fence_enter(c));
	PT_SPAWN(&c->pt_op, cider_locate(c));
	if (c->relocate)
		goto again;
	if (c->fenced && c->op != CIDER_SEARCH && c->op != CIDER_INSERT)
		PT_SPAWN(&c->pt_op, cider_fence_leave(c));

	if (c->op == CIDER_SEARCH) {
		if (!c->found) {
			c->res = CIDER_RES_NOTFOUND;
			goto done;
		}
		if (!cider_hashed(c)) {		/* the hash index read it already */
			v_reset(c);
			v_read(c, w_off(c, c->ptr), 16);
			cider_post(c);
			PT_YIELD(&c->pt_op);
			c->got = c->v[0].data[1];
		}
		/*
		 * The reclamation rule (slab.h): bytes read more than half a
		 * grace period after the pointer may be a reused block's.
		 */
		if (!c->fenced && cider_now(c) - c->t0 > cfg->grace_ns / 2) {
			c->read_retries++;
			c->late++;
			goto again;
		}
		/* Within the rule, the block is the key's: else the checker flags it. */
		c->res = cider_hashed(c) || c->v[0].data[0] == c->key ? CIDER_RES_OK :
			 CIDER_RES_NONE;
		goto done;
	}
	if (c->op == CIDER_INSERT && !cider_hashed(c)) {
		PT_SPAWN(&c->pt_op, cider_insert(c));
		goto done;
	}
	if (c->op == CIDER_INSERT) {
		/* One INSERT of a key at a time: two could claim two slots. */
		cider_locate_ilock(c);
		PT_SPAWN(&c->pt_op, cider_caslock_acquire(c));
		do {
			if (c->late >= CIDER_LATE_READS && !c->fenced)
				PT_SPAWN(&c->pt_op, cider_fence_enter(c));
			PT_SPAWN(&c->pt_op, cider_locate(c));
			if (c->relocate)
				continue;
			if (c->found)
				c->res = CIDER_RES_EXISTS;
			else if (!c->paddr)
				c->res = CIDER_RES_NOSPC;	/* both buckets full */
			else
				PT_SPAWN(&c->pt_op, cider_insert(c));
		} while (c->relocate);
		PT_SPAWN(&c->pt_op, cider_caslock_release(c));
		goto done;
	}
	if (!c->found) {
		c->res = CIDER_RES_NOTFOUND;
		c->nf_at_read = true;
		goto done;
	}
	c->pess = cider_pessimistic(c);
	if (c->op == CIDER_UPDATE) {
		c->st.updates++;
		c->st.pessimistic += c->pess;
	}
	if (!c->pess) {
		PT_SPAWN(&c->pt_op, cider_exec_write(c));
		if (c->relocate)
			goto again;
		if (!c->escalate) {
			if (cfg->mode == CIDER_MODE_CIDER)
				cider_cont_after_opt(c->cn, c->key, c->retries);
			goto done;
		}
		cider_cont_escalated(c->cn, c->key);
		c->pess = true;
		c->st.pessimistic++;
	}
	/*
	 * The local batch closes before the lock queue: once queued, this
	 * write may be covered by another CN's executor at any moment, and
	 * nobody may join a batch whose outcome is already decided.
	 */
	cider_lwc_close(c);
	if (cfg->mode == CIDER_MODE_CASLOCK) {
		c->caddr = c->laddr;
		PT_SPAWN(&c->pt_op, cider_caslock_acquire(c));
		PT_SPAWN(&c->pt_op, cider_exec_write(c));
		PT_SPAWN(&c->pt_op, cider_caslock_release(c));
		if (c->relocate)
			goto again;
		goto done;
	}

	PT_SPAWN(&c->pt_op, cider_lock_acquire(c));
	if (c->restart) {	/* a DELETE under way, a reset, or no qnode */
		cider_arm(c, cfg->backoff_t0_ns);
		PT_YIELD(&c->pt_op);
		goto again;
	}
	q = c->qn;
	if (q->ptr != c->ptr) {	/* the latest pointer the queue knows */
		c->ptr = q->ptr;
		c->ptr_hint = true;
	}
	if (q->state == CIDER_Q_COMBINED && c->op != CIDER_UPDATE) {
		/*
		 * Only UPDATEs combine.  A DELETE is queued last, but a client
		 * holding a pointer read before the version wrapped can queue
		 * behind it; if a batch then covers the DELETE, it did not
		 * happen: pass the result on and start over.
		 */
		cider_qnode_owner_done(q);
		c->qn = NULL;
		goto again;
	} else if (q->state == CIDER_Q_COMBINED) {		/* participant */
		c->res = q->result;
		c->writer = q->writer;
		c->batch = 2;
		cider_qnode_owner_done(q);
		c->qn = NULL;
	} else if (q->state == CIDER_Q_EXECUTOR) {
		c->batch = 2;
		PT_SPAWN(&c->pt_op, cider_exec_write(c));
		cider_wc_report(c);
		PT_SPAWN(&c->pt_op, cider_wc_passthru(c));
		if (c->restart) {
			c->restart = false;
			c->qn = NULL;
		} else {
			PT_SPAWN(&c->pt_op, cider_lock_release(c));
		}
	} else if (cfg->mode == CIDER_MODE_CIDER && q->next && c->op == CIDER_UPDATE) {
		/* coordinator: a DELETE with a successor just deletes and hands over */
		c->batch = 2;
		PT_SPAWN(&c->pt_op, cider_wc_coordinate(c));
		if (c->restart) {
			cider_arm(c, cfg->backoff_t0_ns);
			PT_YIELD(&c->pt_op);
			goto again;
		}
	} else {
		PT_SPAWN(&c->pt_op, cider_exec_write(c));
		PT_SPAWN(&c->pt_op, cider_lock_release(c));
		if (c->relocate)	/* released; the key moved: start over */
			goto again;
	}
	if (cfg->mode == CIDER_MODE_CIDER && c->op == CIDER_UPDATE)
		cider_cont_after_pess(c->cn, c->key, c->batch);
done:
	if (c->fenced)
		PT_SPAWN(&c->pt_op, cider_fence_leave(c));
	if (c->lw)
		cider_lwc_finish(c);
	PT_END(&c->pt_op);
}

void cider_client_resume(struct cider_client *c)
{
	if (c->dead || !c->busy)
		return;
	if (cider_op_run(c)) {
		c->busy = false;
		c->st.ops++;
		c->cn->fab->ops->done(c->cn->fab->priv, c);
	}
}

void cider_client_start(struct cider_client *c, u8 op, u64 key, u64 val, u32 vlen, u32 opid)
{
	c->op = op;
	c->key = key;
	c->val = val;
	c->vlen = vlen;
	c->opid = opid;
	c->writer = 0;
	c->got = 0;
	c->lw = NULL;
	c->lw_member = false;
	c->qn = NULL;
	c->mm_since = 0;
	c->late = 0;
	c->fenced = false;
	c->pt_op = 0;
	c->pt_l1 = 0;
	c->pt_l2 = 0;
	c->res = CIDER_RES_NONE;
	c->busy = true;
	cider_client_resume(c);
}

/* The client stops dead; its CN's agent (if alive) stays. */
void cider_client_crash(struct cider_client *c)
{
	c->dead = true;
	if (c->lw)
		cider_lwc_finish(c);
}

void cider_cn_init(struct cider_cn *cn, u32 id, const struct cider_cfg *cfg,
		   struct cider_fabric *fab, struct cider_client *clients,
		   struct cider_lwc *lwc, u32 nr_lwc,
		   struct cider_slab_ent *ring, u32 ring_cap)
{
	u32 i;

	memset(cn, 0, sizeof(*cn));
	cn->id = id;
	cn->cfg = cfg;
	cn->fab = fab;
	cn->clients = clients;
	cn->lwc = lwc;
	cn->nr_lwc = nr_lwc;
	memset(lwc, 0, sizeof(*lwc) * nr_lwc);
	cider_backoff_init(&cn->backoff, cfg->backoff_t0_ns, 10, 1000000, 0);
	/* The array's blocks are one size; the hash index's come in classes. */
	if (cfg->index == CIDER_INDEX_HASH)
		cider_slab_init(&cn->slab, CIDER_CLASS_MIN, CIDER_NR_CLASSES, cfg->chunk_size,
				cfg->grace_ns, ring, ring_cap);
	else
		cider_slab_init(&cn->slab, cfg->block_size, 1, cfg->chunk_size, cfg->grace_ns,
				ring, ring_cap);
	if (cfg->rfence)
		cider_slab_use_fence(&cn->slab);
	for (i = 0; i < cfg->clients_per_cn; i++) {
		memset(&clients[i], 0, sizeof(clients[i]));
		clients[i].id = id * cfg->clients_per_cn + i;
		clients[i].index = i;
		clients[i].cn = cn;
	}
}
