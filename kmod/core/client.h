/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A compute node (its lock agent's qnodes, its slab, its hot keys and
 * local write combining) and its clients, each running one operation as
 * a state machine (client.c) over the sub-protocols' machines.
 */
#ifndef _CIDER_CORE_CLIENT_H
#define _CIDER_CORE_CLIENT_H

#include "proto.h"
#include "alloc.h"
#include "cache.h"
#include "caslock.h"
#include "contention.h"
#include "fence.h"
#include "localwc.h"
#include "readcomb.h"
#include "locate.h"
#include "scan.h"
#include "lockqueue.h"
#include "writecomb.h"
#include "write.h"

/* The operation's machine (core/vocab.h: each state's name and child). */
enum cider_op_state { CIDER_OP_STATES(CIDER_OP_STATE_ENUM) CIDER_OP_NR_STATES };

struct cider_client_stats {
	u64 ops, updates, pessimistic, combined, cas_fail, resets;
	u64 self_grants;	/* lock found by polling the header, not by message */
	u64 ring_full;		/* enqueues that found the lock's ring full */
	u64 coords;		/* UPDATEs that waited, then read the queue to combine */
	u64 corrupt;		/* candidate blocks that failed their checks (skipped) */
	u64 read_combined;	/* SEARCHes answered by another's lookup (readcomb.c) */
	/* the CN cache (cache.c) */
	u64 cache_hits;		/* SEARCHes answered under a right, no verb */
	u64 cache_refreshes;	/* answered after READing the pointer only */
	u64 cache_misses;	/* SEARCHes that READ the block (with the cache on) */
	u64 cache_fills;	/* rights taken on a value kept */
	u64 cache_marks;	/* leases started: the LEASED bit CASed in */
	u64 lease_revokes;	/* writes that CASed the WAITING bit in */
	u64 lease_waits;	/* writes that waited for a lease to end */
	u64 lease_expired;	/* of those, ended by the clock, not by answers */
};

struct cider_client {
	u32 id;			/* global: cn * clients_per_cn + index */
	u32 index;
	struct cider_cn *cn;
	bool dead;
	bool busy;		/* an operation is under way */
	/* the operation, on the caller's bytes (struct cider_kv_args) */
	u8 op;
	u64 key;		/* array: the index; hash: cider_key_id() */
	const u8 *kbytes;	/* the key */
	u32 klen;
	const u8 *val;		/* INSERT/UPDATE: the value to write */
	u32 vlen;
	const u8 *wval;		/* the value actually written (local WC) */
	u32 wvlen;
	u32 wop;		/* and the operation it belongs to */
	u32 opid;		/* caller's id for this operation */
	u8 *out;		/* SEARCH: where the value goes, */
	u32 out_len;		/* up to this many bytes */
	u8 res;
	u32 got_len;		/* SEARCH: the value's length; SCAN: bytes of records */
	u64 got;		/* SEARCH: its first 8 bytes (little-endian); SCAN: next position */
	u64 scan_end;		/* SCAN: the page's last position + 1 */
	bool exposed;		/* its effect may be visible: see cider_client_abort() */
	u32 writer;		/* a write's installer (itself unless combined) */
	bool pess;		/* this UPDATE went the pessimistic way */
	u32 batch;		/* WC batch size as this client saw it */
	/* what the sub-protocols found out, for the whole operation */
	u64 ptr;		/* the data pointer as last known */
	u64 paddr, laddr;	/* the key's data pointer (slot) and lock entry */
	u64 caddr;		/* the CAS spinlock's word (lock or INSERT lock) */
	struct {		/* the slot whose lock it holds while it looks again */
		u64 paddr, laddr, ptr;
	} held;
	u64 t0;			/* when the key was located */
	u8 outcome;		/* enum cider_outcome: how the last child ended */
	/*
	 * enum cider_op_state: where the operation goes once the lock it
	 * holds is released (AGAIN: start over; DONE: on to its end).
	 */
	u8 after;
	bool ptr_hint;		/* c->ptr came from another client */
	/*
	 * "Not found" decided by the first READ, without a lock: that READ's
	 * time (t0), else ~0 (localwc.c: a later member cannot take it).
	 */
	u64 absent_since;
	u8 fp;			/* hash: the key's fingerprint */
	u32 lver;		/* hash: the slot's version when located */
	u32 cls;		/* hash: size class of the block being written */
	/* the lock queue it waits in or holds */
	struct cider_qnode *qn;
	u64 epoch;		/* the lock's header as last read */
	u64 lq_ring[2 + CIDER_LQ_MAX_QLEN];	/* coordinator: the lock record read */
	/* the machines: the operation's, its active child's, and that one's */
	u8 state;		/* enum cider_op_state */
	union {
		struct cider_locate locate;
		struct cider_scan scan;
		struct cider_fence fence;
		struct cider_write write;
		struct cider_insert insert;
		struct cider_caslock caslock;
		struct cider_acquire acquire;
		struct cider_release release;
		struct cider_coord coord;
		u64 mark_t;	/* CACHE_MARK: when the lease's CAS was posted */
	} sub;
	union {
		struct cider_alloc alloc;
		struct cider_lock_wait wait;
	} leaf;
	/* scheduling: what the last step asked the fabric for */
	bool parked;
	u32 token;
	bool timer_fired;
	bool sleep_timed;	/* parked with a timer of sleep_ns */
	u64 sleep_ns;
	struct cider_verb v[CIDER_MAX_VERBS];
	unsigned int nv;
	u8 *buf;		/* hash: room for one block of the largest class */
	u32 buf_len;		/* bytes at buf: no READ or block is larger */
	u64 join_t;		/* when it joined a local WC batch or a read's leader */
	struct cider_lwc *lw;
	bool lw_member;
	/* read combining (readcomb.c) */
	bool rc_leading;	/* its SEARCH's lookup serves others too */
	u64 rc_members;		/* leading: who waits for it (client index bits) */
	s32 rc_of;		/* waiting: for which client's lookup, -1: none */
	u32 inval_seq;		/* its last INVALs (cache.h): older answers are stale */
	/*
	 * When this attempt first waited for a lease (0: not yet): kept
	 * across a holder's relocations, so that its hold stays bounded.
	 */
	u64 lease_since;
	struct cider_client_stats st;
	u32 read_retries;	/* SEARCHes redone by the grace rule */
	u32 late;		/* this op's READs that missed the rule */
	bool fenced;		/* announced on the reader fence (slab.h) */
	u32 fences;		/* operations that had to announce */
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
	struct cider_cache cache;	/* hot keys' values under read leases */
	struct cider_lwc *lwc;
	u32 nr_lwc;
	struct cider_backoff backoff;
	bool dead;
	u64 msgs_dropped;
};

/*
 * Where a client is, by name: the operation's state, its active child's
 * and that child's child ("" where none is active), e.g. "acquire",
 * "acquire:wait", "wait:sleep".
 */
const char *cider_client_state_name(const struct cider_client *c);
const char *cider_client_sub_state_name(const struct cider_client *c);
const char *cider_client_leaf_state_name(const struct cider_client *c);

#endif
