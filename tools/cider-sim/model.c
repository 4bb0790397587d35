// SPDX-License-Identifier: GPL-2.0
/*
 * The model: the MN's memory and NIC, the network, CN agents, and the
 * closed-loop clients that feed the protocol core one operation at a time.
 *
 * MN NIC: one FIFO server at mn_mops 8-byte READs a second; an atomic
 * takes atomic_cost of those slots (a read-modify-write of host memory)
 * and then holds its 8-byte word for atomic_word_ps (atomics on one word
 * serialize, on different words they overlap); verbs of one client (one
 * QP) execute in order.
 * Memory effects happen at execution time, so everything the checker
 * sees is what the MN did, in the order it did it.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* ---- u64 hash map ---- */

static u64 hmix(u64 x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

u64 *hmap_find(struct hmap *m, u64 key, bool create)
{
	u64 i, k = key + 1;	/* 0 marks an empty slot */

	if (create && (m->used + 1) * 2 > m->cap) {
		struct hmap n = { .cap = m->cap ? m->cap * 2 : 1024 };
		u64 j;

		n.k = calloc(n.cap, sizeof(u64));
		n.v = calloc(n.cap, sizeof(u64));
		if (!n.k || !n.v) {
			fprintf(stderr, "cider-sim: out of memory\n");
			exit(1);
		}
		for (j = 0; j < m->cap; j++)
			if (m->k[j])
				*hmap_find(&n, m->k[j] - 1, true) = m->v[j];
		hmap_free(m);
		*m = n;
	}
	if (!m->cap)
		return NULL;
	for (i = hmix(k) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->k[i] == k)
			return &m->v[i];
		if (!m->k[i]) {
			if (!create)
				return NULL;
			m->k[i] = k;
			m->v[i] = 0;
			m->used++;
			return &m->v[i];
		}
	}
}

