// SPDX-License-Identifier: GPL-2.0
/*
 * cider-bench: measure CIDER.  "raw" drives one-sided operations through
 * io_uring on an attached memory node and reports throughput, latency and
 * work requests per doorbell, optionally next to perftest on the same
 * device in the same run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cider.h"
#include "jsonw.h"
#include "numparse.h"
#include "bench.h"
#include "cider-uring.h"
#include "layout.h"
#include "lathist.h"

#define MAX_THREADS 64

static const char *const op_names[] = { [CIDER_RAW_READ] = "read", [CIDER_RAW_WRITE] = "write",
					[CIDER_RAW_CAS] = "cas", [CIDER_RAW_FAA] = "faa" };

static struct {
	int op;
	unsigned int threads, depth, batch, size;
	double duration;
	int mn;			/* -1: first live one */
	const char *attach;
	bool json, perftest;
} opt = { .op = CIDER_RAW_READ, .threads = 1, .depth = 16, .batch = 1, .size = 8,
	  .duration = 5, .mn = -1 };

struct worker {
	pthread_t th;
	unsigned int idx, mn;
	int fd;
	__u64 base;		/* this thread's words in the data area */
	unsigned long long ops, errors;
	int first_err;
	struct lathist *lat;	/* per-command latency (kv's histogram) */
};

static volatile bool running, measuring;

double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: cider-bench raw [OPTIONS]\n"
"       cider-bench kv --help     (key-value operations on hot keys)\n"
"       cider-bench tear --help   (do 8-byte READs tear against CAS?)\n"
"       cider-bench --version\n"
"\n"
"Drive raw one-sided RDMA operations from cider.ko to a memory node through\n"
"io_uring (IORING_OP_URING_CMD), one thread per channel CPU, and report\n"
"throughput, per-command latency (p50, p99, p99.9, max, from submission to\n"
"completion; kv's histogram, see cider-bench(1))\n"
"and work requests per doorbell (from the module's counters).\n"
"\n"
"Options:\n"
"  --op read|write|cas|faa   operation (default read)\n"
"  --threads T               threads, each pinned to CPU t %% ncpu (default 1)\n"
"  --depth D                 commands in flight per thread (default 16)\n"
"  --batch N                 operations per command, 1..%d (default 1)\n"
"  --size B                  bytes per READ/WRITE, 1..%u (default 8)\n"
"  --duration S              seconds to measure, after 0.5 s warm-up (default 5)\n"
"  --mn ID                   memory node to use (default: the first live one)\n"
"  --attach ADDR:PORT        attach to this node for the run, detach after\n"
"  --compare-perftest        also run perftest (ib_read_bw, ib_write_bw,\n"
"                            ib_atomic_bw) with the same threads (-q), depth\n"
"                            (-t depth*batch), size and duration, both ends on\n"
"                            this machine against the node's address, on the\n"
"                            node's device; reports the ratio\n"
"  --json                    one JSON object on stdout\n"
"  -h, --help                this text\n"
"  -V, --version             print the version and exit (first argument)\n"
"\n"
"Needs root (CAP_SYS_ADMIN) and debugfs at /sys/kernel/debug for counters.\n",
		CIDER_RAW_MAX_OPS, CIDER_RAW_MAX_LEN);
}

static int parse_op(const char *s)
{
	int i;

	for (i = CIDER_RAW_READ; i <= CIDER_RAW_FAA; i++)
		if (!strcmp(s, op_names[i]))
			return i;
	return -1;
}

bool bench_parse_num(const char *s, unsigned long min, unsigned long max, unsigned int *out)
{
	char err[128];

	return !cider_num_parse_uint(s, (unsigned int)min, (unsigned int)max, 0, out, err,
				     sizeof(err));
}

