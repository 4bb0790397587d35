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
 *   PUT     UPDATE, and INSERT when the key is absent, in one operation:
 *           array: the write installs over the empty pointer as well;
 *           hash: an absent key takes INSERT's path, and one found there
 *           under the INSERT lock starts over as an UPDATE.  It retries
 *           only when another operation changed the key, so it never
 *           ends NOTFOUND or EXISTS.
 *
 * The operation is a state machine (enum cider_op_state) whose states
 * mostly name the sub-protocol it drives (sm.h); this file is the only
 * one that posts verbs, arms timers and wakes clients.
 */
#include "verbs.h"

/* Resume a parked client soon (a message changed what it waits for). */
static void cider_wake(struct cider_client *c)
{
	if (c->dead || !c->parked)
		return;
	c->parked = false;
	c->token++;		/* a pending timer is now stale */
	c->timer_fired = false;
	c->cn->fab->ops->wake(c->cn->fab->priv, c);
}

static void cider_wake_mask(struct cider_cn *cn, u64 mask)
{
	u32 i;

	for (i = 0; mask; i++, mask >>= 1)
		if (mask & 1)
			cider_wake(&cn->clients[i]);
}

/* The local WC batch this client combined is settled: wake who it says. */
static void cider_lwc_done(struct cider_client *c)
{
	struct cider_lwc_wake w = cider_lwc_finish(c);

	cider_wake_mask(c->cn, w.batch);
	cider_wake_mask(c->cn, w.next);
}

void cider_client_timer(struct cider_client *c, u32 token)
{
	if (c->dead || !c->parked || token != c->token)
		return;
	c->parked = false;
	c->timer_fired = true;
	cider_client_resume(c);
}

/* Should this UPDATE or DELETE take the lock? */
static bool cider_pessimistic(struct cider_client *c)
{
	switch (cider_cfg_of(c)->mode) {
	case CIDER_MODE_OSYNC:
		return false;
	case CIDER_MODE_CIDER:
		return c->op == CIDER_DELETE || cider_cont_pessimistic(c->cn, c->key);
	default:
		return true;
	}
}

static enum cider_step cider_op_goto(struct cider_client *c, u8 state)
{
	c->state = state;
	return CIDER_STEP_NEXT;
}

/* Announce on the reader fence first if this op's READs keep missing the rule. */
static enum cider_step cider_op_locate(struct cider_client *c, u8 fence_state, u8 locate_state)
{
	if (c->late >= CIDER_LATE_READS && !c->fenced) {
		cider_fence_init(c, true);
		return cider_op_goto(c, fence_state);
	}
	cider_locate_init(c);
	return cider_op_goto(c, locate_state);
}

/* A SCAN's page (on from c->got), on the fence first if its READs keep missing the rule. */
static enum cider_step cider_op_scan_go(struct cider_client *c)
{
	if (c->late >= CIDER_LATE_READS && !c->fenced) {
		cider_fence_init(c, true);
		return cider_op_goto(c, CIDER_OP_SCAN_FENCE);
	}
	cider_scan_init(c);
	return cider_op_goto(c, CIDER_OP_SCAN);
}

/* Start (or start over): UPDATEs may join a local WC batch first. */
static enum cider_step cider_op_again_next(struct cider_client *c)
{
	c->outcome = CIDER_OUT_OK;
	c->after = CIDER_OP_DONE;
	c->ptr_hint = false;
	c->absent_since = ~0ULL;
	c->res = CIDER_RES_NONE;
	c->batch = 1;
	c->wval = c->val;
	c->wvlen = c->vlen;
	c->wop = c->opid;
	if (c->op == CIDER_UPDATE && cider_cfg_of(c)->local_wc && !c->lw && !c->fenced &&
	    cider_lwc_join(c)) {
		c->lw_member = true;
		c->state = CIDER_OP_LWC_WAIT;
		return cider_park(c);
	}
	c->lease_since = 0;
	/* Under a right: no verb; DONE settles a lookup it led, the fence. */
	if (c->op == CIDER_SEARCH && cider_cache_serve(c))
		return cider_op_goto(c, CIDER_OP_DONE);
	if (c->op == CIDER_SEARCH && cider_cfg_of(c)->read_comb && !c->rc_leading &&
	    !c->fenced && cider_rc_join(c)) {
		c->state = CIDER_OP_RC_WAIT;
		return cider_park(c);
	}
	if (c->op == CIDER_SCAN)
		return cider_op_scan_go(c);
	return cider_op_locate(c, CIDER_OP_FENCE_ENTER, CIDER_OP_LOCATE);
}

