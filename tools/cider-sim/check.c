// SPDX-License-Identifier: GPL-2.0
/*
 * The checks every run makes.
 *
 * Linearizability, per key, as a register with insert and delete.  Every
 * written value is unique (the op's id), and the MN executes the CASes on
 * a data pointer one at a time, so the successful CASes on a key form
 * the sequence of its states.  Each acknowledged write must be one of
 * them, or be covered by one (write combining: its value was superseded
 * inside its own interval).  The history is linearizable iff points p_j
 * can be chosen for the state changes, non-decreasing, with
 *   - p_j inside the interval of the write that made state j,
 *   - every read of state j at some point in [p_j, p_j+1],
 *   - every write covered by change j at some point in [p_j-1, p_j],
 *   - every write's precondition met (UPDATE/DELETE: present before,
 *     INSERT: absent before, PUT: none),
 *   - every read of "absent" (or an INSERT that found the key) overlapping
 *     some absent (present) state.
 * All but the last are lower and upper bounds on each p_j: the feasible
 * points are exactly the non-decreasing ones within the bounds, between
 * the earliest (E) and latest (L) choice.  A read without a value is
 * satisfied outright when some state of its kind overlaps it under every
 * feasible choice; otherwise it is committed to one candidate state (two
 * more bounds) and the bounds are propagated again.  A pass is therefore
 * always a real linearization; only such a commitment could, in
 * principle, reject a history another commitment would accept.
 *
 * Mutual exclusion and FIFO come from the protocol's ACQUIRE, RELEASE and
 * HANDOVER observations, FIFO against the queue order the MN recorded.
 */
#include <stdlib.h>
#include <string.h>

#include "sim.h"

#define NEVER (~0ULL)

/*
 * FIFO, against the MN: a lock-queue ticket is handed the lock only when
 * the MN's head is that ticket, in the holder's generation (so every
 * earlier ticket was released, by its holder or its batch, or skipped by
 * a reset); a release releases tickets from the head it holds.
 */
static void check_queue(struct sim *s, struct cider_client *c, u8 type, u64 lock, u64 b)
{
	u64 h = sim_mem_read(s, lock);
	u32 first = (u32)b, n = (u32)(b >> 32) & 0x7fffffff;

	s->fifo_checked++;
	if (type == CIDER_T_ACQUIRE && (cider_lq_head(h) != first || cider_lq_gen(h) != n))
		sim_violation(s, "FIFO: lock at %#llx acquired by client %u with ticket %u (gen %u) while the MN serves %u (gen %u) at %.3f us",
			      (unsigned long long)lock, c->id, first, n, cider_lq_head(h),
			      cider_lq_gen(h), (double)s->now / US);
	else if (type == CIDER_T_RELEASE && (cider_lq_head(h) != first || cider_lq_size(h) < n))
		sim_violation(s, "FIFO: lock at %#llx: client %u releases %u tickets from %u, the MN has %u from %u at %.3f us",
			      (unsigned long long)lock, c->id, n, first, cider_lq_size(h),
			      cider_lq_head(h), (double)s->now / US);
}

/* Holder @hc (client id, incarnation << 32) is dead: crashed, or revived since. */
static bool sim_holder_dead(const struct sim *s, u64 hc)
{
	u32 id = (u32)hc;

	return s->clients[id].dead || s->incarnation[id] != (u32)(hc >> 32);
}

