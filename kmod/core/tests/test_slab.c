// SPDX-License-Identifier: GPL-2.0
/* Unit tests of block allocation and reclamation (slab.c). */
#include "kselftest_harness.h"
#include "slab.h"

#define CHUNK (1 << 20)
#define GRACE 1000

FIXTURE(slab) {
	struct cider_slab s;
	struct cider_slab_ent ring[CIDER_NR_CLASSES * 4];
};

FIXTURE_SETUP(slab)
{
	cider_slab_init(&self->s, CIDER_CLASS_MIN, CIDER_NR_CLASSES, CHUNK, GRACE, self->ring, 4);
}

FIXTURE_TEARDOWN(slab)
{
}

TEST_F(slab, carves_chunks_and_asks_for_more)
{
	u64 off, i;

	ASSERT_EQ(1, cider_slab_alloc(&self->s, 11, 0, &off));	/* no chunk yet */
	cider_slab_add_chunk(&self->s, 11, 1 << 24);
	for (i = 0; i < CHUNK / (128 * 1024); i++) {
		ASSERT_EQ(0, cider_slab_alloc(&self->s, 11, 0, &off));
		ASSERT_EQ((1 << 24) + i * 128 * 1024, off);
	}
	ASSERT_EQ(1, cider_slab_alloc(&self->s, 11, 0, &off));	/* chunk used up */
	ASSERT_EQ((u64)CHUNK, self->s.claimed);
	ASSERT_EQ((u64)CHUNK, self->s.live);
	/* Classes carve separately. */
	ASSERT_EQ(1, cider_slab_alloc(&self->s, 0, 0, &off));
}

TEST_F(slab, freed_blocks_wait_out_the_grace_period_in_order)
{
	u64 a, b, off;

	cider_slab_add_chunk(&self->s, 0, 0);
	ASSERT_EQ(0, cider_slab_alloc(&self->s, 0, 0, &a));
	ASSERT_EQ(0, cider_slab_alloc(&self->s, 0, 0, &b));
	ASSERT_TRUE(cider_slab_free(&self->s, 0, a, 100));
	ASSERT_TRUE(cider_slab_free(&self->s, 0, b, 200));
	/* Before a's grace ends, fresh memory is carved instead. */
	ASSERT_EQ(0, cider_slab_alloc(&self->s, 0, 100 + GRACE - 1, &off));
	ASSERT_EQ(128U, off);
	ASSERT_EQ(0, cider_slab_alloc(&self->s, 0, 100 + GRACE, &off));
	ASSERT_EQ(a, off);
	ASSERT_EQ(0, cider_slab_alloc(&self->s, 0, 100 + GRACE, &off));
	ASSERT_NE(b, off);				/* b's grace not over */
	ASSERT_EQ(0, cider_slab_alloc(&self->s, 0, 200 + GRACE, &off));
	ASSERT_EQ(b, off);
}

/*
 * With the reader fence on, a block past its grace period is reused only
 * after a zero fence READ posted after it was freed; the fence is asked
 * for at most once per quarter grace period.
 */
TEST_F(slab, fenced_blocks_wait_for_a_zero_fence_read_after_their_free)
{
	u64 a, b, off;

	cider_slab_use_fence(&self->s);
	cider_slab_add_chunk(&self->s, 0, 0);
	ASSERT_EQ(0, cider_slab_alloc(&self->s, 0, 0, &a));
	ASSERT_EQ(0, cider_slab_alloc(&self->s, 0, 0, &b));
	ASSERT_TRUE(cider_slab_free(&self->s, 0, a, 100));
	ASSERT_TRUE(cider_slab_free(&self->s, 0, b, 300));
	ASSERT_FALSE(cider_slab_fence_due(&self->s, 0, 100 + GRACE - 1));	/* in grace */
	ASSERT_TRUE(cider_slab_fence_due(&self->s, 0, 100 + GRACE));
	ASSERT_FALSE(cider_slab_fence_due(&self->s, 0, 100 + GRACE + GRACE / 4 - 1));
	/* Graced but not fenced: fresh memory instead. */
	ASSERT_EQ(0, cider_slab_alloc(&self->s, 0, 2 * GRACE, &off));
	ASSERT_NE(a, off);
	/* A zero fence read posted before b's free covers a only. */
	cider_slab_fence_clear(&self->s, 200);
	ASSERT_EQ(0, cider_slab_alloc(&self->s, 0, 2 * GRACE, &off));
	ASSERT_EQ(a, off);
	ASSERT_EQ(0, cider_slab_alloc(&self->s, 0, 2 * GRACE, &off));
	ASSERT_NE(b, off);
	ASSERT_TRUE(cider_slab_fence_due(&self->s, 0, 2 * GRACE));
	cider_slab_fence_clear(&self->s, 2 * GRACE);
	cider_slab_fence_clear(&self->s, 250);		/* an older answer: no step back */
	ASSERT_FALSE(cider_slab_fence_due(&self->s, 0, 3 * GRACE));
	ASSERT_EQ(0, cider_slab_alloc(&self->s, 0, 2 * GRACE, &off));
	ASSERT_EQ(b, off);
}

TEST_F(slab, never_linked_blocks_come_back_at_once)
{
	u64 a, off;

	cider_slab_add_chunk(&self->s, 3, 0);
	ASSERT_EQ(0, cider_slab_alloc(&self->s, 3, 5, &a));
	cider_slab_unused(&self->s, 3, a);
	ASSERT_EQ(0, cider_slab_alloc(&self->s, 3, 5, &off));
	ASSERT_EQ(a, off);
}

TEST_F(slab, a_full_fifo_leaks_and_says_so)
{
	u64 off[6], i;

	cider_slab_add_chunk(&self->s, 0, 0);
	for (i = 0; i < 6; i++)
		ASSERT_EQ(0, cider_slab_alloc(&self->s, 0, 0, &off[i]));
	for (i = 0; i < 4; i++)
		ASSERT_TRUE(cider_slab_free(&self->s, 0, off[i], 1));
	ASSERT_FALSE(cider_slab_free(&self->s, 0, off[4], 1));
	ASSERT_EQ(64U, self->s.leaked);
	ASSERT_EQ(64U, self->s.live);			/* off[5] */
}

TEST_HARNESS_MAIN
