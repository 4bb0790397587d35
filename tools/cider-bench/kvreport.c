// SPDX-License-Identifier: GPL-2.0
/*
 * cider-bench kv: its options, the module's KV counters and the report.
 * The JSON report uses cider-sim's names for what both measure
 * (throughput_mops, p50_us.., mn_ops_per_op, cas_retries_per_update,
 * wc_rate, wc_batch_avg, pessimistic_ratio), so the two can be compared
 * line by line (Documentation/evaluation.rst).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "numparse.h"
#include "bench.h"
#include "kvbench.h"

static const char *const kv_op_names[] = { "get", "put", "insert", "update", "delete", "rmw" };
static const char *const kv_res_names[] = { "ok", "notfound", "exists", "nospc", "unknown",
					    "error" };

/* Beyond what any schedule of nanoseconds can space out. */
#define KV_MAX_RATE	1e9

static int kv_bad(const char *opt, const char *val)
{
	fprintf(stderr, "cider-bench: kv: bad value '%s' for --%s (see --help)\n", val, opt);
	return 2;
}

static int kv_parse_num(const char *s, unsigned long long min, unsigned long long max,
			unsigned long long *out)
{
	char err[128];
	uint64_t v;

	if (cider_num_parse(s, min, max, 0, &v, err, sizeof(err)))
		return -1;
	*out = v;
	return 0;
}

int kv_parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "workload", required_argument, NULL, 'w' },
		{ "zipf", required_argument, NULL, 'z' },
		{ "keys", required_argument, NULL, 'k' },
		{ "no-preload", no_argument, NULL, 'P' },
		{ "key-size", required_argument, NULL, 'K' },
		{ "value-size", required_argument, NULL, 'V' },
		{ "threads", required_argument, NULL, 't' },
		{ "depth", required_argument, NULL, 'd' },
		{ "ioctl", no_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'D' },
		{ "ops", required_argument, NULL, 'o' },
		{ "seed", required_argument, NULL, 's' },
		{ "rate", required_argument, NULL, 'r' },
		{ "start-at", required_argument, NULL, 'S' },
		{ "history", required_argument, NULL, 'H' },
		{ "hdr-file", required_argument, NULL, 'F' },
		{ "mn", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long v;
	int c, li = 0;
	char *end;

	cider_workload_get("a", &kopt.wl);
	kopt.vsize_name = "fixed:8";
	cider_sizes_parse(kopt.vsize_name, &kopt.vsize);
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, &li)) != -1) {
		switch (c) {
		case 'w':
			if (cider_workload_get(optarg, &kopt.wl))
				return kv_bad(lo[li].name, optarg);
			break;
		case 'z':
			kopt.theta = strcmp(optarg, "uniform") ? strtod(optarg, &end) : 0;
			if ((strcmp(optarg, "uniform") && *end) || kopt.theta < 0 || kopt.theta >= 1)
				return kv_bad(lo[li].name, optarg);
			break;
		case 'k':
			if (kv_parse_num(optarg, 1, 1ULL << 40, &kopt.keys))
				return kv_bad(lo[li].name, optarg);
			break;
		case 'P': kopt.preload = false; break;
		case 'K':
			if (kv_parse_num(optarg, 8, CIDER_KV_MAX_KEY, &v))
				return kv_bad(lo[li].name, optarg);
			kopt.key_size = (unsigned int)v;
			break;
		case 'V':
			if (cider_sizes_parse(optarg, &kopt.vsize) ||
			    cider_sizes_max(&kopt.vsize) > CIDER_KV_MAX_VALUE)
				return kv_bad(lo[li].name, optarg);
			kopt.vsize_name = optarg;
			break;
		case 't':
			if (kv_parse_num(optarg, 1, 64, &v))
				return kv_bad(lo[li].name, optarg);
			kopt.threads = (unsigned int)v;
			break;
		case 'd':
			if (kv_parse_num(optarg, 1, 256, &v))
				return kv_bad(lo[li].name, optarg);
			kopt.depth = (unsigned int)v;
			break;
		case 'i': kopt.ioctl = true; break;
		case 'D':
			kopt.duration = strtod(optarg, &end);
			if (*end || kopt.duration <= 0 || kopt.duration > 86400)
				return kv_bad(lo[li].name, optarg);
			break;
		case 'o':
			if (kv_parse_num(optarg, 1, 1ULL << 40, &kopt.ops))
				return kv_bad(lo[li].name, optarg);
			break;
		case 's':
			if (kv_parse_num(optarg, 0, ~0ULL, &kopt.seed))
				return kv_bad(lo[li].name, optarg);
			break;
		case 'r':
			kopt.rate = strtod(optarg, &end);
			if (*end || !(kopt.rate > 0) || kopt.rate > KV_MAX_RATE)
				return kv_bad(lo[li].name, optarg);
			break;
		case 'S':
			kopt.start_at = strtod(optarg, &end);
			if (*end || kopt.start_at <= 0)
				return kv_bad(lo[li].name, optarg);
			break;
		case 'H': kopt.history = optarg; break;
		case 'F': kopt.hdr_file = optarg; break;
		case 'm':
			if (kv_parse_num(optarg, 0, 0x7fffffff, &v))
				return kv_bad(lo[li].name, optarg);
			kopt.mn = (int)v;
			break;
		case 'j': kopt.json = true; break;
		case 'f':
			kopt.json = !strcmp(optarg, "json");
			kopt.ycsb = !strcmp(optarg, "ycsb");
			if (!kopt.json && !kopt.ycsb && strcmp(optarg, "text"))
				return kv_bad(lo[li].name, optarg);
			break;
		case 'h': kv_usage(stdout); exit(0);
		default: kv_usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "cider-bench: kv: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (kopt.ioctl && kopt.depth != 1) {
		fprintf(stderr, "cider-bench: kv: --ioctl runs one operation at a time (--depth 1)\n");
		return 2;
	}
	if (!kopt.ops && !kopt.duration)
		kopt.duration = 5;
	if (kopt.ops && !kopt.duration)
		kopt.duration = 86400;
	kopt.max_value = cider_sizes_max(&kopt.vsize);
	return 0;
}

