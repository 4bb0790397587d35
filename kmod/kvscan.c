// SPDX-License-Identifier: GPL-2.0
/*
 * CIDER_KV_SCAN's edges (core/scan.c is the operation): the command's
 * shape, its cursor and its page for user space.
 *
 * A cursor is a position of the store's index (core/scan.h) with a tag
 * of 24 bits keyed by a random number the store drew when it was
 * attached: a cursor user space made up, or kept from another store or
 * another attach, is refused (EINVAL) instead of followed.  Following one
 * could do no harm (it names a position, and every position is READ the
 * same way), but an application that passes a stale cursor has a bug it
 * should hear of.
 */
#include <linux/hash.h>
#include <linux/uaccess.h>

#include "cider.h"
#include "core/scan.h"
#include "kvscan.h"
#include "kvshard.h"
#include "mn.h"

#define CIDER_SCAN_POS_BITS	40
#define CIDER_SCAN_TAG_BITS	24
#define CIDER_SCAN_DEFAULT_COUNT	256

static_assert(CIDER_KV_SCAN_MIN_BUF == CIDER_SCAN_MIN_OUT);
static_assert(CIDER_KV_SCAN_REC_SIZE(1) == CIDER_SCAN_REC_SIZE(1));

int cider_kv_scan_check(const struct cider_kv_cmd *cmd)
{
	if (cmd->scan_reserved || cmd->count > CIDER_KV_SCAN_MAX_COUNT)
		return -EINVAL;
	if (cmd->key_len > CIDER_KV_MAX_KEY)
		return -ENAMETOOLONG;
	return cmd->value_len < CIDER_KV_SCAN_MIN_BUF ? -EINVAL : 0;
}

static u64 cider_kv_scan_tag(const struct cider_kvs *kvs, u64 pos)
{
	return hash_64(pos ^ kvs->scan_key, CIDER_SCAN_TAG_BITS);
}

u64 cider_kv_scan_cursor(const struct cider_kvs *kvs, u64 pos)
{
	if (pos >= cider_scan_positions(&kvs->cfg) || !pos)
		return 0;	/* the end, or the start */
	return cider_kv_scan_tag(kvs, pos) << CIDER_SCAN_POS_BITS | pos;
}

int cider_kv_scan_fits(const struct cider_kvs *kvs, const struct cider_kv_cmd *cmd,
		       u64 *pos, u32 *count)
{
	u64 total, p;

	if (!kvs)
		return -ENOTCONN;	/* its node went since the command was checked */
	total = cider_scan_positions(&kvs->cfg);
	if (kvs->cfg.index != CIDER_INDEX_HASH && cmd->key_len)
		return -EINVAL;		/* an array's keys are numbers */
	p = cmd->cursor & GENMASK_ULL(CIDER_SCAN_POS_BITS - 1, 0);
	if (cmd->cursor && (!p || p >= total ||
			    cmd->cursor >> CIDER_SCAN_POS_BITS != cider_kv_scan_tag(kvs, p)))
		return -EINVAL;
	*pos = p;
	*count = min_t(u64, cmd->count ?: CIDER_SCAN_DEFAULT_COUNT, total - p);
	return 0;
}

/*
 * The page for user space: its records copied to the caller's buffer
 * (the core wrote them to the request's), and how many there are.
 */
int cider_kv_scan_result(const u8 *out, u32 len, void __user *uval)
{
	u32 at = 0, klen;
	int n = 0;

	while (at + sizeof(klen) <= len) {
		memcpy(&klen, out + at, sizeof(klen));
		if (WARN_ON_ONCE(klen > CIDER_KV_MAX_KEY ||
				 at + CIDER_KV_SCAN_REC_SIZE(klen) > len))
			return -EIO;
		at += CIDER_KV_SCAN_REC_SIZE(klen);
		n++;
	}
	return copy_to_user(uval, out, len) ? -EFAULT : n;
}
