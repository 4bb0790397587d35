// SPDX-License-Identifier: GPL-2.0
/*
 * The reader fence (slab.h): a client whose READs keep missing the
 * reclamation rule announces itself with an FAA on the fence word, so
 * that no block is reused under it, and leaves once its READs are done.
 */
#include "verbs.h"

void cider_fence_init(struct cider_client *c, bool enter)
{
	c->sub.fence.state = CIDER_FENCE_BEGIN;
	c->sub.fence.enter = enter;
}

/*
 * Announce this client on the reader fence (slab.h), or leave it once its
 * READs are done so that reuse may go on.
 */
enum cider_step cider_fence_step(struct cider_client *c)
{
	struct cider_fence *f = &c->sub.fence;

	if (f->state == CIDER_FENCE_BEGIN) {
		cider_v_reset(c);
		cider_v_faa(c, cider_cfg_of(c)->rfence, f->enter ? 1 : (u64)-1);
		f->state = CIDER_FENCE_FAA;
		return CIDER_STEP_POSTED;
	}
	c->fenced = f->enter;
	if (f->enter)
		c->fences++;
	else
		c->late = 0;
	return CIDER_STEP_DONE;
}

const char *cider_fence_state_name(u8 state)
{
	static const char *const names[] = {
		CIDER_FENCE_STATES(CIDER_SUB_STATE_NAME)
	};

	return state < ARRAY_SIZE(names) ? names[state] : "fence:?";
}
