// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the history checker (lincheck.c): hand-written histories
 * of each kind of violation must be rejected and their linearizable
 * neighbours accepted; random small histories must get the verdict of a
 * brute-force search over every order (no shortcuts, no memo); mutations
 * of random linearizable histories must be rejected.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "lincheck.h"

static const struct lc_limits lim = { .max_states = 1 << 20, .max_seconds = 60 };

/* "op key arg result value inv resp" lines, e.g. "update 1 5 ok 0 10 20". */
static int verdict_of(struct lc_report *r, const char *preload, ...)
{
	struct lc_history h = { 0 };
	char line[512], err[256], op[16], res[16];
	unsigned long long key, arg, val, inv, resp;
	const char *l;
	va_list ap;
	int v;

	if (preload) {
		snprintf(line, sizeof(line), "{\"history\":\"cider-kv\",\"version\":1,\"preload\":\"%s\"}",
			 preload);
		if (lc_parse_line(&h, line, err, sizeof(err)))
			return -1;
	}
	va_start(ap, preload);
	while ((l = va_arg(ap, const char *))) {
		if (sscanf(l, "%15s %llu %llu %15s %llu %llu %llu", op, &key, &arg, res, &val, &inv,
			   &resp) != 7)
			return -1;
		snprintf(line, sizeof(line),
			 "{\"client\":%u,\"cn\":0,\"key\":%llu,\"op\":\"%s\",\"arg\":%llu,\"result\":\"%s\",\"value\":%llu,\"invoke_ns\":%llu,\"response_ns\":%llu,\"writer\":0}",
			 h.lines, key, op, arg, res, val, inv, resp);
		if (lc_parse_line(&h, line, err, sizeof(err))) {
			fprintf(stderr, "# %s\n", err);
			va_end(ap);
			lc_free(&h);
			return -1;
		}
	}
	va_end(ap);
	v = lc_check(&h, &lim, r);
	lc_free(&h);
	return v;
}

#define CHECK(want, pre, ...) do {						\
	struct lc_report r;							\
	int v = verdict_of(&r, pre, __VA_ARGS__, NULL);				\
	EXPECT_EQ(want, v) TH_LOG("%s", r.why);					\
} while (0)

TEST(sequential_operations_are_linearizable)
{
	CHECK(LC_LINEARIZABLE, "none",
	      "search 1 0 notfound 0 0 10",
	      "insert 1 5 ok 0 20 30",
	      "search 1 0 ok 5 40 50",
	      "update 1 6 ok 0 60 70",
	      "insert 1 7 exists 0 80 90",
	      "search 1 0 ok 6 100 110",
	      "delete 1 0 ok 0 120 130",
	      "update 1 8 notfound 0 140 150",
	      "delete 1 0 notfound 0 160 170",
	      "put 1 9 ok 0 180 190",
	      "search 1 0 ok 9 200 210");
}

TEST(a_read_overlapping_a_write_may_see_either_value)
{
	CHECK(LC_LINEARIZABLE, "none",
	      "insert 2 1 ok 0 0 10",
	      "update 2 2 ok 0 20 100",
	      "search 2 0 ok 1 30 40",
	      "search 2 0 ok 2 50 60",
	      "search 2 0 ok 2 70 80");
}

TEST(a_stale_read_is_rejected)
{
	struct lc_report r;

	EXPECT_EQ(LC_VIOLATION, verdict_of(&r, "none",
					   "insert 3 1 ok 0 0 10",
					   "update 3 2 ok 0 20 30",
					   "search 3 0 ok 1 40 50", NULL));
	EXPECT_NE(NULL, strstr(r.why, "update(2) -> ok")) TH_LOG("%s", r.why);
	EXPECT_NE(NULL, strstr(r.why, "value 1 (line 2), which must stay for the read at line 4"))
		TH_LOG("%s", r.why);
	EXPECT_EQ(3U, r.key);
	/* Two reads in real-time order may not see new, then old. */
	CHECK(LC_VIOLATION, "none",
	      "insert 3 1 ok 0 0 10",
	      "update 3 2 ok 0 20 100",
	      "search 3 0 ok 2 30 40",
	      "search 3 0 ok 1 50 60");
}

