// SPDX-License-Identifier: GPL-2.0
/*
 * cider-bench kv: YCSB-style key-value load on an attached store through
 * /dev/cider (io_uring, or the synchronous ioctl), the simulator's
 * workloads and key choice (lib/workload.c) so that a run and a cider-sim
 * run configured alike can be compared.  Reports throughput, latency
 * percentiles, results and errors by errno, and from the module's KV
 * counters (debugfs) what each operation cost the memory node.  With
 * --history it records every operation in cider-sim's history format
 * (kvhist.c), for cider-sim --check-history.
 *
 * Keys and values are derived from integer ids, so that a history can
 * name them: key k is its 8 little-endian bytes (then filler bytes for
 * longer keys), and a value starts with its unique 8-byte id, the rest
 * filler derived from the id (a GET checks it: a torn or mixed value is
 * reported as corrupt).  Value ids are unique per CN, thread and
 * sequence; a preloaded key holds id 2^63 + key, as in cider-sim.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "cider.h"
#include "cider-uring.h"
#include "bench.h"
#include "kvbench.h"
#include "workload.h"

#define KV_MAX_THREADS	64
#define KV_MAX_DEPTH	256
#define KV_MAX_ERRNO	256

struct kv_opts kopt = {
	.threads = 4, .depth = 1, .keys = 1000, .key_size = 8, .theta = 0.99, .seed = 1,
	.mn = -1, .preload = true,
};

static struct cider_zipf kzipf;
static struct cider_latest klatest;	/* workload d's keys */
static atomic_ullong kv_issued, kv_preload_next;
static volatile bool kv_running;
static volatile int kv_phase;	/* 0 preload, 1 run */

void kv_usage(FILE *f)
{
	fprintf(f,
"Usage: cider-bench kv [OPTIONS]\n"
"\n"
"YCSB-style key-value operations on an attached store from T threads, each\n"
"with D operations in flight through io_uring (or one at a time through the\n"
"synchronous ioctl).  The store's index and synchronization mode are the\n"
"memory node's (cider-memd --index, --mode); the report says which.\n"
"\n"
"Options:\n"
"  --workload W     a (50%% GET/50%% UPDATE), b (95/5), c (GET only), wo\n"
"                   (UPDATE only), idu (40%% GET, 30%% UPDATE, 15%% INSERT,\n"
"                   15%% DELETE), pd (40%% GET, 40%% PUT, 20%% DELETE), d (YCSB\n"
"                   D: 95%% GET of the latest keys, 5%% INSERT of new ones), f\n"
"                   (YCSB F: 50%% GET, 50%% read-modify-write); default a\n"
"  --zipf THETA|uniform  key skew, 0 <= THETA < 1 (default 0.99)\n"
"  --keys N         keys 0..N-1 (default 1000); preloaded first: every key,\n"
"                   or for idu, pd and d every other one (FNV-1a odd), the\n"
"                   others deleted (d's INSERTs take those)\n"
"  --no-preload     keep the store as it is (the history then says nothing\n"
"                   about the keys' first state)\n"
"  --key-size N     key bytes, 8..1024 (default 8; the array store: 8)\n"
"  --value-size D   fixed:N, uniform:A-B or twitter (default fixed:8; the\n"
"                   array store: fixed:8)\n"
"  --threads T      threads (default 4, at most %d)\n"
"  --depth D        io_uring operations in flight per thread (default 1,\n"
"                   at most %d)\n"
"  --ioctl          one synchronous CIDER_IOC_KV at a time per thread\n"
"  --duration S     seconds to run (default 5 unless --ops)\n"
"  --ops N          operations in all, then stop\n"
"  --rate OPS       open loop: OPS operations per second in all, each thread\n"
"                   starting its share at a constant interval whether or not\n"
"                   earlier ones have ended (as far as --depth allows); latency\n"
"                   from each operation's intended start, service time too\n"
"                   (default: closed loop, the next when one ends)\n"
"  --seed S         the workload's random seed (default 1)\n"
"  --start-at T     start the measured run at UNIX time T (several CNs; a\n"
"                   preload that ends after T is an error)\n"
"  --history FILE   every operation as a JSON line (cider-sim's format)\n"
"  --hdr-file FILE  the latency of every operation (from the intended start\n"
"                   with --rate) as HdrHistogram's percentile distribution,\n"
"                   in microseconds, for its plotters\n"
"  --mn ID          memory node (default: the first live one)\n"
"  --json           one JSON object on stdout (--format json)\n"
"  --format F       the report: text (default), json, or ycsb (YCSB's summary:\n"
"                   [OVERALL], [READ], [UPDATE]... lines; --rate adds\n"
"                   [Intended-READ]... from the intended starts)\n"
"  -h, --help       this text\n"
"\n"
"Progress goes to stderr once a second.  Exit status 1 on any error result\n"
"or corrupt value.  MN verbs per operation, failed CAS per UPDATE, the\n"
"pessimistic ratio and write combining come from the module's counters in\n"
"/sys/kernel/debug/cider/mnN (root, debugfs); the operations running in the\n"
"module, and those with verbs at the MN, are sampled from mnN-kv every 20 ms.\n", KV_MAX_THREADS, KV_MAX_DEPTH);
}

