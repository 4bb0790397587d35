// SPDX-License-Identifier: GPL-2.0
/*
 * ciderctl: inspect and control cider.ko, in the style of iproute2's rdma
 * tool.  -j prints JSON for scripts.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cider.h"
#include "jsonw.h"
#include "numparse.h"
#include "ciderctl.h"
#include "cnconf.h"

bool json;

/* /dev/cider, opened the first time a command needs it: after its arguments. */
int ctl_dev(void)
{
	static int fd = -1;

	if (fd < 0) {
		fd = cider_open();
		if (fd < 0)
			fprintf(stderr, "ciderctl: %s\n", cider_strerror(fd));
	}
	return fd;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: ciderctl [-j] COMMAND\n"
		"\n"
		"Commands:\n"
		"  info                          module version, features, RDMA devices\n"
		"  attach HOST:PORT [cn ID] [timeout MS] [key-file FILE]\n"
		"                                connect to a memory node (cider-memd) as\n"
		"                                compute node ID (default 0), proving the\n"
		"                                store's key in FILE if the node has one\n"
		"                                (cider-memd --key-file); prints its mn id.\n"
		"                                [atomics auto|kernel|agent]: where its\n"
		"                                atomics go (agent: through cider-agentd)\n"
		"  attach --all [config FILE] [retry SEC]\n"
		"                                attach every memory node cn.conf lists\n"
		"                                that is not attached (default\n"
		"                                " CIDER_CN_CONF "); nodes that do not\n"
		"                                answer again, until SEC seconds passed\n"
		"  detach MN | --all             disconnect memory node MN, or every one\n"
		"  status                        attached memory nodes and their state\n"
		"  stats [MN] [-i SEC [-c COUNT] | --prometheus]\n"
		"                                a node's counters (every node's by\n"
		"                                default); -i: rates per second every SEC\n"
		"                                seconds, COUNT times (default: until\n"
		"                                interrupted); --prometheus: the text\n"
		"                                exposition format\n"
		"  kv [-m MN] get KEY            print KEY's value (exit 1 if absent)\n"
		"  kv [-m MN] put|insert|update KEY VALUE|@FILE\n"
		"                                store a value (put: insert or update)\n"
		"  kv [-m MN] del KEY            delete KEY (exit 1 if absent)\n"
		"  kv [-m MN] scan [PREFIX] [count N]\n"
		"                                print the store's keys (with PREFIX), one\n"
		"                                per line, N index positions a page\n"
		"                                (default 256); a key present throughout\n"
		"                                comes at least once, others may or may not\n"
		"  kv [-m MN] dump [PREFIX] [count N] > FILE\n"
		"                                write those keys and their values as a\n"
		"                                dump file (standard output) for kv load\n"
		"  kv [-m MN] load [depth N] [stop-on-error] < FILE\n"
		"                                put every record of a dump file (standard\n"
		"                                input) into the store, N operations in\n"
		"                                flight (default 64, 1..4096); failed keys\n"
		"                                are named and the rest loaded, unless\n"
		"                                stop-on-error\n"
		"  help                          this text\n"
		"\n"
		"Options:\n"
		"  -j, --json   print JSON\n"
		"  -h, --help   this text\n"
		"  -V, --version  print the version and exit\n"
		"\n"
		"KV commands act on memory node MN's store, by default the only one\n"
		"attached.  On an array store KEY and VALUE are integers (decimal or\n"
		"0x hex) stored as 8 little-endian bytes; on a hash store they are\n"
		"the bytes given, @FILE a file's contents, and get writes the value's\n"
		"bytes to standard output as they are.\n"
		"\n"
		"The device is /dev/cider, or $CIDER_DEV when set.\n");
}

static void print_dev_text(const struct cider_ibdev_info *d)
{
	printf("  %-12s guid %016" PRIx64 "  ports %u  %s  atomics %s  rd_atom %u\n",
	       d->name, (uint64_t)d->node_guid, d->port_count,
	       d->flags & CIDER_IBDEV_F_ROCE ? "roce" : "ib/iwarp",
	       d->flags & CIDER_IBDEV_F_ATOMIC ? "yes" : "no",
	       d->max_qp_rd_atom);
}

