// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the hash index's slots and placement (hashindex.c). */
#include <stdio.h>

#include "kselftest_harness.h"
#include "block.h"
#include "hashindex.h"

TEST(slot_fields_do_not_bleed)
{
	/* The largest block offset a slot holds: 2^38 units of 64 bytes. */
	u64 s = cider_slot_make(0xab, 11, 4095, (1ULL << 44) - 64);

	ASSERT_EQ(0xab, cider_slot_fp(s));
	ASSERT_EQ(11U, cider_slot_class(s));
	ASSERT_EQ(4095U, cider_slot_ver(s));
	ASSERT_EQ((1ULL << 44) - 64, cider_slot_off(s));
	ASSERT_FALSE(cider_slot_empty(s));
	/* The lease bits (cache.h) are neither offset nor version. */
	ASSERT_EQ(0ULL, s & (CIDER_SLOT_LEASED | CIDER_SLOT_WAITING));
	s |= CIDER_SLOT_LEASED | CIDER_SLOT_WAITING;
	ASSERT_EQ((1ULL << 44) - 64, cider_slot_off(s));
	ASSERT_EQ(4095U, cider_slot_ver(s));
	ASSERT_TRUE(cider_slot_empty(CIDER_SLOT_LEASED | CIDER_SLOT_WAITING));
	s = cider_slot_make(0xff, 15, 9, 0);
	ASSERT_TRUE(cider_slot_empty(s));		/* empty keeps its version */
	ASSERT_EQ(9U, cider_slot_ver(s));
	ASSERT_EQ(16U, cider_slot_ver(cider_slot_make(1, 0, 16, 64)));
	ASSERT_EQ(0U, cider_slot_ver(cider_slot_make(1, 0, 4096, 64)));	/* wraps */
	/* The lock entry's version field wraps with the slot's. */
	ASSERT_EQ(cider_slot_ver(cider_slot_make(1, 0, 4096 + 7, 64)),
		  cider_word_ver(cider_word(4096 + 7, 0)));
}

TEST(two_distinct_buckets_and_a_nonzero_fingerprint)
{
	struct cider_hash_loc a, b;
	char key[16];
	int i;

	for (i = 0; i < 10000; i++) {
		snprintf(key, sizeof(key), "user%d", i);
		cider_hash_locate(key, (u32)strlen(key), 97, &a);
		cider_hash_locate(key, (u32)strlen(key), 97, &b);
		ASSERT_EQ(a.bucket[0], b.bucket[0]);		/* stable */
		ASSERT_NE(a.bucket[0], a.bucket[1]);
		ASSERT_GT(97U, a.bucket[0]);
		ASSERT_GT(97U, a.bucket[1]);
		ASSERT_NE(0, a.fp);
	}
}

TEST(fingerprint_collisions_are_resolved_by_the_key)
{
	struct cider_hash_loc loc, other;
	u8 blk[2][64];
	char k0[16], k1[16];
	u64 bucket[CIDER_BUCKET_SLOTS] = { 0 };
	const void *v;
	u32 vl;
	int i, hit;

	/* Find two keys with the same fingerprint. */
	snprintf(k0, sizeof(k0), "key0");
	cider_hash_locate(k0, 4, 1 << 20, &loc);
	for (i = 1;; i++) {
		snprintf(k1, sizeof(k1), "key%d", i);
		cider_hash_locate(k1, (u32)strlen(k1), 1 << 20, &other);
		if (other.fp == loc.fp)
			break;
	}
	ASSERT_LT(0, cider_block_encode(blk[0], 0, k1, (u32)strlen(k1), "b", 1));
	ASSERT_LT(0, cider_block_encode(blk[1], 0, k0, 4, "a", 1));
	bucket[2] = cider_slot_make(loc.fp, 0, 0, 64);		/* k1's block */
	bucket[5] = cider_slot_make(loc.fp, 0, 0, 128);		/* k0's block */
	bucket[6] = cider_slot_make((u8)(loc.fp + 1), 0, 0, 192);
	/* Both candidates turn up; only reading the block tells them apart. */
	hit = cider_bucket_match(bucket, loc.fp, 0);
	ASSERT_EQ(2, hit);
	ASSERT_EQ(CIDER_BLOCK_OTHER_KEY, cider_block_check(blk[0], 64, k0, 4, &v, &vl));
	hit = cider_bucket_match(bucket, loc.fp, hit + 1);
	ASSERT_EQ(5, hit);
	ASSERT_EQ(CIDER_BLOCK_OK, cider_block_check(blk[1], 64, k0, 4, &v, &vl));
	ASSERT_EQ(-1, cider_bucket_match(bucket, loc.fp, hit + 1));
	ASSERT_EQ(0, cider_bucket_free(bucket));
	ASSERT_EQ(3U, cider_bucket_load(bucket));
	for (i = 0; i < CIDER_BUCKET_SLOTS; i++)
		bucket[i] = cider_slot_make(1, 0, 0, 64 * (i + 1));
	ASSERT_EQ(-1, cider_bucket_free(bucket));
	ASSERT_EQ(8U, cider_bucket_load(bucket));
	bucket[4] = cider_slot_make(0, 0, 7, 0);	/* emptied: version kept */
	ASSERT_EQ(7U, cider_bucket_load(bucket));
	ASSERT_EQ(4, cider_bucket_free(bucket));
}

TEST_HARNESS_MAIN
