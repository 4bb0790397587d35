// SPDX-License-Identifier: GPL-2.0
/*
 * Writing a key's data pointer by CAS: the optimistic update (UPDATE, PUT
 * and DELETE in osync, and under a lock or as an executor in the other modes)
 * and INSERT, optimistic in every mode.  A write prepares its block
 * (allocated, then written together with the first CAS) and follows
 * whatever other writers leave in the pointer.
 */
#include "verbs.h"

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
 * The size class of the block for (c->klen, c->wvlen).  A length no class
 * holds ends the operation with CIDER_RES_NOSPC; (u32)-1 would index past
 * the class table.
 */
static bool cider_block_set_class(struct cider_client *c)
{
	int cls = cider_block_class(c->klen, c->wvlen);

	if (cls < 0) {
		c->res = CIDER_RES_NOSPC;
		return false;
	}
	c->cls = (u32)cls;
	return true;
}

/* Has this optimistic UPDATE lost often enough to join the queue? */
static bool cider_write_escalates(const struct cider_client *c)
{
	return !c->pess && cider_op_updates(c->op) &&
	       cider_cont_escalate(c->cn, c->sub.write.retries);
}

void cider_write_init(struct cider_client *c)
{
	c->sub.write.state = CIDER_WRITE_BEGIN;
	c->outcome = CIDER_OUT_OK;
}

static enum cider_step cider_write_begin(struct cider_client *c)
{
	struct cider_write *w = &c->sub.write;

	w->retries = 0;
	w->blk = 0;
	w->waited = 0;
	w->state = CIDER_WRITE_CHECK;
	if (c->op == CIDER_DELETE)
		return CIDER_STEP_NEXT;
	cider_lwc_close(c);
	if (cider_hashed(c) && !cider_block_set_class(c))
		return CIDER_STEP_DONE;
	cider_alloc_init(c);
	w->state = CIDER_WRITE_ALLOC;
	return CIDER_STEP_NEXT;
}

/* Stop without writing: @res, or an outcome (RELOCATE, ESCALATE) set. */
static enum cider_step cider_write_stop(struct cider_client *c, u8 res)
{
	if (res != CIDER_RES_NONE)
		c->res = res;
	cider_block_unused(c, &c->sub.write.blk);
	return CIDER_STEP_DONE;
}

/* Every CN the INVALs went to answered them. */
static bool cider_write_all_acked(const struct cider_client *c)
{
	return c->sub.write.acks >= c->sub.write.invals;
}

/* Woken while waiting out a lease: the timer, or early by a message. */
static enum cider_step cider_write_leased(struct cider_client *c)
{
	struct cider_write *w = &c->sub.write;
	u64 now = cider_now(c);

	if (!cider_write_all_acked(c)) {
		if (now < w->lease_end)
			return cider_sleep(c, w->lease_end - now);
		c->st.lease_expired++;
	}
	w->waited = c->ptr;
	w->state = CIDER_WRITE_CHECK;
	return CIDER_STEP_NEXT;
}

/*
 * End the rights on c->ptr: every one was taken by a READ or CAS that
 * executed before the WAITING bit was set, which is before now.  Each CN
 * that answers this INVAL has dropped its own; any other's ends within a
 * lease of now by its CN's clock, and the margin covers the clocks'
 * drift (cache.h).
 */
static enum cider_step cider_write_lease_wait(struct cider_client *c)
{
	const struct cider_cfg *cfg = cider_cfg_of(c);
	struct cider_write *w = &c->sub.write;
	u64 wait = cfg->cache_lease_ns + cfg->cache_margin_ns, now = cider_now(c);
	struct cider_msg m = {
		.type = CIDER_MSG_INVAL, .laddr = c->paddr, .ptr = c->key,
		.from_cn = c->cn->id, .from_slot = c->index,
	};
	const struct cider_fabric *fab = c->cn->fab;