/* The "kv" line of /sys/kernel/debug/cider/mnN; c->have stays false without it. */
void kv_read_counters(unsigned int mn, struct kv_counters *c)
{
	static const char *const verbs[] = { "verbs_read", "verbs_write", "verbs_cas", "verbs_faa" };
	char path[64], line[4096], *tok, *save = NULL, *eq;
	uint64_t v;
	char err[96];
	unsigned int i;
	FILE *f;

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "/sys/kernel/debug/cider/mn%u", mn);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "kv ", 3))
			continue;
		c->have = true;
		for (tok = strtok_r(line + 3, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
			eq = strchr(tok, '=');
			if (!eq)
				continue;
			*eq = '\0';
			if (cider_num_parse(eq + 1, 0, UINT64_MAX, 0, &v, err, sizeof(err)))
				continue;	/* not a counter */
			for (i = 0; i < 4; i++)
				if (!strcmp(tok, verbs[i]))
					c->verbs[i] = v;
			if (!strncmp(tok, "get_", 4) || !strncmp(tok, "put_", 4) ||
			    !strncmp(tok, "insert_", 7) || !strncmp(tok, "update_", 7) ||
			    !strncmp(tok, "delete_", 7))
				c->ops += v;
			else if (!strcmp(tok, "updates"))
				c->updates = v;
			else if (!strcmp(tok, "cas_fail"))
				c->cas_fail = v;
			else if (!strcmp(tok, "pessimistic"))
				c->pessimistic = v;
			else if (!strcmp(tok, "combined"))
				c->combined = v;
			else if (!strcmp(tok, "installers"))
				c->installers = v;
			else if (!strcmp(tok, "cache_hits"))
				c->cache_hits = v;
			else if (!strcmp(tok, "cache_refreshes"))
				c->cache_refreshes = v;
			else if (!strcmp(tok, "lease_waits"))
				c->lease_waits = v;
			else if (!strcmp(tok, "lease_expired"))
				c->lease_expired = v;
			if (!strncmp(tok, "get_", 4))
				c->gets += v;
		}
	}
	fclose(f);
}

/*
 * One sample of /sys/kernel/debug/cider/mnN-kv: how many of the module's
 * slots run an operation, and how many of those have verbs at the MN.
 * Their means are the concurrency the protocol sees, which the simulator's
 * clients per CN stand for (always running); the bench's depth counts
 * operations in flight from user space, including those still on their
 * way into the module or back out.
 */
void kv_sample_slots(unsigned int mn, struct kv_counters *c)
{
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/cider/mn%u-kv", mn);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "  slot ", 7) || !strstr(line, " running op "))
			continue;
		c->running++;
		if (strstr(line, ", verbs out"))
			c->verbs_out++;
	}
	fclose(f);
	c->samples++;
}

