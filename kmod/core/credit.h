/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Adaptive bound on outstanding work requests (SMART, Algorithm 1).
 *
 * A channel may have at most 'limit' work requests outstanding.  The limit
 * is chosen by measurement: in an update phase each candidate is tried for
 * one interval and the number of completed work requests counted; the best
 * candidate then holds for a stable phase of many intervals, and the next
 * update phase starts.  Too many outstanding requests thrash the NIC's
 * caches, too few leave it idle; which is which depends on the NIC, the
 * number of channels and the load, hence the measurement.
 */
#ifndef _CIDER_CORE_CREDIT_H
#define _CIDER_CORE_CREDIT_H

#include "platform.h"

#define CIDER_CREDIT_NR_CAND 8

struct cider_credit {
	u32 limit;		/* current bound (C_max) */
	u32 inflight;		/* work requests posted, not yet completed */
	u32 cand[CIDER_CREDIT_NR_CAND];
	u32 nr_cand;
	bool updating;		/* in an update phase */
	u32 cur;		/* candidate being measured */
	u32 best;		/* best candidate index so far */
	u64 best_count;
	u64 count;		/* completions in the current interval */
	u64 start;		/* start of the current interval (ns) */
	u64 interval_ns;	/* SMART: 8 ms */
	u32 stable_intervals;	/* SMART: 60 */
	u64 updates;		/* update phases finished */
};

void cider_credit_init(struct cider_credit *c, u32 max_limit,
		       u64 interval_ns, u32 stable_intervals, u64 now);
bool cider_credit_take(struct cider_credit *c, u32 n);
void cider_credit_put(struct cider_credit *c, u32 n, u64 now);

#endif
