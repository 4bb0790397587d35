/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcider's io_uring submission: raw batches as IORING_OP_URING_CMD on
 * /dev/cider.  The ring needs IORING_SETUP_SQE128 (the command does not
 * fit a 64-byte SQE).
 */
#ifndef LIBCIDER_URING_H
#define LIBCIDER_URING_H

#include <liburing.h>

#include "cider.h"

/* io_uring_queue_init() with the flags /dev/cider needs; 0 or -errno. */
int cider_uring_init(struct io_uring *ring, unsigned int entries);

/*
 * Prepare @sqe to run @nr ops of @ops on memory node @mn_id.  @ops must
 * stay valid until the completion arrives (results are written back).
 */
void cider_uring_prep_raw(struct io_uring_sqe *sqe, int fd, unsigned int mn_id,
			  struct cider_raw_op *ops, unsigned int nr);

/*
 * Prepare @sqe for one KV operation on @store; the CQE's res is what
 * CIDER_IOC_KV returns (GET: the value's length).  Key, value and a
 * GET's @buf must stay valid until the CQE: io_uring may issue the
 * command after the submission returned (IOSQE_ASYNC, busy slots).
 * Lengths the ABI cannot carry make an SQE the module refuses (-EINVAL).
 */
void cider_uring_prep_get(struct io_uring_sqe *sqe, int fd, unsigned int store,
			  const void *key, size_t key_len, void *buf, size_t buf_len);
void cider_uring_prep_put(struct io_uring_sqe *sqe, int fd, unsigned int store,
			  const void *key, size_t key_len, const void *value, size_t value_len);
void cider_uring_prep_insert(struct io_uring_sqe *sqe, int fd, unsigned int store,
			     const void *key, size_t key_len, const void *value,
			     size_t value_len);
void cider_uring_prep_update(struct io_uring_sqe *sqe, int fd, unsigned int store,
			     const void *key, size_t key_len, const void *value,
			     size_t value_len);
void cider_uring_prep_delete(struct io_uring_sqe *sqe, int fd, unsigned int store,
			     const void *key, size_t key_len);

#endif
