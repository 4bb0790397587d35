// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the index words (kv.h) and qnode ids (lockqueue.h). */
#include "kselftest_harness.h"
#include "kv.h"
#include "lockqueue.h"

TEST(pointer_word_keeps_version_and_offset_apart)
{
	u64 w = cider_word(5, 0x123456789abcULL);

	ASSERT_EQ(5U, cider_word_ver(w));
	ASSERT_EQ(0x123456789abcULL, cider_word_off(w));
	/* Versions wrap at 4096; offsets never spill into them. */
	ASSERT_EQ(4095U, cider_word_ver(cider_word(4095, ~0ULL)));
	ASSERT_EQ(0U, cider_word_ver(cider_word(4096, 1)));
	ASSERT_EQ(16U, cider_word_ver(cider_word(16, 1)));	/* the paper's 4 bits wrapped here */
	ASSERT_EQ(0U, cider_word_ver(cider_word(0, ~0ULL)));
	ASSERT_EQ(CIDER_WORD_ADDR_MASK, cider_word_off(cider_word(3, ~0ULL)));
	ASSERT_EQ(0U, cider_word_off(cider_word(9, 0)));
	/* The lease bits (cache.h): never made by cider_word, never an offset. */
	ASSERT_EQ(0ULL, cider_word(4095, ~0ULL) & (CIDER_WORD_LEASED | CIDER_WORD_WAITING));
	ASSERT_EQ(0x123456789abcULL, cider_word_off(w | CIDER_WORD_LEASED | CIDER_WORD_WAITING));
	ASSERT_EQ(5U, cider_word_ver(w | CIDER_WORD_LEASED | CIDER_WORD_WAITING));
}

TEST(epoch_generation_is_the_high_half)
{
	u64 e = 41;

	e += CIDER_EPOCH_GEN;
	ASSERT_EQ(1U, cider_epoch_gen(e));
	e += 0xffffffffULL - 41;	/* releases do not touch the generation... */
	ASSERT_EQ(1U, cider_epoch_gen(e));
	e += 1;				/* ...until they wrap, after 2^32 of them */
	ASSERT_EQ(2U, cider_epoch_gen(e));
}

TEST(qnode_ids_name_their_cn_and_slot)
{
	u64 id = (u64)4095 << 40 | (u64)255 << 32 | 0xffffffffULL;

	ASSERT_EQ(4095U, cider_qid_cn(id));
	ASSERT_EQ(255U, cider_qid_slot(id));
}

TEST_HARNESS_MAIN
