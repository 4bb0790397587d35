/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcider: user-space access to cider.ko through /dev/cider.
 *
 * Functions return 0 (or a non-negative value) on success and a negative
 * errno on failure, as liburing does.
 */
#ifndef LIBCIDER_H
#define LIBCIDER_H

#include <linux/cider.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CIDER_DEV_PATH "/dev/" CIDER_DEVICE_NAME

/* Open /dev/cider (or $CIDER_DEV when set); a descriptor or -errno. */
int cider_open(void);

/* CIDER_IOC_GET_INFO on @fd into @info; 0 or -errno. */
int cider_get_info(int fd, struct cider_info *info);

/* A message for an error cider_open() or cider_get_info() returned. */
const char *cider_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* LIBCIDER_H */
