// SPDX-License-Identifier: GPL-2.0
/* Unit tests of the KV store's format (store.c) and the wire structures. */
#include "kselftest_harness.h"
#include "store.h"
#include "lockqueue.h"
#include "hashindex.h"

TEST(wire_structures_have_fixed_sizes)
{
	ASSERT_EQ(64U, sizeof(struct cider_mn_member));
	ASSERT_EQ(32U, sizeof(struct cider_mn_hello));
	ASSERT_EQ(16U, sizeof(struct cider_cn_hello));
	ASSERT_EQ(240U, sizeof(struct cider_mn_sb));
	ASSERT_GE(CIDER_MN_SB_AREA, sizeof(struct cider_mn_sb));
}

static void check_areas(struct __test_metadata *_metadata, const struct cider_mn_sb *sb,
			const struct cider_store_params *p)
{
	ASSERT_EQ(CIDER_MN_MAGIC, sb->magic);
	ASSERT_EQ(CIDER_LAYOUT_VERSION, sb->layout_version);
	ASSERT_EQ(p->region_size, sb->region_size);
	ASSERT_LE(CIDER_MN_SB_AREA, sb->member_off);
	ASSERT_LE(CIDER_MN_MAX_CNS * sizeof(struct cider_mn_member), sb->member_size);
	ASSERT_LE(sb->member_off + sb->member_size, sb->index_off);
	ASSERT_LE(sb->index_off + sb->index_size, sb->lock_off);
	ASSERT_LE(sb->lock_off + sb->lock_size, sb->data_off);
	ASSERT_LE(sb->data_off + sb->data_size, sb->region_size);
	ASSERT_EQ(0U, sb->index_off % CIDER_MN_ALIGN);
	ASSERT_EQ(0U, sb->lock_off % CIDER_MN_ALIGN);
	ASSERT_EQ(0U, sb->data_off % sb->chunk_size);
	ASSERT_EQ(0U, sb->data_size % sb->chunk_size);
	ASSERT_LT(0U, sb->data_size);
	ASSERT_LE(CIDER_STORE_MIN_LEASE_NS, sb->lease_ns);
	ASSERT_LT(sb->grace_ns, sb->lease_ns);
	/* A lock record: header, epoch, a ring of 8-byte waiter entries. */
	ASSERT_EQ(0U, sb->lock_qlen & (sb->lock_qlen - 1));
	ASSERT_EQ(16 + 8 * sb->lock_qlen, sb->lock_rec);
	if (sb->index == CIDER_SB_INDEX_ARRAY) {
		/* A pointer and a lock record for every key. */
		ASSERT_LE(8 * sb->nr_keys, sb->index_size);
		ASSERT_EQ(sb->nr_keys, sb->nr_locks);
		ASSERT_LE((u64)sb->lock_rec * sb->nr_keys, sb->lock_size);
		ASSERT_EQ(8U, sb->max_key_len);
		ASSERT_EQ(0U, sb->nr_buckets);
		return;
	}
	/* Power-of-two buckets, a quarter of the slots for the keys. */
	ASSERT_EQ(0U, sb->nr_buckets & (sb->nr_buckets - 1));
	ASSERT_LE(4 * sb->nr_keys, sb->nr_buckets * CIDER_BUCKET_SLOTS);
	ASSERT_TRUE(sb->nr_buckets == 2 ||
		    4 * sb->nr_keys > sb->nr_buckets / 2 * CIDER_BUCKET_SLOTS);
	ASSERT_EQ(sb->index_off + CIDER_DIR_SIZE, sb->bucket_off);
	ASSERT_LE(sb->bucket_off + sb->nr_buckets * CIDER_BUCKET_SIZE,
		  sb->index_off + sb->index_size);
	ASSERT_EQ(sb->nr_buckets * CIDER_BUCKET_SLOTS, sb->nr_locks);
	ASSERT_EQ(sb->lock_off + (u64)sb->lock_rec * sb->nr_locks, sb->ilock_off);
	ASSERT_LE(sb->ilock_off + 16 * sb->nr_buckets, sb->lock_off + sb->lock_size);
	ASSERT_EQ(1024U, sb->max_key_len);
	ASSERT_EQ(65536U, sb->max_value_len);
	ASSERT_LE(128U << 10, sb->chunk_size);
}