static int parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "op", required_argument, NULL, 'o' },
		{ "threads", required_argument, NULL, 't' },
		{ "depth", required_argument, NULL, 'd' },
		{ "batch", required_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 's' },
		{ "duration", required_argument, NULL, 'D' },
		{ "mn", required_argument, NULL, 'm' },
		{ "attach", required_argument, NULL, 'a' },
		{ "compare-perftest", no_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int v;
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'o':
			opt.op = parse_op(optarg);
			if (opt.op < 0)
				goto bad;
			break;
		case 't':
			if (!bench_parse_num(optarg, 1, MAX_THREADS, &opt.threads))
				goto bad;
			break;
		case 'd':
			if (!bench_parse_num(optarg, 1, 4096, &opt.depth))
				goto bad;
			break;
		case 'b':
			if (!bench_parse_num(optarg, 1, CIDER_RAW_MAX_OPS, &opt.batch))
				goto bad;
			break;
		case 's':
			if (!bench_parse_num(optarg, 1, CIDER_RAW_MAX_LEN, &opt.size))
				goto bad;
			break;
		case 'D':
			opt.duration = strtod(optarg, &end);
			if (*end || opt.duration <= 0 || opt.duration > 3600)
				goto bad;
			break;
		case 'm':
			if (!bench_parse_num(optarg, 0, 0x7fffffff, &v))
				goto bad;
			opt.mn = (int)v;
			break;
		case 'a': opt.attach = optarg; break;
		case 'P': opt.perftest = true; break;
		case 'j': opt.json = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "cider-bench: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (opt.op >= CIDER_RAW_CAS)
		opt.size = 8;
	if ((unsigned long)opt.batch * opt.size > CIDER_RAW_MAX_BYTES) {
		fprintf(stderr, "cider-bench: --batch x --size exceeds %u bytes\n",
			CIDER_RAW_MAX_BYTES);
		return 2;
	}
	return 0;
bad:
	fprintf(stderr, "cider-bench: bad value '%s'\n", optarg);
	usage(stderr);
	return 2;
}

static void fill_ops(const struct worker *w, struct cider_raw_op *ops, char *buf)
{
	unsigned int i;

	for (i = 0; i < opt.batch; i++) {
		struct cider_raw_op *op = &ops[i];

		memset(op, 0, sizeof(*op));
		op->opcode = opt.op;
		op->len = opt.size;
		op->remote = w->base + (__u64)i * ((opt.size + 63) & ~63u);
		if (opt.op <= CIDER_RAW_WRITE)
			op->local = (__u64)(uintptr_t)(buf + (size_t)i * opt.size);
		else
			op->swap_add = opt.op == CIDER_RAW_FAA;
	}
}

static void *worker_main(void *p)
{
	struct worker *w = p;
	struct cider_raw_op (*ops)[CIDER_RAW_MAX_OPS];
	struct io_uring ring;
	double *t_sub;
	char *buf;
	unsigned int k, inflight = 0;
	cpu_set_t cpus;

	/* Pin: the command is issued on this CPU, so it uses this CPU's channel. */
	CPU_ZERO(&cpus);
	CPU_SET(w->idx % sysconf(_SC_NPROCESSORS_ONLN), &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);

	ops = calloc(opt.depth, sizeof(*ops));
	t_sub = calloc(opt.depth, sizeof(*t_sub));
	buf = calloc(opt.depth, (size_t)opt.batch * opt.size);
	if (!ops || !t_sub || !buf || cider_uring_init(&ring, opt.depth)) {
		w->first_err = -ENOMEM;
		return NULL;
	}
	for (k = 0; k < opt.depth; k++)
		fill_ops(w, ops[k], buf + (size_t)k * opt.batch * opt.size);
	for (k = 0; k < opt.depth; k++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		cider_uring_prep_raw(sqe, w->fd, w->mn, ops[k], opt.batch);
		io_uring_sqe_set_data64(sqe, k);
		t_sub[k] = bench_now();
		inflight++;
	}
	io_uring_submit(&ring);
	while (inflight) {
		struct io_uring_cqe *cqe;
		double t;

		if (io_uring_wait_cqe(&ring, &cqe))
			break;
		k = (unsigned int)io_uring_cqe_get_data64(cqe);
		t = bench_now();
		if (cqe->res && !w->first_err)
			w->first_err = cqe->res;
		if (measuring) {
			lh_add(w->lat, (uint64_t)((t - t_sub[k]) * 1e9));
			w->ops += opt.batch;
			w->errors += cqe->res != 0;
		}
		io_uring_cqe_seen(&ring, cqe);
		inflight--;
		if (running && !cqe->res) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			fill_ops(w, ops[k], buf + (size_t)k * opt.batch * opt.size);
			cider_uring_prep_raw(sqe, w->fd, w->mn, ops[k], opt.batch);
			io_uring_sqe_set_data64(sqe, k);
			t_sub[k] = bench_now();
			io_uring_submit(&ring);
			inflight++;
		}
	}
	io_uring_queue_exit(&ring);
	free(ops);
	free(t_sub);
	free(buf);
	return NULL;
}

