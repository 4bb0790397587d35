// SPDX-License-Identifier: LGPL-2.1-or-later
/* YCSB-style workloads; see workload.h. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "numparse.h"
#include "workload.h"

static double zeta(uint64_t n, double theta)
{
	double sum = 0;
	uint64_t i;

	for (i = 1; i <= n; i++)
		sum += 1.0 / pow((double)i, theta);
	return sum;
}

static double zipf_eta(const struct cider_zipf *z)
{
	return (1.0 - pow(2.0 / (double)z->n, 1.0 - z->theta)) /
	       (1.0 - zeta(2, z->theta) / z->zetan);
}

int cider_zipf_init(struct cider_zipf *z, uint64_t n, double theta)
{
	if (!n || theta < 0 || theta >= 1)
		return -1;
	memset(z, 0, sizeof(*z));
	z->n = n;
	z->theta = theta;
	if (theta == 0)
		return 0;
	z->zetan = zeta(n, theta);
	z->alpha = 1.0 / (1.0 - theta);
	z->eta = zipf_eta(z);
	z->half_pow = 1.0 + pow(0.5, theta);
	return 0;
}

/*
 * zeta(n) grows by the new terms only, as YCSB's ZipfianGenerator does
 * when its item count grows: a reader of workload D's latest keys pays
 * for each key once, not for all of them at every INSERT.
 */
void cider_zipf_grow(struct cider_zipf *z, uint64_t n)
{
	uint64_t i;

	if (n <= z->n)
		return;
	if (z->theta > 0) {
		for (i = z->n + 1; i <= n; i++)
			z->zetan += 1.0 / pow((double)i, z->theta);
	}
	z->n = n;
	if (z->theta > 0)
		z->eta = zipf_eta(z);
}

static uint64_t fnv1a64(uint64_t v)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	int i;

	for (i = 0; i < 8; i++) {
		h ^= v & 0xff;
		h *= 1099511628211ULL;
		v >>= 8;
	}
	return h;
}

/* Gray et al.'s rank, theta > 0. */
static uint64_t zipf_gray_rank(const struct cider_zipf *z, struct cider_rng *r)
{
	double u, uz;
	uint64_t rank;

	u = cider_rng_unit(r);
	uz = u * z->zetan;
	if (uz < 1.0)
		rank = 0;
	else if (uz < z->half_pow)
		rank = 1;
	else
		rank = (uint64_t)((double)z->n * pow(z->eta * u - z->eta + 1.0, z->alpha));
	if (rank >= z->n)
		rank = z->n - 1;
	return rank;
}

uint64_t cider_zipf_rank(const struct cider_zipf *z, struct cider_rng *r)
{
	if (z->theta == 0)
		return cider_rng_next(r) % z->n;
	return zipf_gray_rank(z, r);
}

uint64_t cider_zipf_next(const struct cider_zipf *z, struct cider_rng *r)
{
	if (z->theta == 0)
		return cider_rng_next(r) % z->n;
	return fnv1a64(zipf_gray_rank(z, r)) % z->n;
}

int cider_workload_get(const char *name, struct cider_workload *w)
{
	static const struct cider_workload all[] = {
		/* The paper's Table 1 and YCSB's: write-intensive, read-intensive, read-only. */
		{ .name = "a", .search = 50, .update = 50, .preload_all = true },
		{ .name = "b", .search = 95, .update = 5, .preload_all = true },
		{ .name = "c", .search = 100, .preload_all = true },
		{ .name = "wo", .update = 100, .preload_all = true },	/* write-only */
		/* Every operation kind. */
		{ .name = "idu", .search = 40, .update = 30, .insert = 15, .delete_ = 15 },
		/* PUT and DELETE: keys come and go. */
		{ .name = "pd", .search = 40, .delete_ = 20, .put = 40 },
		/* YCSB D: read the latest keys, insert new ones. */
		{ .name = "d", .search = 95, .insert = 5, .latest = true },
		/* YCSB F: read-modify-write. */
		{ .name = "f", .search = 50, .preload_all = true, .rmw = 50 },
	};
	unsigned int i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (!strcmp(name, all[i].name)) {
			*w = all[i];
			return 0;
		}
	}
	return -1;
}

enum cider_wl_op cider_workload_op(const struct cider_workload *w, struct cider_rng *r)
{
	unsigned int p = (unsigned int)(cider_rng_next(r) % 100);

	if (p < w->search)
		return CIDER_WL_SEARCH;
	p -= w->search;
	if (p < w->update)
		return CIDER_WL_UPDATE;
	p -= w->update;
	if (p < w->insert)
		return CIDER_WL_INSERT;
	p -= w->insert;
	if (p < w->put)
		return CIDER_WL_PUT;
	p -= w->put;
	if (p < w->rmw)
		return CIDER_WL_RMW;
	return CIDER_WL_DELETE;
}

bool cider_workload_preloaded(const struct cider_workload *w, uint64_t key)
{
	return w->preload_all || (fnv1a64(key) & 1);
}

