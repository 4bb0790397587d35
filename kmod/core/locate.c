// SPDX-License-Identifier: GPL-2.0
/*
 * Finding a key's data pointer: in the pointer array it is at a fixed
 * place; in the RACE-style hash index (hashindex.h) it is whichever slot of the
 * key's two buckets holds a block with the key.  Either way the result is
 * c->paddr (the word to CAS), c->laddr (its lock entry) and c->ptr (its
 * value as read), so every mode's operations run unchanged on top.
 */
#include "verbs.h"

static u64 cider_bucket_addr(const struct cider_cfg *cfg, u64 b)
{
	return cfg->bucket_off + b * CIDER_BUCKET_SIZE;
}

static void cider_use_slot(struct cider_client *c, u32 b, u32 i)
{
	const struct cider_cfg *cfg = cider_cfg_of(c);
	u64 slot = c->sub.locate.bucket[b] * CIDER_BUCKET_SLOTS + i;

	c->ptr = c->sub.locate.bkt[b][i];
	c->paddr = cider_bucket_addr(cfg, c->sub.locate.bucket[b]) + i * 8;
	c->laddr = cider_lock_addr(cfg, slot);
	c->lver = cider_w_ver(c, c->ptr);
}

/*
 * Is the block in c->buf (@len bytes fetched) an intact block of c's key?
 * When it is, a SEARCH takes its value: c->got_len, c->got (the first 8
 * bytes) and the first c->out_len bytes in c->out.
 */
static enum cider_block_check cider_block_mine(struct cider_client *c, u32 len)
{
	enum cider_block_check r;
	const void *v;
	u32 vl;

	/* Lengths, CRC, then the key bytes against the caller's. */
	r = cider_block_check(c->buf, len, c->kbytes, c->klen, &v, &vl);
	if (r != CIDER_BLOCK_OK)
		return r;
	c->got_len = vl;
	c->got = cider_le64(v, vl);
	if (c->op == CIDER_SEARCH && c->out)
		memcpy(c->out, v, vl < c->out_len ? vl : c->out_len);
	return CIDER_BLOCK_OK;
}

/* INSERTs of a key serialize on its first bucket's lock (no duplicates). */
void cider_locate_ilock(struct cider_client *c)
{
	const struct cider_cfg *cfg = cider_cfg_of(c);
	struct cider_hash_loc loc;

	cider_hash_locate(c->kbytes, c->klen, cfg->nr_buckets, &loc);
	c->caddr = cfg->ilock_off + loc.bucket[0] * 16;
}

void cider_locate_init(struct cider_client *c)
{
	c->sub.locate.state = CIDER_LOCATE_BEGIN;
}

/* Start: the array's pointer is at a fixed place, a key's buckets are two. */
static enum cider_step cider_locate_begin(struct cider_client *c)
{
	const struct cider_cfg *cfg = cider_cfg_of(c);
	struct cider_locate *l = &c->sub.locate;
	struct cider_hash_loc loc;

	c->outcome = CIDER_OUT_NOTFOUND;	/* until it is found */
	l->cached = false;
	c->t0 = cider_now(c);
	cider_v_reset(c);
	if (!cider_hashed(c)) {
		c->paddr = cider_ptr_addr(cfg, c->key);
		c->laddr = cider_lock_addr(cfg, c->key);
		cider_v_read(c, c->paddr, 8);
		l->state = CIDER_LOCATE_POINTER;
		return CIDER_STEP_POSTED;
	}
	cider_hash_locate(c->kbytes, c->klen, cfg->nr_buckets, &loc);
	c->fp = loc.fp;
	l->bucket[0] = loc.bucket[0];
	l->bucket[1] = loc.bucket[1];
	cider_v_read(c, cider_bucket_addr(cfg, l->bucket[0]), CIDER_BUCKET_SIZE);
	cider_v_read(c, cider_bucket_addr(cfg, l->bucket[1]), CIDER_BUCKET_SIZE);
	l->state = CIDER_LOCATE_BUCKETS;
	return CIDER_STEP_POSTED;
}

/*
 * The next slot whose fingerprint matches: READ its block, since
 * fingerprints collide.  None: the key is absent; offer a slot of the
 * emptier bucket (two choices, as RACE), c->paddr 0 if both are full.
 */
static enum cider_step cider_locate_scan(struct cider_client *c)
{
	struct cider_locate *l = &c->sub.locate;
	u64 w, slot;
	u32 b, i;

