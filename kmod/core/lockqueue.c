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

static struct cider_qnode *cider_qnode_get(struct cider_cn *cn, u64 id)
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

static bool cider_wait_cond(const struct cider_client *c)
{
	const struct cider_qnode *q = c->qn;

	switch (c->leaf.wait.cond) {
	case CIDER_WAIT_LOCK:
		return q->state != CIDER_Q_WAITING;
	case CIDER_WAIT_NEXT:
		return q->next != 0;
	case CIDER_WAIT_EXEC_DONE:
		return q->exec_done;
	case CIDER_WAIT_PASSTHRU:
	default:
		return q->passthru;
	}
}

/* c->epoch is the lock's epoch when the wait begins. */
void cider_wait_init(struct cider_client *c, u8 cond)
{
	c->leaf.wait.state = CIDER_WAIT_BEGIN;
	c->leaf.wait.cond = cond;
}

/*
 * The lock entry as polled: a new reset generation means this client's
 * queue is gone; an epoch unchanged for a whole lease means its holder is.
 */
static enum cider_step cider_wait_polled(struct cider_client *c)
{
	const struct cider_cfg *cfg = cfg_of(c);
	struct cider_lock_wait *w = &c->leaf.wait;
	u64 w0 = c->v[0].data[0], e = c->v[0].data[1];

	if (cider_wait_cond(c))
		return CIDER_STEP_DONE;
	if (cider_epoch_gen(e) != cider_epoch_gen(w->seen_epoch)) {
		cider_abandon(c);
		return CIDER_STEP_DONE;
	}
	w->state = CIDER_WAIT_CHECK;
	if (e != w->seen_epoch) {
		w->seen_epoch = e;
		w->changed_at = cider_now(c);
		return CIDER_STEP_NEXT;
	}
	if (cider_now(c) - w->changed_at < cfg->lease_ns)
		return CIDER_STEP_NEXT;
	/* Nobody released for a whole lease: the holder is gone. */
	v_reset(c);
	v_cas(c, c->laddr, w0, cider_word(cider_word_ver(w0), 0));
	v_faa(c, c->laddr + 8, CIDER_EPOCH_GEN);
	w->state = CIDER_WAIT_RESET;
	return CIDER_STEP_POSTED;
}

static enum cider_step cider_wait_once(struct cider_client *c)
{
	struct cider_lock_wait *w = &c->leaf.wait;

	switch (w->state) {
	case CIDER_WAIT_BEGIN:
		w->seen_epoch = c->epoch;
		w->changed_at = cider_now(c);
		w->state = CIDER_WAIT_CHECK;
		return CIDER_STEP_NEXT;
	case CIDER_WAIT_CHECK:
		if (cider_wait_cond(c))
			return CIDER_STEP_DONE;
		w->state = CIDER_WAIT_SLEEP;
		return cider_sleep(c, cfg_of(c)->lease_ns / 4);
	case CIDER_WAIT_SLEEP:
		/* Woken by a message, or the timer: then poll the lock. */
		w->state = CIDER_WAIT_CHECK;
		if (cider_wait_cond(c) || !c->timer_fired)
			return CIDER_STEP_NEXT;
		v_reset(c);
		v_read(c, c->laddr, 16);
		w->state = CIDER_WAIT_POLL;
		return CIDER_STEP_POSTED;
	case CIDER_WAIT_POLL:
		return cider_wait_polled(c);
	case CIDER_WAIT_RESET:
	default:
		c->st.resets++;
		cider_trace(c, CIDER_T_RESET, c->laddr, c->v[0].arg0, w->seen_epoch);
		cider_abandon(c);
		return CIDER_STEP_DONE;
	}
}

/*
 * Wait until the condition holds, polling the lock entry every quarter
 * lease.  Ends with c->restart set (and the qnode abandoned) when the lock
 * was reset, by this client or another.
 */
enum cider_step cider_wait_step(struct cider_client *c)
{
	return cider_run(c, cider_wait_once);
}