/* ---- keys and values from ids ---- */

static void kv_put_le(uint8_t *p, uint64_t v)
{
	unsigned int i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t kv_get_le(const uint8_t *p)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

void kv_key_bytes(uint8_t *buf, uint64_t key, unsigned int len)
{
	unsigned int i;

	kv_put_le(buf, key);
	for (i = 8; i < len; i++)
		buf[i] = (uint8_t)(key * 31 + i);
}

static uint8_t kv_filler(uint64_t id, unsigned int i)
{
	return (uint8_t)((id ^ (id >> 29)) * 131 + i * 7);
}

static void kv_value_bytes(uint8_t *buf, uint64_t id, unsigned int len)
{
	unsigned int i;

	kv_put_le(buf, id);
	for (i = 8; i < len; i++)
		buf[i] = kv_filler(id, i);
}

/* The id a GET's bytes carry; false when they are not one whole value. */
static bool kv_value_id(const uint8_t *buf, unsigned int len, uint64_t *id)
{
	unsigned int i;

	if (len < 8)
		return false;
	*id = kv_get_le(buf);
	for (i = 8; i < len; i++)
		if (buf[i] != kv_filler(*id, i))
			return false;
	return true;
}

/* Unique across CNs (8 bits), threads (12) and a thread's writes (40). */
static uint64_t kv_new_id(struct kv_thread *t)
{
	return (uint64_t)(kopt.cn & 0xff) << 52 | (uint64_t)(t->id & 0xfff) << 40 |
	       (++t->seq & ((1ULL << 40) - 1));
}

/* ---- operations ---- */

static uint64_t kv_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The workload's operation as the bench's. */
static uint8_t kv_op_of(enum cider_wl_op op)
{
	switch (op) {
	case CIDER_WL_SEARCH: return KV_GET;
	case CIDER_WL_UPDATE: return KV_UPDATE;
	case CIDER_WL_INSERT: return KV_INSERT;
	case CIDER_WL_PUT: return KV_PUT;
	case CIDER_WL_RMW: return KV_GET;	/* then its UPDATE: kv_rmw_update() */
	default: return KV_DELETE;
	}
}

/* The measured run's next operation and key. */
static void kv_draw(struct kv_thread *t, struct kv_slot *s)
{
	enum cider_wl_op op;

	if (kopt.wl.latest) {
		/* Workload d: which key depends on the operation. */
		op = cider_workload_op(&kopt.wl, &t->rng);
		s->latest_insert = op == CIDER_WL_INSERT;
		s->key = s->latest_insert ? cider_latest_insert(&klatest, &s->latest_seq) :
			 cider_latest_read(&klatest, &t->lzipf, &t->rng);
	} else {
		s->key = cider_zipf_next(&kzipf, &t->rng);
		op = cider_workload_op(&kopt.wl, &t->rng);
	}
	s->op = kv_op_of(op);
	s->rmw = op == CIDER_WL_RMW;
	s->arg = kv_new_id(t);
}

/* @s's key and value bytes for its operation. */
static void kv_bytes(struct kv_thread *t, struct kv_slot *s)
{
	s->klen = kopt.key_size;
	kv_key_bytes(s->kbuf, s->key, s->klen);
	s->vlen = s->op == KV_GET ? kopt.max_value : s->op == KV_DELETE ? 0 :
		  cider_sizes_next(&kopt.vsize, &t->rng);
	if (s->op != KV_GET && s->op != KV_DELETE)
		kv_value_bytes(s->vbuf, s->arg, s->vlen);
}

/* The next operation for @s; false when there is none left. */
static bool kv_next(struct kv_thread *t, struct kv_slot *s)
{
	static const struct cider_workload idu = { .preload_all = false };
	unsigned long long k;

	if (kv_phase == 0) {
		k = atomic_fetch_add(&kv_preload_next, 1);
		if (k >= kopt.keys)
			return false;
		s->key = k;
		s->op = kopt.wl.preload_all || cider_workload_preloaded(&idu, k) ? KV_PUT : KV_DELETE;
		s->rmw = false;
		s->arg = KV_PRELOAD_ID(k);
	} else {
		if (!kv_running || (kopt.ops && atomic_fetch_add(&kv_issued, 1) >= kopt.ops))
			return false;
		kv_draw(t, s);
	}
	kv_bytes(t, s);
	return true;
}

/*
 * A read-modify-write's GET has ended at @now: @s becomes its UPDATE, of
 * the same key with a new value, meant to start at once.  The history
 * gets the two as they are (the checker knows GETs and UPDATEs); the
 * whole is timed as one READ-MODIFY-WRITE from the GET's start.
 */
static void kv_rmw_update(struct kv_thread *t, struct kv_slot *s, uint64_t now)
{
	s->rmw_intended = s->intended;
	s->rmw_inv = s->inv;
	s->op = KV_UPDATE;
	s->arg = kv_new_id(t);
	kv_bytes(t, s);
	s->intended = now;
	s->inv = 0;
}

static void kv_prep(struct io_uring_sqe *sqe, int fd, unsigned int store, struct kv_slot *s)
{
	switch (s->op) {
	case KV_GET:
		cider_uring_prep_get(sqe, fd, store, s->kbuf, s->klen, s->vbuf, s->vlen);
		break;
	case KV_PUT:
		cider_uring_prep_put(sqe, fd, store, s->kbuf, s->klen, s->vbuf, s->vlen);
		break;
	case KV_INSERT:
		cider_uring_prep_insert(sqe, fd, store, s->kbuf, s->klen, s->vbuf, s->vlen);
		break;
	case KV_UPDATE:
		cider_uring_prep_update(sqe, fd, store, s->kbuf, s->klen, s->vbuf, s->vlen);
		break;
	default:
		cider_uring_prep_delete(sqe, fd, store, s->kbuf, s->klen);
	}
}

static int kv_sync(struct kv_thread *t, struct kv_slot *s)
{
	size_t len = s->vlen;
	int ret;

	switch (s->op) {
	case KV_GET:
		ret = cider_get(t->fd, t->store, s->kbuf, s->klen, s->vbuf, &len);
		return ret ? ret : (int)len;
	case KV_PUT:
		return cider_put(t->fd, t->store, s->kbuf, s->klen, s->vbuf, s->vlen);
	case KV_INSERT:
		return cider_insert(t->fd, t->store, s->kbuf, s->klen, s->vbuf, s->vlen);
	case KV_UPDATE:
		return cider_update(t->fd, t->store, s->kbuf, s->klen, s->vbuf, s->vlen);
	default:
		return cider_delete(t->fd, t->store, s->kbuf, s->klen);
	}
}

/* A latency, as one of @kind's: from @intended and, --rate, from @inv too. */
static void kv_record(struct kv_thread *t, unsigned int kind, uint64_t intended, uint64_t inv,
		      uint64_t now)
{
	pace_record(&t->lat[kind], t->svc ? &t->svc[kind] : NULL, intended, inv, now);
}

/* @res as one of @kind's results; an error class counted as such. */
static void kv_count(struct kv_thread *t, unsigned int kind, int res)
{
	t->res[kind][kv_res_class(res)]++;
	if (res < 0 && kv_res_class(res) >= KV_RES_UNKNOWN) {
		t->errno_count[-res < KV_MAX_ERRNO ? -res : 0]++;
		t->errors++;
		if (!t->first_err)
			t->first_err = res;
	}
}

/* The preload's operation @s ended with @res. */
static void kv_preloaded(struct kv_thread *t, const struct kv_slot *s, int res)
{
	if (res < 0 && !(res == -ENOENT && s->op == KV_DELETE)) {
		t->errors++;
		if (!t->first_err)
			t->first_err = res;
	}
	t->done++;
}

/*
 * One operation ended with @res at @now.  True when @s goes on: a
 * read-modify-write's GET that ended without an error is followed by its
 * UPDATE (YCSB's does it whatever the GET found).
 */
static bool kv_finish(struct kv_thread *t, struct kv_slot *s, int res, uint64_t now,
		      unsigned int client)
{
	uint64_t got = 0;

	if (kv_phase == 0) {
		kv_preloaded(t, s, res);
		return false;
	}
	if (s->op == KV_GET && res >= 0 &&
	    !kv_value_id(s->vbuf, (unsigned int)res < s->vlen ? (unsigned int)res : s->vlen, &got)) {
		t->corrupt++;
		got = kv_get_le(s->vbuf);
	}
	kv_record(t, s->op, s->intended, s->inv, now);
	kv_count(t, s->op, res);
	if (s->latest_insert) {
		/* Ended, however: SEARCHes may look for its key now (as YCSB's). */
		cider_latest_done(&klatest, s->latest_seq);
		s->latest_insert = false;
	}
	if (kopt.history)
		kv_hist_add(t, s, res, got, now, client);
	if (s->rmw && s->op == KV_GET && kv_res_class(res) < KV_RES_UNKNOWN) {
		kv_rmw_update(t, s, now);
		return true;
	}
	if (s->rmw) {
		kv_record(t, KV_RMW, s->rmw_intended, s->rmw_inv, now);
		kv_record(t, KV_LAT_ALL, s->rmw_intended, s->rmw_inv, now);
		/* An error ends the RMW: counted with its GET or its UPDATE already. */
		t->res[KV_RMW][kv_res_class(res)]++;
	} else {
		kv_record(t, KV_LAT_ALL, s->intended, s->inv, now);
	}
	t->done++;
	return false;
}

/*
 * How long an open-loop thread sleeps at most before it looks whether
 * the run is over: the run's end is noticed this late at worst.
 */
#define KV_SLEEP_MAX_NS	(10 * 1000 * 1000ULL)

/* pace_clock's: sleep until @ns (at most KV_SLEEP_MAX_NS); is the run still on? */
static bool kv_sleep_until(void *ctx, uint64_t ns)
{
	uint64_t now = kv_ns(), until = ns < now + KV_SLEEP_MAX_NS ? ns : now + KV_SLEEP_MAX_NS;
	struct timespec ts = { .tv_sec = (time_t)(until / 1000000000ULL),
			       .tv_nsec = (long)(until % 1000000000ULL) };

	(void)ctx;
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	return kv_running;
}

static uint64_t kv_clock_now(void *ctx)
{
	(void)ctx;
	return kv_ns();
}

static const struct pace_clock kv_clock = { .now = kv_clock_now, .sleep_until = kv_sleep_until };

/* --rate, in the measured run (the preload runs closed loop). */
static bool kv_open_loop(void)
{
	return kv_phase && kopt.rate > 0;
}

/* @s is invoked at @now; closed loop, that is also when it was meant to start. */
static void kv_stamp(struct kv_slot *s, uint64_t now)
{
	s->inv = now;
	if (!kv_open_loop())
		s->intended = now;
}

/*
 * Put an operation into each free slot: an RMW's UPDATE that is due
 * (even after the run's end: the pair is completed), else a new one if
 * the schedule says it is due.  How many.
 */
static unsigned int kv_fill(struct kv_thread *t, struct io_uring *ring, bool *more)
{
	uint64_t now = kv_ns(), intended;
	unsigned int i, n = 0;
	bool due = true;

	for (i = 0; i < kopt.depth; i++) {
		struct kv_slot *s = &t->slots[i];
		struct io_uring_sqe *sqe;

		if (s->busy)
			continue;
		if (!s->again) {
			if (!*more || !due || !(due = pace_due(&t->pace, now, &intended)))
				continue;
			if (!kv_next(t, s)) {
				*more = false;
				continue;
			}
			s->intended = intended;
		}
		s->again = false;
		sqe = io_uring_get_sqe(ring);
		kv_prep(sqe, t->fd, t->store, s);
		io_uring_sqe_set_data64(sqe, i);
		s->busy = true;
		n++;
	}
	return n;
}

/*
 * Wait for a completion.  Open loop with a free slot, only until the
 * next operation is due (-ETIME then); with nothing in flight, sleep
 * until then (-ETIME too, and *@more cleared if the run ended).
 */
static int kv_wait(struct kv_thread *t, struct io_uring *ring, unsigned int inflight,
		   bool *more, struct io_uring_cqe **cqe)
{
	uint64_t now = kv_ns(), due = pace_next(&t->pace, now);
	struct __kernel_timespec ts;

	if (!*more || !kv_open_loop() || inflight == kopt.depth)
		return io_uring_wait_cqe(ring, cqe);
	if (!inflight) {
		if (!kv_sleep_until(NULL, due))
			*more = false;
		return -ETIME;
	}
	due = due > now ? due - now : 0;
	ts.tv_sec = (long long)(due / 1000000000ULL);
	ts.tv_nsec = (long long)(due % 1000000000ULL);
	return io_uring_wait_cqe_timeout(ring, cqe, &ts);
}

/*
 * The completions already posted, then the time: each was posted before
 * it.  Task work can post more while this loop runs (the thread
 * preempted in it, say); those wait for the next round and its later
 * time, or their responses would be stamped before they happened (the
 * history checker found UPDATEs "returning" before their CAS).
 */
static unsigned int kv_reap(struct kv_thread *t, struct io_uring *ring)
{
	struct io_uring_cqe *cqes[KV_MAX_DEPTH];
	unsigned int i, seen = io_uring_peek_batch_cqe(ring, cqes, kopt.depth);
	uint64_t now = kv_ns();

	for (i = 0; i < seen; i++) {
		struct kv_slot *s = &t->slots[cqes[i]->user_data];

		/* An RMW's UPDATE goes out with the next kv_fill(). */
		s->again = kv_finish(t, s, cqes[i]->res, now,
				     t->id * kopt.depth + (unsigned int)cqes[i]->user_data);
		s->busy = false;
		if (!s->again)
			s->inv = 0;
	}
	io_uring_cq_advance(ring, seen);
	return seen;
}

/* io_uring: keep up to depth operations in flight until none is left. */
static int kv_run_uring(struct kv_thread *t)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	unsigned int i, n, inflight = 0;
	bool more = true;
	uint64_t now;
	int ret;

	ret = cider_uring_init(&ring, kopt.depth);
	if (ret)
		return ret;
	for (;;) {
		n = kv_fill(t, &ring, &more);
		if (n) {
			/* Invoked no later than the kernel can see them. */
			now = kv_ns();
			for (i = 0; i < kopt.depth; i++)
				if (t->slots[i].busy && !t->slots[i].inv)
					kv_stamp(&t->slots[i], now);
			ret = io_uring_submit(&ring);
			if (ret < 0)
				break;
			inflight += n;
		}
		if (!inflight && !more)
			break;
		ret = kv_wait(t, &ring, inflight, &more, &cqe);
		if (ret == -ETIME) {
			/* Not an error: the next operation is due.  Nor the loop's result. */
			ret = 0;
			continue;
		}
		if (ret < 0)
			break;
		inflight -= kv_reap(t, &ring);
	}
	io_uring_queue_exit(&ring);
	return ret < 0 ? ret : 0;
}