/* Woken as a SEARCH that waited for another's lookup: its result, or lead. */
static enum cider_step cider_op_rc_wait_next(struct cider_client *c)
{
	if (c->rc_of >= 0)
		return cider_park(c);
	if (c->res != CIDER_RES_NONE)		/* answered by that lookup */
		return CIDER_STEP_DONE;
	return cider_op_locate(c, CIDER_OP_FENCE_ENTER, CIDER_OP_LOCATE);
}

/* Woken as a local WC member: combined, or combiner now, or alone again. */
static enum cider_step cider_op_lwc_wait_next(struct cider_client *c)
{
	if (c->lw_member)
		return cider_park(c);
	if (c->res != CIDER_RES_NONE) {		/* combined on this CN */
		c->batch = 2;
		c->lw = NULL;
		return CIDER_STEP_DONE;
	}
	if (!cider_lwc_is_combiner(c)) {
		c->lw = NULL;			/* the combiner died */
		return cider_op_goto(c, CIDER_OP_AGAIN);
	}
	return cider_op_locate(c, CIDER_OP_FENCE_ENTER, CIDER_OP_LOCATE);
}

/* SEARCH: the block is read; within the reclamation rule it is the key's. */
static enum cider_step cider_op_search_check(struct cider_client *c)
{
	/*
	 * The reclamation rule (slab.h): bytes read more than half a grace
	 * period after the pointer may be a reused block's.
	 */
	if (!c->fenced && cider_now(c) - c->t0 > cider_cfg_of(c)->grace_ns / 2) {
		c->read_retries++;
		c->late++;
		return cider_op_goto(c, CIDER_OP_AGAIN);
	}
	/* Within the rule, the block is the key's: else the checker flags it. */
	c->res = cider_hashed(c) || c->v[0].data[0] == c->key ? CIDER_RES_OK : CIDER_RES_NONE;
	if (!cider_hashed(c)) {
		c->got_len = 8;
		if (c->out)
			cider_put_le64(c->out, c->got, c->out_len);
	}
	if (!cider_cache_note(c))
		return cider_op_goto(c, CIDER_OP_DONE);
	/* A hot key's word unleased: lease it, the value kept if that works. */
	c->sub.mark_t = cider_now(c);
	cider_v_reset(c);
	cider_v_cas(c, c->paddr, c->ptr, c->ptr | cider_w_leased_bit(c));
	c->state = CIDER_OP_CACHE_MARK;
	return CIDER_STEP_POSTED;
}

static enum cider_step cider_op_cache_mark_next(struct cider_client *c)
{
	/*
	 * The bytes are the word's only if the CAS executed within the
	 * reclamation rule of the pointer's READ (a late one may have found
	 * the word again on a reused block), or the reader is on the fence.
	 */
	bool fresh = c->fenced || cider_now(c) - c->t0 <= cider_cfg_of(c)->grace_ns / 2;

	cider_cache_marked(c, c->v[0].old == c->ptr, fresh, c->sub.mark_t);
	return cider_op_goto(c, CIDER_OP_DONE);
}

static enum cider_step cider_op_search(struct cider_client *c)
{
	if (c->outcome != CIDER_OUT_OK) {
		c->res = CIDER_RES_NOTFOUND;
		return cider_op_goto(c, CIDER_OP_DONE);
	}
	if (cider_cache_refresh(c))	/* the word is the cached one's, leased */
		return cider_op_goto(c, CIDER_OP_DONE);
	if (cider_hashed(c) && c->sub.locate.cached)	/* no block in c->buf */
		return cider_op_goto(c, CIDER_OP_AGAIN);
	if (cider_hashed(c))		/* the hash index read it already */
		return cider_op_search_check(c);
	cider_v_reset(c);
	cider_v_read(c, cider_w_off(c, c->ptr), 16);
	c->state = CIDER_OP_SEARCH_READ;
	return CIDER_STEP_POSTED;
}

/* The key's lock, for a pessimistic UPDATE or DELETE. */
static enum cider_step cider_op_lock(struct cider_client *c)
{
	/*
	 * The local batch closes before the lock queue: once queued, this
	 * write may be covered by another CN's executor at any moment, and
	 * nobody may join a batch whose outcome is already decided.
	 */
	cider_lwc_close(c);
	if (cider_cfg_of(c)->mode == CIDER_MODE_CASLOCK) {
		c->caddr = c->laddr;
		cider_caslock_init(c, false);
		return cider_op_goto(c, CIDER_OP_CASLOCK);
	}
	cider_acquire_init(c);
	return cider_op_goto(c, CIDER_OP_ACQUIRE);
}

