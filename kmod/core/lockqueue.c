// SPDX-License-Identifier: GPL-2.0
/*
 * The lock queue: a distributed MCS lock per data pointer (ShiftLock
 * style, reader-writer part off), and the CAS spinlock baseline.
 *
 * Enqueue swaps the client's qnode into the lock entry's tail.  Kernel
 * verbs on rxe and mlx4 have no masked CAS, so the swap is a CAS loop
 * seeded with the last value seen; its failures are counted.  A client
 * with a predecessor tells it "I am your successor" (ENQ) and waits for
 * the lock to be handed over by message; a release without a known
 * successor CASes the tail back to 0.  Every release adds 1 to the
 * entry's epoch.
 *
 * Fault tolerance (paper §4.6): every wait polls the lock entry every
 * lease/4.  A waiter that sees no release for a full lease (the maximum
 * hold time) resets the lock: tail to 0 and the epoch's reset generation
 * up by one.  Everyone still queued in the old generation sees the new
 * generation on its next poll, abandons its qnode and starts over, so
 * the old queue can never hand the lock to anybody again.
 */
#include "core.h"

static u64 cider_qid(struct cider_cn *cn, u32 slot)
{
	u64 seq_mask = (1ULL << CIDER_QID_SEQ_BITS) - 1;

	if (!(++cn->qseq & seq_mask))	/* wrapped: 0 would make CN 0's id 0 */
		cn->qseq++;
	return (u64)cn->id << (CIDER_QID_SEQ_BITS + 8) | (u64)slot << CIDER_QID_SEQ_BITS |
	       (cn->qseq & seq_mask);
}

static struct cider_qnode *cider_qnode_alloc(struct cider_client *c)
{
	struct cider_cn *cn = c->cn;
	u32 i;

	for (i = 0; i < CIDER_QNODES_PER_CN; i++) {
		struct cider_qnode *q = &cn->q[i];

		if (q->id)
			continue;
		memset(q, 0, sizeof(*q));
		q->id = cider_qid(cn, i);
		q->owner = c->index;
		q->key = c->key;
		q->laddr = c->laddr;
		q->state = CIDER_Q_WAITING;
		return q;
	}
	return NULL;
}

struct cider_qnode *cider_qnode_get(struct cider_cn *cn, u64 id)
{
	struct cider_qnode *q = &cn->q[cider_qid_slot(id)];

	return q->id == id && q->state != CIDER_Q_ABANDONED ? q : NULL;
}

static void cider_qnode_free(struct cider_qnode *q)
{
	q->id = 0;
	q->state = CIDER_Q_FREE;
}

/* The owner is done with @q; the slot goes once nothing is owed either. */
void cider_qnode_owner_done(struct cider_qnode *q)
{
	q->owner_done = true;
	if (!q->fwd_pending)
		cider_qnode_free(q);
}

void cider_send(struct cider_cn *cn, u8 type, bool combined, u64 to, u64 from,
		const struct cider_qnode *q)
{
	struct cider_msg m = {
		.type = type, .combined = combined, .to = to, .from = from,
		.exec = q->exec, .ptr = q->ptr, .writer = q->writer, .result = q->result,
	};

	cn->fab->ops->send(cn->fab->priv, cn, cider_qid_cn(to), &m);
}

/* A waiting client gives up its place: the lock was reset under it. */
static void cider_abandon(struct cider_client *c)
{
	if (c->qn) {
		c->qn->state = CIDER_Q_ABANDONED;
		cider_qnode_free(c->qn);
		c->qn = NULL;
	}
	c->restart = true;
}

/*
 * Sub-protothread: wait until @cond holds, polling the lock entry.  Sets
 * c->restart (and abandons the qnode) when the lock was reset, by this
 * client or another.  c->epoch is the epoch seen when the wait began.
 */