const char *cider_wait_state_name(u8 state)
{
	static const char *const names[] = {
		[CIDER_WAIT_BEGIN] = "wait:begin",
		[CIDER_WAIT_CHECK] = "wait:check",
		[CIDER_WAIT_SLEEP] = "wait:sleep",
		[CIDER_WAIT_POLL] = "wait:poll",
		[CIDER_WAIT_RESET] = "wait:reset",
	};

	return state < ARRAY_SIZE(names) ? names[state] : "wait:?";
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

	c->sub.acquire.lockw = w0;
	if (!c->mm_since || e != c->mm_epoch) {
		c->mm_epoch = e;
		c->mm_since = now ? now : 1;
		return false;
	}
	return now - c->mm_since >= cfg_of(c)->lease_ns;
}

static bool cider_versioned(const struct cider_client *c)
{
	return cfg_of(c)->mode == CIDER_MODE_CIDER;
}

void cider_acquire_init(struct cider_client *c)
{
	c->sub.acquire.state = CIDER_ACQUIRE_BEGIN;
}

static enum cider_step cider_acquire_begin(struct cider_client *c)
{
	struct cider_acquire *a = &c->sub.acquire;
	bool versioned = cider_versioned(c);
	u32 ver = w_ver(c, c->ptr);

	c->qn = cider_qnode_alloc(c);
	if (!c->qn) {			/* every slot busy: try again later */
		c->restart = true;
		return CIDER_STEP_DONE;
	}
	c->qn->lockver = versioned ? ver + (c->op == CIDER_DELETE) : 0;
	a->cmp = cider_word(versioned ? ver : 0, 0);
	a->attempt = 0;
	a->state = CIDER_ACQUIRE_SWAP;
	return CIDER_STEP_NEXT;
}

/* The qnode is the tail: the lock is ours, or comes from the predecessor. */
static enum cider_step cider_acquire_swapped(struct cider_client *c)
{
	struct cider_acquire *a = &c->sub.acquire;

	c->epoch = c->v[1].data[0];
	c->qn->ptr = c->ptr;
	if (!cider_word_off(a->cmp)) {
		c->qn->state = CIDER_Q_GRANTED;
		cider_trace(c, CIDER_T_ACQUIRE, c->laddr, c->qn->id, 0);
		return CIDER_STEP_DONE;
	}
	cider_send(c->cn, CIDER_MSG_ENQ, false, cider_word_off(a->cmp), c->qn->id, c->qn);
	cider_wait_init(c, CIDER_WAIT_LOCK);
	a->state = CIDER_ACQUIRE_WAIT;
	return CIDER_STEP_NEXT;
}

/* The swap CAS completed. */
static enum cider_step cider_acquire_cas(struct cider_client *c)
{
	const struct cider_cfg *cfg = cfg_of(c);
	struct cider_acquire *a = &c->sub.acquire;
	u64 old = c->v[0].old;

	if (cfg->backoff)
		cider_backoff_account(&c->cn->backoff, old != a->cmp, cider_now(c));
	if (old == a->cmp)
		return cider_acquire_swapped(c);
	c->st.cas_fail++;
	if (cider_versioned(c) && cider_word_ver(old) != w_ver(c, c->ptr)) {
		cider_abandon(c);
		if (!cider_version_stuck(c, old))
			return CIDER_STEP_DONE;
		/* Reset the lock to the pointer's version. */
		v_reset(c);
		v_cas(c, c->laddr, a->lockw, cider_word(w_ver(c, c->ptr), 0));
		v_faa(c, c->laddr + 8, CIDER_EPOCH_GEN);
		a->state = CIDER_ACQUIRE_VRESET;
		return CIDER_STEP_POSTED;
	}
	a->cmp = old;
	a->state = CIDER_ACQUIRE_SWAP;
	/* Without masked CAS the swap is a CAS loop: back off like one. */
	if (!cfg->backoff)
		return CIDER_STEP_NEXT;
	a->state = CIDER_ACQUIRE_BACKOFF;
	return cider_sleep(c, cider_backoff_delay(&c->cn->backoff, a->attempt++, cider_rand(c)));
}