void hmap_free(struct hmap *m)
{
	free(m->k);
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* ---- event heap ---- */

static bool ev_before(const struct event *a, const struct event *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void ev_push(struct sim *s, u64 t, u8 kind, u32 a, u64 b, struct cider_msg *msg)
{
	struct event e = { .t = t, .seq = s->seq++, .kind = kind, .a = a, .b = b, .msg = msg };
	u64 i;

	if (s->nheap == s->capheap) {
		s->capheap = s->capheap ? s->capheap * 2 : 4096;
		s->heap = realloc(s->heap, s->capheap * sizeof(*s->heap));
	}
	for (i = s->nheap++; i && ev_before(&e, &s->heap[(i - 1) / 2]); i = (i - 1) / 2)
		s->heap[i] = s->heap[(i - 1) / 2];
	s->heap[i] = e;
}

static struct event ev_pop(struct sim *s)
{
	struct event top = s->heap[0], last = s->heap[--s->nheap];
	u64 i = 0, c;

	for (; (c = 2 * i + 1) < s->nheap; i = c) {
		if (c + 1 < s->nheap && ev_before(&s->heap[c + 1], &s->heap[c]))
			c++;
		if (!ev_before(&s->heap[c], &last))
			break;
		s->heap[i] = s->heap[c];
	}
	if (s->nheap)
		s->heap[i] = last;
	return top;
}

/* ---- memory ---- */

/*
 * Keys present before the run point at a virtual preloaded block past the
 * region: (key, 1 << 63 | key).  Untouched words cost no memory.
 */
u64 sim_word_off(const struct sim *s, u64 w)
{
	return s->cfg.index == CIDER_INDEX_HASH ? cider_slot_off(w) : cider_word_off(w);
}

u64 sim_word_bare(const struct sim *s, u64 w)
{
	return s->cfg.index == CIDER_INDEX_HASH ? w & ~(CIDER_SLOT_LEASED | CIDER_SLOT_WAITING) :
	       w & ~(CIDER_WORD_LEASED | CIDER_WORD_WAITING);
}

u64 sim_mem_read(struct sim *s, u64 addr)
{
	u64 *v = hmap_find(&s->mem, addr, false);
	u64 k;

	if (v)
		return *v;
	if (s->cfg.index == CIDER_INDEX_ARRAY &&
	    addr >= s->cfg.index_off && addr < s->cfg.index_off + 8 * s->nr_keys) {
		k = (addr - s->cfg.index_off) / 8;
		return cider_workload_preloaded(&s->wl, k) ?
		       cider_word(0, s->preload_base + k * s->cfg.block_size) : 0;
	}
	if (addr >= s->preload_base && s->cfg.index == CIDER_INDEX_HASH) {
		/*
		 * A real block (header, CRC): key k, an 8-byte value 1 << 63 | k.
		 * Built once per block read, not once per word: a READ of a
		 * 1 KiB key's block asks for 130 words in a row, and sealing
		 * each time made such runs quadratic.
		 */
		u8 *blk = s->pre_blk;
		u64 in = (addr - s->preload_base) % s->preload_stride, w;

		k = (addr - s->preload_base) / s->preload_stride;
		if (s->pre_key != k + 1) {
			sim_fill(blk + CIDER_BLOCK_HDR, k, s->key_len);
			w = 1ULL << 63 | k;
			memcpy(blk + CIDER_BLOCK_HDR + s->key_len, &w, 8);
			cider_block_seal(blk, 0, s->key_len, 8);
			s->pre_key = k + 1;
		}
		memcpy(&w, blk + in, 8);
		return in + 8 <= CIDER_BLOCK_HDR + s->key_len + 8 + 8 ? w : 0;
	}
	if (addr >= s->preload_base) {
		u64 in = (addr - s->preload_base) % s->cfg.block_size;

		k = (addr - s->preload_base) / s->cfg.block_size;
		return in == 0 ? k : in == 8 ? 1ULL << 63 | k : 0;
	}
	return 0;
}

/* 8 bytes at any byte address, little-endian, from the word-level memory. */
u64 sim_mem_read_u64(struct sim *s, u64 addr)
{
	u64 lo = sim_mem_read(s, addr & ~7ULL), hi, sh = (addr & 7) * 8;

	if (!sh)
		return lo;
	hi = sim_mem_read(s, (addr & ~7ULL) + 8);
	return lo >> sh | hi << (64 - sh);
}

/* Where a block at @off keeps its value (its first 8 bytes: the op id). */
u64 sim_block_value_addr(const struct sim *s, u64 off)
{
	return s->cfg.index == CIDER_INDEX_HASH ? off + CIDER_BLOCK_HDR + s->key_len : off + 8;
}

static void mem_write(struct sim *s, u64 addr, u64 val)
{
	*hmap_find(&s->mem, addr, true) = val;
}

static bool is_data_ptr(const struct sim *s, u64 addr)
{
	if (s->cfg.index == CIDER_INDEX_HASH)
		return addr >= s->cfg.bucket_off &&
		       addr < s->cfg.bucket_off + s->cfg.nr_buckets * CIDER_BUCKET_SIZE;
	return addr >= s->cfg.index_off && addr < s->cfg.index_off + 8 * s->nr_keys;
}

/* Whose change was this CAS: the key in the block it links, or unlinks. */
static u64 changed_key(struct sim *s, u64 addr, u64 old, u64 new)
{
	if (s->cfg.index == CIDER_INDEX_ARRAY)
		return (addr - s->cfg.index_off) / 8;
	return sim_mem_read(s, sim_word_off(s, sim_word_off(s, new) ? new : old) + CIDER_BLOCK_HDR);
}

void sim_violation(struct sim *s, const char *fmt, ...)
{
	va_list ap;

	if (!s->violations++) {
		va_start(ap, fmt);
		vsnprintf(s->first_violation, sizeof(s->first_violation), fmt, ap);
		va_end(ap);
	}
}

/* The op a freshly installed pointer belongs to (its block's value). */
static u32 installed_op(struct sim *s, u32 client, u64 word)
{
	u64 off = sim_word_off(s, word), val;

	if (!off)
		return s->cur_op[client];	/* a DELETE: whoever CASed */
	val = sim_mem_read_u64(s, sim_block_value_addr(s, off));
	return val >> 63 ? UINT32_MAX : (u32)(val - 1);
}

/* A successful CAS changed a key's data pointer: one state of that key. */
static void record_change(struct sim *s, u32 ci, u64 addr, u64 old, u64 new)
{
	struct chain_ev *e;

	if (s->nchain == s->capchain) {
		s->capchain = s->capchain ? 2 * s->capchain : 4096;
		s->chain = realloc(s->chain, s->capchain * sizeof(*s->chain));
	}
	e = &s->chain[s->nchain++];
	e->key = changed_key(s, addr, old, new);
	e->addr = addr;
	e->t = s->now;
	e->word = new;
	e->op = installed_op(s, ci, new);
	if (s->ideal_coherent)
		(*hmap_find(&s->key_changes, e->key, true))++;
}

#define USE_WRITE	1
#define USE_ATOMIC	2
#define USE_SAID	4

static bool in_data_area(const struct sim *s, u64 addr)
{
	return addr >= s->cfg.data_off;
}

/* An 8-byte READ cider.ko posts as an FAA of 0 (kvfabric.c, read_atomic). */
static bool read_is_atomic(const struct cider_verb *v)
{
	return v->op == CIDER_V_READ && v->len == 8 && !(v->addr & 7) && !v->buf && !v->plain;
}

/* Word @addr is touched by @use: is it now both WRITten and atomically changed? */
static void word_use_one(struct sim *s, u64 addr, u64 use, const char *how)
{
	u64 *u = hmap_find(&s->word_use, addr, true);

	*u |= use;
	if ((*u & (USE_WRITE | USE_ATOMIC)) == (USE_WRITE | USE_ATOMIC) && !(*u & USE_SAID)) {
		*u |= USE_SAID;
		sim_violation(s, "MN word %#llx is both WRITten and changed by atomics (now: %s)",
			      (unsigned long long)addr, how);
	}
}

/*
 * The audit's rule: no word is both WRITten and atomically changed.
 * Blocks (the data area) are WRITten whole, only ever READ otherwise:
 * an atomic there is the violation, without a map of every block word.
 */
static void word_use(struct sim *s, const struct cider_verb *v)
{
	u32 k;

	if (v->op == CIDER_V_WRITE) {
		for (k = 0; k < v->len / 8; k++)
			if (!in_data_area(s, v->addr + 8 * k))
				word_use_one(s, v->addr + 8 * k, USE_WRITE, "a WRITE");
		return;
	}
	if (v->op != CIDER_V_CAS && v->op != CIDER_V_FAA && !read_is_atomic(v))
		return;
	if (in_data_area(s, v->addr))
		sim_violation(s, "an atomic verb (op %u) on data-area word %#llx", v->op,
			      (unsigned long long)v->addr);
	else
		word_use_one(s, v->addr, USE_ATOMIC,
			     v->op == CIDER_V_READ ? "an 8-byte READ, an FAA of 0" : "an atomic");
}

/* Apply verb @i of client @ci's batch at the MN, now. */
static void verb_exec(struct sim *s, u32 ci, u32 i)
{
	struct cider_verb *v = &s->clients[ci].v[i];
	u64 old;
	u32 k;

	s->verbs[v->op]++;
	word_use(s, v);
	/*
	 * The stall limit counts work, not just events: a READ of a 64 KiB
	 * block costs the model 8,192 word look-ups, and a livelock of such
	 * READs must stop about as soon (in wall-clock time) as one of 8-byte
	 * READs does.
	 */
	if (v->op == CIDER_V_READ || v->op == CIDER_V_WRITE)
		s->events_since_done += v->len / 64;
	switch (v->op) {
	case CIDER_V_READ:
		for (k = 0; k < v->len / 8; k++) {
			u64 w = sim_mem_read(s, v->addr + 8 * k);

			if (v->buf)
				memcpy((u8 *)v->buf + 8 * k, &w, 8);
			else if (k < 8)
				v->data[k] = w;
		}
		break;
	case CIDER_V_WRITE:
		for (k = 0; k < v->len / 8; k++) {
			u64 w = v->buf ? 0 : v->data[k & 7];

			if (v->buf)
				memcpy(&w, (u8 *)v->buf + 8 * k, 8);
			mem_write(s, v->addr + 8 * k, w);
		}
		break;
	case CIDER_V_FAA:
		v->old = sim_mem_read(s, v->addr);
		mem_write(s, v->addr, v->old + v->arg0);
		break;
	default:
		old = v->old = sim_mem_read(s, v->addr);
		if (old != v->arg0)
			break;
		mem_write(s, v->addr, v->arg1);
		/* A lease bit set is no change of the key (cache.h). */
		if (is_data_ptr(s, v->addr) && sim_word_bare(s, old) != sim_word_bare(s, v->arg1))
			record_change(s, ci, v->addr, old, v->arg1);
		break;
	}
}

static u64 xfer_ps(const struct sim *s, u32 bytes)
{
	return (u64)(bytes * 8 * 1000.0 / s->p.bw_gbps);
}

/* A verb reaches the MN NIC: queue it, find when it executes. */
static void verb_arrive(struct sim *s, u32 ci, u64 b)
{
	struct cider_verb *v = &s->clients[ci].v[(u32)b];
	u64 svc = (u64)(1e6 / s->p.mn_mops), start, exec, done;
	u64 *wf = NULL;

	if (v->op == CIDER_V_CAS || v->op == CIDER_V_FAA)
		svc = (u64)(1e6 * s->p.atomic_cost / s->p.mn_mops);
	start = s->now > s->nic_free ? s->now : s->nic_free;
	s->nic_free = start + svc;
	exec = start + svc;
	if (exec < s->qp_ready[ci])
		exec = s->qp_ready[ci];
	done = exec;
	if (v->op == CIDER_V_CAS || v->op == CIDER_V_FAA) {
		wf = hmap_find(&s->word_free, v->addr, true);
		if (exec < *wf)
			exec = *wf;
		*wf = exec + s->p.atomic_word_ps;
		done = *wf;
	}
	s->qp_ready[ci] = exec + 1;
	done += s->p.net_ps + xfer_ps(s, v->op == CIDER_V_READ ? v->len : 8);
	if (done > s->batch_done[ci])
		s->batch_done[ci] = done;
	ev_push(s, exec, EV_EXEC, ci, b, NULL);
}

/* Executed verb @i of @n: the last one completes the batch. */
static void verb_executed(struct sim *s, u32 ci, u32 i, u32 n)
{
	u64 t = s->batch_done[ci];

	verb_exec(s, ci, i);
	if (i != n - 1)
		return;
	/*
	 * With jitter, one completion in a hundred reaches a client that was
	 * preempted: it runs again up to four grace periods later (at most a
	 * tenth of the lease: a lock holder must stay within its lease).  That is
	 * what makes a reader hold a stale pointer long enough for the block
	 * to be reused.
	 */
	if (s->jitter && cider_rng_next(&s->frng) % 100 == 0)
		t += cider_rng_next(&s->frng) % (s->p.preempt_ps + 1);
	ev_push(s, t, EV_DONE, ci, 0, NULL);
}

/* ---- the fabric the core sees ---- */

/*
 * The CN's NIC: one FIFO server at the same verb rate as the MN's, shared
 * by the CN's clients and its agent; returns when a request leaves it.
 */
static u64 cn_nic(struct sim *s, u32 cn, u64 t)
{
	u64 *free = &s->cn_nic_free[cn];

	if (*free < t)
		*free = t;
	*free += (u64)(1e6 / s->p.mn_mops);
	return *free;
}

/* --verbs-by-state: count @c's @n verbs under its operation's and machines' states. */
static void count_by_state(struct sim *s, const struct cider_client *c,
			   const struct cider_verb *v, unsigned int n)
{
	char name[sizeof(s->sv->name)];
	unsigned int i;
	u32 k;

	snprintf(name, sizeof(name), "%s %s/%s", cider_op_name(c->op), cider_client_state_name(c),
		 cider_client_sub_state_name(c));
	for (k = 0; k < s->nsv && strcmp(s->sv[k].name, name); k++)
		;
	if (k == s->nsv) {
		if (s->nsv == s->capsv) {
			s->capsv = s->capsv ? 2 * s->capsv : 64;
			s->sv = realloc(s->sv, s->capsv * sizeof(*s->sv));
			if (!s->sv)
				abort();
		}
		memset(&s->sv[k], 0, sizeof(s->sv[k]));
		snprintf(s->sv[k].name, sizeof(s->sv[k].name), "%s", name);
		s->nsv++;
	}
	for (i = 0; i < n; i++)
		s->sv[k].n[v[i].op]++;
}

/*
 * Would the kernel's fabric take this batch (kvfabric.c,
 * cider_kvs_verbs_fit())?  A verb's bytes go to its own words, to the
 * client's whole block buffer (mapped once, moved in place) or to its
 * lock record, and those copied fit the slot's batch buffer.  The model
 * itself would run any batch: this is where it says one is refused.
 */
static void check_fits(struct sim *s, const struct cider_client *c, const struct cider_verb *v,
		       unsigned int n)
{
	u32 used = 0, room, len;
	unsigned int i;

	for (i = 0; i < n; i++) {
		bool ext = v[i].buf && v[i].buf == c->buf;

		len = v[i].op == CIDER_V_CAS || v[i].op == CIDER_V_FAA ? 8 : v[i].len;
		if (ext)
			room = c->buf_len;
		else if (v[i].buf == (const void *)c->lq_ring)
			room = sizeof(c->lq_ring);
		else
			room = v[i].buf ? 0 : sizeof(v[i].data);
		if (len > room)
			sim_violation(s, "client %u posted a %s of %u bytes into a buffer the kernel's fabric does not map (%s)",
				      c->id, v[i].op == CIDER_V_READ ? "READ" : "verb", len,
				      cider_client_state_name(c));
		used += ext ? 0 : (len + 7) / 8 * 8;
	}
	if (n > CIDER_MAX_VERBS ||
	    used > sizeof(c->lq_ring) + (CIDER_MAX_VERBS - 1) * sizeof(v->data))
		sim_violation(s, "client %u posted %u verbs of %u bytes: more than a kernel batch holds",
			      c->id, n, used);
}

static void fab_post(void *priv, struct cider_client *c, struct cider_verb *v, unsigned int n)
{
	struct sim *s = priv;
	u64 t = s->now + s->p.client_cpu_ps;
	unsigned int i;

	check_fits(s, c, v, n);
	if (s->by_state)
		count_by_state(s, c, v, n);
	s->batch_done[c->id] = 0;
	s->verbs_out[c->id] = 1;
	for (i = 0; i < n; i++) {
		t = cn_nic(s, c->cn->id, t) + xfer_ps(s, v[i].op == CIDER_V_WRITE ? v[i].len + 8 : 8);
		ev_push(s, t + s->p.net_ps, EV_ARRIVE, c->id, i | (u64)n << 32, NULL);
	}
}

static void fab_send(void *priv, struct cider_cn *from, u32 to_cn, const struct cider_msg *m)
{
	struct sim *s = priv;
	struct cider_msg *copy = malloc(sizeof(*copy));
	u64 t = cn_nic(s, from->id, s->now) + s->p.msg_ps + s->p.msg_cpu_ps, *last;

	*copy = *m;
	if (s->jitter)
		t += cider_rng_next(&s->frng) % (s->p.jitter_ps + 1);
	/* RC: messages between two CNs arrive in the order sent. */
	last = &s->msg_last[(u64)from->id * s->nr_cns + to_cn];
	if (t <= *last)
		t = *last + 1;
	*last = t;
	ev_push(s, t, EV_MSG, to_cn, 0, copy);
}

/* Every other CN, crashed or not: a crashed one never answers. */
static u32 fab_broadcast(void *priv, struct cider_cn *from, const struct cider_msg *m)
{
	struct sim *s = priv;
	u32 i;

	for (i = 0; i < s->nr_cns; i++)
		if (i != from->id)
			fab_send(priv, from, i, m);
	return s->nr_cns - 1;
}

static void fab_timer(void *priv, struct cider_client *c, u64 delay_ns, u32 token)
{
	struct sim *s = priv;

	ev_push(s, s->now + delay_ns * NS, EV_TIMER, c->id, token, NULL);
}

static void fab_wake(void *priv, struct cider_client *c)
{
	struct sim *s = priv;

	ev_push(s, s->now, EV_WAKE, c->id, 0, NULL);
}

static u64 fab_now(void *priv)
{
	return ((struct sim *)priv)->now / NS;
}

static u32 fab_rand(void *priv)
{
	return (u32)cider_rng_next(&((struct sim *)priv)->frng);
}

void history_write(struct sim *s, const struct op_rec *o)
{

	fprintf(s->history,
		"{\"client\":%u,\"cn\":%u,\"key\":%llu,\"op\":\"%s\",\"arg\":%llu,\"result\":\"%s\","
		"\"value\":%llu,\"invoke_ns\":%llu,\"response_ns\":%llu,\"writer\":%u}\n",
		o->client, o->cn, (unsigned long long)o->key, cider_op_name(o->op),
		(unsigned long long)o->arg, o->pending && !o->resp ? "pending" : cider_res_name(o->res),
		(unsigned long long)o->got, (unsigned long long)(o->inv / NS),
		o->resp ? (unsigned long long)(o->resp / NS) : 0ULL, o->writer);
}

/* MN memory: blocks handed out (in use) and chunks claimed, over time. */
static void sample_memory(struct sim *s)
{
	u64 live = 0, claimed = 0;
	u32 i;

	for (i = 0; i < s->nr_cns; i++) {
		live += s->cns[i].slab.live;
		claimed += s->cns[i].slab.claimed;
	}
	s->mem_live = live;
	s->mem_claimed = claimed;
	if (live > s->mem_peak)
		s->mem_peak = live;
	if (s->ops_done == s->ops_target / 2)
		s->mem_claimed_half = claimed;
}

/* Does this configuration promise every operation finishes within the bound? */
static bool sim_promises_bound(const struct sim *s)
{
	return s->cfg.mode == CIDER_MODE_CIDER && s->cfg.escalate;
}

/* Workload d: @c's INSERT @o has ended (or its client crashed in it). */
static void latest_done(struct sim *s, const struct cider_client *c, const struct op_rec *o)
{
	if (s->wl.latest && o->op == CIDER_INSERT)
		cider_latest_done(&s->latest, s->latest_seq[c->id]);
}

static void fab_done(void *priv, struct cider_client *c)
{
	struct sim *s = priv;
	struct op_rec *o = &s->ops[s->cur_op[c->id]];

	o->res = c->res;
	o->got = c->got;
	o->resp = s->now;
	o->pending = c->res == CIDER_RES_UNKNOWN;	/* may or may not have happened */
	o->pess = c->pess;
	o->writer = c->res == CIDER_RES_OK && o->op != CIDER_SEARCH ? c->writer : s->cur_op[c->id];
	if (o->op == CIDER_SEARCH && c->res == CIDER_RES_NONE)
		sim_violation(s, "op %u: client %u read a block of another key for key %llu",
			      s->cur_op[c->id], c->id, (unsigned long long)o->key);
	/*
	 * The bound is cider's promise, and escalation into a FIFO queue is
	 * what keeps it; the baselines are lock-free or back off, and so is
	 * cider with escalation off (Algorithm 1 alone, --escalate 0): they
	 * may starve a client, counted and reported as they are, not failed.
	 */
	if (o->resp - o->inv > s->p.bound_ps && !sim_promises_bound(s))
		s->over_bound++;
	else if (o->resp - o->inv > s->p.bound_ps)
		sim_violation(s, "op %u (client %u, key %llu) took %.1f us, over the bound",
			      s->cur_op[c->id], c->id, (unsigned long long)o->key,
			      (double)(o->resp - o->inv) / US);
	latest_done(s, c, o);
	sim_scan_note_delete(s, o, false, o->pending);
	sim_scan_done(s, c);
	s->ops_done++;
	if (s->events_since_done > s->max_events_gap)
		s->max_events_gap = s->events_since_done;
	s->events_since_done = 0;
	sample_memory(s);
	ev_push(s, s->now, EV_START, c->id, 0, NULL);
}

static const struct cider_fabric_ops sim_fabric_ops = {
	.post = fab_post, .send = fab_send, .broadcast = fab_broadcast, .timer = fab_timer,
	.wake = fab_wake,
	.done = fab_done, .trace = sim_trace, .now = fab_now, .rand = fab_rand,
};

void sim_init_model(struct sim *s)
{
	s->fab.ops = &sim_fabric_ops;
	s->fab.priv = s;
}

/* ---- the driver ---- */

/*
 * The bytes of an id: the id (little-endian), then filler from it, so
 * that every byte of a key or value is checked (CRC, key compare).
 */
void sim_fill(u8 *out, u64 id, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		out[i] = i < 8 ? (u8)(id >> (8 * i)) : (u8)(id * 31 + i);
}

/*
 * Start @o on @c through the byte API, as the kernel does: key and value
 * bytes made from their ids in the client's own buffers (valid until the
 * operation ends), a SEARCH's value read into the third.
 */
static void start_bytes(struct sim *s, struct cider_client *c, const struct op_rec *o)
{
	u8 *kb = s->opbufs + (size_t)c->id * s->opbuf_stride;
	u8 *vb = kb + CIDER_MAX_KEY, *out = vb + s->vmax;
	struct cider_kv_args a = {
		.op = o->op, .key = kb, .value = vb, .out = out, .out_len = s->vmax,
		.opid = s->cur_op[c->id],
	};

	if (s->cfg.index == CIDER_INDEX_HASH) {
		a.key_len = s->key_len;
		a.value_len = cider_sizes_next(&s->vsize, &s->rng);
	} else {
		a.key_len = 8;
		a.value_len = 8;
	}
	sim_fill(kb, o->key, a.key_len);
	sim_fill(vb, o->arg, a.value_len);
	cider_client_start(c, &a);
}

/*
 * --cache ideal: a SEARCH of a key its CN has read before is answered at
 * once, with no verb, from the MN's memory as it is now (the pointer,
 * then the block): a cache that is infinite, free and always coherent.
 * --cache coherent: only if no write of the key was installed since that
 * CN's last read of it, as a cache that keeps a copy until a write
 * invalidates it (its invalidations free too).
 */
static bool ideal_answer(struct sim *s, struct cider_client *c, struct op_rec *o)
{
	u64 *seen, w, now = 1;

	if (o->op != CIDER_SEARCH)
		return false;
	seen = hmap_find(&s->ideal_seen, (u64)c->cn->id << 40 | o->key, true);
	if (s->ideal_coherent) {		/* changes so far, + 1 */
		u64 *ch = hmap_find(&s->key_changes, o->key, false);

		now = (ch ? *ch : 0) + 1;
	}
	if (*seen != now) {
		*seen = now;
		return false;
	}
	s->ideal_hits++;
	w = sim_mem_read(s, s->cfg.index_off + 8 * o->key);
	c->res = sim_word_off(s, w) ? CIDER_RES_OK : CIDER_RES_NOTFOUND;
	c->got = c->res == CIDER_RES_OK ? sim_mem_read(s, sim_word_off(s, w) + 8) : 0;
	c->pess = false;
	fab_done(s, c);
	return true;
}

/*
 * @c's next operation of the workload and its key.  A read-modify-write
 * (workload f) runs as its SEARCH, then, as the client's next operation,
 * an UPDATE of the same key: two operations, counted, timed and checked
 * as such.  Workload d takes its keys from s->latest.
 */
static u8 next_op(struct sim *s, struct cider_client *c, u64 *key)
{
	u8 op;

	if (s->rmw_key && s->rmw_key[c->id]) {
		*key = s->rmw_key[c->id] - 1;
		s->rmw_key[c->id] = 0;
		return CIDER_WL_UPDATE;
	}
	op = (u8)cider_workload_op(&s->wl, &s->rng);
	if (!s->wl.latest)
		*key = cider_zipf_next(&s->zipf, &s->rng);
	else if (op == CIDER_WL_INSERT)
		*key = cider_latest_insert(&s->latest, &s->latest_seq[c->id]);
	else
		*key = cider_latest_read(&s->latest, &s->latest_zipf, &s->rng);
	if (op == CIDER_WL_RMW) {
		s->rmw_key[c->id] = *key + 1;
		op = CIDER_WL_SEARCH;
	}
	return op;
}

static void start_op(struct sim *s, struct cider_client *c)
{
	struct op_rec *o;
	u8 op;

	if (c->dead || s->ops_issued >= s->ops_target)
		return;
	if (s->nops == s->capops) {
		s->capops = s->capops ? 2 * s->capops : 65536;
		s->ops = realloc(s->ops, s->capops * sizeof(*s->ops));
	}
	s->cur_op[c->id] = (u32)s->nops;
	o = &s->ops[s->nops++];
	memset(o, 0, sizeof(*o));
	o->client = c->id;
	o->cn = c->cn->id;
	if (c->id < s->scanners) {
		o->inv = s->now;
		s->t_last_issue = s->now;
		s->ops_issued++;
		sim_scan_start(s, c, o);
		return;
	}
	op = next_op(s, c, &o->key);
	o->op = op == CIDER_WL_SEARCH ? CIDER_SEARCH : op == CIDER_WL_INSERT ? CIDER_INSERT :
		op == CIDER_WL_UPDATE ? CIDER_UPDATE : op == CIDER_WL_PUT ? CIDER_PUT :
		CIDER_DELETE;
	sim_scan_note_delete(s, o, true, false);
	o->arg = s->cur_op[c->id] + 1ULL;	/* unique per operation */
	o->inv = s->now;
	s->t_last_issue = s->now;
	s->ops_issued++;
	if (s->ideal_cache && ideal_answer(s, c, o))
		return;
	start_bytes(s, c, o);
}

/* A client in the middle of a lock operation, if any (for crashes). */
static struct cider_client *pick_victim(struct sim *s)
{
	u32 i, start = (u32)(cider_rng_next(&s->frng) % s->nr_clients);

	for (i = 0; i < s->nr_clients; i++) {
		struct cider_client *c = &s->clients[(start + i) % s->nr_clients];

		if (!c->dead && c->busy && c->pess)
			return c;
	}
	return &s->clients[start];
}

static void crash_client(struct sim *s, struct cider_client *c)
{
	if (c->dead)
		return;
	if (c->busy && s->cur_op[c->id] < s->nops) {
		s->ops[s->cur_op[c->id]].pending = true;
		latest_done(s, c, &s->ops[s->cur_op[c->id]]);
		sim_scan_note_delete(s, &s->ops[s->cur_op[c->id]], false, true);
	}
	cider_client_crash(c);
}

/*
 * --revive: a lease after its crash, with none of its verbs in flight, a
 * crashed client comes back as cider.ko brings back one its operation's
 * bound ended (not one of a crashed CN); until then, look again.
 */
static void revive_client(struct sim *s, struct cider_client *c)
{
	if (!c->dead || c->cn->dead)
		return;
	if (s->verbs_out[c->id] || !cider_client_revive(c)) {
		ev_push(s, s->now + s->p.lease_ps / 4, EV_REVIVE, c->id, 0, NULL);
		return;
	}
	s->revived++;
	s->incarnation[c->id]++;
	if (!s->quiet)
		fprintf(stderr, "cider-sim: client %u revived at %.1f us\n", c->id,
			(double)s->now / US);
	start_op(s, c);
}

static void maybe_crash(struct sim *s)
{
	struct cider_client *c;
	u32 i;

	if (s->crashes >= 2 || !s->crash_at[s->crashes] || s->ops_done < s->crash_at[s->crashes])
		return;
	c = pick_victim(s);
	if (s->crashes == 1) {		/* the second crash takes a whole CN */
		struct cider_cn *cn = c->cn;

		for (i = 0; i < s->cpc; i++)
			crash_client(s, &cn->clients[i]);
		cn->dead = true;
		if (!s->quiet)
			fprintf(stderr, "cider-sim: CN %u crashed at %.1f us\n", cn->id,
				(double)s->now / US);
	} else {
		crash_client(s, c);
		if (s->revive)
			ev_push(s, s->now + s->p.lease_ps, EV_REVIVE, c->id, 0, NULL);
		if (!s->quiet)
			fprintf(stderr, "cider-sim: client %u crashed at %.1f us%s\n", c->id,
				(double)s->now / US, c->qn ? " in a lock queue" : "");
	}
	s->crashes++;
}

/* Events still queued when a stalled run stops: their messages are ours. */
void sim_free_events(struct sim *s)
{
	u64 i;

	for (i = 0; i < s->nheap; i++)
		free(s->heap[i].msg);
	s->nheap = 0;
}

static const struct sim *age_sim;	/* qsort has no context argument */

static int cmp_age(const void *a, const void *b)
{
	const struct sim *s = age_sim;
	u64 x = s->ops[s->cur_op[*(const u32 *)a]].inv, y = s->ops[s->cur_op[*(const u32 *)b]].inv;

	return x < y ? -1 : x > y;
}

/* "op > child > leaf": the states of a client's active machines by name. */
static const char *state_str(const struct cider_client *c, char *buf, size_t len)
{
	const char *sub = cider_client_sub_state_name(c), *leaf = cider_client_leaf_state_name(c);

	snprintf(buf, len, "%s%s%s%s%s", cider_client_state_name(c), *sub ? " > " : "", sub,
		 *leaf ? " > " : "", leaf);
	return buf;
}

/* One stuck client: everything needed to find where its machines wait. */
static void stall_client(struct sim *s, struct cider_client *c)
{
	const struct op_rec *o = &s->ops[s->cur_op[c->id]];
	char st[96];

	fprintf(stderr, "  client %u (CN %u): op %u %s key %llu, running %.1f us; state %s; %s, timer token %u%s; read_retries %u",
		c->id, c->cn->id, s->cur_op[c->id], cider_op_name(c->op),
		(unsigned long long)c->key, (double)(s->now - o->inv) / US,
		state_str(c, st, sizeof(st)), c->parked ? "parked" : "not parked",
		c->token, c->timer_fired ? " (fired)" : "", c->read_retries);
	if (c->qn)
		fprintf(stderr, "; qnode %llx %s on lock %#llx (ticket %u gen %u, head %u, size %u%s)",
			(unsigned long long)c->qn->id, cider_qstate_name(c->qn->state),
			(unsigned long long)c->qn->laddr, c->qn->ticket, c->qn->gen,
			cider_lq_head(sim_mem_read(s, c->qn->laddr)),
			cider_lq_size(sim_mem_read(s, c->qn->laddr)),
			c->qn->state == CIDER_Q_EXECUTOR ? ", executor" : "");
	if (c->lw)
		fprintf(stderr, "; local WC %s", c->lw_member ? "member" : "combiner");
	fputc('\n', stderr);
}

/* Two stuck clients wait in the same place (for the summary by state). */
static bool stall_same(const struct cider_client *c, const struct cider_client *d)
{
	return d->op == c->op && !strcmp(cider_client_state_name(d), cider_client_state_name(c)) &&
	       !strcmp(cider_client_sub_state_name(d), cider_client_sub_state_name(c)) &&
	       !strcmp(cider_client_leaf_state_name(d), cider_client_leaf_state_name(c)) &&
	       d->parked == c->parked && !d->qn == !c->qn &&
	       (!c->qn || d->qn->state == c->qn->state);
}

/*
 * A stall: print which operations are stuck and where (the states of
 * their machines, by name), mark them pending (they
 * may or may not have taken effect) so that the checks still judge the
 * rest of the history, and record the violation.
 */
static void stall(struct sim *s, const char *why)
{
	u32 *stuck = malloc((s->nr_clients + 1) * sizeof(u32)), n = 0, i, j, same;
	char st[96];
	u64 kinds[EV_REVIVE + 1] = { 0 }, k;

	for (i = 0; i < s->nr_clients; i++)
		if (!s->clients[i].dead && s->clients[i].busy)
			stuck[n++] = i;
	age_sim = s;
	if (n)
		qsort(stuck, n, sizeof(u32), cmp_age);
	for (k = 0; k < s->nheap; k++)
		kinds[s->heap[k].kind]++;
	sim_violation(s, "stall: %s at %.3f ms model time, %llu of %llu ops done, %u operations stuck%s",
		      why, (double)s->now / MS, (unsigned long long)s->ops_done,
		      (unsigned long long)s->ops_target, n,
		      n ? "" : " (events keep coming with no client busy)");
	s->stalled = true;
	fprintf(stderr, "cider-sim: STALL: %s at %.3f ms model time after %llu events; %llu of %llu ops done; %u stuck; queued events: %llu arrive, %llu exec, %llu done, %llu msg, %llu timer, %llu wake, %llu start\n",
		why, (double)s->now / MS, (unsigned long long)s->events,
		(unsigned long long)s->ops_done, (unsigned long long)s->ops_target, n,
		(unsigned long long)kinds[EV_ARRIVE], (unsigned long long)kinds[EV_EXEC],
		(unsigned long long)kinds[EV_DONE], (unsigned long long)kinds[EV_MSG],
		(unsigned long long)kinds[EV_TIMER], (unsigned long long)kinds[EV_WAKE],
		(unsigned long long)kinds[EV_START]);
	fprintf(stderr, "cider-sim: the %u longest-running stuck operations:\n",
		n < 10 ? n : 10);
	for (i = 0; i < n && i < 10; i++)
		stall_client(s, &s->clients[stuck[i]]);
	/* At thousands of clients, where they all wait matters more than who. */
	if (n > 10) {
		fprintf(stderr, "cider-sim: all stuck operations by state:\n");
		for (i = 0; i < n; i++) {
			struct cider_client *c = &s->clients[stuck[i]];

			for (j = 0; j < i; j++)
				if (stall_same(c, &s->clients[stuck[j]]))
					break;
			if (j < i)
				continue;
			same = 0;
			for (j = i; j < n; j++)
				same += stall_same(c, &s->clients[stuck[j]]);
			fprintf(stderr, "  %u x %s in state %s, %s%s%s\n", same,
				cider_op_name(c->op), state_str(c, st, sizeof(st)),
				c->parked ? "parked" : "not parked", c->qn ? ", qnode " : "",
				c->qn ? cider_qstate_name(c->qn->state) : "");
		}
	}
	for (i = 0; i < n; i++)
		s->ops[s->cur_op[stuck[i]]].pending = true;
	free(stuck);
	sim_free_events(s);
}

/*
 * --trace: where a client's machines are after an event resumed it (the
 * operation's state, its child's and that one's), and what it waits for.
 */
static void trace_client(struct sim *s, const char *ev, const struct cider_client *c)
{
	char st[96];

	fprintf(stderr, "%.3f us client %u %s: %s %s, %s", (double)s->now / US, c->id, ev,
		cider_op_name(c->op), state_str(c, st, sizeof(st)),
		!c->busy ? "finished" : c->parked ? "parked" : "posted");
	if (c->qn)
		fprintf(stderr, ", qnode %llx %s", (unsigned long long)c->qn->id,
			cider_qstate_name(c->qn->state));
	fputc('\n', stderr);
}

/* --trace: the qnode a message was for, as the CN's agent left it. */
static void trace_msg(struct sim *s, const struct cider_cn *cn, const struct cider_msg *m)
{
	static const char *const types[] = { "handover", "exec", "exec_done", "result" };
	const struct cider_qnode *q = &cn->q[m->to_slot & 0xff];
	bool here = q->id && q->laddr == m->laddr && q->ticket == m->ticket;

	fprintf(stderr, "%.3f us CN %u msg %s to qnode %llx (ticket %u): %s\n",
		(double)s->now / US, cn->id, types[m->type & 3],
		here ? (unsigned long long)q->id : 0ULL, m->ticket,
		here ? cider_qstate_name(q->state) : "gone");
}

void sim_run(struct sim *s)
{
	u32 i;

	for (i = 0; i < s->nr_clients; i++)
		ev_push(s, i * 10 * NS, EV_START, i, 0, NULL);
	while (s->nheap) {
		struct event e;
		struct cider_client *c;

		if (s->events_since_done >= s->stall_events) {
			stall(s, "no operation completed in --stall-events events");
			break;
		}
		if (s->heap[0].t > s->max_model_ps) {
			stall(s, "--max-model-ms reached");
			break;
		}
		e = ev_pop(s);
		c = e.kind == EV_MSG ? NULL : &s->clients[e.a];
		s->events++;
		s->events_since_done++;
		s->now = e.t;
		switch (e.kind) {
		case EV_ARRIVE:
			verb_arrive(s, e.a, e.b);
			break;
		case EV_EXEC:
			verb_executed(s, e.a, (u32)e.b, (u32)(e.b >> 32));
			break;
		case EV_DONE:
			s->verbs_out[e.a] = 0;
			if (!c->dead)
				cider_client_resume(c);
			if (s->trace && !c->dead)
				trace_client(s, "verbs done", c);
			break;
		case EV_MSG:
			cider_cn_on_msg(&s->cns[e.a], e.msg);
			if (s->trace)
				trace_msg(s, &s->cns[e.a], e.msg);
			free(e.msg);
			break;
		case EV_TIMER:
			/* A stale token (woken meanwhile) resumes nothing. */
			if (s->trace && !c->dead && c->parked && (u32)e.b == c->token) {
				cider_client_timer(c, (u32)e.b);
				trace_client(s, "timer", c);
				break;
			}
			cider_client_timer(c, (u32)e.b);
			break;
		case EV_WAKE:
			if (!c->dead && !c->parked) {
				cider_client_resume(c);
				if (s->trace)
					trace_client(s, "woken", c);
			}
			break;
		case EV_REVIVE:
			revive_client(s, c);
			break;
		case EV_START:
			maybe_crash(s);
			start_op(s, c);
			if (s->trace && c->busy && !c->dead)
				trace_client(s, "start", c);
			break;
		}
	}
}