	for (; l->ci < 2 * CIDER_BUCKET_SLOTS; l->ci++) {
		w = l->bkt[l->ci / 8][l->ci % 8];
		if (cider_slot_empty(w) || cider_slot_fp(w) != c->fp)
			continue;
		/*
		 * A class no block has (4 bits hold 16, there are 12), or one
		 * larger than this store's largest block, comes only from a
		 * corrupt slot (raw writes can make one): never READ that
		 * much into c->buf.
		 */
		if (cider_slot_class(w) >= CIDER_NR_CLASSES ||
		    cider_class_size(cider_slot_class(w)) > c->buf_len)
			continue;
		/* The cached block's slot, word unchanged and leased: it is the key. */
		slot = cider_bucket_addr(cider_cfg_of(c), l->bucket[l->ci / 8]) + (l->ci % 8) * 8;
		if (cider_cache_knows_slot(c, slot, w)) {
			cider_use_slot(c, l->ci / 8, l->ci % 8);
			l->cached = true;
			c->outcome = CIDER_OUT_OK;
			return CIDER_STEP_DONE;
		}
		cider_v_reset(c);
		cider_v_add(c, CIDER_V_READ, cider_slot_off(w),
			    cider_class_size(cider_slot_class(w)))->buf = c->buf;
		l->state = CIDER_LOCATE_BLOCK;
		return CIDER_STEP_POSTED;
	}
	c->ptr = 0;
	c->paddr = 0;
	b = cider_bucket_load(l->bkt[1]) < cider_bucket_load(l->bkt[0]);
	for (i = 0; i < 2 * CIDER_BUCKET_SLOTS; i++) {
		u32 bb = (b + i / CIDER_BUCKET_SLOTS) % 2, ii = i % CIDER_BUCKET_SLOTS;

		if (cider_slot_empty(l->bkt[bb][ii])) {
			cider_use_slot(c, bb, ii);
			break;
		}
	}
	return CIDER_STEP_DONE;
}

/* A candidate's block is in c->buf: is it c->key's? */
static enum cider_step cider_locate_block(struct cider_client *c)
{
	struct cider_locate *l = &c->sub.locate;
	u64 w = l->bkt[l->ci / 8][l->ci % 8];
	enum cider_block_check r;

	r = cider_block_mine(c, cider_class_size(cider_slot_class(w)));
	/* Read beyond the reclamation rule: it may be a reused block, look again. */
	if (!c->fenced && cider_now(c) - c->t0 > cider_cfg_of(c)->grace_ns / 2) {
		c->late++;
		c->outcome = CIDER_OUT_RELOCATE;
		return CIDER_STEP_DONE;
	}
	/*
	 * Within the rule a block cannot be torn (blocks are written before
	 * they are linked and freed a grace period after they are unlinked):
	 * one that fails its checks is corrupt (a raw write, a bad peer), and
	 * reads the same every time.  Looking again would spin forever on
	 * it; it is not this key's block, as far as anyone can tell.
	 */
	if (r == CIDER_BLOCK_TORN)
		c->st.corrupt++;
	if (r != CIDER_BLOCK_OK) {		/* a fingerprint collision, or corrupt */
		l->ci++;
		l->state = CIDER_LOCATE_SCAN;
		return CIDER_STEP_NEXT;
	}
	cider_use_slot(c, l->ci / 8, l->ci % 8);
	c->outcome = CIDER_OUT_OK;
	return CIDER_STEP_DONE;
}

static enum cider_step cider_locate_once(struct cider_client *c)
{
	struct cider_locate *l = &c->sub.locate;

	switch (l->state) {
	case CIDER_LOCATE_BEGIN:
		return cider_locate_begin(c);
	case CIDER_LOCATE_POINTER:
		c->ptr = c->v[0].data[0];
		c->outcome = cider_w_off(c, c->ptr) ? CIDER_OUT_OK : CIDER_OUT_NOTFOUND;
		return CIDER_STEP_DONE;
	case CIDER_LOCATE_BUCKETS:
		memcpy(l->bkt[0], c->v[0].data, CIDER_BUCKET_SIZE);
		memcpy(l->bkt[1], c->v[1].data, CIDER_BUCKET_SIZE);
		l->ci = 0;
		l->state = CIDER_LOCATE_SCAN;
		return CIDER_STEP_NEXT;
	case CIDER_LOCATE_SCAN:
		return cider_locate_scan(c);
	case CIDER_LOCATE_BLOCK:
	default:
		return cider_locate_block(c);
	}
}

/*
 * Find c->key.  Ends OK (it is there) or NOTFOUND (a hash index then
 * offers an empty slot for an INSERT, c->paddr 0: both buckets full), or
 * RELOCATE if a block read broke the reclamation rule: the caller starts
 * over.
 */
enum cider_step cider_locate_step(struct cider_client *c)
{
	return cider_run(c, cider_locate_once);
}

const char *cider_locate_state_name(u8 state)
{
	static const char *const names[] = {
		CIDER_LOCATE_STATES(CIDER_SUB_STATE_NAME)
	};

	return state < ARRAY_SIZE(names) ? names[state] : "locate:?";
}
