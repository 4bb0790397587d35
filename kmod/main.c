// SPDX-License-Identifier: GPL-2.0
/*
 * cider.ko: module entry points.
 *
 * The RDMA device registry comes up before /dev/cider so that the first
 * ioctl already sees every device; teardown runs in the reverse order.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>

#include "cider.h"
#include "debugfs.h"
#include "kvstore.h"
#include "mn.h"
#include "peerlink.h"

const char cider_version[] = CIDER_VERSION;

static int __init cider_init(void)
{
	int ret;

	ret = cider_ibdev_init();
	if (ret)
		return ret;
	cider_debugfs_init();
	/*
	 * Without a listener this compute node still works alone and sends
	 * to others; only others cannot reach it (no port announced).
	 */
	ret = cider_peerlink_init();
	if (ret)
		pr_warn("no listener for other compute nodes: %pe\n", ERR_PTR(ret));
	/* Before /dev/cider: every node attached gets its KV store. */
	cider_mn_register_client(&cider_kvs_client);
	ret = cider_chardev_init();
	if (ret) {
		cider_peerlink_exit();
		cider_debugfs_exit();
		cider_ibdev_exit();
		return ret;
	}

	pr_info("version %s (ABI %u) loaded\n", cider_version,
		CIDER_ABI_VERSION);
	return 0;
}

static void __exit cider_exit(void)
{
	cider_chardev_exit();
	cider_mn_exit();
	cider_peerlink_exit();
	cider_debugfs_exit();
	cider_ibdev_exit();
	pr_info("unloaded\n");
}

module_init(cider_init);
module_exit(cider_exit);

MODULE_DESCRIPTION("CIDER: contention-aware KV client for disaggregated memory over RDMA");
MODULE_VERSION(CIDER_VERSION);
/* GPL: io_uring's command completion helpers are GPL-only exports. */
MODULE_LICENSE("GPL");