static enum cider_step cider_acquire_once(struct cider_client *c)
{
	struct cider_acquire *a = &c->sub.acquire;
	enum cider_step r;

	switch (a->state) {
	case CIDER_ACQUIRE_BEGIN:
		return cider_acquire_begin(c);
	case CIDER_ACQUIRE_SWAP:
		if (!cider_versioned(c))
			c->qn->lockver = cider_word_ver(a->cmp);
		v_reset(c);
		v_cas(c, c->laddr, a->cmp, cider_word(c->qn->lockver, c->qn->id));
		v_read(c, c->laddr + 8, 8);
		a->state = CIDER_ACQUIRE_CAS;
		return CIDER_STEP_POSTED;
	case CIDER_ACQUIRE_CAS:
		return cider_acquire_cas(c);
	case CIDER_ACQUIRE_BACKOFF:
		a->state = CIDER_ACQUIRE_SWAP;
		return CIDER_STEP_NEXT;
	case CIDER_ACQUIRE_VRESET:
		c->st.resets++;
		cider_trace(c, CIDER_T_RESET, c->laddr, a->lockw, 1);
		c->mm_since = 0;
		return CIDER_STEP_DONE;
	case CIDER_ACQUIRE_WAIT:
	default:
		r = cider_wait_step(c);
		if (r != CIDER_STEP_DONE)
			return r;
		if (!c->restart && c->qn->state != CIDER_Q_COMBINED)
			cider_trace(c, CIDER_T_ACQUIRE, c->laddr, c->qn->id, 0);
		return CIDER_STEP_DONE;
	}
}

/*
 * Enqueue on c->key's MCS lock and wait until the qnode has a role
 * (GRANTED, EXECUTOR or COMBINED) or c->restart is set.
 *
 * In cider mode the lock entry's version must equal the data pointer's
 * (c->ptr); a DELETE enqueues with the version advanced, so no UPDATE can
 * queue behind it: it is always the last of its queue (§4.2.2).  A
 * mismatch means a DELETE is under way: start over once it is done.
 */
enum cider_step cider_acquire_step(struct cider_client *c)
{
	return cider_run(c, cider_acquire_once);
}

const char *cider_acquire_state_name(u8 state)
{
	static const char *const names[] = {
		[CIDER_ACQUIRE_BEGIN] = "acquire:begin",
		[CIDER_ACQUIRE_SWAP] = "acquire:swap",
		[CIDER_ACQUIRE_CAS] = "acquire:cas",
		[CIDER_ACQUIRE_BACKOFF] = "acquire:backoff",
		[CIDER_ACQUIRE_VRESET] = "acquire:vreset",
		[CIDER_ACQUIRE_WAIT] = "acquire:wait",
	};

	return state < ARRAY_SIZE(names) ? names[state] : "acquire:?";
}

/* Pass the lock to @q's successor (known by now). */
static void cider_handover(struct cider_client *c, struct cider_qnode *q)
{
	q->ptr = c->ptr;
	cider_trace(c, CIDER_T_RELEASE, c->laddr, q->id, 0);
	cider_trace(c, CIDER_T_HANDOVER, c->laddr, q->id, q->next);
	cider_send(c->cn, CIDER_MSG_HANDOVER, false, q->next, q->id, q);
}

void cider_release_init(struct cider_client *c)
{
	struct cider_qnode *q = c->qn;

	c->sub.release.state = CIDER_RELEASE_BEGIN;
	c->sub.release.mine = cider_word(q->lockver, q->id);
}

static enum cider_step cider_release_begin(struct cider_client *c)
{
	struct cider_release *rl = &c->sub.release;
	struct cider_qnode *q = c->qn;

