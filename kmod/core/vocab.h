/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The core's vocabulary: one list per concept, from which its enums and
 * names (and cider.ko's tracepoint symbols) are made, so that no member
 * is named twice.  A list calls X(NAME, name, ...) for each member, in
 * order; one that cider_trace.h prints ends with X_LAST(), for the
 * comma-separated symbols of __print_symbolic().  checkpatch takes such
 * lists for complex macros: the Makefile waives that check, and only it,
 * for this file and kmod/vocab.h.
 */
#ifndef _CIDER_CORE_VOCAB_H
#define _CIDER_CORE_VOCAB_H

/*
 * cider_mn_sb.index and .mode (layout.h): the number in the superblock
 * (the ABI's CIDER_STORE_* too, asserted in mn.c) and the name cider-memd
 * and the tools use (store.c); the core's enum cider_index and enum
 * cider_mode (proto.h) are the number - 1.  0 is "not a KV store", so a
 * zeroed word is refused.
 */
#define CIDER_SB_INDEXES(X)						\
	X(ARRAY, array, 1)	/* the paper's pointer array, u64 keys */	\
	X(HASH, hash, 2)	/* RACE-style hash index (hashindex.h) */

#define CIDER_SB_MODES(X)						\
	X(OSYNC, osync, 1)	/* out-of-place write + CAS, retries */	\
	X(CASLOCK, caslock, 2)	/* a CAS spinlock per key */		\
	X(MCS, mcs, 3)		/* a distributed MCS lock per key */	\
	X(CIDER, cider, 4)	/* contention-aware, write combining */

/*
 * One-sided verbs, by the name their counters bear: the core's enum
 * cider_verb_op (proto.h), the data path's enum cider_rdma_op
 * (transport.h) and the ABI's CIDER_RAW_* (the index + 1), asserted
 * equal in rawop.c.
 */
#define CIDER_VERBS(X)	\
	X(READ, read)	\
	X(WRITE, write)	\
	X(CAS, cas)	\
	X(FAA, faa)

/*
 * An operation of the core (kv.h, enum cider_op), by the name the
 * simulator's history and reports give it.  PUT is UPDATE, or INSERT
 * when the key is absent, in one operation (client.c).
 */
#define CIDER_OPS(X)	\
	X(SEARCH, search)	\
	X(INSERT, insert)	\
	X(UPDATE, update)	\
	X(DELETE, delete)	\
	X(PUT, put)		\
	X(SCAN, scan)	/* keys of a run of index positions (scan.c) */

/*
 * How an operation of the core ends (kv.h, enum cider_res; invalid
 * operations are results, not errors, paper §2.2): its name, which the
 * KV counters bear too (kvstore.c), and the errno cider.ko answers with
 * (kslot.c).
 */
#define CIDER_RESULTS(X)						\
	X(NONE, none, 0)		/* not finished */			\
	X(OK, ok, 0)							\
	X(NOTFOUND, notfound, ENOENT)	/* SEARCH, UPDATE or DELETE, absent */	\
	X(EXISTS, exists, EEXIST)	/* INSERT of a present key */		\
	X(NOSPC, nospc, ENOSPC)		/* the MN has no room for the block */	\
	X(UNKNOWN, unknown, ECOMM)	/* the combiner died mid-way */	\
	X(FAILED, failed, ENOTCONN)	/* a verb failed before any effect */	\
	X(INVALID, invalid, EINVAL)	/* the arguments do not fit the index */

/* A lock event the core reports (proto.h, enum cider_trace_type). */
#define CIDER_TRACE_TYPES(X, X_LAST)	\
	X(ACQUIRE, acquire)		\
	X(RELEASE, release)		\
	X_LAST(RESET, reset)

/*
 * A client's operation machine (client.h, enum cider_op_state; client.c
 * dispatches on the order): each state's name and the child machine it
 * runs (enum cider_child, client.c).
 */
#define CIDER_OP_STATES(X)\
	X(AGAIN, again, NONE) /* (re)start: join a local WC batch or go on */ \
	X(LWC_WAIT, lwc_wait, NONE) /* parked as a member of a local WC batch */ \
	X(RC_WAIT, rc_wait, NONE) /* parked: a SEARCH waiting for another's lookup */ \
	X(FENCE_ENTER, fence_enter, FENCE) /* child: cider_fence, announce */ \
	X(LOCATE, locate, LOCATE) /* child: cider_locate */ \
	X(FENCE_LEAVE, fence_leave, FENCE) /* child: cider_fence, leave before writing */ \
	X(SEARCH_READ, search_read, NONE) /* array SEARCH: READ of the block posted */ \
	X(CACHE_MARK, cache_mark, NONE) /* SEARCH: CAS of a hot key's lease bit posted */ \
	X(INSERT, insert, INSERT) /* array INSERT, child: cider_insert */ \
	X(ILOCK, ilock, CASLOCK) /* hash INSERT, child: cider_caslock on its INSERT lock */ \
	X(ILOOP, iloop, NONE) /* hash INSERT under the lock: locate again */ \
	X(IFENCE, ifence, FENCE) /* child: cider_fence, announce */ \
	X(ILOCATE, ilocate, LOCATE) /* child: cider_locate */ \
	X(IINSERT, iinsert, INSERT) /* child: cider_insert */ \
	X(IUNLOCK, iunlock, CASLOCK) /* child: cider_caslock, release */ \
	X(OPTIMISTIC, optimistic, WRITE) /* child: cider_write without a lock */ \
	X(CASLOCK, caslock, CASLOCK) /* caslock, child: cider_caslock */ \
	X(CASLOCK_WRITE, caslock_write, WRITE) /* child: cider_write under it */ \
	X(CASUNLOCK, casunlock, CASLOCK) /* child: cider_caslock, release */ \
	X(ACQUIRE, acquire, ACQUIRE) /* child: cider_acquire, the MCS lock */ \
	X(RESTART, restart, NONE) /* sleeping before starting over */ \
	X(EXEC_WRITE, exec_write, WRITE) /* executor, child: cider_write for the batch */ \
	X(EXEC_RELEASE, exec_release, RELEASE) /* executor, child: cider_release of the batch */ \
	X(COORD, coord, COORD) /* coordinator, child: cider_coord */ \
	X(HOLD_WRITE, hold_write, WRITE) /* holder, child: cider_write */ \
	X(HOLD_LOCATE, hold_locate, LOCATE) /* holder, child: cider_locate (the slot changed) */ \
	X(HOLD_RELEASE, hold_release, RELEASE) /* holder, child: cider_release */ \
	X(SCAN_FENCE, scan_fence, FENCE) /* SCAN, child: cider_fence, announce */ \
	X(SCAN, scan, SCAN) /* SCAN, child: cider_scan, a page of keys */ \
	X(DONE, done, NONE) /* the result is known: leave the fence */ \
	X(DONE_FENCE, done_fence, FENCE) /* child: cider_fence, leave */

/*
 * The sub-machines' states (sm.h): X(MACHINE, machine, STATE, state) for
 * CIDER_<MACHINE>_<STATE> of enum cider_<machine>_state, named
 * "machine:state" in the debugfs listing and the kernel's slot reports.
 * A state that waits says for what.
 */
#define CIDER_ALLOC_STATES(X)	\
	X(ALLOC, alloc, BEGIN, begin) \
	X(ALLOC, alloc, FENCE, fence) /* READ of the reader fence posted */ \
	X(ALLOC, alloc, CARVE, carve) /* take a block from the slab */ \
	X(ALLOC, alloc, CHUNK, chunk) /* FAA on the allocation cursor posted */

#define CIDER_FENCE_STATES(X)	\
	X(FENCE, fence, BEGIN, begin) \
	X(FENCE, fence, FAA, faa) /* FAA on the reader fence posted */

#define CIDER_LOCATE_STATES(X)	\
	X(LOCATE, locate, BEGIN, begin) \
	X(LOCATE, locate, POINTER, pointer) /* array: READ of the data pointer posted */ \
	X(LOCATE, locate, BUCKETS, buckets) /* hash: READ of both buckets posted */ \
	X(LOCATE, locate, SCAN, scan) /* hash: find the next candidate slot */ \
	X(LOCATE, locate, BLOCK, block) /* hash: READ of a candidate's block posted */

#define CIDER_SCAN_STATES(X)	\
	X(SCAN, scan, BEGIN, begin) /* READ the next group of positions */ \
	X(SCAN, scan, INDEX, index) /* READ of the group's words posted */ \
	X(SCAN, scan, PICK, pick) /* the next occupied positions */ \
	X(SCAN, scan, BLOCKS, blocks) /* READs of their blocks posted */

#define CIDER_WAIT_STATES(X)	\
	X(WAIT, wait, BEGIN, begin) \
	X(WAIT, wait, CHECK, check) /* the condition, else sleep a quarter lease */ \
	X(WAIT, wait, SLEEP, sleep) /* sleeping: a message or the timer ends it */ \
	X(WAIT, wait, POLL, poll) /* READ of the header posted */ \
	X(WAIT, wait, RESET, reset) /* CAS resetting a dead holder's lock posted */

#define CIDER_ACQUIRE_STATES(X)	\
	X(ACQUIRE, acquire, BEGIN, begin) \
	X(ACQUIRE, acquire, FAA, faa) /* FAA of the header posted */ \
	X(ACQUIRE, acquire, FULL, full) /* child: cider_lock_wait for room in the ring */ \
	X(ACQUIRE, acquire, ENTRY, entry) /* WRITE of the entry and READ of the header posted */ \
	X(ACQUIRE, acquire, WAIT, wait) /* child: cider_lock_wait for the lock */

#define CIDER_RELEASE_STATES(X)	\
	X(RELEASE, release, BEGIN, begin) \
	X(RELEASE, release, POSTED, posted) /* FAA of the header, READ of the next entry */

#define CIDER_CASLOCK_STATES(X)	\
	X(CASLOCK, caslock, BEGIN, begin) \
	X(CASLOCK, caslock, TRY, try) /* CAS the lock word from 0 */ \
	X(CASLOCK, caslock, CAS, cas) /* CAS and READ of the epoch posted */ \
	X(CASLOCK, caslock, RESET, reset) /* reset of a holder past its lease posted */ \
	X(CASLOCK, caslock, BACKOFF, backoff) /* sleeping after a failed CAS */ \
	X(CASLOCK, caslock, RELEASE, release) /* release: CAS to 0 and FAA */ \
	X(CASLOCK, caslock, UNLOCK, unlock) /* release: CAS to 0 and FAA posted */

#define CIDER_WRITE_STATES(X)	\
	X(WRITE, write, BEGIN, begin) \
	X(WRITE, write, ALLOC, alloc) /* child: cider_alloc */ \
	X(WRITE, write, CHECK, check) /* decide from c->ptr: CAS, or stop */ \
	X(WRITE, write, HINT, hint) /* READ of a pointer the queue only hinted posted */ \
	X(WRITE, write, CAS, cas) /* (WRITE and) CAS of the data pointer posted */ \
	X(WRITE, write, REVOKE, revoke) /* CAS of the WAITING bit into a leased word posted */ \
	X(WRITE, write, LEASE, lease) /* sleeping until the readers' leases ended */ \
	X(WRITE, write, BACKOFF, backoff) /* sleeping after a failed CAS */

#define CIDER_INSERT_STATES(X)	\
	X(INSERT, insert, BEGIN, begin) \
	X(INSERT, insert, ALLOC, alloc) /* child: cider_alloc */ \
	X(INSERT, insert, CAS, cas) /* (WRITE and) CAS of the empty pointer posted */

#define CIDER_COORD_STATES(X)	\
	X(COORD, coord, BEGIN, begin) \
	X(COORD, coord, READ, read) /* READ of the lock record and the data pointer posted */ \
	X(COORD, coord, WAIT, wait) /* child: cider_lock_wait for the executor's report */

/* A lock queue node's state (lockqueue.h, enum cider_qstate). */
#define CIDER_QSTATES(X)						\
	X(FREE, free)							\
	X(WAITING, waiting)	/* enqueued, lock not here yet */	\
	X(GRANTED, granted)	/* holds the lock in ticket order */	\
	X(EXECUTOR, executor)	/* holds it for a coordinator's batch */	\
	X(COMBINED, combined)	/* its write was combined; result known */	\
	X(ABANDONED, abandoned)	/* given up after a lock reset */

/*
 * What the lists make, for their users to apply (defined here, where the
 * waiver covers them): each member's name, and the enums.
 */
#define CIDER_VOCAB_NAME(n, s, ...)	#s,
#define CIDER_SB_INDEX_ENUM(n, s, v)	CIDER_SB_INDEX_##n = (v),
#define CIDER_SB_MODE_ENUM(n, s, v)	CIDER_SB_MODE_##n = (v),
#define CIDER_INDEX_ENUM(n, s, v)	CIDER_INDEX_##n = (v) - 1,
#define CIDER_MODE_ENUM(n, s, v)	CIDER_MODE_##n = (v) - 1,
#define CIDER_TRACE_TYPE_ENUM(n, s)	CIDER_T_##n,
#define CIDER_V_ENUM(n, s)		CIDER_V_##n,
#define CIDER_RES_ENUM(n, s, e)		CIDER_RES_##n,
#define CIDER_CORE_OP_ENUM(n, s)	CIDER_##n,
#define CIDER_OP_STATE_ENUM(n, s, child)	CIDER_OP_##n,
#define CIDER_SUB_STATE_ENUM(M, m, n, s)	CIDER_##M##_##n,
#define CIDER_SUB_STATE_NAME(M, m, n, s)	#m ":" #s,
#define CIDER_QSTATE_ENUM(n, s)		CIDER_Q_##n,

#endif /* _CIDER_CORE_VOCAB_H */
