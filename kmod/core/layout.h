/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memory node's region as every party sees it: cider-memd formats it
 * once, compute nodes read and update it with one-sided RDMA only.
 *
 * All words are little-endian (RDMA atomics act on the responder's native
 * 64-bit words and every supported host is x86-64).  Offsets are from the
 * start of the region; each area is 4 KiB aligned.
 */
#ifndef _CIDER_CORE_LAYOUT_H
#define _CIDER_CORE_LAYOUT_H

#include "platform.h"
#include "vocab.h"

#define CIDER_MN_MAGIC		0x314e4d5245444943ULL	/* "CIDERMN1" */
/*
 * 3: lock records with a ring (store.h); 4: membership entries with a
 * claim and a heartbeat, the superblock's flags incompatible features.
 * From 4 on, a change that an older CN cannot serve sets a feature bit
 * in the superblock's flags instead of a new version.
 */
#define CIDER_LAYOUT_VERSION	4
#define CIDER_MN_ALIGN		4096ULL
#define CIDER_MN_SB_AREA	4096ULL		/* the superblock's own area */
#define CIDER_MN_MAX_CNS	256
#define CIDER_MN_MIN_SIZE	0x100000ULL	/* 1 MiB */

/*
 * The superblock's flags: features of the store that a CN must know to
 * serve it.  A CN refuses a store with a bit it does not know.
 */
/*
 * store_id names the store (random, set when it is formatted) and serves
 * counts the daemon starts that served it: a CN reconnecting to a memory
 * node that moved its region (a restarted daemon on the same backing
 * file) knows it is the same store.
 */
#define CIDER_SB_F_STORE_ID	0x1U
/*
 * CNs may take read leases on hot keys (core/cache.h): the data pointer
 * words carry LEASED and WAITING bits, and a writer of a leased word
 * stops new leases and waits the old ones out, cache_lease_ns plus
 * cache_margin_ns at most.  Every CN of such a store must do so; a CN
 * that does not know the bit refuses the store.
 */
#define CIDER_SB_F_CACHE	0x2U
#define CIDER_SB_FEATURES	(CIDER_SB_F_STORE_ID | CIDER_SB_F_CACHE)

/*
 * One CN's entry in the membership table, entry cn_id (member.c in the
 * kernel has the protocol).  'claim' is the CN's incarnation times two,
 * plus one while that incarnation holds the entry: CAS from a released
 * or dead claim to the next incarnation, live, takes it.  'heartbeat'
 * moves (FAA) while the holder lives: a live claim whose heartbeat has
 * not moved for the superblock's member lease belongs to a dead CN.
 */
struct cider_mn_member {
	u64 claim;
	u64 heartbeat;
	u8 addr[16];		/* where other CNs reach it: 4 bytes (AF_INET) or 16 */
	u16 port;		/* its peer listener's, host order; 0: none */
	u16 family;		/* Linux's AF_INET or AF_INET6, or 0 */
	u32 reserved0;
	u64 reserved[3];
};

#define CIDER_CLAIM_LIVE	1ULL

static inline u64 cider_claim_incarnation(u64 claim)
{
	return claim >> 1;
}

/* The claim the next incarnation takes over @claim with. */
static inline u64 cider_claim_next(u64 claim)
{
	return ((claim >> 1) + 1) << 1 | CIDER_CLAIM_LIVE;
}

