// SPDX-License-Identifier: GPL-2.0
/*
 * cider-bench kv --rate without a device: the open-loop schedule and the
 * recorder (pace.c) driven on a scripted clock, the way kv_run_sync()
 * drives them (wait for the intended start, issue, run, record).
 *
 * The coordinated-omission proof: 1000 operations per second, each
 * taking 100 us, except one that stalls 100 ms.  Closed loop, or measured
 * from the issue, the stall is one sample; the 100 operations meant to
 * start during it queue behind it, and measured from their intended
 * starts they show it: latencies falling from 99 ms by 0.9 ms each.
 */
#include <string.h>

#include "kselftest_harness.h"
#include "lathist.h"
#include "pace.h"

#define US	1000ULL
#define MS	(1000 * US)

struct fake_clock {
	uint64_t now;
	unsigned int sleeps;
};

static uint64_t fake_now(void *ctx)
{
	return ((struct fake_clock *)ctx)->now;
}

static bool fake_sleep(void *ctx, uint64_t ns)
{
	struct fake_clock *f = ctx;

	f->sleeps++;
	if (ns > f->now)
		f->now = ns;
	return true;
}

/* Operation @i's service time: 100 us, and 100 ms for operation @stall. */
static uint64_t service(unsigned int i, unsigned int stall)
{
	return i == stall ? 100 * MS : 100 * US;
}

/*
 * kv_run_sync() on the fake clock: @n operations at @rate (0: closed
 * loop), the intended start of each into @intended if not NULL.
 */
static void run_sync(struct lathist *lat, struct lathist *svc, double rate, unsigned int n,
		     unsigned int stall, uint64_t *intended)
{
	struct fake_clock f = { .now = 5 * MS };
	const struct pace_clock clk = { .now = fake_now, .sleep_until = fake_sleep, .ctx = &f };
	struct pace p;
	uint64_t want, issued;
	unsigned int i;

	pace_init(&p, rate, 0, 1, f.now);
	for (i = 0; i < n; i++) {
		if (pace_wait(&p, &clk, &want))
			return;
		issued = f.now;
		if (intended)
			intended[i] = want;
		f.now += service(i, stall);
		pace_record(lat, svc, rate > 0 ? want : issued, issued, f.now);
	}
}

/* Samples of at least @ns (to the histogram's resolution). */
static uint64_t at_least(const struct lathist *h, uint64_t ns)
{
	uint64_t n = 0;
	unsigned int i;

	for (i = 0; i < LH_BUCKETS; i++)
		if (lh_bucket_low(i) >= ns)
			n += h->b[i];
	return n;
}

/* @v is @want to the histogram's resolution: in want's bucket, at most 1/64 above. */
#define EXPECT_IN_BUCKET(want, v) do {			\
	EXPECT_GE((v), (want));				\
	EXPECT_LE((v), (want) + (want) / 64);		\
} while (0)

