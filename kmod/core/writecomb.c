// SPDX-License-Identifier: GPL-2.0
/*
 * Global write combining over the lock queue (CIDER paper §4.2.1), with
 * the result off the lock's critical path.
 *
 * A client that got the lock after waiting for it is the coordinator.  In
 * one batch it READs the lock's record (header and ring) and the data
 * pointer (step 1).  The batch is the run of tickets after its own whose
 * entries are written and are UPDATEs that read the pointer's current
 * version; the last of them is the executor.  The coordinator lends it
 * the lock with the pointer and the batch's size (EXEC, step 2).  The
 * executor writes its value and CASes the pointer (step 3), then at once
 * reports (EXEC_DONE) and releases every ticket of the batch with one FAA,
 * handing the lock to the next ticket (step 4: the release is early, not
 * after the result went round).  The coordinator sends the result to all
 * other members in parallel (RESULT, step 5).  One MN write and CAS per
 * batch, and the lock is held for a constant number of round trips
 * however long the batch: the paper's chain of result messages, one
 * member after another while the lock is held, cost a batch of k about
 * 1.3 (k - 1) us in the model.
 *
 * Every UPDATE in the batch is covered by the executor's CAS: its value is
 * the last in queue order (last writer wins) and the CAS happens while
 * every member waits, inside its interval.  Why the version rule: a
 * member's entry holds the version of the pointer it read.  The pointer's
 * version changes only by a DELETE, and a key leaves a hash slot only by a
 * DELETE; the coordinator read the pointer while holding the lock, when no
 * DELETE can run.  So a member whose version is the pointer's read the
 * same incarnation of the same key, and a member that read before a
 * DELETE (or another key, on the slot before) is not combined: it ends
 * the batch and waits its turn.  A DELETE ends the batch too: it is
 * always the last of its batch, alone (§4.2.2; an FAA cannot refuse it a
 * successor, so the rule is on combining, not on queueing).
 */
#include "verbs.h"

void cider_coord_init(struct cider_client *c)
{
	c->sub.coord.state = CIDER_COORD_BEGIN;
	c->sub.coord.members = 0;
	c->st.coords++;
	c->outcome = CIDER_OUT_OK;
}

/* Does pointer (slot) word @p hold the coordinator's key? */
static bool cider_coord_has_key(const struct cider_client *c, u64 p)
{
	if (!cider_w_off(c, p))
		return false;
	return !cider_hashed(c) || (cider_slot_fp(p) == c->fp && cider_slot_ver(p) == c->lver);
}

/* Step 1 done: the members, tickets c+1.. whose entries may be combined. */
static u32 cider_coord_members(struct cider_client *c, u64 p)
{
	const struct cider_cfg *cfg = cider_cfg_of(c);
	const struct cider_qnode *q = c->qn;
	u64 h = c->lq_ring[0];
	u32 tail = cider_lq_head(h) + cider_lq_size(h), t, n = 0;

	/* Only the holder of the head ticket reads a ring it may combine. */
	if (cider_lq_gen(h) != q->gen || cider_lq_head(h) != q->ticket ||
	    !cider_coord_has_key(c, p))
		return 0;
	for (t = q->ticket + 1; t != tail && t - q->ticket < cfg->lock_qlen; t++) {
		u64 e = c->lq_ring[2 + (t & (cfg->lock_qlen - 1))];

		if (!cider_lq_entry_for(e, t) || cider_lq_entry_del(e) ||
		    cider_lq_entry_ver(e) != cider_w_ver(c, p))
			break;
		n++;
	}
	return n;
}

/* Step 2: lend the lock to the last member, with the pointer as read. */
static enum cider_step cider_coord_lend(struct cider_client *c)
{
	struct cider_coord *co = &c->sub.coord;
	struct cider_qnode *q = c->qn;
	u64 p = c->v[1].data[0], e;
	u32 exec;

	c->ptr = p;		/* read under the lock: exact but for its offset */
	c->ptr_hint = false;
	co->members = cider_coord_members(c, p);
	if (!co->members)
		return CIDER_STEP_DONE;
	exec = q->ticket + co->members;
	e = c->lq_ring[2 + (exec & (cider_cfg_of(c)->lock_qlen - 1))];
	q->ptr = p;
	q->count = co->members + 1;
	cider_trace(c, CIDER_T_RELEASE, c->laddr, q->id, 0);	/* lent to the executor */
	cider_lq_send(c->cn, CIDER_MSG_EXEC, cider_lq_entry_cn(e), cider_lq_entry_slot(e),
		      exec, q);
	c->epoch = c->lq_ring[0];
	cider_wait_init(c, CIDER_WAIT_EXEC_DONE);
	co->state = CIDER_COORD_WAIT;
	return CIDER_STEP_NEXT;
}

