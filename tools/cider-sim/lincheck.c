// SPDX-License-Identifier: GPL-2.0
/*
 * lincheck: is a KV history linearizable, judged from the history alone?
 *
 * The simulator's own checker (check.c) knows the order in which the MN
 * executed the successful CASes; a real run does not.  This one needs
 * only what a client sees: for each operation its key, kind, the value it
 * wrote (unique) or read, its result and its invocation and response
 * times.  Linearizability is compositional (Herlihy & Wing), so each key
 * is checked alone, as a register that is absent or holds a value:
 * INSERT needs it absent, UPDATE and DELETE present, PUT anything; SEARCH
 * sees the value or "absent"; a failed INSERT saw it present, a failed
 * UPDATE or DELETE saw it absent.  An operation whose outcome is unknown
 * (or that never returned) may take effect at any point after its
 * invocation, or never.  Write combining needs no rule of its own: an
 * acknowledged UPDATE superseded within its own interval linearizes just
 * before the write that covered it.
 *
 * The search is Wing & Gong's, as Lowe made it practical: take, in turn,
 * each operation that may go next (invoked before the earliest pending
 * response), apply it to the register, and go on; backtrack at a response
 * whose operation cannot be placed.  Configurations already explored (the
 * set of linearized operations, as a 96-bit Zobrist hash, and the
 * register's state: 16 bytes each) are never explored again.  Unique values make three
 * shortcuts sound: a read-only operation whose observation matches the
 * current state is placed at once without trying alternatives (moving a
 * read earlier within the stretch where the register shows what it saw
 * breaks nothing); of the writes of one kind whose value nobody reads,
 * only the one with the earliest deadline is tried (first_unread()); and
 * writes are tried earliest deadline first (a write's deadline: its
 * response, or that of the first read of its value), which usually finds
 * the order at the first attempt.  A hash
 * collision could only prune a configuration not yet explored: it can
 * make a linearizable history look violating (with probability about
 * states^2 / 2^97), never the reverse.
 *
 * The search is bounded (states per key, seconds in all); a key it cannot
 * decide within the bounds makes the verdict "inconclusive", never a pass.
 * A violation is explained by the first response no linearization of what
 * came before can get past: that operation, the states the key could be
 * in when it had to take effect, and the operations overlapping it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonw.h"
#include "numparse.h"
#include "lincheck.h"
#include "workload.h"

/*
 * The register's state: ABSENT, or who wrote its value (a write's index
 * among the key's operations, or m for the preloaded value).  ANON stands,
 * in the memo only, for any value no operation still to be placed reads.
 */
#define ABSENT UINT64_MAX
#define ANON (UINT64_MAX - 1)
#define NONE UINT32_MAX

static const char *const kind_names[] = { "search", "insert", "update", "delete", "put" };
static const char *const res_names[] = {
	"ok", "notfound", "exists", "nospc", "unknown", "pending", "error", "none"
};

/* ---- parsing ---- */

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
		p++;
	return p;
}

static const char *parse_str(const char *p, char *out, size_t len)
{
	size_t n = 0;

	if (*p++ != '"')
		return NULL;
	while (*p && *p != '"') {
		if (*p == '\\' && !*++p)
			return NULL;
		if (n + 1 < len)
			out[n++] = *p;
		p++;
	}
	out[n] = '\0';
	return *p == '"' ? p + 1 : NULL;
}

static int lookup(const char *s, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

enum { F_KEY = 1, F_OP = 2, F_RES = 4, F_INV = 8, F_RESP = 16, F_HDR = 32 };

static int set_str(struct lc_history *h, struct lc_op *o, const char *name, const char *v,
		   unsigned int *have)
{
	static const char *const preloads[] = { "", "none", "all", "odd" };
	int i;

	if (!strcmp(name, "op")) {
		i = lookup(v, kind_names, 5);
		o->kind = (uint8_t)i;
		*have |= F_OP;
	} else if (!strcmp(name, "result")) {
		i = lookup(v, res_names, 8);
		o->res = (uint8_t)i;
		*have |= F_RES;
	} else if (!strcmp(name, "preload")) {
		i = lookup(v, preloads, 4);
		if (i > 0)
			h->preload = i;
		else
			i = -1;
		*have |= F_HDR;
	} else if (!strcmp(name, "clock")) {
		i = strcmp(v, "realtime") ? -1 : 0;
		h->clock = LC_CLOCK_REALTIME;
		*have |= F_HDR;
	} else if (!strcmp(name, "history")) {
		i = strcmp(v, "cider-kv") ? -1 : 0;
		*have |= F_HDR;
	} else {
		i = 0;		/* a field of a later version */
	}
	return i < 0 ? -1 : 0;
}

/* The numbers set_num() reads. */
static const char *const num_fields[] = { "key", "arg", "value", "client", "invoke_ns",
					  "response_ns" };

static void set_num(struct lc_op *o, const char *name, uint64_t v, unsigned int *have)
{
	if (!strcmp(name, "key")) {
		o->key = v;
		*have |= F_KEY;
	} else if (!strcmp(name, "arg")) {
		o->arg = v;
	} else if (!strcmp(name, "value")) {
		o->value = v;
	} else if (!strcmp(name, "client")) {
		o->client = (uint32_t)v;
	} else if (!strcmp(name, "invoke_ns")) {
		o->inv = v;
		*have |= F_INV;
	} else if (!strcmp(name, "response_ns")) {
		o->resp = v;
		*have |= F_RESP;
	}
}

static int add_op(struct lc_history *h, const struct lc_op *o)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 4096;
		struct lc_op *n = realloc(h->ops, cap * sizeof(*n));

		if (!n)
			return -1;
		h->ops = n;
		h->cap = cap;
	}
	h->ops[h->n++] = *o;
	return 0;
}

