/* SPDX-License-Identifier: GPL-2.0 */
/*
 * debugfs (debugfs.c): /sys/kernel/debug/cider/, with a counters file per
 * memory node and the fault-injection knobs (fault.h).
 */
#ifndef _CIDER_DEBUGFS_H
#define _CIDER_DEBUGFS_H

struct cider_mn;

void cider_debugfs_init(void);
void cider_debugfs_exit(void);
void cider_debugfs_add_mn(struct cider_mn *mn);
void cider_debugfs_remove_mn(struct cider_mn *mn);

#endif