int kv_first_err(const struct kv_thread *w)
{
	unsigned int i;

	for (i = 0; i < kopt.threads; i++)
		if (w[i].first_err)
			return w[i].first_err;
	return 0;
}

unsigned long long kv_corrupt(const struct kv_thread *w)
{
	unsigned long long n = 0;
	unsigned int i;

	for (i = 0; i < kopt.threads; i++)
		n += w[i].corrupt;
	return n;
}

/* After the preload: count only the measured run. */
void kv_reset(struct kv_thread *w)
{
	unsigned int i;

	for (i = 0; i < kopt.threads; i++) {
		w[i].done = w[i].errors = w[i].corrupt = 0;
		w[i].first_err = 0;
	}
}

struct kv_sum {
	unsigned long long done, corrupt, res[KV_NR_KINDS][KV_NR_RES], errnos[256];
	struct lathist lat[KV_NR_LAT], svc[KV_NR_LAT];	/* svc: --rate only */
};

static void kv_sum(const struct kv_thread *w, struct kv_sum *s)
{
	unsigned int i, j, k;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < kopt.threads; i++) {
		s->done += w[i].done;
		s->corrupt += w[i].corrupt;
		for (j = 0; j < KV_NR_KINDS; j++)
			for (k = 0; k < KV_NR_RES; k++)
				s->res[j][k] += w[i].res[j][k];
		for (j = 0; j < 256; j++)
			s->errnos[j] += w[i].errno_count[j];
		for (j = 0; j < KV_NR_LAT; j++) {
			lh_merge(&s->lat[j], &w[i].lat[j]);
			if (w[i].svc)
				lh_merge(&s->svc[j], &w[i].svc[j]);
		}
	}
}

/* "all", then each kind that ran: {"all":{...},"get":{...},...}. */
static void kv_json_lats(const char *name, const struct lathist *lat)
{
	unsigned int i;

	printf(",\"%s\":{", name);
	lh_json(stdout, "all", &lat[KV_LAT_ALL]);
	for (i = 0; i < KV_NR_KINDS; i++) {
		if (!lat[i].n)
			continue;
		printf(",");
		lh_json(stdout, kv_op_names[i], &lat[i]);
	}
	printf("}");
}

static const char *kv_errname(unsigned int e)
{
	static char buf[16];

	switch (e) {
	case ENOTCONN: return "ENOTCONN";
	case ECOMM: return "ECOMM";
	case EAGAIN: return "EAGAIN";
	case EINTR: return "EINTR";
	case ENOMEM: return "ENOMEM";
	case EIO: return "EIO";
	case EINVAL: return "EINVAL";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ERANGE: return "ERANGE";
	case EFAULT: return "EFAULT";
	default:
		snprintf(buf, sizeof(buf), "errno%u", e);
		return buf;
	}
}

/* The path the node's atomics take (cider_mn_info.atomics), or NULL: a module that does not say. */
static const char *kv_atomics(const struct cider_mn_info *mi)
{
	return mi->atomics == CIDER_MN_ATOMICS_KERNEL ? "kernel" :
	       mi->atomics == CIDER_MN_ATOMICS_AGENT ? "agent" : NULL;
}