/* Print @s as a JSON string: device names are chosen by whoever added them. */
void json_str(const char *s)
{
	cider_json_str(stdout, s, strlen(s));
}

static void print_dev_json(const struct cider_ibdev_info *d, bool last)
{
	printf("{\"name\":");
	json_str(d->name);
	printf(",\"node_guid\":\"%016" PRIx64 "\",\"ports\":%u,"
	       "\"roce\":%s,\"atomics\":%s,\"max_qp_rd_atom\":%u}%s",
	       (uint64_t)d->node_guid, d->port_count,
	       d->flags & CIDER_IBDEV_F_ROCE ? "true" : "false",
	       d->flags & CIDER_IBDEV_F_ATOMIC ? "true" : "false",
	       d->max_qp_rd_atom, last ? "" : ",");
}

/* Each feature bit by name (unknown ones as bitN), space or comma separated. */
static void print_features(unsigned long long f, bool json)
{
	const char *sep = json ? "" : " ";
	unsigned int bit;

	for (bit = 0; bit < 64; bit++) {
		const char *name = cider_feature_name(bit);

		if (!(f & (1ULL << bit)))
			continue;
		if (json)
			printf("%s\"", sep);
		else
			printf("%s", sep);
		if (name)
			printf("%s", name);
		else
			printf("bit%u", bit);
		printf("%s", json ? "\"" : "");
		sep = json ? "," : " ";
	}
}

static int cmd_info(int argc, char **argv)
{
	int fd;
	struct cider_info info;
	unsigned int i, n;
	int ret;

	(void)argv;
	if (argc) {
		fprintf(stderr, "ciderctl: info takes no arguments\n");
		return 2;
	}
	fd = ctl_dev();
	if (fd < 0)
		return EXIT_UNAVAILABLE;
	ret = cider_get_info(fd, &info);
	if (ret) {
		fprintf(stderr, "ciderctl: info: %s\n", cider_strerror(ret));
		return 1;
	}
	/* Never trust the strings to be terminated. */
	info.version[sizeof(info.version) - 1] = '\0';
	n = info.nr_devices < CIDER_INFO_MAX_DEVS ? info.nr_devices : CIDER_INFO_MAX_DEVS;
	for (i = 0; i < n; i++)
		info.devices[i].name[sizeof(info.devices[i].name) - 1] = '\0';

	if (json) {
		printf("{\"version\":");
		json_str(info.version);
		printf(",\"abi\":%u,\"features\":[", info.abi_version);
		print_features(cider_features(&info), true);
		printf("],\"nr_devices\":%u,\"devices\":[", info.nr_devices);
		for (i = 0; i < n; i++)
			print_dev_json(&info.devices[i], i + 1 == n);
		printf("]}\n");
		return 0;
	}
	printf("cider %s (ABI %u)\nfeatures:", info.version, info.abi_version);
	print_features(cider_features(&info), false);
	printf("%s\n", info.features ? "" : " (a module from before feature bits)");
	printf("rdma devices: %u%s\n", info.nr_devices,
	       info.nr_devices > n ? " (first ones shown)" : "");
	for (i = 0; i < n; i++)
		print_dev_text(&info.devices[i]);
	return 0;
}

int parse_uint(const char *s, unsigned int max, unsigned int *out)
{
	char err[128];

	return cider_num_parse_uint(s, 0, max, 0, out, err, sizeof(err));
}

/* A node's id: N or mnN. */
int parse_mn(const char *s, unsigned int *id)
{
	if (!strncmp(s, "mn", 2))
		s += 2;
	return parse_uint(s, 0x7fffffff, id);
}

static const char *store_index_name(unsigned int i)
{
	return i == CIDER_STORE_ARRAY ? "array" : i == CIDER_STORE_HASH ? "hash" : "?";
}

