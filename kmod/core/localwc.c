// SPDX-License-Identifier: GPL-2.0
/*
 * Local write combining inside one CN (CIDER paper §3.1, as in SMART):
 * the first client to UPDATE a key becomes the combiner; UPDATEs of the
 * same key that arrive on the same CN before the combiner writes its KV
 * block join its batch, and the combiner writes the latest of their values
 * (last writer wins).  Everyone in the batch returns the combiner's
 * result.  Arrivals after the write wait for the next batch, whose first
 * member combines it.  Applies to every mode.
 */
#include "verbs.h"

/*
 * Same key?  Hashed keys are found by their id, a hash: two keys may share
 * it, and combining their writes would lose one.  An entry in use always
 * has a combiner running an operation on its key.
 */
static bool cider_lwc_same_key(const struct cider_client *c, const struct cider_lwc *lw)
{
	const struct cider_client *o;

	if (lw->combiner < 0)
		return false;
	o = &c->cn->clients[lw->combiner];
	return o->klen == c->klen && !memcmp(o->kbytes, c->kbytes, c->klen);
}

static struct cider_lwc *cider_lwc_find(struct cider_client *c)
{
	struct cider_cn *cn = c->cn;
	struct cider_lwc *free = NULL;
	u64 key = c->key;
	u32 i;

	for (i = 0; i < cn->nr_lwc; i++) {
		if (cn->lwc[i].key == key + 1)
			return cider_lwc_same_key(c, &cn->lwc[i]) ? &cn->lwc[i] : NULL;
		if (!cn->lwc[i].key && !free)
			free = &cn->lwc[i];
	}
	if (free) {
		memset(free, 0, sizeof(*free));
		free->key = key + 1;
		free->combiner = -1;
	}
	return free;
}

/* Returns true when @c joined a batch (it waits), false to go ahead. */
bool cider_lwc_join(struct cider_client *c)
{
	struct cider_lwc *lw = cider_lwc_find(c);
	u64 bit = 1ULL << c->index;

	c->lw = lw;
	if (!lw)
		return false;
	c->join_t = cider_now(c);
	if (lw->combiner < 0) {
		lw->combiner = (s32)c->index;
		lw->open = true;
		lw->cur = 0;
		lw->val = c->val;
		lw->vlen = c->vlen;
		lw->op = c->opid;
		return false;
	}
	if (lw->open) {
		lw->cur |= bit;
		lw->val = c->val;
		lw->vlen = c->vlen;
		lw->op = c->opid;
	} else {
		lw->next |= bit;
		lw->next_val = c->val;
		lw->next_vlen = c->vlen;
		lw->next_op = c->opid;
	}
	return true;
}

bool cider_lwc_is_combiner(const struct cider_client *c)
{
	return c->lw && c->lw->combiner == (s32)c->index;
}

/* The combiner is about to write: the batch closes on its latest value. */
void cider_lwc_close(struct cider_client *c)
{
	if (!cider_lwc_is_combiner(c)) {
		c->wval = c->val;
		c->wvlen = c->vlen;
		c->wop = c->opid;
		return;
	}
	c->lw->open = false;
	c->wval = c->lw->val;
	c->wvlen = c->lw->vlen;
	c->wop = c->lw->op;
}

/*
 * Settle the members in @mask: with @by's result, unless @by is NULL (they
 * start over on their own).  Returns @mask, the clients to wake.
 */
static u64 cider_lwc_settle(struct cider_cn *cn, u64 mask, const struct cider_client *by)
{
	u64 bits = mask;
	u32 i;

	for (i = 0; bits; i++, bits >>= 1) {
		struct cider_client *m = &cn->clients[i];

		if (!(bits & 1))
			continue;
		/*
		 * "Not found" was decided by the combiner's first READ: it
		 * cannot answer for a member that arrived after that READ,
		 * which starts over on its own instead.
		 */
		if (by && m->join_t < by->absent_since) {
			m->res = by->res;
			m->writer = by->writer;
			m->st.combined++;
		}
		m->lw_member = false;
	}
	return mask;
}

/*
 * The combiner is done (or dead: @c->dead): settle the batch and hand the
 * next one to its first member.  Returns whom to wake: the batch's
 * members, then the next combiner (or, after a death, everyone waiting).
 */
struct cider_lwc_wake cider_lwc_finish(struct cider_client *c)
{
	struct cider_lwc_wake wake = { 0, 0 };
	struct cider_cn *cn = c->cn;
	struct cider_lwc *lw = c->lw;
	u32 p;

	if (!cider_lwc_is_combiner(c))
		return wake;
	c->lw = NULL;
	if (c->dead && !lw->open) {
		/*
		 * The dead combiner may or may not have installed the batch's
		 * value: its members cannot know, so their result is unknown
		 * (redoing the write could install a value twice).
		 */
		c->res = CIDER_RES_UNKNOWN;
		wake.batch = cider_lwc_settle(cn, lw->cur, c);
	} else {
		wake.batch = cider_lwc_settle(cn, lw->cur, c->dead ? NULL : c);
	}
	if (c->dead) {
		/* Nobody wrote for them: everyone waiting starts over alone. */
		wake.next = cider_lwc_settle(cn, lw->next, NULL);
		lw->key = 0;
		return wake;
	}
	/* Members that died while waiting are dropped. */
	for (p = 0; p < 64; p++)
		if ((lw->next >> p & 1) && cn->clients[p].dead)
			lw->next &= ~(1ULL << p);
	if (!lw->next) {
		lw->key = 0;
		return wake;
	}
	for (p = 0; !(lw->next >> p & 1); p++)
		;
	lw->combiner = (s32)p;
	lw->cur = lw->next & ~(1ULL << p);
	lw->next = 0;
	lw->open = true;
	lw->val = lw->next_val;
	lw->vlen = lw->next_vlen;
	lw->op = lw->next_op;
	cn->clients[p].lw = lw;
	cn->clients[p].lw_member = false;
	wake.next = 1ULL << p;
	return wake;
}

bool cider_lwc_names(const struct cider_client *c)
{
	const struct cider_cn *cn = c->cn;
	u64 bit = 1ULL << c->index;
	u32 i;

	for (i = 0; i < cn->nr_lwc; i++) {
		const struct cider_lwc *lw = &cn->lwc[i];

		if (!lw->key)
			continue;
		if (lw->combiner == (s32)c->index || ((lw->cur | lw->next) & bit))
			return true;
		/* A batch about to write its value, though it left the batch. */
		if (c->val && (lw->val == c->val || lw->next_val == c->val))
			return true;
	}
	return false;
}
