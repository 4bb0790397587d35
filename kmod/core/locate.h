/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding a key's data pointer (locate.c): in the pointer array at a
 * fixed place, in the RACE-style hash index in one of two buckets.
 */
#ifndef _CIDER_CORE_LOCATE_H
#define _CIDER_CORE_LOCATE_H

#include "sm.h"
#include "platform.h"

struct cider_client;

enum cider_locate_state { CIDER_LOCATE_STATES(CIDER_SUB_STATE_ENUM) };

struct cider_locate {
	u8 state;		/* enum cider_locate_state */
	u32 ci;			/* candidate being checked: bucket * 8 + slot */
	u64 bucket[2];		/* the candidate buckets */
	u64 bkt[2][8];		/* their slots as read */
	bool cached;		/* the slot was the cache's: its block not READ */
};

void cider_locate_init(struct cider_client *c);
enum cider_step cider_locate_step(struct cider_client *c);
const char *cider_locate_state_name(u8 state);
void cider_locate_ilock(struct cider_client *c);

#endif