static const char *store_mode_name(unsigned int m)
{
	static const char *const names[] = { "?", "osync", "caslock", "mcs", "cider" };

	return m < sizeof(names) / sizeof(names[0]) ? names[m] : "?";
}

/* " (incarnation N)", or nothing from a module that does not say. */
static const char *incarnation_str(const struct cider_mn_info *mi, char *buf, size_t len)
{
	if (!mi->cn_incarnation)
		return "";
	snprintf(buf, len, " (incarnation %llu)", (unsigned long long)mi->cn_incarnation);
	return buf;
}

static const char *mn_state_name(unsigned int state)
{
	switch (state) {
	case CIDER_MN_LIVE:
		return "live";
	case CIDER_MN_RECONNECTING:
		return "reconnecting";
	case CIDER_MN_DEAD:
		return "dead";
	default:
		return "?";
	}
}

/* A node that was ever lost: how often it came back, and why it went. */
/* Which path a node's atomics take (0: a module from before the agent). */
static const char *atomics_name(unsigned int a)
{
	return a == CIDER_MN_ATOMICS_AGENT ? "agent" : "kernel";
}

static void print_reconnects(const struct cider_mn_info *mi)
{
	if (!mi->lost_reason && !mi->reconnect_attempts)
		return;
	printf("     reconnects: %u of %u attempts; last lost: %s", mi->reconnects,
	       mi->reconnect_attempts, strerror(-mi->lost_reason));
	if (mi->last_reason && mi->last_reason != mi->lost_reason)
		printf("; last attempt: %s", strerror(-mi->last_reason));
	putchar('\n');
}

static int cmd_status(int argc, char **argv)
{
	int fd;
	struct cider_mn_info mi;
	unsigned int id = 0, n = 0;
	char addr[64], inc[40];
	int ret;

	(void)argv;
	if (argc) {
		fprintf(stderr, "ciderctl: status takes no arguments\n");
		return 2;
	}
	if (json)
		printf("[");
	fd = ctl_dev();
	if (fd < 0)
		return EXIT_UNAVAILABLE;
	while (!(ret = cider_mn_info(fd, id, &mi))) {
		bool dead = mi.state == CIDER_MN_DEAD && mi.dead_reason;

		mi.ibdev[sizeof(mi.ibdev) - 1] = '\0';
		cider_format_addr(mi.family, mi.addr, mi.port, addr, sizeof(addr));
		if (json) {
			printf("%s{\"mn\":%u,\"addr\":\"%s\",\"state\":\"%s\",\"reason\":%d,"
			       "\"cn\":%u,\"incarnation\":%llu,\"reconnects\":%u,"
			       "\"reconnect_attempts\":%u,\"lost_reason\":%d,\"last_reason\":%d,"
			       "\"dev\":", n ? "," : "", mi.mn_id,
			       addr, mn_state_name(mi.state), mi.dead_reason, mi.cn_id,
			       (unsigned long long)mi.cn_incarnation, mi.reconnects,
			       mi.reconnect_attempts, mi.lost_reason, mi.last_reason);
			json_str(mi.ibdev);
			printf(",\"atomics\":\"%s\"", atomics_name(mi.atomics));
			printf(",\"channels\":%u,\"region_size\":%llu,\"layout\":%u,"
			       "\"store\":{\"index\":\"%s\",\"mode\":\"%s\",\"keys\":%llu,"
			       "\"max_key\":%u,\"max_value\":%u}}",
			       mi.nr_channels, (unsigned long long)mi.region_size,
			       mi.layout_version, store_index_name(mi.store_index),
			       store_mode_name(mi.store_mode),
			       (unsigned long long)mi.store_keys, mi.max_key_len, mi.max_value_len);
		} else {
			printf("mn%u: %s %s%s%s%s cn %u%s dev %s channels %u region %llu layout %u\n"
			       "     store: %s index, %s mode, %llu keys; atomics: %s\n",
			       mi.mn_id, addr, mn_state_name(mi.state),
			       dead ? " (" : "", dead ? strerror(-mi.dead_reason) : "",
			       dead ? ")" : "",
			       mi.cn_id, incarnation_str(&mi, inc, sizeof(inc)), mi.ibdev,
			       mi.nr_channels,
			       (unsigned long long)mi.region_size, mi.layout_version,
			       store_index_name(mi.store_index), store_mode_name(mi.store_mode),
			       (unsigned long long)mi.store_keys, atomics_name(mi.atomics));
			print_reconnects(&mi);
		}
		n++;
		id = mi.mn_id + 1;
	}
	if (json)
		printf("]\n");
	if (ret != -ENOENT) {
		fprintf(stderr, "ciderctl: status: %s\n", cider_strerror(ret));
		return 1;
	}
	return 0;
}

