/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cider-sim: a deterministic discrete-event model of CNs, clients, one MN
 * and the network, running the real protocol core (kmod/core) through its
 * fabric interface.  Time is in picoseconds; one thread; ties in time are
 * broken by insertion order, so a seed gives the same run bit for bit.
 */
#ifndef CIDER_SIM_H
#define CIDER_SIM_H

#include <stdio.h>

#include "client.h"
#include "hashindex.h"
#include "workload.h"

#define PS 1ULL
#define NS 1000ULL
#define US (1000 * NS)
#define MS (1000 * US)
#define SIM_RING 16384		/* grace FIFO entries per CN (array) */
#define SIM_RING_HASH 2048	/* per CN and size class (hash) */

/* Every figure of the model; Documentation/simulator.rst gives sources. */
struct sim_params {
	double mn_mops;		/* MN NIC verb rate (SMART: 110 Mops, CX-6) */
	double atomic_cost;	/* NIC time of a CAS/FAA in 8-byte READs */
	double bw_gbps;		/* link bandwidth */
	u64 net_ps;		/* one-way CN <-> MN */
	u64 atomic_word_ps;	/* atomics on one 8-byte word serialize */
	u64 msg_ps;		/* one-way CN <-> CN */
	u64 msg_cpu_ps;		/* CN agent handling one message */
	u64 client_cpu_ps;	/* client work per verb batch */
	u64 jitter_ps;		/* extra message delay with --faults jitter */
	u64 lease_ps;		/* maximum lock hold time */
	u64 grace_ps;		/* KV block reuse grace period */
	u64 preempt_ps;		/* longest client pause with jitter */
	u64 bound_ps;		/* every operation must finish within this */
};

struct hmap {			/* u64 -> u64, open addressing */
	u64 *k, *v;
	u64 cap, used;
};

u64 *hmap_find(struct hmap *m, u64 key, bool create);
void hmap_free(struct hmap *m);

struct op_rec {
	u32 client, cn;
	u64 key;
	u8 op, res;
	bool pending;		/* its client crashed before the response */
	bool pess;
	u64 arg;		/* INSERT/UPDATE: the value (unique per op) */
	u64 got;		/* SEARCH: the value read */
	u64 inv, resp;		/* ps */
	u32 writer;		/* a write's installer (op id) */
};

struct chain_ev {		/* a successful CAS on a data pointer */
	u64 key;
	u64 addr;		/* the pointer's (slot's) address */
	u64 t;
	u64 word;		/* the new pointer */
	u32 op;			/* the op that installed it */
};

enum ev_kind { EV_ARRIVE, EV_EXEC, EV_DONE, EV_MSG, EV_TIMER, EV_WAKE, EV_START, EV_REVIVE };

struct event {
	u64 t, seq;
	u8 kind;
	u32 a;
	u64 b;
	struct cider_msg *msg;
};

struct sim {
	struct sim_params p;
	struct cider_cfg cfg;
	struct cider_workload wl;
	struct cider_zipf zipf;
	struct cider_latest latest;	/* workload d's keys */
	struct cider_zipf latest_zipf;	/* ...and its SEARCHes' reader state */
	u64 *rmw_key;		/* workload f, per client: key + 1 of its RMW's UPDATE to come */
	uint64_t *latest_seq;	/* workload d, per client: its INSERT's number */
	struct cider_rng rng, frng;
	const char *mode_name, *workload_name, *faults;
	double theta;
	u32 nr_cns, cpc, nr_clients;
	u64 nr_keys, ops_target, ops_issued, ops_done;
	struct cider_cn *cns;
	struct cider_client *clients;
	struct cider_lwc *lwc;
	struct cider_slab_ent *ring;	/* the CNs' reclamation FIFOs */
	struct cider_fabric fab;

	struct event *heap;
	u64 nheap, capheap, seq, now;

	/* the model */
	u64 nic_free;
	struct hmap mem, word_free;
	/*
	 * Outside the data area, how verbs touched each 8-byte word: WRITE,
	 * atomically (CAS, FAA, or an 8-byte READ the kernel posts as an FAA
	 * of 0), never both (a WRITE can interleave with an atomic on a
	 * real NIC: protocol.rst, the audit).
	 */
	struct hmap word_use;
	u64 *qp_ready, *batch_done;
	u64 *cn_nic_free;
	u32 *cur_op;
	u64 *msg_last;
	u64 preload_base, region_end;
	u64 verbs[4];
	bool jitter;
	/* --verbs-by-state: verbs posted, by the operation and its machines' states */
	bool by_state;
	struct state_verbs {
		char name[72];		/* "op state/sub-state" */
		u64 n[4];		/* by CIDER_V_* */
	} *sv;
	u32 nsv, capsv;

