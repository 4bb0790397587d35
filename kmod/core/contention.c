// SPDX-License-Identifier: GPL-2.0
/*
 * Contention-aware synchronization (CIDER paper §4.3, Algorithm 1): per
 * key, credits decide between optimistic and pessimistic UPDATEs.  A
 * pessimistic UPDATE spends a credit; one that was combined with others
 * earns 2 (additive increase), one that was alone divides the credits by
 * AIMD_FACTOR (multiplicative decrease).  An optimistic UPDATE that needed
 * HOTNESS_THRESHOLD or more CAS retries twice in a row grants
 * INITIAL_CREDIT.  Only hot keys have an entry: a bounded table of
 * buckets, the entry with the fewest credits is evicted when full.
 *
 * Escalation (not in the paper): an optimistic UPDATE whose CAS failed
 * cfg->escalate times (E) within one operation stops retrying, joins the
 * key's lock queue and grants the key INITIAL_CREDIT.  With SMART backoff
 * a contended optimistic UPDATE sleeps rather than retries, so Algorithm
 * 1 sees too few retries to switch, and nothing bounds how long one
 * UPDATE can lose: at 2,048 clients the random soak found UPDATEs
 * unfinished after seconds.  In the queue it is served in FIFO order.
 */
#include "verbs.h"

#define CIDER_HOT_WAYS 8

static struct cider_hot *cider_hot_find(struct cider_cn *cn, u64 key, bool create)
{
	u64 h = (key + 1) * 0x9e3779b97f4a7c15ULL;
	u64 bucket = (h >> 40) % (CIDER_HOT_SLOTS / CIDER_HOT_WAYS);
	struct cider_hot *b = &cn->hot[bucket * CIDER_HOT_WAYS];
	struct cider_hot *victim = b;
	u32 i;

	for (i = 0; i < CIDER_HOT_WAYS; i++) {
		if (b[i].key == key + 1)
			return &b[i];
		if (!b[i].key || (victim->key && b[i].credit < victim->credit))
			victim = &b[i];
	}
	if (!create)
		return NULL;
	victim->key = key + 1;
	victim->credit = 0;
	victim->retry = 0;
	return victim;
}

bool cider_cont_pessimistic(struct cider_cn *cn, u64 key)
{
	struct cider_hot *h = cider_hot_find(cn, key, false);

	if (!h || !h->credit)
		return false;
	h->credit--;
	return true;
}

void cider_cont_after_pess(struct cider_cn *cn, u64 key, u32 batch)
{
	struct cider_hot *h = cider_hot_find(cn, key, true);

	if (batch > 1)
		h->credit += 2;
	else
		h->credit /= cn->cfg->aimd;
}

void cider_cont_after_opt(struct cider_cn *cn, u64 key, u32 retries)
{
	const struct cider_cfg *cfg = cn->cfg;
	struct cider_hot *h = cider_hot_find(cn, key, retries >= cfg->hotness);

	if (!h)
		return;
	if (retries >= cfg->hotness && h->retry >= cfg->hotness)
		h->credit += cfg->initial_credit;
	h->retry = retries;
}

/* Should an optimistic UPDATE that failed @retries CASes join the queue? */
bool cider_cont_escalate(const struct cider_cn *cn, u32 retries)
{
	return cn->cfg->mode == CIDER_MODE_CIDER && cn->cfg->escalate &&
	       retries >= cn->cfg->escalate;
}

/* It did: the key is contended, make its next UPDATEs pessimistic too. */
void cider_cont_escalated(struct cider_cn *cn, u64 key)
{
	cider_hot_find(cn, key, true)->credit += cn->cfg->initial_credit;
}
