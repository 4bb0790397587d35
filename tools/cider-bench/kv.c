// SPDX-License-Identifier: GPL-2.0
/*
 * cider-bench kv: key-value operations on an attached store from several
 * threads at once (synchronous CIDER_IOC_KV), on a few hot keys: the
 * contended case CIDER is about.  Reports throughput, results by kind and
 * the MN work requests each KV operation cost (the module's counters).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cider.h"
#include "bench.h"

#define KV_MAX_THREADS 64

static struct {
	unsigned int threads, keys, gets;
	double duration;
	int mn;
	bool json;
} kopt = { .threads = 4, .keys = 4, .gets = 50, .duration = 2, .mn = -1 };

struct kv_worker {
	pthread_t th;
	unsigned int id, store;
	int fd;
	unsigned long long ops, absent, errors;
	int first_err;
};

static volatile bool kv_running;

static void kv_usage(FILE *f)
{
	fprintf(f,
"Usage: cider-bench kv [OPTIONS]\n"
"\n"
"Run PUTs and GETs on the hot keys 0..K-1 of an attached array store from\n"
"T threads (synchronous ioctl, one operation at a time per thread) and\n"
"report operations per second, results, and work requests on the memory\n"
"node per KV operation (from the module's debugfs counters).\n"
"\n"
"Options:\n"
"  --threads T     threads (default 4, at most %d)\n"
"  --keys K        hot keys (default 4)\n"
"  --gets PCT      percentage of GETs, the rest PUTs (default 50)\n"
"  --duration S    seconds (default 2)\n"
"  --mn ID         memory node (default: the first live one)\n"
"  --json          one JSON object on stdout\n"
"  -h, --help      this text\n", KV_MAX_THREADS);
}

static void *kv_worker_main(void *p)
{
	struct kv_worker *w = p;
	uint64_t rng = 0x9e3779b97f4a7c15ULL * (w->id + 1), key, val;
	size_t len;
	int ret;

	while (kv_running) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		key = rng % kopt.keys;
		if (rng / kopt.keys % 100 < kopt.gets) {
			len = sizeof(val);
			ret = cider_get(w->fd, w->store, &key, 8, &val, &len);
		} else {
			val = (uint64_t)w->id << 32 | (uint32_t)w->ops;
			ret = cider_put(w->fd, w->store, &key, 8, &val, 8);
		}
		if (ret == -ENOENT) {
			w->absent++;
		} else if (ret) {
			w->errors++;
			if (!w->first_err)
				w->first_err = ret;
		}
		w->ops++;
	}
	return NULL;
}

static int kv_parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "keys", required_argument, NULL, 'k' },
		{ "gets", required_argument, NULL, 'g' },
		{ "duration", required_argument, NULL, 'D' },
		{ "mn", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int v;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			if (!bench_parse_num(optarg, 1, KV_MAX_THREADS, &kopt.threads))
				goto bad;
			break;
		case 'k':
			if (!bench_parse_num(optarg, 1, 1U << 30, &kopt.keys))
				goto bad;
			break;
		case 'g':
			if (!bench_parse_num(optarg, 0, 100, &kopt.gets))
				goto bad;
			break;
		case 'D':
			kopt.duration = strtod(optarg, &end);
			if (*end || kopt.duration <= 0 || kopt.duration > 3600)
				goto bad;
			break;
		case 'm':
			if (!bench_parse_num(optarg, 0, 0x7fffffff, &v))
				goto bad;
			kopt.mn = (int)v;
			break;
		case 'j': kopt.json = true; break;
		case 'h': kv_usage(stdout); exit(0);
		default: kv_usage(stderr); return 2;
		}
	}
	if (optind == argc)
		return 0;
	fprintf(stderr, "cider-bench: unexpected argument '%s'\n", argv[optind]);
	return 2;
bad:
	fprintf(stderr, "cider-bench: bad value '%s'\n", optarg);
	kv_usage(stderr);
	return 2;
}

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
	if (mi->store_index != CIDER_STORE_ARRAY || kopt.keys > mi->store_keys) {
		fprintf(stderr, "cider-bench: kv needs an array store with at least %u keys\n",
			kopt.keys);
		return 1;
	}
	return 0;
}

static void kv_report(const struct cider_mn_info *mi, const struct kv_worker *w, double secs,
		      unsigned long long wrs)
{
	static const char *const modes[] = { "?", "osync", "caslock", "mcs", "cider" };
	unsigned long long ops = 0, absent = 0, errors = 0;
	const char *mode = mi->store_mode < 5 ? modes[mi->store_mode] : "?";
	unsigned int i;

	for (i = 0; i < kopt.threads; i++) {
		ops += w[i].ops;
		absent += w[i].absent;
		errors += w[i].errors;
	}
	if (kopt.json) {
		printf("{\"mode\":\"%s\",\"threads\":%u,\"keys\":%u,\"gets\":%u,\"seconds\":%.3f,"
		       "\"ops\":%llu,\"kops\":%.3f,\"absent\":%llu,\"errors\":%llu,"
		       "\"wrs_per_op\":%.2f,\"device\":\"%s\"}\n", mode, kopt.threads, kopt.keys,
		       kopt.gets, secs, ops, ops / secs / 1e3, absent, errors,
		       ops ? (double)wrs / ops : 0, mi->ibdev);
		return;
	}
	printf("kv on mn%u (%s store, %s mode) via %s: %u threads, %u hot keys, %u%% GET, %.1f s\n",
	       mi->mn_id, mi->store_index == CIDER_STORE_ARRAY ? "array" : "hash", mode,
	       mi->ibdev, kopt.threads, kopt.keys, kopt.gets, secs);
	printf("  %llu ops, %.2f Kops/s, %llu absent, %llu errors, %.2f MN work requests per op\n",
	       ops, ops / secs / 1e3, absent, errors, ops ? (double)wrs / ops : 0);
}

int cmd_kv(int argc, char **argv)
{
	unsigned long long db0 = 0, wr0 = 0, db1 = 0, wr1 = 0;
	struct kv_worker w[KV_MAX_THREADS] = {};
	struct cider_mn_info mi;
	unsigned int i;
	double t0, secs;
	int fd, ret, err = 0;

	ret = kv_parse(argc, argv);
	if (ret)
		return ret;
	fd = cider_open();
	if (fd < 0) {
		fprintf(stderr, "cider-bench: %s\n", cider_strerror(fd));
		return 1;
	}
	if (kv_pick(fd, &mi)) {
		close(fd);
		return 1;
	}
	bench_read_counters(mi.mn_id, &db0, &wr0);
	kv_running = true;
	t0 = bench_now();
	for (i = 0; i < kopt.threads; i++) {
		w[i] = (struct kv_worker){ .id = i, .fd = fd, .store = mi.mn_id };
		pthread_create(&w[i].th, NULL, kv_worker_main, &w[i]);
	}
	usleep((useconds_t)(kopt.duration * 1e6));
	kv_running = false;
	for (i = 0; i < kopt.threads; i++) {
		pthread_join(w[i].th, NULL);
		err = err ?: w[i].first_err;
	}
	secs = bench_now() - t0;
	bench_read_counters(mi.mn_id, &db1, &wr1);
	kv_report(&mi, w, secs, wr1 - wr0);
	close(fd);
	if (err)
		fprintf(stderr, "cider-bench: kv: first error: %s\n", cider_kv_strerror(err));
	return err ? 1 : 0;
}