void sim_trace(void *priv, struct cider_client *c, u8 type, u64 key /* the lock */, u64 a, u64 b)
{
	struct sim *s = priv;
	u64 *h, *hc;

	if (b & CIDER_T_QUEUE && type != CIDER_T_RESET)
		check_queue(s, c, type, key, b & ~CIDER_T_QUEUE);
	switch (type) {
	case CIDER_T_ACQUIRE:
		h = hmap_find(&s->holder, key, true);
		hc = hmap_find(&s->holder_client, key, true);
		/* A dead holder's hold was recovered by the lease (or will be). */
		if (*h && *h != a && !sim_holder_dead(s, *hc))
			sim_violation(s, "mutual exclusion: lock at %#llx held by %llx (client %llu) and %llx (client %u) at %.3f us",
				      (unsigned long long)key, (unsigned long long)*h,
				      (unsigned long long)(u32)*hc, (unsigned long long)a, c->id,
				      (double)s->now / US);
		*h = a;
		*hc = c->id | (u64)s->incarnation[c->id] << 32;
		*hmap_find(&s->hold_since, key, true) = s->now;
		break;
	case CIDER_T_RELEASE:
		h = hmap_find(&s->holder, key, true);
		if (*h == a) {
			u64 held = s->now - *hmap_find(&s->hold_since, key, true);

			if (held > s->max_hold)
				s->max_hold = held;
			*h = 0;
		} else if (b & CIDER_T_QUEUE) {
			sim_violation(s, "mutual exclusion: client %u releases lock at %#llx, held by %llx, not %llx, at %.3f us",
				      c->id, (unsigned long long)key, (unsigned long long)*h,
				      (unsigned long long)a, (double)s->now / US);
		}
		break;
	case CIDER_T_RESET:
	default:
		s->resets++;
		if (getenv("CIDER_SIM_DEBUG"))
			fprintf(stderr, "reset: lock at %#llx by client %u (qn %llx, state %d) at %.3f us, word %llx why %llx\n",
				(unsigned long long)key, c->id, c->qn ? (unsigned long long)c->qn->id : 0ULL,
				c->qn ? c->qn->state : -1, (double)s->now / US,
				(unsigned long long)a, (unsigned long long)b);
		break;
	}
}

struct key_view {
	u64 key;
	u64 first_op, nops;		/* into the key-sorted op index */
	u64 first_ev, nev;		/* into the key-sorted chain */
};

static struct sim *sort_sim;

static int cmp_op_key(const void *a, const void *b)
{
	const struct op_rec *x = &sort_sim->ops[*(const u64 *)a];
	const struct op_rec *y = &sort_sim->ops[*(const u64 *)b];

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return *(const u64 *)a < *(const u64 *)b ? -1 : 1;
}

