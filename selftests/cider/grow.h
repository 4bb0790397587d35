/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Callers whose header is another release's: an argument structure
 * shorter or longer than this header's, with the command number and the
 * 'size' word saying so (uapi/linux/cider.h, "How the structures grow").
 */
#ifndef _CIDER_SELFTEST_GROW_H
#define _CIDER_SELFTEST_GROW_H

#include <errno.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>

#include "cider.h"
#include "cider-uring.h"

/* @cmd's number for a structure @len bytes long. */
static inline unsigned long cmd_sized(unsigned long cmd, size_t len)
{
	return _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), len);
}

/*
 * ioctl @cmd on @arg (@argsize bytes, this header's) as a caller whose
 * structure is @len bytes: the bytes past @argsize are zero, but for the
 * last one when @tail_set.  What comes back is copied to @arg; -errno.
 */
static inline int ioctl_sized(int fd, unsigned long cmd, void *arg, size_t argsize, size_t len,
			      bool tail_set)
{
	static unsigned char buf[8192];
	uint32_t size = (uint32_t)len;
	int ret;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, arg, len < argsize ? len : argsize);
	memcpy(buf, &size, sizeof(size));
	if (tail_set && len > argsize)
		buf[len - 1] = 1;
	ret = ioctl(fd, cmd_sized(cmd, len), buf) < 0 ? -errno : 0;
	memcpy(arg, buf, len < argsize ? len : argsize);
	return ret;
}

/* The same for a prepared io_uring command whose structure is @argsize. */
static inline void sqe_sized(struct io_uring_sqe *sqe, size_t argsize, size_t len, bool tail_set)
{
	unsigned char *area = (unsigned char *)sqe->cmd;
	uint32_t size = (uint32_t)len;

	sqe->cmd_op = (uint32_t)cmd_sized(sqe->cmd_op, len);
	memcpy(area, &size, sizeof(size));
	if (len > argsize && len <= 80) {
		memset(area + argsize, 0, len - argsize);
		if (tail_set)
			area[len - 1] = 1;
	}
}

/*
 * One command on a ring of its own: @prep fills the SQE from @arg, then
 * its structure (@argsize bytes) is made @len bytes long as above.  The
 * CQE's res, or -errno.
 */
static inline int uring_sized(void (*prep)(struct io_uring_sqe *, const void *), const void *arg,
			      size_t argsize, size_t len, bool tail_set)
{
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int ret;

	if (cider_uring_init(&ring, 2))
		return -ENOMEM;
	sqe = io_uring_get_sqe(&ring);
	prep(sqe, arg);
	sqe_sized(sqe, argsize, len, tail_set);
	ret = io_uring_submit_and_wait(&ring, 1) == 1 && !io_uring_peek_cqe(&ring, &cqe) ?
	      cqe->res : -EIO;
	io_uring_queue_exit(&ring);
	return ret;
}

#endif /* _CIDER_SELFTEST_GROW_H */
