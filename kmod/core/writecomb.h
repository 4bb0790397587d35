/* SPDX-License-Identifier: GPL-2.0 */
/* Global write combining over the MCS wait queue (writecomb.c, §4.2.1). */
#ifndef _CIDER_CORE_WRITECOMB_H
#define _CIDER_CORE_WRITECOMB_H

#include "sm.h"
#include "platform.h"

struct cider_client;
struct cider_cn;
struct cider_msg;
struct cider_qnode;

enum cider_coord_state {
	CIDER_COORD_BEGIN,
	CIDER_COORD_TAIL,	/* READ of the lock entry's tail posted */
	CIDER_COORD_WAIT,	/* child: cider_lock_wait for the executor */
	CIDER_COORD_FAA,	/* FAA of the epoch (the release) posted */
};

/*
 * The coordinator (holds c->qn, which has a successor): lend the lock to
 * the tail, wait for its result and hand that down the queue.  Ends with
 * c->res and c->writer the batch's, or c->restart set.
 */
struct cider_coord {
	u8 state;		/* enum cider_coord_state */
};

enum cider_passthru_state {
	CIDER_PASSTHRU_BEGIN,
	CIDER_PASSTHRU_WAIT,	/* child: cider_lock_wait for the result */
};

/* The executor after its report: wait until the lock is really its own. */
struct cider_passthru {
	u8 state;		/* enum cider_passthru_state */
};

void cider_coord_init(struct cider_client *c);
enum cider_step cider_coord_step(struct cider_client *c);
const char *cider_coord_state_name(u8 state);

void cider_passthru_init(struct cider_client *c);
enum cider_step cider_passthru_step(struct cider_client *c);
const char *cider_passthru_state_name(u8 state);

void cider_wc_report(struct cider_client *c);
struct cider_client *cider_wc_on_msg(struct cider_cn *cn, struct cider_qnode *q,
				     const struct cider_msg *m);

#endif