#define BAD(...) do { snprintf(err, errlen, __VA_ARGS__); return -1; } while (0)

int lc_parse_line(struct lc_history *h, const char *line, char *err, size_t errlen)
{
	struct lc_op o = { .line = ++h->lines, .file = h->file };
	unsigned int have = 0;
	const char *p = skip_ws(line);
	char name[32], val[64];

	if (!*p)
		return 0;
	if (*p != '{')
		BAD("line %u: not a JSON object", o.line);
	p = skip_ws(p + 1);
	while (*p != '}') {
		p = parse_str(p, name, sizeof(name));
		if (!p || *(p = skip_ws(p)) != ':')
			BAD("line %u: expected \"name\":", o.line);
		p = skip_ws(p + 1);
		if (*p == '"') {
			p = parse_str(p, val, sizeof(val));
			if (!p || set_str(h, &o, name, val, &have))
				BAD("line %u: bad value for \"%s\"", o.line, name);
		} else if (*p >= '0' && *p <= '9') {
			size_t n = strspn(p, "0123456789");
			uint64_t v;
			char why[96];

			if (cider_num_parse_n(p, n, 0, UINT64_MAX, 0, &v, why, sizeof(why)))
				BAD("line %u: %s", o.line, why);
			set_num(&o, name, v, &have);
			p += n;
		} else if (*p == '-' && p[1] >= '0' && p[1] <= '9') {
			/* Only a field this checker does not read may be negative. */
			if (lookup(name, num_fields, (int)(sizeof(num_fields) / sizeof(num_fields[0]))) >= 0)
				BAD("line %u: negative \"%s\"", o.line, name);
			p += 1 + strspn(p + 1, "0123456789");
		} else if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4)) {
			p += 4;
		} else if (!strncmp(p, "false", 5)) {
			p += 5;
		} else {
			BAD("line %u: unexpected value for \"%s\"", o.line, name);
		}
		p = skip_ws(p);
		if (*p == ',')
			p = skip_ws(p + 1);
		else if (*p != '}')
			BAD("line %u: expected , or }", o.line);
	}
	if (*skip_ws(p + 1))
		BAD("line %u: text after the object", o.line);
	if (have & F_HDR)
		return 0;
	if ((have & (F_KEY | F_OP | F_RES | F_INV)) != (F_KEY | F_OP | F_RES | F_INV))
		BAD("line %u: needs key, op, result and invoke_ns", o.line);
	if (o.res == LC_PENDING) {
		o.resp = LC_INF;
	} else if (!(have & F_RESP) || o.resp < o.inv) {
		BAD("line %u: response_ns missing or before invoke_ns", o.line);
	}
	if (add_op(h, &o))
		BAD("out of memory");
	return 0;
}

int lc_read(struct lc_history *h, FILE *f, char *err, size_t errlen)
{
	size_t cap = 0;
	char *line = NULL;
	int ret = 0;

	while (!ret && getline(&line, &cap, f) >= 0)
		ret = lc_parse_line(h, line, err, errlen);
	free(line);
	if (!ret && ferror(f)) {
		snprintf(err, errlen, "read error: %s", strerror(errno));
		ret = -1;
	}
	return ret;
}

int lc_merge(struct lc_history *h, FILE *f, char *err, size_t errlen)
{
	int preload = h->preload;

	if (h->clock != LC_CLOCK_REALTIME)
		BAD("histories of several compute nodes merge only on one clock: the first does not say \"clock\":\"realtime\"");
	if (h->file == UINT8_MAX)
		BAD("too many histories");
	h->file++;
	h->lines = 0;
	h->clock = LC_CLOCK_UNSAID;
	h->preload = LC_PRELOAD_UNSAID;
	if (lc_read(h, f, err, errlen))
		return -1;
	if (h->clock != LC_CLOCK_REALTIME)
		BAD("history %u does not say \"clock\":\"realtime\": it cannot be merged", h->file + 1);
	/* One that said nothing of the keys' first state defers to another. */
	if (h->preload == LC_PRELOAD_UNSAID)
		h->preload = preload;
	else if (preload != LC_PRELOAD_UNSAID && preload != h->preload)
		BAD("history %u's preload contradicts an earlier one's", h->file + 1);
	return 0;
}

void lc_widen(struct lc_history *h, uint64_t ns, unsigned int from)
{
	size_t i;

	for (i = 0; i < h->n; i++) {
		struct lc_op *o = &h->ops[i];

		if (o->file < from)
			continue;
		o->inv = o->inv > ns ? o->inv - ns : 0;
		if (o->resp != LC_INF)
			o->resp = o->resp < LC_INF - ns ? o->resp + ns : LC_INF - 1;
	}
}

void lc_free(struct lc_history *h)
{
	free(h->ops);
	memset(h, 0, sizeof(*h));
}

/* ---- one key ---- */

/* What an operation means to the register. */
enum kop_kind { K_ABS, K_PRES, K_VAL, K_INS, K_UPD, K_DEL, K_PUT };

