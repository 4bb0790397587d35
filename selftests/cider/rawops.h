/* SPDX-License-Identifier: GPL-2.0 */
/* Raw operation descriptions for the selftests (uapi/linux/cider.h). */
#ifndef _CIDER_SELFTEST_RAWOPS_H
#define _CIDER_SELFTEST_RAWOPS_H

#include <stdint.h>
#include "cider.h"

static inline struct cider_raw_op op_rw(int opcode, __u64 remote, void *buf, __u32 len)
{
	struct cider_raw_op op = { .opcode = opcode, .len = len, .remote = remote,
				   .local = (__u64)(uintptr_t)buf };
	return op;
}

static inline struct cider_raw_op op_cas(__u64 remote, __u64 cmp, __u64 swp)
{
	struct cider_raw_op op = { .opcode = CIDER_RAW_CAS, .len = 8, .remote = remote,
				   .compare = cmp, .swap_add = swp };
	return op;
}

static inline struct cider_raw_op op_faa(__u64 remote, __u64 add)
{
	struct cider_raw_op op = { .opcode = CIDER_RAW_FAA, .len = 8, .remote = remote,
				   .swap_add = add };
	return op;
}

#endif
