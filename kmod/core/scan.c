// SPDX-License-Identifier: GPL-2.0
/*
 * SCAN: the keys of the index positions [c->got, c->scan_end), written as
 * records (scan.h) to c->out, at most c->out_len bytes of them.  A round
 * READs a group of eight positions (a bucket, or eight pointers), then
 * the blocks of its occupied ones, a batch of up to CIDER_MAX_VERBS at a
 * time, and takes the key out of each.
 *
 * Why a key present for the whole scan is returned: it stays in one slot
 * (a key leaves a slot only by a DELETE, and an UPDATE keeps its slot),
 * so the round that reads its slot finds the slot occupied, and the block
 * it points to is the key's if it arrives within the reclamation rule of
 * the slot's READ (the rule a SEARCH obeys: the block was linked when the
 * slot was read, so it is not reused before a grace period after that).
 * A READ that misses the rule reads the group again; one that keeps
 * missing announces itself on the reader fence (client.c), as a SEARCH
 * does.  A key deleted and inserted again into an unvisited slot may come
 * twice; one inserted or deleted during the scan may or may not come.
 *
 * The values are not READ: a scan names keys, the caller GETs what it
 * wants (and a GET checks the block's CRC).  A block whose header or key
 * does not belong in its slot (a raw write) is skipped and counted
 * (c->st.corrupt), as a lookup skips it.
 */
#include "verbs.h"
#include "scan.h"

u64 cider_scan_positions(const struct cider_cfg *cfg)
{
	return cfg->index == CIDER_INDEX_HASH ? cfg->nr_buckets * CIDER_BUCKET_SLOTS :
	       cfg->nr_keys;
}

/* A hash candidate's READ: its header and key, no more than its block. */
static u32 cider_scan_peek(u64 w)
{
	u32 size = cider_class_size(cider_slot_class(w));

	return size < CIDER_SCAN_PEEK ? size : CIDER_SCAN_PEEK;
}

/* Does position @i of the group hold a block worth READing? */
static bool cider_scan_occupied(const struct cider_client *c, u32 i)
{
	u64 w = c->sub.scan.w[i];

	if (!cider_hashed(c))
		return cider_word_off(w) != 0;
	/* A class no block has comes only from a corrupt slot (locate.c). */
	return !cider_slot_empty(w) && cider_slot_class(w) < CIDER_NR_CLASSES &&
	       cider_class_size(cider_slot_class(w)) <= c->buf_len;
}

void cider_scan_init(struct cider_client *c)
{
	c->sub.scan.state = CIDER_SCAN_BEGIN;
}

/* READ the group holding c->got; the page ends at c->scan_end. */
static enum cider_step cider_scan_begin(struct cider_client *c)
{
	const struct cider_cfg *cfg = cider_cfg_of(c);
	struct cider_scan *s = &c->sub.scan;
	u64 total = cider_scan_positions(cfg), end;

	c->outcome = CIDER_OUT_OK;
	if (c->got >= c->scan_end)
		return CIDER_STEP_DONE;
	s->base = c->got / CIDER_SCAN_GROUP * CIDER_SCAN_GROUP;
	end = s->base + CIDER_SCAN_GROUP < total ? s->base + CIDER_SCAN_GROUP : total;
	s->n = (u32)(end - s->base);
	c->t0 = cider_now(c);
	cider_v_reset(c);
	if (cider_hashed(c))
		cider_v_read(c, cfg->bucket_off + s->base * 8, s->n * 8);
	else
		cider_v_read(c, cider_ptr_addr(cfg, s->base), s->n * 8);
	s->state = CIDER_SCAN_INDEX;
	return CIDER_STEP_POSTED;
}

/*
 * The next occupied positions of the group: READ their blocks, as many
 * as there are verbs.  A READ comes back in the verb's own words (an
 * array's block, a hash block of the smallest class) or in c->buf, which
 * holds one: the kernel's fabric moves bytes in place only into the
 * whole buffer it mapped (kvfabric.c).
 */
static enum cider_step cider_scan_pick(struct cider_client *c)
{
	struct cider_scan *s = &c->sub.scan;
	u32 i = (u32)(c->got - s->base), len;
	struct cider_verb *v;
	bool buf_used = false;

	cider_v_reset(c);
	for (s->nc = 0; i < s->n && s->nc < CIDER_MAX_VERBS; i++) {
		u64 w = s->w[i];

		if (!cider_scan_occupied(c, i))
			continue;
		if (!cider_hashed(c)) {
			cider_v_read(c, cider_word_off(w), CIDER_BLOCK_SIZE);
			s->cand[s->nc++] = i;
			continue;
		}
		len = cider_scan_peek(w);
		if (len > sizeof(c->v[0].data) && buf_used)
			break;
		v = cider_v_add(c, CIDER_V_READ, cider_slot_off(w), len);
		if (len > sizeof(c->v[0].data)) {
			v->buf = c->buf;
			buf_used = true;
		}
		s->cand[s->nc++] = i;
	}
	if (s->nc) {
		s->state = CIDER_SCAN_BLOCKS;
		return CIDER_STEP_POSTED;
	}
	c->got = s->base + s->n;	/* the rest of the group is empty */
	s->state = CIDER_SCAN_BEGIN;
	return CIDER_STEP_NEXT;
}