	c->st.lease_waits++;
	if (!c->lease_since)
		c->lease_since = now;
	w->lease_end = now + wait;
	w->acks = 0;
	m.from_ticket = ++c->inval_seq;
	/* Its own CN first, then every other: all answer, or it waits the lease. */
	cider_cache_inval(c->cn, c->key, now);
	w->invals = fab->ops->broadcast ? fab->ops->broadcast(fab->priv, c->cn, &m) : ~0U;
	w->state = CIDER_WRITE_LEASE;
	if (cider_write_all_acked(c))		/* nobody else to ask */
		return cider_write_leased(c);
	return cider_sleep(c, wait);
}

/* An INVAL_ACK for @c, in its write: true when it completes the set (wake it). */
bool cider_write_inval_acked(struct cider_client *c, u32 seq)
{
	if (seq != c->inval_seq || c->sub.write.state != CIDER_WRITE_LEASE)
		return false;
	c->sub.write.acks++;
	return cider_write_all_acked(c);
}

/*
 * Readers hold a lease on the word (cache.h): stop new ones (the WAITING
 * bit, unless another writer set it), wait the old ones out, then CAS the
 * word waited on.
 */
static enum cider_step cider_write_revoke(struct cider_client *c)
{
	struct cider_write *w = &c->sub.write;

	if (cider_w_waiting(c, c->ptr))
		return cider_write_lease_wait(c);
	cider_v_reset(c);
	cider_v_cas(c, c->paddr, c->ptr, c->ptr | cider_w_waiting_bit(c));
	w->state = CIDER_WRITE_REVOKE;
	return CIDER_STEP_POSTED;
}

static enum cider_step cider_write_revoked(struct cider_client *c)
{
	struct cider_write *w = &c->sub.write;
	u64 old = c->v[0].old;

	if (old != c->ptr) {		/* written, or leased anew: look again */
		c->st.cas_fail++;
		c->ptr = old;
		w->state = CIDER_WRITE_CHECK;
		return CIDER_STEP_NEXT;
	}
	c->st.lease_revokes++;
	c->ptr |= cider_w_waiting_bit(c);
	return cider_write_lease_wait(c);
}

/*
 * Under a lock, leases must not stretch the hold past what the others'
 * lease on the lock allows (they reset a lock held a lease): after a
 * quarter of it spent on leases (each at most an eighth: proto.h), the
 * holder gives up, releases and starts over; its write was not done.
 */
static bool cider_write_held_too_long(const struct cider_client *c)
{
	return c->state != CIDER_OP_OPTIMISTIC && c->lease_since &&
	       cider_now(c) - c->lease_since > cider_cfg_of(c)->lease_ns / 4;
}

/* c->ptr holds the key (else stop): CAS it to the new block or to empty. */
static enum cider_step cider_write_try(struct cider_client *c)
{
	struct cider_write *w = &c->sub.write;

	if (cider_hashed(c) && !cider_slot_is(c, c->ptr)) {
		/* The slot no longer holds this key: find it again. */
		c->outcome = CIDER_OUT_RELOCATE;
		return cider_write_stop(c, CIDER_RES_NONE);
	}
	/*
	 * A batch was combined while its key was present: gone now (only a
	 * lock reset lets a DELETE in), the members' own ops (UPDATE or PUT)
	 * decide what absent means to each, so all start over.
	 */
	if (!cider_w_off(c, c->ptr) && c->state == CIDER_OP_EXEC_WRITE && c->batch > 1) {
		c->outcome = CIDER_OUT_RELOCATE;
		return cider_write_stop(c, CIDER_RES_NONE);
	}
	/* A PUT installs over an absent key too (array: the same word). */
	if (!cider_w_off(c, c->ptr) && c->op != CIDER_PUT)
		return cider_write_stop(c, CIDER_RES_NOTFOUND);
	if (cider_write_escalates(c)) {
		/*
		 * Only now: c->ptr is known to hold the key.  A hash slot that
		 * changed keys must be found again, not queued on (the soak
		 * found writes combined into another key's).
		 */
		c->outcome = CIDER_OUT_ESCALATE;	/* to the lock queue (contention.c) */
		return cider_write_stop(c, CIDER_RES_NONE);
	}
	if (cider_w_leased(c, c->ptr) && w->waited != c->ptr) {
		if (cider_write_held_too_long(c)) {
			c->outcome = CIDER_OUT_RESTART;
			return cider_write_stop(c, CIDER_RES_NONE);
		}
		return cider_write_revoke(c);
	}
	cider_v_reset(c);
	if (c->op != CIDER_DELETE) {
		if (!w->retries && cider_hashed(c) && !cider_block_build(c, w->blk))
			return cider_write_stop(c, CIDER_RES_NOSPC);
		else if (!w->retries && !cider_hashed(c))
			cider_v_write(c, w->blk, c->key, cider_le64(c->wval, 8));
		/*
		 * A write that ends a lease advances the version, as a DELETE
		 * does: a writer that waited for one lease's end cannot CAS
		 * the same word value leased anew after its block was reused
		 * (the simulator found that ABA) unless 4,095 more such
		 * writes and DELETEs came in between, each a lease, an INVAL
		 * round and a write long; the version rule rests on the same
		 * 12 bits (kv.h).
		 */
		w->cmp = cider_w_make(c, cider_w_ver(c, c->ptr) + cider_w_leased(c, c->ptr),
				      w->blk);
	} else {
		w->cmp = cider_w_make(c, cider_w_ver(c, c->ptr) + 1, 0);
	}
	cider_v_cas(c, c->paddr, c->ptr, w->cmp);
	c->exposed = true;	/* the pointer may change from here on */
	w->state = CIDER_WRITE_CAS;
	return CIDER_STEP_POSTED;
}

