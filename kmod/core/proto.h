/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CIDER protocol core: compute-node clients running KV operations on
 * the pointer-array index under one of four synchronization modes.
 *
 * The core never blocks: an operation asks the fabric to post a batch of
 * verbs, to send a message to another CN's lock agent, or to wake it
 * after a delay, and returns.  The fabric calls cider_client_resume() when
 * the batch completes or the delay passes; a message arrives through
 * cider_cn_on_msg().  The kernel fabric maps this onto channels; the
 * simulator's fabric is a model.
 */
#ifndef _CIDER_CORE_PROTO_H
#define _CIDER_CORE_PROTO_H

#include "backoff.h"
#include "kv.h"
#include "slab.h"

enum cider_mode { CIDER_MODE_OSYNC, CIDER_MODE_CASLOCK, CIDER_MODE_MCS, CIDER_MODE_CIDER };

enum cider_index { CIDER_INDEX_ARRAY, CIDER_INDEX_HASH };

enum cider_verb_op { CIDER_V_READ, CIDER_V_WRITE, CIDER_V_CAS, CIDER_V_FAA };

struct cider_verb {
	u8 op;
	u32 len;		/* READ/WRITE: bytes (<= 16); atomics: 8 */
	u64 addr;		/* offset in the MN region */
	u64 arg0;		/* CAS: compare; FAA: add */
	u64 arg1;		/* CAS: swap */
	u64 data[8];		/* WRITE: in (16 bytes); READ: out (<= 64) */
	void *buf;		/* when set: @len bytes in or out here instead */
	u64 old;		/* atomics: out */
};

#define CIDER_MAX_VERBS 4

/* Messages between CN lock agents (MCS queue and global WC, §4.2.1). */
enum cider_msg_type {
	CIDER_MSG_ENQ,		/* "I am your successor" */
	CIDER_MSG_HANDOVER,	/* the lock passes on (or the WC result does) */
	CIDER_MSG_EXEC,		/* coordinator -> executor: run the batch */
	CIDER_MSG_EXEC_DONE,	/* executor -> coordinator: done, lock back */
};

struct cider_msg {
	u8 type;
	u8 combined;		/* HANDOVER: the WC result, not the lock */
	u8 result;		/* enum cider_res of the combined write */
	u64 to;			/* qnode ids */
	u64 from;
	u64 exec;		/* HANDOVER combined: the executor's qnode */
	u64 ptr;		/* the data pointer as the sender left it */
	u32 writer;		/* the operation whose value was installed */
};

/* Observations for checkers (mutual exclusion, FIFO handover). */
enum cider_trace_type { CIDER_T_ACQUIRE, CIDER_T_RELEASE, CIDER_T_HANDOVER, CIDER_T_RESET };

struct cider_cfg {
	u8 mode;		/* enum cider_mode */
	u8 index;		/* enum cider_index */
	u64 nr_buckets;		/* hash: buckets of 8 slots */
	u64 bucket_off;		/* hash: the buckets (index_off + directory) */
	u64 ilock_off;		/* hash: INSERT locks, one per bucket */
	bool local_wc;
	bool backoff;		/* osync: SMART backoff between CAS retries */
	u32 nr_cns;
	u32 clients_per_cn;
	u64 nr_keys;
	u64 index_off;		/* from the superblock */
	u64 lock_off;
	u64 alloc_cursor;	/* address of sb.alloc_cursor */
	u64 rfence;		/* address of sb.reader_fence (slab.h) */
	u64 data_off;
	u64 chunk_size;
	u32 block_size;		/* array: 16; hash: 64 (slots count 64-byte units) */
	u32 key_len;		/* hash: key bytes (8..1024): the id, then filler */
	u64 data_size_limit;	/* bytes of the data area */
	u64 lease_ns;		/* maximum lock hold time */
	u64 grace_ns;		/* block reuse grace period (slab.h) */
	u64 backoff_t0_ns;
	u32 initial_credit;	/* Algorithm 1: 36 */
	u32 hotness;		/* Algorithm 1: 2 */
	u32 aimd;		/* Algorithm 1: 2 */
};

