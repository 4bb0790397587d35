// SPDX-License-Identifier: GPL-2.0
/* The open-loop schedule and the latency it measures; see pace.h. */
#include "pace.h"

void pace_init(struct pace *p, double rate, unsigned int thread, unsigned int threads,
	       uint64_t t0)
{
	p->rate = rate;
	p->t0 = t0;
	p->k = 0;
	p->thread = thread;
	p->threads = threads ? threads : 1;
}

/*
 * Operation k of thread i is the (k T + i)-th of the whole schedule: the
 * threads' starts interleave evenly.  Computed from k, not by adding an
 * interval, so that rounding does not accumulate over a long run.
 */
uint64_t pace_next(const struct pace *p, uint64_t now)
{
	double nth = (double)p->k * p->threads + p->thread;

	if (p->rate <= 0)
		return now;
	return p->t0 + (uint64_t)(nth * 1e9 / p->rate);
}

bool pace_due(struct pace *p, uint64_t now, uint64_t *intended)
{
	uint64_t t = pace_next(p, now);

	if (t > now)
		return false;
	*intended = t;
	p->k++;
	return true;
}

int pace_wait(struct pace *p, const struct pace_clock *c, uint64_t *intended)
{
	uint64_t now = c->now(c->ctx);

	while (!pace_due(p, now, intended)) {
		if (!c->sleep_until(c->ctx, pace_next(p, now)))
			return -1;
		now = c->now(c->ctx);
	}
	return 0;
}

void pace_record(struct lathist *lat, struct lathist *svc, uint64_t intended, uint64_t issued,
		 uint64_t done)
{
	/* A clock read out of order must not wrap to 2^64 ns. */
	lh_add(lat, done > intended ? done - intended : 0);
	if (svc)
		lh_add(svc, done > issued ? done - issued : 0);
}