struct kop {
	const struct lc_op *o;
	uint64_t inv, resp;	/* resp LC_INF: may take effect, or not */
	uint64_t val;		/* written (K_INS/UPD/PUT) or read (K_VAL) */
	uint64_t deadline;	/* writes: the order they are tried in */
	uint32_t src;		/* K_VAL: the write it read (m: preloaded) */
	uint32_t readers;	/* writes: the reads of its value */
	uint32_t call, ret;	/* its two entries in the event list */
	uint8_t kind;
};

struct ent {
	uint64_t t;
	uint32_t kop;
	uint8_t ret;
};

struct frame {
	uint32_t kop;
	uint8_t forced;
	uint64_t state;		/* before it */
};

/* A memo entry: 96 bits of the set's hash and the state (s 0: empty). */
struct cent {
	uint64_t a;
	uint32_t b, s;
};

struct keycheck {
	const struct lc_limits *lim;
	double t_end;
	uint64_t key;
	struct kop *k;
	uint32_t m;
	struct ent *e;		/* 2m entries + head (2m) + tail (2m + 1) */
	uint32_t *next, *prev;
	struct frame *st;
	uint32_t sp;
	uint32_t *rl;		/* per writer (m: preloaded): reads not yet placed */
	uint64_t state, h1, h2;
	struct cent *cache;
	uint64_t ccap, cn, states;
	/* how far the search got: the response it could not get past */
	uint64_t best_t;
	uint32_t best_kop;
	uint64_t best_states[6];
	unsigned int nbest;
	bool out_of_bounds;
};

