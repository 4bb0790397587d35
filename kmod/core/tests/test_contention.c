// SPDX-License-Identifier: GPL-2.0
/* Unit tests of contention-aware synchronization (contention.c, Algorithm 1). */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "client.h"

static struct cider_cn *new_cn(struct cider_cfg *cfg)
{
	struct cider_cn *cn = calloc(1, sizeof(*cn));

	cfg->initial_credit = 36;
	cfg->hotness = 2;
	cfg->aimd = 2;
	cn->cfg = cfg;
	return cn;
}

TEST(cold_keys_stay_optimistic)
{
	struct cider_cfg cfg = { 0 };
	struct cider_cn *cn = new_cn(&cfg);

	ASSERT_FALSE(cider_cont_pessimistic(cn, 7));
	cider_cont_after_opt(cn, 7, 1);		/* below the threshold: no entry */
	ASSERT_FALSE(cider_cont_pessimistic(cn, 7));
	cider_cont_after_opt(cn, 7, 2);		/* once is not enough */
	ASSERT_FALSE(cider_cont_pessimistic(cn, 7));
	free(cn);
}

TEST(two_contended_updates_in_a_row_grant_initial_credit)
{
	struct cider_cfg cfg = { 0 };
	struct cider_cn *cn = new_cn(&cfg);
	int i;

	cider_cont_after_opt(cn, 7, 3);
	cider_cont_after_opt(cn, 7, 2);
	for (i = 0; i < 36; i++)
		ASSERT_TRUE(cider_cont_pessimistic(cn, 7)) TH_LOG("credit %d", i);
	ASSERT_FALSE(cider_cont_pessimistic(cn, 7));
	free(cn);
}

TEST(aimd_adds_two_when_combined_and_halves_when_alone)
{
	struct cider_cfg cfg = { 0 };
	struct cider_cn *cn = new_cn(&cfg);
	int i;

	cider_cont_after_opt(cn, 9, 2);
	cider_cont_after_opt(cn, 9, 2);		/* 36 */
	ASSERT_TRUE(cider_cont_pessimistic(cn, 9));	/* 35 */
	cider_cont_after_pess(cn, 9, 3);		/* 37 */
	cider_cont_after_pess(cn, 9, 1);		/* 18 */
	for (i = 0; i < 18; i++)
		ASSERT_TRUE(cider_cont_pessimistic(cn, 9));
	ASSERT_FALSE(cider_cont_pessimistic(cn, 9));
	free(cn);
}

TEST(table_is_bounded_and_evicts_the_coldest)
{
	struct cider_cfg cfg = { 0 };
	struct cider_cn *cn = new_cn(&cfg);
	u64 k, hot = 0, present = 0;

	/* Far more hot keys than slots: the table never grows. */
	for (k = 0; k < 20 * CIDER_HOT_SLOTS; k++) {
		cider_cont_after_opt(cn, k, 2);
		cider_cont_after_opt(cn, k, 2);
	}
	for (k = 0; k < CIDER_HOT_SLOTS; k++)
		present += cn->hot[k].key != 0;
	ASSERT_EQ(CIDER_HOT_SLOTS, present);
	for (k = 0; k < 20 * CIDER_HOT_SLOTS; k++)
		hot += cider_cont_pessimistic(cn, k);
	ASSERT_GE(CIDER_HOT_SLOTS, hot);
	free(cn);
}

TEST_HARNESS_MAIN