/* ---- stats: a node's counters by name (CIDER_IOC_MN_STATS) ---- */

struct node_stats {
	unsigned int mn, n;
	struct cider_stat *st;
};

/* Node @mn's counters into @ns (its buffer grown as needed): 0 or -errno. */
static int stats_read(int fd, unsigned int mn, struct node_stats *ns)
{
	unsigned int want = 0, tries;
	int ret = cider_mn_stats(fd, mn, NULL, &want);

	for (tries = 0; !ret && tries < 3; tries++) {
		/* Room for a few more, within what the kernel takes. */
		unsigned int room = want + 16 < CIDER_STATS_MAX ? want + 16 : CIDER_STATS_MAX;
		struct cider_stat *st = realloc(ns->st, room * sizeof(*st));
		unsigned int n = room;

		if (!st)
			return -ENOMEM;
		ns->st = st;
		ret = cider_mn_stats(fd, mn, st, &n);
		if (!ret && n <= room) {
			ns->mn = mn;
			ns->n = n;
			return 0;
		}
		want = n;
	}
	return ret ?: -EAGAIN;
}

static const char *stats_error(int err)
{
	if (err == -ENOTTY)
		return "this cider.ko has no counters interface (CIDER_FEAT_STATS, 0.4.0); "
		       "its counters are in /sys/kernel/debug/cider";
	return cider_strerror(err);
}

/* Which nodes: @one, or every attached one; their count, or -errno. */
static int stats_nodes(int fd, bool all, unsigned int one, unsigned int *ids, unsigned int max)
{
	struct cider_mn_info mi;
	unsigned int n = 0;
	int err;

	if (!all) {
		ids[0] = one;
		return 1;
	}
	for (err = cider_mn_info(fd, 0, &mi); !err; err = cider_mn_info(fd, mi.mn_id + 1, &mi)) {
		if (n == max) {
			fprintf(stderr, "ciderctl: stats: more than %u nodes: the first %u\n", max, max);
			return (int)n;
		}
		ids[n++] = mi.mn_id;
	}
	return err == -ENOENT ? (int)n : err;
}

/*
 * Counter @i of @ns per second since @before, matched by name; a counter
 * that went down started again (its node detached, another attached
 * with the id): counted from 0.
 */
static double stats_rate(const struct node_stats *ns, const struct node_stats *before,
			 unsigned int i, double secs)
{
	uint64_t v = ns->st[i].value, was = 0;
	unsigned int j;

	for (j = 0; j < before->n; j++) {
		if (!strcmp(before->st[j].name, ns->st[i].name)) {
			was = before->st[j].value;
			break;
		}
	}
	return (double)(v >= was ? v - was : v) / secs;
}

static void stats_print_text(const struct node_stats *ns, const struct node_stats *before,
			     double secs)
{
	unsigned int i;
	double r;

	if (before)
		printf("mn %u (per second, over %.2f s; counters that did not move left out)\n",
		       ns->mn, secs);
	else
		printf("mn %u\n", ns->mn);
	for (i = 0; i < ns->n; i++) {
		if (!before) {
			printf("  %-24s %" PRIu64 "\n", ns->st[i].name, (uint64_t)ns->st[i].value);
			continue;
		}
		r = stats_rate(ns, before, i, secs);
		if (r != 0)
			printf("  %-24s %.1f\n", ns->st[i].name, r);
	}
}