static void kv_report_json(const struct cider_mn_info *mi, const struct kv_sum *s, double secs,
			   const struct kv_counters *d, const char *mode, const char *zipf)
{
	double n = d->ops ? (double)d->ops : 1, u = d->updates ? (double)d->updates : 1;
	unsigned int i, j, first = 1;
	struct lh_summary m;

	lh_summarize(&s->lat[KV_LAT_ALL], &m);
	printf("{\"bench\":\"kv\",\"index\":\"%s\",\"mode\":\"%s\",",
	       mi->store_index == CIDER_STORE_HASH ? "hash" : "array", mode);
	if (kv_atomics(mi))
		printf("\"atomics\":\"%s\",", kv_atomics(mi));
	printf("\"device\":");
	cider_json_str(stdout, mi->ibdev, strlen(mi->ibdev));
	printf(",\"cns\":1,"
	       "\"threads\":%u,\"depth\":%u,\"clients\":%u,\"api\":\"%s\",\"workload\":\"%s\","
	       "\"zipf\":%s,\"keys\":%llu,\"key_size\":%u,\"value_size\":\"%s\",\"seed\":%llu",
	       kopt.threads, kopt.depth, kopt.threads * kopt.depth, kopt.ioctl ? "ioctl" : "io_uring",
	       kopt.wl.name, zipf, kopt.keys, kopt.key_size, kopt.vsize_name, kopt.seed);
	/*
	 * The objects with their own "ops" and "p50_us" before the run's:
	 * scripts read the report's with sed, whose greedy .* takes a name's
	 * last occurrence in the line (selftests/cluster/lib.sh's p50()).
	 */
	kv_json_lats("latency", s->lat);
	if (kopt.rate > 0) {
		printf(",\"rate\":%.3f", kopt.rate);
		kv_json_lats("service_latency", s->svc);
	}
	printf(",\"seconds\":%.3f,\"ops\":%llu,\"throughput_mops\":%.6f,\"p50_us\":%.2f,"
	       "\"p99_us\":%.2f,\"p999_us\":%.2f,\"max_us\":%.2f,\"results\":{", secs, s->done,
	       s->done / secs / 1e6, m.p50 / 1e3, m.p99 / 1e3, m.p999 / 1e3, m.max / 1e3);
	for (i = 0; i < KV_NR_KINDS; i++)
		for (j = 0; j < KV_NR_RES; j++)
			if (s->res[i][j])
				printf("%s\"%s_%s\":%llu", first ? (first = 0, "") : ",", kv_op_names[i],
				       kv_res_names[j], s->res[i][j]);
	printf("},\"errors\":{");
	for (i = 0, first = 1; i < 256; i++)
		if (s->errnos[i])
			printf("%s\"%s\":%llu", first ? (first = 0, "") : ",", kv_errname(i), s->errnos[i]);
	printf("},\"corrupt\":%llu", s->corrupt);
	if (d->have)
		printf(",\"mn_ops_per_op\":{\"total\":%.4f,\"read\":%.4f,\"write\":%.4f,\"cas\":%.4f,"
		       "\"faa\":%.4f},\"cas_retries_per_update\":%.4f,\"wc_rate\":%.4f,"
		       "\"wc_batch_avg\":%.3f,\"pessimistic_ratio\":%.4f,\"module_ops\":%llu",
		       (d->verbs[0] + d->verbs[1] + d->verbs[2] + d->verbs[3]) / n, d->verbs[0] / n,
		       d->verbs[1] / n, d->verbs[2] / n, d->verbs[3] / n, d->cas_fail / u,
		       d->combined / u, d->installers ?
		       (double)(d->combined + d->installers) / d->installers : 0,
		       d->pessimistic / u, d->ops);
	if (d->have && d->paths.have)
		printf(",\"agent_verbs_per_op\":%.4f", d->paths.agent_verbs / n);
	if (d->have)
		printf(",\"cache\":{\"gets\":%llu,\"hits\":%llu,\"refreshes\":%llu,"
		       "\"lease_waits\":%llu,\"lease_expired\":%llu}",
		       d->gets, d->cache_hits, d->cache_refreshes, d->lease_waits, d->lease_expired);
	if (d->samples)
		printf(",\"module_in_flight\":{\"running\":%.3f,\"verbs_out\":%.3f,\"samples\":%llu}",
		       (double)d->running / d->samples, (double)d->verbs_out / d->samples,
		       d->samples);
	if (kopt.history) {
		printf(",\"history\":");
		cider_json_str(stdout, kopt.history, strlen(kopt.history));
	}
	if (kopt.hdr_file) {
		printf(",\"hdr_file\":");
		cider_json_str(stdout, kopt.hdr_file, strlen(kopt.hdr_file));
	}
	printf("}\n");
}

static const char *const kv_op_upper[] = { "GET", "PUT", "INSERT", "UPDATE", "DELETE", "RMW" };

/* A table: every operation, then each kind that ran. */
static void kv_text_lats(const struct lathist *lat)
{
	unsigned int i;

	lh_text_header(stdout);
	lh_text_row(stdout, "all", &lat[KV_LAT_ALL]);
	for (i = 0; i < KV_NR_KINDS; i++)
		if (lat[i].n)
			lh_text_row(stdout, kv_op_upper[i], &lat[i]);
}

