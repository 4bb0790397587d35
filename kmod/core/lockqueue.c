// SPDX-License-Identifier: GPL-2.0
/*
 * The lock queue: a FIFO lock per data pointer whose enqueue never fails
 * or retries on plain 8-byte verbs (the CAS spinlock baseline is
 * caslock.c).
 *
 * Enqueue is one FAA on the lock's header (lockqueue.h): it returns the
 * ticket (head + size) and, when the queue was empty, the lock.  Kernel
 * verbs on rxe and mlx4/mlx5 have no masked CAS, so an MCS swap of the
 * tail is a CAS loop that fails under contention; an FAA always
 * succeeds, so contending clients queue instead of backing off (DecLock's
 * CQL lock enqueues so).  A waiter WRITEs its ring entry (who it is, the
 * pointer version it read, DELETE or not) and READs the header in the same
 * batch; a release is one FAA (head += k, size -= k) with a READ of the
 * next ticket's entry, whose waiter it then tells by message (HANDOVER).
 * The two batches meet at the MN in some order: if the releaser's READ
 * comes before the waiter's WRITE, the waiter's READ comes after the
 * releaser's FAA and shows head == its ticket, so it takes the lock
 * itself; otherwise the releaser finds the entry.  Either way the lock
 * moves on, in ticket order, with no retry.
 *
 * The ring has lock_qlen entries (a power of two, set when the store is
 * formatted).  A waiter whose ticket is lock_qlen or more ahead of head
 * would overwrite a live entry: it polls the header (a READ, backing off
 * with its distance) until there is room, then writes as above.  The
 * queue stays FIFO and correct; only such waiters cost READs.
 *
 * Recovery (paper §4.6, by lease): every wait polls the header every
 * lease/4.  A new reset generation means the queue is gone: abandon and
 * start over.  head == own ticket means the lock is ours though nobody
 * said so.  head unchanged for a whole lease (the longest hold) means the
 * holder is dead: CAS the header to (head + size, gen + 1, 0), which skips
 * every ticket issued, so nobody queued before can ever be handed the
 * lock.  head past its own ticket for a lease without the result of the
 * batch that took it means that result is lost: start over (the write was
 * never acknowledged, so doing it again is safe).
 */
#include "verbs.h"

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

/* The qnode a message is for, if it still waits on that lock with that ticket. */
static struct cider_qnode *cider_qnode_find(struct cider_cn *cn, const struct cider_msg *m)
{
	struct cider_qnode *q;

	if (m->to_slot >= CIDER_QNODES_PER_CN)
		return NULL;
	q = &cn->q[m->to_slot];
	if (!q->id || !q->enqueued || q->state == CIDER_Q_ABANDONED ||
	    q->laddr != m->laddr || q->ticket != m->ticket)
		return NULL;
	return q;
}

void cider_qnode_owner_done(struct cider_qnode *q)
{
	q->id = 0;
	q->state = CIDER_Q_FREE;
}

void cider_lq_send(struct cider_cn *cn, u8 type, u32 to_cn, u32 to_slot, u32 to_ticket,
		   const struct cider_qnode *q)
{
	struct cider_msg m = {
		.type = type, .result = q->result, .to_slot = to_slot, .ticket = to_ticket,
		.laddr = q->laddr, .from_cn = cn->id, .from_slot = cider_qid_slot(q->id),
		.from_ticket = q->ticket, .count = q->count, .ptr = q->ptr, .writer = q->writer,
	};

	cn->fab->ops->send(cn->fab->priv, cn, to_cn, &m);
}

static u64 cider_lq_ring(const struct cider_client *c, u32 ticket)
{
	return c->laddr + CIDER_LQ_RING_OFF + 8ULL * (ticket & (cider_cfg_of(c)->lock_qlen - 1));
}

/* The header after a reset: every ticket issued skipped, a new generation. */
static u64 cider_lq_reset_word(u64 h)
{
	return (u64)(cider_lq_head(h) + cider_lq_size(h)) << 32 |
	       (u64)((cider_lq_gen(h) + 1) & CIDER_LQ_GEN_MASK) << CIDER_LQ_SIZE_BITS;
}

