// SPDX-License-Identifier: GPL-2.0
/* Truncated exponential backoff with an adaptive bound; see backoff.h. */
#include "backoff.h"

void cider_backoff_init(struct cider_backoff *b, u64 t0_ns, u32 max_shift,
			u64 window_ns, u64 now)
{
	memset(b, 0, sizeof(*b));
	b->t0 = t0_ns ? t0_ns : 1;
	b->tmax = b->t0;
	b->tmax_cap = b->t0 << cider_min_u64(max_shift, 20U);
	b->window_ns = window_ns;
	b->window_start = now;
	b->hi_permille = 500;
	b->lo_permille = 100;
}

/* The wait before retry number @retry (0 for the first); @rnd is random. */
u64 cider_backoff_delay(const struct cider_backoff *b, u32 retry, u32 rnd)
{
	u64 exp = retry >= 20 ? b->tmax : b->t0 << retry;

	return cider_min_u64(exp, b->tmax) + rnd % b->t0;
}

/* Count one attempt (@retry: it was a retry) and adapt at window ends. */
void cider_backoff_account(struct cider_backoff *b, bool retry, u64 now)
{
	u64 rate;

	b->attempts++;
	b->retries += retry;
	if (now - b->window_start < b->window_ns)
		return;
	rate = (u64)b->retries * 1000 / b->attempts;
	if (rate > b->hi_permille)
		b->tmax = cider_min_u64(b->tmax * 2, b->tmax_cap);
	else if (rate < b->lo_permille)
		b->tmax = cider_max_u64(b->tmax / 2, b->t0);
	b->attempts = 0;
	b->retries = 0;
	b->window_start = now;
}
