/* SPDX-License-Identifier: GPL-2.0 */
/* Local write combining of one key on one CN (localwc.c, §3.1). */
#ifndef _CIDER_CORE_LOCALWC_H
#define _CIDER_CORE_LOCALWC_H

#include "platform.h"

struct cider_client;

struct cider_lwc {
	u64 key;		/* key id + 1; 0: free (the bytes: the combiner's) */
	s32 combiner;		/* client index, -1: none */
	bool open;		/* the combiner has not written yet */
	u64 cur, next;		/* members (client index bits, so <= 64 clients) */
	const u8 *val, *next_val;	/* latest value of each batch (its client's bytes) */
	u32 op, next_op;	/* and its operation */
	u32 vlen, next_vlen;	/* and its length */
};

/*
 * Clients of the CN to wake (index bits), the batch's members before the
 * next batch's combiner: wake-ups are ordered, and so is who runs first.
 */
struct cider_lwc_wake {
	u64 batch;
	u64 next;
};

bool cider_lwc_join(struct cider_client *c);
bool cider_lwc_is_combiner(const struct cider_client *c);
void cider_lwc_close(struct cider_client *c);
struct cider_lwc_wake cider_lwc_finish(struct cider_client *c);
/* Does any batch of @c's CN still name @c (combiner, member, or its value)? */
bool cider_lwc_names(const struct cider_client *c);

#endif
