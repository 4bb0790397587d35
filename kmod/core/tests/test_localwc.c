// SPDX-License-Identifier: GPL-2.0
/*
 * Local write combining (localwc.c) finds a batch by the key's id, a
 * hash: two keys with the same id must never combine, or one write is
 * lost.  Same key: the later UPDATE joins and the combiner writes its
 * value.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "client.h"
#include "localwc.h"

static u64 fake_now(void *fab)
{
	(void)fab;
	return 1000;
}

static const struct cider_fabric_ops ops = { .now = fake_now };

struct rig {
	struct cider_fabric fab;
	struct cider_cfg cfg;
	struct cider_cn cn;
	struct cider_client c[3];
	struct cider_lwc lwc[3];
};

static struct rig *rig_new(void)
{
	struct rig *r = calloc(1, sizeof(*r));
	u32 i;

	if (!r)
		return NULL;
	r->fab.ops = &ops;
	r->cfg.index = CIDER_INDEX_HASH;
	r->cn.cfg = &r->cfg;
	r->cn.fab = &r->fab;
	r->cn.clients = r->c;
	r->cn.lwc = r->lwc;
	r->cn.nr_lwc = 3;
	for (i = 0; i < 3; i++) {
		r->c[i].cn = &r->cn;
		r->c[i].index = i;
		r->c[i].op = CIDER_UPDATE;
	}
	return r;
}

static void set_op(struct cider_client *c, u64 id, const char *key, const char *val)
{
	c->key = id;
	c->kbytes = (const u8 *)key;
	c->klen = (u32)strlen(key);
	c->val = (const u8 *)val;
	c->vlen = (u32)strlen(val);
	c->lw = NULL;
}

TEST(two_keys_with_one_id_never_combine)
{
	struct rig *r = rig_new();

	ASSERT_TRUE(r != NULL);
	set_op(&r->c[0], 42, "apple", "red");
	set_op(&r->c[1], 42, "pear", "green");		/* same id, other key */
	ASSERT_FALSE(cider_lwc_join(&r->c[0]));	/* the combiner */
	ASSERT_TRUE(cider_lwc_is_combiner(&r->c[0]));
	ASSERT_FALSE(cider_lwc_join(&r->c[1]));	/* goes alone */
	ASSERT_TRUE(r->c[1].lw == NULL);
	cider_lwc_close(&r->c[0]);
	ASSERT_EQ(0, memcmp(r->c[0].wval, "red", 3));	/* its own value */
	free(r);
}

TEST(the_same_key_joins_and_the_latest_value_is_written)
{
	struct rig *r = rig_new();

	ASSERT_TRUE(r != NULL);
	set_op(&r->c[0], 42, "apple", "red");
	set_op(&r->c[1], 42, "apple", "green");
	set_op(&r->c[2], 42, "apple", "yellow!");
	ASSERT_FALSE(cider_lwc_join(&r->c[0]));
	ASSERT_TRUE(cider_lwc_join(&r->c[1]));
	ASSERT_TRUE(cider_lwc_join(&r->c[2]));
	cider_lwc_close(&r->c[0]);
	ASSERT_EQ(7U, r->c[0].wvlen);
	ASSERT_EQ(0, memcmp(r->c[0].wval, "yellow!", 7));
	free(r);
}

TEST_HARNESS_MAIN
