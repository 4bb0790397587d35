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
#include "core.h"

static bool cider_q_exec_done(struct cider_client *c)
{
	return c->qn->exec_done;
}

static bool cider_q_passthru(struct cider_client *c)
{
	return c->qn->passthru;
}

static void cider_wc_trace(struct cider_cn *cn, struct cider_qnode *q, u8 type, u64 a, u64 b)
{
	if (cn->fab->ops->trace)
		cn->fab->ops->trace(cn->fab->priv, &cn->clients[q->owner], type, q->laddr, a, b);
}

/*
 * Sub-protothread for the coordinator (holds c->qn, which has a
 * successor).  On return c->res and c->writer are the batch's, or
 * c->restart is set (the lock was reset while lent out).
 */
bool cider_wc_coordinate(struct cider_client *c)
{
	struct cider_qnode *q = c->qn;

	PT_BEGIN(&c->pt_l1);
	v_reset(c);
	v_read(c, c->laddr, 8);
	cider_post(c);
	PT_YIELD(&c->pt_l1);
	q = c->qn;
	q->exec = cider_word_off(c->v[0].data[0]);
	q->ptr = c->ptr;
	cider_trace(c, CIDER_T_RELEASE, c->laddr, q->id, 0);	/* lent to the executor */
	cider_send(c->cn, CIDER_MSG_EXEC, false, q->exec, q->id, q);
	PT_SPAWN(&c->pt_l1, cider_lock_wait(c, cider_q_exec_done));
	if (c->restart)
		PT_EXIT(&c->pt_l1);
	q = c->qn;
	cider_trace(c, CIDER_T_ACQUIRE, c->laddr, q->id, 0);
	c->res = q->result;
	c->writer = q->writer;
	c->ptr = q->ptr;
	/* Step 5: the result, not the lock, goes down the queue. */
	cider_trace(c, CIDER_T_RELEASE, c->laddr, q->id, 0);
	cider_trace(c, CIDER_T_HANDOVER, c->laddr, q->id, q->next);
	cider_send(c->cn, CIDER_MSG_HANDOVER, true, q->next, q->id, q);
	v_reset(c);
	v_faa(c, c->laddr + 8, 1);
	cider_post(c);
	PT_YIELD(&c->pt_l1);
	cider_qnode_owner_done(c->qn);
	c->qn = NULL;
	PT_END(&c->pt_l1);
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

/*
 * Sub-protothread for the executor after its report: wait for the result
 * to come around the queue, then hold the lock for real.  c->restart is
 * set if the lock was reset meanwhile (then there is nothing to release).
 */
bool cider_wc_passthru(struct cider_client *c)
{
	PT_BEGIN(&c->pt_l1);
	PT_SPAWN(&c->pt_l1, cider_lock_wait(c, cider_q_passthru));
	if (!c->restart)
		cider_trace(c, CIDER_T_ACQUIRE, c->laddr, c->qn->id, 0);
	PT_END(&c->pt_l1);
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

static void cider_wc_wake_owner(struct cider_cn *cn, struct cider_qnode *q)
{
	cider_wake(&cn->clients[q->owner]);
}

void cider_wc_on_msg(struct cider_cn *cn, struct cider_qnode *q, const struct cider_msg *m)
{
	switch (m->type) {
	case CIDER_MSG_ENQ:		/* the successor a forward waited for */
		cider_wc_forward(cn, q);
		return;
	case CIDER_MSG_EXEC:
		q->state = CIDER_Q_EXECUTOR;
		q->coord = m->from;
		q->ptr = m->ptr;
		cider_wc_wake_owner(cn, q);
		return;
	case CIDER_MSG_EXEC_DONE:
		q->exec_done = true;
		q->result = m->result;
		q->writer = m->writer;
		q->ptr = m->ptr;
		cider_wc_wake_owner(cn, q);
		return;
	default:			/* combined HANDOVER */
		q->result = m->result;
		q->writer = m->writer;
		q->exec = m->exec;
		q->ptr = m->ptr;
		if (q->id == m->exec) {
			q->passthru = true;
			cider_wc_wake_owner(cn, q);
			return;
		}
		q->state = CIDER_Q_COMBINED;
		cider_wc_wake_owner(cn, q);
		if (q->next)
			cider_wc_forward(cn, q);
		else
			q->fwd_pending = true;
		return;
	}
}