static int kv_run_sync(struct kv_thread *t)
{
	struct kv_slot *s = &t->slots[0];
	uint64_t intended;
	int res;

	while (!pace_wait(&t->pace, &kv_clock, &intended) && kv_next(t, s)) {
		s->intended = intended;
		do {
			kv_stamp(s, kv_ns());
			res = kv_sync(t, s);
		} while (kv_finish(t, s, res, kv_ns(), t->id));
		s->inv = 0;
	}
	return 0;
}

static void *kv_thread_main(void *p)
{
	struct kv_thread *t = p;

	/* Open loop: wake at the intended start, not up to 50 us after it. */
	if (kv_open_loop())
		prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	pace_init(&t->pace, kv_phase ? kopt.rate : 0, t->id, kopt.threads, kv_ns());
	t->setup_err = kopt.ioctl ? kv_run_sync(t) : kv_run_uring(t);
	return NULL;
}

static int kv_threads_init(struct kv_thread *w, int fd, unsigned int store)
{
	unsigned int i, d;

	for (i = 0; i < kopt.threads; i++) {
		w[i].id = i;
		w[i].fd = fd;
		w[i].store = store;
		w[i].rng.s = kopt.seed * 0x9e3779b97f4a7c15ULL + i + 1;
		if (kopt.wl.latest)
			cider_latest_reader(&klatest, &w[i].lzipf);
		w[i].slots = calloc(kopt.depth, sizeof(*w[i].slots));
		w[i].lat = calloc(KV_NR_LAT, sizeof(*w[i].lat));
		/* Closed loop, the two are one: no second set. */
		w[i].svc = kopt.rate > 0 ? calloc(KV_NR_LAT, sizeof(*w[i].svc)) : NULL;
		if (!w[i].slots || !w[i].lat || (kopt.rate > 0 && !w[i].svc))
			return -ENOMEM;
		for (d = 0; d < kopt.depth; d++) {
			w[i].slots[d].kbuf = malloc(kopt.key_size);
			w[i].slots[d].vbuf = malloc(kopt.max_value);
			if (!w[i].slots[d].kbuf || !w[i].slots[d].vbuf)
				return -ENOMEM;
		}
	}
	return 0;
}

