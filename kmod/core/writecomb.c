// SPDX-License-Identifier: GPL-2.0
/*
 * Global write combining over the MCS wait queue (CIDER paper §4.2.1).
 *
 * A client that gets the lock and finds a successor in its qnode becomes
 * the coordinator: it reads the lock entry to find the tail (step 1) and
 * lends the lock to it (EXEC, step 2).  The tail, the executor, writes its
 * value out of place and CASes the data pointer (step 3) and returns the
 * lock with the result (EXEC_DONE, step 4).  Every UPDATE between them is
 * then covered by that one write (last writer wins: the executor is the
 * last in queue order): the coordinator returns and hands the result, not
 * the lock, down the queue (step 5); each participant's CN agent returns
 * its client's operation and forwards (step 6) until the result reaches
 * the executor, which now really holds the lock and releases it.
 *
 * One MN write and CAS per batch, however long the batch.  A DELETE can
 * only ever be the executor: it advances the lock entry's version on
 * enqueue, so nothing queues behind it (§4.2.2).
 */
#include "verbs.h"

static void cider_wc_trace(struct cider_cn *cn, struct cider_qnode *q, u8 type, u64 a, u64 b)
{
	if (cn->fab->ops->trace)
		cn->fab->ops->trace(cn->fab->priv, &cn->clients[q->owner], type, q->laddr, a, b);
}

void cider_coord_init(struct cider_client *c)
{
	c->sub.coord.state = CIDER_COORD_BEGIN;
}

/* Steps 1 and 2: the tail is the executor; lend it the lock. */
static enum cider_step cider_coord_lend(struct cider_client *c)
{
	struct cider_qnode *q = c->qn;

	q->exec = cider_word_off(c->v[0].data[0]);
	q->ptr = c->ptr;
	cider_trace(c, CIDER_T_RELEASE, c->laddr, q->id, 0);	/* lent to the executor */
	cider_send(c->cn, CIDER_MSG_EXEC, false, q->exec, q->id, q);
	cider_wait_init(c, CIDER_WAIT_EXEC_DONE);
	c->sub.coord.state = CIDER_COORD_WAIT;
	return CIDER_STEP_NEXT;
}

/* Step 5: the lock is back with the result, which (not the lock) goes on. */
static enum cider_step cider_coord_result(struct cider_client *c)
{
	struct cider_qnode *q = c->qn;

	cider_trace(c, CIDER_T_ACQUIRE, c->laddr, q->id, 0);
	c->res = q->result;
	c->writer = q->writer;
	c->ptr = q->ptr;
	cider_trace(c, CIDER_T_RELEASE, c->laddr, q->id, 0);
	cider_trace(c, CIDER_T_HANDOVER, c->laddr, q->id, q->next);
	cider_send(c->cn, CIDER_MSG_HANDOVER, true, q->next, q->id, q);
	v_reset(c);
	v_faa(c, c->laddr + 8, 1);
	c->sub.coord.state = CIDER_COORD_FAA;
	return CIDER_STEP_POSTED;
}

static enum cider_step cider_coord_once(struct cider_client *c)
{
	struct cider_coord *co = &c->sub.coord;
	enum cider_step r;

	switch (co->state) {
	case CIDER_COORD_BEGIN:
		v_reset(c);
		v_read(c, c->laddr, 8);
		co->state = CIDER_COORD_TAIL;
		return CIDER_STEP_POSTED;
	case CIDER_COORD_TAIL:
		return cider_coord_lend(c);
	case CIDER_COORD_WAIT:
		r = cider_wait_step(c);
		if (r != CIDER_STEP_DONE || c->restart)
			return r;
		return cider_coord_result(c);
	case CIDER_COORD_FAA:
	default:
		cider_qnode_owner_done(c->qn);
		c->qn = NULL;
		return CIDER_STEP_DONE;
	}
}

/*
 * The coordinator (holds c->qn, which has a successor).  Ends with c->res
 * and c->writer the batch's, or c->restart set (the lock was reset while
 * lent out).
 */
