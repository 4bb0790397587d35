// SPDX-License-Identifier: GPL-2.0
/*
 * Argument structures from user space, as they grow: one place for the
 * rules every ioctl and io_uring command of /dev/cider follows.
 */
#include <linux/string.h>
#include <linux/uaccess.h>

#include "cider.h"
#include "uargs.h"

/* A structure only grows; those of io_uring commands fit the SQE. */
static_assert(sizeof(struct cider_info) >= CIDER_INFO_SIZE_VER0);
static_assert(sizeof(struct cider_attach) >= CIDER_ATTACH_SIZE_VER0);
static_assert(sizeof(struct cider_detach) >= CIDER_DETACH_SIZE_VER0);
static_assert(sizeof(struct cider_mn_info) >= CIDER_MN_INFO_SIZE_VER0);
static_assert(sizeof(struct cider_mn_stats) >= CIDER_MN_STATS_SIZE_VER0);
static_assert(sizeof(struct cider_raw_batch) >= CIDER_RAW_BATCH_SIZE_VER0);
static_assert(sizeof(struct cider_raw_batch) <= CIDER_URING_CMD_AREA);
static_assert(sizeof(struct cider_kv_cmd) >= CIDER_KV_CMD_SIZE_VER0);
static_assert(sizeof(struct cider_kv_cmd) <= CIDER_URING_CMD_AREA);

/*
 * The caller's size, from its command number: sizeof() of the structure
 * its header had, at least the first published one.  The structure's
 * 'size' word must say the same (checked after the copy).
 */
static int cider_uargs_size(unsigned int cmd, size_t first)
{
	size_t usize = _IOC_SIZE(cmd);

	return usize < first ? -EINVAL : usize;
}

static int cider_uargs_size_word(const void *karg, size_t usize)
{
	u32 size;

	memcpy(&size, karg, sizeof(size));
	return size == usize ? 0 : -EINVAL;
}

/*
 * Copy an argument structure in (copy_struct_from_user()'s rules):
 * 0, -EINVAL (size), -E2BIG (a non-zero byte the module does not know)
 * or -EFAULT.
 */
int cider_uargs_in(void *karg, size_t ksize, size_t first, const void __user *uarg,
		   unsigned int cmd)
{
	int usize = cider_uargs_size(cmd, first);
	int ret;

	if (usize < 0)
		return usize;
	if (usize > PAGE_SIZE)		/* as openat2(2): no structure grows so far */
		return -E2BIG;
	ret = copy_struct_from_user(karg, ksize, uarg, usize);
	return ret ?: cider_uargs_size_word(karg, usize);
}

/*
 * The same from an io_uring command's area, copied once out of the
 * shared ring and checked after the copy.
 */
int cider_uargs_in_sqe(void *karg, size_t ksize, size_t first, const void *area,
		       unsigned int cmd_op)
{
	int usize = cider_uargs_size(cmd_op, first);
	u8 copy[CIDER_URING_CMD_AREA];

	if (usize < 0 || usize > CIDER_URING_CMD_AREA)
		return -EINVAL;
	memcpy(copy, area, usize);
	if (usize > ksize && memchr_inv(copy + ksize, 0, usize - ksize))
		return -E2BIG;
	memset(karg, 0, ksize);
	memcpy(karg, copy, min_t(size_t, ksize, usize));
	return cider_uargs_size_word(karg, usize);
}

/* Write a structure back, up to the smaller of the two sizes. */
int cider_uargs_out(void __user *uarg, const void *karg, size_t ksize, unsigned int cmd)
{
	if (copy_to_user(uarg, karg, min_t(size_t, ksize, _IOC_SIZE(cmd))))
		return -EFAULT;
	return 0;
}
