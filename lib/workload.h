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
/*
 * The next key.  Ranks come from the Gray et al. generator; rank r maps to
 * key FNV-1a(r) mod n so that hot keys are spread over the key space (over
 * n itself, not YCSB's 10^10 items, which would flatten the skew).
 */
uint64_t cider_zipf_next(const struct cider_zipf *z, struct cider_rng *r);

enum cider_wl_op { CIDER_WL_SEARCH, CIDER_WL_INSERT, CIDER_WL_UPDATE, CIDER_WL_DELETE, CIDER_WL_PUT };

struct cider_workload {
	char name[8];
	unsigned int search, update, insert, delete_;	/* percent */
	bool preload_all;	/* every key present at start */
	unsigned int put;	/* percent, drawn after insert */
};

/* "a", "b", "c", "wo" (the paper's Table 1 and YCSB), "idu" or "pd". */
int cider_workload_get(const char *name, struct cider_workload *w);
enum cider_wl_op cider_workload_op(const struct cider_workload *w, struct cider_rng *r);
/* Is @key present before the run (idu preloads every other key)? */
bool cider_workload_preloaded(const struct cider_workload *w, uint64_t key);

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