static void kv_text_lat(const struct lathist *lat, const struct lathist *svc)
{
	if (kopt.rate <= 0) {
		printf("  latency:\n");
		kv_text_lats(lat);
		return;
	}
	printf("  open loop at %.0f ops/s; latency from the intended start:\n", kopt.rate);
	kv_text_lats(lat);
	printf("  service time, from the issue:\n");
	kv_text_lats(svc);
}

static void kv_report_text(const struct cider_mn_info *mi, const struct kv_sum *s, double secs,
			   const struct kv_counters *d, const char *mode, const char *zipf)
{
	double n = d->ops ? (double)d->ops : 1, u = d->updates ? (double)d->updates : 1;
	unsigned int i, j, any = 0;

	printf("kv on mn%u (%s store, %s mode%s%s) via %s: workload %s, zipf %s, %llu keys of %u bytes, values %s\n",
	       mi->mn_id, mi->store_index == CIDER_STORE_HASH ? "hash" : "array", mode,
	       kv_atomics(mi) ? ", atomics " : "", kv_atomics(mi) ?: "", mi->ibdev,
	       kopt.wl.name, zipf, kopt.keys, kopt.key_size, kopt.vsize_name);
	printf("  %u threads x depth %u (%s), %.2f s: %llu ops, %.4f Mops/s\n", kopt.threads,
	       kopt.depth, kopt.ioctl ? "ioctl" : "io_uring", secs, s->done, s->done / secs / 1e6);
	kv_text_lat(s->lat, s->svc);
	printf("  results:");
	for (i = 0; i < KV_NR_KINDS; i++)
		for (j = 0; j < KV_NR_RES; j++)
			if (s->res[i][j])
				printf(" %s %s %llu;", kv_op_names[i], kv_res_names[j], s->res[i][j]);
	printf("\n  errors:");
	for (i = 0; i < 256; i++)
		if (s->errnos[i] && ++any)
			printf(" %s %llu", kv_errname(i), s->errnos[i]);
	printf("%s%s\n", any ? "" : " none", s->corrupt ? " (and corrupt values read!)" : "");
	if (!d->have) {
		printf("  (no module counters: /sys/kernel/debug/cider needs root and debugfs)\n");
		return;
	}
	printf("  MN verbs per op %.3f (read %.3f write %.3f cas %.3f faa %.3f)\n",
	       (d->verbs[0] + d->verbs[1] + d->verbs[2] + d->verbs[3]) / n, d->verbs[0] / n,
	       d->verbs[1] / n, d->verbs[2] / n, d->verbs[3] / n);
	if (d->paths.have)
		printf("  verbs handed to the atomics agent per op %.3f (every batch of the node's holding an atomic, its membership's too)\n",
		       d->paths.agent_verbs / n);
	printf("  failed CAS per update %.3f, WC rate %.3f, WC batch %.2f, pessimistic %.3f\n",
	       d->cas_fail / u, d->combined / u,
	       d->installers ? (double)(d->combined + d->installers) / d->installers : 0,
	       d->pessimistic / u);
	if (d->cache_hits || d->cache_refreshes || d->lease_waits)
		printf("  CN cache: of %llu GETs %llu answered without a verb, %llu after one READ; %llu writes waited for leases to end, %llu until they expired\n",
		       d->gets, d->cache_hits, d->cache_refreshes, d->lease_waits, d->lease_expired);
	if (d->samples)
		printf("  in the module (%llu samples): %.2f operations running, %.2f with verbs out\n",
		       d->samples, (double)d->running / d->samples,
		       (double)d->verbs_out / d->samples);
}

/* YCSB's measurement names, by kind. */
static const char *const kv_ycsb_names[] = { "READ", "PUT", "INSERT", "UPDATE", "DELETE",
					     "READ-MODIFY-WRITE" };
/* YCSB's Return= names where it has one (OK, NOT_FOUND, ERROR), ours where not. */
static const char *const kv_ycsb_res[] = { "OK", "NOT_FOUND", "EXISTS", "NO_SPACE", "UNKNOWN",
					   "ERROR" };

