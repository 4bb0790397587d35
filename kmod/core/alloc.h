/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KV blocks for writes (alloc.c): allocation from the CN's slab, with a
 * chunk claimed from the MN when the slab is empty.
 */
#ifndef _CIDER_CORE_ALLOC_H
#define _CIDER_CORE_ALLOC_H

#include "sm.h"
#include "platform.h"

struct cider_client;

enum cider_alloc_state { CIDER_ALLOC_STATES(CIDER_SUB_STATE_ENUM) };

/* Allocate a block of size class c->cls: blk, or 0 when the MN is full. */
struct cider_alloc {
	u8 state;		/* enum cider_alloc_state */
	u64 blk;
	u64 fence_t;		/* when the fence READ was posted */
};

void cider_alloc_init(struct cider_client *c);
enum cider_step cider_alloc_step(struct cider_client *c);
void cider_alloc_crash(struct cider_client *c);
const char *cider_alloc_state_name(u8 state);

void cider_block_unlinked(struct cider_client *c, u64 word);
void cider_block_unused(struct cider_client *c, u64 *blk);
bool cider_block_build(struct cider_client *c, u64 blk);

#endif