/* Hash INSERT: one INSERT of a key at a time, two could claim two slots. */
static enum cider_step cider_op_ilock(struct cider_client *c)
{
	cider_locate_ilock(c);
	cider_caslock_init(c, false);
	return cider_op_goto(c, CIDER_OP_ILOCK);
}

/* The key is located: on to what the operation does with it. */
static enum cider_step cider_op_located(struct cider_client *c)
{
	bool found = c->outcome == CIDER_OUT_OK;

	switch (c->op) {
	case CIDER_SEARCH:
		return cider_op_search(c);
	case CIDER_INSERT:
		if (!cider_hashed(c)) {
			cider_insert_init(c);
			return cider_op_goto(c, CIDER_OP_INSERT);
		}
		return cider_op_ilock(c);
	}
	if (!found && c->op == CIDER_PUT && cider_hashed(c)) {
		c->pess = false;		/* an INSERT, for a hash slot: no key lock */
		return cider_op_ilock(c);
	}
	if (!found && c->op != CIDER_PUT) {
		c->res = CIDER_RES_NOTFOUND;
		c->absent_since = c->t0;
		return cider_op_goto(c, CIDER_OP_DONE);
	}
	c->pess = cider_pessimistic(c);
	if (cider_op_updates(c->op)) {
		c->st.updates++;
		c->st.pessimistic += c->pess;
	}
	if (c->pess)
		return cider_op_lock(c);
	cider_write_init(c);
	return cider_op_goto(c, CIDER_OP_OPTIMISTIC);
}

/* Hash INSERT under its INSERT lock: located again (or relocating). */
static enum cider_step cider_op_ilocate_next(struct cider_client *c)
{
	bool found = c->outcome == CIDER_OUT_OK;

	if (c->outcome == CIDER_OUT_RELOCATE)
		return cider_op_goto(c, CIDER_OP_ILOOP);
	c->after = CIDER_OP_DONE;
	if (found && c->op == CIDER_PUT) {
		c->after = CIDER_OP_AGAIN;	/* present after all: an UPDATE, unlocked */
	} else if (found) {
		c->res = CIDER_RES_EXISTS;
	} else if (!c->paddr) {
		c->res = CIDER_RES_NOSPC;	/* both buckets full */
	} else {
		cider_insert_init(c);
		return cider_op_goto(c, CIDER_OP_IINSERT);
	}
	cider_caslock_init(c, true);
	return cider_op_goto(c, CIDER_OP_IUNLOCK);
}

/* The optimistic write is over: done, or escalated to the lock. */
static enum cider_step cider_op_optimistic_next(struct cider_client *c)
{
	if (c->outcome == CIDER_OUT_RELOCATE)
		return cider_op_goto(c, CIDER_OP_AGAIN);
	if (c->outcome != CIDER_OUT_ESCALATE) {
		if (cider_cfg_of(c)->mode == CIDER_MODE_CIDER)
			cider_cont_after_opt(c->cn, c->key, c->sub.write.retries);
		return cider_op_goto(c, CIDER_OP_DONE);
	}
	cider_cont_escalated(c->cn, c->key);
	c->pess = true;
	c->st.pessimistic++;
	return cider_op_lock(c);
}

/* A pessimistic UPDATE is over: Algorithm 1 learns its batch size. */
static enum cider_step cider_op_after_pess(struct cider_client *c)
{
	if (cider_cfg_of(c)->mode == CIDER_MODE_CIDER && cider_op_updates(c->op))
		cider_cont_after_pess(c->cn, c->key, c->batch);
	return cider_op_goto(c, CIDER_OP_DONE);
}

/* Start over after a pause: the lock was reset or busy. */
static enum cider_step cider_op_restart(struct cider_client *c)
{
	c->state = CIDER_OP_RESTART;
	return cider_sleep(c, cider_cfg_of(c)->backoff_t0_ns);
}

/* The lock queue gave c->qn a role: act on it. */
static enum cider_step cider_op_acquire_next(struct cider_client *c)
{
	struct cider_qnode *q = c->qn;