TEST(areas_are_aligned_disjoint_and_inside)
{
	static const u64 sizes[] = { 1ULL << 20, 16ULL << 20, 1ULL << 30, 3ULL << 30 };
	static const u64 chunks[] = { 0, 4096, 1ULL << 20 };
	static const u64 keys[] = { 0, 1, 1000, 65536 };
	struct cider_store_params p = { .mode = CIDER_SB_MODE_CIDER };
	struct cider_mn_sb sb;
	unsigned int i, j, k, formatted = 0;

	for (p.index = CIDER_SB_INDEX_ARRAY; p.index <= CIDER_SB_INDEX_HASH; p.index++) {
		for (i = 0; i < ARRAY_SIZE(sizes); i++) {
			for (j = 0; j < ARRAY_SIZE(chunks); j++) {
				for (k = 0; k < ARRAY_SIZE(keys); k++) {
					p.region_size = sizes[i];
					p.chunk_size = chunks[j];
					p.nr_keys = keys[k];
					if (cider_store_format(&sb, &p))
						continue;
					formatted++;
					check_areas(_metadata, &sb, &p);
					ASSERT_EQ(NULL, cider_store_check(&sb, sizes[i]));
				}
			}
		}
	}
	/* Most combinations fit; the loop is not vacuous. */
	ASSERT_LE(60U, formatted);
}

TEST(defaults_follow_the_region_and_the_index)
{
	struct cider_store_params p = {
		.region_size = 16ULL << 20, .index = CIDER_SB_INDEX_HASH,
		.mode = CIDER_SB_MODE_CIDER,
	};
	struct cider_mn_sb sb;

	ASSERT_EQ(NULL, cider_store_format(&sb, &p));
	ASSERT_EQ(16384U, sb.nr_keys);
	ASSERT_EQ(1ULL << 20, sb.chunk_size);
	ASSERT_EQ(CIDER_STORE_LEASE_NS, sb.lease_ns);
	ASSERT_EQ(CIDER_STORE_GRACE_NS, sb.grace_ns);
	ASSERT_EQ(8192U, sb.nr_buckets);	/* 65536 slots for 16384 keys */
	ASSERT_EQ(CIDER_STORE_LOCK_QLEN, sb.lock_qlen);
	p.index = CIDER_SB_INDEX_ARRAY;
	ASSERT_EQ(NULL, cider_store_format(&sb, &p));
	ASSERT_EQ(64ULL << 10, sb.chunk_size);
	ASSERT_STREQ("array", cider_store_index_name(sb.index));
	ASSERT_STREQ("cider", cider_store_mode_name(sb.mode));
}

TEST(bad_parameters_are_refused_with_a_reason)
{
	struct cider_store_params ok = {
		.region_size = 16ULL << 20, .index = CIDER_SB_INDEX_HASH,
		.mode = CIDER_SB_MODE_MCS,
	};
	struct cider_store_params p;
	struct cider_mn_sb sb;

#define REFUSED(field, value)						\
	do {								\
		p = ok;							\
		p.field = value;					\
		ASSERT_NE(NULL, cider_store_format(&sb, &p));		\
	} while (0)
	REFUSED(region_size, 4096);
	REFUSED(region_size, (1ULL << 20) + 1);
	REFUSED(region_size, CIDER_STORE_MAX_REGION + 4096);
	REFUSED(chunk_size, 1000);
	REFUSED(chunk_size, 64 << 10);		/* the largest hash block is 128 KiB */
	REFUSED(chunk_size, 32ULL << 20);	/* more than the region */
	REFUSED(nr_keys, CIDER_STORE_MAX_KEYS + 1);
	REFUSED(nr_keys, 1ULL << 20);		/* the index outgrows 16 MiB */
	REFUSED(index, 0);
	REFUSED(index, 3);
	REFUSED(mode, 0);
	REFUSED(mode, 5);
	REFUSED(lease_ns, 999999);
	REFUSED(lease_ns, CIDER_STORE_MAX_LEASE_NS + 1);
	REFUSED(grace_ns, CIDER_STORE_LEASE_NS);
	REFUSED(lock_qlen, 1);
	REFUSED(lock_qlen, 24);			/* tickets wrap: a power of two */
	REFUSED(lock_qlen, 2 * CIDER_LQ_MAX_QLEN);
#undef REFUSED
	ASSERT_EQ(NULL, cider_store_format(&sb, &ok));
}

