/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Truncated exponential backoff with an adaptive bound (SMART §4.3).
 *
 * The i-th retry waits min(t0 * 2^i, tmax) + rand(t0).  Every window the
 * retry rate (retries / attempts) is compared with two water marks: above
 * the high one tmax doubles (up to t0 << max_shift), below the low one it
 * halves (down to t0).  Skewed updates push tmax up, uniform ones keep it
 * at t0, so nobody waits when nobody collides.
 */
#ifndef _CIDER_CORE_BACKOFF_H
#define _CIDER_CORE_BACKOFF_H

#include "platform.h"

struct cider_backoff {
	u64 t0;			/* backoff unit, about one RDMA round trip (ns) */
	u64 tmax;		/* current bound */
	u64 tmax_cap;		/* t0 << max_shift */
	u64 window_ns;		/* SMART: 1 ms */
	u64 window_start;
	u32 attempts;		/* in this window */
	u32 retries;		/* in this window */
	u32 hi_permille;	/* SMART: 500 */
	u32 lo_permille;	/* SMART: 100 */
};

void cider_backoff_init(struct cider_backoff *b, u64 t0_ns, u32 max_shift,
			u64 window_ns, u64 now);
u64 cider_backoff_delay(const struct cider_backoff *b, u32 retry, u32 rnd);
void cider_backoff_account(struct cider_backoff *b, bool retry, u64 now);

#endif
