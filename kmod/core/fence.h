/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reader fence (fence.c, slab.h) that lets a late reader hold up the
 * reuse of blocks.
 */
#ifndef _CIDER_CORE_FENCE_H
#define _CIDER_CORE_FENCE_H

#include "sm.h"
#include "platform.h"

struct cider_client;

enum cider_fence_state { CIDER_FENCE_STATES(CIDER_SUB_STATE_ENUM) };

/* Announce this client on the reader fence (enter) or leave it. */
struct cider_fence {
	u8 state;		/* enum cider_fence_state */
	bool enter;
};

void cider_fence_init(struct cider_client *c, bool enter);
enum cider_step cider_fence_step(struct cider_client *c);
const char *cider_fence_state_name(u8 state);

#endif
