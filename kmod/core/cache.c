// SPDX-License-Identifier: GPL-2.0
/*
 * The CN cache of hot keys (cache.h has the protocol of the lease bits).
 *
 * A set-associative table per CN, bounded by its owner (nr entries of
 * ent_bytes each, allocated by the fabric).  An entry is a key's heat
 * (SEARCHes on this CN in a row that found its word unchanged: no write
 * came between) and, once the key is leased, its bytes and the right to
 * answer with them.  A key becomes leased when its heat reaches
 * cfg->cache_hot: a key written between most of a CN's reads of it never
 * gets there, so writers of such keys never wait for a lease.
 *
 * Reuse of a block (slab.h) cannot fool an entry: the kept block was
 * linked when its leased word was read at `checked`; unlinking it takes
 * a writer who had this CN's answer to its INVAL (which dropped the
 * entry) or waited out the lease, and reusing it a grace period more.
 * So a READ posted within lease + grace / 2 of `checked` that returns
 * the same word, to an entry still kept, names the same block.
 */
#include "verbs.h"

void cider_cache_init(struct cider_cache *cc, struct cider_cache_ent *ent, u8 *room,
		      u32 nr, u32 ent_bytes)
{
	cc->ent = ent;
	cc->room = room;
	cc->nr = nr - nr % CIDER_CACHE_WAYS;
	cc->ent_bytes = ent_bytes;
	cc->evictions = 0;
	if (ent)
		memset(ent, 0, sizeof(*ent) * nr);
}

u64 cider_cache_bytes(u32 nr, u32 ent_bytes)
{
	return (u64)nr * (sizeof(struct cider_cache_ent) + ent_bytes);
}

static bool cider_cache_on(const struct cider_client *c)
{
	return cider_cfg_of(c)->cache && c->cn->cache.nr;
}

static u8 *cider_cache_room(const struct cider_cache *cc, const struct cider_cache_ent *e)
{
	return cc->room + (size_t)(e - cc->ent) * cc->ent_bytes;
}

/* Is @e c's key?  Hashed keys are found by a hash: compare the bytes. */
static bool cider_cache_is(const struct cider_cache *cc, const struct cider_cache_ent *e,
			   const struct cider_client *c)
{
	if (!e->in_use || e->key != c->key)
		return false;
	return !cider_hashed(c) ||
	       (e->klen == c->klen && !memcmp(cider_cache_room(cc, e), c->kbytes, c->klen));
}

/* The set of ways that holds @key's entry. */
static struct cider_cache_ent *cider_cache_set(const struct cider_cache *cc, u64 key)
{
	u64 h = (key + 1) * 0x9e3779b97f4a7c15ULL;

	return &cc->ent[(u32)((h >> 32) % (cc->nr / CIDER_CACHE_WAYS)) * CIDER_CACHE_WAYS];
}

/* c's key's entry; with @create, one taken from the set's least recently used. */
static struct cider_cache_ent *cider_cache_find(struct cider_client *c, bool create)
{
	struct cider_cache *cc = &c->cn->cache;
	struct cider_cache_ent *b = cider_cache_set(cc, c->key), *victim = b;
	u32 i;

	for (i = 0; i < CIDER_CACHE_WAYS; i++) {
		if (cider_cache_is(cc, &b[i], c))
			return &b[i];
		if (!b[i].in_use || (victim->in_use && b[i].used < victim->used))
			victim = &b[i];
	}
	if (!create || (cider_hashed(c) && c->klen > cc->ent_bytes))
		return NULL;
	if (victim->in_use)
		cc->evictions++;
	memset(victim, 0, sizeof(*victim));
	victim->in_use = true;
	victim->key = c->key;
	if (cider_hashed(c)) {
		victim->klen = c->klen;
		memcpy(cider_cache_room(cc, victim), c->kbytes, c->klen);
	}
	return victim;
}

/* Answer the SEARCH with @e's bytes. */
static void cider_cache_answer(struct cider_client *c, const struct cider_cache_ent *e)
{
	const u8 *v = cider_cache_room(&c->cn->cache, e) + e->klen;

	c->res = CIDER_RES_OK;
	c->got_len = e->vlen;
	c->got = cider_le64(v, e->vlen);
	if (c->out)
		memcpy(c->out, v, cider_min_u64(e->vlen, c->out_len));
}

bool cider_cache_serve(struct cider_client *c)
{
	struct cider_cache_ent *e;
	u64 now;

	if (!cider_cache_on(c))
		return false;
	e = cider_cache_find(c, false);
	if (!e || !e->kept)
		return false;
	now = cider_now(c);
	if (now >= e->until)
		return false;
	e->used = now;
	cider_cache_answer(c, e);
	c->st.cache_hits++;
	return true;
}

/* Does word @w, which c just read at @paddr (at c->t0), name @e's block? */
static bool cider_cache_same(const struct cider_client *c, const struct cider_cache_ent *e,
			     u64 paddr, u64 w)
{
	const struct cider_cfg *cfg = cider_cfg_of(c);

	return e->kept && e->paddr == paddr && e->word == w &&
	       cider_w_leased(c, w) && !cider_w_waiting(c, w) &&
	       c->t0 > c->cn->cache.inval_t &&
	       c->t0 - e->checked < cfg->cache_lease_ns + cfg->grace_ns / 2;
}

