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
#include <sys/ioctl.h>
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
	unsigned int atomics;	/* CIDER_ATTACH_ATOMICS_*, both bits for "both"; 0: none */
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
"  --atomics kernel|agent|both\n"
"                            with --attach: attach with the node's atomics on\n"
"                            the kernel's queue pairs (kernel) or through\n"
"                            cider-agentd (agent), and report the path measured;\n"
"                            both: the run with kernel, then with agent (each\n"
"                            attached, measured, detached), and their ratios\n"
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

#define ATOMICS_BOTH	(CIDER_ATTACH_ATOMICS_KERNEL | CIDER_ATTACH_ATOMICS_AGENT)

/* A path's name: "kernel" or "agent", for CIDER_ATTACH_ATOMICS_* and CIDER_MN_ATOMICS_* alike. */
static const char *atomics_name(unsigned int path, bool mn)
{
	if (path == (mn ? CIDER_MN_ATOMICS_KERNEL : CIDER_ATTACH_ATOMICS_KERNEL))
		return "kernel";
	if (path == (mn ? CIDER_MN_ATOMICS_AGENT : CIDER_ATTACH_ATOMICS_AGENT))
		return "agent";
	return mn && !path ? "unknown" : "?";
}

static int parse_atomics(const char *s)
{
	if (!strcmp(s, "kernel"))
		opt.atomics = CIDER_ATTACH_ATOMICS_KERNEL;
	else if (!strcmp(s, "agent"))
		opt.atomics = CIDER_ATTACH_ATOMICS_AGENT;
	else if (!strcmp(s, "both"))
		opt.atomics = ATOMICS_BOTH;
	else {
		fprintf(stderr, "cider-bench: bad value '%s' for --atomics (kernel, agent or both)\n",
			s);
		return -1;
	}
	return 0;
}