	if (c->outcome == CIDER_OUT_RESTART)	/* a reset, a lost result, or no qnode */
		return cider_op_restart(c);
	if (q->ptr != c->ptr) {	/* the latest pointer the queue knows */
		c->ptr = q->ptr;
		c->ptr_hint = true;
	}
	if (q->state == CIDER_Q_COMBINED) {		/* participant */
		c->res = q->result;
		c->writer = q->writer;
		c->batch = q->count;
		cider_qnode_owner_done(q);
		c->qn = NULL;
		if (c->res == CIDER_RES_NONE)	/* the executor had to start over */
			return cider_op_goto(c, CIDER_OP_AGAIN);
		return cider_op_after_pess(c);
	} else if (q->state == CIDER_Q_EXECUTOR) {
		c->batch = q->count;
		cider_write_init(c);
		return cider_op_goto(c, CIDER_OP_EXEC_WRITE);
	} else if (cider_cfg_of(c)->mode == CIDER_MODE_CIDER && q->granted_waiting &&
		   cider_op_updates(c->op)) {
		/* It waited: others may be queued behind it to combine with. */
		cider_coord_init(c);
		return cider_op_goto(c, CIDER_OP_COORD);
	}
	cider_write_init(c);
	return cider_op_goto(c, CIDER_OP_HOLD_WRITE);
}

/*
 * A holder's hash slot no longer holds its key: DELETEs and INSERTs of it
 * ran while it waited.  Releasing and queueing again would wait a whole
 * queue and likely find the same: the soak found a DELETE of a hot key
 * starving for seconds that way.  Locate it again under the lock instead.
 * While the lock is held nobody else can DELETE the key from this slot
 * (DELETEs are pessimistic), so once found here it stays: one look per
 * grant.
 */
static enum cider_step cider_op_hold_relocate(struct cider_client *c)
{
	c->held.paddr = c->paddr;
	c->held.laddr = c->laddr;
	c->held.ptr = c->ptr;
	cider_locate_init(c);
	return cider_op_goto(c, CIDER_OP_HOLD_LOCATE);
}

/*
 * Found in the held slot: write under the lock.  Absent: NOTFOUND (its
 * READ was made during the operation, under the lock), or for a PUT a
 * start over, into INSERT's path.  Elsewhere, or a late READ: release
 * the held lock as it was and start over.
 */
static enum cider_step cider_op_hold_locate_next(struct cider_client *c)
{
	bool here = c->outcome == CIDER_OUT_OK && c->laddr == c->held.laddr;

	if (here) {
		cider_write_init(c);
		return cider_op_goto(c, CIDER_OP_HOLD_WRITE);
	}
	if (c->outcome == CIDER_OUT_NOTFOUND && c->op != CIDER_PUT) {
		c->res = CIDER_RES_NOTFOUND;
		c->after = CIDER_OP_DONE;
	} else {
		c->after = CIDER_OP_AGAIN;
	}
	c->paddr = c->held.paddr;
	c->laddr = c->held.laddr;
	c->ptr = c->held.ptr;
	cider_release_init(c, c->qn->ticket, 1);
	return cider_op_goto(c, CIDER_OP_HOLD_RELEASE);
}

/* The result is known: leave the fence, settle the local WC batch. */
static enum cider_step cider_op_finish(struct cider_client *c)
{
	if (c->lw)
		cider_lwc_done(c);
	if (c->rc_leading)
		cider_wake_mask(c->cn, cider_rc_finish(c));
	return CIDER_STEP_DONE;
}

/*
 * What each state does once its child machine is done (or at once, for a
 * state without one): cider_op_<state>_next, in the table below.
 */
static enum cider_step cider_op_fence_enter_next(struct cider_client *c)
{
	cider_locate_init(c);
	return cider_op_goto(c, CIDER_OP_LOCATE);
}

static enum cider_step cider_op_locate_next(struct cider_client *c)
{
	if (c->outcome == CIDER_OUT_RELOCATE)
		return cider_op_goto(c, CIDER_OP_AGAIN);
	if (!c->fenced || c->op == CIDER_SEARCH || c->op == CIDER_INSERT ||
	    (c->op == CIDER_PUT && cider_hashed(c) && c->outcome != CIDER_OUT_OK))
		return cider_op_located(c);	/* INSERT's path keeps the fence */
	cider_fence_init(c, false);
	return cider_op_goto(c, CIDER_OP_FENCE_LEAVE);
}

static enum cider_step cider_op_fence_leave_next(struct cider_client *c)
{
	return cider_op_located(c);
}

static enum cider_step cider_op_search_read_next(struct cider_client *c)
{
	c->got = c->v[0].data[1];
	return cider_op_search_check(c);
}

static enum cider_step cider_op_insert_next(struct cider_client *c)
{
	return cider_op_goto(c, CIDER_OP_DONE);
}