TEST(a_lost_acknowledged_write_is_rejected)
{
	CHECK(LC_VIOLATION, "all",
	      "update 4 11 ok 0 0 10",
	      "search 4 0 ok 9223372036854775812 20 30");
	CHECK(LC_VIOLATION, "none",
	      "insert 4 11 ok 0 0 10",
	      "search 4 0 notfound 0 20 30");
	CHECK(LC_VIOLATION, "none",
	      "insert 4 11 ok 0 0 10",
	      "delete 4 0 ok 0 20 30",
	      "delete 4 0 ok 0 40 50");
}

TEST(a_duplicate_insert_success_is_rejected)
{
	CHECK(LC_VIOLATION, "none",
	      "insert 5 1 ok 0 0 10",
	      "insert 5 2 ok 0 20 30");
	/* Concurrent, still only one may succeed. */
	CHECK(LC_VIOLATION, "none",
	      "insert 5 1 ok 0 0 30",
	      "insert 5 2 ok 0 10 40");
	/* Unless a DELETE came in between. */
	CHECK(LC_LINEARIZABLE, "none",
	      "insert 5 1 ok 0 0 30",
	      "insert 5 2 ok 0 10 40",
	      "delete 5 0 ok 0 5 35");
}

TEST(a_read_of_a_value_never_written_is_rejected)
{
	struct lc_report r;

	EXPECT_EQ(LC_VIOLATION, verdict_of(&r, "none",
					   "insert 6 1 ok 0 0 10",
					   "search 6 0 ok 77 20 30", NULL));
	EXPECT_NE(NULL, strstr(r.why, "no operation wrote")) TH_LOG("%s", r.why);
	/* Another key's value is not this key's. */
	CHECK(LC_VIOLATION, "none",
	      "insert 7 1 ok 0 0 10",
	      "insert 6 2 ok 0 0 10",
	      "search 6 0 ok 1 20 30");
	/* The preloaded value of a key that was not preloaded. */
	CHECK(LC_VIOLATION, "none", "search 6 0 ok 9223372036854775814 0 10");
	CHECK(LC_LINEARIZABLE, "all", "search 6 0 ok 9223372036854775814 0 10");
}

TEST(a_read_from_the_future_is_rejected)
{
	struct lc_report r;

	EXPECT_EQ(LC_VIOLATION, verdict_of(&r, "none",
					   "search 8 0 ok 5 0 10",
					   "insert 8 5 ok 0 20 30", NULL));
	EXPECT_NE(NULL, strstr(r.why, "from the future")) TH_LOG("%s", r.why);
	/* Overlapping is not the future. */
	CHECK(LC_LINEARIZABLE, "none",
	      "search 8 0 ok 5 0 20",
	      "insert 8 5 ok 0 10 30");
}

TEST(a_combined_update_superseded_in_its_interval_is_linearizable)
{
	/* 2 was never read: it went in just before 3 covered it. */
	CHECK(LC_LINEARIZABLE, "none",
	      "insert 9 1 ok 0 0 10",
	      "update 9 2 ok 0 20 60",
	      "update 9 3 ok 0 30 50",
	      "search 9 0 ok 3 70 80");
	/* Not once it returned before the covering write began. */
	CHECK(LC_VIOLATION, "none",
	      "insert 9 1 ok 0 0 10",
	      "update 9 2 ok 0 20 25",
	      "search 9 0 ok 1 30 40");
}

TEST(an_unknown_outcome_may_or_may_not_have_taken_effect)
{
	/* Took effect, even after its response. */
	CHECK(LC_LINEARIZABLE, "none",
	      "insert 10 1 ok 0 0 10",
	      "update 10 2 unknown 0 20 30",
	      "search 10 0 ok 1 40 50",
	      "search 10 0 ok 2 60 70");
	/* Did not. */
	CHECK(LC_LINEARIZABLE, "none",
	      "insert 10 1 ok 0 0 10",
	      "update 10 2 unknown 0 20 30",
	      "search 10 0 ok 1 40 50");
	/* Never returned. */
	CHECK(LC_LINEARIZABLE, "none",
	      "insert 10 1 pending 0 20 0",
	      "search 10 0 notfound 0 30 40",
	      "search 10 0 ok 1 50 60");
	/* But not before it was invoked. */
	CHECK(LC_VIOLATION, "none",
	      "search 10 0 ok 1 0 10",
	      "insert 10 1 pending 0 20 0");
	/* Refused operations never did. */
	CHECK(LC_VIOLATION, "none",
	      "insert 10 1 nospc 0 0 10",
	      "search 10 0 ok 1 20 30");
	CHECK(LC_VIOLATION, "none",
	      "insert 10 1 error 0 0 10",
	      "search 10 0 notfound 0 20 30",
	      "search 10 0 ok 1 40 50");
}

