/* SPDX-License-Identifier: GPL-2.0 */
/* Global write combining over the lock queue (writecomb.c, §4.2.1). */
#ifndef _CIDER_CORE_WRITECOMB_H
#define _CIDER_CORE_WRITECOMB_H

#include "sm.h"
#include "platform.h"

struct cider_client;
struct cider_cn;
struct cider_msg;
struct cider_qnode;

enum cider_coord_state { CIDER_COORD_STATES(CIDER_SUB_STATE_ENUM) };

/*
 * The coordinator (holds c->qn after waiting for it): find the batch in
 * the ring, lend the lock to its last member, wait for the result and
 * send it to every other member at once.  Ends with c->res and c->writer
 * the batch's; with c->sub.coord.members 0 when there was nobody to
 * combine with (then c holds the lock and writes alone, c->ptr fresh);
 * or ends RESTART.
 */
struct cider_coord {
	u8 state;		/* enum cider_coord_state */
	u32 members;		/* tickets after the coordinator's in the batch */
};

void cider_coord_init(struct cider_client *c);
enum cider_step cider_coord_step(struct cider_client *c);
const char *cider_coord_state_name(u8 state);

void cider_wc_report(struct cider_client *c);
struct cider_client *cider_wc_on_msg(struct cider_cn *cn, struct cider_qnode *q,
				     const struct cider_msg *m);

#endif