enum cider_step cider_coord_step(struct cider_client *c)
{
	return cider_run(c, cider_coord_once);
}

const char *cider_coord_state_name(u8 state)
{
	static const char *const names[] = {
		[CIDER_COORD_BEGIN] = "coord:begin",
		[CIDER_COORD_TAIL] = "coord:tail",
		[CIDER_COORD_WAIT] = "coord:wait",
		[CIDER_COORD_FAA] = "coord:faa",
	};

	return state < ARRAY_SIZE(names) ? names[state] : "coord:?";
}

/* Step 4: the executor's write is done; the lock goes back. */
void cider_wc_report(struct cider_client *c)
{
	struct cider_qnode *q = c->qn;

	q->result = c->res;
	q->writer = c->writer;
	q->ptr = c->ptr;
	cider_trace(c, CIDER_T_RELEASE, c->laddr, q->id, 0);
	cider_send(c->cn, CIDER_MSG_EXEC_DONE, false, q->coord, q->id, q);
}

void cider_passthru_init(struct cider_client *c)
{
	c->sub.passthru.state = CIDER_PASSTHRU_BEGIN;
}

/*
 * The executor after its report: wait for the result to come around the
 * queue, then hold the lock for real.  c->restart is set if the lock was
 * reset meanwhile (then there is nothing to release).
 */
enum cider_step cider_passthru_step(struct cider_client *c)
{
	struct cider_passthru *p = &c->sub.passthru;
	enum cider_step r;

	if (p->state == CIDER_PASSTHRU_BEGIN) {
		cider_wait_init(c, CIDER_WAIT_PASSTHRU);
		p->state = CIDER_PASSTHRU_WAIT;
	}
	r = cider_wait_step(c);
	if (r == CIDER_STEP_DONE && !c->restart)
		cider_trace(c, CIDER_T_ACQUIRE, c->laddr, c->qn->id, 0);
	return r;
}

const char *cider_passthru_state_name(u8 state)
{
	return state == CIDER_PASSTHRU_BEGIN ? "passthru:begin" : "passthru:wait";
}

/* Step 6, in the CN agent: pass the combined result on. */
static void cider_wc_forward(struct cider_cn *cn, struct cider_qnode *q)
{
	q->fwd_pending = false;
	cider_wc_trace(cn, q, CIDER_T_HANDOVER, q->id, q->next);
	cider_send(cn, CIDER_MSG_HANDOVER, true, q->next, q->id, q);
	if (q->owner_done) {
		q->id = 0;
		q->state = CIDER_Q_FREE;
	}
}

/*
 * The CN agent's part of write combining: a message to @q.  Returns the
 * client to wake (@q's owner, whose wait it may end), or NULL.
 */
struct cider_client *cider_wc_on_msg(struct cider_cn *cn, struct cider_qnode *q,
				     const struct cider_msg *m)
{
	struct cider_client *owner = &cn->clients[q->owner];

	switch (m->type) {
	case CIDER_MSG_ENQ:		/* the successor a forward waited for */
		cider_wc_forward(cn, q);
		return NULL;
	case CIDER_MSG_EXEC:
		q->state = CIDER_Q_EXECUTOR;
		q->coord = m->from;
		q->ptr = m->ptr;
		return owner;
	case CIDER_MSG_EXEC_DONE:
		q->exec_done = true;
		q->result = m->result;
		q->writer = m->writer;
		q->ptr = m->ptr;
		return owner;
	default:			/* combined HANDOVER */
		q->result = m->result;
		q->writer = m->writer;
		q->exec = m->exec;
		q->ptr = m->ptr;
		if (q->id == m->exec) {
			q->passthru = true;
			return owner;
		}
		q->state = CIDER_Q_COMBINED;
		if (q->next)
			cider_wc_forward(cn, q);
		else
			q->fwd_pending = true;
		return owner;
	}
}
