// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the adaptive truncated exponential backoff (backoff.c). */
#include "kselftest_harness.h"
#include "backoff.h"

#define US 1000ULL
#define MS 1000000ULL

/* One window of @n attempts, @r of them retries. */
static void window(struct cider_backoff *b, u64 *now, u32 n, u32 r)
{
	u32 i;

	for (i = 0; i < n; i++)
		cider_backoff_account(b, i < r, *now);
	*now += b->window_ns;
	cider_backoff_account(b, false, *now);	/* closes the window */
}

TEST(delay_is_truncated_exponential_plus_jitter)
{
	struct cider_backoff b;
	u32 i, rnd;

	cider_backoff_init(&b, 2 * US, 10, 1 * MS, 0);
	b.tmax = 16 * US;
	for (i = 0; i < 64; i++) {
		u64 base = i < 3 ? (2 * US) << i : 16 * US;

		for (rnd = 0; rnd < 5000; rnd += 997) {
			u64 d = cider_backoff_delay(&b, i, rnd);

			ASSERT_LE(base, d);
			ASSERT_GT(base + 2 * US, d);
		}
	}
}

TEST(bound_doubles_under_contention_up_to_cap)
{
	struct cider_backoff b;
	u64 now = 0;
	int i;

	cider_backoff_init(&b, 2 * US, 10, 1 * MS, now);
	ASSERT_EQ(2 * US, b.tmax);
	window(&b, &now, 100, 60);		/* 60% retries > 50% */
	ASSERT_EQ(4 * US, b.tmax);
	for (i = 0; i < 20; i++)
		window(&b, &now, 100, 90);
	ASSERT_EQ((2 * US) << 10, b.tmax);
}

TEST(bound_halves_when_quiet_down_to_unit)
{
	struct cider_backoff b;
	u64 now = 0;
	int i;

	cider_backoff_init(&b, 2 * US, 10, 1 * MS, now);
	b.tmax = 64 * US;
	window(&b, &now, 100, 5);		/* 5% < 10% */
	ASSERT_EQ(32 * US, b.tmax);
	window(&b, &now, 100, 30);		/* between the marks: hold */
	ASSERT_EQ(32 * US, b.tmax);
	for (i = 0; i < 20; i++)
		window(&b, &now, 100, 0);
	ASSERT_EQ(2 * US, b.tmax);
}

TEST(zero_unit_is_safe)
{
	struct cider_backoff b;

	cider_backoff_init(&b, 0, 63, 1 * MS, 0);
	ASSERT_EQ(1U, b.t0);
	ASSERT_EQ(1ULL << 20, b.tmax_cap);
	ASSERT_EQ(1U, cider_backoff_delay(&b, 100, 0xffffffff) >= 1);
}

TEST_HARNESS_MAIN