static void stats_print_json(const struct node_stats *ns, const struct node_stats *before,
			     double secs, bool first)
{
	unsigned int i;

	printf("%s{\"mn\":%u,\"%s\":{", first ? "" : ",", ns->mn, before ? "per_second" : "counters");
	for (i = 0; i < ns->n; i++) {
		printf("%s\"%s\":", i ? "," : "", ns->st[i].name);
		if (before)
			printf("%.3f", stats_rate(ns, before, i, secs));
		else
			printf("%" PRIu64, (uint64_t)ns->st[i].value);
	}
	printf("}}");
}

/*
 * Prometheus's text format: each counter once, cider_NAME_total, with a
 * sample per node labelled mn.  Names are [a-z0-9_] (the uapi says so),
 * valid metric names as they are.
 */
/* Is @name among the counters of the nodes before @k (printed already)? */
static bool stats_seen(const struct node_stats *ns, unsigned int k, const char *name)
{
	unsigned int j, i;

	for (j = 0; j < k; j++)
		for (i = 0; i < ns[j].n; i++)
			if (!strcmp(ns[j].st[i].name, name))
				return true;
	return false;
}

static void stats_print_prometheus(const struct node_stats *ns, unsigned int nn)
{
	unsigned int k, i, j, m;

	/* Each name once, wherever it first appears; then every node that has it. */
	for (k = 0; k < nn; k++) {
		for (i = 0; i < ns[k].n; i++) {
			const char *name = ns[k].st[i].name;

			if (stats_seen(ns, k, name))
				continue;
			printf("# HELP cider_%s_total CIDER counter %s (Documentation/kv.rst, \"Counters\").\n",
			       name, name);
			printf("# TYPE cider_%s_total counter\n", name);
			for (m = k; m < nn; m++)
				for (j = 0; j < ns[m].n; j++)
					if (!strcmp(ns[m].st[j].name, name))
						printf("cider_%s_total{mn=\"%u\"} %" PRIu64 "\n", name,
						       ns[m].mn, (uint64_t)ns[m].st[j].value);
		}
	}
}

struct stats_args {
	bool all, prometheus;
	unsigned int mn, interval, count;
};

static int stats_parse(int argc, char **argv, struct stats_args *a)
{
	char err[128];
	int i;

	*a = (struct stats_args){ .all = true };
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--prometheus")) {
			a->prometheus = true;
		} else if (!strcmp(argv[i], "-i") && i + 1 < argc) {
			if (cider_num_parse_uint(argv[++i], 1, 3600, 0, &a->interval, err, sizeof(err))) {
				fprintf(stderr, "ciderctl: stats: -i %s: %s\n", argv[i], err);
				return -1;
			}
		} else if (!strcmp(argv[i], "-c") && i + 1 < argc) {
			if (cider_num_parse_uint(argv[++i], 1, 1000000, 0, &a->count, err, sizeof(err))) {
				fprintf(stderr, "ciderctl: stats: -c %s: %s\n", argv[i], err);
				return -1;
			}
		} else if (a->all && !parse_mn(argv[i], &a->mn)) {
			a->all = false;
		} else {
			return -1;
		}
	}
	/* Rates need an interval; a scrape is one reading. */
	if ((a->count && !a->interval) || (a->prometheus && (a->interval || json)))
		return -1;
	return 0;
}

#define STATS_MAX_NODES	256

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Every node in @ids read into @ns: 0, or an exit status (said why). */
static int stats_read_all(int fd, const unsigned int *ids, unsigned int nn, struct node_stats *ns)
{
	unsigned int k;
	int err;

	for (k = 0; k < nn; k++) {
		err = stats_read(fd, ids[k], &ns[k]);
		if (err) {
			fprintf(stderr, "ciderctl: stats: mn%u: %s\n", ids[k], stats_error(err));
			return EXIT_UNAVAILABLE;
		}
	}
	return 0;
}