/* The number after @key (" name=") in a debugfs line, 0 if none. */
static unsigned long long line_counter(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	uint64_t v;
	char err[96];

	if (!p)
		return 0;
	p += strlen(key);
	return cider_num_parse_n(p, strspn(p, "0123456789"), 0, UINT64_MAX, 0, &v, err,
				 sizeof(err)) ? 0 : v;
}

/* Totals from /sys/kernel/debug/cider/mnN: doorbells and work requests. */
int bench_read_counters(unsigned int mn, unsigned long long *doorbells, unsigned long long *wrs)
{
	char path[64], line[1024];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/cider/mn%u", mn);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "total ", 6))
			continue;
		*doorbells = line_counter(line, " doorbells=");
		*wrs = line_counter(line, " wrs=");
	}
	fclose(f);
	return 0;
}

/* Run a command with a time limit; its stdout in @out. */
static int run_capture(char *const argv[], char *out, size_t len, unsigned int secs)
{
	int pfd[2], status;
	size_t got = 0;
	pid_t pid;
	ssize_t r;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		alarm(secs);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	while (got + 1 < len && (r = read(pfd[0], out + got, len - got - 1)) > 0)
		got += (size_t)r;
	out[got] = '\0';
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* perftest's result line: bytes, iterations, peak, average, Mpps. */
static double perftest_mpps(char *out)
{
	double mpps = -1;
	char *line;

	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		double b, it, pk, av, rate;

		if (sscanf(line, "%lf %lf %lf %lf %lf", &b, &it, &pk, &av, &rate) == 5)
			mpps = rate;
	}
	return mpps;
}

/*
 * perftest's message rate for the same operation: server and client on
 * this machine over rdma_cm (-R), the client against the node's address.
 * A client that connects before its server listens fails at once
 * ("Unexpected CM event"): nothing tells from outside when an rdma_cm
 * port listens, so every attempt starts a fresh server on a fresh port,
 * gives it longer, and the comparison fails only after five attempts.
 */
static double run_perftest(const char *dev, const char *host, char *cmd, size_t cmdlen)
{
	char size[16], dur[16], qps[16], depth[16], port[16], out[8192];
	const char *tool = opt.op == CIDER_RAW_READ ? "ib_read_bw" :
			   opt.op == CIDER_RAW_WRITE ? "ib_write_bw" : "ib_atomic_bw";
	const char *atomic = opt.op == CIDER_RAW_CAS ? "CMP_AND_SWAP" : "FETCH_AND_ADD";
	char *args[24];
	int n = 0, i, attempt, port_arg;
	double mpps = -1;
	pid_t srv;

	snprintf(size, sizeof(size), "%u", opt.size);
	snprintf(dur, sizeof(dur), "%u", (unsigned int)(opt.duration + 0.999));
	snprintf(qps, sizeof(qps), "%u", opt.threads);
	snprintf(depth, sizeof(depth), "%u", opt.depth * opt.batch > 8192 ? 8192 :
		 opt.depth * opt.batch);
	args[n++] = (char *)tool;
	args[n++] = "-d"; args[n++] = (char *)dev;
	args[n++] = "-R"; args[n++] = "-F";
	args[n++] = "-p"; port_arg = n; args[n++] = port;
	args[n++] = "-D"; args[n++] = dur;
	args[n++] = "-q"; args[n++] = qps;
	args[n++] = "-t"; args[n++] = depth;
	if (opt.op <= CIDER_RAW_WRITE) {
		args[n++] = "-s"; args[n++] = size;
	} else {
		args[n++] = "-A"; args[n++] = (char *)atomic;
	}
	args[n] = NULL;

	for (attempt = 0; attempt < 5 && mpps < 0; attempt++) {
		snprintf(port, sizeof(port), "%u", 20000 + (getpid() * 5 + attempt) % 10000);
		args[port_arg] = port;
		args[n] = NULL;
		cmd[0] = '\0';
		for (i = 0; i < n; i++)
			snprintf(cmd + strlen(cmd), cmdlen - strlen(cmd), "%s%s", i ? " " : "",
				 args[i]);
		srv = fork();
		if (srv < 0)
			return -1;
		if (srv == 0) {
			int nul = open("/dev/null", 1);

			dup2(nul, 1);
			dup2(nul, 2);
			alarm((unsigned int)opt.duration + 60);
			execvp(tool, args);
			_exit(127);
		}
		usleep(500000 * (attempt + 1));		/* let the server listen */
		args[n] = (char *)host;
		args[n + 1] = NULL;
		if (run_capture(args, out, sizeof(out), (unsigned int)opt.duration + 60) == 0)
			mpps = perftest_mpps(out);
		if (mpps < 0)
			fprintf(stderr, "cider-bench: %s attempt %d failed:\n%s\n", tool,
				attempt + 1, out);
		kill(srv, SIGTERM);
		waitpid(srv, NULL, 0);
	}
	return mpps;
}