/* The CAS completed: done, or follow the word it found. */
static enum cider_step cider_write_cas(struct cider_client *c)
{
	const struct cider_cfg *cfg = cider_cfg_of(c);
	struct cider_write *w = &c->sub.write;
	struct cider_cn *cn = c->cn;
	u64 old = c->v[c->nv - 1].old;

	if (cfg->backoff)
		cider_backoff_account(&cn->backoff, w->retries > 0, cider_now(c));
	if (old == c->ptr) {
		/* The replaced (or removed) block is unreachable now: recycle it. */
		cider_block_unlinked(c, c->ptr);
		w->blk = 0;
		c->ptr = w->cmp;
		c->res = CIDER_RES_OK;
		c->writer = c->op == CIDER_DELETE ? c->opid : c->wop;
		return CIDER_STEP_DONE;
	}
	w->retries++;
	c->st.cas_fail++;
	c->ptr = old;
	w->waited = 0;
	w->state = CIDER_WRITE_CHECK;
	if (cider_write_escalates(c))
		return CIDER_STEP_NEXT;		/* no backoff: to the queue, once checked */
	if (!cfg->backoff || c->pess)		/* backoff is for optimistic writes */
		return CIDER_STEP_NEXT;
	w->state = CIDER_WRITE_BACKOFF;
	return cider_sleep(c, cider_backoff_delay(&cn->backoff, w->retries - 1, cider_rand(c)));
}

static enum cider_step cider_write_once(struct cider_client *c)
{
	struct cider_write *w = &c->sub.write;
	enum cider_step r;

	switch (w->state) {
	case CIDER_WRITE_BEGIN:
		return cider_write_begin(c);
	case CIDER_WRITE_ALLOC:
		r = cider_alloc_step(c);
		if (r != CIDER_STEP_DONE)
			return r;
		w->blk = c->leaf.alloc.blk;
		if (!w->blk) {
			c->res = CIDER_RES_NOSPC;
			return CIDER_STEP_DONE;
		}
		w->state = CIDER_WRITE_CHECK;
		return CIDER_STEP_NEXT;
	case CIDER_WRITE_CHECK:
		if (cider_w_off(c, c->ptr) || !c->ptr_hint)
			return cider_write_try(c);
		/*
		 * A hint (from the queue) may seed a CAS but never decide
		 * "absent": INSERTs are optimistic and take no lock.
		 */
		c->ptr_hint = false;
		cider_v_reset(c);
		cider_v_read(c, c->paddr, 8);
		w->state = CIDER_WRITE_HINT;
		return CIDER_STEP_POSTED;
	case CIDER_WRITE_HINT:
		c->ptr = c->v[0].data[0];
		return cider_write_try(c);
	case CIDER_WRITE_CAS:
		return cider_write_cas(c);
	case CIDER_WRITE_REVOKE:
		return cider_write_revoked(c);
	case CIDER_WRITE_LEASE:
		return cider_write_leased(c);
	case CIDER_WRITE_BACKOFF:
	default:
		w->state = CIDER_WRITE_CHECK;
		return CIDER_STEP_NEXT;
	}
}

