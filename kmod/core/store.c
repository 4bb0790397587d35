// SPDX-License-Identifier: GPL-2.0
/*
 * The KV store's format (store.h).
 *
 * Region, in order, each area 4 KiB aligned:
 *   superblock | membership table | index | lock entries | KV blocks
 * Pointer array: one 8-byte data pointer per key (kv.h), one lock record
 * per key (16 bytes and a ring of lock_qlen 8-byte entries: lockqueue.h).
 * Hash index: a directory page, then 2^n buckets of 8 slots sized so that
 * the keys fill a quarter of the slots (RACE sizes for inserts so); a lock
 * record per slot, then a 16-byte INSERT lock per bucket.
 * The KV blocks start on a chunk boundary: CNs claim whole chunks with a
 * FAA on alloc_cursor and carve blocks out of them.
 */
#include "store.h"
#include "block.h"
#include "kv.h"
#include "hashindex.h"
#include "lockqueue.h"

#define CIDER_ARRAY_CHUNK	(64ULL << 10)
#define CIDER_HASH_CHUNK	(1024ULL << 10)
#define CIDER_LOCK_ENTRY	16	/* an INSERT lock; a lock record's fixed part */

static u64 cider_align(u64 x, u64 a)
{
	return (x + a - 1) / a * a;
}

/* By number - 1: the lists count from 1 (vocab.h). */
static const char *const cider_store_index_names[] = { CIDER_SB_INDEXES(CIDER_VOCAB_NAME) };
static const char *const cider_store_mode_names[] = { CIDER_SB_MODES(CIDER_VOCAB_NAME) };

const char *cider_store_index_name(u32 index)
{
	return index - 1 < ARRAY_SIZE(cider_store_index_names) ?
	       cider_store_index_names[index - 1] : NULL;
}

const char *cider_store_mode_name(u32 mode)
{
	return mode - 1 < ARRAY_SIZE(cider_store_mode_names) ?
	       cider_store_mode_names[mode - 1] : NULL;
}

/*
 * The CN cache's lease and margin (F_CACHE): by default 5 ms and 1 ms,
 * within an eighth of the lock's lease (a holder may wait a lease out);
 * a margin no longer than the lease.
 */
static const char *cider_store_resolve_cache(struct cider_store_params *p)
{
	u64 eighth = p->lease_ns / 8, margin = p->cache_margin_ns;

	if (!(p->features & CIDER_SB_F_CACHE))
		return p->cache_lease_ns || margin ? "cache lease without the cache's feature bit" :
		       NULL;
	if (!margin) {
		margin = cider_min_u64(CIDER_STORE_CACHE_MARGIN_NS, p->lease_ns / 16);
		if (p->cache_lease_ns)
			margin = cider_min_u64(margin, p->cache_lease_ns);
	}
	if (!p->cache_lease_ns && margin < eighth)
		p->cache_lease_ns = cider_min_u64(CIDER_STORE_CACHE_LEASE_NS, eighth - margin);
	p->cache_margin_ns = margin;
	if (!p->cache_lease_ns || margin > p->cache_lease_ns ||
	    p->cache_lease_ns + margin > eighth)
		return "cache lease plus margin at most lease / 8, margin at most the cache lease";
	return NULL;
}

