/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a step function uses: the configuration, the data pointer's word
 * (the array's, kv.h, or a hash slot's, hashindex.h), building the verb batch
 * in c->v, the clock and the checkers' trace.
 */
#ifndef _CIDER_CORE_VERBS_H
#define _CIDER_CORE_VERBS_H

#include "client.h"
#include "hashindex.h"

static inline const struct cider_cfg *cider_cfg_of(const struct cider_client *c)
{
	return c->cn->cfg;
}

static inline bool cider_hashed(const struct cider_client *c)
{
	return c->cn->cfg->index == CIDER_INDEX_HASH;
}

static inline u64 cider_w_off(const struct cider_client *c, u64 w)
{
	return cider_hashed(c) ? cider_slot_off(w) : cider_word_off(w);
}

static inline u32 cider_w_ver(const struct cider_client *c, u64 w)
{
	return cider_hashed(c) ? cider_slot_ver(w) : cider_word_ver(w);
}

/* The read lease's bits of a pointer word (cache.h). */
static inline u64 cider_w_leased_bit(const struct cider_client *c)
{
	return cider_hashed(c) ? CIDER_SLOT_LEASED : CIDER_WORD_LEASED;
}

static inline u64 cider_w_waiting_bit(const struct cider_client *c)
{
	return cider_hashed(c) ? CIDER_SLOT_WAITING : CIDER_WORD_WAITING;
}

static inline bool cider_w_leased(const struct cider_client *c, u64 w)
{
	return w & cider_w_leased_bit(c);
}

static inline bool cider_w_waiting(const struct cider_client *c, u64 w)
{
	return w & cider_w_waiting_bit(c);
}

/* The word without its lease bits: which block, which version. */
static inline u64 cider_w_bare(const struct cider_client *c, u64 w)
{
	return w & ~(cider_w_leased_bit(c) | cider_w_waiting_bit(c));
}

static inline u64 cider_w_make(const struct cider_client *c, u32 ver, u64 off)
{
	if (cider_hashed(c))
		return cider_slot_make(off ? c->fp : 0, off ? c->cls : 0, ver, off);
	return cider_word(ver, off);
}

static inline u64 cider_now(const struct cider_client *c)
{
	return c->cn->fab->ops->now(c->cn->fab->priv);
}

static inline u32 cider_rand(const struct cider_client *c)
{
	return c->cn->fab->ops->rand(c->cn->fab->priv);
}

/* Lock observations name the lock by its address on the MN. */
static inline void cider_trace(struct cider_client *c, u8 type, u64 lock, u64 a, u64 b)
{
	if (c->cn->fab->ops->trace)
		c->cn->fab->ops->trace(c->cn->fab->priv, c, type, lock, a, b);
}

static inline void cider_v_reset(struct cider_client *c)
{
	c->nv = 0;
}

static inline struct cider_verb *cider_v_add(struct cider_client *c, u8 op, u64 addr, u32 len)
{
	struct cider_verb *v = &c->v[c->nv++];

	memset(v, 0, sizeof(*v));
	v->op = op;
	v->addr = addr;
	v->len = len;
	return v;
}

static inline void cider_v_read(struct cider_client *c, u64 addr, u32 len)
{
	cider_v_add(c, CIDER_V_READ, addr, len);
}

/* A READ of a word others WRITE (a ring entry): never an atomic. */
static inline void cider_v_read_plain(struct cider_client *c, u64 addr, u32 len)
{
	cider_v_add(c, CIDER_V_READ, addr, len)->plain = true;
}

static inline void cider_v_write(struct cider_client *c, u64 addr, u64 d0, u64 d1)
{
	struct cider_verb *v = cider_v_add(c, CIDER_V_WRITE, addr, 16);

	v->data[0] = d0;
	v->data[1] = d1;
}

static inline void cider_v_cas(struct cider_client *c, u64 addr, u64 cmp, u64 swp)
{
	struct cider_verb *v = cider_v_add(c, CIDER_V_CAS, addr, 8);

	v->arg0 = cmp;
	v->arg1 = swp;
}

static inline void cider_v_faa(struct cider_client *c, u64 addr, u64 add)
{
	cider_v_add(c, CIDER_V_FAA, addr, 8)->arg0 = add;
}

/* A step's way to sleep: until woken, or at most @ns (cider_sleep). */
static inline enum cider_step cider_park(struct cider_client *c)
{
	c->sleep_timed = false;
	return CIDER_STEP_PARKED;
}

static inline enum cider_step cider_sleep(struct cider_client *c, u64 ns)
{
	c->sleep_timed = true;
	c->sleep_ns = ns;
	return CIDER_STEP_PARKED;
}

/* Step a machine until it waits or is done. */
static inline enum cider_step cider_run(struct cider_client *c,
					enum cider_step (*once)(struct cider_client *c))
{
	enum cider_step r;

	do {
		r = once(c);
	} while (r == CIDER_STEP_NEXT);
	return r;
}

#endif
