/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lock queue (lockqueue.c): a distributed MCS lock per data pointer,
 * its qnodes owned by each CN's lock agent, and the CAS spinlock
 * baseline.
 */
#ifndef _CIDER_CORE_LOCKQUEUE_H
#define _CIDER_CORE_LOCKQUEUE_H

#include "sm.h"
#include "platform.h"

struct cider_client;
struct cider_cn;
struct cider_msg;

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
	u8 state;		/* enum cider_qstate */
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

/* What a lock wait waits for (on c->qn, set by the CN's agent). */
enum cider_wait_cond {
	CIDER_WAIT_LOCK,	/* the qnode has a role: granted, executor, combined */
	CIDER_WAIT_NEXT,	/* the successor's ENQ arrived */
	CIDER_WAIT_EXEC_DONE,	/* coordinator: the executor reported */
	CIDER_WAIT_PASSTHRU,	/* executor: the combined result came around */
};

enum cider_wait_state {
	CIDER_WAIT_BEGIN,
	CIDER_WAIT_CHECK,	/* the condition, else sleep a quarter lease */
	CIDER_WAIT_SLEEP,	/* sleeping: a message or the timer ends it */
	CIDER_WAIT_POLL,	/* READ of the lock entry posted */
	CIDER_WAIT_RESET,	/* CAS and FAA resetting a dead holder's lock posted */
};

/*
 * Wait until the condition holds, polling the lock entry; ends with
 * c->restart set (and the qnode abandoned) if the lock was reset.
 */
struct cider_lock_wait {
	u8 state;		/* enum cider_wait_state */
	u8 cond;		/* enum cider_wait_cond */
	u64 seen_epoch;		/* the lock's epoch as last read */
	u64 changed_at;		/* when it last changed */
};

enum cider_acquire_state {
	CIDER_ACQUIRE_BEGIN,
	CIDER_ACQUIRE_SWAP,	/* CAS the qnode into the tail */
	CIDER_ACQUIRE_CAS,	/* CAS of the tail and READ of the epoch posted */
	CIDER_ACQUIRE_BACKOFF,	/* sleeping after a failed CAS */
	CIDER_ACQUIRE_VRESET,	/* reset of a lock stuck on a dead DELETE posted */
	CIDER_ACQUIRE_WAIT,	/* child: cider_lock_wait for the lock */
};

/*
 * Enqueue on c->key's MCS lock and wait until c->qn has a role (GRANTED,
 * EXECUTOR or COMBINED) or c->restart is set.
 */
struct cider_acquire {
	u8 state;		/* enum cider_acquire_state */
	u32 attempt;		/* failed swaps, for the backoff */
	u64 cmp;		/* the tail as last seen */
	u64 lockw;		/* the lock word a version reset replaces */
};

enum cider_release_state {
	CIDER_RELEASE_BEGIN,
	CIDER_RELEASE_POSTED,	/* CAS of the tail (or handover) and FAA posted */
	CIDER_RELEASE_WAIT,	/* child: cider_lock_wait for the successor */
};

/* Release the MCS lock held by c->qn. */
struct cider_release {
	u8 state;		/* enum cider_release_state */
	u64 mine;		/* the tail word while c->qn is last */
};

enum cider_caslock_state {
	CIDER_CASLOCK_BEGIN,
	CIDER_CASLOCK_TRY,	/* CAS the lock word from 0 */
	CIDER_CASLOCK_CAS,	/* CAS and READ of the epoch posted */
	CIDER_CASLOCK_RESET,	/* reset of a holder past its lease posted */
	CIDER_CASLOCK_BACKOFF,	/* sleeping after a failed CAS */
	CIDER_CASLOCK_RELEASE,	/* release: CAS to 0 and FAA */
	CIDER_CASLOCK_UNLOCK,	/* release: CAS to 0 and FAA posted */
};

/* The CAS spinlock on c->caddr: acquire, or release. */
struct cider_caslock {
	u8 state;		/* enum cider_caslock_state */
	u32 attempt;
	u64 seen_epoch;
	u64 changed_at;
};

void cider_wait_init(struct cider_client *c, u8 cond);
enum cider_step cider_wait_step(struct cider_client *c);
const char *cider_wait_state_name(u8 state);

void cider_acquire_init(struct cider_client *c);
enum cider_step cider_acquire_step(struct cider_client *c);
const char *cider_acquire_state_name(u8 state);

void cider_release_init(struct cider_client *c);
enum cider_step cider_release_step(struct cider_client *c);
const char *cider_release_state_name(u8 state);

void cider_caslock_init(struct cider_client *c, bool release);
enum cider_step cider_caslock_step(struct cider_client *c);
const char *cider_caslock_state_name(u8 state);

const char *cider_qstate_name(u8 state);
void cider_qnode_owner_done(struct cider_qnode *q);
void cider_send(struct cider_cn *cn, u8 type, bool combined, u64 to, u64 from,
		const struct cider_qnode *q);
struct cider_client *cider_lockq_on_msg(struct cider_cn *cn, const struct cider_msg *m);

#endif
