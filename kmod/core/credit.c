// SPDX-License-Identifier: GPL-2.0
/* Adaptive bound on outstanding work requests; see credit.h. */
#include "credit.h"

/* SMART's candidates (4..12 step 2), then deeper ones and the queue depth. */
static const u32 cider_credit_cands[] = { 4, 6, 8, 10, 12, 16, 32 };

void cider_credit_init(struct cider_credit *c, u32 max_limit,
		       u64 interval_ns, u32 stable_intervals, u64 now)
{
	u32 i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < ARRAY_SIZE(cider_credit_cands); i++)
		if (cider_credit_cands[i] < max_limit)
			c->cand[c->nr_cand++] = cider_credit_cands[i];
	c->cand[c->nr_cand++] = max_limit;	/* "unlimited": the queue depth */
	c->interval_ns = interval_ns;
	c->stable_intervals = stable_intervals;
	c->updating = true;
	c->cur = 0;
	c->limit = c->cand[0];
	c->start = now;
}

/*
 * Reserve @n work requests.  A batch larger than the limit may still go
 * when nothing is outstanding, or it could never be posted.
 */
bool cider_credit_take(struct cider_credit *c, u32 n)
{
	if (c->inflight + n > c->limit && c->inflight)
		return false;
	c->inflight += n;
	return true;
}

static void cider_credit_next(struct cider_credit *c, u64 now)
{
	if (!c->updating) {		/* stable phase over: measure again */
		c->updating = true;
		c->cur = 0;
		c->best_count = 0;
		c->best = 0;
	} else {
		if (c->count > c->best_count) {
			c->best_count = c->count;
			c->best = c->cur;
		}
		if (++c->cur == c->nr_cand) {
			c->updating = false;
			c->updates++;
		}
	}
	c->limit = c->updating ? c->cand[c->cur] : c->cand[c->best];
	c->count = 0;
	c->start = now;
}

void cider_credit_put(struct cider_credit *c, u32 n, u64 now)
{
	u64 len = c->updating ? c->interval_ns :
		  c->interval_ns * c->stable_intervals;

	c->inflight -= cider_min_u64(n, c->inflight);
	c->count += n;
	if (now - c->start < len)
		return;
	/*
	 * An interval that ran far over was mostly idle: its count says
	 * nothing about the candidate, so measure it again.
	 */
	if (c->updating && now - c->start > 2 * len) {
		c->count = 0;
		c->start = now;
		return;
	}
	cider_credit_next(c, now);
}
