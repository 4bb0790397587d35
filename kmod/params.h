/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Module parameters (params.c).  Every one is range-checked when it is
 * set, at load time or through /sys/module/cider/parameters, so the data
 * path can use them without checking.  Read them with READ_ONCE() where
 * they are writable at run time.
 */
#ifndef _CIDER_PARAMS_H
#define _CIDER_PARAMS_H

#include <linux/cider.h>

#define CIDER_OP_TIMEOUT_MS_MIN		100
#define CIDER_OP_TIMEOUT_MS_MAX		600000
#define CIDER_LOSS_TIMEOUT_MS_MAX	3600000
/* Every channel's send queue must hold the largest batch. */
#define CIDER_SQ_DEPTH_MIN		CIDER_RAW_MAX_OPS
#define CIDER_SQ_DEPTH_MAX		4096

extern unsigned int cider_op_timeout_ms;	/* writable */
extern unsigned int cider_keepalive_ms;		/* writable */
extern unsigned int cider_reconnect_delay_ms;	/* writable */
extern unsigned int cider_loss_timeout_ms;	/* writable */
extern unsigned int cider_sq_depth;
extern unsigned int cider_credit_interval_us;
extern unsigned int cider_credit_stable;
extern unsigned int cider_backoff_t0_ns;
extern bool cider_cache;			/* writable: for attaches after */

#endif
