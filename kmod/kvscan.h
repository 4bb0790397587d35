/* SPDX-License-Identifier: GPL-2.0 */
/* CIDER_KV_SCAN's command, cursor and page (kvscan.c). */
#ifndef _CIDER_KVSCAN_H
#define _CIDER_KVSCAN_H

#include <linux/types.h>
#include <linux/cider.h>

struct cider_kvs;

/* The command's shape, before any store is looked at: 0 or -errno. */
int cider_kv_scan_check(const struct cider_kv_cmd *cmd);
/* Against @kvs: the page's first position and how many, or -EINVAL. */
int cider_kv_scan_fits(const struct cider_kvs *kvs, const struct cider_kv_cmd *cmd,
		       u64 *pos, u32 *count);
/* Where the page after one ending at @pos starts, for user space. */
u64 cider_kv_scan_cursor(const struct cider_kvs *kvs, u64 pos);
/* Copy the page's @len bytes of records at @out to @uval: records or -errno. */
int cider_kv_scan_result(const u8 *out, u32 len, void __user *uval);

#endif
