// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The workloads (workload.c): the old ones draw what they always drew
 * (cider-sim's figures and cider-bench's seeds depend on it), YCSB D's
 * latest keys and F's read-modify-write mix.
 */
#include <math.h>
#include <pthread.h>

#include "kselftest_harness.h"
#include "workload.h"

/*
 * A mix of the first 10000 (operation, key) draws over 1000 keys from
 * seed 1: in cider-bench's order (key, then operation; zipf 0.99) and in
 * cider-sim's (operation, then key; uniform).
 */
static uint64_t draws(const char *name, double theta, bool sim)
{
	struct cider_workload w;
	struct cider_zipf z;
	struct cider_rng r = { 1 };
	uint64_t h = 1469598103934665603ULL, op, key;
	unsigned int i;

	if (cider_workload_get(name, &w) || cider_zipf_init(&z, 1000, theta))
		return 0;
	for (i = 0; i < 10000; i++) {
		if (sim) {
			op = cider_workload_op(&w, &r);
			key = cider_zipf_next(&z, &r);
		} else {
			key = cider_zipf_next(&z, &r);
			op = cider_workload_op(&w, &r);
		}
		h = (h ^ (op * 1000003 + key)) * 1099511628211ULL;
	}
	return h;
}

TEST(the_old_workloads_draw_as_before)
{
	/* Computed with lib/workload.c as of 94b1f9e, before d and f. */
	static const struct {
		const char *name;
		uint64_t bench, sim;
	} before[] = {
		{ "a", 0x7f8e1caf51da956eULL, 0x08a07618f9e5f5b0ULL },
		{ "b", 0xae5aba22cef0e01aULL, 0xb21db58e085be096ULL },
		{ "c", 0x5489d0557564d9f4ULL, 0x7c533f3d268b50b2ULL },
		{ "wo", 0xaed61731a7089f94ULL, 0xe5ff23f33f721a62ULL },
		{ "idu", 0xd4e8b37c80f8a975ULL, 0xaf95bb7b50713281ULL },
		{ "pd", 0x7563bdf36db56868ULL, 0xe93d041283b365e4ULL },
	};
	unsigned int i;

	for (i = 0; i < sizeof(before) / sizeof(before[0]); i++) {
		EXPECT_EQ(before[i].bench, draws(before[i].name, 0.99, false));
		EXPECT_EQ(before[i].sim, draws(before[i].name, 0, true));
	}
}

/* Of @n draws of workload @name, how many of @op. */
static unsigned int count_op(const char *name, enum cider_wl_op op, unsigned int n)
{
	struct cider_workload w;
	struct cider_rng r = { 7 };
	unsigned int i, k = 0;

	if (cider_workload_get(name, &w))
		return 0;
	for (i = 0; i < n; i++)
		k += cider_workload_op(&w, &r) == op;
	return k;
}

TEST(d_and_f_mixes)
{
	/* 100000 draws: within 0.3 % of the share (over 10 standard deviations). */
	EXPECT_GE(count_op("d", CIDER_WL_SEARCH, 100000), 94700);
	EXPECT_LE(count_op("d", CIDER_WL_SEARCH, 100000), 95300);
	EXPECT_GE(count_op("d", CIDER_WL_INSERT, 100000), 4700);
	EXPECT_LE(count_op("d", CIDER_WL_INSERT, 100000), 5300);
	EXPECT_EQ(100000, count_op("d", CIDER_WL_SEARCH, 100000) + count_op("d", CIDER_WL_INSERT, 100000));
	EXPECT_GE(count_op("f", CIDER_WL_RMW, 100000), 49700);
	EXPECT_LE(count_op("f", CIDER_WL_RMW, 100000), 50300);
	EXPECT_EQ(100000, count_op("f", CIDER_WL_SEARCH, 100000) + count_op("f", CIDER_WL_RMW, 100000));
}

TEST(d_inserts_the_absent_keys_in_order_then_goes_round)
{
	struct cider_workload w;
	struct cider_latest l;
	uint64_t k, last = 0, key, i, n = 0;

	ASSERT_EQ(0, cider_workload_get("d", &w));
	ASSERT_FALSE(w.preload_all);
	ASSERT_EQ(0, cider_latest_init(&l, &w, 1000, 0.99));
	for (k = 0; k < 1000; k++)
		n += !cider_workload_preloaded(&w, k);
	EXPECT_EQ(1000 - l.preloaded, n);
	for (i = 0; i < n; i++) {
		key = cider_latest_insert(&l, &k);
		EXPECT_EQ(i, k);
		ASSERT_FALSE(cider_workload_preloaded(&w, key));
		if (i)
			ASSERT_GT(key, last);
		last = key;
	}
	EXPECT_EQ(0, cider_latest_wrapped(&l));
	/* Every key inserted: the next INSERT is the first preloaded key's. */
	key = cider_latest_insert(&l, &k);
	EXPECT_TRUE(cider_workload_preloaded(&w, key));
	EXPECT_EQ(1, cider_latest_wrapped(&l));
	cider_latest_free(&l);
}

