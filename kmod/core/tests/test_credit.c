// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the adaptive work-request bound (credit.c). */
#include "kselftest_harness.h"
#include "credit.h"

#define MS 1000000ULL

TEST(candidates_end_with_queue_depth)
{
	struct cider_credit c;

	cider_credit_init(&c, 128, 8 * MS, 60, 0);
	ASSERT_EQ(8U, c.nr_cand);
	ASSERT_EQ(4U, c.cand[0]);
	ASSERT_EQ(128U, c.cand[c.nr_cand - 1]);
	ASSERT_EQ(4U, c.limit);

	/* A shallow queue drops the candidates it cannot hold. */
	cider_credit_init(&c, 8, 8 * MS, 60, 0);
	ASSERT_EQ(3U, c.nr_cand);
	ASSERT_EQ(6U, c.cand[1]);
	ASSERT_EQ(8U, c.cand[2]);
}

TEST(take_respects_limit_and_admits_big_batch_when_idle)
{
	struct cider_credit c;

	cider_credit_init(&c, 64, 8 * MS, 60, 0);
	ASSERT_TRUE(cider_credit_take(&c, 3));
	ASSERT_FALSE(cider_credit_take(&c, 2));	/* 3 + 2 > 4 */
	ASSERT_TRUE(cider_credit_take(&c, 1));
	ASSERT_FALSE(cider_credit_take(&c, 1));
	cider_credit_put(&c, 4, 1);
	ASSERT_EQ(0U, c.inflight);
	ASSERT_TRUE(cider_credit_take(&c, 9));	/* idle: the batch goes */
	ASSERT_FALSE(cider_credit_take(&c, 1));
	cider_credit_put(&c, 100, 2);		/* never below zero */
	ASSERT_EQ(0U, c.inflight);
}

/* A modelled NIC whose throughput peaks at 10 outstanding requests. */
static u32 nic_completions(u32 limit)
{
	if (limit <= 10)
		return 100 * limit;
	return limit < 55 ? 1000 - 20 * (limit - 10) : 100;
}

static void run_intervals(struct cider_credit *c, u64 *now, unsigned int n)
{
	while (n--) {
		*now += c->interval_ns;
		cider_credit_put(c, nic_completions(c->limit), *now);
	}
}

TEST(update_phase_picks_best_candidate_then_holds)
{
	struct cider_credit c;
	u64 now = 0;

	cider_credit_init(&c, 128, 8 * MS, 60, now);
	run_intervals(&c, &now, c.nr_cand);
	ASSERT_FALSE(c.updating);
	ASSERT_EQ(10U, c.limit);
	ASSERT_EQ(1U, c.updates);

	/* Stable for 60 intervals, then measuring again from the first. */
	now += 59 * c.interval_ns;
	cider_credit_put(&c, 1, now);
	ASSERT_EQ(10U, c.limit);
	ASSERT_FALSE(c.updating);
	now += c.interval_ns;
	cider_credit_put(&c, 1, now);
	ASSERT_TRUE(c.updating);
	ASSERT_EQ(4U, c.limit);
	run_intervals(&c, &now, c.nr_cand);
	ASSERT_EQ(10U, c.limit);
	ASSERT_EQ(2U, c.updates);
}

TEST(idle_interval_is_measured_again)
{
	struct cider_credit c;
	u64 now = 0;

	cider_credit_init(&c, 128, 8 * MS, 60, now);
	now += 100 * MS;			/* nothing ran for 12 intervals */
	cider_credit_put(&c, 5, now);
	ASSERT_TRUE(c.updating);
	ASSERT_EQ(0U, c.cur);
	ASSERT_EQ(0U, c.count);
	run_intervals(&c, &now, c.nr_cand);
	ASSERT_EQ(10U, c.limit);
}

TEST_HARNESS_MAIN