/*
 * The CN cache's feature: its lease and margin recorded, defaults within
 * an eighth of the lock's lease, and checked on attach like the rest.
 */
TEST(the_cache_feature_records_its_lease_within_the_locks)
{
	struct cider_store_params p = {
		.region_size = 16ULL << 20, .index = CIDER_SB_INDEX_ARRAY,
		.mode = CIDER_SB_MODE_CIDER, .features = CIDER_SB_F_CACHE,
	};
	struct cider_mn_sb sb;

	ASSERT_EQ(NULL, cider_store_format(&sb, &p));
	ASSERT_EQ(CIDER_SB_F_CACHE, sb.flags);
	ASSERT_EQ(CIDER_STORE_CACHE_LEASE_NS, sb.cache_lease_ns);
	ASSERT_EQ(CIDER_STORE_CACHE_MARGIN_NS, sb.cache_margin_ns);
	ASSERT_EQ(NULL, cider_store_check(&sb, sb.region_size));
	p.lease_ns = 1000000;			/* the shortest lock lease: 125 us for both */
	p.grace_ns = 500000;
	ASSERT_EQ(NULL, cider_store_format(&sb, &p));
	ASSERT_EQ(62500ULL, sb.cache_margin_ns);
	ASSERT_EQ(62500ULL, sb.cache_lease_ns);
	p.lease_ns = 0;
	p.grace_ns = 0;
	p.cache_lease_ns = 6000000;		/* 6 + 1 ms > 50 / 8 */
	ASSERT_NE(NULL, cider_store_format(&sb, &p));
	p.cache_lease_ns = 100000;
	p.cache_margin_ns = 200000;		/* more drift than lease */
	ASSERT_NE(NULL, cider_store_format(&sb, &p));
	p.features = 0;				/* a lease without the bit */
	p.cache_margin_ns = 0;
	ASSERT_NE(NULL, cider_store_format(&sb, &p));
	p.features = CIDER_SB_F_CACHE;
	ASSERT_EQ(NULL, cider_store_format(&sb, &p));
	sb.cache_lease_ns = 0;			/* a superblock that lost it */
	ASSERT_NE(NULL, cider_store_check(&sb, sb.region_size));
	ASSERT_EQ(NULL, cider_store_format(&sb, &p));
	sb.flags = 0;				/* fields without the bit */
	ASSERT_NE(NULL, cider_store_check(&sb, sb.region_size));
}

TEST(attach_refuses_what_it_would_not_lay_out_the_same)
{
	struct cider_store_params p = {
		.region_size = 16ULL << 20, .index = CIDER_SB_INDEX_HASH,
		.mode = CIDER_SB_MODE_CIDER, .nr_keys = 1000,
	};
	struct cider_mn_sb sb, bad;

	ASSERT_EQ(NULL, cider_store_format(&sb, &p));
	/* The words CNs change while running are not the format. */
	sb.alloc_cursor = 3 << 20;
	sb.probe = CIDER_MN_MAGIC;
	sb.reader_fence = 2;
	ASSERT_EQ(NULL, cider_store_check(&sb, p.region_size));
	ASSERT_NE(NULL, cider_store_check(&sb, p.region_size + 4096));

#define CORRUPT(field, value)						\
	do {								\
		bad = sb;						\
		bad.field = value;					\
		ASSERT_NE(NULL, cider_store_check(&bad, p.region_size));	\
	} while (0)
	CORRUPT(magic, 0);
	CORRUPT(layout_version, 1);
	CORRUPT(index, CIDER_SB_INDEX_ARRAY);
	CORRUPT(mode, 0);
	CORRUPT(nr_keys, 0);
	CORRUPT(nr_keys, 5000);			/* 4096 buckets, not the 512 laid out */
	CORRUPT(nr_buckets, 1024);
	CORRUPT(bucket_off, sb.bucket_off + 64);
	CORRUPT(lock_off, sb.lock_off + 4096);
	CORRUPT(ilock_off, 0);
	CORRUPT(data_off, sb.data_off - sb.chunk_size);
	CORRUPT(data_size, sb.data_size + sb.chunk_size);
	CORRUPT(chunk_size, 0);
	CORRUPT(lease_ns, 0);
	CORRUPT(lock_qlen, 0);
	CORRUPT(lock_qlen, 2 * sb.lock_qlen);
	CORRUPT(lock_rec, 16);
	CORRUPT(grace_ns, sb.lease_ns);
	CORRUPT(max_value_len, 1 << 20);
	CORRUPT(cache_margin_ns, 1);		/* a cache field without its bit */
	CORRUPT(member_lease_ns, 0);
	CORRUPT(member_lease_ns, CIDER_STORE_MAX_MEMBER_LEASE_NS + 1);
	CORRUPT(flags, 1);			/* a feature this code does not know */
#undef CORRUPT
}