bool cider_lock_wait(struct cider_client *c, bool (*cond)(struct cider_client *c))
{
	const struct cider_cfg *cfg = cfg_of(c);
	u64 w0, e;

	PT_BEGIN(&c->pt_l2);
	c->seen_epoch = c->epoch;
	c->changed_at = cider_now(c);
	while (!cond(c)) {
		cider_arm(c, cfg->lease_ns / 4);
		PT_YIELD(&c->pt_l2);
		if (cond(c) || !c->timer_fired)
			continue;
		v_reset(c);
		v_read(c, c->laddr, 16);
		cider_post(c);
		PT_YIELD(&c->pt_l2);
		if (cond(c))
			break;
		w0 = c->v[0].data[0];
		e = c->v[0].data[1];
		if (cider_epoch_gen(e) != cider_epoch_gen(c->seen_epoch)) {
			cider_abandon(c);
			PT_EXIT(&c->pt_l2);
		}
		if (e != c->seen_epoch) {
			c->seen_epoch = e;
			c->changed_at = cider_now(c);
			continue;
		}
		if (cider_now(c) - c->changed_at < cfg->lease_ns)
			continue;
		/* Nobody released for a whole lease: the holder is gone. */
		v_reset(c);
		v_cas(c, c->laddr, w0, cider_word(cider_word_ver(w0), 0));
		v_faa(c, c->laddr + 8, CIDER_EPOCH_GEN);
		cider_post(c);
		PT_YIELD(&c->pt_l2);
		c->st.resets++;
		cider_trace(c, CIDER_T_RESET, c->laddr, c->v[0].arg0, c->seen_epoch);
		cider_abandon(c);
		PT_EXIT(&c->pt_l2);
	}
	PT_END(&c->pt_l2);
}

/*
 * A version mismatch normally means a DELETE is under way.  If the lock
 * shows no release for a whole lease while mismatching, that DELETE died
 * between advancing the lock's version and emptying the pointer; nobody
 * waits in the queue to notice, so the mismatching client resets it.
 */
static bool cider_version_stuck(struct cider_client *c, u64 w0)
{
	u64 e = c->v[1].data[0], now = cider_now(c);

	c->lockw = w0;
	if (!c->mm_since || e != c->mm_epoch) {
		c->mm_epoch = e;
		c->mm_since = now ? now : 1;
		return false;
	}
	return now - c->mm_since >= cfg_of(c)->lease_ns;
}

/* Sub-protothread: reset the lock to the pointer's version. */
static bool cider_version_reset(struct cider_client *c)
{
	PT_BEGIN(&c->pt_l2);
	v_reset(c);
	v_cas(c, c->laddr, c->lockw,
	      cider_word(w_ver(c, c->ptr), 0));
	v_faa(c, c->laddr + 8, CIDER_EPOCH_GEN);
	cider_post(c);
	PT_YIELD(&c->pt_l2);
	c->st.resets++;
	cider_trace(c, CIDER_T_RESET, c->laddr, c->lockw, 1);
	c->mm_since = 0;
	PT_END(&c->pt_l2);
}

static bool cider_q_has_lock(struct cider_client *c)
{
	return c->qn->state != CIDER_Q_WAITING;
}

static bool cider_q_has_next(struct cider_client *c)
{
	return c->qn->next != 0;
}

/*
 * Sub-protothread: enqueue on c->key's MCS lock and wait until the qnode
 * has a role (GRANTED, EXECUTOR or COMBINED) or c->restart is set.
 *
 * In cider mode the lock entry's version must equal the data pointer's
 * (c->ptr); a DELETE enqueues with the version advanced, so no UPDATE can
 * queue behind it: it is always the last of its queue (§4.2.2).  A
 * mismatch means a DELETE is under way: start over once it is done.
 */
