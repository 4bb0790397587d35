/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Argument structures from user space, as they grow (uapi/linux/cider.h,
 * "How the structures grow"): the caller's size is the one in its command
 * number, at least the structure's first published size; bytes the module
 * does not know must be zero; fields the caller does not know read as
 * zero; what goes back is written up to the smaller size.
 */
#ifndef _CIDER_UARGS_H
#define _CIDER_UARGS_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* A command number without its size: what the module dispatches on. */
#define CIDER_IOC_BASE(nr)	((nr) & ~(_IOC_SIZEMASK << _IOC_SIZESHIFT))

/* The SQE's command area of IORING_SETUP_SQE128 rings. */
#define CIDER_URING_CMD_AREA	80

int cider_uargs_in(void *karg, size_t ksize, size_t first, const void __user *uarg,
		   unsigned int cmd);
int cider_uargs_in_sqe(void *karg, size_t ksize, size_t first, const void *area,
		       unsigned int cmd_op);
int cider_uargs_out(void __user *uarg, const void *karg, size_t ksize, unsigned int cmd);

#endif /* _CIDER_UARGS_H */