static uint64_t mix64(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool is_obs(const struct kop *k)
{
	return k->kind <= K_VAL;
}

static bool obs_ok(const struct kop *k, uint64_t state)
{
	return k->kind == K_ABS ? state == ABSENT : k->kind == K_PRES ? state != ABSENT :
	       state == k->src;
}

/* The state as the memo sees it: a value nobody will read is any value. */
static uint64_t canon(const struct keycheck *c, uint64_t state)
{
	return state != ABSENT && !c->rl[state] ? ANON : state;
}

/*
 * Write @i's effect on the current state, or false when its precondition
 * does not hold, or when it would overwrite a value that reads still to
 * be placed need: values are unique, so that value could never return.
 */
static bool apply(const struct keycheck *c, uint32_t i, uint64_t *out)
{
	const struct kop *k = &c->k[i];
	uint64_t state = c->state;

	if (state != ABSENT && c->rl[state])
		return false;
	switch (k->kind) {
	case K_INS:
		if (state != ABSENT)
			return false;
		*out = i;
		return true;
	case K_UPD:
		if (state == ABSENT)
			return false;
		*out = i;
		return true;
	case K_DEL:
		if (state == ABSENT)
			return false;
		*out = ABSENT;
		return true;
	case K_PUT:
		*out = i;
		return true;
	default:
		return false;
	}
}

/*
 * May @k be placed now without trying alternatives?  An observation that
 * matches the state (moving a read earlier, within the stretch where the
 * register shows what it saw, breaks nothing), and an UPDATE whose value
 * nobody reads while the value in place is one nobody reads either
 * (present before and after, and no read can tell the values apart:
 * placing it here instead of later leaves every other step as valid).
 */
static bool forced_ok(const struct keycheck *c, const struct kop *k)
{
	if (is_obs(k))
		return obs_ok(k, c->state);
	return k->kind == K_UPD && !k->readers && c->state != ABSENT && !c->rl[c->state];
}

/* The state as a memo entry stores it: never 0, which marks a free slot. */
static uint32_t cent_state(uint64_t s)
{
	return s == ABSENT ? 1 : s == ANON ? 2 : (uint32_t)s + 3;
}

static uint64_t cent_slot(const struct keycheck *c, uint64_t a, uint32_t s)
{
	return mix64(a ^ s) & (c->ccap - 1);
}

static bool cache_grow(struct keycheck *c)
{
	uint64_t ocap = c->ccap, i, j;
	struct cent *o = c->cache, *n;

	c->ccap = ocap ? 2 * ocap : 1024;
	n = calloc(c->ccap, sizeof(*n));
	if (!n) {
		c->ccap = ocap;
		return false;
	}
	for (i = 0; i < ocap; i++) {
		if (!o[i].s)
			continue;
		for (j = cent_slot(c, o[i].a, o[i].s); n[j].s; j = (j + 1) & (c->ccap - 1))
			;
		n[j] = o[i];
	}
	free(o);
	c->cache = n;
	return true;
}

/* Marks (a, b, s) explored; false if it already was, or out of bounds. */
static bool cache_add(struct keycheck *c, uint64_t a, uint64_t b64, uint64_t state)
{
	uint32_t b = (uint32_t)b64, s = cent_state(state);
	uint64_t j;

	if (c->cn >= c->lim->max_states || ((c->cn + 1) * 2 > c->ccap && !cache_grow(c))) {
		c->out_of_bounds = true;
		return false;
	}
	for (j = cent_slot(c, a, s); c->cache[j].s; j = (j + 1) & (c->ccap - 1))
		if (c->cache[j].a == a && c->cache[j].b == b && c->cache[j].s == s)
			return false;
	c->cache[j] = (struct cent){ .a = a, .b = b, .s = s };
	c->cn++;
	c->states++;
	return true;
}

static void unlink_ent(struct keycheck *c, uint32_t x)
{
	c->next[c->prev[x]] = c->next[x];
	c->prev[c->next[x]] = c->prev[x];
}

static void relink_ent(struct keycheck *c, uint32_t x)
{
	c->next[c->prev[x]] = x;
	c->prev[c->next[x]] = x;
}

static bool try_push(struct keycheck *c, uint32_t i, bool forced)
{
	const struct kop *k = &c->k[i];
	uint64_t s = c->state, a = c->h1 ^ mix64(2 * (uint64_t)i), b = c->h2 ^ mix64(2 * (uint64_t)i + 1);
	bool fresh;

	if (!is_obs(k) && !apply(c, i, &s))
		return false;
	if (k->kind == K_VAL)
		c->rl[k->src]--;
	fresh = cache_add(c, a, b, canon(c, s));
	if (!fresh) {
		if (k->kind == K_VAL)
			c->rl[k->src]++;
		return false;
	}
	c->st[c->sp++] = (struct frame){ .kop = i, .forced = forced, .state = c->state };
	c->state = s;
	c->h1 = a;
	c->h2 = b;
	unlink_ent(c, k->call);
	unlink_ent(c, k->ret);
	return true;
}

static void pop(struct keycheck *c, struct frame *f)
{
	const struct kop *k;

	*f = c->st[--c->sp];
	k = &c->k[f->kop];
	relink_ent(c, k->ret);
	relink_ent(c, k->call);
	if (k->kind == K_VAL)
		c->rl[k->src]++;
	c->state = f->state;
	c->h1 ^= mix64(2 * (uint64_t)f->kop);
	c->h2 ^= mix64(2 * (uint64_t)f->kop + 1);
}

static bool key_after(const struct kop *k, uint32_t i, uint64_t dl, uint32_t after)
{
	return k->deadline > dl || (k->deadline == dl && (after == NONE || i > after));
}

/*
 * Among the writes that may go now, those of one kind whose value nobody
 * reads differ only in their deadlines: whatever a linearization does
 * with another of them now and the one with the earliest deadline later
 * (or never, when it may never take effect), it can do with the two
 * swapped (the later place is before both deadlines; the register shows
 * "present" either way and no read can tell the values apart).  So only
 * that one is tried.  Without this, a stretch where a dozen acknowledged
 * writes overlap makes the memo tell apart every subset of them placed.
 * Per kind, its event-list entry (NONE: none may go).
 */
static void first_unread(const struct keycheck *c, uint32_t *first)
{
	uint64_t s;
	uint32_t x;

	for (x = 0; x <= K_PUT; x++)
		first[x] = NONE;
	for (x = c->next[2 * c->m]; x != 2 * c->m + 1 && !c->e[x].ret; x = c->next[x]) {
		uint32_t i = c->e[x].kop;
		const struct kop *k = &c->k[i];

		if (is_obs(k) || k->readers)
			continue;
		if (first[k->kind] == NONE)
			first[k->kind] = apply(c, i, &s) ? i : NONE - 1;
		else if (first[k->kind] != NONE - 1 &&
			 key_after(&c->k[first[k->kind]], first[k->kind], k->deadline, i))
			first[k->kind] = i;
	}
}

/*
 * Place the next write that may go now, in deadline order after
 * (dl, after) (after NONE: from the start); false when none is left.
 */
static bool push_next_write(struct keycheck *c, uint64_t dl, uint32_t after)
{
	uint32_t x, best, first[K_PUT + 1];
	uint64_t s;

	first_unread(c, first);
	for (;;) {
		best = NONE;
		for (x = c->next[2 * c->m]; x != 2 * c->m + 1 && !c->e[x].ret; x = c->next[x]) {
			uint32_t i = c->e[x].kop;
			const struct kop *k = &c->k[i];

			if (is_obs(k) || (!k->readers && first[k->kind] != i) ||
			    !apply(c, i, &s) || !key_after(k, i, dl, after))
				continue;
			if (best == NONE || !key_after(k, i, c->k[best].deadline, best))
				best = i;
		}
		if (best == NONE)
			return false;
		if (try_push(c, best, false))
			return true;
		if (c->out_of_bounds)
			return false;
		dl = c->k[best].deadline;
		after = best;
	}
}

/* A node none of whose moves led anywhere: how far did it get? */
static void blocked(struct keycheck *c)
{
	uint32_t x = c->next[2 * c->m];
	unsigned int i;

	while (x != 2 * c->m + 1 && !c->e[x].ret)
		x = c->next[x];
	if (x == 2 * c->m + 1)
		return;
	if (c->nbest && c->e[x].t < c->best_t)
		return;
	if (!c->nbest || c->e[x].t > c->best_t) {
		c->best_t = c->e[x].t;
		c->best_kop = c->e[x].kop;
		c->nbest = 0;
	}
	for (i = 0; i < c->nbest; i++)
		if (c->best_states[i] == c->state)
			return;
	if (c->nbest < sizeof(c->best_states) / sizeof(c->best_states[0]))
		c->best_states[c->nbest++] = c->state;
}

enum { SEARCH_OK, SEARCH_FAIL, SEARCH_BOUND };

/* The search from @init; the event list must be complete. */
static int search(struct keycheck *c, uint64_t init)
{
	uint64_t steps = 0;
	struct frame f;
	uint32_t x, forced;

	c->state = init;
	c->h1 = c->h2 = 0;
	c->sp = 0;
	for (;;) {
node:
		if (!(++steps & 1023) && now_s() > c->t_end)
			return SEARCH_BOUND;
		forced = NONE;
		for (x = c->next[2 * c->m]; x != 2 * c->m + 1 && !c->e[x].ret; x = c->next[x]) {
			if (forced_ok(c, &c->k[c->e[x].kop])) {
				forced = c->e[x].kop;
				break;
			}
		}
		if (forced == NONE && (x == 2 * c->m + 1 || c->e[x].t == LC_INF))
			return SEARCH_OK;	/* every operation that returned is placed */
		if (forced != NONE ? try_push(c, forced, true) : push_next_write(c, 0, NONE))
			continue;
		if (c->out_of_bounds)
			return SEARCH_BOUND;
		blocked(c);
		for (;;) {	/* backtrack */
			if (!c->sp)
				return SEARCH_FAIL;
			pop(c, &f);
			if (!f.forced && push_next_write(c, c->k[f.kop].deadline, f.kop))
				goto node;
			if (c->out_of_bounds)
				return SEARCH_BOUND;
			blocked(c);
		}
	}
}

static int cmp_ent(const void *a, const void *b)
{
	const struct ent *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->ret != y->ret)
		return x->ret < y->ret ? -1 : 1;	/* equal times overlap */
	return x->kop < y->kop ? -1 : x->kop > y->kop;
}