bool cider_lock_acquire(struct cider_client *c)
{
	const struct cider_cfg *cfg = cfg_of(c);
	bool versioned = cfg->mode == CIDER_MODE_CIDER;
	u32 ver = w_ver(c, c->ptr);
	u64 old, want;

	PT_BEGIN(&c->pt_l1);
	c->qn = cider_qnode_alloc(c);
	if (!c->qn) {			/* every slot busy: try again later */
		c->restart = true;
		PT_EXIT(&c->pt_l1);
	}
	c->qn->lockver = versioned ? ver + (c->op == CIDER_DELETE) : 0;
	c->cmp = cider_word(versioned ? ver : 0, 0);
	c->attempt = 0;
	for (;;) {
		if (!versioned)
			c->qn->lockver = cider_word_ver(c->cmp);
		want = cider_word(c->qn->lockver, c->qn->id);
		v_reset(c);
		v_cas(c, c->laddr, c->cmp, want);
		v_read(c, c->laddr + 8, 8);
		cider_post(c);
		PT_YIELD(&c->pt_l1);
		old = c->v[0].old;
		if (cfg->backoff)
			cider_backoff_account(&c->cn->backoff, old != c->cmp, cider_now(c));
		if (old == c->cmp)
			break;
		c->st.cas_fail++;
		if (versioned && cider_word_ver(old) != w_ver(c, c->ptr)) {
			cider_abandon(c);
			if (cider_version_stuck(c, old))
				PT_SPAWN(&c->pt_l1, cider_version_reset(c));
			PT_EXIT(&c->pt_l1);
		}
		c->cmp = old;
		/* Without masked CAS the swap is a CAS loop: back off like one. */
		if (cfg->backoff) {
			cider_arm(c, cider_backoff_delay(&c->cn->backoff, c->attempt++,
							 c->cn->fab->ops->rand(c->cn->fab->priv)));
			PT_YIELD(&c->pt_l1);
		}
	}
	c->epoch = c->v[1].data[0];
	c->qn->ptr = c->ptr;
	if (!cider_word_off(c->cmp)) {
		c->qn->state = CIDER_Q_GRANTED;
		cider_trace(c, CIDER_T_ACQUIRE, c->laddr, c->qn->id, 0);
		PT_EXIT(&c->pt_l1);
	}
	cider_send(c->cn, CIDER_MSG_ENQ, false, cider_word_off(c->cmp), c->qn->id, c->qn);
	PT_SPAWN(&c->pt_l1, cider_lock_wait(c, cider_q_has_lock));
	if (!c->restart && c->qn->state != CIDER_Q_COMBINED)
		cider_trace(c, CIDER_T_ACQUIRE, c->laddr, c->qn->id, 0);
	PT_END(&c->pt_l1);
}

/* Pass the lock to @q's successor (known by now). */
static void cider_handover(struct cider_client *c, struct cider_qnode *q)
{
	q->ptr = c->ptr;
	cider_trace(c, CIDER_T_RELEASE, c->laddr, q->id, 0);
	cider_trace(c, CIDER_T_HANDOVER, c->laddr, q->id, q->next);
	cider_send(c->cn, CIDER_MSG_HANDOVER, false, q->next, q->id, q);
}

/* Sub-protothread: release the MCS lock held by c->qn. */
bool cider_lock_release(struct cider_client *c)
{
	struct cider_qnode *q = c->qn;
	u64 mine = cider_word(q ? q->lockver : 0, q ? q->id : 0);

	PT_BEGIN(&c->pt_l1);
	v_reset(c);
	if (q->next) {
		cider_handover(c, q);
	} else {
		cider_trace(c, CIDER_T_RELEASE, c->laddr, q->id, 0);
		v_cas(c, c->laddr, mine, cider_word(q->lockver, 0));
	}
	v_faa(c, c->laddr + 8, 1);
	cider_post(c);
	PT_YIELD(&c->pt_l1);
	q = c->qn;
	if (c->v[0].op == CIDER_V_CAS && c->v[0].old != mine) {
		/*
		 * A successor swapped in; its ENQ is on the way.  This client
		 * only forwards the lock now and writes nothing, so it is not a
		 * holder: if the successor died before its ENQ, a reset after a
		 * lease gives the lock to somebody else meanwhile (the soak
		 * found the checker calling that two holders).
		 */
		c->st.cas_fail++;
		c->epoch = c->v[1].old + 1;
		PT_SPAWN(&c->pt_l1, cider_lock_wait(c, cider_q_has_next));
		if (c->restart) {	/* reset meanwhile: nobody to hand to */
			c->restart = false;
			PT_EXIT(&c->pt_l1);
		}
		cider_handover(c, c->qn);
	}
	cider_qnode_owner_done(c->qn);
	c->qn = NULL;
	PT_END(&c->pt_l1);
}