int cider_latest_init(struct cider_latest *l, const struct cider_workload *w, uint64_t n,
		      double theta)
{
	uint64_t k, j = 0;

	memset(l, 0, sizeof(*l));
	if (!n || n > SIZE_MAX / sizeof(*l->order))
		return -1;
	l->order = malloc(n * sizeof(*l->order));
	l->ended = calloc(CIDER_LATEST_WINDOW, 1);
	if (!l->order || !l->ended) {
		cider_latest_free(l);
		return -1;
	}
	for (k = 0; k < n; k++)
		if (cider_workload_preloaded(w, k))
			l->order[j++] = k;
	l->preloaded = j;
	for (k = 0; k < n; k++)
		if (!cider_workload_preloaded(w, k))
			l->order[j++] = k;
	l->n = n;
	if (cider_zipf_init(&l->base, l->preloaded ? l->preloaded : 1, theta)) {
		cider_latest_free(l);
		return -1;
	}
	return 0;
}

void cider_latest_free(struct cider_latest *l)
{
	free(l->order);
	free(l->ended);
	l->order = NULL;
	l->ended = NULL;
}

void cider_latest_reader(const struct cider_latest *l, struct cider_zipf *z)
{
	*z = l->base;
}

uint64_t cider_latest_insert(struct cider_latest *l, uint64_t *i)
{
	*i = __atomic_fetch_add(&l->inserts, 1, __ATOMIC_SEQ_CST);
	return l->order[(l->preloaded + *i) % l->n];
}

/*
 * Mark @i ended, then move acked over every ended INSERT at its front.
 * Whoever takes the front's mark back (the exchange) moves it by one, so
 * each is counted once; an INSERT that ends while another thread moves
 * the front is seen by one of the two (both sides sequentially consistent:
 * the mark is stored before acked is read, acked before the mark is).
 */
void cider_latest_done(struct cider_latest *l, uint64_t i)
{
	uint64_t a;

	__atomic_store_n(&l->ended[i % CIDER_LATEST_WINDOW], 1, __ATOMIC_SEQ_CST);
	for (;;) {
		a = __atomic_load_n(&l->acked, __ATOMIC_SEQ_CST);
		if (!__atomic_exchange_n(&l->ended[a % CIDER_LATEST_WINDOW], 0, __ATOMIC_SEQ_CST))
			return;
		__atomic_store_n(&l->acked, a + 1, __ATOMIC_SEQ_CST);
	}
}

uint64_t cider_latest_read(const struct cider_latest *l, struct cider_zipf *z, struct cider_rng *r)
{
	uint64_t count = l->preloaded + __atomic_load_n(&l->acked, __ATOMIC_SEQ_CST);
	uint64_t live = count < l->n ? count : l->n;

	if (!live)
		return l->order[0];	/* nothing inserted yet: a key that is absent */
	cider_zipf_grow(z, live);
	return l->order[(count - 1 - cider_zipf_rank(z, r) % live) % l->n];
}

uint64_t cider_latest_wrapped(const struct cider_latest *l)
{
	uint64_t seq = l->preloaded + __atomic_load_n(&l->inserts, __ATOMIC_SEQ_CST);

	return seq > l->n ? seq - l->n : 0;
}

int cider_sizes_parse(const char *s, struct cider_sizes *z)
{
	const char *dash;
	uint64_t a, b;
	char err[96];

	memset(z, 0, sizeof(*z));
	if (!strcmp(s, "twitter")) {
		z->kind = 2;
		return 0;
	}
	if (!strncmp(s, "fixed:", 6)) {
		if (cider_num_parse_uint(s + 6, 8, UINT32_MAX, 0, &z->a, err, sizeof(err)))
			return -1;
		z->b = z->a;
		return 0;
	}
	dash = strchr(s, '-');
	if (!strncmp(s, "uniform:", 8) && dash) {
		z->kind = 1;
		if (cider_num_parse_n(s + 8, (size_t)(dash - s - 8), 8, UINT32_MAX, 0, &a, err,
				      sizeof(err)) ||
		    cider_num_parse(dash + 1, a, UINT32_MAX, 0, &b, err, sizeof(err)))
			return -1;
		z->a = (uint32_t)a;
		z->b = (uint32_t)b;
		return 0;
	}
	return -1;
}

uint32_t cider_sizes_next(const struct cider_sizes *z, struct cider_rng *r)
{
	uint64_t p;

	switch (z->kind) {
	case 1:
		return z->a + (uint32_t)(cider_rng_next(r) % (z->b - z->a + 1));
	case 2:
		p = cider_rng_next(r) % 100;
		if (p < 60)
			return 8 + (uint32_t)(cider_rng_next(r) % 93);
		if (p < 90)
			return 100 + (uint32_t)(cider_rng_next(r) % 901);
		return 1000 + (uint32_t)(cider_rng_next(r) % 3001);
	default:
		return z->a;
	}
}

uint32_t cider_sizes_max(const struct cider_sizes *z)
{
	return z->kind == 2 ? 4000 : z->b;
}
