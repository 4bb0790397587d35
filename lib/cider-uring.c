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

/* One KV operation: its description in the command area. */
static void cider_uring_prep_kv(struct io_uring_sqe *sqe, int fd, unsigned int store,
				unsigned int opcode, const void *key, size_t key_len,
				const void *value, size_t value_len)
{
	struct cider_kv_cmd cmd;

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = CIDER_IOC_KV;
	memset(sqe->cmd, 0, 80);
	if (cider_kv_cmd_init(&cmd, store, opcode, key, key_len, value, value_len))
		return;		/* size 0: refused with -EINVAL */
	memcpy(sqe->cmd, &cmd, sizeof(cmd));
}

void cider_uring_prep_get(struct io_uring_sqe *sqe, int fd, unsigned int store,
			  const void *key, size_t key_len, void *buf, size_t buf_len)
{
	cider_uring_prep_kv(sqe, fd, store, CIDER_KV_GET, key, key_len, buf, buf_len);
}

void cider_uring_prep_put(struct io_uring_sqe *sqe, int fd, unsigned int store,
			  const void *key, size_t key_len, const void *value, size_t value_len)
{
	cider_uring_prep_kv(sqe, fd, store, CIDER_KV_PUT, key, key_len, value, value_len);
}

void cider_uring_prep_insert(struct io_uring_sqe *sqe, int fd, unsigned int store,
			     const void *key, size_t key_len, const void *value,
			     size_t value_len)
{
	cider_uring_prep_kv(sqe, fd, store, CIDER_KV_INSERT, key, key_len, value, value_len);
}

void cider_uring_prep_update(struct io_uring_sqe *sqe, int fd, unsigned int store,
			     const void *key, size_t key_len, const void *value,
			     size_t value_len)
{
	cider_uring_prep_kv(sqe, fd, store, CIDER_KV_UPDATE, key, key_len, value, value_len);
}

void cider_uring_prep_delete(struct io_uring_sqe *sqe, int fd, unsigned int store,
			     const void *key, size_t key_len)
{
	cider_uring_prep_kv(sqe, fd, store, CIDER_KV_DELETE, key, key_len, NULL, 0);
}
