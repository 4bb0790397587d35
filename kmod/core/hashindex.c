// SPDX-License-Identifier: GPL-2.0
/* The hash index's words and key placement; see hashindex.h. */
#include "hashindex.h"

u64 cider_key_hash(const void *key, u32 len, u64 seed)
{
	const u8 *b = key;
	u64 h = 0xcbf29ce484222325ULL ^ seed;

	while (len--) {
		h ^= *b++;
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

void cider_hash_locate(const void *key, u32 len, u64 nr_buckets, struct cider_hash_loc *loc)
{
	u64 h1 = cider_key_hash(key, len, 0), h2 = cider_key_hash(key, len, 0x9e3779b97f4a7c15ULL);

	loc->bucket[0] = h1 % nr_buckets;
	loc->bucket[1] = h2 % nr_buckets;
	if (loc->bucket[1] == loc->bucket[0])
		loc->bucket[1] = (loc->bucket[0] + 1) % nr_buckets;
	loc->fp = (u8)(h1 >> 56) ? (u8)(h1 >> 56) : 1;
}

int cider_bucket_match(const u64 *slots, u8 fp, int from)
{
	int i;

	for (i = from; i < CIDER_BUCKET_SLOTS; i++)
		if (!cider_slot_empty(slots[i]) && cider_slot_fp(slots[i]) == fp)
			return i;
	return -1;
}

u32 cider_bucket_load(const u64 *slots)
{
	u32 i, n = 0;

	for (i = 0; i < CIDER_BUCKET_SLOTS; i++)
		n += !cider_slot_empty(slots[i]);
	return n;
}

int cider_bucket_free(const u64 *slots)
{
	int i;

	for (i = 0; i < CIDER_BUCKET_SLOTS; i++)
		if (cider_slot_empty(slots[i]))
			return i;
	return -1;
}

/*
 * A hashed key's identity for per-key state on a CN (hot-key credits,
 * local write combining): a third hash, its top bit clear so that
 * "id + 1" never wraps to the "free" 0.  State that a collision would
 * make wrong (combining two keys' writes) also compares the bytes.
 */
u64 cider_key_id(const void *key, u32 len)
{
	return cider_key_hash(key, len, 0x2545f4914f6cdd1dULL) >> 1;
}
