// SPDX-License-Identifier: GPL-2.0
/*
 * KV blocks (one class: cfg->block_size, 16 bytes for the pointer array,
 * 64 for the hash index, whose slots count 64-byte units) from the CN's
 * slab (slab.h): recycled blocks once their grace period is over, else
 * carved from chunks claimed by FAA on the superblock's cursor.  The MN's
 * CPU never takes part.
 */
#include "verbs.h"

static u32 cider_alloc_cls(const struct cider_client *c)
{
	return cider_hashed(c) ? c->cls : 0;
}

void cider_alloc_init(struct cider_client *c)
{
	c->leaf.alloc.state = CIDER_ALLOC_BEGIN;
	c->leaf.alloc.blk = 0;
}

static enum cider_step cider_alloc_once(struct cider_client *c)
{
	const struct cider_cfg *cfg = cider_cfg_of(c);
	struct cider_alloc *a = &c->leaf.alloc;
	struct cider_cn *cn = c->cn;

	switch (a->state) {
	case CIDER_ALLOC_BEGIN:
		a->state = CIDER_ALLOC_CARVE;
		if (!cider_slab_fence_due(&cn->slab, cider_alloc_cls(c), cider_now(c)))
			return CIDER_STEP_NEXT;
		/* The oldest freed block waits for the reader fence (slab.h). */
		a->fence_t = cider_now(c);
		cider_v_reset(c);
		cider_v_read(c, cfg->rfence, 8);
		a->state = CIDER_ALLOC_FENCE;
		return CIDER_STEP_POSTED;
	case CIDER_ALLOC_FENCE:
		if (!c->v[0].data[0])
			cider_slab_fence_clear(&cn->slab, a->fence_t);
		a->state = CIDER_ALLOC_CARVE;
		return CIDER_STEP_NEXT;
	case CIDER_ALLOC_CARVE:
		if (!cider_slab_alloc(&cn->slab, cider_alloc_cls(c), cider_now(c), &a->blk))
			return CIDER_STEP_DONE;
		/*
		 * The slab is empty: claim a chunk, unless another client is
		 * claiming one already; then wait a round trip for it and
		 * carve again.  (Every client claiming its own cost a fresh
		 * store 32 chunks for one chunk's worth of blocks.)
		 */
		if (cn->slab.claimer[cider_alloc_cls(c)])
			return cider_sleep(c, cider_max_u64(cfg->backoff_t0_ns, 1000));
		cn->slab.claimer[cider_alloc_cls(c)] = c->index + 1;
		cider_v_reset(c);
		cider_v_faa(c, cfg->alloc_cursor, cfg->chunk_size);
		a->state = CIDER_ALLOC_CHUNK;
		return CIDER_STEP_POSTED;
	case CIDER_ALLOC_CHUNK:
	default:
		cn->slab.claimer[cider_alloc_cls(c)] = 0;
		if (c->v[0].old + cfg->chunk_size > cfg->data_size_limit) {
			a->blk = 0;
			return CIDER_STEP_DONE;
		}
		cider_slab_add_chunk(&cn->slab, cider_alloc_cls(c), cfg->data_off + c->v[0].old);
		a->state = CIDER_ALLOC_CARVE;
		return CIDER_STEP_NEXT;
	}
}

/* Ends with c->leaf.alloc.blk a block of class c->cls, or 0: the MN is full. */
enum cider_step cider_alloc_step(struct cider_client *c)
{
	return cider_run(c, cider_alloc_once);
}

const char *cider_alloc_state_name(u8 state)
{
	static const char *const names[] = {
		CIDER_ALLOC_STATES(CIDER_SUB_STATE_NAME)
	};

	return state < ARRAY_SIZE(names) ? names[state] : "alloc:?";
}

/*
 * The block a data pointer @word linked, just unlinked by this client's
 * CAS: recycle it after the grace period.  Blocks outside the data area
 * (preloaded ones) are not ours.
 */
void cider_block_unlinked(struct cider_client *c, u64 word)
{
	const struct cider_cfg *cfg = cider_cfg_of(c);
	u64 off = cider_w_off(c, word);

	if (off >= cfg->data_off && off < cfg->data_off + cfg->data_size_limit)
		cider_slab_free(&c->cn->slab, cider_hashed(c) ? cider_slot_class(word) : 0,
				off, cider_now(c));
}

/*
 * Hash index: build the KV block for (c->kbytes, c->wval, c->wvlen) in
 * c->buf and describe the WRITE of it to @blk.  The value may be another
 * client's (local WC); the block's incarnation is the writing operation.
 */
bool cider_block_build(struct cider_client *c, u64 blk)
{
	int n, cls = cider_block_class(c->klen, c->wvlen);

	/*
	 * A block no class holds must not be copied, nor become a 4 GiB
	 * WRITE; nor one larger than c->buf.
	 */
	if (cls < 0 || cider_class_size((u32)cls) > c->buf_len)
		return false;
	memcpy(c->buf + CIDER_BLOCK_HDR, c->kbytes, c->klen);
	if (c->wvlen)
		memcpy(c->buf + CIDER_BLOCK_HDR + c->klen, c->wval, c->wvlen);
	n = cider_block_seal(c->buf, c->wop, c->klen, c->wvlen);
	if (n < 0)
		return false;
	cider_v_add(c, CIDER_V_WRITE, blk, (u32)n)->buf = c->buf;
	return true;
}

/* A block this client allocated but never linked (*@blk: 0 after). */
void cider_block_unused(struct cider_client *c, u64 *blk)
{
	if (*blk)
		cider_slab_unused(&c->cn->slab, cider_hashed(c) ? c->cls : 0, *blk);
	*blk = 0;
}

/* A client that dies while claiming a chunk lets the others claim. */
void cider_alloc_crash(struct cider_client *c)
{
	struct cider_slab *s = &c->cn->slab;
	unsigned int i;

	for (i = 0; i < CIDER_NR_CLASSES; i++)
		if (s->claimer[i] == c->index + 1)
			s->claimer[i] = 0;
}