struct cider_client;
struct cider_cn;

struct cider_fabric_ops {
	void (*post)(void *fab, struct cider_client *c, struct cider_verb *v, unsigned int n);
	void (*send)(void *fab, struct cider_cn *from, u32 to_cn, const struct cider_msg *m);
	void (*timer)(void *fab, struct cider_client *c, u64 delay_ns, u32 token);
	void (*wake)(void *fab, struct cider_client *c);	/* resume soon */
	void (*done)(void *fab, struct cider_client *c);	/* op finished */
	void (*trace)(void *fab, struct cider_client *c, u8 type, u64 lock, u64 a, u64 b);
	u64 (*now)(void *fab);
	u32 (*rand)(void *fab);
};

struct cider_fabric {
	const struct cider_fabric_ops *ops;
	void *priv;
};

/* An MCS queue node: one per lock acquisition, owned by its CN's agent. */
enum cider_qstate {
	CIDER_Q_FREE,
	CIDER_Q_WAITING,	/* enqueued, lock not here yet */
	CIDER_Q_GRANTED,	/* holds the lock in queue order */
	CIDER_Q_EXECUTOR,	/* holds it out of order for a coordinator */
	CIDER_Q_COMBINED,	/* its write was combined; result known */
	CIDER_Q_ABANDONED,	/* given up after a lock reset */
};

struct cider_qnode {
	u64 id;			/* 0: free slot */
	u32 owner;		/* client index within the CN */
	u64 key;
	u64 laddr;		/* the lock entry it queues on */
	u8 state;
	u8 result;
	bool exec_done;		/* coordinator: the executor reported */
	bool passthru;		/* executor: the WC result came back around */
	bool fwd_pending;	/* combined: forward when the successor shows */
	bool owner_done;	/* the owner no longer reads this node */
	u32 lockver;		/* version in the tail word we installed */
	u64 next;		/* successor qnode, 0: not known yet */
	u64 coord;		/* executor: the coordinator's qnode */
	u64 exec;		/* combined: the executor's qnode */
	u64 ptr;		/* latest data pointer known */
	u32 writer;
};

#define CIDER_QNODES_PER_CN 256

struct cider_hot {		/* Algorithm 1 state of one hot key */
	u64 key;		/* key + 1; 0: empty */
	u32 credit;
	u32 retry;
};

#define CIDER_HOT_SLOTS 1024

/* Local write combining of one key on one CN (localwc.c). */
struct cider_lwc {
	u64 key;		/* key + 1; 0: free */
	s32 combiner;		/* client index, -1: none */
	bool open;		/* the combiner has not written yet */
	u64 cur, next;		/* members (client index bits, so <= 64 clients) */
	u64 val, next_val;	/* latest value of each batch */
	u32 op, next_op;	/* and its operation */
	u32 vlen, next_vlen;	/* and its length */
};

struct cider_cn {
	u32 id;
	const struct cider_cfg *cfg;
	struct cider_fabric *fab;
	struct cider_client *clients;
	struct cider_qnode q[CIDER_QNODES_PER_CN];
	u64 qseq;
	struct cider_slab slab;		/* this CN's KV blocks */
	struct cider_hot hot[CIDER_HOT_SLOTS];
	struct cider_lwc *lwc;
	u32 nr_lwc;
	struct cider_backoff backoff;
	bool dead;
	u64 msgs_dropped;
};

struct cider_client_stats {
	u64 ops, updates, pessimistic, combined, cas_fail, resets;
};

