/* SPDX-License-Identifier: GPL-2.0 */
/* A memory node's counter by name, as ciderctl stats reads them. */
#ifndef CIDER_SELFTEST_MNSTAT_H
#define CIDER_SELFTEST_MNSTAT_H

#include <string.h>

#include "cider.h"

/* Counter @name of node @mn through CIDER_IOC_MN_STATS, or -1. */
static inline long long stat_of(int fd, unsigned int mn, const char *name)
{
	static __thread struct cider_stat st[CIDER_STATS_MAX];	/* 40 KiB: not on a stack */
	unsigned int i, n = CIDER_STATS_MAX;

	if (cider_mn_stats(fd, mn, st, &n))
		return -1;
	for (i = 0; i < n && i < CIDER_STATS_MAX; i++)
		if (!strncmp(st[i].name, name, sizeof(st[i].name)))
			return (long long)st[i].value;
	return -1;
}

#endif
