// SPDX-License-Identifier: GPL-2.0
/* The log-linear latency histogram; see lathist.h. */
#include <math.h>

#include "lathist.h"

#define LH_EXACT	(2 * LH_SUB)	/* values below are their own bucket */

static unsigned int lh_index(uint64_t v)
{
	unsigned int e;

	if (v < LH_EXACT)
		return (unsigned int)v;
	e = 63 - (unsigned int)__builtin_clzll(v);	/* v in [2^e, 2^(e+1)) */
	if (e >= LH_TOP_BITS)
		return LH_BUCKETS - 1;
	return (e - LH_SUB_BITS + 1) * LH_SUB +
	       (unsigned int)((v >> (e - LH_SUB_BITS)) & (LH_SUB - 1));
}

uint64_t lh_bucket_low(unsigned int i)
{
	unsigned int e = i / LH_SUB + LH_SUB_BITS - 1;

	if (i < LH_EXACT)
		return i;
	return (uint64_t)(LH_SUB + i % LH_SUB) << (e - LH_SUB_BITS);
}

uint64_t lh_bucket_high(unsigned int i)
{
	unsigned int e = i / LH_SUB + LH_SUB_BITS - 1;

	if (i < LH_EXACT)
		return i;
	if (i == LH_BUCKETS - 1)
		return UINT64_MAX;	/* everything above the range lands here */
	return lh_bucket_low(i) + (1ULL << (e - LH_SUB_BITS)) - 1;
}

