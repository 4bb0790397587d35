// SPDX-License-Identifier: GPL-2.0
/*
 * cider-bench's log-linear histogram (lathist.c) on inputs whose
 * percentiles are known: exact below 128 ns, within 1/64 above, the
 * nearest rank, merging, the extremes.
 */
#include <math.h>
#include <string.h>

#include "kselftest_harness.h"
#include "lathist.h"

/* @v is @want to the histogram's resolution: in want's bucket, at most 1/64 above. */
#define EXPECT_IN_BUCKET(want, v) do {			\
	EXPECT_GE((v), (want));				\
	EXPECT_LE((v), (want) + (want) / 64);		\
} while (0)

TEST(small_values_are_exact)
{
	static struct lathist h;
	uint64_t v;

	for (v = 1; v <= 100; v++)
		lh_add(&h, v);
	EXPECT_EQ(100, h.n);
	EXPECT_EQ(1, h.min);
	EXPECT_EQ(100, h.max);
	EXPECT_EQ(50, lh_value_at(&h, 0.5));
	EXPECT_EQ(90, lh_value_at(&h, 0.9));
	/* 0.99 x 100 is 99.00000000000001 in binary: still the 99th. */
	EXPECT_EQ(99, lh_value_at(&h, 0.99));
	EXPECT_EQ(100, lh_value_at(&h, 0.999));
	EXPECT_EQ(100, lh_value_at(&h, 1));
	EXPECT_EQ(1, lh_value_at(&h, 0));
	EXPECT_TRUE(fabs(lh_mean(&h) - 50.5) < 1e-9);
	/* The population standard deviation of 1..100: sqrt((100^2 - 1) / 12). */
	EXPECT_TRUE(fabs(lh_stddev(&h) - sqrt(9999.0 / 12)) < 1e-6);
}

TEST(large_values_within_a_64th)
{
	static struct lathist h;
	uint64_t v;

	/* 1 us to 1 ms in steps of 1 us: the k-th smallest is k us. */
	for (v = 1; v <= 1000; v++)
		lh_add(&h, v * 1000);
	EXPECT_IN_BUCKET(500000ULL, lh_value_at(&h, 0.5));
	EXPECT_IN_BUCKET(900000ULL, lh_value_at(&h, 0.9));
	EXPECT_IN_BUCKET(990000ULL, lh_value_at(&h, 0.99));
	EXPECT_IN_BUCKET(999000ULL, lh_value_at(&h, 0.999));
	/* Never above the maximum, which is exact. */
	EXPECT_EQ(1000000, lh_value_at(&h, 0.9999));
	EXPECT_EQ(1000000, h.max);
	EXPECT_EQ(1000, h.min);
	EXPECT_TRUE(fabs(lh_mean(&h) - 500500) < 1e-6);
}

TEST(every_value_lands_in_a_bucket_that_holds_it)
{
	uint64_t v, lo, hi;
	unsigned int i, s;
	static struct lathist h;

	/* Around every power of two up to the top, and a few in between. */
	for (s = 0; s < LH_TOP_BITS; s++) {
		for (i = 0; i < 5; i++) {
			uint64_t tries[5] = { (1ULL << s) - 1, 1ULL << s, (1ULL << s) + 1,
					      (1ULL << s) + (1ULL << s) / 3, (2ULL << s) - 1 };

			v = tries[i];
			memset(&h, 0, sizeof(h));
			lh_add(&h, v);
			for (lo = 0; lo < LH_BUCKETS && !h.b[lo]; lo++)
				;
			ASSERT_LT(lo, LH_BUCKETS);
			hi = lh_bucket_high((unsigned int)lo);
			ASSERT_LE(lh_bucket_low((unsigned int)lo), v);
			ASSERT_GE(hi, v);
			/* Exact below 128, else at most 1/64 of the value wide (the last takes the rest). */
			if (lo < LH_BUCKETS - 1)
				ASSERT_LE(hi - lh_bucket_low((unsigned int)lo), v < 128 ? 0 : v / 64);
		}
	}
	/* Buckets tile the range: each begins where the last ended. */
	for (i = 1; i < LH_BUCKETS; i++)
		ASSERT_EQ(lh_bucket_high(i - 1) + 1, lh_bucket_low(i));
}

TEST(a_value_beyond_the_range_keeps_its_exact_maximum)
{
	static struct lathist h;
	uint64_t huge = 1ULL << 60;

	lh_add(&h, 10);
	lh_add(&h, huge);
	EXPECT_EQ(1, h.b[LH_BUCKETS - 1]);
	EXPECT_EQ(huge, h.max);
	EXPECT_EQ(huge, lh_value_at(&h, 1));
	EXPECT_EQ(10, lh_value_at(&h, 0.5));
}

TEST(merged_is_the_same_as_recorded_together)
{
	static struct lathist a, b, all;
	uint64_t v;

	for (v = 0; v < 5000; v++) {
		uint64_t x = v * v * 37 % 1000003;	/* spread over 0..1 ms */

		lh_add(v % 3 ? &a : &b, x);
		lh_add(&all, x);
	}
	lh_merge(&a, &b);
	EXPECT_EQ(all.n, a.n);
	EXPECT_EQ(all.min, a.min);
	EXPECT_EQ(all.max, a.max);
	EXPECT_EQ(0, memcmp(all.b, a.b, sizeof(all.b)));
	EXPECT_EQ(lh_value_at(&all, 0.99), lh_value_at(&a, 0.99));
}

TEST(skewed_tail)
{
	static struct lathist h;
	unsigned int i;

	/* 990 fast (10 us), 9 slow (5 ms), 1 very slow (80 ms). */
	for (i = 0; i < 990; i++)
		lh_add(&h, 10000);
	for (i = 0; i < 9; i++)
		lh_add(&h, 5000000);
	lh_add(&h, 80000000);
	EXPECT_IN_BUCKET(10000ULL, lh_value_at(&h, 0.5));
	EXPECT_IN_BUCKET(10000ULL, lh_value_at(&h, 0.99));	/* the 990th */
	EXPECT_IN_BUCKET(5000000ULL, lh_value_at(&h, 0.991));
	EXPECT_IN_BUCKET(5000000ULL, lh_value_at(&h, 0.999));	/* the 999th */
	EXPECT_EQ(80000000, lh_value_at(&h, 0.9999));
	EXPECT_TRUE(fabs(lh_mean(&h) - (990 * 10000.0 + 9 * 5e6 + 8e7) / 1000) < 1e-6);
}

TEST(empty)
{
	static struct lathist h;
	struct lh_summary s;

	lh_summarize(&h, &s);
	EXPECT_EQ(0, s.n);
	EXPECT_EQ(0, lh_value_at(&h, 0.99));
	EXPECT_TRUE(s.max == 0 && s.mean == 0 && s.min == 0);
	EXPECT_EQ(0, lh_stddev(&h));
}

TEST_HARNESS_MAIN