TEST(a_stall_shows_in_the_ops_queued_behind_it)
{
	static struct lathist lat, svc;
	struct lh_summary c, u;

	run_sync(&lat, &svc, 1000, 2000, 500, NULL);
	lh_summarize(&lat, &c);
	lh_summarize(&svc, &u);
	TH_LOG("from the intended start: p50 %.1f us, p90 %.1f, p99 %.1f, p99.9 %.1f, max %.1f; %llu >= 20 ms, %llu >= 50 ms",
	       c.p50 / US, c.p90 / US, c.p99 / US, c.p999 / US, c.max / US,
	       (unsigned long long)at_least(&lat, 20 * MS), (unsigned long long)at_least(&lat, 50 * MS));
	TH_LOG("service time:            p50 %.1f us, p90 %.1f, p99 %.1f, p99.9 %.1f, max %.1f; %llu >= 20 ms",
	       u.p50 / US, u.p90 / US, u.p99 / US, u.p999 / US, u.max / US,
	       (unsigned long long)at_least(&svc, 20 * MS));
	ASSERT_EQ(2000, lat.n);
	ASSERT_EQ(2000, svc.n);
	/* Measured from the issue: the stall once, everything else 100 us. */
	EXPECT_EQ(1, at_least(&svc, 20 * MS));
	EXPECT_IN_BUCKET(100 * US, lh_value_at(&svc, 0.99));
	EXPECT_IN_BUCKET(100 * US, lh_value_at(&svc, 0.999));
	EXPECT_EQ(100 * MS, svc.max);
	/*
	 * From the intended start: operation j (501..610) meant to start at
	 * j ms ends at 550 + 0.1 j ms, 550 - 0.9 j ms late: with the stall,
	 * 89 samples of 20 ms or more (j up to 588: 20.8 ms; 589: 19.9 ms)
	 * and 56 of 50 ms or more (j up to 555: 50.5 ms).
	 */
	EXPECT_EQ(89, at_least(&lat, 20 * MS));
	EXPECT_EQ(56, at_least(&lat, 50 * MS));
	/* p99, the 1980th of 2000, the 21st largest: operation 520, 82.0 ms late. */
	EXPECT_IN_BUCKET(82 * MS, lh_value_at(&lat, 0.99));
	EXPECT_EQ(100 * MS, lat.max);
	/* Before the stall and after the catch-up both are the service time. */
	EXPECT_IN_BUCKET(100 * US, lh_value_at(&lat, 0.5));
	EXPECT_IN_BUCKET(100 * US, lh_value_at(&lat, 0.9));
}

TEST(closed_loop_measures_from_the_issue)
{
	static struct lathist lat, svc;

	run_sync(&lat, &svc, 0, 2000, 500, NULL);
	/* Nobody waits for the stall: the two histograms are one. */
	EXPECT_EQ(1, at_least(&lat, 20 * MS));
	EXPECT_EQ(0, memcmp(&lat, &svc, sizeof(lat)));
}

TEST(the_schedule_keeps_its_rate_and_never_starts_early)
{
	static struct lathist lat;
	static uint64_t when[2000];
	unsigned int i;

	run_sync(&lat, NULL, 1000, 2000, 500, when);
	/* A constant interval, whatever the stall did to the issues. */
	for (i = 1; i < 2000; i++)
		ASSERT_EQ(1 * MS, when[i] - when[i - 1]);
	EXPECT_EQ(5 * MS, when[0]);
	/* Recorded from the intended start, nothing is shorter than its service. */
	EXPECT_GE(lat.min, 100 * US);
}

TEST(threads_interleave_evenly)
{
	struct pace p[4];
	uint64_t t, want, last = 0;
	unsigned int i, n = 0;

	/* 4000 ops/s on 4 threads: one start every 250 us in all. */
	for (i = 0; i < 4; i++)
		pace_init(&p[i], 4000, i, 4, 0);
	for (t = 0; t < 10 * MS; t += 50 * US) {
		for (i = 0; i < 4; i++) {
			while (pace_due(&p[i], t, &want)) {
				ASSERT_EQ(n * 250 * US, want);
				ASSERT_LE(want, t);
				last = want;
				n++;
			}
		}
	}
	EXPECT_EQ(40, n);
	EXPECT_EQ(9750 * US, last);
}

TEST(an_overdue_schedule_hands_out_each_start_once)
{
	struct pace p;
	uint64_t want;

	pace_init(&p, 1000, 0, 1, 0);
	/* 3.5 ms in: starts 0, 1, 2 and 3 ms are due, in order, then none. */
	ASSERT_TRUE(pace_due(&p, 3500 * US, &want));
	EXPECT_EQ(0, want);
	ASSERT_TRUE(pace_due(&p, 3500 * US, &want));
	EXPECT_EQ(1 * MS, want);
	ASSERT_TRUE(pace_due(&p, 3500 * US, &want));
	ASSERT_TRUE(pace_due(&p, 3500 * US, &want));
	EXPECT_EQ(3 * MS, want);
	EXPECT_FALSE(pace_due(&p, 3500 * US, &want));
	EXPECT_EQ(4 * MS, pace_next(&p, 3500 * US));
	/* Closed loop: always due, at the time asked. */
	pace_init(&p, 0, 0, 1, 0);
	ASSERT_TRUE(pace_due(&p, 77, &want));
	EXPECT_EQ(77, want);
}

TEST_HARNESS_MAIN