/* A waiting client gives up its place: the lock was reset under it. */
static void cider_abandon(struct cider_client *c)
{
	if (c->qn) {
		c->qn->state = CIDER_Q_ABANDONED;
		cider_qnode_owner_done(c->qn);
		c->qn = NULL;
	}
	c->outcome = CIDER_OUT_RESTART;
}

/* The lock is c->qn's, in ticket order, for its own write. */
static void cider_lq_granted(struct cider_client *c, bool waited)
{
	struct cider_qnode *q = c->qn;

	q->state = CIDER_Q_GRANTED;
	q->granted_waiting = waited;
}

static bool cider_wait_cond(const struct cider_client *c)
{
	const struct cider_qnode *q = c->qn;

	switch (c->leaf.wait.cond) {
	case CIDER_WAIT_LOCK:
		return q->state != CIDER_Q_WAITING;
	case CIDER_WAIT_EXEC_DONE:
		return q->exec_done;
	case CIDER_WAIT_ROOM:
	default:
		return q->state != CIDER_Q_WAITING ||
		       q->ticket - cider_lq_head(c->epoch) < cider_cfg_of(c)->lock_qlen;
	}
}

/* c->epoch is the lock's header as last read when the wait begins. */
void cider_wait_init(struct cider_client *c, u8 cond)
{
	c->leaf.wait.state = CIDER_WAIT_BEGIN;
	c->leaf.wait.cond = cond;
}

/* Nobody released for a whole lease: the holder is gone, skip the queue. */
static enum cider_step cider_wait_reset(struct cider_client *c, u64 h)
{
	cider_v_reset(c);
	cider_v_cas(c, c->laddr, h, cider_lq_reset_word(h));
	c->leaf.wait.state = CIDER_WAIT_RESET;
	return CIDER_STEP_POSTED;
}

/*
 * The header as polled (c->epoch): a new generation means this client's
 * queue is gone; head at its ticket means the lock is its own; head
 * unchanged for a lease means the holder is gone; head past its ticket
 * for a lease with no result means the result is lost.
 */
static enum cider_step cider_wait_polled(struct cider_client *c)
{
	const struct cider_cfg *cfg = cider_cfg_of(c);
	struct cider_lock_wait *w = &c->leaf.wait;
	struct cider_qnode *q = c->qn;
	u64 h = c->epoch, now = cider_now(c);
	s32 passed = (s32)(cider_lq_head(h) - q->ticket);

	if (cider_wait_cond(c))
		return CIDER_STEP_DONE;
	if (cider_lq_gen(h) != q->gen) {
		cider_abandon(c);
		return CIDER_STEP_DONE;
	}
	w->state = CIDER_WAIT_CHECK;
	if (w->cond != CIDER_WAIT_EXEC_DONE && !passed) {
		c->st.self_grants++;	/* the releaser read the entry too early */
		cider_lq_granted(c, true);
		return CIDER_STEP_DONE;
	}
	if (passed > 0) {
		if (!w->passed_at)
			w->passed_at = now ? now : 1;
		else if (now - w->passed_at >= cfg->lease_ns)
			cider_abandon(c);
		return c->outcome == CIDER_OUT_RESTART ? CIDER_STEP_DONE : CIDER_STEP_NEXT;
	}
	if (cider_lq_head(h) != w->seen_head) {
		w->seen_head = cider_lq_head(h);
		w->changed_at = now;
		return CIDER_STEP_NEXT;
	}
	if (now - w->changed_at < cfg->lease_ns)
		return CIDER_STEP_NEXT;
	return cider_wait_reset(c, h);
}

/* The reset's CAS completed: done, or the header moved meanwhile. */
static enum cider_step cider_wait_reset_done(struct cider_client *c)
{
	struct cider_lock_wait *w = &c->leaf.wait;
	u64 old = c->v[0].old, want = c->v[0].arg0;

