/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The CIDER protocol core's interface with its fabric: the configuration,
 * verbs, messages between CN lock agents, the fabric's operations and the
 * core's entry points.  Compute-node clients run KV operations on the
 * pointer array or the hash index under one of four synchronization
 * modes (client.h: the client and CN; sm.h: how their state machines run).
 *
 * The core never blocks: an operation asks the fabric to post a batch of
 * verbs, to send a message to another CN's lock agent, or to wake it
 * after a delay, and returns.  The fabric calls cider_client_resume() when
 * the batch completes, cider_client_timer() when the delay passes; a
 * message arrives through cider_cn_on_msg().  The kernel fabric maps this
 * onto channels; the simulator's fabric is a model.
 */
#ifndef _CIDER_CORE_PROTO_H
#define _CIDER_CORE_PROTO_H

#include "backoff.h"
#include "kv.h"
#include "layout.h"
#include "vocab.h"
#include "slab.h"

/* The superblock's lists (vocab.h), numbered from 0. */
enum cider_mode { CIDER_SB_MODES(CIDER_MODE_ENUM) };
enum cider_index { CIDER_SB_INDEXES(CIDER_INDEX_ENUM) };

enum cider_verb_op { CIDER_VERBS(CIDER_V_ENUM) };

struct cider_verb {
	u8 op;
	/*
	 * READ: as a READ, never as an FAA of 0 (read_atomic): the word is
	 * one others WRITE, which a late FAA's write-back could undo.
	 */
	bool plain;
	u32 len;		/* READ/WRITE: bytes (<= 16); atomics: 8 */
	u64 addr;		/* offset in the MN region */
	u64 arg0;		/* CAS: compare; FAA: add */
	u64 arg1;		/* CAS: swap */
	u64 data[8];		/* WRITE: in (16 bytes); READ: out (<= 64) */
	void *buf;		/* when set: @len bytes in or out here instead */
	u64 old;		/* atomics: out */
	int status;		/* set by the fabric: 0, or -errno if it failed */
};

#define CIDER_MAX_VERBS 4

/* Messages between CN lock agents (the lock queue and global WC, §4.2.1). */
enum cider_msg_type {
	CIDER_MSG_HANDOVER,	/* the lock passes on, in ticket order */
	CIDER_MSG_EXEC,		/* coordinator -> executor: run the batch */
	CIDER_MSG_EXEC_DONE,	/* executor -> coordinator: written, lock released */
	CIDER_MSG_RESULT,	/* coordinator -> participant: the batch's result */
	CIDER_MSG_INVAL,	/* writer -> every CN: drop your rights on a key (cache.h) */
	CIDER_MSG_INVAL_ACK,	/* and the CN's answer: none here any more */
	CIDER_MSG_NR
};

/*
 * A message names its qnode by slot, lock and ticket: tickets never repeat
 * on a lock (resets skip them), so a message to a qnode that has moved on
 * is recognised and dropped.
 */
struct cider_msg {
	u8 type;
	u8 result;		/* EXEC_DONE, RESULT: enum cider_res of the batch */
	u32 to_slot;
	u32 ticket;		/* the addressee's ticket */
	u64 laddr;		/* the lock */
	u32 from_cn, from_slot, from_ticket;
	/*
	 * EXEC: tickets the batch releases; RESULT: its size; INVAL: the
	 * fabric's own (cider.ko: which of a CN's shards serves the key)
	 */
	u32 count;
	u64 ptr;		/* the data pointer as the sender left it */
	u32 writer;		/* the operation whose value was installed */
};

/*
 * Observations for checkers (mutual exclusion, FIFO order), on a lock:
 *   ACQUIRE  a: the holder (qnode id, or the CAS lock's word); b: on the
 *            lock queue CIDER_T_QUEUE | gen << 32 | the ticket it holds
 *            the lock with (the batch's first for an executor), else 0
 *   RELEASE  a: the holder; b: on the lock queue CIDER_T_QUEUE |
 *            count << 32 | first ticket released, or 0 (a lock lent to an
 *            executor, the CAS lock)
 *   RESET    a: the word replaced; b: why
 */
enum cider_trace_type { CIDER_TRACE_TYPES(CIDER_TRACE_TYPE_ENUM, CIDER_TRACE_TYPE_ENUM) };

#define CIDER_T_QUEUE	0x8000000000000000ULL	/* b is a lock queue's */