	v_reset(c);
	if (q->next) {
		cider_handover(c, q);
	} else {
		cider_trace(c, CIDER_T_RELEASE, c->laddr, q->id, 0);
		v_cas(c, c->laddr, rl->mine, cider_word(q->lockver, 0));
	}
	v_faa(c, c->laddr + 8, 1);
	rl->state = CIDER_RELEASE_POSTED;
	return CIDER_STEP_POSTED;
}

static enum cider_step cider_release_once(struct cider_client *c)
{
	struct cider_release *rl = &c->sub.release;
	enum cider_step r;

	switch (rl->state) {
	case CIDER_RELEASE_BEGIN:
		return cider_release_begin(c);
	case CIDER_RELEASE_POSTED:
		if (c->v[0].op == CIDER_V_CAS && c->v[0].old != rl->mine) {
			/*
			 * A successor swapped in; its ENQ is on the way.  This
			 * client only forwards the lock now and writes nothing, so
			 * it is not a holder: if the successor died before its ENQ,
			 * a reset after a lease gives the lock to somebody else
			 * meanwhile (the soak found the checker calling that two
			 * holders).
			 */
			c->st.cas_fail++;
			c->epoch = c->v[1].old + 1;
			cider_wait_init(c, CIDER_WAIT_NEXT);
			rl->state = CIDER_RELEASE_WAIT;
			return CIDER_STEP_NEXT;
		}
		break;
	case CIDER_RELEASE_WAIT:
	default:
		r = cider_wait_step(c);
		if (r != CIDER_STEP_DONE)
			return r;
		if (c->restart) {	/* reset meanwhile: nobody to hand to */
			c->restart = false;
			return CIDER_STEP_DONE;
		}
		cider_handover(c, c->qn);
		break;
	}
	cider_qnode_owner_done(c->qn);
	c->qn = NULL;
	return CIDER_STEP_DONE;
}

/* Release the MCS lock held by c->qn. */
enum cider_step cider_release_step(struct cider_client *c)
{
	return cider_run(c, cider_release_once);
}

const char *cider_release_state_name(u8 state)
{
	static const char *const names[] = {
		[CIDER_RELEASE_BEGIN] = "release:begin",
		[CIDER_RELEASE_POSTED] = "release:posted",
		[CIDER_RELEASE_WAIT] = "release:wait",
	};

	return state < ARRAY_SIZE(names) ? names[state] : "release:?";
}

/*
 * The CAS spinlock baseline: CAS the lock word from 0 to the client's id,
 * backing off (truncated exponential, adaptive bound) after each failure.
 * A holder that stays past the lease is reset as in the MCS lock.
 */
void cider_caslock_init(struct cider_client *c, bool release)
{
	c->sub.caslock.state = release ? CIDER_CASLOCK_RELEASE : CIDER_CASLOCK_BEGIN;
}

static u64 cider_caslock_me(const struct cider_client *c)
{
	return cider_word(0, c->id + 1);
}

/* The CAS on the lock word completed: taken, or wait (or reset it). */
static enum cider_step cider_caslock_cas(struct cider_client *c)
{
	struct cider_caslock *l = &c->sub.caslock;
	struct cider_cn *cn = c->cn;
	u64 w0 = c->v[0].old, e = c->v[1].data[0];

	cider_backoff_account(&cn->backoff, l->attempt > 0, cider_now(c));
	if (w0 == 0) {
		cider_trace(c, CIDER_T_ACQUIRE, c->caddr, cider_caslock_me(c), 0);
		return CIDER_STEP_DONE;
	}
	c->st.cas_fail++;
	if (e != l->seen_epoch) {
		l->seen_epoch = e;
		l->changed_at = cider_now(c);
	} else if (cider_now(c) - l->changed_at >= cfg_of(c)->lease_ns) {
		v_reset(c);
		v_cas(c, c->caddr, w0, 0);
		v_faa(c, c->caddr + 8, CIDER_EPOCH_GEN);
		l->state = CIDER_CASLOCK_RESET;
		return CIDER_STEP_POSTED;
	}
	l->state = CIDER_CASLOCK_BACKOFF;
	return cider_sleep(c, cider_backoff_delay(&cn->backoff, l->attempt++, cider_rand(c)));
}

