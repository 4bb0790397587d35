/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Messages between compute nodes of one store: the lock queue's
 * handovers, global write combining's EXEC, EXEC_DONE and RESULT, and
 * the CN cache's INVAL and INVAL_ACK (core/proto.h), in a wire format of
 * their own (peer.c).
 */
#ifndef _CIDER_PEER_H
#define _CIDER_PEER_H

#include <linux/atomic.h>
#include <linux/cider.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/workqueue.h>

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

/*
 * The private data of a link's connect (56 bytes, what rdma_cm leaves of
 * an IB CM REQ): who connects to whom, and the store, named by the memory
 * node's address as the connecting CN reaches it and the store's id
 * (CIDER_SB_F_STORE_ID), which a daemon restarted on its backing file
 * keeps while its region's address and rkey change; a store without an
 * id is named by those.  "CPR1" named every store by address and rkey.
 */
#define CIDER_PEER_HELLO_MAGIC	0x32525043	/* "CPR2" */
struct cider_peer_hello {
	__le32 magic;
	u8 version;
	u8 from_cn, to_cn;
	u8 reserved;
	__le64 from_inc, to_inc;
	__le64 store;		/* the store id, or the region's base */
	__le32 rkey;		/* 0 with a store id, else the region's */
	__be16 mn_port;		/* as in a sockaddr */
	__le16 mn_family;	/* AF_INET or AF_INET6 */
	u8 mn_addr[16];
} __packed;

/* Messages a store keeps for links being made, to all CNs together. */
#define CIDER_PEER_EARLY	16

/* Why messages were not delivered, and what was: counted per store. */
struct cider_peer_stats {
	atomic64_t sent[CIDER_MSG_NR];		/* to another compute node, by type */
	atomic64_t received;		/* from another compute node, delivered */
	atomic64_t local;		/* of those sent, through this kernel's shortcut */
	atomic64_t unreachable;		/* no live peer with that id to send to */
	atomic64_t invalid;		/* refused on receipt: malformed, misaddressed */
	atomic64_t stale;		/* for an earlier incarnation of the addressee */
	atomic64_t full;		/* the addressee's inbox was full */
	atomic64_t remote;		/* of those sent, posted on a link */
	atomic64_t links_made;		/* links this store connected */
	atomic64_t links_accepted;	/* links other compute nodes connected */
	atomic64_t link_failures;	/* connects that failed, links that broke */
};

struct cider_peer_link;

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
	/* peerlink.c: links to compute nodes of other kernels, by their id */
	struct cider_peer_link __rcu *out[CIDER_MAX_CN_ID + 1];
	/* Messages to CNs whose link is asked for, until it is published. */
	spinlock_t early_lock;
	unsigned int nr_early;
	struct cider_peer_early {
		u32 cn, to_cn;
		struct cider_msg m;
	} early[CIDER_PEER_EARLY];
	unsigned long retry_at[CIDER_MAX_CN_ID + 1];	/* jiffies: no connect before */
	DECLARE_BITMAP(want, CIDER_MAX_CN_ID + 1);	/* links to make */
	struct work_struct connect_work;
	struct mutex links_lock;	/* out[] changes, in, closing */
	struct list_head in;		/* links others made to it */
	bool closing;
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
/* The live store of compute node @cn_id on the memory node @hello names, held (mn ref). */
struct cider_peer_sink *cider_peer_get_sink(const struct cider_peer_hello *hello);
void cider_peer_put_sink(struct cider_peer_sink *sink);
void cider_peer_hello_fill(const struct cider_peer_sink *from, u32 to_cn, u64 to_inc,
			   struct cider_peer_hello *h);
void cider_peer_encode(const struct cider_peer_sink *from, u64 to_inc, u32 to_cn,
		       const struct cider_msg *m, struct cider_peer_wire *w);
int cider_peer_decode(const struct cider_peer_sink *to, const struct cider_peer_wire *w,
		      size_t len, struct cider_msg *m, unsigned int *shard);

#endif