	/* what happened */
	struct op_rec *ops;
	u64 nops, capops;
	struct chain_ev *chain;
	u64 nchain, capchain;
	struct hmap holder;	/* lock address -> holder id (mutual exclusion) */
	struct hmap holder_client;
	struct hmap hold_since;
	u64 max_hold;		/* longest lock hold seen (ps) */
	u64 crash_at[2];
	u32 crashes;
	bool revive;		/* --revive: a crashed client comes back */
	bool ideal_cache;	/* --cache ideal: repeated SEARCHes on a CN are free */
	bool ideal_coherent;	/* --cache coherent: ...if no write of the key came between */
	struct hmap ideal_seen;	/* (cn, key) -> the key's changes when this CN read it, + 1 */
	struct hmap key_changes;	/* key -> changes installed (coherent) */
	u64 ideal_hits;
	u32 cache_entries;	/* per CN (cache.h) */
	u32 cache_ent_bytes;
	struct cider_cache_ent *cache_ent;
	u8 *cache_room;
	u8 *verbs_out;		/* per client: a batch of it is in flight */
	u32 *incarnation;	/* per client: revivals so far */
	u32 revived;
	u64 violations;
	u64 over_bound;		/* baselines: operations past bound_ps */
	char first_violation[512];
	FILE *history;
	bool quiet;
	bool trace;		/* --trace: machine states after each event */
	u64 bad_change;
	u64 resets;
	u64 mem_live, mem_peak, mem_claimed, mem_claimed_half;
	bool steady_memory;	/* check: claiming stops once reuse starts */
	u64 data_kb;		/* --data-kb: the MN's data area, 0: ample */
	u32 initial_credit, hotness;	/* Algorithm 1 parameters */
	u32 escalate;			/* failed CASes before an UPDATE queues */
	u64 fifo_checked;		/* ACQUIREs checked against the MN's head */
	u64 nr_locks;		/* lock entries: one per key or per slot */
	struct cider_sizes vsize;	/* hash: value sizes */
	u8 *bufs;		/* hash: one block buffer per client */
	u32 key_len;		/* hash: key bytes (8..1024): the id, then filler */
	u8 *opbufs;		/* per client: its op's key, value and SEARCH output */
	size_t opbuf_stride;
	u32 vmax;		/* the largest value */
	u32 buf_size, ring_cap, preload_stride;
	u64 buckets;		/* --buckets: 0, four slots per key */
	u64 t_last_issue;
	/*
	 * The stall limits (sim_run): a protocol livelock or deadlock must end
	 * the run with a diagnosis, not hang it.
	 */
	u64 max_model_ps;	/* --max-model-ms: model time for the whole run */
	u64 stall_events;	/* --stall-events: events with no op completing */
	u64 events, events_since_done, max_events_gap;
	bool stalled;
	/* hash: the preloaded block sim_mem_read() built last (key + 1; 0: none) */
	u64 pre_key;
	u8 pre_blk[2048];
	/* --scanners (scan.c) */
	u32 scanners;
	struct sim_scan *scan;	/* by scanner */
	u32 *del_live;		/* by key: DELETEs running */
	u64 *del_end;		/* by key: when the last one ended (~0: may still land) */
	u64 scan_pages, scan_keys, scans_full;
	u64 scan_held;		/* keys full scans had to return (present throughout) */
};

/* A SCAN page's key in s->ops: no key's history holds it. */
#define SIM_SCAN_KEY	(~0ULL)

void sim_init_model(struct sim *s);
void sim_run(struct sim *s);
void sim_violation(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sim_check(struct sim *s);
void sim_free_events(struct sim *s);
void sim_trace(void *priv, struct cider_client *c, u8 type, u64 key, u64 a, u64 b);
u64 sim_mem_read(struct sim *s, u64 addr);
u64 sim_word_off(const struct sim *s, u64 w);
u64 sim_word_bare(const struct sim *s, u64 w);	/* without the lease bits (cache.h) */
u64 sim_mem_read_u64(struct sim *s, u64 addr);	/* any alignment */
u64 sim_block_value_addr(const struct sim *s, u64 off);
void history_write(struct sim *s, const struct op_rec *o);
void sim_fill(u8 *out, u64 id, u32 len);
void sim_scan_setup(struct sim *s);
void sim_scan_free(struct sim *s);
bool sim_scan_start(struct sim *s, struct cider_client *c, struct op_rec *o);
bool sim_scan_done(struct sim *s, struct cider_client *c);
void sim_scan_note_delete(struct sim *s, const struct op_rec *o, bool start, bool pending);

#endif
