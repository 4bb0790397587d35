// SPDX-License-Identifier: GPL-2.0
/*
 * Read combining (readcomb.c): a SEARCH that began before the leader's
 * lookup posted its first READ takes the leader's result and bytes; one
 * that began later waits for the next lookup, which the first such one
 * leads; a leader's short buffer answers nobody who wants more; a dead
 * leader hands its members to a new one; a dead member is forgotten.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "client.h"
#include "readcomb.h"

#define N 4

static u64 now_ns;

static u64 fake_now(void *fab)
{
	(void)fab;
	return now_ns;
}

static const struct cider_fabric_ops ops = { .now = fake_now };

struct rig {
	struct cider_fabric fab;
	struct cider_cfg cfg;
	struct cider_cn cn;
	struct cider_client c[N];
	u8 out[N][16];
};

static struct rig *rig_new(void)
{
	struct rig *r = calloc(1, sizeof(*r));
	u32 i;

	if (!r)
		return NULL;
	r->fab.ops = &ops;
	r->cfg.index = CIDER_INDEX_HASH;
	r->cfg.clients_per_cn = N;
	r->cn.cfg = &r->cfg;
	r->cn.fab = &r->fab;
	r->cn.clients = r->c;
	for (i = 0; i < N; i++) {
		r->c[i].cn = &r->cn;
		r->c[i].index = i;
		r->c[i].op = CIDER_SEARCH;
		r->c[i].key = 42;
		r->c[i].kbytes = (const u8 *)"apple";
		r->c[i].klen = 5;
		r->c[i].out = r->out[i];
		r->c[i].out_len = sizeof(r->out[i]);
		r->c[i].rc_of = -1;
	}
	return r;
}

/* @c's lookup ends with value @v (its locate began at @t0). */
static void lookup_done(struct cider_client *c, u64 t0, const char *v)
{
	c->t0 = t0;
	c->res = CIDER_RES_OK;
	c->got_len = (u32)strlen(v);
	memcpy(c->out, v, c->got_len);
}

TEST(a_search_that_began_before_the_first_read_takes_its_result)
{
	struct rig *r = rig_new();

	ASSERT_TRUE(r != NULL);
	now_ns = 100;
	ASSERT_FALSE(cider_rc_join(&r->c[0]));		/* leads */
	now_ns = 110;
	ASSERT_TRUE(cider_rc_join(&r->c[1]));		/* waits, before t0 */
	EXPECT_EQ(0, r->c[1].rc_of);
	lookup_done(&r->c[0], 120, "red");
	EXPECT_EQ(1ULL << 1, cider_rc_finish(&r->c[0]));
	EXPECT_EQ(CIDER_RES_OK, r->c[1].res);
	EXPECT_EQ(3U, r->c[1].got_len);
	EXPECT_EQ(0, memcmp(r->out[1], "red", 3));
	EXPECT_EQ(-1, r->c[1].rc_of);
	EXPECT_EQ(1U, r->c[1].st.read_combined);
	EXPECT_FALSE(r->c[0].rc_leading);
	free(r);
}

TEST(one_that_began_after_the_first_read_leads_the_next_lookup)
{
	struct rig *r = rig_new();

	ASSERT_TRUE(r != NULL);
	now_ns = 100;
	ASSERT_FALSE(cider_rc_join(&r->c[0]));
	now_ns = 130;					/* after t0 = 120 */
	ASSERT_TRUE(cider_rc_join(&r->c[2]));
	ASSERT_TRUE(cider_rc_join(&r->c[3]));
	lookup_done(&r->c[0], 120, "red");
	EXPECT_EQ(1ULL << 2, cider_rc_finish(&r->c[0]));	/* only the new leader */
	EXPECT_EQ(CIDER_RES_NONE, r->c[2].res);
	EXPECT_TRUE(r->c[2].rc_leading);
	EXPECT_EQ(-1, r->c[2].rc_of);
	EXPECT_EQ(1ULL << 3, r->c[2].rc_members);
	EXPECT_EQ(2, r->c[3].rc_of);
	EXPECT_EQ(CIDER_RES_NONE, r->c[3].res);
	free(r);
}

TEST(a_short_buffer_answers_nobody_who_wants_more_and_other_keys_never_join)
{
	struct rig *r = rig_new();

	ASSERT_TRUE(r != NULL);
	now_ns = 100;
	r->c[0].out_len = 2;				/* the leader keeps 2 bytes */
	ASSERT_FALSE(cider_rc_join(&r->c[0]));
	r->c[3].kbytes = (const u8 *)"pearl";		/* same id, other bytes */
	ASSERT_FALSE(cider_rc_join(&r->c[3]));		/* leads its own */
	ASSERT_TRUE(cider_rc_join(&r->c[1]));
	lookup_done(&r->c[0], 120, "re");
	r->c[0].got_len = 3;				/* the value is 3 bytes */
	EXPECT_EQ(1ULL << 1, cider_rc_finish(&r->c[0]));
	EXPECT_TRUE(r->c[1].rc_leading);		/* looks up itself */
	EXPECT_EQ(CIDER_RES_NONE, r->c[1].res);
	free(r);
}

TEST(a_dead_leader_hands_its_members_on_and_a_dead_member_is_forgotten)
{
	struct rig *r = rig_new();

	ASSERT_TRUE(r != NULL);
	now_ns = 100;
	ASSERT_FALSE(cider_rc_join(&r->c[0]));
	ASSERT_TRUE(cider_rc_join(&r->c[1]));
	ASSERT_TRUE(cider_rc_join(&r->c[2]));
	r->c[1].dead = true;
	cider_rc_leave(&r->c[1]);
	EXPECT_EQ(1ULL << 2, r->c[0].rc_members);
	r->c[0].dead = true;
	lookup_done(&r->c[0], 120, "red");		/* no result counts from the dead */
	EXPECT_EQ(1ULL << 2, cider_rc_finish(&r->c[0]));
	EXPECT_TRUE(r->c[2].rc_leading);
	EXPECT_EQ(CIDER_RES_NONE, r->c[2].res);
	EXPECT_EQ(0ULL, r->c[2].rc_members);
	free(r);
}

TEST_HARNESS_MAIN