static void kv_threads_free(struct kv_thread *w)
{
	unsigned int i, d;

	for (i = 0; i < kopt.threads; i++) {
		for (d = 0; w[i].slots && d < kopt.depth; d++) {
			free(w[i].slots[d].kbuf);
			free(w[i].slots[d].vbuf);
		}
		free(w[i].slots);
		free(w[i].lat);
		free(w[i].svc);
		free(w[i].hist);
	}
}

static unsigned long long kv_done(const struct kv_thread *w)
{
	unsigned long long n = 0;
	unsigned int i;

	for (i = 0; i < kopt.threads; i++)
		n += __atomic_load_n(&w[i].done, __ATOMIC_RELAXED);
	return n;
}

/*
 * Start the threads for one phase, report progress each second, join.
 * With @samp, sample the module's slots every 20 ms meanwhile.
 */
static int kv_phase_run(struct kv_thread *w, int phase, double *secs, unsigned int mn,
			struct kv_counters *samp)
{
	double t0 = bench_now(), next = t0 + 1, end = t0 + kopt.duration;
	unsigned long long base = kv_done(w);
	unsigned int i;
	int err = 0;

	kv_phase = phase;
	kv_running = true;
	for (i = 0; i < kopt.threads; i++)
		pthread_create(&w[i].th, NULL, kv_thread_main, &w[i]);
	for (;;) {
		unsigned long long n = kv_done(w) - base;
		bool over = phase == 0 ? n >= kopt.keys :
			    kopt.ops ? n >= kopt.ops : bench_now() >= end;

		if (over)
			break;
		usleep(20000);
		if (samp)
			kv_sample_slots(mn, samp);
		if (bench_now() < next)
			continue;
		next += 1;
		if (phase == 0)
			fprintf(stderr, "  preload: %llu of %llu keys\n", n, kopt.keys);
		else
			fprintf(stderr, "  %.0f s: %llu ops, %.4f Mops/s\n", bench_now() - t0, n,
				n / (bench_now() - t0) / 1e6);
	}
	kv_running = false;
	for (i = 0; i < kopt.threads; i++) {
		pthread_join(w[i].th, NULL);
		err = err ?: w[i].setup_err;
	}
	*secs = bench_now() - t0;
	return err;
}