TEST(a_history_that_writes_a_value_twice_is_malformed)
{
	CHECK(LC_MALFORMED, "none",
	      "insert 11 1 ok 0 0 10",
	      "update 11 1 ok 0 20 30");
}

TEST(without_a_header_a_key_may_start_absent_or_preloaded)
{
	CHECK(LC_LINEARIZABLE, NULL, "search 12 0 ok 9223372036854775820 0 10");
	CHECK(LC_LINEARIZABLE, NULL, "search 12 0 notfound 0 0 10");
	CHECK(LC_VIOLATION, NULL,
	      "search 12 0 notfound 0 0 10",
	      "search 12 0 ok 9223372036854775820 20 30");
}

TEST(the_first_violating_key_is_reported)
{
	struct lc_report r;

	EXPECT_EQ(LC_VIOLATION, verdict_of(&r, "none",
					   "insert 20 1 ok 0 0 10",
					   "search 20 0 ok 1 20 30",
					   "insert 30 2 ok 0 0 10",
					   "search 30 0 notfound 0 20 30", NULL));
	EXPECT_EQ(30U, r.key);
	EXPECT_EQ(2U, r.keys);
}

TEST(malformed_lines_are_refused)
{
	struct lc_history h = { 0 };
	char err[256];

	EXPECT_EQ(-1, lc_parse_line(&h, "not json", err, sizeof(err)));
	EXPECT_EQ(-1, lc_parse_line(&h, "{\"key\":1,\"op\":\"frob\",\"result\":\"ok\",\"invoke_ns\":0,\"response_ns\":1}", err, sizeof(err)));
	EXPECT_EQ(-1, lc_parse_line(&h, "{\"key\":1,\"op\":\"search\",\"result\":\"ok\",\"invoke_ns\":5,\"response_ns\":1}", err, sizeof(err)));
	EXPECT_EQ(-1, lc_parse_line(&h, "{\"key\":1,\"op\":\"search\",\"invoke_ns\":0,\"response_ns\":1}", err, sizeof(err)));
	EXPECT_EQ(-1, lc_parse_line(&h, "{\"history\":\"cider-kv\",\"preload\":\"some\"}", err, sizeof(err)));
	EXPECT_EQ(0, lc_parse_line(&h, "", err, sizeof(err)));
	EXPECT_EQ(0, lc_parse_line(&h, "{\"key\":1,\"op\":\"search\",\"result\":\"ok\",\"invoke_ns\":0,\"response_ns\":1,\"new_field\":true}", err, sizeof(err)));
	EXPECT_EQ(1U, h.n);
	/* A field the checker does not read may be negative (an errno); its own may not. */
	EXPECT_EQ(0, lc_parse_line(&h, "{\"key\":1,\"op\":\"search\",\"result\":\"error\",\"ret\":-107,\"invoke_ns\":0,\"response_ns\":1}", err, sizeof(err)));
	EXPECT_EQ(2U, h.n);
	EXPECT_EQ(-1, lc_parse_line(&h, "{\"key\":-1,\"op\":\"search\",\"result\":\"ok\",\"invoke_ns\":0,\"response_ns\":1}", err, sizeof(err)));
	lc_free(&h);
}

/* ---- histories of several compute nodes, merged ---- */

#define RT_HDR "{\"history\":\"cider-kv\",\"version\":1,\"clock\":\"realtime\",\"preload\":\"all\"}\n"
#define OP(key, op, arg, res, val, inv, resp)						\
	"{\"client\":0,\"cn\":1,\"key\":" #key ",\"op\":\"" op "\",\"arg\":" #arg		\
	",\"result\":\"" res "\",\"value\":" #val ",\"invoke_ns\":" #inv			\
	",\"response_ns\":" #resp ",\"writer\":0}\n"

/*
 * The verdict of @first with @second merged into it, intervals widened by
 * @widen: all of them, or (@reference) only the second history's.
 */
