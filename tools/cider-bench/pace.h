/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cider-bench kv --rate: the open-loop schedule, and what an operation's
 * latency is measured from.
 *
 * Closed loop (no --rate), each thread starts an operation when one of
 * its slots is free: a stalled operation holds back the ones behind it,
 * which are then never issued and never measured (coordinated omission).
 * Open loop, each thread has its share of the rate as a schedule of
 * intended start times, a constant interval apart (wrk2's and memtier's
 * --rate-limiting schedule), the threads' schedules interleaved evenly.
 * An operation whose slot frees late starts late, and its latency is
 * measured from its intended start: the time it waited for the system
 * counts, as it would for a client that does not wait.  The service time,
 * from the actual issue, is recorded too.
 *
 * Nothing here touches a device or the real clock: the bench passes the
 * monotonic clock, tools/cider-bench/tests/test_pace a scripted one.
 */
#ifndef CIDER_PACE_H
#define CIDER_PACE_H

#include <stdbool.h>
#include <stdint.h>

#include "lathist.h"

struct pace {
	double rate;		/* operations per second, all threads; 0: closed loop */
	uint64_t t0;		/* ns: the schedule's start */
	uint64_t k;		/* this thread's operations scheduled so far */
	unsigned int thread, threads;
};

struct pace_clock {
	uint64_t (*now)(void *ctx);
	/* Sleep until @ns, or less; false when the run is over. */
	bool (*sleep_until)(void *ctx, uint64_t ns);
	void *ctx;
};

/* Thread @thread of @threads, the schedule starting at @t0 (ns). */
void pace_init(struct pace *p, double rate, unsigned int thread, unsigned int threads,
	       uint64_t t0);
/* The next operation's intended start (closed loop: @now). */
uint64_t pace_next(const struct pace *p, uint64_t now);
/*
 * Is the next operation due at @now?  If so, take it off the schedule
 * and set *@intended to its intended start; closed loop, it is @now.
 */
bool pace_due(struct pace *p, uint64_t now, uint64_t *intended);
/* Wait until the next operation is due (-1: the run ended first). */
int pace_wait(struct pace *p, const struct pace_clock *c, uint64_t *intended);
/*
 * One operation intended at @intended, issued at @issued, done at @done:
 * its latency from the intended start into @lat, its service time into
 * @svc (if not NULL).
 */
void pace_record(struct lathist *lat, struct lathist *svc, uint64_t intended, uint64_t issued,
		 uint64_t done);

#endif