static void stats_print(const struct node_stats *ns, const struct node_stats *before,
			unsigned int nn, double secs)
{
	unsigned int k;

	if (json)
		printf(before ? "{\"interval_s\":%.3f,\"nodes\":[" : "[", secs);
	for (k = 0; k < nn; k++) {
		if (json)
			stats_print_json(&ns[k], before ? &before[k] : NULL, secs, k == 0);
		else
			stats_print_text(&ns[k], before ? &before[k] : NULL, secs);
	}
	if (json)
		printf(before ? "]}\n" : "]\n");
	fflush(stdout);
}

static int stats_run(int fd, const struct stats_args *a, const unsigned int *ids, unsigned int nn,
		     struct node_stats *cur, struct node_stats *prev)
{
	unsigned int round, k;
	double t0, t1;
	int ret;

	ret = stats_read_all(fd, ids, nn, cur);
	if (ret)
		return ret;
	if (!a->interval) {
		if (a->prometheus)
			stats_print_prometheus(cur, nn);
		else
			stats_print(cur, NULL, nn, 0);
		return 0;
	}
	t0 = now_s();
	for (round = 0; !a->count || round < a->count; round++) {
		memcpy(prev, cur, nn * sizeof(*cur));
		sleep(a->interval);
		/* Fresh buffers: prev keeps the last reading's. */
		for (k = 0; k < nn; k++)
			cur[k].st = NULL;
		ret = stats_read_all(fd, ids, nn, cur);
		t1 = now_s();
		if (!ret)
			stats_print(cur, prev, nn, t1 - t0);
		for (k = 0; k < nn; k++)
			free(prev[k].st);
		if (ret)
			return ret;
		t0 = t1;
	}
	return 0;
}

static int cmd_stats(int argc, char **argv)
{
	static struct node_stats cur[STATS_MAX_NODES], prev[STATS_MAX_NODES];
	unsigned int ids[STATS_MAX_NODES], k;
	struct stats_args a;
	int fd, n, ret;

	if (stats_parse(argc, argv, &a)) {
		fprintf(stderr, "ciderctl: usage: stats [MN] [-i SEC [-c COUNT]] | stats [MN] --prometheus\n");
		return EXIT_USAGE;
	}
	fd = ctl_dev();
	if (fd < 0)
		return EXIT_UNAVAILABLE;
	/* Which nodes, before any output: a failing device is an error, not "[]". */
	n = stats_nodes(fd, a.all, a.mn, ids, STATS_MAX_NODES);
	if (n < 0) {
		fprintf(stderr, "ciderctl: stats: %s\n", cider_strerror(n));
		return EXIT_UNAVAILABLE;
	}
	ret = stats_run(fd, &a, ids, (unsigned int)n, cur, prev);
	for (k = 0; k < (unsigned int)n; k++)
		free(cur[k].st);
	return ret;
}

/* The store KV commands act on: -m MN, or the only node attached. */
int kv_store(int fd, const char *arg, struct cider_mn_info *mi)
{
	char err[128];
	uint64_t id;
	int ret;

	if (arg) {
		if (!strncmp(arg, "mn", 2))
			arg += 2;
		if (cider_num_parse(arg, 0, UINT32_MAX, 0, &id, err, sizeof(err))) {
			fprintf(stderr, "ciderctl: kv: bad memory node '%s'\n", arg);
			return 2;
		}
		ret = cider_mn_info(fd, (unsigned int)id, mi);
		if (!ret && mi->mn_id != id)
			ret = -ENOENT;
	} else {
		struct cider_mn_info next;

		ret = cider_mn_info(fd, 0, mi);
		if (!ret && !cider_mn_info(fd, mi->mn_id + 1, &next)) {
			fprintf(stderr, "ciderctl: kv: several memory nodes attached: pick one with -m\n");
			return 2;
		}
	}
	if (ret) {
		fprintf(stderr, "ciderctl: kv: %s\n", ret == -ENOENT ?
			"no such memory node attached" : cider_strerror(ret));
		return 1;
	}
	return 0;
}

