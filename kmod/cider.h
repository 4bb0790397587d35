/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interfaces between the pieces of cider.ko.
 */
#ifndef _CIDER_H
#define _CIDER_H

#include <linux/cider.h>

#define CIDER_PR_PREFIX "cider: "

extern const char cider_version[];

/* GET_INFO's features: what this module does (uapi CIDER_FEAT_*). */
#define CIDER_FEATURES	(CIDER_FEAT_EXT_ARGS | CIDER_FEAT_RAW | CIDER_FEAT_KV_ARRAY | \
			 CIDER_FEAT_KV_HASH | CIDER_FEAT_KV_URING | CIDER_FEAT_MEMBERS | \
			 CIDER_FEAT_RECONNECT | CIDER_FEAT_KEY | CIDER_FEAT_STATS | \
			 CIDER_FEAT_KV_SCAN | CIDER_FEAT_AGENT)

/* ibdev.c: RDMA devices as ib_core adds and removes them. */
int cider_ibdev_init(void);
void cider_ibdev_exit(void);
void cider_ibdev_fill_info(struct cider_info *info);
struct ib_device;
struct ib_pd *cider_ibdev_get_pd(struct ib_device *ibdev);
void cider_ibdev_put_pd(struct ib_device *ibdev);

/* rawop.c: raw one-sided operations, by ioctl and io_uring. */
struct io_uring_cmd;
long cider_ioctl_raw(void __user *uarg, unsigned int cmd);
int cider_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags);
void cider_raw_uring_cancel(struct io_uring_cmd *cmd, unsigned int issue_flags);

/* kv.c: key-value operations, by ioctl and io_uring. */
long cider_ioctl_kv(void __user *uarg, unsigned int cmd);
int cider_kv_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags);
void cider_kv_uring_cancel(struct io_uring_cmd *cmd, unsigned int issue_flags);

/* chardev.c: /dev/cider and its ioctls. */
int cider_chardev_init(void);
void cider_chardev_exit(void);

#endif /* _CIDER_H */