/*
 * Install c->wval (UPDATE, PUT) or empty the key (DELETE) by CAS on the
 * data pointer, starting from c->ptr and following whatever optimistic writers
 * leave there.
 */
enum cider_step cider_write_step(struct cider_client *c)
{
	return cider_run(c, cider_write_once);
}

const char *cider_write_state_name(u8 state)
{
	static const char *const names[] = {
		CIDER_WRITE_STATES(CIDER_SUB_STATE_NAME)
	};

	return state < ARRAY_SIZE(names) ? names[state] : "write:?";
}

void cider_insert_init(struct cider_client *c)
{
	c->sub.insert.state = CIDER_INSERT_BEGIN;
	c->outcome = CIDER_OUT_OK;
}

/* The pointer c->ptr must be empty: CAS the new block in, else stop. */
static enum cider_step cider_insert_try(struct cider_client *c)
{
	struct cider_insert *in = &c->sub.insert;

	if (cider_w_off(c, c->ptr) && cider_hashed(c)) {
		/* Another key's INSERT took the empty slot first. */
		c->outcome = CIDER_OUT_RELOCATE;
		cider_block_unused(c, &in->blk);
		return CIDER_STEP_DONE;
	}
	if (cider_w_off(c, c->ptr)) {
		c->res = CIDER_RES_EXISTS;
		cider_block_unused(c, &in->blk);
		return CIDER_STEP_DONE;
	}
	in->cmp = cider_w_make(c, cider_w_ver(c, c->ptr), in->blk);
	cider_v_cas(c, c->paddr, c->ptr, in->cmp);
	c->exposed = true;
	in->state = CIDER_INSERT_CAS;
	return CIDER_STEP_POSTED;
}

/* The block is allocated: the first CAS goes with the block's WRITE. */
static enum cider_step cider_insert_alloced(struct cider_client *c)
{
	struct cider_insert *in = &c->sub.insert;

	in->blk = c->leaf.alloc.blk;
	if (!in->blk) {
		c->res = CIDER_RES_NOSPC;
		return CIDER_STEP_DONE;
	}
	cider_v_reset(c);
	if (cider_hashed(c) && !cider_block_build(c, in->blk)) {
		c->res = CIDER_RES_NOSPC;
		cider_block_unused(c, &in->blk);
		return CIDER_STEP_DONE;
	} else if (!cider_hashed(c)) {
		cider_v_write(c, in->blk, c->key, cider_le64(c->wval, 8));
	}
	return cider_insert_try(c);
}

static enum cider_step cider_insert_once(struct cider_client *c)
{
	struct cider_insert *in = &c->sub.insert;
	enum cider_step r;
	u64 old;

	switch (in->state) {
	case CIDER_INSERT_BEGIN:
		if (cider_hashed(c) && !cider_block_set_class(c))
			return CIDER_STEP_DONE;
		cider_alloc_init(c);
		in->state = CIDER_INSERT_ALLOC;
		return CIDER_STEP_NEXT;
	case CIDER_INSERT_ALLOC:
		r = cider_alloc_step(c);
		return r == CIDER_STEP_DONE ? cider_insert_alloced(c) : r;
	case CIDER_INSERT_CAS:
	default:
		old = c->v[c->nv - 1].old;
		if (old == c->ptr) {
			in->blk = 0;
			c->res = CIDER_RES_OK;
			c->writer = c->opid;
			return CIDER_STEP_DONE;
		}
		c->st.cas_fail++;
		c->ptr = old;
		cider_v_reset(c);
		return cider_insert_try(c);
	}
}

enum cider_step cider_insert_step(struct cider_client *c)
{
	return cider_run(c, cider_insert_once);
}

const char *cider_insert_state_name(u8 state)
{
	static const char *const names[] = {
		CIDER_INSERT_STATES(CIDER_SUB_STATE_NAME)
	};

	return state < ARRAY_SIZE(names) ? names[state] : "insert:?";
}