static int merged_verdict_ref(const char *first, const char *second, uint64_t widen,
			      bool reference, struct lc_report *r)
{
	struct lc_history h = { 0 };
	FILE *a = fmemopen((void *)first, strlen(first), "r");
	FILE *b = fmemopen((void *)second, strlen(second), "r");
	char err[256];
	int v = -1;

	if (a && b && !lc_read(&h, a, err, sizeof(err))) {
		if (lc_merge(&h, b, err, sizeof(err))) {
			snprintf(r->why, sizeof(r->why), "%s", err);
			v = LC_MALFORMED;
		} else {
			lc_widen(&h, widen, reference ? 1 : 0);
			v = lc_check(&h, &lim, r);
		}
	}
	if (a)
		fclose(a);
	if (b)
		fclose(b);
	lc_free(&h);
	return v;
}

static int merged_verdict(const char *first, const char *second, uint64_t widen,
			  struct lc_report *r)
{
	return merged_verdict_ref(first, second, widen, false, r);
}

TEST(merged_histories_are_checked_as_one)
{
	/* cn 1 writes 5 during [100, 200]; cn 2 reads it later, or before. */
	static const char w[] = RT_HDR OP(3, "update", 5, "ok", 0, 100, 200);
	static const char later[] = RT_HDR OP(3, "search", 0, "ok", 5, 300, 400);
	static const char before[] = RT_HDR OP(3, "search", 0, "ok", 5, 10, 90);
	struct lc_report r;

	EXPECT_EQ(LC_LINEARIZABLE, merged_verdict(w, later, 0, &r)) TH_LOG("%s", r.why);
	EXPECT_EQ(LC_VIOLATION, merged_verdict(w, before, 0, &r));
	EXPECT_NE(NULL, strstr(r.why, "history 2 line 2")) TH_LOG("%s", r.why);
	/* Clocks known only within 6 ns: the read may have come after. */
	EXPECT_EQ(LC_LINEARIZABLE, merged_verdict(w, before, 6, &r)) TH_LOG("%s", r.why);
}

/*
 * The first history's clock is the reference: only the other's intervals
 * widen, so its operations keep their exact order among themselves and
 * the widening still covers the other's error.
 */
TEST(the_reference_history_is_not_widened)
{
	/* cn 1 writes 5 in [100, 200], then 6 in [210, 300]; cn 2 reads 5 in [230, 240]. */
	static const char w[] = RT_HDR OP(3, "update", 5, "ok", 0, 100, 200)
				OP(3, "update", 6, "ok", 0, 210, 300);
	static const char r5[] = RT_HDR OP(3, "search", 0, "ok", 5, 305, 320);
	static const char w2[] = RT_HDR OP(3, "search", 0, "ok", 6, 90, 95);
	struct lc_report r;

	/* The read ended after the write of 6 had: only a skew of 6 ns excuses it. */
	EXPECT_EQ(LC_VIOLATION, merged_verdict_ref(w, r5, 0, true, &r));
	EXPECT_EQ(LC_LINEARIZABLE, merged_verdict_ref(w, r5, 6, true, &r)) TH_LOG("%s", r.why);
	/*
	 * cn 2 read 6 before cn 1 wrote it, by 115 ns: widening cn 2 alone by
	 * 100 cannot excuse it, widening both by 100 can (210 - 100 < 95 + 100).
	 */
	EXPECT_EQ(LC_VIOLATION, merged_verdict_ref(w, w2, 100, true, &r));
	EXPECT_EQ(LC_LINEARIZABLE, merged_verdict_ref(w, w2, 100, false, &r)) TH_LOG("%s", r.why);
	EXPECT_EQ(LC_LINEARIZABLE, merged_verdict_ref(w, w2, 120, true, &r)) TH_LOG("%s", r.why);
}