static enum cider_step cider_op_ilock_next(struct cider_client *c)
{
	return cider_op_locate(c, CIDER_OP_IFENCE, CIDER_OP_ILOCATE);
}

static enum cider_step cider_op_iloop_next(struct cider_client *c)
{
	return cider_op_locate(c, CIDER_OP_IFENCE, CIDER_OP_ILOCATE);
}

static enum cider_step cider_op_ifence_next(struct cider_client *c)
{
	cider_locate_init(c);
	return cider_op_goto(c, CIDER_OP_ILOCATE);
}

static enum cider_step cider_op_iinsert_next(struct cider_client *c)
{
	if (c->outcome == CIDER_OUT_RELOCATE)
		return cider_op_goto(c, CIDER_OP_ILOOP);
	c->after = CIDER_OP_DONE;
	cider_caslock_init(c, true);
	return cider_op_goto(c, CIDER_OP_IUNLOCK);
}

/* A PUT that found its key under the INSERT lock: again, as an UPDATE. */
static enum cider_step cider_op_iunlock_next(struct cider_client *c)
{
	return cider_op_goto(c, c->after);
}

static enum cider_step cider_op_caslock_next(struct cider_client *c)
{
	cider_write_init(c);
	return cider_op_goto(c, CIDER_OP_CASLOCK_WRITE);
}

/* Did the write under a lock end without writing (start over)? */
static bool cider_op_write_undone(const struct cider_client *c)
{
	return c->outcome == CIDER_OUT_RELOCATE || c->outcome == CIDER_OUT_RESTART;
}

static enum cider_step cider_op_caslock_write_next(struct cider_client *c)
{
	c->after = cider_op_write_undone(c) ? CIDER_OP_AGAIN : CIDER_OP_DONE;
	cider_caslock_init(c, true);
	return cider_op_goto(c, CIDER_OP_CASUNLOCK);
}

static enum cider_step cider_op_casunlock_next(struct cider_client *c)
{
	return cider_op_goto(c, c->after);
}

static enum cider_step cider_op_restart_next(struct cider_client *c)
{
	return cider_op_goto(c, CIDER_OP_AGAIN);
}

/* Early release: report, and free the whole batch's tickets now. */
static enum cider_step cider_op_exec_write_next(struct cider_client *c)
{
	cider_wc_report(c);
	c->after = cider_op_write_undone(c) ? CIDER_OP_AGAIN : CIDER_OP_DONE;
	cider_release_init(c, c->qn->coord_ticket, c->qn->count);
	return cider_op_goto(c, CIDER_OP_EXEC_RELEASE);
}

static enum cider_step cider_op_exec_release_next(struct cider_client *c)
{
	if (c->after == CIDER_OP_AGAIN)	/* reported as not done: everyone starts over */
		return cider_op_goto(c, CIDER_OP_AGAIN);
	return cider_op_after_pess(c);
}

static enum cider_step cider_op_coord_next(struct cider_client *c)
{
	if (c->outcome == CIDER_OUT_RESTART)
		return cider_op_restart(c);
	if (c->sub.coord.members && c->res == CIDER_RES_NONE)
		return cider_op_goto(c, CIDER_OP_AGAIN);	/* the executor relocated */
	if (c->sub.coord.members)
		return cider_op_after_pess(c);
	cider_write_init(c);		/* nobody to combine with */
	return cider_op_goto(c, CIDER_OP_HOLD_WRITE);
}

static enum cider_step cider_op_hold_write_next(struct cider_client *c)
{
	if (c->outcome == CIDER_OUT_RELOCATE)
		return cider_op_hold_relocate(c);
	/* Readers' leases held it too long (write.c): release, start over. */
	c->after = c->outcome == CIDER_OUT_RESTART ? CIDER_OP_AGAIN : CIDER_OP_DONE;
	cider_release_init(c, c->qn->ticket, 1);
	return cider_op_goto(c, CIDER_OP_HOLD_RELEASE);
}

static enum cider_step cider_op_hold_release_next(struct cider_client *c)
{
	if (c->after == CIDER_OP_AGAIN)	/* released; the key moved: start over */
		return cider_op_goto(c, CIDER_OP_AGAIN);
	return cider_op_after_pess(c);
}

static enum cider_step cider_op_scan_fence_next(struct cider_client *c)
{
	cider_scan_init(c);
	return cider_op_goto(c, CIDER_OP_SCAN);
}

/* A page is done, or a READ missed the rule: READ that group again. */
static enum cider_step cider_op_scan_next(struct cider_client *c)
{
	if (c->outcome == CIDER_OUT_RELOCATE)
		return cider_op_scan_go(c);
	c->res = CIDER_RES_OK;
	return cider_op_goto(c, CIDER_OP_DONE);
}