TEST(member_lease_is_checked_and_recorded)
{
	struct cider_store_params p = {
		.region_size = 16ULL << 20, .index = CIDER_SB_INDEX_ARRAY,
		.mode = CIDER_SB_MODE_MCS, .nr_keys = 1000,
	};
	struct cider_mn_sb sb;

	ASSERT_EQ(NULL, cider_store_format(&sb, &p));
	EXPECT_EQ(CIDER_STORE_MEMBER_LEASE_NS, sb.member_lease_ns);
	EXPECT_EQ(0, sb.flags);
	p.member_lease_ns = 5000000000ULL;
	ASSERT_EQ(NULL, cider_store_format(&sb, &p));
	EXPECT_EQ(5000000000ULL, sb.member_lease_ns);
	ASSERT_EQ(NULL, cider_store_check(&sb, p.region_size));
	p.member_lease_ns = CIDER_STORE_MIN_MEMBER_LEASE_NS - 1;
	EXPECT_NE(NULL, cider_store_format(&sb, &p));
	p.member_lease_ns = CIDER_STORE_MAX_MEMBER_LEASE_NS + 1;
	EXPECT_NE(NULL, cider_store_format(&sb, &p));
	/* The holder's locks are recovered by the time its id is. */
	p.member_lease_ns = 0;
	p.lease_ns = 5 * CIDER_STORE_MEMBER_LEASE_NS;
	EXPECT_NE(NULL, cider_store_format(&sb, &p));
	p.lease_ns = 0;
	p.features = 0x80000000U;
	EXPECT_NE(NULL, cider_store_format(&sb, &p));
}

/*
 * A store's id and its count of serving daemons: the id is the format
 * (a restarted daemon keeps it), the count a word that changes.
 */
TEST(a_store_id_goes_with_its_feature_bit)
{
	struct cider_store_params p = {
		.region_size = 16ULL << 20, .index = CIDER_SB_INDEX_ARRAY,
		.mode = CIDER_SB_MODE_MCS, .nr_keys = 1000,
		.features = CIDER_SB_F_STORE_ID, .store_id = 0x1234abcd5678ef90ULL,
	};
	struct cider_mn_sb sb, bad;

	ASSERT_EQ(NULL, cider_store_format(&sb, &p));
	EXPECT_EQ(CIDER_SB_F_STORE_ID, sb.flags);
	EXPECT_EQ(0x1234abcd5678ef90ULL, sb.store_id);
	sb.serves = 3;
	EXPECT_EQ(NULL, cider_store_check(&sb, p.region_size));
	bad = sb;
	bad.store_id = 0;
	EXPECT_NE(NULL, cider_store_check(&bad, p.region_size));
	bad = sb;
	bad.flags = 0;
	EXPECT_NE(NULL, cider_store_check(&bad, p.region_size));
	p.store_id = 0;
	EXPECT_NE(NULL, cider_store_format(&sb, &p));
	p.features = 0;
	p.store_id = 7;
	EXPECT_NE(NULL, cider_store_format(&sb, &p));
}

TEST(claims_count_incarnations)
{
	EXPECT_EQ(3, cider_claim_next(0));
	EXPECT_EQ(1, cider_claim_incarnation(cider_claim_next(0)));
	EXPECT_EQ(5, cider_claim_next(3));		/* a live claim taken over */
	EXPECT_EQ(5, cider_claim_next(2));		/* a released one taken */
	EXPECT_EQ(2, cider_claim_incarnation(5));
}

TEST_HARNESS_MAIN
