/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * CIDER: the contract between cider.ko and user space.
 *
 * Every argument structure starts with a 'size' field that the caller sets
 * to sizeof() of the structure it was compiled with, carries explicit-width
 * fields only (identical layout for 32- and 64-bit callers), and ends with
 * reserved words that must be zero.  The module refuses a structure whose
 * size, flags or reserved words it does not understand with -EINVAL, and an
 * unknown ioctl number with -ENOTTY.
 */
#ifndef _UAPI_LINUX_CIDER_H
#define _UAPI_LINUX_CIDER_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* Bumped on any incompatible change to this file. */
#define CIDER_ABI_VERSION	1

/* The misc device is /dev/CIDER_DEVICE_NAME. */
#define CIDER_DEVICE_NAME	"cider"

/* 0xC1 is unused in Documentation/userspace-api/ioctl/ioctl-number.rst. */
#define CIDER_IOC_MAGIC		0xC1

#define CIDER_VERSION_LEN	32
#define CIDER_IBDEV_NAME_LEN	64
#define CIDER_INFO_MAX_DEVS	8

/* cider_ibdev_info.flags */
#define CIDER_IBDEV_F_ATOMIC	0x1U /* reports 8-byte CAS/FAA (HCA or GLOB) */
#define CIDER_IBDEV_F_ROCE	0x2U /* port 1 runs RoCE */

struct cider_ibdev_info {
	char name[CIDER_IBDEV_NAME_LEN];	/* NUL-terminated, e.g. "rxe0" */
	__u64 node_guid;			/* host byte order */
	__u32 port_count;
	__u32 flags;				/* CIDER_IBDEV_F_* */
	__u32 max_qp_rd_atom;			/* READ/atomic depth, responder */
	__u32 reserved;
};

/*
 * CIDER_IOC_GET_INFO: what the module is and which RDMA devices it sees.
 *
 * In:  size = sizeof(struct cider_info), flags = 0, reserved[] = 0.
 * Out: abi_version, version, nr_devices (all devices the module tracks,
 *      may exceed CIDER_INFO_MAX_DEVS) and the first
 *      min(nr_devices, CIDER_INFO_MAX_DEVS) entries of devices[].
 */
struct cider_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 nr_devices;
	char version[CIDER_VERSION_LEN];
	struct cider_ibdev_info devices[CIDER_INFO_MAX_DEVS];
	__u64 reserved[4];
};

#define CIDER_IOC_GET_INFO	_IOWR(CIDER_IOC_MAGIC, 0x00, struct cider_info)

#endif /* _UAPI_LINUX_CIDER_H */