static bool build_list(struct keycheck *c)
{
	uint32_t i, n = 2 * c->m;

	c->e = malloc((n + 2) * sizeof(*c->e));
	c->next = malloc((n + 2) * sizeof(uint32_t));
	c->prev = malloc((n + 2) * sizeof(uint32_t));
	c->st = malloc((c->m + 1) * sizeof(*c->st));
	if (!c->e || !c->next || !c->prev || !c->st)
		return false;
	for (i = 0; i < c->m; i++) {
		c->e[2 * i] = (struct ent){ .t = c->k[i].inv, .kop = i, .ret = 0 };
		c->e[2 * i + 1] = (struct ent){ .t = c->k[i].resp, .kop = i, .ret = 1 };
	}
	qsort(c->e, n, sizeof(*c->e), cmp_ent);
	for (i = 0; i < n; i++) {
		if (c->e[i].ret)
			c->k[c->e[i].kop].ret = i;
		else
			c->k[c->e[i].kop].call = i;
		c->prev[i] = i ? i - 1 : n;
		c->next[i] = i + 1 < n ? i + 1 : n + 1;
	}
	c->next[n] = n ? 0 : n + 1;
	c->prev[n + 1] = n ? n - 1 : n;
	return true;
}

/* ---- explanations ---- */

static void describe(char *buf, size_t len, const struct lc_op *o)
{
	char what[64], resp[32], file[24] = "";

	if (o->kind == LC_SEARCH && o->res == LC_OK)
		snprintf(what, sizeof(what), "search -> value %llu", (unsigned long long)o->value);
	else if (o->kind == LC_INSERT || o->kind == LC_UPDATE || o->kind == LC_PUT)
		snprintf(what, sizeof(what), "%s(%llu) -> %s", kind_names[o->kind],
			 (unsigned long long)o->arg, res_names[o->res]);
	else
		snprintf(what, sizeof(what), "%s -> %s", kind_names[o->kind], res_names[o->res]);
	if (o->resp == LC_INF)
		snprintf(resp, sizeof(resp), "never");
	else
		snprintf(resp, sizeof(resp), "%llu", (unsigned long long)o->resp);
	if (o->file)
		snprintf(file, sizeof(file), "history %u ", o->file + 1);
	snprintf(buf, len, "%sline %u, client %u: %s [%llu, %s] ns", file, o->line, o->client,
		 what, (unsigned long long)o->inv, resp);
}