/* ---- the command ---- */

static int kv_pick(int fd, struct cider_mn_info *mi)
{
	unsigned int id = 0;
	int ret;

	if (kopt.mn >= 0) {
		ret = cider_mn_info(fd, (unsigned int)kopt.mn, mi);
		if (!ret && mi->mn_id != (unsigned int)kopt.mn)
			ret = -ENOENT;
	} else {
		while (!(ret = cider_mn_info(fd, id, mi)) && mi->state != CIDER_MN_LIVE)
			id = mi->mn_id + 1;
	}
	if (ret) {
		fprintf(stderr, "cider-bench: no such live memory node (ciderctl attach)\n");
		return 1;
	}
	if (kopt.keys > mi->store_keys || kopt.key_size > mi->max_key_len ||
	    kopt.max_value > mi->max_value_len) {
		fprintf(stderr, "cider-bench: the store on mn%u holds %llu keys of up to %u bytes, values of up to %u\n",
			mi->mn_id, (unsigned long long)mi->store_keys, mi->max_key_len,
			mi->max_value_len);
		return 1;
	}
	if (mi->store_index == CIDER_STORE_ARRAY &&
	    (kopt.key_size != 8 || kopt.vsize.kind || kopt.vsize.a != 8)) {
		fprintf(stderr, "cider-bench: the array store takes 8-byte keys and values (--key-size 8 --value-size fixed:8)\n");
		return 1;
	}
	kopt.cn = mi->cn_id;
	return 0;
}

