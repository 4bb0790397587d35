/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writing the data pointer (write.c): the optimistic update (UPDATE or
 * DELETE by CAS, following other writers) and the INSERT of a new key.
 */
#ifndef _CIDER_CORE_WRITE_H
#define _CIDER_CORE_WRITE_H

#include "sm.h"
#include "platform.h"

struct cider_client;

enum cider_write_state { CIDER_WRITE_STATES(CIDER_SUB_STATE_ENUM) };

/*
 * Install c->wval (UPDATE, PUT) or empty the key (DELETE) by CAS on the
 * data pointer, starting from c->ptr; a PUT on the array index installs
 * over an empty pointer too.  Ends with c->res set, or with the outcome
 * RELOCATE or ESCALATE for the caller to act on.
 */
struct cider_write {
	u8 state;		/* enum cider_write_state */
	u64 blk;		/* the new block, 0: none (yet) */
	u64 cmp;		/* the word the CAS installs */
	u32 retries;		/* failed CASes */
	u64 waited;		/* the leased word whose lease it waited out */
	u64 lease_end;		/* waiting out a lease: until then at most */
	u32 acks;		/* CNs that answered its INVALs */
	u32 invals;		/* CNs it sent them to; ~0: none can answer */
};

enum cider_insert_state { CIDER_INSERT_STATES(CIDER_SUB_STATE_ENUM) };

/* INSERT, optimistic in every mode: write the block, CAS the empty word. */
struct cider_insert {
	u8 state;		/* enum cider_insert_state */
	u64 blk;
	u64 cmp;
};

void cider_write_init(struct cider_client *c);
enum cider_step cider_write_step(struct cider_client *c);
const char *cider_write_state_name(u8 state);
bool cider_write_inval_acked(struct cider_client *c, u32 seq);

void cider_insert_init(struct cider_client *c);
enum cider_step cider_insert_step(struct cider_client *c);
const char *cider_insert_state_name(u8 state);

#endif