TEST(histories_merge_only_on_one_clock)
{
	static const char rt[] = RT_HDR OP(3, "update", 5, "ok", 0, 100, 200);
	static const char mono[] = "{\"history\":\"cider-kv\",\"version\":1}\n"
				   OP(3, "search", 0, "ok", 5, 300, 400);
	static const char none[] = "{\"history\":\"cider-kv\",\"version\":1,\"clock\":\"realtime\",\"preload\":\"none\"}\n"
				   OP(3, "search", 0, "notfound", 0, 300, 400);
	static const char unsaid[] = "{\"history\":\"cider-kv\",\"version\":1,\"clock\":\"realtime\"}\n"
				     OP(3, "search", 0, "ok", 5, 300, 400);
	struct lc_report r;

	EXPECT_EQ(LC_MALFORMED, merged_verdict(rt, mono, 0, &r));
	EXPECT_EQ(LC_MALFORMED, merged_verdict(mono, rt, 0, &r));
	/* One says every key was preloaded, the other none. */
	EXPECT_EQ(LC_MALFORMED, merged_verdict(rt, none, 0, &r));
	/* One that says nothing defers to the other. */
	EXPECT_EQ(LC_LINEARIZABLE, merged_verdict(rt, unsaid, 0, &r)) TH_LOG("%s", r.why);
}

/* ---- random histories against a brute-force search ---- */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r, uint64_t n)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (z ^ (z >> 31)) % n;
}

#define ABS UINT64_MAX

/* Every order and every choice of unknown outcomes, no shortcuts. */
static bool brute(const struct lc_op *o, unsigned int n, unsigned int used, uint64_t state)
{
	unsigned int i, j;
	bool all = true;

	for (i = 0; i < n; i++) {
		uint64_t s = state;
		bool ok;

		if (used & (1U << i))
			continue;
		if (o[i].res != LC_UNKNOWN && o[i].res != LC_PENDING)
			all = false;
		/* Real time: nothing unplaced may have returned before it began. */
		for (j = 0; j < n; j++)
			if (j != i && !(used & (1U << j)) && o[j].resp < o[i].inv &&
			    o[j].res != LC_UNKNOWN && o[j].res != LC_PENDING)
				break;
		if (j < n)
			continue;
		switch (o[i].res) {
		case LC_NOTFOUND:
			ok = state == ABS;
			break;
		case LC_EXISTS:
			ok = state != ABS;
			break;
		case LC_OK:
		case LC_UNKNOWN:
		case LC_PENDING:
			switch (o[i].kind) {
			case LC_SEARCH:
				ok = o[i].res != LC_OK || state == o[i].value;
				break;
			case LC_INSERT:
				ok = state == ABS;
				s = o[i].arg;
				break;
			case LC_UPDATE:
				ok = state != ABS;
				s = o[i].arg;
				break;
			case LC_DELETE:
				ok = state != ABS;
				s = ABS;
				break;
			default:
				s = o[i].arg;
				ok = true;
			}
			break;
		default:
			ok = true;
		}
		if (ok && brute(o, n, used | 1U << i, s))
			return true;
	}
	/* Unknown outcomes left over did not happen. */
	return all;
}

/*
 * A random history of one key: mostly from a real sequential run with
 * intervals around the points, sometimes disturbed.
 */
static unsigned int random_history(struct rng *r, struct lc_op *o, unsigned int n, bool disturb)
{
	uint64_t state = ABS, t = 0, vals[16];
	unsigned int i, nv = 0;

	for (i = 0; i < n; i++) {
		uint64_t p = t + 10 + rnd(r, 20), d = rnd(r, 40);

		memset(&o[i], 0, sizeof(o[i]));
		o[i].key = 1;
		o[i].line = i + 1;
		o[i].kind = (uint8_t)rnd(r, 5);
		o[i].inv = d > p ? 0 : p - d;
		o[i].resp = p + rnd(r, 40);
		t = p;
		o[i].arg = 100 + i;
		switch (o[i].kind) {
		case LC_SEARCH:
			o[i].res = state == ABS ? LC_NOTFOUND : LC_OK;
			o[i].value = state;
			o[i].arg = 0;
			break;
		case LC_INSERT:
			o[i].res = state == ABS ? LC_OK : LC_EXISTS;
			break;
		case LC_UPDATE:
		case LC_DELETE:
			o[i].res = state == ABS ? LC_NOTFOUND : LC_OK;
			break;
		default:
			o[i].res = LC_OK;
		}
		if (o[i].kind == LC_DELETE)
			o[i].arg = 0;
		if (o[i].res == LC_OK && o[i].kind != LC_SEARCH) {
			state = o[i].kind == LC_DELETE ? ABS : o[i].arg;
			if (o[i].kind != LC_DELETE)
				vals[nv++] = o[i].arg;
			if (!rnd(r, 6))
				o[i].res = rnd(r, 2) ? LC_UNKNOWN : LC_PENDING;
		}
		if (o[i].res == LC_PENDING)
			o[i].resp = LC_INF;
	}
	if (disturb && nv) {
		i = (unsigned int)rnd(r, n);
		switch (rnd(r, 3)) {
		case 0:		/* a read sees another value */
			o[i].kind = LC_SEARCH;
			o[i].res = LC_OK;
			o[i].value = vals[rnd(r, nv)];
			o[i].arg = 0;
			break;
		case 1:		/* a result flips */
			o[i].res = o[i].res == LC_OK ? (o[i].kind == LC_INSERT ? LC_EXISTS : LC_NOTFOUND) :
				   LC_OK;
			if (o[i].kind == LC_SEARCH && o[i].res == LC_OK)
				o[i].value = vals[rnd(r, nv)];
			break;
		default:	/* an interval moves */
			o[i].inv += rnd(r, 60);
			if (o[i].resp != LC_INF)
				o[i].resp = o[i].inv + rnd(r, 20);
		}
		if (o[i].res == LC_PENDING)
			o[i].resp = LC_INF;
	}
	return n;
}