static enum cider_step cider_op_done_next(struct cider_client *c)
{
	if (!c->fenced)
		return cider_op_finish(c);
	cider_fence_init(c, false);
	return cider_op_goto(c, CIDER_OP_DONE_FENCE);
}

static enum cider_step cider_op_done_fence_next(struct cider_client *c)
{
	return cider_op_finish(c);
}

/*
 * The child machines an operation drives: how to step one, and its state
 * (and its own child's, for the listing) by name.
 */
struct cider_child {
	enum cider_step (*step)(struct cider_client *c);
	const char *(*state_name)(const struct cider_client *c);
	const char *(*leaf_name)(const struct cider_client *c);	/* NULL: no child */
};

#define CIDER_CHILD_NAME(m)						\
static const char *cider_child_##m##_name(const struct cider_client *c)	\
{									\
	return cider_##m##_state_name(c->sub.m.state);			\
}

CIDER_CHILD_NAME(fence)
CIDER_CHILD_NAME(locate)
CIDER_CHILD_NAME(scan)
CIDER_CHILD_NAME(insert)
CIDER_CHILD_NAME(caslock)
CIDER_CHILD_NAME(write)
CIDER_CHILD_NAME(acquire)
CIDER_CHILD_NAME(release)
CIDER_CHILD_NAME(coord)

/* Only writes allocate, and only lock protocols wait on a qnode. */
static const char *cider_insert_leaf_name(const struct cider_client *c)
{
	if (c->sub.insert.state != CIDER_INSERT_ALLOC)
		return "";
	return cider_alloc_state_name(c->leaf.alloc.state);
}

static const char *cider_write_leaf_name(const struct cider_client *c)
{
	if (c->sub.write.state != CIDER_WRITE_ALLOC)
		return "";
	return cider_alloc_state_name(c->leaf.alloc.state);
}

static const char *cider_acquire_leaf_name(const struct cider_client *c)
{
	if (c->sub.acquire.state != CIDER_ACQUIRE_WAIT &&
	    c->sub.acquire.state != CIDER_ACQUIRE_FULL)
		return "";
	return cider_wait_state_name(c->leaf.wait.state);
}

static const char *cider_coord_leaf_name(const struct cider_client *c)
{
	if (c->sub.coord.state != CIDER_COORD_WAIT)
		return "";
	return cider_wait_state_name(c->leaf.wait.state);
}

#define CIDER_CHILD(m, leaf)						\
	static const struct cider_child cider_child_##m = {		\
		cider_##m##_step, cider_child_##m##_name, leaf		\
	}
CIDER_CHILD(fence, NULL);
CIDER_CHILD(locate, NULL);
CIDER_CHILD(scan, NULL);
CIDER_CHILD(insert, cider_insert_leaf_name);
CIDER_CHILD(caslock, NULL);
CIDER_CHILD(write, cider_write_leaf_name);
CIDER_CHILD(acquire, cider_acquire_leaf_name);
CIDER_CHILD(release, NULL);
CIDER_CHILD(coord, cider_coord_leaf_name);
/* CIDER_OP_STATES names each state's child in capitals. */
#define CIDER_OP_CHILD_NONE	NULL
#define CIDER_OP_CHILD_FENCE	(&cider_child_fence)
#define CIDER_OP_CHILD_LOCATE	(&cider_child_locate)
#define CIDER_OP_CHILD_SCAN	(&cider_child_scan)
#define CIDER_OP_CHILD_INSERT	(&cider_child_insert)
#define CIDER_OP_CHILD_CASLOCK	(&cider_child_caslock)
#define CIDER_OP_CHILD_WRITE	(&cider_child_write)
#define CIDER_OP_CHILD_ACQUIRE	(&cider_child_acquire)
#define CIDER_OP_CHILD_RELEASE	(&cider_child_release)
#define CIDER_OP_CHILD_COORD	(&cider_child_coord)

/*
 * The operation's machine as a table, in the manner of sunrpc's
 * tk_action: each state names the child machine it drives (core/vocab.h,
 * CIDER_OP_STATES) and what follows once that child is done.
 */
