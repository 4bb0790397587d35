// SPDX-License-Identifier: GPL-2.0
/*
 * The CAS spinlock (caslock.h): CAS the lock word from 0 to the client's
 * id, backing off (truncated exponential, adaptive bound) after each
 * failure.  A holder that stays past the lease is reset as in the MCS
 * lock.
 */
#include "verbs.h"

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
	} else if (cider_now(c) - l->changed_at >= cider_cfg_of(c)->lease_ns) {
		cider_v_reset(c);
		cider_v_cas(c, c->caddr, w0, 0);
		cider_v_faa(c, c->caddr + 8, CIDER_EPOCH_GEN);
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
		cider_v_reset(c);
		cider_v_cas(c, c->caddr, 0, cider_caslock_me(c));
		cider_v_read(c, c->caddr + 8, 8);
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
		cider_v_reset(c);
		cider_v_cas(c, c->caddr, cider_caslock_me(c), 0);
		cider_v_faa(c, c->caddr + 8, 1);
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
		CIDER_CASLOCK_STATES(CIDER_SUB_STATE_NAME)
	};

	return state < ARRAY_SIZE(names) ? names[state] : "caslock:?";
}
