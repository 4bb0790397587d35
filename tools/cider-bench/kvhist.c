// SPDX-License-Identifier: GPL-2.0
/*
 * cider-bench kv --history: every operation of the measured run in
 * cider-sim's history format (tools/cider-sim/lincheck.h), kept in memory
 * per thread during the run and written at its end, so that recording
 * costs no I/O on the hot path.  Times are taken on CLOCK_MONOTONIC
 * (invocation before the submission, response after the completion was
 * reaped, so each interval contains the operation) and written on
 * CLOCK_REALTIME's scale ("clock":"realtime" in the header), so that the
 * histories of several compute nodes can be merged (cider-sim
 * --check-history A B ... --widen-ns SKEW).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kvbench.h"

static const char *const kv_hist_ops[] = { "search", "put", "insert", "update", "delete" };
static const char *const kv_hist_res[] = { "ok", "notfound", "exists", "nospc", "unknown",
					   "error" };

/*
 * What a result means for the checker.  Only what <linux/cider.h>
 * documents as "did not happen" is an error that took no effect; any
 * other failure may have (ECOMM says so, an interrupted ioctl's operation
 * runs on, and an errno nobody documented is taken at its worst).
 */
int kv_res_class(int res)
{
	if (res >= 0)
		return KV_RES_OK;
	switch (-res) {
	case ENOENT: return KV_RES_NOTFOUND;
	case EEXIST: return KV_RES_EXISTS;
	case ENOSPC: return KV_RES_NOSPC;
	case ENOTCONN:
	case EAGAIN:
	case EINVAL:
	case ENAMETOOLONG:
	case E2BIG:
	case EDOM:
	case EFAULT:
	case ENXIO:
	case EOPNOTSUPP:
	case ERANGE:
		return KV_RES_ERROR;
	default:
		return KV_RES_UNKNOWN;
	}
}

void kv_hist_add(struct kv_thread *t, const struct kv_slot *s, int res, uint64_t got,
		 uint64_t now, unsigned int client)
{
	struct kv_hrec *h;

	if (t->nhist == t->caphist) {
		size_t cap = t->caphist ? 2 * t->caphist : 65536;

		h = realloc(t->hist, cap * sizeof(*h));
		if (!h) {
			/* A history with a hole would be judged wrongly: fail. */
			t->errors++;
			t->first_err = t->first_err ?: -ENOMEM;
			return;
		}
		t->hist = h;
		t->caphist = cap;
	}
	h = &t->hist[t->nhist++];
	h->key = s->key;
	h->op = s->op;
	h->arg = s->op == KV_GET || s->op == KV_DELETE ? 0 : s->arg;
	h->res = (uint8_t)kv_res_class(res);
	h->value = s->op == KV_GET && res >= 0 ? got : 0;
	h->inv = s->inv;
	h->resp = now;
	h->client = client;
}

int kv_hist_write(const struct kv_thread *w, const char *path)
{
	FILE *f = fopen(path, "w");
	unsigned int i;
	struct timespec rt, mono;
	uint64_t off;
	size_t j;
	int ret;

	/* Monotonic to realtime: no clock steps during a run are assumed. */
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	off = ((uint64_t)rt.tv_sec - (uint64_t)mono.tv_sec) * 1000000000ULL +
	      (uint64_t)rt.tv_nsec - (uint64_t)mono.tv_nsec;
	if (!f) {
		fprintf(stderr, "cider-bench: %s: %m\n", path);
		return -1;
	}
	/* Without our preload nothing is known of the keys' first state. */
	if (kopt.preload)
		fprintf(f, "{\"history\":\"cider-kv\",\"version\":1,\"clock\":\"realtime\",\"preload\":\"%s\"}\n",
			kopt.wl.preload_all ? "all" : "odd");
	else
		fprintf(f, "{\"history\":\"cider-kv\",\"version\":1,\"clock\":\"realtime\"}\n");
	for (i = 0; i < kopt.threads; i++) {
		for (j = 0; j < w[i].nhist; j++) {
			const struct kv_hrec *h = &w[i].hist[j];

			fprintf(f, "{\"client\":%u,\"cn\":%u,\"key\":%llu,\"op\":\"%s\",\"arg\":%llu,"
				"\"result\":\"%s\",\"value\":%llu,\"invoke_ns\":%llu,\"response_ns\":%llu,"
				"\"writer\":0}\n", h->client, kopt.cn, (unsigned long long)h->key,
				kv_hist_ops[h->op], (unsigned long long)h->arg, kv_hist_res[h->res],
				(unsigned long long)h->value, (unsigned long long)(h->inv + off),
				(unsigned long long)(h->resp + off));
		}
	}
	ret = ferror(f);
	if (fclose(f) || ret) {
		fprintf(stderr, "cider-bench: %s: write error\n", path);
		return -1;
	}
	return 0;
}
