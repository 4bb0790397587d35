/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A memory node's counters by name (stats.c): one list, built in one
 * place, for CIDER_IOC_MN_STATS and for debugfs's lines of them.
 */
#ifndef _CIDER_STATS_H
#define _CIDER_STATS_H

#include <linux/types.h>
#include <linux/cider.h>

#include "transport.h"

struct cider_mn;

/* Where counters go: st holds room of them (st NULL: only counted, n). */
struct cider_stats_out {
	struct cider_stat *st;
	unsigned int room, n;
};

void cider_stat_put(struct cider_stats_out *o, const char *name, u64 value);

/* One channel's counters, taken under its lock; and a sum of them. */
struct cider_chan_snap {
	struct cider_chan_stats s;
	u32 limit, inflight;
	u64 updates, tmax;
	enum cider_chan_state state;
	int reason;
};

void cider_chan_snapshot(struct cider_channel *ch, struct cider_chan_snap *c);
void cider_snap_add(struct cider_chan_snap *t, const struct cider_chan_snap *c);

/* Everything CIDER_IOC_MN_STATS reports for @mn, in its order. */
int cider_mn_stats_collect(struct cider_mn *mn, struct cider_stats_out *o);
long cider_ioctl_mn_stats(void __user *uarg, unsigned int cmd);

#endif