/*
 * Candidate @k's key, if its block belongs in its slot: an array block
 * names its own index; a hash block's key hashes to this bucket and to
 * the slot's fingerprint.  NULL otherwise.
 */
static const u8 *cider_scan_key(struct cider_client *c, u32 k, u8 *idx, u32 *klen)
{
	struct cider_scan *s = &c->sub.scan;
	u64 pos = s->base + s->cand[k], w = s->w[s->cand[k]], bucket;
	const u8 *b = c->v[k].buf ? c->v[k].buf : (const u8 *)c->v[k].data;
	struct cider_block_hdr h;
	struct cider_hash_loc loc;

	if (!cider_hashed(c)) {
		if (c->v[k].data[0] != pos)
			return NULL;
		cider_put_le64(idx, pos, 8);
		*klen = 8;
		return idx;
	}
	memcpy(&h, b, sizeof(h));
	if (!h.key_len || h.key_len > CIDER_MAX_KEY || h.cls != cider_slot_class(w) ||
	    CIDER_BLOCK_HDR + (u32)h.key_len > c->v[k].len)
		return NULL;
	cider_hash_locate(b + CIDER_BLOCK_HDR, h.key_len, cider_cfg_of(c)->nr_buckets, &loc);
	bucket = pos / CIDER_BUCKET_SLOTS;
	if (loc.fp != cider_slot_fp(w) || (loc.bucket[0] != bucket && loc.bucket[1] != bucket))
		return NULL;
	*klen = h.key_len;
	return b + CIDER_BLOCK_HDR;
}

/* Append @key if it has the prefix (c->kbytes): false when out of room. */
static bool cider_scan_emit(struct cider_client *c, const u8 *key, u32 klen)
{
	u32 need = CIDER_SCAN_REC_SIZE(klen), len = klen;

	if (klen < c->klen || (c->klen && memcmp(key, c->kbytes, c->klen)))
		return true;
	if (c->got_len + need > c->out_len)
		return false;
	memcpy(c->out + c->got_len, &len, CIDER_SCAN_REC_HDR);
	memcpy(c->out + c->got_len + CIDER_SCAN_REC_HDR, key, klen);
	memset(c->out + c->got_len + CIDER_SCAN_REC_HDR + klen, 0,
	       need - CIDER_SCAN_REC_HDR - klen);
	c->got_len += need;
	return true;
}

/* The candidates' blocks are in: their keys, if read within the rule. */
static enum cider_step cider_scan_blocks(struct cider_client *c)
{
	struct cider_scan *s = &c->sub.scan;
	u8 idx[8];
	u32 k, klen;

	if (!c->fenced && cider_now(c) - c->t0 > cider_cfg_of(c)->grace_ns / 2) {
		c->late++;
		c->read_retries++;
		c->outcome = CIDER_OUT_RELOCATE;	/* READ the group again */
		s->state = CIDER_SCAN_BEGIN;
		return CIDER_STEP_DONE;
	}
	for (k = 0; k < s->nc; k++) {
		const u8 *key = cider_scan_key(c, k, idx, &klen);

		if (!key)
			c->st.corrupt++;
		else if (!cider_scan_emit(c, key, klen))
			return CIDER_STEP_DONE;		/* full: the page ends here */
		c->got = s->base + s->cand[k] + 1;
	}
	s->state = CIDER_SCAN_PICK;
	return CIDER_STEP_NEXT;
}

static enum cider_step cider_scan_once(struct cider_client *c)
{
	struct cider_scan *s = &c->sub.scan;

	switch (s->state) {
	case CIDER_SCAN_BEGIN:
		return cider_scan_begin(c);
	case CIDER_SCAN_INDEX:
		memcpy(s->w, c->v[0].data, s->n * 8);
		s->state = CIDER_SCAN_PICK;
		return CIDER_STEP_NEXT;
	case CIDER_SCAN_PICK:
		return cider_scan_pick(c);
	case CIDER_SCAN_BLOCKS:
	default:
		return cider_scan_blocks(c);
	}
}

/*
 * One page: ends OK with c->got the next position (c->scan_end or
 * earlier when c->out filled up) and c->got_len the records' bytes, or
 * RELOCATE when a block READ missed the reclamation rule (the caller
 * starts the group over, on the fence if that keeps happening).
 */
enum cider_step cider_scan_step(struct cider_client *c)
{
	return cider_run(c, cider_scan_once);
}

const char *cider_scan_state_name(u8 state)
{
	static const char *const names[] = {
		CIDER_SCAN_STATES(CIDER_SUB_STATE_NAME)
	};

	return state < ARRAY_SIZE(names) ? names[state] : "scan:?";
}