/* An array store's integer key or value as its 8 bytes. */
static int kv_int(const char *s, const char *what, uint64_t *out)
{
	char err[128];
	uint64_t v;

	if (cider_num_parse(s, 0, UINT64_MAX, CIDER_NUM_HEX, &v, err, sizeof(err))) {
		fprintf(stderr, "ciderctl: kv: the %s of an array store is an integer, not '%s'\n",
			what, s);
		return 2;
	}
	*out = htole64(v);
	return 0;
}

/* VALUE or @FILE for a hash store, in a buffer to free. */
static int kv_bytes(const char *arg, uint32_t max, void **buf, size_t *len)
{
	FILE *f;

	if (arg[0] != '@') {
		*len = strlen(arg);
		*buf = strdup(arg);
		return *buf ? 0 : 1;
	}
	f = fopen(arg + 1, "rb");
	if (!f) {
		fprintf(stderr, "ciderctl: kv: %s: %s\n", arg + 1, strerror(errno));
		return 1;
	}
	*buf = malloc((size_t)max + 1);
	*len = *buf ? fread(*buf, 1, (size_t)max + 1, f) : 0;
	if (*buf && ferror(f)) {
		fprintf(stderr, "ciderctl: kv: %s: read error\n", arg + 1);
		free(*buf);
		*buf = NULL;
	}
	fclose(f);
	return *buf ? 0 : 1;
}

static void kv_print_get(const struct cider_mn_info *mi, const char *key, const void *v,
			 size_t len)
{
	uint64_t n = 0;

	if (mi->store_index == CIDER_STORE_ARRAY) {
		memcpy(&n, v, len < 8 ? len : 8);
		if (json)
			printf("{\"key\":\"%s\",\"value\":%" PRIu64 "}\n", key, le64toh(n));
		else
			printf("%" PRIu64 "\n", le64toh(n));
		return;
	}
	if (json) {
		/* The value as a string when it is text, else in base64. */
		printf("{\"key\":");
		json_str(key);
		printf(",\"length\":%zu,", len);
		if (cider_utf8_ok(v, len)) {
			printf("\"value\":");
			cider_json_str(stdout, v, len);
		} else {
			printf("\"value_base64\":");
			cider_json_base64(stdout, v, len);
		}
		printf("}\n");
		return;
	}
	fwrite(v, 1, len, stdout);
}

/* The exit status for a KV operation's result (ciderctl(8), EXIT STATUS). */
int kv_status(int ret)
{
	switch (ret) {
	case 0:
		return 0;
	case -EINVAL: case -ERANGE: case -ENAMETOOLONG: case -E2BIG: case -EDOM:
		return EXIT_USAGE;
	case -ECOMM:
		return EXIT_UNKNOWN;
	case -ENOTCONN: case -ENODEV: case -ENXIO: case -ETIMEDOUT: case -ESTALE:
	case -EHOSTUNREACH: case -ESHUTDOWN:
		return EXIT_UNAVAILABLE;
	default:			/* absent, present, full, refused */
		return EXIT_REFUSED;
	}
}

static int kv_result(const char *op, const char *key, int ret)
{
	if (!ret)
		return 0;
	fprintf(stderr, "ciderctl: kv %s %s: %s\n", op, key, cider_kv_strerror(ret));
	return kv_status(ret);
}

static const struct {
	const char *name;
	unsigned int opcode;
	int nargs;
} kv_ops[] = {
	{ "get", CIDER_KV_GET, 1 },
	{ "put", CIDER_KV_PUT, 2 },
	{ "insert", CIDER_KV_INSERT, 2 },
	{ "update", CIDER_KV_UPDATE, 2 },
	{ "del", CIDER_KV_DELETE, 1 },
};