	if (old == want) {
		c->st.resets++;
		cider_trace(c, CIDER_T_RESET, c->laddr, want, 0);
		cider_abandon(c);
		return CIDER_STEP_DONE;
	}
	c->epoch = old;
	if (cider_lq_gen(old) != c->qn->gen) {		/* somebody else reset it */
		cider_abandon(c);
		return CIDER_STEP_DONE;
	}
	if (cider_lq_head(old) != cider_lq_head(want)) {	/* it moved after all */
		w->seen_head = cider_lq_head(old);
		w->changed_at = cider_now(c);
		w->state = CIDER_WAIT_CHECK;
		return CIDER_STEP_NEXT;
	}
	return cider_wait_reset(c, old);	/* only new arrivals: again */
}

/* How long to sleep before the next poll. */
static u64 cider_wait_period(const struct cider_client *c)
{
	const struct cider_cfg *cfg = cider_cfg_of(c);
	u32 behind;

	if (c->leaf.wait.cond != CIDER_WAIT_ROOM)
		return cfg->lease_ns / 4;
	/* Room comes about one batch per ticket ahead: poll by distance. */
	behind = c->qn->ticket - cider_lq_head(c->epoch) - cfg->lock_qlen + 1;
	return cider_min_u64(cfg->backoff_t0_ns * cider_max_u64(behind, 1), cfg->lease_ns / 4);
}

static enum cider_step cider_wait_once(struct cider_client *c)
{
	struct cider_lock_wait *w = &c->leaf.wait;

	switch (w->state) {
	case CIDER_WAIT_BEGIN:
		w->seen_head = cider_lq_head(c->epoch);
		w->changed_at = cider_now(c);
		w->passed_at = 0;
		w->state = CIDER_WAIT_CHECK;
		return CIDER_STEP_NEXT;
	case CIDER_WAIT_CHECK:
		if (cider_wait_cond(c))
			return CIDER_STEP_DONE;
		w->state = CIDER_WAIT_SLEEP;
		return cider_sleep(c, cider_wait_period(c));
	case CIDER_WAIT_SLEEP:
		/* Woken by a message, or the timer: then poll the header. */
		w->state = CIDER_WAIT_CHECK;
		if (cider_wait_cond(c) || !c->timer_fired)
			return CIDER_STEP_NEXT;
		cider_v_reset(c);
		cider_v_read(c, c->laddr, 8);
		w->state = CIDER_WAIT_POLL;
		return CIDER_STEP_POSTED;
	case CIDER_WAIT_POLL:
		c->epoch = c->v[0].data[0];
		return cider_wait_polled(c);
	case CIDER_WAIT_RESET:
	default:
		return cider_wait_reset_done(c);
	}
}

/*
 * Wait until the condition holds, polling the header every quarter lease
 * (for room in the ring: by distance).  Ends RESTART (and the
 * qnode abandoned) when the lock was reset, by this client or another.
 */
enum cider_step cider_wait_step(struct cider_client *c)
{
	return cider_run(c, cider_wait_once);
}

const char *cider_wait_state_name(u8 state)
{
	static const char *const names[] = {
		CIDER_WAIT_STATES(CIDER_SUB_STATE_NAME)
	};

	return state < ARRAY_SIZE(names) ? names[state] : "wait:?";
}

void cider_acquire_init(struct cider_client *c)
{
	c->sub.acquire.state = CIDER_ACQUIRE_BEGIN;
	c->outcome = CIDER_OUT_OK;
}

/* The observation a checker needs: who holds the lock, with which ticket. */
static void cider_lq_trace_acquire(struct cider_client *c)
{
	struct cider_qnode *q = c->qn;
	u32 t = q->state == CIDER_Q_EXECUTOR ? q->coord_ticket : q->ticket;

	cider_trace(c, CIDER_T_ACQUIRE, c->laddr, q->id, CIDER_T_QUEUE | (u64)q->gen << 32 | t);
}

/*
 * The entry, then the header, in one batch: a releaser that READs the
 * entry before this WRITE lands has FAAed head before this READ.
 */
