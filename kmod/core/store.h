/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The KV store's format: where a memory node's region keeps the index,
 * its lock entries and the KV blocks, derived from a few parameters.
 *
 * cider-memd formats a region once, from its flags, and records the
 * parameters in the superblock.  A compute node's attach reads the
 * superblock and re-derives the layout from the recorded parameters with
 * the same function: any difference (another version of this code, a
 * corrupt or foreign region) refuses the attach.  So every CN of a store
 * runs the same mode on the same layout, and nothing is configured twice.
 */
#ifndef _CIDER_CORE_STORE_H
#define _CIDER_CORE_STORE_H

#include "layout.h"

struct cider_store_params {
	u64 region_size;	/* bytes, a multiple of 4 KiB */
	u64 chunk_size;		/* 0: the index's default */
	u64 nr_keys;		/* 0: one key per KiB of region */
	u64 lease_ns;		/* 0: CIDER_STORE_LEASE_NS */
	u64 grace_ns;		/* 0: CIDER_STORE_GRACE_NS */
	u32 index;		/* CIDER_SB_INDEX_* */
	u32 mode;		/* CIDER_SB_MODE_* */
	u32 lock_qlen;		/* 0: CIDER_STORE_LOCK_QLEN */
	u64 member_lease_ns;	/* 0: CIDER_STORE_MEMBER_LEASE_NS */
	u32 features;		/* CIDER_SB_FEATURES bits */
	u64 store_id;		/* with CIDER_SB_F_STORE_ID: not 0 */
	u64 cache_lease_ns;	/* with CIDER_SB_F_CACHE: 0: the default */
	u64 cache_margin_ns;	/* with CIDER_SB_F_CACHE: 0: the default */
};

#define CIDER_STORE_MAX_REGION	(16ULL << 40)	/* hash slots address 16 TiB */
#define CIDER_STORE_MAX_KEYS	0x100000000ULL	/* 2^32 */
/*
 * 50 ms: well above a lock hold on a loaded NIC (tens of microseconds)
 * and a CN's scheduling hiccups, short enough that a crashed holder
 * costs little.
 */
#define CIDER_STORE_LEASE_NS	50000000ULL
#define CIDER_STORE_MIN_LEASE_NS 1000000ULL	/* 1 ms */
#define CIDER_STORE_MAX_LEASE_NS 60000000000ULL	/* 60 s */
/*
 * 2 ms: a block READ takes 2-5 us on hardware and ~50 us under the test
 * VM's emulation; readers slower than the grace period are caught by the
 * reader fence (slab.h), so this bounds how often that happens.
 */
#define CIDER_STORE_GRACE_NS	2000000ULL
/*
 * Waiters each lock's ring holds before later ones poll for room
 * (lockqueue.h): 8 entries, 80 bytes per lock record.  DecLock sizes its
 * queue by the CNs that contend (8 in its testbed); a key maps to one
 * shard on every compute node (kmod/kvstore.c), so with local write
 * combining about one waiter per compute node queues for a key.  A power
 * of two from 2 to 128.
 */
#define CIDER_STORE_LOCK_QLEN	8
/*
 * 2 s: a CN's heartbeat moves every quarter of it (its node watchdog's
 * tick, 250 ms in cider.ko, or slower on a loaded CN), and under the test
 * VM's emulation a CN can stall for a second.  Only a CN reclaiming its
 * own id after a crash waits this long.
 */
#define CIDER_STORE_MEMBER_LEASE_NS	2000000000ULL
#define CIDER_STORE_MIN_MEMBER_LEASE_NS	1000000000ULL	/* 4 watchdog ticks */
#define CIDER_STORE_MAX_MEMBER_LEASE_NS	600000000000ULL	/* 10 min */

/*
 * The CN cache's read leases (core/cache.h): 5 ms, with 1 ms for the
 * clocks' drift (NTP-synchronized hosts on one network stay within a few
 * hundred microseconds; PTP within one).  A lock holder may wait a lease
 * out, and the others reset a lock held its lease: lease plus margin is
 * at most an eighth of the lock's lease.
 */
#define CIDER_STORE_CACHE_LEASE_NS	5000000ULL
#define CIDER_STORE_CACHE_MARGIN_NS	1000000ULL

/*
 * Lay out a store into @sb (not written anywhere yet).  Returns NULL, or
 * why @p cannot be formatted (a sentence for the operator).
 */
const char *cider_store_format(struct cider_mn_sb *sb, const struct cider_store_params *p);

/*
 * Is @sb, read from a node whose region is @region_size bytes, a store
 * this code understands?  NULL, or why not.
 */
const char *cider_store_check(const struct cider_mn_sb *sb, u64 region_size);

/* Names for logs and tools: "hash", "cider"; NULL for unknown values. */
const char *cider_store_index_name(u32 index);
const char *cider_store_mode_name(u32 mode);

#endif