/* One measurement as YCSB's hdrhistogram measurement exports it, latencies in whole us. */
static void kv_ycsb_block(const char *name, const struct lathist *h, const unsigned long long *res)
{
	struct lh_summary m;
	unsigned int i;

	lh_summarize(h, &m);
	printf("[%s], Operations, %llu\n", name, (unsigned long long)m.n);
	printf("[%s], AverageLatency(us), %.3f\n", name, m.mean / 1e3);
	printf("[%s], MinLatency(us), %.0f\n", name, m.min / 1e3);
	printf("[%s], MaxLatency(us), %.0f\n", name, m.max / 1e3);
	printf("[%s], 95thPercentileLatency(us), %.0f\n", name,
	       (double)lh_value_at(h, 0.95) / 1e3);
	printf("[%s], 99thPercentileLatency(us), %.0f\n", name, m.p99 / 1e3);
	for (i = 0; res && i < KV_NR_RES; i++)
		if (res[i])
			printf("[%s], Return=%s, %llu\n", name, kv_ycsb_res[i], res[i]);
}

/*
 * --format ycsb: YCSB's text summary.  Under --rate, as YCSB's
 * measurement.interval=both: [READ] from the issue, [Intended-READ]
 * from the intended start (return codes with the first only).
 */
static void kv_report_ycsb(const struct kv_sum *s, double secs)
{
	char name[48];
	unsigned int i;

	printf("[OVERALL], RunTime(ms), %.0f\n", secs * 1e3);
	printf("[OVERALL], Throughput(ops/sec), %.3f\n", s->done / secs);
	for (i = 0; i < KV_NR_KINDS; i++) {
		if (!s->lat[i].n)
			continue;
		kv_ycsb_block(kv_ycsb_names[i], kopt.rate > 0 ? &s->svc[i] : &s->lat[i], s->res[i]);
		if (kopt.rate <= 0)
			continue;
		snprintf(name, sizeof(name), "Intended-%s", kv_ycsb_names[i]);
		kv_ycsb_block(name, &s->lat[i], NULL);
	}
}

/*
 * --hdr-file: every operation's latency (from the intended start under
 * --rate) as HdrHistogram's percentile distribution, in microseconds.
 */
static int kv_write_hdr(const struct lathist *h)
{
	FILE *f = fopen(kopt.hdr_file, "w");
	int ret;

	if (!f) {
		fprintf(stderr, "cider-bench: %s: %m\n", kopt.hdr_file);
		return -1;
	}
	ret = lh_write_hdr(h, f, 1000);
	if (fclose(f) || ret) {
		fprintf(stderr, "cider-bench: %s: write error\n", kopt.hdr_file);
		return -1;
	}
	return 0;
}

int kv_report(const struct cider_mn_info *mi, struct kv_thread *w, double secs,
	      const struct kv_counters *c0, const struct kv_counters *c1)
{
	static const char *const modes[] = { "?", "osync", "caslock", "mcs", "cider" };
	const char *mode = mi->store_mode < 5 ? modes[mi->store_mode] : "?";
	struct kv_counters d = { .have = c0->have && c1->have };
	struct kv_sum *s = calloc(1, sizeof(*s));
	char zipf[32];
	unsigned int i;
	int ret = 0;

	if (!s)
		return -1;
	kv_sum(w, s);
	d.ops = c1->ops - c0->ops;
	for (i = 0; i < 4; i++)
		d.verbs[i] = c1->verbs[i] - c0->verbs[i];
	d.updates = c1->updates - c0->updates;
	d.cas_fail = c1->cas_fail - c0->cas_fail;
	d.pessimistic = c1->pessimistic - c0->pessimistic;
	d.combined = c1->combined - c0->combined;
	d.installers = c1->installers - c0->installers;
	d.gets = c1->gets - c0->gets;
	d.cache_hits = c1->cache_hits - c0->cache_hits;
	d.cache_refreshes = c1->cache_refreshes - c0->cache_refreshes;
	d.lease_waits = c1->lease_waits - c0->lease_waits;
	d.lease_expired = c1->lease_expired - c0->lease_expired;
	d.samples = c1->samples;
	d.running = c1->running;
	d.verbs_out = c1->verbs_out;
	bench_paths_sub(&d.paths, &c0->paths, &c1->paths);
	if (kopt.theta == 0)
		snprintf(zipf, sizeof(zipf), kopt.json ? "\"uniform\"" : "uniform");
	else
		snprintf(zipf, sizeof(zipf), "%.2f", kopt.theta);
	if (kopt.json)
		kv_report_json(mi, s, secs, &d, mode, zipf);
	else if (kopt.ycsb)
		kv_report_ycsb(s, secs);
	else
		kv_report_text(mi, s, secs, &d, mode, zipf);
	if (kopt.hdr_file)
		ret = kv_write_hdr(&s->lat[KV_LAT_ALL]);
	free(s);
	return ret;
}
