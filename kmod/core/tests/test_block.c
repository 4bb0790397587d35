// SPDX-License-Identifier: GPL-2.0
/* Unit tests of variable-size KV blocks (block.c). */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "block.h"

TEST(crc32c_matches_the_standard_check_value)
{
	ASSERT_EQ(0xe3069283U, cider_crc32c("123456789", 9));
	ASSERT_EQ(0U, cider_crc32c("", 0));
}

TEST(classes_fit_the_limits)
{
	ASSERT_EQ(0, cider_block_class(8, 8));			/* 32 <= 64 */
	ASSERT_EQ(0, cider_block_class(16, 32));		/* exactly 64 */
	ASSERT_EQ(1, cider_block_class(16, 33));
	ASSERT_EQ(11, cider_block_class(CIDER_MAX_KEY, CIDER_MAX_VALUE));
	ASSERT_EQ(-1, cider_block_class(0, 8));			/* empty key */
	ASSERT_EQ(-1, cider_block_class(CIDER_MAX_KEY + 1, 8));
	ASSERT_EQ(-1, cider_block_class(8, CIDER_MAX_VALUE + 1));
}

TEST(round_trip_at_every_size_class)
{
	static const u32 klen[] = { 1, 8, 100, CIDER_MAX_KEY };
	static const u32 vlen[] = { 0, 1, 47, 48, 400, 4096, CIDER_MAX_VALUE };
	u8 *buf = malloc(128 * 1024), *key = malloc(CIDER_MAX_KEY), *val = malloc(CIDER_MAX_VALUE);
	unsigned int i, j, k;

	ASSERT_TRUE(buf && key && val);
	for (k = 0; k < CIDER_MAX_KEY; k++)
		key[k] = (u8)(k * 7 + 1);
	for (k = 0; k < CIDER_MAX_VALUE; k++)
		val[k] = (u8)(k * 13 + 5);
	for (i = 0; i < 4; i++) {
		for (j = 0; j < 7; j++) {
			const void *v = NULL;
			u32 vl = 0;
			int size = cider_block_encode(buf, 3, key, klen[i], val, vlen[j]);

			ASSERT_LT(0, size);
			ASSERT_EQ(cider_class_size(cider_block_class(klen[i], vlen[j])), (u32)size);
			ASSERT_EQ(CIDER_BLOCK_OK, cider_block_check(buf, (u32)size, key, klen[i], &v, &vl));
			ASSERT_EQ(vlen[j], vl);
			ASSERT_EQ(0, vlen[j] ? memcmp(v, val, vl) : 0);
		}
	}
	free(buf);
	free(key);
	free(val);
}

TEST(any_flipped_byte_is_torn)
{
	u8 buf[512], key[24], val[300];
	const void *v;
	u32 vl, i, used = CIDER_BLOCK_HDR + sizeof(key) + sizeof(val);

	memset(key, 'k', sizeof(key));
	memset(val, 'v', sizeof(val));
	ASSERT_EQ(512, cider_block_encode(buf, 9, key, sizeof(key), val, sizeof(val)));
	for (i = 0; i < used; i++) {
		buf[i] ^= 0x20;
		ASSERT_NE(CIDER_BLOCK_OK, cider_block_check(buf, 512, key, sizeof(key), &v, &vl))
			TH_LOG("byte %u", i);
		buf[i] ^= 0x20;
	}
	/* Fetched too short, or a zero page: torn, never a value. */
	ASSERT_EQ(CIDER_BLOCK_TORN, cider_block_check(buf, used - 1, key, sizeof(key), &v, &vl));
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(CIDER_BLOCK_TORN, cider_block_check(buf, 512, key, sizeof(key), &v, &vl));
}

TEST(another_keys_block_is_recognised)
{
	u8 buf[128];
	const void *v;
	u32 vl;

	ASSERT_LT(0, cider_block_encode(buf, 1, "alpha", 5, "1", 1));
	ASSERT_EQ(CIDER_BLOCK_OTHER_KEY, cider_block_check(buf, 128, "alphb", 5, &v, &vl));
	ASSERT_EQ(CIDER_BLOCK_OTHER_KEY, cider_block_check(buf, 128, "alph", 4, &v, &vl));
	/* A reuse with the same key and value differs by incarnation. */
	{
		u8 again[128];

		ASSERT_LT(0, cider_block_encode(again, 2, "alpha", 5, "1", 1));
		ASSERT_NE(0, memcmp(buf, again, 16));
	}
}

TEST_HARNESS_MAIN
