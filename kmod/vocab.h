/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cider.ko's vocabulary: the lists of its state machines, from which
 * their enums, names and tracepoint symbols are made (as core/vocab.h,
 * whose rules hold here).
 */
#ifndef _CIDER_VOCAB_H
#define _CIDER_VOCAB_H

/*
 * A memory node's life (mn.h, enum cider_mn_state; the diagram in
 * Documentation/datapath.rst).
 */
#define CIDER_MN_STATES(X, X_LAST)					\
	X(ATTACHING, attaching)	/* connecting; not listed */		\
	X(LIVE, live)		/* accepting work (probe, then listed) */	\
	X(RECONNECTING, reconnecting) /* lost: recovering, then connecting again */ \
	X(DEAD, dead)		/* lost for good: every operation fails */	\
	X_LAST(STOPPED, stopped) /* channels torn down or going */

/* A channel's life (transport.h, enum cider_chan_state). */
#define CIDER_CHAN_STATES(X, X_LAST)					\
	X(CONNECTING, connecting) /* rdma_cm at work; nothing may be posted */ \
	X(LIVE, live)		/* established: accepting and posting work */	\
	X(STOPPED, stopped)	/* accepting nothing; posted work may be out */ \
	X_LAST(DRAINED, drained) /* drained and canceled: nothing outstanding */

/*
 * A KV slot's life (kvshard.h, enum cider_kslot_state): each state's
 * name and the states that may follow it, as S(NAME) bits (kslot.c
 * checks every step against them).
 */
#define CIDER_KSLOT_STATES(X)						\
	X(FREE, free, S(FILLING))	/* no operation; claimable */		\
	X(FILLING, filling, S(FREE) | S(RUNNING))	/* its bytes copied in */ \
	X(RUNNING, running, S(POSTED) | S(FREE) | S(DEAD))			\
		/* the core runs the operation, no verb of it out */		\
	X(POSTED, posted, S(RUNNING) | S(ORPHAN))	/* its batch is out */	\
	X(ORPHAN, orphan, S(DEAD))	/* ended by its bound, batch still out */ \
	X(DEAD, dead, S(FILLING))	/* its client dead: revived a lease after */

/* What the lists make (as core/vocab.h's). */
#define CIDER_KSLOT_ENUM(n, s, next)	CIDER_KSLOT_##n,
#define CIDER_KSLOT_NEXT(n, s, next)	next,
#define CIDER_MN_STATE_ENUM(n, s)	CIDER_MN_STATE_##n,
#define CIDER_CHAN_STATE_ENUM(n, s)	CIDER_CHAN_##n,
#define CIDER_RDMA_ENUM(n, s)		CIDER_RDMA_##n,

/* rawop.c: one verb, one number: the core's, the data path's, the ABI's. */
#define CIDER_VERB_CHECK(n, s)						\
	static_assert((int)CIDER_V_##n == (int)CIDER_RDMA_##n &&		\
		      CIDER_RAW_##n == CIDER_RDMA_##n + 1);

/* kslot.c: the errno of each of the core's results. */
#define CIDER_RES_ERRNO(n, s, e)	-(e),

/*
 * KV operations: the ABI's CIDER_KV_* (from 1, in this order: asserted
 * in kslot.c), the counters' names, and the core operation that runs
 * one.
 */
#define CIDER_KV_OPS(X)				\
	X(GET, get, CIDER_SEARCH)		\
	X(PUT, put, CIDER_PUT)			\
	X(INSERT, insert, CIDER_INSERT)		\
	X(UPDATE, update, CIDER_UPDATE)		\
	X(DELETE, delete, CIDER_DELETE)		\
	X(SCAN, scan, CIDER_SCAN)

#define CIDER_KV_OP_INDEX(n, s, op)	CIDER_KV_INDEX_##n,
#define CIDER_KV_OP_CHECK(n, s, op)	static_assert(CIDER_KV_##n == CIDER_KV_INDEX_##n);
#define CIDER_KV_CORE_OP(n, s, op)	op,

/* mn.c: the ABI's CIDER_STORE_* number index and mode as the superblock. */
#define CIDER_STORE_CHECK(n, s, v)	static_assert(CIDER_STORE_##n == (v));

/*
 * For cider_trace.h: each member a TRACE_DEFINE_ENUM(), so that tools
 * that read the events' format files decode the symbols too; and the
 * symbols of __print_symbolic(), the last without a comma.
 */
#define CIDER_MN_STATE_TRACE_ENUM(n, s)	TRACE_DEFINE_ENUM(CIDER_MN_STATE_##n);
#define CIDER_CHAN_TRACE_ENUM(n, s)	TRACE_DEFINE_ENUM(CIDER_CHAN_##n);
#define CIDER_T_TRACE_ENUM(n, s)	TRACE_DEFINE_ENUM(CIDER_T_##n);
#define CIDER_MN_SYM(n, s)		{ CIDER_MN_STATE_##n, #s },
#define CIDER_MN_SYM_LAST(n, s)		{ CIDER_MN_STATE_##n, #s }
#define CIDER_CHAN_SYM(n, s)		{ CIDER_CHAN_##n, #s },
#define CIDER_CHAN_SYM_LAST(n, s)	{ CIDER_CHAN_##n, #s }
#define CIDER_T_SYM(n, s)		{ CIDER_T_##n, #s },
#define CIDER_T_SYM_LAST(n, s)		{ CIDER_T_##n, #s }

#endif /* _CIDER_VOCAB_H */