/* Defaults filled in, every parameter checked on its own. */
static const char *cider_store_resolve(struct cider_store_params *p)
{
	if (!cider_store_index_name(p->index))
		return "unknown index (array or hash)";
	if (!cider_store_mode_name(p->mode))
		return "unknown synchronization mode (osync, caslock, mcs or cider)";
	if (p->region_size < CIDER_MN_MIN_SIZE || p->region_size > CIDER_STORE_MAX_REGION ||
	    p->region_size % CIDER_MN_ALIGN)
		return "region size must be a multiple of 4 KiB from 1 MiB to 16 TiB";
	if (!p->chunk_size)
		p->chunk_size = p->index == CIDER_SB_INDEX_HASH ? CIDER_HASH_CHUNK :
				CIDER_ARRAY_CHUNK;
	if (p->chunk_size % CIDER_MN_ALIGN || p->chunk_size > p->region_size)
		return "chunk size must be a multiple of 4 KiB, at most the region";
	/* A chunk holds whole blocks, the largest class included. */
	if (p->index == CIDER_SB_INDEX_HASH &&
	    p->chunk_size < cider_class_size((u32)cider_block_class(CIDER_MAX_KEY,
								   CIDER_MAX_VALUE)))
		return "chunk size must hold the largest block (128 KiB) with the hash index";
	if (!p->nr_keys)
		p->nr_keys = cider_max_u64(p->region_size >> 10, 1);
	if (p->nr_keys > CIDER_STORE_MAX_KEYS)
		return "at most 2^32 keys";
	if (!p->lease_ns)
		p->lease_ns = CIDER_STORE_LEASE_NS;
	if (p->lease_ns < CIDER_STORE_MIN_LEASE_NS || p->lease_ns > CIDER_STORE_MAX_LEASE_NS)
		return "lease must be from 1 ms to 60 s";
	if (!p->grace_ns)
		p->grace_ns = CIDER_STORE_GRACE_NS;
	if (p->grace_ns >= p->lease_ns)
		return "grace period must be shorter than the lease";
	if (!p->lock_qlen)
		p->lock_qlen = CIDER_STORE_LOCK_QLEN;
	if (p->lock_qlen < CIDER_LQ_MIN_QLEN || p->lock_qlen > CIDER_LQ_MAX_QLEN ||
	    (p->lock_qlen & (p->lock_qlen - 1)))
		return "lock queue length must be a power of two from 2 to 128";
	if (!p->member_lease_ns)
		p->member_lease_ns = CIDER_STORE_MEMBER_LEASE_NS;
	if (p->member_lease_ns < CIDER_STORE_MIN_MEMBER_LEASE_NS ||
	    p->member_lease_ns > CIDER_STORE_MAX_MEMBER_LEASE_NS)
		return "member lease must be from 1 s to 10 min";
	if (p->member_lease_ns < p->lease_ns)
		return "member lease must be at least the lease";
	if (p->features & ~CIDER_SB_FEATURES)
		return "store needs features this code does not know";
	if (!(p->features & CIDER_SB_F_STORE_ID) != !p->store_id)
		return "a store id goes with its feature bit, and is not 0";
	return cider_store_resolve_cache(p);
}

/* The index and its locks: sizes of the areas, bucket count. */
static void cider_store_size_index(struct cider_mn_sb *sb)
{
	u64 slots;

	sb->lock_rec = CIDER_LOCK_ENTRY + 8 * sb->lock_qlen;
	if (sb->index == CIDER_SB_INDEX_ARRAY) {
		sb->index_size = cider_align(8 * sb->nr_keys, CIDER_MN_ALIGN);
		sb->nr_locks = sb->nr_keys;
		sb->lock_size = cider_align(sb->lock_rec * sb->nr_locks, CIDER_MN_ALIGN);
		sb->max_key_len = 8;
		sb->max_value_len = 8;
		return;
	}
	sb->nr_buckets = 2;
	while (sb->nr_buckets * CIDER_BUCKET_SLOTS < 4 * sb->nr_keys)
		sb->nr_buckets *= 2;
	slots = sb->nr_buckets * CIDER_BUCKET_SLOTS;
	sb->index_size = cider_align(CIDER_DIR_SIZE + sb->nr_buckets * CIDER_BUCKET_SIZE,
				     CIDER_MN_ALIGN);
	sb->nr_locks = slots;
	sb->lock_size = cider_align(sb->lock_rec * slots + CIDER_LOCK_ENTRY * sb->nr_buckets,
				    CIDER_MN_ALIGN);
	sb->max_key_len = CIDER_MAX_KEY;
	sb->max_value_len = CIDER_MAX_VALUE;
}