/* What the options say together; 0 or 2. */
static int check_args(void)
{
	if (opt.atomics && !opt.attach) {
		fprintf(stderr, "cider-bench: --atomics needs --attach ADDR:PORT (the path is chosen when attaching)\n");
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
		{ "atomics", required_argument, NULL, 'A' },
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
		case 'A':
			if (parse_atomics(optarg))
				return 2;
			break;
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
	return check_args();
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

/* ---- which path the node's verbs took: its counters by name (CIDER_IOC_MN_STATS) ---- */

static void paths_take(struct bench_paths *c, const char *name, unsigned long long v)
{
	static const char *const chan[] = { "chan_read", "chan_write", "chan_cas", "chan_faa" };
	unsigned int k;

	for (k = 0; k < 4; k++)
		if (!strcmp(name, chan[k]))
			c->chan[k] = v;
	if (!strcmp(name, "agent_batches")) {
		c->agent_batches = v;
	} else if (!strcmp(name, "agent_verbs")) {
		c->agent_verbs = v;
		c->have = true;		/* a module with the atomics agent */
	} else if (!strcmp(name, "agent_failed")) {
		c->agent_failed = v;
	}
}

int bench_read_paths(int fd, unsigned int mn, struct bench_paths *c)
{
	struct cider_stat *st;
	unsigned int nr = 0, room, i;
	char name[CIDER_STAT_NAME_LEN + 1];
	int ret;

	memset(c, 0, sizeof(*c));
	ret = cider_mn_stats(fd, mn, NULL, &nr);
	if (ret)
		return ret;
	room = nr;
	st = calloc(room ? room : 1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	ret = cider_mn_stats(fd, mn, st, &nr);
	for (i = 0; !ret && i < nr && i < room; i++) {
		memcpy(name, st[i].name, CIDER_STAT_NAME_LEN);
		name[CIDER_STAT_NAME_LEN] = '\0';
		paths_take(c, name, st[i].value);
	}
	free(st);
	if (ret)
		c->have = false;
	return ret;
}

/* @d = @b - @a, counter by counter; have only if both had them. */
void bench_paths_sub(struct bench_paths *d, const struct bench_paths *a,
		     const struct bench_paths *b)
{
	unsigned int k;

	d->have = a->have && b->have;
	for (k = 0; k < 4; k++)
		d->chan[k] = b->chan[k] - a->chan[k];
	d->agent_batches = b->agent_batches - a->agent_batches;
	d->agent_verbs = b->agent_verbs - a->agent_verbs;
	d->agent_failed = b->agent_failed - a->agent_failed;
}

/* ---- raw: one measurement ---- */

/* What one measurement ran on and what it found. */
struct raw_run {
	unsigned int atomics;		/* the path asked for: CIDER_ATTACH_ATOMICS_*, or 0 */
	struct cider_mn_info mi;
	struct lathist lat;
	struct lh_summary m;
	unsigned long long ops, errors, db, wrs;
	struct bench_paths paths;	/* the run's counts (with --atomics only) */
	double elapsed, mops, wpd, pt;
	char cmd[512];
};

/* Attach --attach; with @flags (CIDER_ATTACH_ATOMICS_*) through the raw ioctl, as ciderctl does. */
static int raw_attach(int fd, unsigned int flags, struct cider_attach *at)
{
	if (!flags)
		return cider_attach(fd, opt.attach, 0, 0, at);
	memset(at, 0, sizeof(*at));
	at->size = sizeof(*at);
	if (cider_parse_addr(opt.attach, at))
		return -EINVAL;
	at->flags = flags;
	return ioctl(fd, CIDER_IOC_ATTACH, at) < 0 ? -errno : 0;
}

/* Why an attach with --atomics may have failed, from its errno. */
static const char *attach_hint(unsigned int flags, int err)
{
	if (flags == CIDER_ATTACH_ATOMICS_AGENT && err == -ENXIO)
		return " (no atomics agent registered: is cider-agentd running?)";
	if (flags == CIDER_ATTACH_ATOMICS_AGENT && err == -EOPNOTSUPP)
		return " (a store with a key cannot use the atomics agent yet)";
	if (flags == CIDER_ATTACH_ATOMICS_KERNEL && err == -EOPNOTSUPP)
		return " (does the node's device refuse atomics posted from the kernel? see the kernel log)";
	return "";
}

static int pick_mn(int fd, unsigned int flags, struct cider_mn_info *mi, bool *attached)
{
	struct cider_attach at;
	unsigned int id = 0;
	int ret;

	*attached = false;
	if (opt.attach) {
		ret = raw_attach(fd, flags, &at);
		if (ret) {
			fprintf(stderr, "cider-bench: attach %s%s%s: %s%s\n", opt.attach,
				flags ? " atomics " : "", flags ? atomics_name(flags, false) : "",
				cider_strerror(ret), attach_hint(flags, ret));
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

/*
 * With --atomics: do the node's atomics take the path asked for
 * (cider_mn_info.atomics, read back)?  0, or 1 when not (said why): a
 * measurement of the other path must not be reported as this one's.
 */
static int raw_check_path(int fd, const struct raw_run *r, const char *when)
{
	unsigned int want = r->atomics == CIDER_ATTACH_ATOMICS_AGENT ? CIDER_MN_ATOMICS_AGENT :
				      CIDER_MN_ATOMICS_KERNEL;
	struct cider_mn_info mi;
	int ret;

	if (!r->atomics)
		return 0;
	ret = cider_mn_info(fd, r->mi.mn_id, &mi);
	if (!ret && mi.mn_id != r->mi.mn_id)
		ret = -ENOENT;
	if (ret) {
		fprintf(stderr, "cider-bench: mn%u %s: %s\n", r->mi.mn_id, when, cider_strerror(ret));
		return 1;
	}
	if (mi.atomics == want)
		return 0;
	fprintf(stderr, "cider-bench: mn%u's atomics take the %s path %s, not the %s path asked for: no report\n",
		r->mi.mn_id, atomics_name(mi.atomics, true), when, atomics_name(want, true));
	return 1;
}

/* The node's superblock into @sb: 0, -errno (the READ failed), or 1 (said why). */
static int raw_superblock(int fd, const struct cider_mn_info *mi, struct cider_mn_sb *sb)
{
	struct cider_raw_op op;
	int err;

	memset(&op, 0, sizeof(op));
	op.opcode = CIDER_RAW_READ;
	op.len = sizeof(*sb);
	op.local = (__u64)(uintptr_t)sb;
	err = cider_raw(fd, mi->mn_id, &op, 1);
	if (err)
		return err;
	if ((__u64)opt.threads * opt.batch * ((opt.size + 63) & ~63u) > sb->data_size) {
		fprintf(stderr, "cider-bench: the node's data area is too small for this run\n");
		return 1;
	}
	return 0;
}

static int raw_workers_init(struct worker *w, int fd, unsigned int mn,
			    const struct cider_mn_sb *sb)
{
	unsigned int i;

	for (i = 0; i < opt.threads; i++) {
		w[i].idx = i;
		w[i].fd = fd;
		w[i].mn = mn;
		w[i].base = sb->data_off + (__u64)i * opt.batch * ((opt.size + 63) & ~63u);
		w[i].lat = calloc(1, sizeof(*w[i].lat));
		if (!w[i].lat) {
			while (i--)
				free(w[i].lat);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Wait out the measurement from @t0, progress on stderr each second; the seconds it took. */
static double raw_progress(const struct worker *w, double t0)
{
	unsigned long long ops;
	double elapsed;
	unsigned int i;

	while ((elapsed = bench_now() - t0) < opt.duration) {
		usleep(opt.duration - elapsed < 1 ? (useconds_t)((opt.duration - elapsed) * 1e6) : 1000000);
		for (ops = 0, i = 0; i < opt.threads; i++)
			ops += w[i].ops;
		if (!opt.json && bench_now() - t0 < opt.duration)
			fprintf(stderr, "  %.0f s: %llu ops, %.4f Mops/s\n", bench_now() - t0, ops,
				ops / (bench_now() - t0) / 1e6);
	}
	measuring = false;
	return bench_now() - t0;
}

/* The workers' sums into @r; their first error, or 0. */
static int raw_collect(struct worker *w, struct raw_run *r)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i < opt.threads; i++) {
		r->ops += w[i].ops;
		r->errors += w[i].errors;
		err = err ?: w[i].first_err;
		lh_merge(&r->lat, w[i].lat);
		free(w[i].lat);
	}
	lh_summarize(&r->lat, &r->m);
	return err;
}

/* Run the load on @r's node: warm-up, opt.duration measured.  0 or -errno. */
static int raw_measure(int fd, const struct cider_mn_sb *sb, struct raw_run *r)
{
	unsigned long long db0 = 0, wr0 = 0, db1 = 0, wr1 = 0;
	struct worker w[MAX_THREADS] = {};
	struct bench_paths p0, p1;
	unsigned int i;
	int err;

	err = raw_workers_init(w, fd, r->mi.mn_id, sb);
	if (err)
		return err;
	running = true;
	for (i = 0; i < opt.threads; i++)
		pthread_create(&w[i].th, NULL, worker_main, &w[i]);
	usleep(500000);				/* warm-up: credits settle */
	bench_read_counters(r->mi.mn_id, &db0, &wr0);
	if (r->atomics)
		bench_read_paths(fd, r->mi.mn_id, &p0);
	measuring = true;
	r->elapsed = raw_progress(w, bench_now());
	bench_read_counters(r->mi.mn_id, &db1, &wr1);
	if (r->atomics) {
		bench_read_paths(fd, r->mi.mn_id, &p1);
		bench_paths_sub(&r->paths, &p0, &p1);
	}
	running = false;
	for (i = 0; i < opt.threads; i++)
		pthread_join(w[i].th, NULL);
	err = raw_collect(w, r);
	if (err)
		return err;
	r->mops = r->ops / r->elapsed / 1e6;
	r->wpd = db1 > db0 ? (double)(wr1 - wr0) / (db1 - db0) : 0;
	r->db = db1 - db0;
	r->wrs = wr1 - wr0;
	return 0;
}

static void raw_perftest(struct raw_run *r)
{
	char host[64], *colon;

	cider_format_addr(r->mi.family, r->mi.addr, r->mi.port, host, sizeof(host));
	colon = strrchr(host, ':');
	*colon = '\0';
	if (host[0] == '[')			/* "[v6]": perftest takes the bare address */
		host[strlen(host) - 1] = '\0';
	r->pt = run_perftest(r->mi.ibdev, host[0] == '[' ? host + 1 : host, r->cmd, sizeof(r->cmd));
}

/*
 * One measurement on the node --mn or --attach names (attached with
 * @flags, and detached after): 0 with @r filled in, or 1 (said why).
 */
static int raw_one(int fd, unsigned int flags, struct raw_run *r)
{
	struct cider_mn_sb sb;
	bool attached;
	int ret = 1, err;

	memset(r, 0, sizeof(*r));
	r->atomics = flags;
	r->pt = -1;
	if (pick_mn(fd, flags, &r->mi, &attached) || raw_check_path(fd, r, "after the attach"))
		goto out;
	if (flags && !opt.json)
		fprintf(stderr, "  atomics %s: mn%u on %s\n", atomics_name(flags, false), r->mi.mn_id,
			r->mi.ibdev);
	err = raw_superblock(fd, &r->mi, &sb);
	if (!err)
		err = raw_measure(fd, &sb, r);
	if (err < 0)
		fprintf(stderr, "cider-bench: %s: %s\n", op_names[opt.op], cider_strerror(err));
	if (err || raw_check_path(fd, r, "after the run"))
		goto out;
	if (opt.perftest)
		raw_perftest(r);
	ret = 0;
out:
	if (attached) {
		err = cider_detach(fd, r->mi.mn_id);
		if (err && flags) {
			fprintf(stderr, "cider-bench: detach mn%u: %s\n", r->mi.mn_id,
				cider_strerror(err));
			ret = 1;
		}
	}
	return ret;
}

/* ---- raw: the report ---- */

/* A run as one JSON object, without a newline: kvreport.c's names for the same quantities. */
static void raw_json_run(const struct raw_run *r)
{
	const struct bench_paths *p = &r->paths;
	const struct lh_summary *m = &r->m;

	printf("{\"bench\":\"raw\",");
	if (r->atomics)
		printf("\"atomics\":\"%s\",", atomics_name(r->mi.atomics, true));
	/* latency first: its own "p50_us" must not be the line's last (kvreport.c). */
	printf("\"op\":\"%s\",\"threads\":%u,\"depth\":%u,\"batch\":%u,"
	       "\"size\":%u,\"latency\":{", op_names[opt.op], opt.threads, opt.depth,
	       opt.batch, opt.size);
	lh_json(stdout, "all", &r->lat);
	printf("},\"seconds\":%.3f,\"ops\":%llu,\"throughput_mops\":%.6f,"
	       "\"p50_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f,"
	       "\"wr_per_doorbell\":%.2f,\"doorbells\":%llu,\"wrs\":%llu,\"mn\":%u,"
	       "\"device\":", r->elapsed, r->ops, r->mops, m->p50 / 1e3, m->p99 / 1e3,
	       m->p999 / 1e3, m->max / 1e3, r->wpd, r->db, r->wrs, r->mi.mn_id);
	cider_json_str(stdout, r->mi.ibdev, strlen(r->mi.ibdev));
	if (opt.perftest) {
		printf(",\"perftest_throughput_mops\":%.6f,\"ratio\":%.3f,"
		       "\"perftest_cmd\":", r->pt, r->pt > 0 ? r->mops / r->pt : 0);
		cider_json_str(stdout, r->cmd, strlen(r->cmd));
	}
	if (r->atomics && p->have)
		printf(",\"chan_read\":%llu,\"chan_write\":%llu,\"chan_cas\":%llu,\"chan_faa\":%llu,"
		       "\"agent_batches\":%llu,\"agent_verbs\":%llu,\"agent_failed\":%llu",
		       p->chan[0], p->chan[1], p->chan[2], p->chan[3], p->agent_batches,
		       p->agent_verbs, p->agent_failed);
	printf("}");
}

static void raw_text_run(const struct raw_run *r)
{
	const struct bench_paths *p = &r->paths;
	const struct lh_summary *m = &r->m;

	printf("%s x%u, %u threads, depth %u, batch %u, %.1f s on %s (mn%u",
	       op_names[opt.op], opt.size, opt.threads, opt.depth, opt.batch, r->elapsed,
	       r->mi.ibdev, r->mi.mn_id);
	if (r->atomics)
		printf(", atomics %s", atomics_name(r->mi.atomics, true));
	printf("):\n");
	printf("  %.4f Mops/s  p50 %.1f us  p99 %.1f us  p99.9 %.1f us  max %.1f us  %.2f WRs/doorbell\n",
	       r->mops, m->p50 / 1e3, m->p99 / 1e3, m->p999 / 1e3, m->max / 1e3, r->wpd);
	if (opt.perftest)
		printf("  perftest: %.4f Mops/s  ratio %.2f  (%s)\n", r->pt,
		       r->pt > 0 ? r->mops / r->pt : 0, r->cmd);
	if (r->atomics && p->have)
		printf("  verbs: kernel's queue pairs read %llu write %llu cas %llu faa %llu; agent %llu in %llu batches (%llu failed)\n",
		       p->chan[0], p->chan[1], p->chan[2], p->chan[3], p->agent_verbs,
		       p->agent_batches, p->agent_failed);
}

/* The counters disagree with the path the node reported: say so (the report stands). */
static void raw_path_warn(const struct raw_run *r)
{
	const struct bench_paths *p = &r->paths;
	const char *name = atomics_name(r->atomics, false);

	if (!r->atomics)
		return;
	if (!p->have) {
		fprintf(stderr, "cider-bench: atomics %s: no agent counters (CIDER_IOC_MN_STATS) to confirm the path\n",
			name);
		return;
	}
	if (r->atomics == CIDER_ATTACH_ATOMICS_KERNEL && p->agent_verbs)
		fprintf(stderr, "cider-bench: warning: atomics kernel, yet %llu verbs went through the agent\n",
			p->agent_verbs);
	if (r->atomics == CIDER_ATTACH_ATOMICS_AGENT && p->chan[2] + p->chan[3])
		fprintf(stderr, "cider-bench: warning: atomics agent, yet %llu atomics went on the kernel's queue pairs\n",
			p->chan[2] + p->chan[3]);
	if (p->agent_failed)
		fprintf(stderr, "cider-bench: warning: atomics %s: %llu agent batches ended without a result\n",
			name, p->agent_failed);
}

static double raw_ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

/* --atomics both: each run, then agent/kernel of throughput, p50 and p99. */
static void raw_report_both(const struct raw_run *k, const struct raw_run *a)
{
	double t = raw_ratio(a->mops, k->mops), p50 = raw_ratio(a->m.p50, k->m.p50),
	       p99 = raw_ratio(a->m.p99, k->m.p99);

	if (opt.json) {
		printf("{\"bench\":\"raw\",\"atomics\":\"both\",\"kernel\":");
		raw_json_run(k);
		printf(",\"agent\":");
		raw_json_run(a);
		printf(",\"agent_vs_kernel\":{\"throughput\":%.3f,\"p50\":%.3f,\"p99\":%.3f}}\n",
		       t, p50, p99);
		return;
	}
	raw_text_run(k);
	raw_text_run(a);
	printf("agent/kernel: throughput %.3f  p50 %.3f  p99 %.3f\n", t, p50, p99);
}

/* --atomics needs a module that has the atomics agent: 0, or 1 (said why). */
static int raw_check_feature(int fd)
{
	struct cider_info info;

	if (!opt.atomics)
		return 0;
	if (cider_get_info(fd, &info) || !(cider_features(&info) & CIDER_FEAT_AGENT)) {
		fprintf(stderr, "cider-bench: --atomics: this cider.ko has no atomics agent (CIDER_FEAT_AGENT)\n");
		return 1;
	}
	return 0;
}

static int cmd_raw(void)
{
	static struct raw_run runs[2];
	unsigned int i, n = opt.atomics == ATOMICS_BOTH ? 2 : 1;
	int fd, ret;

	fd = cider_open();
	if (fd < 0) {
		fprintf(stderr, "cider-bench: %s\n", cider_strerror(fd));
		return 1;
	}
	if (raw_check_feature(fd))
		ret = 1;
	else if (n == 2)
		ret = raw_one(fd, CIDER_ATTACH_ATOMICS_KERNEL, &runs[0]) ?:
		      raw_one(fd, CIDER_ATTACH_ATOMICS_AGENT, &runs[1]);
	else
		ret = raw_one(fd, opt.atomics, &runs[0]);
	close(fd);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		raw_path_warn(&runs[i]);
		if (opt.perftest && runs[i].pt < 0)
			ret = 1;
	}
	if (n == 2) {
		raw_report_both(&runs[0], &runs[1]);
	} else if (opt.json) {
		raw_json_run(&runs[0]);
		printf("\n");
	} else {
		raw_text_run(&runs[0]);
	}
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
