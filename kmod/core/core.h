/* SPDX-License-Identifier: GPL-2.0 */
/* Internal interfaces between the files of the protocol core. */
#ifndef _CIDER_CORE_CORE_H
#define _CIDER_CORE_CORE_H

#include "proto.h"
#include "pt.h"
#include "block.h"
#include "race.h"

/* Spawn a sub-protothread and wait until it finishes. */
#define PT_SPAWN(pt, call) \
	do { *(pt) = __LINE__; fallthrough; case __LINE__: if (!(call)) return false; } while (0)
#define PT_EXIT(pt)	do { *(pt) = 0; return true; } while (0)

static inline const struct cider_cfg *cfg_of(const struct cider_client *c)
{
	return c->cn->cfg;
}

/* The data pointer's word: the array's (kv.h) or a hash slot (race.h). */
static inline bool cider_hashed(const struct cider_client *c)
{
	return c->cn->cfg->index == CIDER_INDEX_HASH;
}

static inline u64 w_off(const struct cider_client *c, u64 w)
{
	return cider_hashed(c) ? cider_slot_off(w) : cider_word_off(w);
}

static inline u32 w_ver(const struct cider_client *c, u64 w)
{
	return cider_hashed(c) ? cider_slot_ver(w) : cider_word_ver(w);
}

static inline u64 w_make(const struct cider_client *c, u32 ver, u64 off)
{
	if (cider_hashed(c))
		return cider_slot_make(off ? c->fp : 0, off ? c->cls : 0, ver, off);
	return cider_word(ver, off);
}

static inline u64 cider_now(const struct cider_client *c)
{
	return c->cn->fab->ops->now(c->cn->fab->priv);
}

/* Lock observations name the lock by its address on the MN. */
static inline void cider_trace(struct cider_client *c, u8 type, u64 lock, u64 a, u64 b)
{
	if (c->cn->fab->ops->trace)
		c->cn->fab->ops->trace(c->cn->fab->priv, c, type, lock, a, b);
}

static inline void v_reset(struct cider_client *c)
{
	c->nv = 0;
}

static inline struct cider_verb *v_add(struct cider_client *c, u8 op, u64 addr, u32 len)
{
	struct cider_verb *v = &c->v[c->nv++];

	memset(v, 0, sizeof(*v));
	v->op = op;
	v->addr = addr;
	v->len = len;
	return v;
}

static inline void v_read(struct cider_client *c, u64 addr, u32 len)
{
	v_add(c, CIDER_V_READ, addr, len);
}

static inline void v_write(struct cider_client *c, u64 addr, u64 d0, u64 d1)
{
	struct cider_verb *v = v_add(c, CIDER_V_WRITE, addr, 16);

	v->data[0] = d0;
	v->data[1] = d1;
}

static inline void v_cas(struct cider_client *c, u64 addr, u64 cmp, u64 swp)
{
	struct cider_verb *v = v_add(c, CIDER_V_CAS, addr, 8);

	v->arg0 = cmp;
	v->arg1 = swp;
}

static inline void v_faa(struct cider_client *c, u64 addr, u64 add)
{
	v_add(c, CIDER_V_FAA, addr, 8)->arg0 = add;
}

static inline void cider_post(struct cider_client *c)
{
	c->cn->fab->ops->post(c->cn->fab->priv, c, c->v, c->nv);
}

void cider_park(struct cider_client *c);
void cider_arm(struct cider_client *c, u64 delay_ns);
void cider_wake(struct cider_client *c);

/* alloc.c */
bool cider_alloc_block(struct cider_client *c);
void cider_block_unlinked(struct cider_client *c, u64 word);
void cider_block_unused(struct cider_client *c);
bool cider_block_build(struct cider_client *c);
void cider_key_bytes(const struct cider_client *c, u8 *out);
void cider_fill(u8 *out, u64 id, u32 len);
bool cider_fence_enter(struct cider_client *c);
bool cider_fence_leave(struct cider_client *c);

/* lockqueue.c */
struct cider_qnode *cider_qnode_get(struct cider_cn *cn, u64 id);
void cider_qnode_owner_done(struct cider_qnode *q);
void cider_send(struct cider_cn *cn, u8 type, bool combined, u64 to, u64 from,
		const struct cider_qnode *q);
bool cider_lock_wait(struct cider_client *c, bool (*cond)(struct cider_client *c));
bool cider_lock_acquire(struct cider_client *c);
bool cider_lock_release(struct cider_client *c);
bool cider_caslock_acquire(struct cider_client *c);
bool cider_caslock_release(struct cider_client *c);

/* writecomb.c */
bool cider_wc_coordinate(struct cider_client *c);
void cider_wc_report(struct cider_client *c);
bool cider_wc_passthru(struct cider_client *c);
void cider_wc_on_msg(struct cider_cn *cn, struct cider_qnode *q, const struct cider_msg *m);

/* contention.c */
bool cider_cont_pessimistic(struct cider_cn *cn, u64 key);
void cider_cont_after_pess(struct cider_cn *cn, u64 key, u32 batch);
void cider_cont_after_opt(struct cider_cn *cn, u64 key, u32 retries);
bool cider_cont_escalate(const struct cider_cn *cn, u32 retries);
void cider_cont_escalated(struct cider_cn *cn, u64 key);

/* localwc.c */
bool cider_lwc_join(struct cider_client *c);
bool cider_lwc_is_combiner(const struct cider_client *c);
void cider_lwc_close(struct cider_client *c);
void cider_lwc_finish(struct cider_client *c);

/* client.c */
bool cider_exec_write(struct cider_client *c);

/* hashindex.c */
bool cider_locate(struct cider_client *c);
void cider_locate_ilock(struct cider_client *c);

#endif
