// SPDX-License-Identifier: LGPL-2.1-or-later
/* libcider: /dev/cider access. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cider.h"

/*
 * The ABI must look the same to 32- and 64-bit callers and to the module;
 * a change here is a change of CIDER_ABI_VERSION.
 */
_Static_assert(sizeof(struct cider_ibdev_info) == 88, "cider_ibdev_info ABI");
_Static_assert(sizeof(struct cider_info) == 784, "cider_info ABI");
_Static_assert(offsetof(struct cider_info, devices) == 48, "cider_info ABI");

int cider_open(void)
{
	const char *path = getenv("CIDER_DEV");
	int fd;

	fd = open(path && *path ? path : CIDER_DEV_PATH, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int cider_get_info(int fd, struct cider_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	if (ioctl(fd, CIDER_IOC_GET_INFO, info) < 0)
		return -errno;
	return 0;
}

const char *cider_strerror(int err)
{
	switch (-err) {
	case ENOENT:
		return "no " CIDER_DEV_PATH ": is cider.ko loaded?";
	case EACCES:
	case EPERM:
		return "permission denied on " CIDER_DEV_PATH;
	case ENOTTY:
		return "not a cider device, or cider.ko too old for this request";
	default:
		return strerror(-err);
	}
}
