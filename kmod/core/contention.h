/* SPDX-License-Identifier: GPL-2.0 */
/* Contention-aware synchronization (contention.c, Algorithm 1). */
#ifndef _CIDER_CORE_CONTENTION_H
#define _CIDER_CORE_CONTENTION_H

#include "platform.h"

struct cider_cn;

struct cider_hot {		/* Algorithm 1 state of one hot key */
	u64 key;		/* key + 1; 0: empty */
	u32 credit;
	u32 retry;
};

#define CIDER_HOT_SLOTS 1024

bool cider_cont_pessimistic(struct cider_cn *cn, u64 key);
void cider_cont_after_pess(struct cider_cn *cn, u64 key, u32 batch);
void cider_cont_after_opt(struct cider_cn *cn, u64 key, u32 retries);
bool cider_cont_escalate(const struct cider_cn *cn, u32 retries);
void cider_cont_escalated(struct cider_cn *cn, u64 key);

#endif