static enum cider_step cider_caslock_once(struct cider_client *c)
{
	struct cider_caslock *l = &c->sub.caslock;

	switch (l->state) {
	case CIDER_CASLOCK_BEGIN:
		l->attempt = 0;
		l->seen_epoch = ~0ULL;
		l->state = CIDER_CASLOCK_TRY;
		return CIDER_STEP_NEXT;
	case CIDER_CASLOCK_TRY:
		v_reset(c);
		v_cas(c, c->caddr, 0, cider_caslock_me(c));
		v_read(c, c->caddr + 8, 8);
		l->state = CIDER_CASLOCK_CAS;
		return CIDER_STEP_POSTED;
	case CIDER_CASLOCK_CAS:
		return cider_caslock_cas(c);
	case CIDER_CASLOCK_RESET:
		c->st.resets++;
		cider_trace(c, CIDER_T_RESET, c->caddr, c->v[0].arg0, 2);
		l->seen_epoch = ~0ULL;
		l->state = CIDER_CASLOCK_TRY;
		return CIDER_STEP_NEXT;
	case CIDER_CASLOCK_BACKOFF:
		l->state = CIDER_CASLOCK_TRY;
		return CIDER_STEP_NEXT;
	case CIDER_CASLOCK_RELEASE:
		cider_trace(c, CIDER_T_RELEASE, c->caddr, cider_caslock_me(c), 0);
		v_reset(c);
		v_cas(c, c->caddr, cider_caslock_me(c), 0);
		v_faa(c, c->caddr + 8, 1);
		l->state = CIDER_CASLOCK_UNLOCK;
		return CIDER_STEP_POSTED;
	case CIDER_CASLOCK_UNLOCK:
	default:
		return CIDER_STEP_DONE;
	}
}

/* Acquire or release (as initialized) the CAS spinlock on c->caddr. */
enum cider_step cider_caslock_step(struct cider_client *c)
{
	return cider_run(c, cider_caslock_once);
}

const char *cider_caslock_state_name(u8 state)
{
	static const char *const names[] = {
		[CIDER_CASLOCK_BEGIN] = "caslock:begin",
		[CIDER_CASLOCK_TRY] = "caslock:try",
		[CIDER_CASLOCK_CAS] = "caslock:cas",
		[CIDER_CASLOCK_RESET] = "caslock:reset",
		[CIDER_CASLOCK_BACKOFF] = "caslock:backoff",
		[CIDER_CASLOCK_RELEASE] = "caslock:release",
		[CIDER_CASLOCK_UNLOCK] = "caslock:unlock",
	};

	return state < ARRAY_SIZE(names) ? names[state] : "caslock:?";
}

const char *cider_qstate_name(u8 state)
{
	static const char *const names[] = {
		[CIDER_Q_FREE] = "free",
		[CIDER_Q_WAITING] = "waiting",
		[CIDER_Q_GRANTED] = "granted",
		[CIDER_Q_EXECUTOR] = "executor",
		[CIDER_Q_COMBINED] = "combined",
		[CIDER_Q_ABANDONED] = "abandoned",
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
	q = cider_qnode_get(cn, m->to);
	if (!q) {
		cn->msgs_dropped++;
		return NULL;
	}
	switch (m->type) {
	case CIDER_MSG_ENQ:
		q->next = m->from;
		if (q->fwd_pending)
			return cider_wc_on_msg(cn, q, m);
		return &cn->clients[q->owner];
	case CIDER_MSG_HANDOVER:
		if (m->combined)
			return cider_wc_on_msg(cn, q, m);
		q->state = CIDER_Q_GRANTED;
		q->ptr = m->ptr;
		return &cn->clients[q->owner];
	default:
		return cider_wc_on_msg(cn, q, m);
	}
}