TEST(random_histories_get_the_verdict_of_a_brute_force_search)
{
	struct rng r = { 12345 };
	unsigned int iter, agree[2] = { 0 };
	struct lc_op o[8];

	for (iter = 0; iter < 20000; iter++) {
		unsigned int n = 2 + (unsigned int)rnd(&r, 6);
		struct lc_history h = { 0 };
		struct lc_report rep;
		bool want;
		int v;

		random_history(&r, o, n, iter % 2);
		want = brute(o, n, 0, ABS);
		h.ops = malloc(n * sizeof(*o));
		ASSERT_NE(NULL, h.ops);
		memcpy(h.ops, o, n * sizeof(*o));
		h.n = h.cap = n;
		h.preload = LC_PRELOAD_NONE;
		v = lc_check(&h, &lim, &rep);
		lc_free(&h);
		if (v == LC_MALFORMED)
			continue;
		if ((want ? LC_LINEARIZABLE : LC_VIOLATION) != v) {
			unsigned int i;

			for (i = 0; i < n; i++)
				fprintf(stderr, "# %u %s %llu res %u val %llu [%llu %llu]\n", i + 1,
					(const char *[]){ "search", "insert", "update", "delete", "put" }[o[i].kind],
					(unsigned long long)o[i].arg, o[i].res,
					(unsigned long long)o[i].value, (unsigned long long)o[i].inv,
					(unsigned long long)o[i].resp);
		}
		ASSERT_EQ(want ? LC_LINEARIZABLE : LC_VIOLATION, v)
			TH_LOG("iteration %u: %s", iter, rep.why);
		agree[want]++;
	}
	/* Both verdicts must have been exercised, many times. */
	EXPECT_LT(1000U, agree[0]);
	EXPECT_LT(1000U, agree[1]);
}

/* Many concurrent writers, the case write combining makes common. */
TEST(wide_concurrency_is_decided)
{
	struct lc_history h = { 0 };
	struct lc_report rep;
	char line[256], err[128];
	unsigned int i, w;

	lc_parse_line(&h, "{\"history\":\"cider-kv\",\"version\":1,\"preload\":\"all\"}", err,
		      sizeof(err));
	/* Rounds of 64 overlapping UPDATEs, the last one read afterwards. */
	for (i = 0; i < 50; i++) {
		for (w = 0; w < 64; w++) {
			snprintf(line, sizeof(line),
				 "{\"client\":%u,\"key\":1,\"op\":\"update\",\"arg\":%u,\"result\":\"ok\",\"invoke_ns\":%u,\"response_ns\":%u}",
				 w, 1 + i * 64 + w, i * 1000 + w, i * 1000 + 500 + w);
			ASSERT_EQ(0, lc_parse_line(&h, line, err, sizeof(err)));
		}
		snprintf(line, sizeof(line),
			 "{\"client\":99,\"key\":1,\"op\":\"search\",\"result\":\"ok\",\"value\":%u,\"invoke_ns\":%u,\"response_ns\":%u}",
			 1 + i * 64 + (i * 7) % 64, i * 1000 + 600, i * 1000 + 700);
		ASSERT_EQ(0, lc_parse_line(&h, line, err, sizeof(err)));
	}
	EXPECT_EQ(LC_LINEARIZABLE, lc_check(&h, &lim, &rep)) TH_LOG("%s", rep.why);
	lc_free(&h);
}

