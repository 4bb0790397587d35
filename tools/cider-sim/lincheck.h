/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lincheck: per-key linearizability of a KV history from the history
 * alone (no memory-node order), for the simulator's histories and for
 * real ones (cider-bench kv --history, the KV selftest).  See lincheck.c
 * and Documentation/simulator.rst ("Checking a history").
 *
 * The history format is cider-sim's --history: one JSON object a line,
 *   {"client":C,"cn":N,"key":K,"op":"search|insert|update|delete|put",
 *    "arg":V,"result":"ok|notfound|exists|nospc|unknown|pending|error",
 *    "value":V,"invoke_ns":T,"response_ns":T,"writer":W}
 * with every written value (arg) unique, optionally preceded by a header
 *   {"history":"cider-kv","version":1,"preload":"all|odd|none"}
 * saying which keys held a value before the first operation: every key,
 * the keys whose FNV-1a hash is odd (cider_workload_preloaded(), the idu
 * workload), or none.  A preloaded key holds the value 2^63 + key.
 */
#ifndef CIDER_LINCHECK_H
#define CIDER_LINCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum lc_kind { LC_SEARCH, LC_INSERT, LC_UPDATE, LC_DELETE, LC_PUT };

enum lc_res {
	LC_OK, LC_NOTFOUND, LC_EXISTS, LC_NOSPC,
	LC_UNKNOWN,		/* may or may not have taken effect */
	LC_PENDING,		/* no response: the same */
	LC_ERROR,		/* failed without taking effect */
	LC_NONE,		/* the simulator's "none": a read of garbage */
};

/* The keys' state before the first operation. */
enum lc_preload {
	LC_PRELOAD_UNSAID,	/* no header: absent or 2^63 + key, either */
	LC_PRELOAD_NONE,
	LC_PRELOAD_ALL,
	LC_PRELOAD_ODD,
};

#define LC_PRELOAD_VALUE(key)	((1ULL << 63) | (key))
#define LC_INF			UINT64_MAX

struct lc_op {
	uint64_t key, arg, value;
	uint64_t inv, resp;	/* ns; resp LC_INF when pending */
	uint32_t client, line;
	uint8_t kind, res;
	uint8_t file;		/* which of several merged histories, from 0 */
};

/* The clock a history's times are on (its header's "clock"). */
enum lc_clock { LC_CLOCK_UNSAID, LC_CLOCK_REALTIME };

struct lc_history {
	struct lc_op *ops;
	size_t n, cap;
	uint32_t lines;
	int preload;		/* enum lc_preload */
	int clock;		/* enum lc_clock, of the history being read */
	uint8_t file;		/* the history being read (lc_op.file) */
};

struct lc_limits {
	uint64_t max_states;	/* memoized search states, per key */
	double max_seconds;	/* for the whole check */
};

enum lc_verdict { LC_LINEARIZABLE, LC_VIOLATION, LC_INCONCLUSIVE, LC_MALFORMED };

struct lc_report {
	int verdict;
	uint64_t key;		/* the first violating (or undecided) key */
	uint64_t keys, ops, states;
	char why[4096];
};

/* One line of a history; 0, or -1 with @err set (a malformed line). */
int lc_parse_line(struct lc_history *h, const char *line, char *err, size_t errlen);
/* A whole history; 0, or -1 with @err set. */
int lc_read(struct lc_history *h, FILE *f, char *err, size_t errlen);
/*
 * Another history into @h, from another compute node: both on realtime
 * (their headers say so), their preloads not contradicting; 0, or -1
 * with @err set.
 */
int lc_merge(struct lc_history *h, FILE *f, char *err, size_t errlen);
/*
 * Every interval of histories @from and later (0: the first) @ns longer at
 * both ends: for clocks known within @ns of the clock of those before.
 */
void lc_widen(struct lc_history *h, uint64_t ns, unsigned int from);
/* Check it (reorders h->ops); returns r->verdict. */
int lc_check(struct lc_history *h, const struct lc_limits *lim, struct lc_report *r);
void lc_free(struct lc_history *h);

/* cider-sim --check-history FILE [--json] [-q] [--max-states N] [--max-seconds S] */
int lincheck_main(int argc, char **argv);

#endif
