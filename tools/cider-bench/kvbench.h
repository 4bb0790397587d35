/* SPDX-License-Identifier: GPL-2.0 */
/* cider-bench kv's parts: the load (kv.c), its report (kvreport.c), its history (kvhist.c). */
#ifndef CIDER_KVBENCH_H
#define CIDER_KVBENCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "bench.h"
#include "cider.h"
#include "lathist.h"
#include "pace.h"
#include "workload.h"

enum kv_op { KV_GET, KV_PUT, KV_INSERT, KV_UPDATE, KV_DELETE, KV_NR_OPS };

/*
 * Results and latencies are kept per kind: each operation, and a
 * read-modify-write as a whole (its GET and UPDATE count as themselves
 * too, as YCSB counts them); latencies also for every operation of the
 * workload, an RMW once.
 */
#define KV_RMW		KV_NR_OPS
#define KV_NR_KINDS	(KV_NR_OPS + 1)
#define KV_LAT_ALL	KV_NR_KINDS
#define KV_NR_LAT	(KV_NR_KINDS + 1)

/* How an operation ended, as the history checker needs to know it. */
enum kv_res {
	KV_RES_OK, KV_RES_NOTFOUND, KV_RES_EXISTS, KV_RES_NOSPC,
	KV_RES_UNKNOWN,		/* may have taken effect: ECOMM, EINTR, anything undocumented */
	KV_RES_ERROR,		/* documented as not executed: ENOTCONN, EAGAIN, EINVAL, ... */
	KV_NR_RES
};

#define KV_PRELOAD_ID(key)	((1ULL << 63) | (key))	/* cider-sim's preloaded value */

struct kv_opts {
	struct cider_workload wl;
	struct cider_sizes vsize;
	const char *vsize_name, *history, *hdr_file;
	unsigned int threads, depth, key_size, max_value, cn;
	unsigned long long keys, ops, seed;
	double theta, duration, start_at;
	double rate;		/* --rate: operations per second, all threads; 0: closed loop */
	int mn;
	bool json, ycsb, ioctl, preload;	/* json, ycsb: --format */
};

extern struct kv_opts kopt;

struct kv_slot {
	uint8_t *kbuf, *vbuf;
	unsigned int klen, vlen;
	uint64_t key, arg, inv;
	uint64_t intended;	/* the schedule's start for it (closed loop: inv) */
	uint64_t rmw_intended, rmw_inv;	/* a read-modify-write's, from its GET */
	uint8_t op;
	bool busy;
	bool rmw;		/* a read-modify-write: the GET, then the UPDATE */
	bool again;		/* the RMW's UPDATE is to be submitted */
	bool latest_insert;	/* workload d's INSERT number latest_seq */
	uint64_t latest_seq;
};

struct kv_hrec {
	uint64_t key, arg, value, inv, resp;
	uint32_t client;
	uint8_t op, res;
};

struct kv_thread {
	pthread_t th;
	unsigned int id, store;
	int fd;
	struct cider_rng rng;
	uint64_t seq;
	struct kv_slot *slots;
	struct cider_zipf lzipf;		/* workload d: this thread's reader state */
	unsigned long long done, errors, corrupt;
	unsigned long long res[KV_NR_KINDS][KV_NR_RES];
	unsigned long long errno_count[256];	/* [0]: beyond 255 */
	int first_err, setup_err;
	struct pace pace;
	struct lathist *lat;			/* [KV_NR_LAT]: from the intended start */
	struct lathist *svc;			/* [KV_NR_LAT]: from the issue (--rate only) */
	struct kv_hrec *hist;
	size_t nhist, caphist;
};

/* The module's KV counters (debugfs mnN, the "kv" line). */
struct kv_counters {
	bool have;
	unsigned long long ops, verbs[4], updates, cas_fail, pessimistic, combined, installers;
	/* The CN cache (Documentation/protocol.rst): GETs by how they were answered, lease waits. */
	unsigned long long gets, cache_hits, cache_refreshes, lease_waits, lease_expired;
	/* Sums over samples of the module's slots: running, and of those with verbs out. */
	unsigned long long samples, running, verbs_out;
	/* The node's verbs by path (CIDER_IOC_MN_STATS): the kernel's QPs or the atomics agent. */
	struct bench_paths paths;
};

int kv_res_class(int res);
void kv_key_bytes(uint8_t *buf, uint64_t key, unsigned int len);

void kv_usage(FILE *f);
int kv_parse(int argc, char **argv);
void kv_read_counters(unsigned int mn, struct kv_counters *c);
void kv_sample_slots(unsigned int mn, struct kv_counters *c);
int kv_report(const struct cider_mn_info *mi, struct kv_thread *w, double secs,
	      const struct kv_counters *c0, const struct kv_counters *c1);
int kv_first_err(const struct kv_thread *w);
unsigned long long kv_corrupt(const struct kv_thread *w);
void kv_reset(struct kv_thread *w);

void kv_hist_add(struct kv_thread *t, const struct kv_slot *s, int res, uint64_t got,
		 uint64_t now, unsigned int client);
int kv_hist_write(const struct kv_thread *w, const char *path);

#endif
