// SPDX-License-Identifier: LGPL-2.1-or-later
/* YCSB-style workloads; see workload.h. */
#include <math.h>
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
	z->eta = (1.0 - pow(2.0 / (double)n, 1.0 - theta)) /
		 (1.0 - zeta(2, theta) / z->zetan);
	z->half_pow = 1.0 + pow(0.5, theta);
	return 0;
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

uint64_t cider_zipf_next(const struct cider_zipf *z, struct cider_rng *r)
{
	double u, uz;
	uint64_t rank;

	if (z->theta == 0)
		return cider_rng_next(r) % z->n;
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
	return fnv1a64(rank) % z->n;
}

int cider_workload_get(const char *name, struct cider_workload *w)
{
	static const struct cider_workload all[] = {
		{ "a", 50, 50, 0, 0, true, 0 },	/* write-intensive */
		{ "b", 95, 5, 0, 0, true, 0 },	/* read-intensive */
		{ "c", 100, 0, 0, 0, true, 0 },	/* read-only */
		{ "wo", 0, 100, 0, 0, true, 0 },	/* write-only */
		{ "idu", 40, 30, 15, 15, false, 0 },	/* every operation kind */
		{ "pd", 40, 0, 0, 20, false, 40 },	/* PUT and DELETE: keys come and go */
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
	return CIDER_WL_DELETE;
}

bool cider_workload_preloaded(const struct cider_workload *w, uint64_t key)
{
	return w->preload_all || (fnv1a64(key) & 1);
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