static int kv_run(int fd, const struct cider_mn_info *mi, unsigned int op, char **argv)
{
	bool array = mi->store_index == CIDER_STORE_ARRAY;
	const void *key = argv[0];
	size_t klen = strlen(argv[0]), vlen = 0;
	uint64_t ik, iv;
	void *val = NULL;
	int ret;

	if (array) {
		ret = kv_int(argv[0], "key", &ik);
		if (ret)
			return ret;
		key = &ik;
		klen = 8;
	}
	if (op == CIDER_KV_GET) {
		vlen = mi->max_value_len;
		val = malloc(vlen ? vlen : 1);
		if (!val)
			return 1;
		ret = cider_get(fd, mi->mn_id, key, klen, val, &vlen);
		if (!ret)
			kv_print_get(mi, argv[0], val, vlen);
	} else if (op == CIDER_KV_DELETE) {
		ret = cider_delete(fd, mi->mn_id, key, klen);
	} else {
		if (array) {
			ret = kv_int(argv[1], "value", &iv);
			if (ret)
				return ret;
			val = malloc(8);
			if (val)
				memcpy(val, &iv, 8);
			vlen = 8;
		} else if (kv_bytes(argv[1], mi->max_value_len, &val, &vlen)) {
			return 1;
		}
		if (!val)
			return 1;
		ret = op == CIDER_KV_PUT ? cider_put(fd, mi->mn_id, key, klen, val, vlen) :
		      op == CIDER_KV_INSERT ? cider_insert(fd, mi->mn_id, key, klen, val, vlen) :
		      cider_update(fd, mi->mn_id, key, klen, val, vlen);
	}
	free(val);
	return kv_result(kv_ops[op - 1].name, argv[0], ret);
}

static int cmd_kv(int argc, char **argv)
{
	int fd;
	const char *mn = NULL;
	struct cider_mn_info mi;
	unsigned int i;
	int ret;

	if (argc >= 2 && !strcmp(argv[0], "-m")) {
		mn = argv[1];
		argc -= 2;
		argv += 2;
	}
	if (argc && !strcmp(argv[0], "load"))
		return kv_load(mn, argc - 1, argv + 1);
	if (argc && !strcmp(argv[0], "scan"))
		return kv_scan(mn, argc - 1, argv + 1);
	if (argc && !strcmp(argv[0], "dump"))
		return kv_dump(mn, argc - 1, argv + 1);
	for (i = 0; argc && i < sizeof(kv_ops) / sizeof(kv_ops[0]); i++)
		if (!strcmp(argv[0], kv_ops[i].name))
			break;
	if (!argc || i == sizeof(kv_ops) / sizeof(kv_ops[0]) || argc - 1 != kv_ops[i].nargs) {
		fprintf(stderr, "ciderctl: usage: kv [-m MN] get|del KEY | "
			"kv [-m MN] put|insert|update KEY VALUE|@FILE | "
			"kv [-m MN] scan [PREFIX] [count N] | "
			"kv [-m MN] dump [PREFIX] [count N] > FILE | "
			"kv [-m MN] load [depth N] [stop-on-error] < FILE\n");
		return 2;
	}
	fd = ctl_dev();
	if (fd < 0)
		return EXIT_UNAVAILABLE;
	ret = kv_store(fd, mn, &mi);
	return ret ? ret : kv_run(fd, &mi, kv_ops[i].opcode, argv + 1);
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "info", cmd_info },
	{ "attach", cmd_attach },
	{ "detach", cmd_detach },
	{ "status", cmd_status },
	{ "stats", cmd_stats },
	{ "kv", cmd_kv },
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int i;
	int c;

	while ((c = getopt_long(argc, argv, "+jhV", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("ciderctl %s\n", CIDER_VERSION);
			return 0;
		default:
			/* getopt named the option; the whole text would bury it. */
			fprintf(stderr, "ciderctl: see ciderctl --help\n");
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[optind], "help")) {
		usage(stdout);
		return 0;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[optind], cmds[i].name))
			break;
	if (i == sizeof(cmds) / sizeof(cmds[0])) {
		fprintf(stderr, "ciderctl: unknown command '%s' (see ciderctl --help)\n",
			argv[optind]);
		return EXIT_USAGE;
	}

	return cmds[i].fn(argc - optind - 1, argv + optind + 1);
}