struct cider_cfg {
	u8 mode;		/* enum cider_mode */
	u8 index;		/* enum cider_index */
	u64 nr_buckets;		/* hash: buckets of 8 slots */
	u64 bucket_off;		/* hash: the buckets (index_off + directory) */
	u64 ilock_off;		/* hash: INSERT locks, one per bucket */
	bool local_wc;
	bool read_comb;		/* SEARCHes of a key on a CN share one lookup (readcomb.c) */
	bool cache;		/* CNs take read leases on hot keys (cache.h) */
	u64 cache_lease_ns;	/* how long a read lease lasts */
	u64 cache_margin_ns;	/* what writers wait beyond it: the clocks' drift */
	u64 cache_stable_ns;	/* a word unchanged this long before a lease */
	u32 cache_hot;		/* SEARCHes finding the same word before a lease */
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
	u64 data_size_limit;	/* bytes of the data area */
	u64 lease_ns;		/* maximum lock hold time */
	u64 grace_ns;		/* block reuse grace period (slab.h) */
	u64 backoff_t0_ns;
	u32 initial_credit;	/* Algorithm 1: 36 */
	u32 hotness;		/* Algorithm 1: 2 */
	u32 aimd;		/* Algorithm 1: 2 */
	u32 escalate;		/* failed CASes before an UPDATE queues; 0: never */
	u32 lock_qlen;		/* ring entries per lock (lockqueue.h) */
	u32 lock_rec;		/* bytes per lock record: 16 + 8 * lock_qlen */
};

struct cider_client;
struct cider_cn;
struct cider_lwc;

struct cider_fabric_ops {
	void (*post)(void *fab, struct cider_client *c, struct cider_verb *v, unsigned int n);
	void (*send)(void *fab, struct cider_cn *from, u32 to_cn, const struct cider_msg *m);
	/*
	 * Send @m to every other CN that may hold a right on the key
	 * (cache.h); returns how many it went to, each of which answers.
	 * NULL: the fabric cannot, and writers wait rights out by the clock.
	 */
	u32 (*broadcast)(void *fab, struct cider_cn *from, const struct cider_msg *m);
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

/* The core's interface to its fabric (struct cider_client: client.h). */
void cider_cn_init(struct cider_cn *cn, u32 id, const struct cider_cfg *cfg,
		   struct cider_fabric *fab, struct cider_client *clients,
		   struct cider_lwc *lwc, u32 nr_lwc,
		   struct cider_slab_ent *ring, u32 ring_cap);
/* ring: ring_cap entries per size class (1 class for the array, 12 for hash) */

/*
 * One KV operation as its caller hands it to a client.  The bytes stay
 * the caller's and must stay valid and unchanged until the operation
 * ends: the core reads the key and value while it runs (local write
 * combining may write another client's value) and writes a SEARCH's
 * value to @out.
 *   hash index: key 1..CIDER_MAX_KEY bytes, value 0..CIDER_MAX_VALUE;
 *   pointer array: key and value 8 bytes, the key a little-endian index
 *   below nr_keys.
 * Anything else ends the operation at once with CIDER_RES_INVALID.
 */
struct cider_kv_args {
	u8 op;			/* enum cider_op */
	const void *key;
	u32 key_len;
	const void *value;	/* INSERT, UPDATE */
	u32 value_len;
	void *out;		/* SEARCH: the value goes here, */
	u32 out_len;		/* its first out_len bytes; got_len says all */
	u32 opid;		/* unique among running operations: block incarnation */
	/*
	 * SCAN: key is the prefix (key_len 0: none; an array store takes
	 * none), out the records' buffer (at least CIDER_SCAN_MIN_OUT), and
	 * the page visits positions [cursor, cursor + count) of
	 * cider_scan_positions(); got then says where the next page starts.
	 */
	u64 cursor;
	u32 count;
};

void cider_client_start(struct cider_client *c, const struct cider_kv_args *a);
/*
 * The fabric finished the verbs posted (each with its status): go on.  A
 * failed verb ends the operation, CIDER_RES_FAILED or CIDER_RES_UNKNOWN,
 * and the client is dead (the fabric's connection broke).
 */
void cider_client_resume(struct cider_client *c);
void cider_client_timer(struct cider_client *c, u32 token);
void cider_cn_on_msg(struct cider_cn *cn, const struct cider_msg *m);
/* The client stops dead, as a crash would stop it: nothing more happens. */
void cider_client_crash(struct cider_client *c);
/*
 * The fabric gives up on a running operation that will not be resumed
 * (its node is lost): the client dies and its operation ends through
 * ->done with CIDER_RES_UNKNOWN if its effect may be visible, else
 * CIDER_RES_FAILED.
 */
void cider_client_abort(struct cider_client *c);
/*
 * A dead client comes back as a new incarnation, once the fabric knows
 * that nothing of its last operation can still act: none of its verbs is
 * out, and a lease has passed since it died (any lock it held has been
 * recovered by the others, or can be by the next one who waits for it).
 * Its queue node, if any, is given up (messages for it are dropped, as
 * for an abandoned one).  Returns false while a local write-combining
 * batch still names it (its combiner has not settled it yet): ask again
 * later.
 */
bool cider_client_revive(struct cider_client *c);

static inline u64 cider_ptr_addr(const struct cider_cfg *cfg, u64 key)
{
	return cfg->index_off + key * 8;
}

/* The lock record of index word (key, or hash slot) @i. */
static inline u64 cider_lock_addr(const struct cider_cfg *cfg, u64 i)
{
	return cfg->lock_off + i * cfg->lock_rec;
}

#endif
