/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Messages between compute nodes of one store: the lock queue's
 * handovers and global write combining's EXEC, EXEC_DONE and RESULT
 * (core/proto.h), in a wire format of their own (peer.c).
 */
#ifndef _CIDER_PEER_H
#define _CIDER_PEER_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/types.h>

#include "core/proto.h"

struct cider_mn;

#define CIDER_PEER_MAGIC	0x4350		/* "PC" on the wire */
#define CIDER_PEER_VERSION	1

/*
 * A message on the wire: packed, little-endian, fixed size.  The core's
 * CN ids are compute node id * CIDER_PEER_SHARDS + shard (kvshard.h).
 * to_inc and from_inc are the incarnations (member.c) of the addressee
 * as the sender knows it and of the sender: a message for an earlier
 * incarnation of its addressee is stale and dropped.
 */
struct cider_peer_wire {
	__le16 magic;
	u8 version;
	u8 type;		/* enum cider_msg_type */
	__le16 len;		/* sizeof(struct cider_peer_wire) */
	u8 result;		/* enum cider_res */
	u8 reserved;
	__le32 to_cn, from_cn;	/* the core's CN ids */
	__le64 to_inc, from_inc;
	__le32 to_slot, ticket;
	__le64 laddr;
	__le32 from_slot, from_ticket;
	__le32 count, writer;
	__le64 ptr;
} __packed;

#define CIDER_PEER_SHARDS	16	/* core CN ids per compute node */

/* Why messages were not delivered, and what was: counted per store. */
struct cider_peer_stats {
	atomic64_t sent[CIDER_MSG_RESULT + 1];	/* to another compute node, by type */
	atomic64_t received;		/* from another compute node, delivered */
	atomic64_t local;		/* of those sent, through this kernel's shortcut */
	atomic64_t unreachable;		/* no live peer with that id to send to */
	atomic64_t invalid;		/* refused on receipt: malformed, misaddressed */
	atomic64_t stale;		/* for an earlier incarnation of the addressee */
	atomic64_t full;		/* the addressee's inbox was full */
};

/*
 * A store on this kernel that compute nodes can send to, registered
 * while it lives: its node (which names the memory node and region), its
 * compute node id and incarnation, and how a message reaches it.
 */
struct cider_peer_sink {
	struct list_head node;		/* on the registry, RCU, while live */
	bool live;			/* registered: ->deliver may be called */
	struct cider_mn *mn;
	u32 cn_id;
	u64 incarnation;
	/*
	 * Hand @m to shard @shard: 0, -ENOENT no such shard, -ENOBUFS its
	 * inbox is full.  Any context, called under RCU and possibly with a
	 * shard lock of the sender held: takes only leaf locks.
	 */
	int (*deliver)(struct cider_peer_sink *sink, unsigned int shard,
		       const struct cider_msg *m);
	struct cider_peer_stats stats;
};

void cider_peer_register(struct cider_peer_sink *sink);
/* Process context: once it returns, ->deliver is not running nor called again. */
void cider_peer_unregister(struct cider_peer_sink *sink);
/* Send @m from @from's store to core CN @to_cn: any context, never sleeps. */
void cider_peer_send(struct cider_peer_sink *from, u32 to_cn, const struct cider_msg *m);

/* @len bytes at @w arrived for @to (any context, under RCU, @to live). */
void cider_peer_receive(struct cider_peer_sink *to, const struct cider_peer_wire *w,
			size_t len);
/* The same from a test's injector: dropped unless @to is still registered. */
void cider_peer_inject(struct cider_peer_sink *to, const void *buf, size_t len);
void cider_peer_encode(const struct cider_peer_sink *from, u64 to_inc, u32 to_cn,
		       const struct cider_msg *m, struct cider_peer_wire *w);
int cider_peer_decode(const struct cider_peer_sink *to, const struct cider_peer_wire *w,
		      size_t len, struct cider_msg *m, unsigned int *shard);

#endif
