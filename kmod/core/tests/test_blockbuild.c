// SPDX-License-Identifier: GPL-2.0
/*
 * cider_block_build() (alloc.c): a block no size class holds is refused,
 * never described as a WRITE of (u32)-1 bytes.
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "client.h"
#include "alloc.h"

TEST(a_block_no_class_holds_is_not_written)
{
	struct cider_cfg cfg = { .index = CIDER_INDEX_HASH };
	static const u8 key[16] = "sixteen bytes ok";
	struct cider_cn *cn = calloc(1, sizeof(*cn));
	struct cider_client *c = calloc(1, sizeof(*c));

	ASSERT_TRUE(cn && c);
	cn->cfg = &cfg;
	c->cn = cn;
	c->buf_len = CIDER_BLOCK_HDR + 16 + CIDER_MAX_VALUE + 64;
	c->buf = calloc(1, c->buf_len);
	ASSERT_TRUE(c->buf != NULL);

	c->kbytes = key;
	c->klen = sizeof(key);
	c->wval = calloc(1, CIDER_MAX_VALUE + 1);
	ASSERT_TRUE(c->wval != NULL);
	c->wvlen = CIDER_MAX_VALUE + 1;
	ASSERT_FALSE(cider_block_build(c, 0));
	ASSERT_EQ(0U, c->nv);			/* nothing to post */

	c->wvlen = 100;
	ASSERT_TRUE(cider_block_build(c, 0));
	ASSERT_EQ(1U, c->nv);
	ASSERT_EQ(CIDER_V_WRITE, c->v[0].op);
	/* The bytes used, rounded up to whole words. */
	ASSERT_EQ((CIDER_BLOCK_HDR + 16 + 100 + 7) / 8 * 8, c->v[0].len);
	free(c->buf);
	free((void *)c->wval);
	free(c);
	free(cn);
}

TEST_HARNESS_MAIN