TEST(d_reads_the_latest_inserts_that_ended)
{
	struct cider_workload w;
	struct cider_latest l;
	struct cider_zipf z;
	struct cider_rng r = { 3 };
	uint64_t key[40], seq, got, latest_hits = 0, mine;
	unsigned int i, j, reads = 20000;

	ASSERT_EQ(0, cider_workload_get("d", &w));
	ASSERT_EQ(0, cider_latest_init(&l, &w, 1000, 0.99));
	cider_latest_reader(&l, &z);
	for (i = 0; i < 40; i++)
		key[i] = cider_latest_insert(&l, &seq);
	/* INSERTs 1..39 ended, 0 not: nothing counts as inserted yet. */
	for (i = 1; i < 40; i++)
		cider_latest_done(&l, i);
	EXPECT_EQ(0, l.acked);
	for (j = 0; j < reads; j++) {
		got = cider_latest_read(&l, &z, &r);
		ASSERT_TRUE(cider_workload_preloaded(&w, got));
	}
	/* INSERT 0 ends: all 40 count, the 40th the latest. */
	cider_latest_done(&l, 0);
	EXPECT_EQ(40, l.acked);
	for (j = 0; j < reads; j++) {
		got = cider_latest_read(&l, &z, &r);
		latest_hits += got == key[39];
		for (i = 0, mine = 0; i < 40; i++)
			mine += got == key[i];
		ASSERT_TRUE(mine || cider_workload_preloaded(&w, got));
	}
	/*
	 * Zipf 0.99 over the ~540 inserted keys: the latest is rank 0, drawn
	 * with probability 1/zeta(540) = 0.14; the same from the generator's
	 * own state, which grew from the preloaded keys' to 540.
	 */
	TH_LOG("the latest INSERT's key read %llu times of %u (%.3f; 1/zeta(%llu) %.3f)",
	       (unsigned long long)latest_hits, reads, (double)latest_hits / reads,
	       (unsigned long long)z.n, 1 / z.zetan);
	EXPECT_EQ(l.preloaded + 40, z.n);
	EXPECT_GE(latest_hits, reads * 0.9 / z.zetan);
	EXPECT_LE(latest_hits, reads * 1.1 / z.zetan);
	cider_latest_free(&l);
}

TEST(a_grown_zipf_is_a_fresh_one)
{
	struct cider_zipf grown, fresh;
	struct cider_rng a = { 5 }, b = { 5 };
	unsigned int i, same = 0;

	ASSERT_EQ(0, cider_zipf_init(&grown, 100, 0.99));
	cider_zipf_grow(&grown, 5000);
	ASSERT_EQ(0, cider_zipf_init(&fresh, 5000, 0.99));
	EXPECT_EQ(fresh.n, grown.n);
	EXPECT_TRUE(fabs(grown.zetan - fresh.zetan) < 1e-9 * fresh.zetan);
	EXPECT_TRUE(fabs(grown.eta - fresh.eta) < 1e-9 * fabs(fresh.eta));
	for (i = 0; i < 10000; i++)
		same += cider_zipf_rank(&grown, &a) == cider_zipf_rank(&fresh, &b);
	EXPECT_GE(same, 9990);	/* a rounding apart at most, now and then */
}

struct acker {
	struct cider_latest *l;
	unsigned int first, step, n;
};

static void *ack_some(void *p)
{
	struct acker *a = p;
	unsigned int i;

	for (i = a->first; i < a->n; i += a->step)
		cider_latest_done(a->l, i);
	return NULL;
}

TEST(inserts_ended_by_threads_out_of_order_all_count)
{
	struct cider_workload w;
	struct cider_latest l;
	struct acker a[4];
	pthread_t th[4];
	uint64_t seq;
	unsigned int i;

	ASSERT_EQ(0, cider_workload_get("d", &w));
	ASSERT_EQ(0, cider_latest_init(&l, &w, 1000000, 0.99));
	for (i = 0; i < 200000; i++)
		cider_latest_insert(&l, &seq);
	/* Four threads, each ending every fourth INSERT, racing each other. */
	for (i = 0; i < 4; i++) {
		a[i] = (struct acker){ .l = &l, .first = 3 - i, .step = 4, .n = 200000 };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, ack_some, &a[i]));
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(200000, l.acked);
	cider_latest_free(&l);
}

TEST_HARNESS_MAIN