/*
 * The CAS spinlock baseline: CAS the lock word from 0 to the client's id,
 * backing off (truncated exponential, adaptive bound) after each failure.
 * A holder that stays past the lease is reset as in the MCS lock.
 */
bool cider_caslock_acquire(struct cider_client *c)
{
	const struct cider_cfg *cfg = cfg_of(c);
	struct cider_cn *cn = c->cn;
	u64 me = cider_word(0, c->id + 1), w0, e;

	PT_BEGIN(&c->pt_l1);
	c->attempt = 0;
	c->seen_epoch = ~0ULL;
	for (;;) {
		v_reset(c);
		v_cas(c, c->caddr, 0, me);
		v_read(c, c->caddr + 8, 8);
		cider_post(c);
		PT_YIELD(&c->pt_l1);
		cider_backoff_account(&cn->backoff, c->attempt > 0, cider_now(c));
		if (c->v[0].old == 0)
			break;
		c->st.cas_fail++;
		w0 = c->v[0].old;
		e = c->v[1].data[0];
		if (e != c->seen_epoch) {
			c->seen_epoch = e;
			c->changed_at = cider_now(c);
		} else if (cider_now(c) - c->changed_at >= cfg->lease_ns) {
			v_reset(c);
			v_cas(c, c->caddr, w0, 0);
			v_faa(c, c->caddr + 8, CIDER_EPOCH_GEN);
			cider_post(c);
			PT_YIELD(&c->pt_l1);
			c->st.resets++;
			cider_trace(c, CIDER_T_RESET, c->caddr, c->v[0].arg0, 2);
			c->seen_epoch = ~0ULL;
			continue;
		}
		cider_arm(c, cider_backoff_delay(&cn->backoff, c->attempt++,
						 cn->fab->ops->rand(cn->fab->priv)));
		PT_YIELD(&c->pt_l1);
	}
	cider_trace(c, CIDER_T_ACQUIRE, c->caddr, me, 0);
	PT_END(&c->pt_l1);
}

bool cider_caslock_release(struct cider_client *c)
{
	u64 me = cider_word(0, c->id + 1);

	PT_BEGIN(&c->pt_l1);
	cider_trace(c, CIDER_T_RELEASE, c->caddr, me, 0);
	v_reset(c);
	v_cas(c, c->caddr, me, 0);
	v_faa(c, c->caddr + 8, 1);
	cider_post(c);
	PT_YIELD(&c->pt_l1);
	PT_END(&c->pt_l1);
}

/* The CN's lock agent: messages to its qnodes. */
void cider_cn_on_msg(struct cider_cn *cn, const struct cider_msg *m)
{
	struct cider_qnode *q;

	if (cn->dead)
		return;
	q = cider_qnode_get(cn, m->to);
	if (!q) {
		cn->msgs_dropped++;
		return;
	}
	switch (m->type) {
	case CIDER_MSG_ENQ:
		q->next = m->from;
		if (q->fwd_pending)
			cider_wc_on_msg(cn, q, m);
		else
			cider_wake(&cn->clients[q->owner]);
		break;
	case CIDER_MSG_HANDOVER:
		if (m->combined) {
			cider_wc_on_msg(cn, q, m);
			break;
		}
		q->state = CIDER_Q_GRANTED;
		q->ptr = m->ptr;
		cider_wake(&cn->clients[q->owner]);
		break;
	default:
		cider_wc_on_msg(cn, q, m);
		break;
	}
}