static int cmp_ev_key(const void *a, const void *b)
{
	const struct chain_ev *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

/* E (earliest) and L (latest) feasible points; false if there are none. */
static bool propagate(u64 m, const u64 *lo, const u64 *hi, u64 *e, u64 *l, u64 *bad)
{
	u64 j;

	e[0] = 0;
	for (j = 1; j <= m; j++)
		e[j] = lo[j] > e[j - 1] ? lo[j] : e[j - 1];
	l[m + 1] = NEVER;
	for (j = m; j >= 1; j--)
		l[j] = hi[j] < l[j + 1] ? hi[j] : l[j + 1];
	l[0] = 0;
	for (j = 1; j <= m; j++) {
		if (e[j] > l[j]) {
			*bad = j;
			return false;
		}
	}
	e[m + 1] = NEVER;
	return true;
}

static bool check_points(struct sim *s, u64 key, const struct chain_ev *ev, u64 m,
			 u64 *lo, u64 *hi, u64 *e, const bool *present,
			 const u64 *idx, u64 n)
{
	u64 *l = calloc(m + 2, sizeof(u64)), i, j, bad = 0;
	bool ok = propagate(m, lo, hi, e, l, &bad);

	for (i = 0; i < n && ok; i++) {
		const struct op_rec *o = &s->ops[idx[i]];
		bool want, sure = false;
		u64 cand = NEVER;

		if (o->pending || o->res == CIDER_RES_OK || o->res == CIDER_RES_NOSPC)
			continue;
		want = o->res == CIDER_RES_EXISTS;
		for (j = 0; j <= m && !sure; j++) {
			if (present[j] != want || e[j] > o->resp || l[j + 1] < o->inv)
				continue;
			if (l[j] <= o->resp && e[j + 1] >= o->inv)
				sure = true;	/* overlaps whatever the points */
			else if (cand == NEVER)
				cand = j;
		}
		if (sure)
			continue;
		if (cand == NEVER) {
			sim_violation(s, "key %llu: op %llu saw the key %s, but it never was during its interval",
				      (unsigned long long)key, (unsigned long long)idx[i],
				      want ? "present" : "absent");
			ok = false;
			break;
		}
		if (cand >= 1 && hi[cand] > o->resp)
			hi[cand] = o->resp;
		if (cand + 1 <= m && lo[cand + 1] < o->inv)
			lo[cand + 1] = o->inv;
		ok = propagate(m, lo, hi, e, l, &bad);
	}
	if (!ok && bad)
		s->bad_change = bad;
	if (!ok && bad)
		sim_violation(s, "key %llu: not linearizable at change %llu (op %u): needs %.3f us, must be by %.3f us",
			      (unsigned long long)key, (unsigned long long)bad, ev[bad - 1].op,
			      (double)e[bad] / US, (double)l[bad] / US);
	free(l);
	return ok;
}

static bool is_write(const struct op_rec *o)
{
	return o->op != CIDER_SEARCH && (o->pending || o->res == CIDER_RES_OK);
}

static void dump_key(struct sim *s, const u64 *idx, u64 n, const struct chain_ev *ev, u64 nev)
{
	u64 i;

	if (s->quiet)
		return;
	fprintf(stderr, "  key %llu: %llu state changes, %llu operations; the first ones:\n",
		(unsigned long long)s->ops[idx[0]].key, (unsigned long long)nev,
		(unsigned long long)n);
	for (i = s->bad_change > 4 ? s->bad_change - 4 : 0; i < nev && i < s->bad_change + 4; i++)
		fprintf(stderr, "    change %llu at %.3f us: op %u\n", (unsigned long long)i + 1,
			(double)ev[i].t / US, ev[i].op);
	for (i = 0; i < n && i < 16; i++) {
		const struct op_rec *o = &s->ops[idx[i]];

		fprintf(stderr, "    op %llu client %u %s arg %llu -> res %u got %llu writer %u [%.3f, %.3f] us%s\n",
			(unsigned long long)idx[i], o->client, cider_op_name(o->op), (unsigned long long)o->arg,
			o->res, (unsigned long long)o->got, o->writer, (double)o->inv / US,
			o->pending ? -1.0 : (double)o->resp / US, o->pending ? " pending" : "");
	}
}

/*
 * One key: ops idx[0..n) (ids), its state changes ev[0..nev) in MN order.
 * Returns false on a violation.
 */
static bool check_key(struct sim *s, u64 key, const u64 *idx, u64 n,
		      const struct chain_ev *ev, u64 nev)
{
	u64 m = nev, j, i, *lo, *hi, *p;
	bool *present, ok = true;
	struct hmap at = { 0 };		/* op id -> state index */

	lo = calloc(m + 2, sizeof(u64));
	hi = calloc(m + 2, sizeof(u64));
	p = calloc(m + 2, sizeof(u64));		/* the earliest points */
	present = calloc(m + 2, sizeof(bool));
	present[0] = cider_workload_preloaded(&s->wl, key);
	*hmap_find(&at, UINT32_MAX, true) = 0;
	for (j = 1; j <= m; j++) {
		const struct op_rec *w = ev[j - 1].op == UINT32_MAX ? NULL : &s->ops[ev[j - 1].op];

		present[j] = sim_word_off(s, ev[j - 1].word) != 0;
		*hmap_find(&at, ev[j - 1].op, true) = j;
		lo[j] = w ? w->inv : NEVER;
		hi[j] = w && !w->pending ? w->resp : NEVER;
		if (!w || w->key != key) {
			sim_violation(s, "key %llu: change %llu installed by op %u of another key",
				      (unsigned long long)key, (unsigned long long)j, ev[j - 1].op);
			ok = false;
			goto out;
		}
		if ((w->op != CIDER_PUT && (w->op == CIDER_INSERT) == present[j - 1]) ||
		    (w->op == CIDER_SEARCH)) {
			sim_violation(s, "key %llu: op %u (%u) changed the key from a state it cannot apply to",
				      (unsigned long long)key, ev[j - 1].op, w->op);
			ok = false;
			goto out;
		}
	}
	/* Bounds from reads and covered writes. */
	for (i = 0; i < n && ok; i++) {
		const struct op_rec *o = &s->ops[idx[i]];
		u64 *jj;

		if (o->pending)
			continue;
		if (o->op == CIDER_PUT && (o->res == CIDER_RES_NOTFOUND || o->res == CIDER_RES_EXISTS)) {
			sim_violation(s, "key %llu: PUT op %llu ended %s: it installs in every state",
				      (unsigned long long)key, (unsigned long long)idx[i],
				      o->res == CIDER_RES_EXISTS ? "exists" : "notfound");
			ok = false;
			break;
		}
		if (o->op == CIDER_SEARCH && o->res == CIDER_RES_OK) {
			jj = hmap_find(&at, o->got >> 63 ? UINT32_MAX : o->got - 1, false);
			if (!jj || (o->got >> 63 && (o->got & ~(1ULL << 63)) != key)) {
				sim_violation(s, "key %llu: op %llu read value %llu, never installed",
					      (unsigned long long)key, (unsigned long long)idx[i],
					      (unsigned long long)o->got);
				ok = false;
				break;
			}
			if (*jj && hi[*jj] > o->resp)
				hi[*jj] = o->resp;
			if (*jj < m && lo[*jj + 1] < o->inv)
				lo[*jj + 1] = o->inv;
		} else if (is_write(o) && !hmap_find(&at, idx[i], false)) {
			jj = hmap_find(&at, o->writer, false);
			if (!jj || !*jj || o->writer == idx[i]) {
				sim_violation(s, "key %llu: op %llu acknowledged, but its write was lost",
					      (unsigned long long)key, (unsigned long long)idx[i]);
				ok = false;
				break;
			}
			if (lo[*jj] < o->inv)
				lo[*jj] = o->inv;
			if (*jj > 1 && hi[*jj - 1] > o->resp)
				hi[*jj - 1] = o->resp;
			if (!present[*jj - 1] || !cider_op_updates(o->op)) {
				sim_violation(s, "key %llu: op %llu combined into a change it cannot be part of",
					      (unsigned long long)key, (unsigned long long)idx[i]);
				ok = false;
				break;
			}
		}
	}
	if (ok)
		ok = check_points(s, key, ev, m, lo, hi, p, present, idx, n);
out:
	if (!ok)
		dump_key(s, idx, n, ev, nev);
	free(lo);
	free(hi);
	free(p);
	free(present);
	hmap_free(&at);
	return ok;
}

/* The MN's final pointer and block for each changed key agree with the chain. */
static void check_final(struct sim *s, const struct chain_ev *ev, u64 nev)
{
	u64 w = sim_mem_read(s, ev[nev - 1].addr);
	u64 off = sim_word_off(s, w);

	/* A hash slot emptied by the last DELETE may hold another key now. */
	if (s->cfg.index == CIDER_INDEX_HASH && !sim_word_off(s, ev[nev - 1].word))
		return;
	if (sim_word_bare(s, w) != sim_word_bare(s, ev[nev - 1].word)) {
		sim_violation(s, "key %llu: final pointer %llx is not the last change %llx",
			      (unsigned long long)ev->key, (unsigned long long)w,
			      (unsigned long long)ev[nev - 1].word);
		return;
	}
	if (off && (sim_mem_read(s, s->cfg.index == CIDER_INDEX_HASH ? off + CIDER_BLOCK_HDR : off) !=
		    ev->key || sim_mem_read_u64(s, sim_block_value_addr(s, off)) != (u64)ev[nev - 1].op + 1))
		sim_violation(s, "key %llu: final block does not hold the last write's key and value",
			      (unsigned long long)ev->key);
}

void sim_check(struct sim *s)
{
	u64 *idx = malloc((s->nops + 1) * sizeof(u64)), i, j, e = 0, nbad = 0;

	/* A stalled run has already reported its stuck operations. */
	for (i = 0; i < s->nr_clients && !s->stalled; i++)
		if (!s->clients[i].dead && s->clients[i].busy)
			sim_violation(s, "client %llu never finished op %u (key %llu)",
				      (unsigned long long)i, s->cur_op[i],
				      (unsigned long long)s->ops[s->cur_op[i]].key);
	for (i = 0; i < s->nops; i++)
		idx[i] = i;
	sort_sim = s;
	qsort(idx, s->nops, sizeof(u64), cmp_op_key);
	if (s->nchain)	/* qsort(NULL, 0, ...) is undefined */
		qsort(s->chain, s->nchain, sizeof(*s->chain), cmp_ev_key);
	for (i = 0; i < s->nops; i = j) {
		u64 key = s->ops[idx[i]].key, e0;

		for (j = i; j < s->nops && s->ops[idx[j]].key == key; j++)
			;
		if (key == SIM_SCAN_KEY)	/* SCAN pages: scan.c checks them */
			continue;
		while (e < s->nchain && s->chain[e].key < key) {
			e0 = e;
			while (e < s->nchain && s->chain[e].key == s->chain[e0].key)
				e++;
			sim_violation(s, "key %llu changed with no operation on it",
				      (unsigned long long)s->chain[e0].key);
		}
		for (e0 = e; e < s->nchain && s->chain[e].key == key; e++)
			;
		if (!check_key(s, key, idx + i, j - i, s->chain + e0, e - e0) && ++nbad > 3)
			break;
		if (e > e0)
			check_final(s, s->chain + e0, e - e0);
	}
	free(idx);
}