/* The key choice: Zipfian (or uniform) over the keys, or workload d's latest. */
static int kv_keys_init(void)
{
	if (cider_zipf_init(&kzipf, kopt.keys, kopt.theta)) {
		fprintf(stderr, "cider-bench: bad --zipf for %llu keys\n", kopt.keys);
		return -1;
	}
	if (kopt.wl.latest && cider_latest_init(&klatest, &kopt.wl, kopt.keys, kopt.theta)) {
		fprintf(stderr, "cider-bench: no memory for workload %s's %llu keys\n",
			kopt.wl.name, kopt.keys);
		return -1;
	}
	return 0;
}

/* Workload d ran out of absent keys: its later INSERTs found theirs present. */
static void kv_latest_note(void)
{
	uint64_t wrapped = kopt.wl.latest ? cider_latest_wrapped(&klatest) : 0;

	if (wrapped)
		fprintf(stderr, "cider-bench: workload %s: %llu INSERTs came after every key had been inserted (their keys were present: more --keys for a run this long)\n",
			kopt.wl.name, (unsigned long long)wrapped);
}

/*
 * Wait for --start-at.  A preload that ended after it is an error: the
 * other compute nodes' runs began before the keys held what this one's
 * history says they held first.
 */
static int kv_wait_start(void)
{
	struct timespec ts;
	double now;

	if (!kopt.start_at)
		return 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	if (kopt.start_at > now) {
		usleep((useconds_t)((kopt.start_at - now) * 1e6));
		return 0;
	}
	fprintf(stderr, "cider-bench: %s %.1f s after --start-at\n",
		kopt.preload ? "the preload ended" : "ready", now - kopt.start_at);
	return kopt.preload ? -1 : 0;
}

