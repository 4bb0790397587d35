// SPDX-License-Identifier: LGPL-2.1-or-later
/* libcider: io_uring submission of raw batches. */
#include <string.h>

#include "cider-uring.h"

int cider_uring_init(struct io_uring *ring, unsigned int entries)
{
	return io_uring_queue_init(entries, ring, IORING_SETUP_SQE128);
}

void cider_uring_prep_raw(struct io_uring_sqe *sqe, int fd, unsigned int mn_id,
			  struct cider_raw_op *ops, unsigned int nr)
{
	struct cider_raw_batch rb;

	cider_raw_batch_init(&rb, mn_id, ops, nr);
	/* prep_rw writes 'off', which shares its place with cmd_op: first. */
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = CIDER_IOC_RAW;
	memset(sqe->cmd, 0, 80);
	memcpy(sqe->cmd, &rb, sizeof(rb));
}