static int pick_mn(int fd, struct cider_mn_info *mi, bool *attached)
{
	struct cider_attach at;
	unsigned int id = 0;
	int ret;

	*attached = false;
	if (opt.attach) {
		ret = cider_attach(fd, opt.attach, 0, 0, &at);
		if (ret) {
			fprintf(stderr, "cider-bench: attach %s: %s\n", opt.attach, cider_strerror(ret));
			return ret;
		}
		*attached = true;
		opt.mn = (int)at.mn_id;
	}
	if (opt.mn >= 0) {
		ret = cider_mn_info(fd, (unsigned int)opt.mn, mi);
		if (!ret && mi->mn_id != (unsigned int)opt.mn)
			ret = -ENOENT;
	} else {
		while (!(ret = cider_mn_info(fd, id, mi)) && mi->state != CIDER_MN_LIVE)
			id = mi->mn_id + 1;
	}
	if (ret)
		fprintf(stderr, "cider-bench: no %smemory node%s (ciderctl attach ADDR:PORT)\n",
			opt.mn >= 0 ? "such " : "live ", opt.mn >= 0 ? "" : " attached");
	return ret;
}

static int cmd_raw(void)
{
	static struct lathist lat;
	unsigned long long ops = 0, errors = 0, db0 = 0, wr0 = 0, db1 = 0, wr1 = 0;
	struct worker w[MAX_THREADS] = {};
	struct cider_mn_sb sb;
	struct cider_mn_info mi;
	struct cider_raw_op op;
	double t0, elapsed, mops, wpd, pt = -1;
	struct lh_summary m;
	char host[64], cmd[512] = "", *colon;
	bool attached;
	unsigned int i;
	int fd, ret = 1, err = 0;

	fd = cider_open();
	if (fd < 0) {
		fprintf(stderr, "cider-bench: %s\n", cider_strerror(fd));
		return 1;
	}
	if (pick_mn(fd, &mi, &attached))
		goto out;
	memset(&op, 0, sizeof(op));
	op.opcode = CIDER_RAW_READ;
	op.len = sizeof(sb);
	op.local = (__u64)(uintptr_t)&sb;
	err = cider_raw(fd, mi.mn_id, &op, 1);
	if (err)
		goto fail;
	if ((__u64)opt.threads * opt.batch * ((opt.size + 63) & ~63u) > sb.data_size) {
		fprintf(stderr, "cider-bench: the node's data area is too small for this run\n");
		goto out;
	}
	for (i = 0; i < opt.threads; i++) {
		w[i].idx = i;
		w[i].fd = fd;
		w[i].mn = mi.mn_id;
		w[i].base = sb.data_off + (__u64)i * opt.batch * ((opt.size + 63) & ~63u);
		w[i].lat = calloc(1, sizeof(*w[i].lat));
		if (!w[i].lat)
			goto out;
	}
	running = true;
	for (i = 0; i < opt.threads; i++)
		pthread_create(&w[i].th, NULL, worker_main, &w[i]);
	usleep(500000);				/* warm-up: credits settle */
	bench_read_counters(mi.mn_id, &db0, &wr0);
	measuring = true;
	t0 = bench_now();
	while ((elapsed = bench_now() - t0) < opt.duration) {
		usleep(opt.duration - elapsed < 1 ? (useconds_t)((opt.duration - elapsed) * 1e6) : 1000000);
		for (ops = 0, i = 0; i < opt.threads; i++)
			ops += w[i].ops;
		if (!opt.json && bench_now() - t0 < opt.duration)
			fprintf(stderr, "  %.0f s: %llu ops, %.4f Mops/s\n", bench_now() - t0, ops,
				ops / (bench_now() - t0) / 1e6);
	}
	measuring = false;
	elapsed = bench_now() - t0;
	bench_read_counters(mi.mn_id, &db1, &wr1);
	running = false;
	for (i = 0; i < opt.threads; i++)
		pthread_join(w[i].th, NULL);
	for (ops = 0, i = 0; i < opt.threads; i++) {
		ops += w[i].ops;
		errors += w[i].errors;
		err = err ?: w[i].first_err;
		lh_merge(&lat, w[i].lat);
		free(w[i].lat);
	}
	lh_summarize(&lat, &m);
	if (err)
		goto fail;
	mops = ops / elapsed / 1e6;
	wpd = db1 > db0 ? (double)(wr1 - wr0) / (db1 - db0) : 0;

	if (opt.perftest) {
		cider_format_addr(mi.family, mi.addr, mi.port, host, sizeof(host));
		colon = strrchr(host, ':');
		*colon = '\0';
		pt = run_perftest(mi.ibdev, host[0] == '[' ? host + 1 : host, cmd, sizeof(cmd));
		if (host[0] == '[')
			host[strlen(host) - 1] = '\0';
	}
	if (opt.json) {
		/* The kv report's names for the same quantities (kvreport.c). */
		/* latency first: its own "p50_us" must not be the line's last (kvreport.c). */
		printf("{\"bench\":\"raw\",\"op\":\"%s\",\"threads\":%u,\"depth\":%u,\"batch\":%u,"
		       "\"size\":%u,\"latency\":{", op_names[opt.op], opt.threads, opt.depth,
		       opt.batch, opt.size);
		lh_json(stdout, "all", &lat);
		printf("},\"seconds\":%.3f,\"ops\":%llu,\"throughput_mops\":%.6f,"
		       "\"p50_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f,"
		       "\"wr_per_doorbell\":%.2f,\"doorbells\":%llu,\"wrs\":%llu,\"mn\":%u,"
		       "\"device\":", elapsed, ops, mops, m.p50 / 1e3, m.p99 / 1e3, m.p999 / 1e3,
		       m.max / 1e3, wpd, db1 - db0, wr1 - wr0, mi.mn_id);
		cider_json_str(stdout, mi.ibdev, strlen(mi.ibdev));
		if (opt.perftest) {
			printf(",\"perftest_throughput_mops\":%.6f,\"ratio\":%.3f,"
			       "\"perftest_cmd\":", pt, pt > 0 ? mops / pt : 0);
			cider_json_str(stdout, cmd, strlen(cmd));
		}
		printf("}\n");
	} else {
		printf("%s x%u, %u threads, depth %u, batch %u, %.1f s on %s (mn%u):\n",
		       op_names[opt.op], opt.size, opt.threads, opt.depth, opt.batch, elapsed,
		       mi.ibdev, mi.mn_id);
		printf("  %.4f Mops/s  p50 %.1f us  p99 %.1f us  p99.9 %.1f us  max %.1f us  %.2f WRs/doorbell\n",
		       mops, m.p50 / 1e3, m.p99 / 1e3, m.p999 / 1e3, m.max / 1e3, wpd);
		if (opt.perftest)
			printf("  perftest: %.4f Mops/s  ratio %.2f  (%s)\n", pt,
			       pt > 0 ? mops / pt : 0, cmd);
	}
	ret = pt < 0 && opt.perftest ? 1 : 0;
	goto out;
fail:
	fprintf(stderr, "cider-bench: %s: %s\n", op_names[opt.op], cider_strerror(err));
out:
	if (attached)
		cider_detach(fd, mi.mn_id);
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	int ret;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("cider-bench %s\n", CIDER_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "kv"))
		return cmd_kv(argc - 1, argv + 1);
	if (!strcmp(argv[1], "tear"))
		return cmd_tear(argc - 1, argv + 1);
	if (strcmp(argv[1], "raw")) {
		fprintf(stderr, "cider-bench: unknown benchmark '%s' (have: raw, kv, tear)\n",
			argv[1]);
		return 2;
	}
	ret = parse_args(argc - 1, argv + 1);
	if (ret)
		return ret;
	signal(SIGPIPE, SIG_IGN);
	return cmd_raw();
}