static void add_op(struct lc_history *h, const char *op, unsigned int arg, const char *res,
		   unsigned int val, unsigned long long inv, unsigned long long resp)
{
	char line[256], err[128];

	snprintf(line, sizeof(line),
		 "{\"client\":%u,\"key\":1,\"op\":\"%s\",\"arg\":%u,\"result\":\"%s\",\"value\":%u,\"invoke_ns\":%llu,\"response_ns\":%llu}",
		 h->lines, op, arg, res, val, inv, resp);
	if (lc_parse_line(h, line, err, sizeof(err)))
		fprintf(stderr, "# %s\n", err);
}

/*
 * As the KV soak sees one hot key: rounds of a dozen overlapping PUTs and
 * a few DELETEs whose values nobody reads, among writes of killed
 * workers that never returned; one read a round.  @stale makes the last
 * read see a value three rounds old, which no order explains: to say so
 * the search must exhaust every order before it, and unless it tells
 * unread writes apart by their deadlines only, the memo fills with every
 * subset of them placed (more than 50 M states here; with the rule, about
 * 110 k; a soak's 116 k operations on one key took 26 M states to pass).
 */
static int soak_like(bool stale)
{
	static const struct lc_limits small = { .max_states = 1 << 18, .max_seconds = 60 };
	struct lc_history h = { 0 };
	struct lc_report rep;
	unsigned long long t;
	unsigned int i, w, v = 1, last = 0, old = 0;
	int ret;

	add_op(&h, "put", v++, "ok", 0, 0, 10);
	for (i = 0; i < 9; i++)
		add_op(&h, i % 3 ? "put" : "delete", i % 3 ? v++ : 0, "pending", 0, 20 + i,
		       1000000);
	for (i = 0; i < 60; i++) {
		t = 1000 + i * 1000ULL;
		for (w = 0; w < 14; w++) {
			if (w == 7 || w == 11)
				add_op(&h, "delete", 0, "ok", 0, t + w, t + 400 + w);
			else if (w == 12)
				add_op(&h, "update", v++, "notfound", 0, t + w, t + 400 + w);
			else
				add_op(&h, "put", last = v++, "ok", 0, t + w, t + 500 - w);
		}
		if (i == 56)
			old = last;
		add_op(&h, "put", v, "ok", 0, t + 600, t + 650);
		add_op(&h, "search", 0, "ok", stale && i == 59 ? old : v, t + 700, t + 750);
		v++;
	}
	ret = lc_check(&h, &small, &rep);
	if (ret != (stale ? LC_VIOLATION : LC_LINEARIZABLE))
		fprintf(stderr, "# %s\n", rep.why);
	lc_free(&h);
	return ret;
}

TEST(overlapping_unread_writes_and_writes_that_never_returned_are_decided)
{
	EXPECT_EQ(LC_LINEARIZABLE, soak_like(false));
	EXPECT_EQ(LC_VIOLATION, soak_like(true));
}

TEST(a_search_that_hits_its_bound_is_inconclusive_not_a_pass)
{
	static const struct lc_limits tiny = { .max_states = 4, .max_seconds = 60 };
	struct lc_history h = { 0 };
	struct lc_report rep;
	char line[256], err[128];
	unsigned int i;

	for (i = 0; i < 40; i++) {
		snprintf(line, sizeof(line),
			 "{\"client\":0,\"key\":1,\"op\":\"put\",\"arg\":%u,\"result\":\"ok\",\"invoke_ns\":%u,\"response_ns\":%u}",
			 i + 1, i * 10, i * 10 + 5);
		ASSERT_EQ(0, lc_parse_line(&h, line, err, sizeof(err)));
	}
	EXPECT_EQ(LC_INCONCLUSIVE, lc_check(&h, &tiny, &rep));
	EXPECT_NE(NULL, strstr(rep.why, "bound")) TH_LOG("%s", rep.why);
	lc_free(&h);
}

TEST_HARNESS_MAIN
