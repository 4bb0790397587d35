// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the memory node's region layout (layout.h). */
#include "kselftest_harness.h"
#include "layout.h"

TEST(wire_structures_have_fixed_sizes)
{
	ASSERT_EQ(64U, sizeof(struct cider_mn_member));
	ASSERT_EQ(32U, sizeof(struct cider_mn_hello));
	ASSERT_EQ(16U, sizeof(struct cider_cn_hello));
	ASSERT_GE(CIDER_MN_SB_AREA, sizeof(struct cider_mn_sb));
}

TEST(areas_are_aligned_disjoint_and_inside)
{
	static const u64 sizes[] = { 1ULL << 20, 64ULL << 20, 1ULL << 30, 3ULL << 30 };
	static const u64 chunks[] = { 4096, 65536, 1ULL << 20 };
	struct cider_mn_sb sb;
	unsigned int i, j;

	for (i = 0; i < 4; i++) {
		for (j = 0; j < 3; j++) {
			if (!cider_mn_layout(&sb, sizes[i], chunks[j]))
				continue;
			ASSERT_EQ(CIDER_MN_MAGIC, sb.magic);
			ASSERT_LE(CIDER_MN_SB_AREA, sb.member_off);
			ASSERT_LE(sb.member_off + sb.member_size, sb.index_off);
			ASSERT_LE(sb.index_off + sb.index_size, sb.lock_off);
			ASSERT_LE(sb.lock_off + sb.lock_size, sb.data_off);
			ASSERT_LE(sb.data_off + sb.data_size, sizes[i]);
			ASSERT_EQ(0U, sb.index_off % CIDER_MN_ALIGN);
			ASSERT_EQ(0U, sb.lock_off % CIDER_MN_ALIGN);
			ASSERT_EQ(0U, sb.data_off % chunks[j]);
			ASSERT_EQ(0U, sb.data_size % chunks[j]);
			ASSERT_LT(0U, sb.data_size);
			ASSERT_LE(CIDER_MN_MAX_CNS * sizeof(struct cider_mn_member), sb.member_size);
		}
	}
	ASSERT_TRUE(cider_mn_layout(&sb, 1ULL << 30, 1ULL << 20));
}

TEST(bad_sizes_are_refused)
{
	struct cider_mn_sb sb;

	ASSERT_FALSE(cider_mn_layout(&sb, 4096, 4096));
	ASSERT_FALSE(cider_mn_layout(&sb, (1ULL << 20) + 1, 4096));
	ASSERT_FALSE(cider_mn_layout(&sb, 1ULL << 20, 0));
	ASSERT_FALSE(cider_mn_layout(&sb, 1ULL << 20, 1000));
	ASSERT_FALSE(cider_mn_layout(&sb, 1ULL << 20, 1ULL << 20));	/* no room for data */
}

TEST_HARNESS_MAIN
