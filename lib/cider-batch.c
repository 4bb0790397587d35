// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libcider: KV operations in batches, several in flight at once through
 * io_uring, behind a handle that hides the ring (for callers without
 * liburing's headers: other languages' bindings).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cider-uring.h"

struct cider_batch {
	struct io_uring ring;
	int fd;
	unsigned int depth;
	int broken;		/* the ring's failure: no further run */
};

struct cider_batch *cider_batch_new(int fd, unsigned int depth)
{
	struct cider_batch *b;
	int ret;

	if (fd < 0 || !depth || depth > CIDER_BATCH_MAX_DEPTH) {
		errno = EINVAL;
		return NULL;
	}
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	ret = cider_uring_init(&b->ring, depth);
	if (ret) {
		free(b);
		errno = -ret;
		return NULL;
	}
	b->fd = fd;
	b->depth = depth;
	return b;
}

void cider_batch_free(struct cider_batch *b)
{
	if (!b)
		return;
	io_uring_queue_exit(&b->ring);
	free(b);
}

/* Take what completed, waiting for one first: the count taken, or -errno. */
static int batch_reap(struct cider_batch *b, int *res, unsigned int nr)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0;
	int ret = io_uring_wait_cqe(&b->ring, &cqe);

	if (ret)
		return ret;
	io_uring_for_each_cqe(&b->ring, head, cqe) {
		if (cqe->user_data < nr)
			res[cqe->user_data] = cqe->res;
		seen++;
	}
	io_uring_cq_advance(&b->ring, seen);
	return (int)seen;
}

/* Queue @cmd as operation @i. */
static void batch_prep(struct cider_batch *b, const struct cider_kv_cmd *cmd, unsigned int i)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&b->ring);

	/* prep_rw writes 'off', which shares its place with cmd_op: first. */
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, b->fd, NULL, 0, 0);
	sqe->cmd_op = CIDER_IOC_KV;
	memset(sqe->cmd, 0, 80);
	memcpy(sqe->cmd, cmd, sizeof(*cmd));
	sqe->user_data = i;
}

static bool transient(int err)
{
	return err == -EINTR || err == -EAGAIN || err == -EBUSY;
}

/*
 * The ring failed (@err): wait for what the kernel took, so that no
 * completion writes into the caller's buffers after the return; the
 * rest never ran.  Operations are taken in order.  SQEs the kernel did
 * not take stay in the ring: the batch is unusable from now on.
 */
static int batch_fail(struct cider_batch *b, int err, int *res, unsigned int nr,
		      unsigned int taken, unsigned int done)
{
	int ret;

	while (done < taken) {
		ret = batch_reap(b, res, nr);
		if (ret < 0 && !transient(ret))
			break;
		if (ret > 0)
			done += (unsigned int)ret;
	}
	for (; taken < nr; taken++)
		res[taken] = -ECANCELED;
	b->broken = err;
	return err;
}

int cider_batch_run(struct cider_batch *b, const struct cider_kv_cmd *cmds, unsigned int nr,
		    int *res)
{
	unsigned int next = 0, queued = 0, taken = 0, done = 0;
	int ret;

	if (!b || (nr && (!cmds || !res)))
		return -EINVAL;
	if (b->broken)
		return b->broken;
	while (done < nr) {
		for (; next < nr && taken - done + queued < b->depth; next++, queued++)
			batch_prep(b, &cmds[next], next);
		ret = queued ? io_uring_submit(&b->ring) : 0;
		if (ret < 0 && !transient(ret))
			return batch_fail(b, ret, res, nr, taken, done);
		if (ret > 0) {
			taken += (unsigned int)ret;
			queued -= (unsigned int)ret;
		}
		if (taken == done)
			continue;	/* nothing in flight: submit again */
		ret = batch_reap(b, res, nr);
		if (ret < 0 && !transient(ret))
			return batch_fail(b, ret, res, nr, taken, done);
		if (ret > 0)
			done += (unsigned int)ret;
	}
	return 0;
}
