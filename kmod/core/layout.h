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
#define CIDER_LAYOUT_VERSION	3	/* 3: lock records with a ring (store.h) */
#define CIDER_MN_ALIGN		4096ULL
#define CIDER_MN_SB_AREA	4096ULL		/* the superblock's own area */
#define CIDER_MN_MAX_CNS	256
#define CIDER_MN_MIN_SIZE	0x100000ULL	/* 1 MiB */

/* One CN's entry in the membership table, claimed by CAS on 'owner'. */
struct cider_mn_member {
	u64 owner;		/* 0: free; else cn_id + 1 */
	u64 incarnation;	/* bumped (FAA) by each new attach of that CN */
	u8 addr[16];		/* IPv4-mapped IPv6 address for CN-to-CN links */
	u16 port;
	u16 family;
	u32 reserved0;
	u64 reserved[3];
};

struct cider_mn_sb {
	u64 magic;
	u32 layout_version;
	u32 flags;
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
	u64 probe;		/* scratch word for attach-time atomic probes */
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
	u64 reserved[5];
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

/* The private data of a CN's connect: who is asking, for logs and checks. */
#define CIDER_CN_MAGIC		0x314e4e5245444943ULL	/* "CIDERNN1" */
struct cider_cn_hello {
	u64 magic;
	u32 cn_id;
	u32 channel;
};

#endif
