// SPDX-License-Identifier: GPL-2.0
/* Module parameters and their ranges; see params.h. */
#include <linux/moduleparam.h>
#include <linux/time64.h>

#include "params.h"

unsigned int cider_op_timeout_ms = 10000;
unsigned int cider_keepalive_ms = 1000;
unsigned int cider_sq_depth = 128;
unsigned int cider_credit_interval_us = 8000;
unsigned int cider_credit_stable = 60;
unsigned int cider_backoff_t0_ns = 4000;
unsigned int cider_reconnect_delay_ms = 1000;
unsigned int cider_loss_timeout_ms = 30000;

static int cider_param_set_op_timeout(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, CIDER_OP_TIMEOUT_MS_MIN,
				     CIDER_OP_TIMEOUT_MS_MAX);
}

static int cider_param_set_sq_depth(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, CIDER_SQ_DEPTH_MIN, CIDER_SQ_DEPTH_MAX);
}

/* 100 µs to 1 s: shorter intervals count too few completions to compare. */
static int cider_param_set_interval(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 100, USEC_PER_SEC);
}

static int cider_param_set_stable(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, 10000);
}

/* Up to 1 ms: the backoff doubles it up to 2^10 times. */
static int cider_param_set_t0(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, NSEC_PER_MSEC);
}

/* 0 (never reconnect) up to an hour. */
static int cider_param_set_loss(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, CIDER_LOSS_TIMEOUT_MS_MAX);
}

static const struct kernel_param_ops cider_op_timeout_ops = {
	.set = cider_param_set_op_timeout,
	.get = param_get_uint,
};

static const struct kernel_param_ops cider_loss_ops = {
	.set = cider_param_set_loss,
	.get = param_get_uint,
};

static const struct kernel_param_ops cider_sq_depth_ops = {
	.set = cider_param_set_sq_depth,
	.get = param_get_uint,
};

static const struct kernel_param_ops cider_interval_ops = {
	.set = cider_param_set_interval,
	.get = param_get_uint,
};

static const struct kernel_param_ops cider_stable_ops = {
	.set = cider_param_set_stable,
	.get = param_get_uint,
};

static const struct kernel_param_ops cider_t0_ops = {
	.set = cider_param_set_t0,
	.get = param_get_uint,
};

/*
 * The CN cache (core/cache.h) on stores that allow it (cider-memd's
 * default in cider mode): a writer of a leased key asks every live node
 * to drop its rights (kvfabric.c).  Off: this node takes no lease, and
 * still honours and ends the others'.
 */
bool cider_cache = true;
module_param_named(cache, cider_cache, bool, 0644);
MODULE_PARM_DESC(cache, "Cache hot keys under read leases on stores formatted with the cache (cider-memd's default in cider mode), for attaches after the change (default on)");

module_param_cb(op_timeout_ms, &cider_op_timeout_ops, &cider_op_timeout_ms, 0644);
MODULE_PARM_DESC(op_timeout_ms, "An operation outstanding this long declares its memory node lost, 100..600000 (default 10000)");
module_param_cb(keepalive_ms, &cider_op_timeout_ops, &cider_keepalive_ms, 0644);
MODULE_PARM_DESC(keepalive_ms, "A channel idle this long READs its memory node to notice its death, 100..600000 (default 1000)");
module_param_cb(reconnect_delay_ms, &cider_op_timeout_ops, &cider_reconnect_delay_ms, 0644);
MODULE_PARM_DESC(reconnect_delay_ms, "A lost memory node is connected again after about this long (+-25 %, random), then again after each failed attempt, 100..600000 (default 1000)");
module_param_cb(loss_timeout_ms, &cider_loss_ops, &cider_loss_timeout_ms, 0644);
MODULE_PARM_DESC(loss_timeout_ms, "A lost memory node not reconnected within this long is given up (dead), 0..3600000 (default 30000; 0: never reconnect)");
module_param_cb(sq_depth, &cider_sq_depth_ops, &cider_sq_depth, 0444);
MODULE_PARM_DESC(sq_depth, "Send queue depth per channel, the largest credit limit, 64..4096 (default 128)");
module_param_cb(credit_interval_us, &cider_interval_ops, &cider_credit_interval_us, 0444);
MODULE_PARM_DESC(credit_interval_us, "Measurement interval of each credit-limit candidate, 100..1000000 (SMART: 8000)");
module_param_cb(credit_stable, &cider_stable_ops, &cider_credit_stable, 0444);
MODULE_PARM_DESC(credit_stable, "Intervals the chosen credit limit holds before re-measuring, 1..10000 (SMART: 60)");
module_param_cb(backoff_t0_ns, &cider_t0_ops, &cider_backoff_t0_ns, 0444);
MODULE_PARM_DESC(backoff_t0_ns, "Backoff unit, about one RDMA round trip, 1..1000000 (default 4000)");