static enum cider_step cider_acquire_entry(struct cider_client *c)
{
	struct cider_qnode *q = c->qn;
	struct cider_verb *v;

	cider_v_reset(c);
	v = cider_v_add(c, CIDER_V_WRITE, cider_lq_ring(c, q->ticket), 8);
	v->data[0] = cider_lq_entry(q->ticket, c->op == CIDER_DELETE, cider_w_ver(c, c->ptr),
				    c->cn->id, cider_qid_slot(q->id));
	cider_v_read(c, c->laddr, 8);
	c->sub.acquire.state = CIDER_ACQUIRE_ENTRY;
	return CIDER_STEP_POSTED;
}

/* The FAA returned the ticket, and the lock if the queue was empty. */
static enum cider_step cider_acquire_faa(struct cider_client *c)
{
	struct cider_qnode *q = c->qn;
	u64 h = c->v[0].old;

	q->ticket = cider_lq_head(h) + cider_lq_size(h);
	q->gen = cider_lq_gen(h);
	q->enqueued = true;
	q->ptr = c->ptr;
	c->epoch = h;
	if (!cider_lq_size(h)) {
		cider_lq_granted(c, false);
		cider_lq_trace_acquire(c);
		return CIDER_STEP_DONE;
	}
	if (cider_lq_size(h) < cider_cfg_of(c)->lock_qlen)
		return cider_acquire_entry(c);
	c->st.ring_full++;
	cider_wait_init(c, CIDER_WAIT_ROOM);
	c->sub.acquire.state = CIDER_ACQUIRE_FULL;
	return CIDER_STEP_NEXT;
}

/* Entry written, header read: the lock is ours already, or wait for it. */
static enum cider_step cider_acquire_written(struct cider_client *c)
{
	struct cider_qnode *q = c->qn;
	u64 h = c->v[1].data[0];

	c->epoch = h;
	if (q->state == CIDER_Q_WAITING && cider_lq_gen(h) != q->gen) {
		cider_abandon(c);
		return CIDER_STEP_DONE;
	}
	if (q->state == CIDER_Q_WAITING && cider_lq_head(h) == q->ticket)
		cider_lq_granted(c, true);
	cider_wait_init(c, CIDER_WAIT_LOCK);
	c->sub.acquire.state = CIDER_ACQUIRE_WAIT;
	return CIDER_STEP_NEXT;
}

static enum cider_step cider_acquire_once(struct cider_client *c)
{
	struct cider_acquire *a = &c->sub.acquire;
	enum cider_step r;

	switch (a->state) {
	case CIDER_ACQUIRE_BEGIN:
		c->qn = cider_qnode_alloc(c);
		if (!c->qn) {			/* every slot busy: try again later */
			c->outcome = CIDER_OUT_RESTART;
			return CIDER_STEP_DONE;
		}
		cider_v_reset(c);
		cider_v_faa(c, c->laddr, CIDER_LQ_HDR_ENQ);
		a->state = CIDER_ACQUIRE_FAA;
		return CIDER_STEP_POSTED;
	case CIDER_ACQUIRE_FAA:
		return cider_acquire_faa(c);
	case CIDER_ACQUIRE_FULL:
		r = cider_wait_step(c);
		if (r != CIDER_STEP_DONE || c->outcome == CIDER_OUT_RESTART)
			return r;
		if (c->qn->state == CIDER_Q_WAITING)
			return cider_acquire_entry(c);
		break;
	case CIDER_ACQUIRE_ENTRY:
		return cider_acquire_written(c);
	case CIDER_ACQUIRE_WAIT:
	default:
		r = cider_wait_step(c);
		if (r != CIDER_STEP_DONE || c->outcome == CIDER_OUT_RESTART)
			return r;
		break;
	}
	if (c->qn->state != CIDER_Q_COMBINED)
		cider_lq_trace_acquire(c);
	return CIDER_STEP_DONE;
}

/*
 * Enqueue on c->key's lock and wait until the qnode has a role (GRANTED,
 * EXECUTOR or COMBINED), or ends RESTART.  The entry records the
 * pointer version this client read and whether it is a DELETE: a
 * coordinator combines only UPDATEs whose version is the pointer's
 * (writecomb.c), so nothing is combined across a DELETE.
 */