const char *cider_store_format(struct cider_mn_sb *sb, const struct cider_store_params *in)
{
	struct cider_store_params p = *in;
	const char *why = cider_store_resolve(&p);
	u64 a = CIDER_MN_ALIGN, off = CIDER_MN_SB_AREA;

	if (why)
		return why;
	memset(sb, 0, sizeof(*sb));
	sb->magic = CIDER_MN_MAGIC;
	sb->layout_version = CIDER_LAYOUT_VERSION;
	sb->flags = p.features;
	sb->region_size = p.region_size;
	sb->chunk_size = p.chunk_size;
	sb->index = p.index;
	sb->mode = p.mode;
	sb->nr_keys = p.nr_keys;
	sb->lease_ns = p.lease_ns;
	sb->grace_ns = p.grace_ns;
	sb->lock_qlen = p.lock_qlen;
	sb->member_lease_ns = p.member_lease_ns;
	sb->store_id = p.store_id;
	sb->cache_lease_ns = p.cache_lease_ns;
	sb->cache_margin_ns = p.cache_margin_ns;
	sb->member_off = off;
	sb->member_size = cider_align(CIDER_MN_MAX_CNS * sizeof(struct cider_mn_member), a);
	off += sb->member_size;
	cider_store_size_index(sb);
	sb->index_off = off;
	if (sb->index == CIDER_SB_INDEX_HASH)
		sb->bucket_off = off + CIDER_DIR_SIZE;
	off += sb->index_size;
	sb->lock_off = off;
	if (sb->index == CIDER_SB_INDEX_HASH)
		sb->ilock_off = off + (u64)sb->lock_rec * sb->nr_locks;
	off += sb->lock_size;
	sb->data_off = cider_align(off, p.chunk_size);
	if (sb->data_off > p.region_size || p.region_size - sb->data_off < p.chunk_size)
		return "region too small for the index and locks of that many keys plus a chunk";
	sb->data_size = (p.region_size - sb->data_off) / p.chunk_size * p.chunk_size;
	return NULL;
}

/* The words CNs change at run time; everything else is the format. */
static void cider_store_clear_live(struct cider_mn_sb *sb)
{
	sb->alloc_cursor = 0;
	sb->probe = 0;
	sb->reader_fence = 0;
	sb->serves = 0;
}

const char *cider_store_check(const struct cider_mn_sb *sb, u64 region_size)
{
	struct cider_store_params p = {
		.region_size = sb->region_size, .chunk_size = sb->chunk_size,
		.nr_keys = sb->nr_keys, .lease_ns = sb->lease_ns, .grace_ns = sb->grace_ns,
		.index = sb->index, .mode = sb->mode, .lock_qlen = sb->lock_qlen,
		.member_lease_ns = sb->member_lease_ns, .features = sb->flags,
		.store_id = sb->store_id, .cache_lease_ns = sb->cache_lease_ns,
		.cache_margin_ns = sb->cache_margin_ns,
	};
	struct cider_mn_sb want, got;
	const char *why;

	if (sb->magic != CIDER_MN_MAGIC)
		return "not a CIDER memory node (bad magic)";
	if (sb->layout_version != CIDER_LAYOUT_VERSION)
		return "another layout version";
	if (sb->flags & ~CIDER_SB_FEATURES)
		return "store needs features this module lacks (a newer release formatted it)";
	if (sb->region_size != region_size)
		return "superblock and connection disagree on the region size";
	/* A zero here would pick a default and hide a corrupt superblock. */
	if (!p.chunk_size || !p.nr_keys || !p.lease_ns || !p.grace_ns || !p.lock_qlen ||
	    !p.member_lease_ns || (sb->flags & CIDER_SB_F_CACHE && !p.cache_lease_ns))
		return "superblock lacks a store parameter";
	why = cider_store_format(&want, &p);
	if (why)
		return why;
	got = *sb;
	cider_store_clear_live(&got);
	if (memcmp(&got, &want, sizeof(got)))
		return "store layout differs from the one its parameters give";
	return NULL;
}
