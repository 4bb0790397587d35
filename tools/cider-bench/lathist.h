/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cider-bench's latency histogram, for kv and raw alike: log-linear, in
 * HdrHistogram's layout.  Values below 128 ns are counted exactly; above,
 * each power of two is cut into 64 buckets, so a value is known within
 * 1/64 of its octave (1.6 %) at any magnitude, up to 2^48 ns (3.2 days;
 * larger values count in the last bucket).  The count, minimum, maximum,
 * sum and sum of squares are exact.
 */
#ifndef CIDER_LATHIST_H
#define CIDER_LATHIST_H

#include <stdint.h>
#include <stdio.h>

#define LH_SUB_BITS	6
#define LH_SUB		(1U << LH_SUB_BITS)	/* buckets per power of two */
#define LH_TOP_BITS	48			/* the last octave ends at 2^48 ns */
#define LH_BUCKETS	((LH_TOP_BITS - LH_SUB_BITS + 1) * LH_SUB)

struct lathist {
	uint64_t n, min, max;	/* ns; min and max 0 while n is 0 */
	double sum, sumsq;
	uint64_t b[LH_BUCKETS];
};

/* The summary every report prints: ns, as doubles for printing. */
struct lh_summary {
	uint64_t n;
	double min, mean, p50, p90, p99, p999, p9999, max;
};

void lh_add(struct lathist *h, uint64_t ns);
void lh_merge(struct lathist *dst, const struct lathist *src);
/*
 * The value at quantile @q (0..1): the smallest bucket holding the
 * ceil(q * n)-th smallest value, as its highest value (HdrHistogram's
 * getValueAtPercentile()), never above the exact maximum.  0 when empty.
 */
uint64_t lh_value_at(const struct lathist *h, double q);
double lh_mean(const struct lathist *h);
double lh_stddev(const struct lathist *h);
void lh_summarize(const struct lathist *h, struct lh_summary *s);
/* "@name":{"ops":N,"min_us":..,"max_us":..}: the summary as a JSON member, in us. */
void lh_json(FILE *f, const char *name, const struct lathist *h);
/* The summary as a row of a table in us, under lh_text_header()'s columns. */
void lh_text_header(FILE *f);
void lh_text_row(FILE *f, const char *name, const struct lathist *h);
/* The lowest and highest value bucket @i counts. */
uint64_t lh_bucket_low(unsigned int i);
uint64_t lh_bucket_high(unsigned int i);
/*
 * HdrHistogram's percentile distribution (outputPercentileDistribution()
 * in its plain-text form, 5 ticks per half distance), values in ns
 * divided by @scale (1000: microseconds).  0, or -1 on a write error.
 */
int lh_write_hdr(const struct lathist *h, FILE *f, double scale);

#endif