void lh_add(struct lathist *h, uint64_t ns)
{
	if (!h->n || ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->n++;
	h->sum += (double)ns;
	h->sumsq += (double)ns * (double)ns;
	h->b[lh_index(ns)]++;
}

void lh_merge(struct lathist *dst, const struct lathist *src)
{
	unsigned int i;

	if (!src->n)
		return;
	if (!dst->n || src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->n += src->n;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
	for (i = 0; i < LH_BUCKETS; i++)
		dst->b[i] += src->b[i];
}

/* A bucket's value in a report: its highest, but no value above the maximum seen. */
static uint64_t lh_report_value(const struct lathist *h, unsigned int i)
{
	uint64_t v = lh_bucket_high(i);

	return v < h->max ? v : h->max;
}

uint64_t lh_value_at(const struct lathist *h, double q)
{
	uint64_t want, seen = 0;
	unsigned int i;

	if (!h->n)
		return 0;
	if (q > 1)
		q = 1;
	/*
	 * The nearest rank, ceil(q n); q a hair lower first (as HdrHistogram
	 * does), so that 0.99 x 100, which is 99.00000000000001 in binary,
	 * asks for the 99th value and not the 100th.
	 */
	want = (uint64_t)ceil(nextafter(q, 0) * (double)h->n);
	if (want < 1)
		want = 1;
	for (i = 0; i < LH_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want)
			return lh_report_value(h, i);
	}
	return h->max;
}

double lh_mean(const struct lathist *h)
{
	return h->n ? h->sum / (double)h->n : 0;
}

double lh_stddev(const struct lathist *h)
{
	double m = lh_mean(h), v;

	if (!h->n)
		return 0;
	v = h->sumsq / (double)h->n - m * m;
	return v > 0 ? sqrt(v) : 0;
}

void lh_summarize(const struct lathist *h, struct lh_summary *s)
{
	s->n = h->n;
	s->min = (double)h->min;
	s->mean = lh_mean(h);
	s->p50 = (double)lh_value_at(h, 0.5);
	s->p90 = (double)lh_value_at(h, 0.9);
	s->p99 = (double)lh_value_at(h, 0.99);
	s->p999 = (double)lh_value_at(h, 0.999);
	s->p9999 = (double)lh_value_at(h, 0.9999);
	s->max = (double)h->max;
}

void lh_json(FILE *f, const char *name, const struct lathist *h)
{
	struct lh_summary m;

	lh_summarize(h, &m);
	fprintf(f, "\"%s\":{\"ops\":%llu,\"min_us\":%.3f,\"mean_us\":%.3f,\"p50_us\":%.3f,"
		"\"p90_us\":%.3f,\"p99_us\":%.3f,\"p999_us\":%.3f,\"p9999_us\":%.3f,"
		"\"max_us\":%.3f}", name, (unsigned long long)m.n, m.min / 1e3, m.mean / 1e3,
		m.p50 / 1e3, m.p90 / 1e3, m.p99 / 1e3, m.p999 / 1e3, m.p9999 / 1e3, m.max / 1e3);
}

void lh_text_header(FILE *f)
{
	fprintf(f, "    %-8s %10s %9s %9s %9s %9s %9s %9s %9s %9s\n", "(us)", "ops", "min", "mean",
		"p50", "p90", "p99", "p99.9", "p99.99", "max");
}

void lh_text_row(FILE *f, const char *name, const struct lathist *h)
{
	struct lh_summary m;

	lh_summarize(h, &m);
	fprintf(f, "    %-8s %10llu %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", name,
		(unsigned long long)m.n, m.min / 1e3, m.mean / 1e3, m.p50 / 1e3, m.p90 / 1e3,
		m.p99 / 1e3, m.p999 / 1e3, m.p9999 / 1e3, m.max / 1e3);
}

/*
 * HdrHistogram's PercentileIterator: from 0 %, @ticks steps per half of
 * the distance left to 100 % (0, 10, 20, .. 50, 55, .. 75, 77.5, ..), each
 * reported at the first bucket whose cumulative count reaches it.
 */
static double lh_next_level(double level, unsigned int ticks)
{
	double halves = floor(log(100.0 / (100.0 - level)) / log(2)) + 1;

	return level + 100.0 / (ticks * pow(2, halves));
}

static int lh_hdr_row(FILE *f, const struct lathist *h, unsigned int i, double scale,
		      double level, uint64_t cum)
{
	return fprintf(f, "%12.3f %2.12f %10llu %14.2f\n", (double)lh_report_value(h, i) / scale,
		       level / 100, (unsigned long long)cum, 1 / (1 - level / 100)) < 0 ? -1 : 0;
}

static int lh_hdr_rows(const struct lathist *h, FILE *f, double scale)
{
	double level = 0, next;
	uint64_t cum = 0;
	unsigned int i;

	for (i = 0; i < LH_BUCKETS && cum < h->n; i++) {
		if (!h->b[i])
			continue;
		cum += h->b[i];
		while (100.0 * (double)cum / (double)h->n >= level) {
			if (lh_hdr_row(f, h, i, scale, level, cum))
				return -1;
			next = lh_next_level(level, 5);
			/* The last bucket reports once, then the 100 % line. */
			if (cum == h->n || next <= level)
				break;
			level = next;
		}
	}
	/* 100 %: no 1/(1-Percentile) column, as HdrHistogram prints it. */
	return fprintf(f, "%12.3f %2.12f %10llu\n", (double)h->max / scale, 1.0,
		       (unsigned long long)h->n) < 0 ? -1 : 0;
}

int lh_write_hdr(const struct lathist *h, FILE *f, double scale)
{
	if (fprintf(f, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount",
		    "1/(1-Percentile)") < 0)
		return -1;
	if (h->n && lh_hdr_rows(h, f, scale))
		return -1;
	/* Buckets and SubBuckets in HdrHistogram's terms: 42 of 128 here. */
	if (fprintf(f, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n"
		    "#[Max     = %12.3f, Total count    = %12llu]\n"
		    "#[Buckets = %12u, SubBuckets     = %12u]\n",
		    lh_mean(h) / scale, lh_stddev(h) / scale, (double)h->max / scale,
		    (unsigned long long)h->n, LH_BUCKETS / LH_SUB - 1, LH_EXACT) < 0)
		return -1;
	return 0;
}