/* Step 5: the result goes to every member but the executor, in parallel. */
static void cider_coord_result(struct cider_client *c)
{
	const struct cider_cfg *cfg = cider_cfg_of(c);
	struct cider_qnode *q = c->qn;
	u32 i;

	c->res = q->result;
	c->writer = q->writer;
	c->ptr = q->ptr;
	c->batch = q->count;
	for (i = 1; i < c->sub.coord.members; i++) {
		u32 t = q->ticket + i;
		u64 e = c->lq_ring[2 + (t & (cfg->lock_qlen - 1))];

		cider_lq_send(c->cn, CIDER_MSG_RESULT, cider_lq_entry_cn(e),
			      cider_lq_entry_slot(e), t, q);
	}
	cider_qnode_owner_done(q);
	c->qn = NULL;
}

static enum cider_step cider_coord_once(struct cider_client *c)
{
	struct cider_coord *co = &c->sub.coord;
	struct cider_verb *v;
	enum cider_step r;

	switch (co->state) {
	case CIDER_COORD_BEGIN:
		cider_v_reset(c);
		v = cider_v_add(c, CIDER_V_READ, c->laddr, cider_cfg_of(c)->lock_rec);
		v->buf = c->lq_ring;
		cider_v_read(c, c->paddr, 8);
		co->state = CIDER_COORD_READ;
		return CIDER_STEP_POSTED;
	case CIDER_COORD_READ:
		return cider_coord_lend(c);
	case CIDER_COORD_WAIT:
	default:
		r = cider_wait_step(c);
		if (r != CIDER_STEP_DONE || c->outcome == CIDER_OUT_RESTART)
			return r;
		cider_coord_result(c);
		return CIDER_STEP_DONE;
	}
}

/*
 * The coordinator (holds c->qn).  Ends with c->res and c->writer the
 * batch's, with no members (c still holds the lock), or ends RESTART
 * (the lock was reset, or the report was lost).
 */
enum cider_step cider_coord_step(struct cider_client *c)
{
	return cider_run(c, cider_coord_once);
}

const char *cider_coord_state_name(u8 state)
{
	static const char *const names[] = {
		CIDER_COORD_STATES(CIDER_SUB_STATE_NAME)
	};

	return state < ARRAY_SIZE(names) ? names[state] : "coord:?";
}

/* Step 4, first half: the executor's write is done; the result goes back. */
void cider_wc_report(struct cider_client *c)
{
	struct cider_qnode *q = c->qn;

	q->result = c->outcome == CIDER_OUT_RELOCATE || c->outcome == CIDER_OUT_RESTART ?
		    CIDER_RES_NONE : c->res;
	q->writer = c->writer;
	q->ptr = c->ptr;
	cider_lq_send(c->cn, CIDER_MSG_EXEC_DONE, q->coord_cn, q->coord_slot, q->coord_ticket, q);
}

/*
 * The CN agent's part of write combining: a message to @q.  Returns the
 * client to wake (@q's owner, whose wait it may end), or NULL.
 */
struct cider_client *cider_wc_on_msg(struct cider_cn *cn, struct cider_qnode *q,
				     const struct cider_msg *m)
{
	switch (m->type) {
	case CIDER_MSG_EXEC:
		if (q->state != CIDER_Q_WAITING)
			return NULL;
		q->state = CIDER_Q_EXECUTOR;
		q->coord_cn = m->from_cn;
		q->coord_slot = m->from_slot;
		q->coord_ticket = m->from_ticket;
		q->count = m->count;
		q->ptr = m->ptr;
		break;
	case CIDER_MSG_EXEC_DONE:
		q->exec_done = true;
		q->result = m->result;
		q->writer = m->writer;
		q->ptr = m->ptr;
		break;
	case CIDER_MSG_RESULT:
	default:
		if (q->state != CIDER_Q_WAITING)
			return NULL;
		q->state = CIDER_Q_COMBINED;
		q->result = m->result;
		q->writer = m->writer;
		q->ptr = m->ptr;
		q->count = m->count;
		break;
	}
	return &cn->clients[q->owner];
}
