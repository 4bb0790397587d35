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
#include "mn.h"

const char cider_version[] = CIDER_VERSION;

unsigned int cider_op_timeout_ms = 10000;
module_param_named(op_timeout_ms, cider_op_timeout_ms, uint, 0644);
MODULE_PARM_DESC(op_timeout_ms, "An operation outstanding this long declares its memory node lost (default 10000)");

unsigned int cider_sq_depth = 128;
module_param_named(sq_depth, cider_sq_depth, uint, 0444);
MODULE_PARM_DESC(sq_depth, "Send queue depth per channel, the largest credit limit (default 128)");

unsigned int cider_credit_interval_us = 8000;
module_param_named(credit_interval_us, cider_credit_interval_us, uint, 0444);
MODULE_PARM_DESC(credit_interval_us, "Measurement interval of each credit-limit candidate (SMART: 8000)");

unsigned int cider_credit_stable = 60;
module_param_named(credit_stable, cider_credit_stable, uint, 0444);
MODULE_PARM_DESC(credit_stable, "Intervals the chosen credit limit holds before re-measuring (SMART: 60)");

unsigned int cider_backoff_t0_ns = 4000;
module_param_named(backoff_t0_ns, cider_backoff_t0_ns, uint, 0444);
MODULE_PARM_DESC(backoff_t0_ns, "Backoff unit, about one RDMA round trip (default 4000)");

static int __init cider_init(void)
{
	int ret;

	if (!cider_sq_depth || !cider_credit_interval_us || !cider_credit_stable) {
		pr_err("sq_depth, credit_interval_us and credit_stable must be positive\n");
		return -EINVAL;
	}
	ret = cider_ibdev_init();
	if (ret)
		return ret;
	cider_debugfs_init();
	ret = cider_chardev_init();
	if (ret) {
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