static void append(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/* Reads of @s that responded after the stuck point: why it had to stay. */
static void explain_readers(const struct keycheck *c, uint64_t s, struct lc_report *r)
{
	unsigned int i, n = 0;

	if (s == ABSENT)
		return;
	for (i = 0; i < c->m && n < 3; i++) {
		const struct kop *k = &c->k[i];

		if (k->kind != K_VAL || k->src != s || k->resp < c->best_t)
			continue;
		append(r->why, sizeof(r->why), "%sline %u", n++ ? ", " : ", which must stay for the read at ",
		       k->o->line);
	}
}

static void explain(const struct keycheck *c, struct lc_report *r)
{
	const struct kop *x = &c->k[c->best_kop], *w;
	char d[256];
	unsigned int i, n = 0;

	describe(d, sizeof(d), x->o);
	snprintf(r->why, sizeof(r->why),
		 "key %llu: no order of the operations explains the response of %s; when it could take effect the key was ",
		 (unsigned long long)c->key, d);
	for (i = 0; i < c->nbest; i++) {
		uint64_t s = c->best_states[i];

		w = s == ABSENT || s == c->m ? NULL : &c->k[s];
		if (s == ABSENT)
			append(r->why, sizeof(r->why), "%sabsent", i ? " or " : "");
		else if (w)
			append(r->why, sizeof(r->why), "%svalue %llu (line %u)", i ? " or " : "",
			       (unsigned long long)w->val, w->o->line);
		else
			append(r->why, sizeof(r->why), "%svalue %llu (preloaded)", i ? " or " : "",
			       (unsigned long long)LC_PRELOAD_VALUE(c->key));
		explain_readers(c, s, r);
	}
	append(r->why, sizeof(r->why), "; overlapping it:");
	for (i = 0; i < c->m; i++) {
		const struct kop *k = &c->k[i];

		if (k == x || k->inv > x->resp || k->resp < x->inv)
			continue;
		if (++n > 10) {
			append(r->why, sizeof(r->why), " ...");
			break;
		}
		describe(d, sizeof(d), k->o);
		append(r->why, sizeof(r->why), "\n    %s", d);
	}
	if (!n)
		append(r->why, sizeof(r->why), " nothing");
}

/* ---- the checks of one key ---- */

static int classify(const struct lc_op *o, struct kop *k)
{
	static const uint8_t writes[] = { 0, K_INS, K_UPD, K_DEL, K_PUT };

	memset(k, 0, sizeof(*k));
	k->o = o;
	k->inv = o->inv;
	/* LC_INF marks what may never take effect; a real response is less. */
	k->resp = o->resp == LC_INF ? LC_INF - 1 : o->resp;
	switch (o->res) {
	case LC_NOSPC:
	case LC_ERROR:
		return 0;		/* refused: no effect */
	case LC_NOTFOUND:
		k->kind = K_ABS;
		return 1;
	case LC_EXISTS:
		k->kind = K_PRES;
		return 1;
	case LC_UNKNOWN:
	case LC_PENDING:
		if (o->kind == LC_SEARCH)
			return 0;
		k->resp = LC_INF;
		break;
	case LC_OK:
		if (o->kind == LC_SEARCH) {
			k->kind = K_VAL;
			k->val = o->value;
			return 1;
		}
		break;
	default:
		return -1;
	}
	k->kind = writes[o->kind];
	k->val = o->arg;
	k->deadline = k->resp;
	return 1;
}

static int cmp_kop_val(const void *a, const void *b)
{
	uint64_t x = (*(const struct kop *const *)a)->val, y = (*(const struct kop *const *)b)->val;

	return x < y ? -1 : x > y;
}

/*
 * What needs no search: every value read was written to this key (or
 * preloaded), not after the read returned, and no value twice.  Sets
 * each write's deadline.  Returns a verdict, LC_LINEARIZABLE to go on.
 */
static int precheck(struct keycheck *c, bool may_preload, struct lc_report *r)
{
	struct kop **w = malloc((c->m + 1) * sizeof(*w));
	uint32_t i, nw = 0, lo, hi, mid;
	char d[256], d2[256];
	int ret = LC_LINEARIZABLE;

	free(c->rl);
	c->rl = calloc(c->m + 1, sizeof(*c->rl));
	if (!w || !c->rl) {
		free(w);
		return LC_INCONCLUSIVE;
	}
	for (i = 0; i < c->m; i++)
		if (c->k[i].kind == K_INS || c->k[i].kind == K_UPD || c->k[i].kind == K_PUT)
			w[nw++] = &c->k[i];
	qsort(w, nw, sizeof(*w), cmp_kop_val);
	for (i = 0; i < nw; i++) {
		if ((i && w[i]->val == w[i - 1]->val) || w[i]->val == ABSENT ||
		    w[i]->val == LC_PRELOAD_VALUE(c->key)) {
			describe(d, sizeof(d), w[i]->o);
			snprintf(r->why, sizeof(r->why), "key %llu: %s writes a value %s",
				 (unsigned long long)c->key, d,
				 i && w[i]->val == w[i - 1]->val ? "another operation wrote too" :
				 "reserved for preloaded keys");
			ret = LC_MALFORMED;
			goto out;
		}
	}
	for (i = 0; i < c->m; i++) {
		struct kop *k = &c->k[i];

		if (k->kind != K_VAL)
			continue;
		if (may_preload && k->val == LC_PRELOAD_VALUE(c->key)) {
			k->src = c->m;
			c->rl[c->m]++;
			continue;
		}
		for (lo = 0, hi = nw; lo < hi;) {
			mid = (lo + hi) / 2;
			if (w[mid]->val < k->val)
				lo = mid + 1;
			else
				hi = mid;
		}
		describe(d, sizeof(d), k->o);
		if (lo == nw || w[lo]->val != k->val) {
			snprintf(r->why, sizeof(r->why),
				 "key %llu: %s read a value no operation wrote to this key%s",
				 (unsigned long long)c->key, d,
				 k->val == LC_PRELOAD_VALUE(c->key) ? " (the preloaded value, but the key was not preloaded)" : "");
			ret = LC_VIOLATION;
			goto out;
		}
		if (w[lo]->inv > k->resp) {
			describe(d2, sizeof(d2), w[lo]->o);
			snprintf(r->why, sizeof(r->why),
				 "key %llu: %s read from the future: its value was written by %s, invoked after the read returned",
				 (unsigned long long)c->key, d, d2);
			ret = LC_VIOLATION;
			goto out;
		}
		k->src = (uint32_t)(w[lo] - c->k);
		c->k[k->src].readers++;
		c->rl[k->src]++;
		if (k->resp < w[lo]->deadline)
			c->k[k->src].deadline = k->resp;
	}
out:
	free(w);
	return ret;
}

static void free_key(struct keycheck *c)
{
	free(c->e);
	free(c->next);
	free(c->prev);
	free(c->st);
	free(c->cache);
	free(c->rl);
	c->rl = NULL;
	c->e = NULL;
	c->next = c->prev = NULL;
	c->st = NULL;
	c->cache = NULL;
	c->ccap = c->cn = 0;
}

static bool preloaded(int preload, uint64_t key)
{
	static const struct cider_workload idu = { .preload_all = false };

	return preload == LC_PRELOAD_ALL || (preload == LC_PRELOAD_ODD &&
					     cider_workload_preloaded(&idu, key));
}

static int check_key(struct keycheck *c, int preload, struct lc_report *r)
{
	uint64_t inits[2];
	unsigned int ninit = 0, i;
	int ret, res = SEARCH_FAIL;

	if (preload == LC_PRELOAD_UNSAID) {
		/* Unsaid: absent, unless someone read the preloaded value. */
		for (i = 0; i < c->m; i++)
			if (c->k[i].kind == K_VAL && c->k[i].val == LC_PRELOAD_VALUE(c->key))
				break;
		if (i == c->m)
			inits[ninit++] = ABSENT;
		inits[ninit++] = c->m;
	} else {
		inits[ninit++] = preloaded(preload, c->key) ? c->m : ABSENT;
	}
	ret = precheck(c, inits[ninit - 1] != ABSENT, r);
	if (ret != LC_LINEARIZABLE)
		return ret;
	if (!build_list(c))
		return LC_INCONCLUSIVE;
	c->nbest = 0;
	for (i = 0; i < ninit && res == SEARCH_FAIL; i++) {
		c->out_of_bounds = false;
		free(c->cache);
		c->cache = NULL;
		c->ccap = c->cn = 0;
		res = search(c, inits[i]);
	}
	if (res == SEARCH_OK)
		return LC_LINEARIZABLE;
	if (res == SEARCH_BOUND) {
		snprintf(r->why, sizeof(r->why),
			 "key %llu: %u operations: the search reached its bound (%llu states, or the time limit) before deciding",
			 (unsigned long long)c->key, c->m, (unsigned long long)c->cn);
		return LC_INCONCLUSIVE;
	}
	explain(c, r);
	return LC_VIOLATION;
}

static int cmp_op(const void *a, const void *b)
{
	const struct lc_op *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

int lc_check(struct lc_history *h, const struct lc_limits *lim, struct lc_report *r)
{
	struct keycheck c = { .lim = lim, .t_end = now_s() + lim->max_seconds };
	struct lc_report undecided = { .verdict = LC_LINEARIZABLE };
	size_t i, j, l;
	int v;

	memset(r, 0, sizeof(*r));
	r->ops = h->n;
	if (h->n)
		qsort(h->ops, h->n, sizeof(*h->ops), cmp_op);
	c.k = malloc((h->n + 1) * sizeof(*c.k));
	if (!c.k) {
		snprintf(r->why, sizeof(r->why), "out of memory");
		return r->verdict = LC_INCONCLUSIVE;
	}
	for (i = 0; i < h->n; i = j) {
		for (j = i; j < h->n && h->ops[j].key == h->ops[i].key; j++)
			;
		r->keys++;
		c.key = h->ops[i].key;
		c.m = 0;
		for (l = i; l < j; l++) {
			int k = classify(&h->ops[l], &c.k[c.m]);

			if (k < 0) {
				char d[256];

				describe(d, sizeof(d), &h->ops[l]);
				snprintf(r->why, sizeof(r->why), "key %llu: %s: read another key's block",
					 (unsigned long long)c.key, d);
				r->key = c.key;
				free(c.k);
				return r->verdict = LC_VIOLATION;
			}
			c.m += (uint32_t)k;
		}
		v = check_key(&c, h->preload, r);
		free_key(&c);
		r->states = c.states;
		if (v == LC_VIOLATION || v == LC_MALFORMED) {
			r->key = c.key;
			free(c.k);
			return r->verdict = v;
		}
		if (v == LC_INCONCLUSIVE && undecided.verdict == LC_LINEARIZABLE) {
			undecided = *r;
			undecided.verdict = v;
			undecided.key = c.key;
		}
	}
	free(c.k);
	if (undecided.verdict != LC_LINEARIZABLE) {
		memcpy(r->why, undecided.why, sizeof(r->why));
		r->key = undecided.key;
		return r->verdict = LC_INCONCLUSIVE;
	}
	r->why[0] = '\0';
	return r->verdict = LC_LINEARIZABLE;
}

/* ---- the command ---- */

static void usage(FILE *f)
{
	fprintf(f,
"Usage: cider-sim --check-history FILE [FILE...] [--widen-ns N [--reference]]\n"
"                 [--json] [-q]\n"
"                 [--max-states N] [--max-seconds S]\n"
"\n"
"Checks a KV history (cider-sim --history, cider-bench kv --history, the KV\n"
"selftest; '-' reads stdin) for per-key linearizability from the history\n"
"alone.  Exit status 0 linearizable, 1 a violation (the first violating key\n"
"and why on stdout), 2 a malformed history or usage error, 3 inconclusive\n"
"(a search bound was reached before a key was decided).\n"
"\n"
"Several FILEs are histories of several compute nodes (cider-bench kv\n"
"--history on each), merged into one: each must say \"clock\":\"realtime\"\n"
"in its header, and their clocks must agree within what --widen-ns adds to\n"
"both ends of every operation's interval (cider-vm cluster measures it),\n"
"which can only make the check weaker, never wrong.\n"
"\n"
"  --widen-ns N      every interval N ns longer at both ends (default 0)\n"
"  --reference       the first FILE was recorded on the clock the others'\n"
"                    skew was measured against (cider-vm cluster: guest 1):\n"
"                    its intervals stay exact, only the others' are widened\n"
"  --max-states N    explored search states per key (default 4000000)\n"
"  --max-seconds S   for the whole check (default 600)\n"
"  --json            the verdict as one JSON object\n"
"  -q, --quiet       the verdict only through the exit status\n");
}

static void json_str(const char *s)
{
	cider_json_str(stdout, s, strlen(s));
}

struct lc_args {
	const char *path;	/* the first history */
	char **more;		/* merged into it: the positional arguments */
	int nmore;
	uint64_t widen_ns;
	bool reference;		/* the first history's clock is the reference */
	bool json, quiet;
};

static int lc_parse_args(int argc, char **argv, struct lc_limits *lim, struct lc_args *a)
{
	static const struct option lo[] = {
		{ "check-history", required_argument, NULL, 'c' },
		{ "max-states", required_argument, NULL, 'S' },
		{ "max-seconds", required_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "widen-ns", required_argument, NULL, 'w' },
		{ "reference", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end, err[128];
	uint64_t v;
	int o;

	while ((o = getopt_long(argc, argv, "qh", lo, NULL)) != -1) {
		switch (o) {
		case 'c': a->path = optarg; break;
		case 'w':
			if (cider_num_parse(optarg, 0, 1000000000000ULL, 0, &v, err, sizeof(err)))
				goto bad;
			a->widen_ns = v;
			break;
		case 'S':
			if (cider_num_parse(optarg, 1024, UINT64_MAX, 0, &v, err, sizeof(err)))
				goto bad;
			lim->max_states = v;
			break;
		case 'T':
			lim->max_seconds = strtod(optarg, &end);
			if (*end || lim->max_seconds <= 0)
				goto bad;
			break;
		case 'r': a->reference = true; break;
		case 'j': a->json = true; break;
		case 'q': a->quiet = true; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
	}
	a->more = argv + optind;
	a->nmore = argc - optind;
	if (a->path && a->nmore < UINT8_MAX)
		return 0;
bad:
	fprintf(stderr, "cider-sim: --check-history: bad arguments\n");
	usage(stderr);
	return 2;
}

/* The first history, then every other merged into it; 0, or 2 (@r says why). */
static int lc_load(struct lc_history *h, const struct lc_args *a, struct lc_report *r)
{
	char err[256];
	int i, ret = 0;

	for (i = -1; i < a->nmore && !ret; i++) {
		const char *path = i < 0 ? a->path : a->more[i];
		FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;

		if (!f) {
			fprintf(stderr, "cider-sim: %s: %s\n", path, strerror(errno));
			return 2;
		}
		ret = i < 0 ? lc_read(h, f, err, sizeof(err)) : lc_merge(h, f, err, sizeof(err));
		if (ret) {
			snprintf(r->why, sizeof(r->why), "%s: %s", path, err);
			r->verdict = LC_MALFORMED;
		}
		if (f != stdin)
			fclose(f);
	}
	if (!ret)
		lc_widen(h, a->widen_ns, a->reference ? 1 : 0);
	return 0;
}

int lincheck_main(int argc, char **argv)
{
	static const char *const verdicts[] = { "linearizable", "violation", "inconclusive",
						"malformed" };
	struct lc_limits lim = { .max_states = 4000000, .max_seconds = 600 };
	struct lc_history h = { 0 };
	struct lc_report *r = calloc(1, sizeof(*r));
	struct lc_args a = { 0 };
	char what[64] = "";
	int ret;

	optind = 1;
	ret = r ? lc_parse_args(argc, argv, &lim, &a) : 2;
	if (!ret)
		ret = lc_load(&h, &a, r);
	if (ret) {
		lc_free(&h);
		free(r);
		return ret;
	}
	if (r->verdict != LC_MALFORMED)
		lc_check(&h, &lim, r);
	if (a.nmore)
		snprintf(what, sizeof(what), " and %d more", a.nmore);
	if (a.widen_ns)
		append(what, sizeof(what), " (intervals%s widened by %llu ns)",
		       a.reference ? " but the first's" : "", (unsigned long long)a.widen_ns);
	if (a.json) {
		printf("{\"history\":");
		json_str(a.path);
		printf(",\"merged\":%d,\"widen_ns\":%llu", a.nmore, (unsigned long long)a.widen_ns);
		printf(",\"ops\":%llu,\"keys\":%llu,\"states\":%llu,\"verdict\":\"%s\"",
		       (unsigned long long)r->ops, (unsigned long long)r->keys,
		       (unsigned long long)r->states, verdicts[r->verdict]);
		if (r->verdict != LC_LINEARIZABLE) {
			printf(",\"key\":%llu,\"why\":", (unsigned long long)r->key);
			json_str(r->why);
		}
		printf("}\n");
	} else if (!a.quiet) {
		printf("%s%s: %llu operations on %llu keys: %s%s%s\n", a.path, what,
		       (unsigned long long)r->ops, (unsigned long long)r->keys,
		       r->verdict == LC_VIOLATION ? "NOT LINEARIZABLE" : verdicts[r->verdict],
		       r->why[0] ? ": " : "", r->why);
	}
	ret = r->verdict == LC_LINEARIZABLE ? 0 : r->verdict == LC_VIOLATION ? 1 :
	      r->verdict == LC_MALFORMED ? 2 : 3;
	lc_free(&h);
	free(r);
	return ret;
}
