/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lock queue (lockqueue.c): a FIFO lock per data pointer whose
 * enqueue is one FAA, its waiters' entries in a bounded ring on the MN,
 * its qnodes owned by each CN's lock agent; and the CAS spinlock baseline.
 *
 * A lock's record on the MN (cfg->lock_rec bytes, lock table: store.c):
 *   word 0  header: bits 63..32 head (the ticket being served: every
 *           ticket below it is released), 31..20 reset generation, 19..0
 *           size (tickets issued and not released).  Enqueue adds 1 (the
 *           ticket is head + size), a release of k tickets adds
 *           (k << 32) - k, a reset CASes it to (head + size, gen + 1, 0).
 *           head is the top field, so its wrap-around falls off the word;
 *           size never exceeds the clients, so it never borrows or carries.
 *   word 1  the CAS spinlock's epoch (caslock mode only; word 0 is then
 *           the holder's id + 1)
 *   word 2+ the ring: cfg->lock_qlen 8-byte entries, ticket t at t mod Q:
 *           bits 63..33 (t + 1) mod 2^31 (which ticket wrote it), 32 a
 *           DELETE, 31..20 the pointer's version the waiter read, 19..8
 *           its CN, 7..0 its qnode slot.
 */
#ifndef _CIDER_CORE_LOCKQUEUE_H
#define _CIDER_CORE_LOCKQUEUE_H

#include "sm.h"
#include "platform.h"

struct cider_client;
struct cider_cn;
struct cider_msg;

#define CIDER_LQ_SIZE_BITS	20
#define CIDER_LQ_GEN_BITS	12
#define CIDER_LQ_SIZE_MASK	((1ULL << CIDER_LQ_SIZE_BITS) - 1)
#define CIDER_LQ_GEN_MASK	((1U << CIDER_LQ_GEN_BITS) - 1)
#define CIDER_LQ_HDR_ENQ	1ULL
#define CIDER_LQ_RING_OFF	16	/* the ring, from the record's start */
#define CIDER_LQ_MAX_QLEN	128	/* ring entries per lock, at most */
#define CIDER_LQ_MIN_QLEN	2

static inline u32 cider_lq_head(u64 h)
{
	return (u32)(h >> 32);
}

static inline u32 cider_lq_gen(u64 h)
{
	return (u32)(h >> CIDER_LQ_SIZE_BITS) & CIDER_LQ_GEN_MASK;
}

static inline u32 cider_lq_size(u64 h)
{
	return (u32)(h & CIDER_LQ_SIZE_MASK);
}

/* The FAA adding this releases @k tickets: head += k, size -= k. */
static inline u64 cider_lq_release_add(u32 k)
{
	return ((u64)k << 32) - k;
}

/* A ring entry: ticket @t's waiter, qnode @slot of CN @cn. */
static inline u64 cider_lq_entry(u32 t, bool del, u32 ver, u32 cn, u32 slot)
{
	return (u64)((t + 1) & 0x7fffffffU) << 33 | (u64)del << 32 |
	       (u64)(ver & 0xfff) << 20 | (u64)(cn & 0xfff) << 8 | (slot & 0xff);
}

static inline bool cider_lq_entry_for(u64 e, u32 t)
{
	return (u32)(e >> 33) == ((t + 1) & 0x7fffffffU);
}

static inline bool cider_lq_entry_del(u64 e)
{
	return (e >> 32) & 1;
}

static inline u32 cider_lq_entry_ver(u64 e)
{
	return (u32)(e >> 20) & 0xfff;
}

static inline u32 cider_lq_entry_cn(u64 e)
{
	return (u32)(e >> 8) & 0xfff;
}

static inline u32 cider_lq_entry_slot(u64 e)
{
	return (u32)e & 0xff;
}

/* A queue node: one per lock acquisition, owned by its CN's agent. */
enum cider_qstate { CIDER_QSTATES(CIDER_QSTATE_ENUM) };

struct cider_qnode {
	u64 id;			/* 0: free slot; else names CN, slot, sequence */
	u32 owner;		/* client index within the CN */
	u64 key;
	u64 laddr;		/* the lock record it queues on */
	u32 ticket;		/* its ticket on that lock */
	u32 gen;		/* the lock's reset generation at enqueue */
	u8 state;		/* enum cider_qstate */
	u8 result;
	bool enqueued;		/* its FAA returned: ticket and gen are set */
	bool exec_done;		/* coordinator: the executor reported */
	bool granted_waiting;	/* the lock came after a wait (contended) */
	u32 count;		/* executor: tickets to release; combined: batch */
	u32 coord_slot;		/* executor: the coordinator's qnode */
	u32 coord_cn;
	u32 coord_ticket;
	u64 ptr;		/* latest data pointer known */
	u32 writer;
};

#define CIDER_QNODES_PER_CN 256

/*
 * qnode ids: 12 bits CN, 8 bits slot, 32 bits sequence; never 0.  Only
 * the CN's agent and the logs see them; messages name a qnode by its
 * slot, lock and ticket (its ring entry has room for no more).
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

/* What a lock wait waits for (on c->qn, set by the CN's agent). */
enum cider_wait_cond {
	CIDER_WAIT_LOCK,	/* the qnode has a role: granted, executor, combined */
	CIDER_WAIT_EXEC_DONE,	/* coordinator: the executor reported */
	CIDER_WAIT_ROOM,	/* the ring has room for the entry (or the lock came) */
};

enum cider_wait_state { CIDER_WAIT_STATES(CIDER_SUB_STATE_ENUM) };

/*
 * Wait until the condition holds, polling the lock's header; ends
 * RESTART (and the qnode abandoned) if the lock was reset, or the
 * ticket was released by a batch whose result never came.
 */
struct cider_lock_wait {
	u8 state;		/* enum cider_wait_state */
	u8 cond;		/* enum cider_wait_cond */
	u32 seen_head;		/* the header's head as last read */
	u64 changed_at;		/* when it last changed */
	u64 passed_at;		/* when head first passed the ticket, 0: not yet */
};

enum cider_acquire_state { CIDER_ACQUIRE_STATES(CIDER_SUB_STATE_ENUM) };

/*
 * Enqueue on c->key's lock (one FAA, never retried) and wait until c->qn
 * has a role (GRANTED, EXECUTOR or COMBINED), or ends RESTART.
 */
struct cider_acquire {
	u8 state;		/* enum cider_acquire_state */
};

enum cider_release_state { CIDER_RELEASE_STATES(CIDER_SUB_STATE_ENUM) };

/* Release the tickets c->qn holds (its own, or its batch's). */
struct cider_release {
	u8 state;		/* enum cider_release_state */
	u32 first;		/* the first ticket released */
	u32 count;
};

void cider_wait_init(struct cider_client *c, u8 cond);
enum cider_step cider_wait_step(struct cider_client *c);
const char *cider_wait_state_name(u8 state);

void cider_acquire_init(struct cider_client *c);
enum cider_step cider_acquire_step(struct cider_client *c);
const char *cider_acquire_state_name(u8 state);

void cider_release_init(struct cider_client *c, u32 first, u32 count);
enum cider_step cider_release_step(struct cider_client *c);
const char *cider_release_state_name(u8 state);

const char *cider_qstate_name(u8 state);
void cider_qnode_owner_done(struct cider_qnode *q);
void cider_lq_send(struct cider_cn *cn, u8 type, u32 to_cn, u32 to_slot, u32 to_ticket,
		   const struct cider_qnode *q);
struct cider_client *cider_lockq_on_msg(struct cider_cn *cn, const struct cider_msg *m);

#endif