struct cider_client {
	u32 id;			/* global: cn * clients_per_cn + index */
	u32 index;
	struct cider_cn *cn;
	bool dead;
	bool busy;		/* an operation is under way */
	/* the operation */
	u8 op;
	u64 key;
	u64 val;		/* INSERT/UPDATE: the value to write */
	u32 vlen;		/* hash: its length in bytes (8..64 KiB) */
	u64 wval;		/* the value actually written (local WC) */
	u32 wvlen;
	u32 wop;		/* and the operation it belongs to */
	u32 opid;		/* caller's id for this operation */
	u8 res;
	u64 got;		/* SEARCH: the value read */
	u32 writer;		/* a write's installer (itself unless combined) */
	bool pess;		/* this UPDATE went the pessimistic way */
	bool escalate;		/* it was optimistic and lost too often */
	u32 batch;		/* WC batch size as this client saw it */
	/* protothread state */
	int pt_op, pt_l1, pt_l2;
	bool parked;
	u32 token;
	bool timer_fired;
	struct cider_verb v[CIDER_MAX_VERBS];
	unsigned int nv;
	/* scratch kept across yields */
	u64 ptr, blk, cmp, lockw, epoch, seen_epoch, changed_at, t0;
	u64 mm_epoch, mm_since;	/* version mismatch watch (lockqueue.c) */
	u32 attempt, retries;
	struct cider_qnode *qn;
	bool restart;
	bool ptr_hint;		/* c->ptr came from another client */
	bool nf_at_read;	/* "not found" decided by the first READ */
	bool relocate;		/* hash: the slot changed keys: find it again */
	bool found;		/* the key was found by cider_locate() */
	u8 fp;			/* hash: the key's fingerprint */
	u64 paddr, laddr;	/* the key's data pointer (slot) and lock entry */
	u64 caddr;		/* the CAS spinlock's word (lock or INSERT lock) */
	u64 bucket[2];		/* hash: the candidate buckets */
	u64 bkt[2][8];		/* hash: their slots as read */
	u32 ci;			/* hash: candidate being checked */
	u32 lver;		/* hash: the slot's version when located */
	u32 cls;		/* hash: size class of the block being written */
	u8 *buf;		/* hash: room for one block of the largest class */
	u64 join_t;		/* when it joined a local WC batch */
	struct cider_lwc *lw;
	bool lw_member;
	struct cider_client_stats st;
	u32 read_retries;	/* SEARCHes redone by the grace rule */
	u32 late;		/* this op's READs that missed the rule */
	bool fenced;		/* announced on the reader fence (slab.h) */
	u64 fence_t;		/* when the fence READ was posted */
	u32 fences;		/* operations that had to announce */
};

/* core API */
void cider_cn_init(struct cider_cn *cn, u32 id, const struct cider_cfg *cfg,
		   struct cider_fabric *fab, struct cider_client *clients,
		   struct cider_lwc *lwc, u32 nr_lwc,
		   struct cider_slab_ent *ring, u32 ring_cap);
/* ring: ring_cap entries per size class (1 class for the array, 12 for hash) */
void cider_client_start(struct cider_client *c, u8 op, u64 key, u64 val, u32 vlen, u32 opid);
void cider_client_resume(struct cider_client *c);
void cider_client_timer(struct cider_client *c, u32 token);
void cider_cn_on_msg(struct cider_cn *cn, const struct cider_msg *m);
void cider_client_crash(struct cider_client *c);

static inline u64 cider_ptr_addr(const struct cider_cfg *cfg, u64 key)
{
	return cfg->index_off + key * 8;
}

static inline u64 cider_lock_addr(const struct cider_cfg *cfg, u64 key)
{
	return cfg->lock_off + key * 16;
}

/*
 * qnode ids fill a lock entry's tail (CIDER_OFF_BITS, 52): 12 bits CN,
 * 8 bits slot, 32 bits sequence; never 0.
 */
#define CIDER_QID_SEQ_BITS	32

static inline u32 cider_qid_cn(u64 id)
{
	return (u32)(id >> (CIDER_QID_SEQ_BITS + 8)) & 0xfff;
}

static inline u32 cider_qid_slot(u64 id)
{
	return (u32)(id >> CIDER_QID_SEQ_BITS) & 0xff;
}

#endif
