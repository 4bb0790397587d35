/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * YCSB-style workloads: key choice (uniform or Zipfian, Gray et al.'s
 * generator as YCSB uses it) and operation mix.  Shared by cider-sim and
 * cider-bench so both draw the same keys from the same seed.
 */
#ifndef LIBCIDER_WORKLOAD_H
#define LIBCIDER_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

struct cider_rng {
	uint64_t s;
};

/* splitmix64: small, fast, and the same sequence everywhere. */
static inline uint64_t cider_rng_next(struct cider_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double cider_rng_unit(struct cider_rng *r)
{
	return (double)(cider_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

struct cider_zipf {
	uint64_t n;
	double theta;		/* 0: uniform */
	double alpha, zetan, eta, half_pow;
};

/* Keys 0..n-1 with Zipf parameter theta in [0, 1); 0 on success. */
int cider_zipf_init(struct cider_zipf *z, uint64_t n, double theta);
/* The same distribution over n items now, n not less than before (YCSB's growing Zipfian). */
void cider_zipf_grow(struct cider_zipf *z, uint64_t n);
/* A rank, 0..n-1, 0 the most likely (uniform when theta is 0). */
uint64_t cider_zipf_rank(const struct cider_zipf *z, struct cider_rng *r);
/*
 * The next key.  Ranks come from the Gray et al. generator; rank r maps to
 * key FNV-1a(r) mod n so that hot keys are spread over the key space (over
 * n itself, not YCSB's 10^10 items, which would flatten the skew).
 */
uint64_t cider_zipf_next(const struct cider_zipf *z, struct cider_rng *r);

enum cider_wl_op {
	CIDER_WL_SEARCH, CIDER_WL_INSERT, CIDER_WL_UPDATE, CIDER_WL_DELETE, CIDER_WL_PUT,
	CIDER_WL_RMW,		/* a SEARCH, then an UPDATE of the same key */
};

struct cider_workload {
	char name[8];
	unsigned int search, update, insert, delete_;	/* percent */
	bool preload_all;	/* every key present at start */
	unsigned int put;	/* percent, drawn after insert */
	unsigned int rmw;	/* percent, drawn after put (YCSB F's read-modify-write) */
	bool latest;		/* keys as YCSB D's: struct cider_latest */
};

/*
 * "a", "b", "c", "wo" (the paper's Table 1 and YCSB), "idu", "pd", "d"
 * (YCSB D: 95 % SEARCH of the latest keys, 5 % INSERT of new ones) or
 * "f" (YCSB F: 50 % SEARCH, 50 % read-modify-write).
 */
int cider_workload_get(const char *name, struct cider_workload *w);
enum cider_wl_op cider_workload_op(const struct cider_workload *w, struct cider_rng *r);
/* Is @key present before the run (idu, pd and d preload every other key)? */
bool cider_workload_preloaded(const struct cider_workload *w, uint64_t key);

/*
 * YCSB's "latest" keys (workload D).  INSERTs take the keys that were
 * absent, one after the other in a fixed order; a SEARCH takes the r-th
 * most recently inserted key, r drawn from a Zipfian (or uniform)
 * distribution over the keys inserted so far, the preloaded ones counting
 * as inserted before the run.  The order: the preloaded keys, then the
 * others, each in key order.  As YCSB's acknowledged counter, "inserted"
 * means ended: INSERTs 0..k-1 all ended (cider_latest_done()), so that a
 * SEARCH does not look for a key whose INSERT is still on its way.  Once
 * every key has been inserted, INSERTs go round the order again and find
 * their keys present.
 *
 * The counts are shared (atomic: cider-bench's threads draw from one);
 * each reader keeps its own Zipfian state, grown as the count grows.
 * INSERTs that ended are remembered in a window of CIDER_LATEST_WINDOW
 * until those before them have: more INSERTs than that behind one that
 * has not ended, and the count stops following them.
 */
#define CIDER_LATEST_WINDOW	(1U << 20)

struct cider_latest {
	uint64_t n;		/* keys */
	uint64_t *order;	/* insertion order -> key */
	uint64_t preloaded;	/* the first keys of order[], present before the run */
	uint64_t inserts;	/* INSERTs drawn so far (atomic) */
	uint64_t acked;		/* INSERTs 0..acked-1 all ended (atomic) */
	uint8_t *ended;		/* [CIDER_LATEST_WINDOW]: INSERT i ended, i >= acked */
	struct cider_zipf base;	/* over the preloaded keys: each reader's start */
};

/* For @w's preload over keys 0..n-1; 0, or -1 (bad theta, no memory). */
int cider_latest_init(struct cider_latest *l, const struct cider_workload *w, uint64_t n,
		      double theta);
void cider_latest_free(struct cider_latest *l);
/* A reader's own Zipfian state, to pass to cider_latest_read(). */
void cider_latest_reader(const struct cider_latest *l, struct cider_zipf *z);
/* The key of the next INSERT; its number in *@i, for cider_latest_done(). */
uint64_t cider_latest_insert(struct cider_latest *l, uint64_t *i);
/* INSERT @i has ended, however (YCSB acknowledges failed ones too). */
void cider_latest_done(struct cider_latest *l, uint64_t i);
/* The key of a SEARCH (or any other operation on a present key). */
uint64_t cider_latest_read(const struct cider_latest *l, struct cider_zipf *z, struct cider_rng *r);
/* INSERTs that found every key inserted already (and so their key present). */
uint64_t cider_latest_wrapped(const struct cider_latest *l);

/*
 * Value sizes: fixed:N, uniform:A-B, or twitter — a small-object mix in
 * the spirit of the Twitter traces DecLock uses (about 400 bytes on
 * average): 60 % of 8..100 bytes, 30 % of 100..1000, 10 % of 1000..4000.
 * It is a stand-in with that mean, not the trace.
 */
struct cider_sizes {
	int kind;		/* 0 fixed, 1 uniform, 2 twitter */
	uint32_t a, b;
};

int cider_sizes_parse(const char *s, struct cider_sizes *z);
uint32_t cider_sizes_next(const struct cider_sizes *z, struct cider_rng *r);
uint32_t cider_sizes_max(const struct cider_sizes *z);

#endif