bool cider_cache_knows_slot(struct cider_client *c, u64 paddr, u64 w)
{
	struct cider_cache_ent *e;

	if (!cider_cache_on(c) || c->op != CIDER_SEARCH)
		return false;
	e = cider_cache_find(c, false);
	return e && cider_cache_same(c, e, paddr, w);
}

bool cider_cache_refresh(struct cider_client *c)
{
	struct cider_cache_ent *e;

	if (!cider_cache_on(c))
		return false;
	e = cider_cache_find(c, false);
	if (!e || !cider_cache_same(c, e, c->paddr, c->ptr))
		return false;
	e->checked = c->t0;
	e->until = c->t0 + cider_cfg_of(c)->cache_lease_ns;
	e->used = cider_now(c);
	cider_cache_answer(c, e);
	c->st.cache_refreshes++;
	return true;
}

/*
 * Keep the SEARCH's value in @e for word c->ptr; false if it does not fit
 * (or was not all read: a short out buffer on the hash index).
 */
static bool cider_cache_keep(struct cider_client *c, struct cider_cache_ent *e)
{
	struct cider_cache *cc = &c->cn->cache;
	u8 *room = cider_cache_room(cc, e) + e->klen;

	e->kept = false;
	if (e->klen + c->got_len > cc->ent_bytes)
		return false;
	if (cider_hashed(c)) {
		if (c->got_len > c->out_len)
			return false;
		memcpy(room, c->out, c->got_len);
	} else {
		cider_put_le64(room, c->got, 8);
	}
	e->vlen = c->got_len;
	e->paddr = c->paddr;
	e->kept = true;
	return true;
}

/* The right, from @t: the READ (or CAS) posted at @t showed the word leased. */
static void cider_cache_grant(struct cider_client *c, struct cider_cache_ent *e, u64 t)
{
	if (t <= c->cn->cache.inval_t || !cider_cache_keep(c, e))
		return;
	e->word = c->ptr;
	e->checked = t;
	e->until = t + cider_cfg_of(c)->cache_lease_ns;
	c->st.cache_fills++;
}

/*
 * Is the key worth a lease?  Read here at least cache_hot times with its
 * word unchanged for cache_stable_ns at least (a key written more often
 * would make its writers stop leases that served nobody), and at least
 * once per lease on average.  A write of a leased key costs a CAS and an
 * INVAL to every CN and back; a lease read as often on every CN as here
 * serves a read per CN, two verbs each, which pays for that.
 */
static bool cider_cache_hot(const struct cider_client *c, const struct cider_cache_ent *e)
{
	const struct cider_cfg *cfg = cider_cfg_of(c);
	u64 span = c->t0 - e->since;

	return e->seen >= cfg->cache_hot && span >= cfg->cache_stable_ns &&
	       (u64)(e->seen - 1) * cfg->cache_lease_ns >= span;
}

bool cider_cache_note(struct cider_client *c)
{
	struct cider_cache_ent *e;

	if (!cider_cache_on(c) || c->res != CIDER_RES_OK)
		return false;
	c->st.cache_misses++;
	e = cider_cache_find(c, true);
	if (!e)
		return false;
	e->used = cider_now(c);
	if (e->seen && cider_w_bare(c, e->word) == cider_w_bare(c, c->ptr) &&
	    e->paddr == c->paddr) {
		e->seen++;
	} else {
		e->seen = 1;
		e->since = c->t0;
		e->kept = false;
		e->until = 0;
	}
	e->word = c->ptr;
	e->paddr = c->paddr;
	if (cider_w_waiting(c, c->ptr))		/* a writer waits: no new right */
		return false;
	if (cider_w_leased(c, c->ptr)) {
		cider_cache_grant(c, e, c->t0);
		return false;
	}
	return cider_cache_hot(c, e);
}

void cider_cache_marked(struct cider_client *c, bool ok, bool fresh, u64 t)
{
	struct cider_cache_ent *e;

	/* Turned off while the CAS was out (its node leaves the store). */
	if (!cider_cache_on(c))
		return;
	e = cider_cache_find(c, false);
	if (!e)
		return;
	if (!ok) {		/* the word moved on: a write, or another's lease */
		e->seen = 0;
		return;
	}
	c->st.cache_marks++;
	c->ptr |= cider_w_leased_bit(c);
	if (fresh)
		cider_cache_grant(c, e, t);
}

void cider_cache_inval(struct cider_cn *cn, u64 key, u64 now)
{
	struct cider_cache *cc = &cn->cache;
	struct cider_cache_ent *b;
	u32 i;

	if (now > cc->inval_t)
		cc->inval_t = now;
	cc->invals++;
	if (!cc->nr)
		return;
	/* Hashed keys are known by a hash here: drop every namesake too. */
	b = cider_cache_set(cc, key);
	for (i = 0; i < CIDER_CACHE_WAYS; i++) {
		if (!b[i].in_use || b[i].key != key)
			continue;
		b[i].until = 0;
		b[i].kept = false;
		b[i].seen = 0;
	}
}

void cider_cache_hold(struct cider_cn *cn, u64 until)
{
	if (until > cn->cache.inval_t)
		cn->cache.inval_t = until;
}
