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

#define CIDER_MN_MAGIC		0x314e4d5245444943ULL	/* "CIDERMN1" */
#define CIDER_LAYOUT_VERSION	1
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
	u64 lock_off;		/* lock entries, one per index word */
	u64 lock_size;
	u64 data_off;		/* KV blocks, handed out in chunks */
	u64 data_size;
	u64 alloc_cursor;	/* bytes of the data area claimed, by FAA */
	u64 probe;		/* scratch word for attach-time atomic probes */
	u64 reader_fence;	/* readers that reclamation must wait for (slab.h) */
	u64 reserved[15];
};

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

/*
 * Lay out a region of @size bytes into @sb (not yet written anywhere).
 * Index gets 1/32 of the region, locks 1/16, the rest is data; returns
 * false if @size is too small or not aligned.
 */
static inline bool cider_mn_layout(struct cider_mn_sb *sb, u64 size, u64 chunk)
{
	u64 off = CIDER_MN_SB_AREA, a = CIDER_MN_ALIGN;

	if (size < CIDER_MN_MIN_SIZE || size % a || !chunk || chunk % a)
		return false;
	memset(sb, 0, sizeof(*sb));
	sb->magic = CIDER_MN_MAGIC;
	sb->layout_version = CIDER_LAYOUT_VERSION;
	sb->region_size = size;
	sb->chunk_size = chunk;
	sb->member_off = off;
	sb->member_size = (CIDER_MN_MAX_CNS * sizeof(struct cider_mn_member) + a - 1) / a * a;
	off += sb->member_size;
	sb->index_off = off;
	sb->index_size = size / 32 / a * a;
	off += sb->index_size;
	sb->lock_off = off;
	sb->lock_size = size / 16 / a * a;
	off += sb->lock_size;
	sb->data_off = (off + chunk - 1) / chunk * chunk;
	if (sb->data_off + chunk > size)
		return false;
	sb->data_size = (size - sb->data_off) / chunk * chunk;
	return true;
}

#endif