struct cider_mn_sb {
	u64 magic;
	u32 layout_version;
	u32 flags;		/* CIDER_SB_FEATURES: what a CN must know */
	u64 region_size;
	u64 chunk_size;		/* allocation unit of the data area */
	u64 member_off;		/* CIDER_MN_MAX_CNS struct cider_mn_member */
	u64 member_size;
	u64 index_off;		/* the KV index (data pointers, slots) */
	u64 index_size;
	u64 lock_off;		/* lock records, one per index word */
	u64 lock_size;
	u64 data_off;		/* KV blocks, handed out in chunks */
	u64 data_size;
	u64 alloc_cursor;	/* bytes of the data area claimed, by FAA */
	u64 probe;		/* unused (the attach probes work on magic) */
	u64 reader_fence;	/* readers that reclamation must wait for (slab.h) */
	/* The KV store, as cider-memd formatted it (store.h). */
	u32 index;		/* CIDER_SB_INDEX_* */
	u32 mode;		/* CIDER_SB_MODE_*: every CN synchronizes so */
	u64 nr_keys;		/* capacity the index was sized for */
	u64 nr_buckets;		/* hash: buckets of 8 slots; array: 0 */
	u64 bucket_off;		/* hash: the buckets, after the directory page */
	u64 nr_locks;		/* lock records at lock_off, one per index word */
	u64 ilock_off;		/* hash: INSERT locks, one per bucket */
	u64 lease_ns;		/* longest a CN may hold a lock */
	u64 grace_ns;		/* a freed block's quarantine (slab.h) */
	u32 max_key_len;
	u32 max_value_len;
	u32 lock_qlen;		/* ring entries per lock record (lockqueue.h) */
	u32 lock_rec;		/* bytes per lock record: 16 + 8 * lock_qlen */
	u64 member_lease_ns;	/* a heartbeat this still is a dead CN's */
	u64 store_id;		/* F_STORE_ID: which store this is, never 0 */
	u64 serves;		/* F_STORE_ID: daemon starts that served it */
	u64 cache_lease_ns;	/* F_CACHE: a read lease's length */
	u64 cache_margin_ns;	/* F_CACHE: the CNs' clock drift over one */
};

/* cider_mn_sb.index and .mode: the lists of vocab.h. */
enum { CIDER_SB_INDEXES(CIDER_SB_INDEX_ENUM) };
enum { CIDER_SB_MODES(CIDER_SB_MODE_ENUM) };

/*
 * The private data of the MN's accept: enough for a CN to address the
 * region without a round trip.
 */
struct cider_mn_hello {
	u64 magic;		/* CIDER_MN_MAGIC */
	u32 layout_version;
	u32 rkey;
	u64 addr;		/* remote virtual address of offset 0 */
	u64 size;
};

/*
 * What follows the MN's hello in its accept when the node has a key
 * (keyproof.h): its MAC over the CN's MAC and the hello.  Within the 196
 * bytes an IB CM REP carries.
 */
#define CIDER_MAC_LEN		16	/* HMAC-SHA256, its first 16 bytes */
struct cider_mn_proof {
	u8 mac[CIDER_MAC_LEN];
};

/*
 * The private data of the MN's reject, when it refuses a CN on purpose
 * (another reject, or none, is a plain refusal): why, so that the CN can
 * say it.  Within the 148 bytes an IB CM REJ carries.
 */
#define CIDER_REJECT_NOT_ALLOWED	1	/* its address is not on the allow list */
#define CIDER_REJECT_BAD_KEY		2	/* no proof of the store's key, or a wrong one */
#define CIDER_REJECT_STALE_PROOF	3	/* a proof out of the window: clocks apart */
struct cider_mn_reject {
	u64 magic;		/* CIDER_MN_MAGIC */
	u32 reason;		/* CIDER_REJECT_* */
	u32 reserved;
};

/* The private data of a CN's connect: who is asking, for logs and checks. */
#define CIDER_CN_MAGIC		0x314e4e5245444943ULL	/* "CIDERNN1" */
struct cider_cn_hello {
	u64 magic;
	u32 cn_id;
	u32 channel;
};

/*
 * What follows the CN's hello when it has the store's key (keyproof.h).
 * Hello and proof, 48 bytes, fit the 56 a connect request carries.
 */
struct cider_cn_proof {
	u64 time_ns;		/* the CN's CLOCK_REALTIME */
	u64 nonce;		/* random: no two proofs alike */
	u8 mac[CIDER_MAC_LEN];
};

#endif