int cmd_kv(int argc, char **argv)
{
	struct kv_thread *w = calloc(KV_MAX_THREADS, sizeof(*w));
	struct kv_counters c0 = { 0 }, c1 = { 0 }, samp = { 0 };
	struct cider_mn_info mi;
	double secs = 0, psecs = 0;
	int fd = -1, ret;

	ret = w ? kv_parse(argc, argv) : 1;
	if (ret)
		goto out;
	ret = 1;
	if (kv_keys_init())
		goto out;
	fd = cider_open();
	if (fd < 0) {
		fprintf(stderr, "cider-bench: %s\n", cider_strerror(fd));
		goto out;
	}
	if (kv_pick(fd, &mi) || kv_threads_init(w, fd, mi.mn_id))
		goto out;
	if (kopt.preload) {
		ret = kv_phase_run(w, 0, &psecs, mi.mn_id, NULL);
		if (ret || kv_first_err(w)) {
			fprintf(stderr, "cider-bench: preload failed: %s\n",
				cider_kv_strerror(ret ?: kv_first_err(w)));
			ret = 1;
			goto out;
		}
		kv_reset(w);
		fprintf(stderr, "  preloaded %llu keys in %.1f s\n", kopt.keys, psecs);
	}
	if (kv_wait_start()) {
		ret = 1;
		goto out;
	}
	kv_read_counters(mi.mn_id, &c0);
	bench_read_paths(fd, mi.mn_id, &c0.paths);
	ret = kv_phase_run(w, 1, &secs, mi.mn_id, &samp);
	kv_read_counters(mi.mn_id, &c1);
	bench_read_paths(fd, mi.mn_id, &c1.paths);
	c1.samples = samp.samples;
	c1.running = samp.running;
	c1.verbs_out = samp.verbs_out;
	if (ret) {
		fprintf(stderr, "cider-bench: kv: %s\n", cider_strerror(ret));
		ret = 1;
		goto out;
	}
	ret = kv_report(&mi, w, secs, &c0, &c1) || kv_first_err(w) || kv_corrupt(w) ? 1 : 0;
	kv_latest_note();
	if (kopt.history && kv_hist_write(w, kopt.history))
		ret = 1;
out:
	if (w)
		kv_threads_free(w);
	free(w);
	cider_latest_free(&klatest);
	if (fd >= 0)
		close(fd);
	return ret;
}