enum cider_step cider_acquire_step(struct cider_client *c)
{
	return cider_run(c, cider_acquire_once);
}

const char *cider_acquire_state_name(u8 state)
{
	static const char *const names[] = {
		CIDER_ACQUIRE_STATES(CIDER_SUB_STATE_NAME)
	};

	return state < ARRAY_SIZE(names) ? names[state] : "acquire:?";
}

/* Release @count tickets from @first (own: 1; an executor's batch: more). */
void cider_release_init(struct cider_client *c, u32 first, u32 count)
{
	c->sub.release.state = CIDER_RELEASE_BEGIN;
	c->sub.release.first = first;
	c->sub.release.count = count;
}

static enum cider_step cider_release_once(struct cider_client *c)
{
	struct cider_release *rl = &c->sub.release;
	struct cider_qnode *q = c->qn;
	u32 next = rl->first + rl->count;
	u64 h, e;

	if (rl->state == CIDER_RELEASE_BEGIN) {
		cider_trace(c, CIDER_T_RELEASE, c->laddr, q->id,
			    CIDER_T_QUEUE | (u64)rl->count << 32 | rl->first);
		cider_v_reset(c);
		cider_v_faa(c, c->laddr, cider_lq_release_add(rl->count));
		/*
		 * Plainly: the slot is WRITten by waiters, and an FAA of 0
		 * executed late (a retransmission) could write back over
		 * the entry of ticket next + Q (protocol.rst, the audit).
		 */
		cider_v_read_plain(c, cider_lq_ring(c, next), 8);
		rl->state = CIDER_RELEASE_POSTED;
		return CIDER_STEP_POSTED;
	}
	h = c->v[0].old;
	e = c->v[1].data[0];
	/* A successor whose entry is not there yet takes the lock itself. */
	if (cider_lq_gen(h) == q->gen && cider_lq_size(h) > rl->count &&
	    cider_lq_entry_for(e, next)) {
		q->ptr = c->ptr;
		cider_lq_send(c->cn, CIDER_MSG_HANDOVER, cider_lq_entry_cn(e),
			      cider_lq_entry_slot(e), next, q);
	}
	cider_qnode_owner_done(q);
	c->qn = NULL;
	return CIDER_STEP_DONE;
}

/*
 * Release the tickets c->qn holds: one FAA (head += count) and a READ of
 * the next ticket's entry in the same batch, then HANDOVER to its waiter
 * with the latest data pointer.
 */
enum cider_step cider_release_step(struct cider_client *c)
{
	return cider_run(c, cider_release_once);
}

const char *cider_release_state_name(u8 state)
{
	static const char *const names[] = {
		CIDER_RELEASE_STATES(CIDER_SUB_STATE_NAME)
	};

	return state < ARRAY_SIZE(names) ? names[state] : "release:?";
}

const char *cider_qstate_name(u8 state)
{
	static const char *const names[] = {
		CIDER_QSTATES(CIDER_VOCAB_NAME)
	};

	return state < ARRAY_SIZE(names) ? names[state] : "?";
}

/*
 * The CN's lock agent: a message to one of its qnodes.  Returns the
 * client whose wait the message may have ended (to wake), or NULL.
 */
struct cider_client *cider_lockq_on_msg(struct cider_cn *cn, const struct cider_msg *m)
{
	struct cider_qnode *q;

	if (cn->dead)
		return NULL;
	q = cider_qnode_find(cn, m);
	if (!q) {
		cn->msgs_dropped++;
		return NULL;
	}
	if (m->type != CIDER_MSG_HANDOVER)
		return cider_wc_on_msg(cn, q, m);
	/* It may have seen head at its ticket and taken the lock already. */
	if (q->state != CIDER_Q_WAITING)
		return NULL;
	q->state = CIDER_Q_GRANTED;
	q->granted_waiting = true;
	q->ptr = m->ptr;
	return &cn->clients[q->owner];
}
