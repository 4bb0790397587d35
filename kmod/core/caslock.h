/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CAS spinlock (caslock.c): the baseline that CASes a lock word from
 * 0 to its holder, and the hash index's INSERT locks.  Its words are a
 * lock record's first two (lockqueue.h).
 */
#ifndef _CIDER_CORE_CASLOCK_H
#define _CIDER_CORE_CASLOCK_H

#include "sm.h"
#include "platform.h"

struct cider_client;

enum cider_caslock_state { CIDER_CASLOCK_STATES(CIDER_SUB_STATE_ENUM) };

/* The CAS spinlock on c->caddr: acquire, or release. */
struct cider_caslock {
	u8 state;		/* enum cider_caslock_state */
	u32 attempt;
	u64 seen_epoch;
	u64 changed_at;
};

void cider_caslock_init(struct cider_client *c, bool release);
enum cider_step cider_caslock_step(struct cider_client *c);
const char *cider_caslock_state_name(u8 state);

#endif
