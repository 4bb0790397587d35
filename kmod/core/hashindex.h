/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The RACE-style hash index's words (RACE, ATC'21; CIDER §5.3.1 adds a
 * lock entry per slot).
 *
 * Slot (8 bytes):  bits 63..56 fingerprint (from the key's hash),
 *                  55..52 block size class, 51..40 version (advanced by
 *                  every DELETE, as in the pointer array; CIDER_VER_BITS
 *                  wide, like the lock entry's), 39 leased, 38 a writer
 *                  waits (the CN cache's read lease, cache.h), 37..0
 *                  block offset / 64 (0: empty; 16 TiB of blocks).
 * Bucket: 8 slots, 64 bytes, one cache line and one small READ.
 * A key has two candidate buckets from two independent hashes; a SEARCH
 * READs both in one batch (one round trip), matches fingerprints, and
 * READs the candidate blocks to compare keys (fingerprints collide).
 *
 * The index area starts with a directory page reserved for RACE's
 * extendible hashing (global depth, subtable addresses); this version has
 * one subtable, sized when the MN is formatted.
 */
#ifndef _CIDER_CORE_HASHINDEX_H
#define _CIDER_CORE_HASHINDEX_H

#include "kv.h"

#define CIDER_BUCKET_SLOTS	8
#define CIDER_BUCKET_SIZE	(CIDER_BUCKET_SLOTS * 8)
#define CIDER_DIR_SIZE		4096	/* reserved at the index area's start */
#define CIDER_SLOT_UNIT		64	/* blocks are 64-byte aligned */
#define CIDER_SLOT_OFF_BITS	40
#define CIDER_SLOT_LEASED	BIT_ULL(39)
#define CIDER_SLOT_WAITING	BIT_ULL(38)
#define CIDER_SLOT_ADDR_MASK	((1ULL << 38) - 1)

static inline u64 cider_slot_make(u8 fp, u32 cls, u32 ver, u64 off)
{
	return (u64)fp << 56 | (u64)(cls & 15) << 52 |
	       (u64)(ver & CIDER_VER_MASK) << CIDER_SLOT_OFF_BITS |
	       ((off / CIDER_SLOT_UNIT) & CIDER_SLOT_ADDR_MASK);
}

static inline u8 cider_slot_fp(u64 s)
{
	return (u8)(s >> 56);
}

static inline u32 cider_slot_class(u64 s)
{
	return (u32)(s >> 52) & 15;
}

static inline u32 cider_slot_ver(u64 s)
{
	return (u32)(s >> CIDER_SLOT_OFF_BITS) & CIDER_VER_MASK;
}

static inline u64 cider_slot_off(u64 s)
{
	return (s & CIDER_SLOT_ADDR_MASK) * CIDER_SLOT_UNIT;
}

static inline bool cider_slot_empty(u64 s)
{
	return !(s & CIDER_SLOT_ADDR_MASK);
}

struct cider_hash_loc {
	u64 bucket[2];		/* bucket indexes, distinct */
	u8 fp;			/* never 0 */
};

/* 64-bit hash of a key (FNV-1a, then a finalizer that mixes every bit). */
u64 cider_key_hash(const void *key, u32 len, u64 seed);
void cider_hash_locate(const void *key, u32 len, u64 nr_buckets, struct cider_hash_loc *loc);
/* A hashed key's identity on a CN: a hash, below 2^63 (hot keys, local WC). */
u64 cider_key_id(const void *key, u32 len);
/* Next slot at or after @from whose fingerprint is @fp; -1 if none. */
int cider_bucket_match(const u64 *slots, u8 fp, int from);
/* Slots in use. */
u32 cider_bucket_load(const u64 *slots);
/* The first empty slot; -1 if the bucket is full. */
int cider_bucket_free(const u64 *slots);

#endif
