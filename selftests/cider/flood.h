/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Several compute nodes on one key: a thread of PUTs through io_uring per
 * attach (a compute node to the protocol), and the peer layer's counters
 * of messages between them (kmod/peer.c, debugfs mnN's "peer" line).
 */
#ifndef CIDER_SELFTEST_FLOOD_H
#define CIDER_SELFTEST_FLOOD_H

#include <errno.h>
#include <stdint.h>
#include <liburing.h>

#include "cider.h"
#include "cider-uring.h"
#include "sysfs.h"

#define FLOOD_DEPTH 16

/* PUTs of one key through io_uring, FLOOD_DEPTH in flight, on one store. */
struct flood {
	int fd;
	unsigned int store, ops, ecomm, timedout;
	int bad;			/* an unexpected result */
};

static inline void flood_prep(struct io_uring *ring, struct flood *f, uint64_t *key,
			      uint64_t *val, unsigned int i, unsigned int n)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	val[i] = (uint64_t)f->store << 32 | n;
	cider_uring_prep_put(sqe, f->fd, f->store, &key[i], 8, &val[i], 8);
	io_uring_sqe_set_data64(sqe, i);
}

static inline void *flood_run(void *arg)
{
	uint64_t key[FLOOD_DEPTH] = { 0 }, val[FLOOD_DEPTH];
	struct flood *f = arg;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	unsigned int sent = 0, done = 0, i;

	f->bad = cider_uring_init(&ring, FLOOD_DEPTH);
	if (f->bad)
		return NULL;
	for (i = 0; i < FLOOD_DEPTH && sent < f->ops; i++)
		flood_prep(&ring, f, key, val, i, sent++);
	while (done < sent) {
		if (io_uring_submit_and_wait(&ring, 1) < 0 || io_uring_wait_cqe(&ring, &cqe)) {
			f->bad = -EIO;
			break;
		}
		i = (unsigned int)cqe->user_data;
		if (cqe->res == -ECOMM)
			f->ecomm++;
		else if (cqe->res == -ETIMEDOUT)
			f->timedout++;
		else if (cqe->res)
			f->bad = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
		done++;
		if (sent < f->ops)
			flood_prep(&ring, f, key, val, i, sent++);
	}
	io_uring_queue_exit(&ring);
	return NULL;
}

static const char *const peer_counters[] = {
	"sent_handover", "sent_exec", "sent_exec_done", "sent_result", "received", "local",
	"unreachable", "invalid", "stale", "full", "lock_resets", "remote", "links_made",
	"links_accepted", "link_failures",
};

enum { P_HANDOVER, P_EXEC, P_EXEC_DONE, P_RESULT, P_RECEIVED, P_LOCAL, P_UNREACHABLE,
       P_INVALID, P_STALE, P_FULL, P_RESETS, P_REMOTE, P_LINKS_MADE, P_LINKS_ACCEPTED,
       P_LINK_FAILURES, P_NR };

/* Messages the stores sent to other compute nodes, of every type. */
static inline long long peer_sent(const long long *p)
{
	return p[P_HANDOVER] + p[P_EXEC] + p[P_EXEC_DONE] + p[P_RESULT];
}

/* The peer counters of @cns stores, summed: 0, or -1 if one is missing. */
static inline int peer_sum(const struct cider_attach *at, unsigned int cns, long long *sum)
{
	unsigned int i, j;
	long long v;

	for (j = 0; j < P_NR; j++)
		sum[j] = 0;
	for (i = 0; i < cns; i++) {
		for (j = 0; j < P_NR; j++) {
			v = kv_counter(at[i].mn_id, peer_counters[j]);
			if (v < 0)
				return -1;
			sum[j] += v;
		}
	}
	return 0;
}

#endif