#define CIDER_OP_ACTION(n, s, child)	\
	[CIDER_OP_##n] = { #s, CIDER_OP_CHILD_##child, cider_op_##s##_next },

static const struct cider_op_action {
	const char *name;
	const struct cider_child *child;	/* NULL: none */
	enum cider_step (*next)(struct cider_client *c);
} cider_op_actions[CIDER_OP_NR_STATES] = { CIDER_OP_STATES(CIDER_OP_ACTION) };

static const struct cider_child *cider_op_child(const struct cider_client *c)
{
	return c->state < CIDER_OP_NR_STATES ? cider_op_actions[c->state].child : NULL;
}

/* Step the child the state drives; when it is done (or there is none), go on. */
static enum cider_step cider_op_once(struct cider_client *c)
{
	const struct cider_op_action *a;
	enum cider_step r;

	if (c->state >= CIDER_OP_NR_STATES)
		return cider_op_finish(c);
	a = &cider_op_actions[c->state];
	r = a->child ? a->child->step(c) : CIDER_STEP_DONE;
	return r == CIDER_STEP_DONE ? a->next(c) : r;
}

/* Did a verb of the batch just completed fail? */
static bool cider_verbs_failed(const struct cider_client *c)
{
	unsigned int i;

	for (i = 0; i < c->nv; i++)
		if (c->v[i].status)
			return true;
	return false;
}

/* Do what the machine's last step asked for. */
void cider_client_resume(struct cider_client *c)
{
	const struct cider_fabric *fab = c->cn->fab;

	if (c->dead || !c->busy)
		return;
	if (cider_verbs_failed(c)) {
		cider_client_abort(c);
		return;
	}
	switch (cider_run(c, cider_op_once)) {
	case CIDER_STEP_POSTED:
		fab->ops->post(fab->priv, c, c->v, c->nv);
		break;
	case CIDER_STEP_PARKED:
		c->parked = true;
		c->timer_fired = false;
		if (!c->sleep_timed)
			break;
		c->token++;
		fab->ops->timer(fab->priv, c, c->sleep_ns, c->token);
		break;
	default:
		c->busy = false;
		c->st.ops++;
		fab->ops->done(fab->priv, c);
		break;
	}
}

/* A SCAN's: a prefix the index can hold, room for a record, a page in the index. */
static bool cider_scan_args_ok(const struct cider_client *c, const struct cider_kv_args *a)
{
	u64 total = cider_scan_positions(cider_cfg_of(c));

	if (a->key_len && !a->key)
		return false;
	if (a->key_len > (cider_hashed(c) ? CIDER_MAX_KEY : 0))
		return false;
	return a->out && a->out_len >= CIDER_SCAN_MIN_OUT && a->count &&
	       a->cursor < total && a->count <= total - a->cursor;
}

/* Do the arguments fit the index?  (The core never trusts its caller's lengths.) */
static bool cider_args_ok(const struct cider_client *c, const struct cider_kv_args *a)
{
	bool writes = a->op == CIDER_INSERT || cider_op_updates(a->op);

	if (a->op == CIDER_SCAN)
		return cider_scan_args_ok(c, a);
	if (a->op >= CIDER_OP_NR || !a->key)
		return false;
	if (writes && a->value_len && !a->value)
		return false;
	if (!cider_hashed(c))
		return a->key_len == 8 && cider_le64(a->key, 8) < cider_cfg_of(c)->nr_keys &&
		       (!writes || a->value_len == 8);
	return a->key_len && a->key_len <= CIDER_MAX_KEY &&
	       (!writes || a->value_len <= CIDER_MAX_VALUE);
}

/* The operation ends now, with @res, without a verb. */
static void cider_client_end(struct cider_client *c, u8 res)
{
	c->res = res;
	c->busy = false;
	c->st.ops++;
	c->cn->fab->ops->done(c->cn->fab->priv, c);
}

void cider_client_start(struct cider_client *c, const struct cider_kv_args *a)
{
	c->op = a->op;
	c->kbytes = a->key;
	c->klen = a->key_len;
	c->val = a->value;
	c->vlen = a->value_len;
	c->out = a->out;
	c->out_len = a->out ? a->out_len : 0;
	c->opid = a->opid;
	c->writer = 0;
	c->got = 0;
	c->got_len = 0;
	c->exposed = false;
	c->lw = NULL;
	c->lw_member = false;
	c->rc_leading = false;
	c->rc_members = 0;
	c->rc_of = -1;
	c->qn = NULL;
	c->late = 0;
	c->fenced = false;
	c->state = CIDER_OP_AGAIN;
	c->res = CIDER_RES_NONE;
	/*
	 * No verb of this operation yet: the last batch of the client's
	 * previous operation may have failed (its node reconnected since),
	 * and the resume below must not take its statuses for this one's.
	 */
	c->nv = 0;
	c->busy = true;
	if (!cider_args_ok(c, a)) {
		c->key = 0;
		cider_client_end(c, CIDER_RES_INVALID);
		return;
	}
	if (c->op == CIDER_SCAN) {
		c->key = 0;
		c->got = a->cursor;
		c->scan_end = a->cursor + a->count;
	} else {
		c->key = cider_hashed(c) ? cider_key_id(a->key, a->key_len) :
		      cider_le64(a->key, 8);
	}
	cider_client_resume(c);
}

/* The client stops dead; its CN's agent (if alive) stays. */
void cider_client_crash(struct cider_client *c)
{
	c->dead = true;
	cider_alloc_crash(c);
	if (c->lw)
		cider_lwc_done(c);
	if (c->rc_leading)
		cider_wake_mask(c->cn, cider_rc_finish(c));
	cider_rc_leave(c);
}

/*
 * May this operation's effect be visible?  Once it posted a CAS on the
 * data pointer, joined a lock queue (a combiner may install a later
 * value over its own, which then happened) or a local WC batch: its
 * combiner lives on and may still write the batch (its value, when it
 * was the latest to join, or one that covers it).
 */
static bool cider_client_exposed(const struct cider_client *c)
{
	return c->exposed || c->qn || c->res == CIDER_RES_UNKNOWN || (c->lw && c->lw_member);
}

void cider_client_abort(struct cider_client *c)
{
	u8 res;

	if (c->dead || !c->busy)
		return;
	/* A settled local WC member keeps its combiner's result. */
	res = c->res != CIDER_RES_NONE && !c->lw_member ? c->res :
	      cider_client_exposed(c) ? CIDER_RES_UNKNOWN : CIDER_RES_FAILED;
	cider_client_crash(c);
	cider_client_end(c, res);
}

bool cider_client_revive(struct cider_client *c)
{
	if (!c->dead)
		return true;
	if (cider_lwc_names(c))
		return false;
	if (c->qn) {
		/* Whatever it was in the queue, the lease has recovered it. */
		c->qn->state = CIDER_Q_ABANDONED;
		cider_qnode_owner_done(c->qn);
		c->qn = NULL;
	}
	c->lw = NULL;
	c->lw_member = false;
	c->busy = false;
	c->parked = false;
	c->token++;		/* a timer of the old incarnation is stale */
	c->timer_fired = false;
	c->dead = false;
	return true;
}

/* The CN's lock agent: a message from another CN's. */
/* A writer's INVAL (cache.h): drop the rights on its key, and answer. */
static void cider_cn_on_inval(struct cider_cn *cn, const struct cider_msg *m)
{
	struct cider_msg a = {
		.type = CIDER_MSG_INVAL_ACK, .to_slot = m->from_slot, .ticket = m->from_ticket,
		.laddr = m->laddr, .from_cn = cn->id,
	};

	cider_cache_inval(cn, m->ptr, cn->fab->ops->now(cn->fab->priv));
	cn->fab->ops->send(cn->fab->priv, cn, m->from_cn, &a);
}

/* An answer to a writer's INVAL: the writer goes on once all are in. */
static void cider_cn_on_inval_ack(struct cider_cn *cn, const struct cider_msg *m)
{
	struct cider_client *c;

	if (m->to_slot >= cn->cfg->clients_per_cn)
		return;
	c = &cn->clients[m->to_slot];
	if (c->busy && !c->dead && cider_op_child(c) == &cider_child_write &&
	    cider_write_inval_acked(c, m->ticket))
		cider_wake(c);
}

void cider_cn_on_msg(struct cider_cn *cn, const struct cider_msg *m)
{
	struct cider_client *c;

	if (cn->dead)
		return;
	if (m->type == CIDER_MSG_INVAL) {
		cider_cn_on_inval(cn, m);
		return;
	}
	if (m->type == CIDER_MSG_INVAL_ACK) {
		cider_cn_on_inval_ack(cn, m);
		return;
	}
	c = cider_lockq_on_msg(cn, m);
	if (c)
		cider_wake(c);
}

const char *cider_client_state_name(const struct cider_client *c)
{
	return c->state < CIDER_OP_NR_STATES ? cider_op_actions[c->state].name : "?";
}

const char *cider_client_sub_state_name(const struct cider_client *c)
{
	const struct cider_child *m = cider_op_child(c);

	return m ? m->state_name(c) : "";
}

const char *cider_client_leaf_state_name(const struct cider_client *c)
{
	const struct cider_child *m = cider_op_child(c);

	return m && m->leaf_name ? m->leaf_name(c) : "";
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
