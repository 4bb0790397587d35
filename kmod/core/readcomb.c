// SPDX-License-Identifier: GPL-2.0
/*
 * Read combining inside one CN (cfg->read_comb): the first client to
 * SEARCH a key leads; SEARCHes of the same key on the same CN that arrive
 * while it runs wait for it, and take its result if they arrived before
 * its lookup's first READ was posted (c->t0, the locate's start).  That
 * READ then executed after each of them began, and the value it returned
 * is one the key held within each of their intervals: nobody gets a
 * value older than a SEARCH that finished before it began could have
 * returned.  Those who arrived later wait for the next lookup, led by
 * the first of them.  The state is in the clients themselves: a leader's
 * rc_members, a member's rc_of (clients_per_cn <= 64).
 */
#include "verbs.h"

/* Is @o leading a lookup that @c may wait for (same key, alive)? */
static bool cider_rc_leads(const struct cider_client *o, const struct cider_client *c)
{
	if (o == c || !o->rc_leading || o->dead || o->key != c->key)
		return false;
	/* Hashed keys are found by their id, a hash: compare the bytes. */
	return !cider_hashed(c) ||
	       (o->klen == c->klen && !memcmp(o->kbytes, c->kbytes, c->klen));
}

/* Returns true when @c joined a leader (it waits), false when it leads. */
bool cider_rc_join(struct cider_client *c)
{
	struct cider_cn *cn = c->cn;
	u32 i;

	for (i = 0; i < cn->cfg->clients_per_cn; i++) {
		struct cider_client *o = &cn->clients[i];

		if (!cider_rc_leads(o, c))
			continue;
		c->rc_of = (s32)i;
		c->join_t = cider_now(c);
		o->rc_members |= 1ULL << c->index;
		return true;
	}
	c->rc_leading = true;
	c->rc_members = 0;
	return false;
}

/*
 * May member @m take leader @c's result?  It arrived before the lookup's
 * first READ, and the bytes @c kept cover what @m asks for.
 */
static bool cider_rc_covers(const struct cider_client *c, const struct cider_client *m)
{
	if (c->dead || c->res == CIDER_RES_NONE || m->join_t >= c->t0)
		return false;
	return !m->out || !cider_hashed(c) ||
	       cider_min_u64(c->got_len, m->out_len) <= cider_min_u64(c->got_len, c->out_len);
}

static void cider_rc_take(struct cider_client *m, const struct cider_client *c)
{
	m->res = c->res;
	m->writer = c->writer;
	m->got = c->got;
	m->got_len = c->got_len;
	if (m->out && cider_hashed(c))
		memcpy(m->out, c->out, cider_min_u64(c->got_len, m->out_len));
	else if (m->out)
		cider_put_le64(m->out, c->got, m->out_len);
	m->st.read_combined++;
}

/*
 * The leader is done (or dead): its members that may take its result do;
 * the first of the others leads the next lookup for the rest.  Returns
 * whom to wake (client index bits).
 */
u64 cider_rc_finish(struct cider_client *c)
{
	struct cider_cn *cn = c->cn;
	u64 wake = 0, rest = 0, bits;
	u32 p, lead;

	if (!c->rc_leading)
		return 0;
	c->rc_leading = false;
	bits = c->rc_members;
	c->rc_members = 0;
	for (p = 0; bits; p++, bits >>= 1) {
		struct cider_client *m = &cn->clients[p];

		if (!(bits & 1) || m->dead)
			continue;
		if (cider_rc_covers(c, m)) {
			cider_rc_take(m, c);
			m->rc_of = -1;
			wake |= 1ULL << p;
		} else {
			rest |= 1ULL << p;
		}
	}
	if (!rest)
		return wake;
	for (lead = 0; !(rest >> lead & 1); lead++)
		;
	rest &= ~(1ULL << lead);
	cn->clients[lead].rc_of = -1;
	cn->clients[lead].rc_leading = true;
	cn->clients[lead].rc_members = rest;
	for (p = 0; p < 64; p++)
		if (rest >> p & 1)
			cn->clients[p].rc_of = (s32)lead;
	return wake | 1ULL << lead;
}

/* A waiting member dies: its leader forgets it. */
void cider_rc_leave(struct cider_client *c)
{
	if (c->rc_of < 0)
		return;
	c->cn->clients[c->rc_of].rc_members &= ~(1ULL << c->index);
	c->rc_of = -1;
}
