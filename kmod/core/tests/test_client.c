// SPDX-License-Identifier: GPL-2.0
/*
 * The operation's state machine (client.c) driven step by step through a
 * scripted fabric: what each step posts, sends or sleeps for, the states
 * it names, and that the lock agent's message wakes the waiting client
 * (the agent returns whom to wake; only client.c calls the fabric).
 */
#include <stdlib.h>

#include "kselftest_harness.h"
#include "client.h"
#include "hashindex.h"

struct fake {
	struct cider_verb v[CIDER_MAX_VERBS];
	unsigned int nv;
	struct cider_msg msg;
	u32 to_cn;
	const struct cider_cn *from;
	const struct cider_client *last;	/* the client of the last call */
	u64 delay_ns;
	u64 now;			/* the clock, in ns */
	u32 token;
	u32 posts, sends, timers, wakes, dones;
};

static struct fake *fake_of(void *fab)
{
	return fab;
}

static void fake_post(void *fab, struct cider_client *c, struct cider_verb *v, unsigned int n)
{
	struct fake *f = fake_of(fab);

	memcpy(f->v, v, n * sizeof(*v));
	f->nv = n;
	f->last = c;
	f->posts++;
}

static void fake_send(void *fab, struct cider_cn *from, u32 to_cn, const struct cider_msg *m)
{
	struct fake *f = fake_of(fab);

	f->msg = *m;
	f->to_cn = to_cn;
	f->from = from;
	f->sends++;
}

static u32 fake_broadcast(void *fab, struct cider_cn *from, const struct cider_msg *m)
{
	u32 i;

	for (i = 0; i < from->cfg->nr_cns; i++)
		if (i != from->id)
			fake_send(fab, from, i, m);
	return from->cfg->nr_cns - 1;
}

static void fake_timer(void *fab, struct cider_client *c, u64 delay_ns, u32 token)
{
	struct fake *f = fake_of(fab);

	f->last = c;
	f->delay_ns = delay_ns;
	f->token = token;
	f->timers++;
}

static void fake_wake(void *fab, struct cider_client *c)
{
	fake_of(fab)->last = c;
	fake_of(fab)->wakes++;
}

static void fake_done(void *fab, struct cider_client *c)
{
	fake_of(fab)->last = c;
	fake_of(fab)->dones++;
}

static u64 fake_now(void *fab)
{
	return fake_of(fab)->now;
}

static u32 fake_rand(void *fab)
{
	(void)fab;
	return 0;
}

static const struct cider_fabric_ops fake_ops = {
	.post = fake_post, .send = fake_send, .broadcast = fake_broadcast, .timer = fake_timer,
	.wake = fake_wake,
	.done = fake_done, .now = fake_now, .rand = fake_rand,
};

/* A fabric that cannot broadcast (cider.ko until its peers can). */
static const struct cider_fabric_ops fake_ops_silent = {
	.post = fake_post, .send = fake_send, .timer = fake_timer, .wake = fake_wake,
	.done = fake_done, .now = fake_now, .rand = fake_rand,
};

#define DATA_OFF (1ULL << 20)
#define RING 64

struct rig {
	struct fake f;
	struct cider_fabric fab;
	struct cider_cfg cfg;
	struct cider_cn cn;
	struct cider_client c;
	struct cider_lwc lwc[1];
	struct cider_slab_ent ring[RING];
	struct cider_cache_ent cent[16];
	u8 croom[16 * 8];
	u8 key[8], val[8], out[8];
};

/* Start an operation on the array's key @key through the byte API. */
static void start(struct rig *r, u8 op, u64 key, u64 val, u32 opid)
{
	struct cider_kv_args a = {
		.op = op, .key = r->key, .key_len = 8, .value = r->val, .value_len = 8,
		.out = r->out, .out_len = sizeof(r->out), .opid = opid,
	};

	cider_put_le64(r->key, key, 8);
	cider_put_le64(r->val, val, 8);
	cider_client_start(&r->c, &a);
}

static struct rig *rig_new(u8 mode)
{
	struct rig *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fab.ops = &fake_ops;
	r->fab.priv = &r->f;
	r->cfg = (struct cider_cfg) {
		.mode = mode, .index = CIDER_INDEX_ARRAY, .nr_cns = 2, .clients_per_cn = 1,
		.nr_keys = 16, .index_off = 4096, .lock_off = 8192, .alloc_cursor = 64,
		.data_off = DATA_OFF, .chunk_size = 4096, .block_size = 16,
		.data_size_limit = 1 << 20, .lease_ns = 1000000, .grace_ns = 100000,
		.backoff_t0_ns = 1000, .lock_qlen = 4, .lock_rec = 16 + 8 * 4, .escalate = 2,
	};
	cider_cn_init(&r->cn, 0, &r->cfg, &r->fab, &r->c, r->lwc, 1, r->ring, RING);
	r->f.now = 1000;
	return r;
}

/* The verbs completed: hand the client what the MN returned. */
static void complete(struct rig *r)
{
	memcpy(r->c.v, r->f.v, r->f.nv * sizeof(r->f.v[0]));
	cider_client_resume(&r->c);
}

static int states_are(struct rig *r, const char *op, const char *sub, const char *leaf)
{
	return !strcmp(cider_client_state_name(&r->c), op) &&
	       !strcmp(cider_client_sub_state_name(&r->c), sub) &&
	       !strcmp(cider_client_leaf_state_name(&r->c), leaf);
}

TEST(osync_update_reads_claims_a_chunk_then_writes_and_cases)
{
	struct rig *r = rig_new(CIDER_MODE_OSYNC);
	u64 old = cider_word(1, DATA_OFF + 4096);

	ASSERT_TRUE(r != NULL);
	start(r, CIDER_UPDATE, 3, 7, 1);
	ASSERT_EQ(1U, r->f.posts);
	ASSERT_EQ(1U, r->f.nv);
	ASSERT_EQ(CIDER_V_READ, r->f.v[0].op);
	ASSERT_EQ(4096U + 3 * 8, r->f.v[0].addr);
	ASSERT_TRUE(states_are(r, "locate", "locate:pointer", ""));

	r->f.v[0].data[0] = old;
	complete(r);
	/* An empty slab: the write's allocation claims a chunk first. */
	ASSERT_EQ(2U, r->f.posts);
	ASSERT_EQ(CIDER_V_FAA, r->f.v[0].op);
	ASSERT_EQ(64U, r->f.v[0].addr);
	ASSERT_TRUE(states_are(r, "optimistic", "write:alloc", "alloc:chunk"));

	r->f.v[0].old = 0;
	complete(r);
	/* The block's WRITE and the pointer's CAS in one batch. */
	ASSERT_EQ(3U, r->f.posts);
	ASSERT_EQ(2U, r->f.nv);
	ASSERT_EQ(CIDER_V_WRITE, r->f.v[0].op);
	ASSERT_EQ(DATA_OFF, r->f.v[0].addr);
	ASSERT_EQ(CIDER_V_CAS, r->f.v[1].op);
	ASSERT_EQ(old, r->f.v[1].arg0);
	ASSERT_EQ(cider_word(1, DATA_OFF), r->f.v[1].arg1);
	ASSERT_TRUE(states_are(r, "optimistic", "write:cas", ""));

	r->f.v[1].old = old;
	complete(r);
	ASSERT_EQ(1U, r->f.dones);
	ASSERT_TRUE(r->f.last == &r->c);
	ASSERT_EQ(CIDER_RES_OK, r->c.res);
	ASSERT_EQ(1U, r->c.writer);
	ASSERT_FALSE(r->c.busy);
	free(r);
}

/*
 * PUT on the array: an absent key's empty word (version 5) is CASed to the
 * new block with its version kept, as INSERT would; a concurrent INSERT
 * that wins the word makes the PUT follow it, as UPDATE does, and it ends
 * OK, never EXISTS or NOTFOUND.
 */
TEST(array_put_installs_over_an_absent_key_and_follows_a_concurrent_insert)
{
	struct rig *r = rig_new(CIDER_MODE_OSYNC);
	u64 empty = cider_word(5, 0), theirs = cider_word(5, DATA_OFF + 4096);

	ASSERT_TRUE(r != NULL);
	start(r, CIDER_PUT, 3, 7, 1);
	r->f.v[0].data[0] = empty;
	complete(r);
	ASSERT_TRUE(states_are(r, "optimistic", "write:alloc", "alloc:chunk"));
	r->f.v[0].old = 0;
	complete(r);
	ASSERT_EQ(2U, r->f.nv);
	ASSERT_EQ(CIDER_V_WRITE, r->f.v[0].op);
	ASSERT_EQ(CIDER_V_CAS, r->f.v[1].op);
	ASSERT_EQ(empty, r->f.v[1].arg0);
	ASSERT_EQ(cider_word(5, DATA_OFF), r->f.v[1].arg1);

	r->f.v[1].old = theirs;		/* an INSERT got there first */
	complete(r);
	ASSERT_EQ(0U, r->f.dones);
	ASSERT_EQ(CIDER_V_CAS, r->f.v[r->f.nv - 1].op);
	ASSERT_EQ(theirs, r->f.v[r->f.nv - 1].arg0);
	ASSERT_EQ(cider_word(5, DATA_OFF), r->f.v[r->f.nv - 1].arg1);

	r->f.v[r->f.nv - 1].old = theirs;
	complete(r);
	ASSERT_EQ(1U, r->f.dones);
	ASSERT_EQ(CIDER_RES_OK, r->c.res);
	ASSERT_EQ(1U, r->c.writer);
	free(r);
}

/* An UPDATE of the same absent key ends NOTFOUND after its one READ. */
TEST(array_update_of_an_absent_key_is_notfound_where_put_writes)
{
	struct rig *r = rig_new(CIDER_MODE_OSYNC);

	ASSERT_TRUE(r != NULL);
	start(r, CIDER_UPDATE, 3, 7, 1);
	r->f.v[0].data[0] = cider_word(5, 0);
	complete(r);
	ASSERT_EQ(1U, r->f.posts);
	ASSERT_EQ(1U, r->f.dones);
	ASSERT_EQ(CIDER_RES_NOTFOUND, r->c.res);
	free(r);
}

TEST(queued_waiter_writes_its_entry_sleeps_and_is_woken_by_its_handover)
{
	struct rig *r = rig_new(CIDER_MODE_MCS);
	u64 ptr = cider_word(1, DATA_OFF + 4096), laddr = 8192 + 3 * 48, e;
	struct cider_msg m = { .type = CIDER_MSG_HANDOVER, .laddr = laddr };

	ASSERT_TRUE(r != NULL);
	start(r, CIDER_UPDATE, 3, 7, 1);
	r->f.v[0].data[0] = ptr;
	complete(r);
	/* Pessimistic: one FAA on the lock's header, never a CAS loop. */
	ASSERT_EQ(1U, r->f.nv);
	ASSERT_EQ(CIDER_V_FAA, r->f.v[0].op);
	ASSERT_EQ(laddr, r->f.v[0].addr);
	ASSERT_EQ(1U, r->f.v[0].arg0);
	ASSERT_TRUE(states_are(r, "acquire", "acquire:faa", ""));

	/* Two ahead (head 5, size 2): ticket 7, in the ring at 7 mod 4. */
	r->f.v[0].old = 5ULL << 32 | 2;
	complete(r);
	ASSERT_EQ(2U, r->f.nv);
	ASSERT_EQ(CIDER_V_WRITE, r->f.v[0].op);
	ASSERT_EQ(laddr + 16 + 8 * 3, r->f.v[0].addr);
	ASSERT_EQ(8U, r->f.v[0].len);
	e = r->f.v[0].data[0];
	ASSERT_TRUE(cider_lq_entry_for(e, 7));
	ASSERT_FALSE(cider_lq_entry_for(e, 3));
	ASSERT_FALSE(cider_lq_entry_del(e));
	ASSERT_EQ(1U, cider_lq_entry_ver(e));
	ASSERT_EQ(0U, cider_lq_entry_cn(e));
	ASSERT_EQ(cider_qid_slot(r->c.qn->id), cider_lq_entry_slot(e));
	/* ... and the header, after the entry: still not its turn. */
	ASSERT_EQ(CIDER_V_READ, r->f.v[1].op);
	ASSERT_EQ(laddr, r->f.v[1].addr);
	ASSERT_EQ(0U, r->f.sends);
	r->f.v[1].data[0] = 6ULL << 32 | 2;
	complete(r);
	ASSERT_EQ(1U, r->f.timers);
	ASSERT_EQ(r->cfg.lease_ns / 4, r->f.delay_ns);
	ASSERT_EQ(r->c.token, r->f.token);
	ASSERT_TRUE(r->c.parked);
	ASSERT_TRUE(states_are(r, "acquire", "acquire:wait", "wait:sleep"));
	ASSERT_STREQ("waiting", cider_qstate_name(r->c.qn->state));

	/* A handover for another ticket is dropped; its own wakes it, once. */
	m.to_slot = cider_qid_slot(r->c.qn->id);
	m.ticket = 6;
	m.ptr = ptr;
	cider_cn_on_msg(&r->cn, &m);
	ASSERT_EQ(0U, r->f.wakes);
	m.ticket = 7;
	cider_cn_on_msg(&r->cn, &m);
	ASSERT_EQ(1U, r->f.wakes);
	ASSERT_TRUE(r->f.last == &r->c);
	ASSERT_FALSE(r->c.parked);
	ASSERT_STREQ("granted", cider_qstate_name(r->c.qn->state));
	cider_cn_on_msg(&r->cn, &m);		/* a second one wakes nobody */
	ASSERT_EQ(1U, r->f.wakes);

	cider_client_resume(&r->c);
	ASSERT_TRUE(states_are(r, "hold_write", "write:alloc", "alloc:chunk"));
	free(r);
}

TEST(arguments_that_do_not_fit_the_array_end_at_once)
{
	struct rig *r = rig_new(CIDER_MODE_CIDER);
	struct cider_kv_args a = { .op = CIDER_UPDATE, .key = r->key, .key_len = 8,
				   .value = r->val, .value_len = 8 };

	ASSERT_TRUE(r != NULL);
	start(r, CIDER_SEARCH, 16, 0, 1);		/* index == nr_keys */
	ASSERT_EQ(CIDER_RES_INVALID, r->c.res);
	ASSERT_EQ(1U, r->f.dones);
	a.key_len = 4;					/* the array's keys are 8 bytes */
	cider_client_start(&r->c, &a);
	ASSERT_EQ(CIDER_RES_INVALID, r->c.res);
	a.key_len = 8;
	a.value_len = 9;				/* and its values */
	cider_client_start(&r->c, &a);
	ASSERT_EQ(CIDER_RES_INVALID, r->c.res);
	a.op = 7;
	a.value_len = 8;
	cider_client_start(&r->c, &a);
	ASSERT_EQ(CIDER_RES_INVALID, r->c.res);
	ASSERT_EQ(4U, r->f.dones);
	ASSERT_EQ(0U, r->f.posts);			/* nothing was sent */
	ASSERT_FALSE(r->c.busy);
	free(r);
}

TEST(array_search_returns_the_value_bytes)
{
	struct rig *r = rig_new(CIDER_MODE_CIDER);
	u64 ptr = cider_word(0, DATA_OFF);

	ASSERT_TRUE(r != NULL);
	start(r, CIDER_SEARCH, 5, 0, 1);
	r->f.v[0].data[0] = ptr;
	complete(r);
	ASSERT_EQ(CIDER_V_READ, r->f.v[0].op);
	ASSERT_EQ(DATA_OFF, r->f.v[0].addr);
	r->f.v[0].data[0] = 5;				/* the block: key, value */
	r->f.v[0].data[1] = 0x1122334455667788ULL;
	complete(r);
	ASSERT_EQ(CIDER_RES_OK, r->c.res);
	ASSERT_EQ(8U, r->c.got_len);
	ASSERT_EQ(0x88, r->out[0]);
	ASSERT_EQ(0x11, r->out[7]);
	free(r);
}

/* A verb that fails before the pointer's CAS: the operation did not happen. */
TEST(a_failed_read_ends_the_operation_as_not_done)
{
	struct rig *r = rig_new(CIDER_MODE_OSYNC);

	ASSERT_TRUE(r != NULL);
	start(r, CIDER_UPDATE, 3, 7, 1);
	r->f.v[0].status = -5;
	complete(r);
	ASSERT_EQ(CIDER_RES_FAILED, r->c.res);
	ASSERT_EQ(1U, r->f.dones);
	ASSERT_EQ(1U, r->f.posts);
	ASSERT_TRUE(r->c.dead);
	ASSERT_FALSE(r->c.busy);
	free(r);
}

/*
 * A client whose operation a failed verb ended (its node reconnected
 * since) is revived: its next operation runs, not the old batch's
 * failure again.
 */
TEST(a_revived_client_after_a_failed_verb_runs_its_next_operation)
{
	struct rig *r = rig_new(CIDER_MODE_OSYNC);
	u32 posts;

	ASSERT_TRUE(r != NULL);
	start(r, CIDER_UPDATE, 3, 7, 1);
	r->f.v[0].status = -107;
	complete(r);
	ASSERT_EQ(CIDER_RES_FAILED, r->c.res);
	ASSERT_TRUE(cider_client_revive(&r->c));
	posts = r->f.posts;
	start(r, CIDER_SEARCH, 3, 0, 2);
	ASSERT_EQ(posts + 1, r->f.posts);	/* its first READ, not an abort */
	ASSERT_TRUE(r->c.busy);
	ASSERT_FALSE(r->c.dead);
	free(r);
}

/* The CAS on the pointer was posted and its batch failed: outcome unknown. */
TEST(a_failed_pointer_cas_ends_the_operation_as_unknown)
{
	struct rig *r = rig_new(CIDER_MODE_OSYNC);

	ASSERT_TRUE(r != NULL);
	start(r, CIDER_UPDATE, 3, 7, 1);
	r->f.v[0].data[0] = cider_word(1, DATA_OFF + 4096);
	complete(r);
	r->f.v[0].old = 0;				/* the chunk */
	complete(r);
	ASSERT_EQ(CIDER_V_CAS, r->f.v[1].op);
	r->f.v[1].status = -103;
	complete(r);
	ASSERT_EQ(CIDER_RES_UNKNOWN, r->c.res);
	ASSERT_EQ(1U, r->f.dones);
	free(r);
}

/* An mcs UPDATE of key 3 queued with ticket 10, one ahead, parked. */
static void queue_behind_one(struct rig *r)
{
	start(r, CIDER_UPDATE, 3, 7, 1);
	r->f.v[0].data[0] = cider_word(1, DATA_OFF + 4096);
	complete(r);
	r->f.v[0].old = 9ULL << 32 | 1;		/* ticket 10, one ahead */
	complete(r);
	r->f.v[1].data[0] = 9ULL << 32 | 2;	/* its entry written: not its turn yet */
	complete(r);
}

/* The fabric gives up on a parked operation: in a lock queue it may have happened. */
TEST(an_aborted_queued_update_is_unknown)
{
	struct rig *r = rig_new(CIDER_MODE_MCS);

	ASSERT_TRUE(r != NULL);
	queue_behind_one(r);
	ASSERT_EQ(CIDER_V_WRITE, r->f.v[0].op);	/* its entry, and the header */
	ASSERT_TRUE(r->c.parked);
	cider_client_abort(&r->c);
	ASSERT_EQ(CIDER_RES_UNKNOWN, r->c.res);
	ASSERT_EQ(1U, r->f.dones);
	cider_client_abort(&r->c);			/* once only */
	ASSERT_EQ(1U, r->f.dones);
	free(r);
}

/* A member of an open local batch that ends early may still be written. */
TEST(an_aborted_member_of_an_open_local_batch_is_unknown)
{
	struct rig *r = rig_new(CIDER_MODE_CIDER);

	ASSERT_TRUE(r != NULL);
	start(r, CIDER_UPDATE, 3, 7, 1);
	r->lwc[0] = (struct cider_lwc){ .key = r->c.key + 1, .combiner = 5, .open = true,
					.cur = 1, .val = r->val };
	r->c.lw = &r->lwc[0];
	r->c.lw_member = true;
	cider_client_abort(&r->c);
	ASSERT_EQ(CIDER_RES_UNKNOWN, r->c.res);
	free(r);
}

/* An aborted waiter, revived: its old queue node is gone, it runs again. */
TEST(a_revived_client_drops_its_old_queue_node_and_runs_again)
{
	struct rig *r = rig_new(CIDER_MODE_MCS);
	struct cider_msg m = { .type = CIDER_MSG_HANDOVER, .laddr = 8192 + 3 * 48, .ticket = 10 };
	u32 posts;

	ASSERT_TRUE(r != NULL);
	queue_behind_one(r);
	ASSERT_TRUE(r->c.parked);
	m.to_slot = cider_qid_slot(r->c.qn->id);
	cider_client_abort(&r->c);
	ASSERT_TRUE(r->c.dead);
	ASSERT_TRUE(r->c.qn != NULL);		/* the crash leaves it queued */

	ASSERT_TRUE(cider_client_revive(&r->c));
	ASSERT_FALSE(r->c.dead);
	ASSERT_TRUE(r->c.qn == NULL);
	ASSERT_EQ(0U, r->cn.q[m.to_slot].id);
	/* The old ticket's handover finds nobody: dropped, nobody woken. */
	cider_cn_on_msg(&r->cn, &m);
	ASSERT_EQ(0U, r->f.wakes);
	ASSERT_EQ(1U, r->cn.msgs_dropped);

	posts = r->f.posts;
	start(r, CIDER_SEARCH, 3, 0, 2);
	ASSERT_EQ(posts + 1, r->f.posts);	/* the new incarnation's first READ */
	ASSERT_TRUE(r->c.busy);
	free(r);
}

/* A dead member comes back only once its batch's combiner settled it. */
TEST(a_dead_member_of_a_local_batch_is_revived_only_once_settled)
{
	struct rig *r = rig_new(CIDER_MODE_CIDER);

	ASSERT_TRUE(r != NULL);
	r->c.dead = true;
	r->lwc[0] = (struct cider_lwc){ .key = 4, .combiner = 5, .open = true, .cur = 1 };
	ASSERT_FALSE(cider_client_revive(&r->c));
	ASSERT_TRUE(r->c.dead);
	r->lwc[0].cur = 0;
	r->lwc[0].next = 1;
	ASSERT_FALSE(cider_client_revive(&r->c));
	r->lwc[0].next = 0;
	r->lwc[0].combiner = 0;			/* its own batch */
	ASSERT_FALSE(cider_client_revive(&r->c));
	/* Dropped from the batch, but the next one still writes its value. */
	r->c.val = r->val;
	r->lwc[0].combiner = 5;
	r->lwc[0].next_val = r->val;
	ASSERT_FALSE(cider_client_revive(&r->c));
	r->lwc[0].key = 0;			/* settled: the entry is free */
	ASSERT_TRUE(cider_client_revive(&r->c));
	ASSERT_FALSE(r->c.dead);
	free(r);
}

TEST(a_waiter_whose_turn_came_before_its_entry_takes_the_lock_itself)
{
	struct rig *r = rig_new(CIDER_MODE_MCS);
	u64 ptr = cider_word(1, DATA_OFF + 4096);

	ASSERT_TRUE(r != NULL);
	start(r, CIDER_UPDATE, 3, 7, 1);
	r->f.v[0].data[0] = ptr;
	complete(r);
	r->f.v[0].old = 9ULL << 32 | 1;		/* ticket 10, one ahead */
	complete(r);
	ASSERT_EQ(CIDER_V_WRITE, r->f.v[0].op);
	/* The releaser FAAed before this READ: it read the entry too early. */
	r->f.v[1].data[0] = 10ULL << 32 | 1;
	complete(r);
	ASSERT_EQ(0U, r->f.timers);
	ASSERT_TRUE(states_are(r, "hold_write", "write:alloc", "alloc:chunk"));
	free(r);
}

TEST(a_full_ring_makes_the_waiter_poll_for_room_before_its_entry)
{
	struct rig *r = rig_new(CIDER_MODE_MCS);
	u64 ptr = cider_word(1, DATA_OFF + 4096);

	ASSERT_TRUE(r != NULL);
	start(r, CIDER_UPDATE, 3, 7, 1);
	r->f.v[0].data[0] = ptr;
	complete(r);
	r->f.v[0].old = 20ULL << 32 | 5;	/* ticket 25: 5 ahead, ring of 4 */
	complete(r);
	ASSERT_EQ(1U, r->f.timers);
	ASSERT_EQ(2 * r->cfg.backoff_t0_ns, r->f.delay_ns);
	ASSERT_TRUE(states_are(r, "acquire", "acquire:full", "wait:sleep"));
	cider_client_timer(&r->c, r->f.token);
	ASSERT_EQ(CIDER_V_READ, r->f.v[0].op);
	ASSERT_TRUE(states_are(r, "acquire", "acquire:full", "wait:poll"));
	r->f.v[0].data[0] = 22ULL << 32 | 5;	/* 3 ahead now: room */
	complete(r);
	ASSERT_EQ(CIDER_V_WRITE, r->f.v[0].op);
	ASSERT_TRUE(cider_lq_entry_for(r->f.v[0].data[0], 25));
	ASSERT_TRUE(states_are(r, "acquire", "acquire:entry", ""));
	free(r);
}

/*
 * A cider UPDATE that waited for the lock (ticket 6) coordinates: it READs
 * the lock's record and the pointer, and returns with the verbs posted.
 */
/*
 * A cider @op on hot key 3 that READs @ptr, queues behind @ahead tickets
 * from @head, and is woken by message @m (to its qnode).
 */
static struct rig *queued(u8 op, u64 ptr, u32 head, u32 ahead, struct cider_msg *m)
{
	struct rig *r = rig_new(CIDER_MODE_CIDER);

	if (!r)
		return NULL;
	r->cfg.initial_credit = 36;
	cider_cont_escalated(&r->cn, 3);	/* the key is hot: pessimistic */
	start(r, op, 3, 7, 1);
	r->f.v[0].data[0] = ptr;
	complete(r);
	r->f.v[0].old = (u64)head << 32 | ahead;	/* ticket head + ahead */
	complete(r);
	r->f.v[1].data[0] = (u64)head << 32 | (ahead + 1);
	complete(r);
	m->to_slot = cider_qid_slot(r->c.qn->id);
	cider_cn_on_msg(&r->cn, m);
	cider_client_resume(&r->c);
	return r;
}

static struct rig *coordinator(u64 ptr)
{
	struct cider_msg m = { .type = CIDER_MSG_HANDOVER, .laddr = 8192 + 3 * 48, .ticket = 6,
			       .ptr = ptr };

	return queued(CIDER_UPDATE, ptr, 5, 1, &m);	/* ticket 6 */
}

/* The ring as the coordinator's READ returns it: tickets 6..6+n-1. */
static void ring(struct rig *r, u64 ptr, u32 n, const u64 *entries)
{
	u32 i;

	r->c.lq_ring[0] = 6ULL << 32 | n;
	for (i = 1; i < n; i++)
		r->c.lq_ring[2 + ((6 + i) & 3)] = entries[i - 1];
	r->f.v[1].data[0] = ptr;
	complete(r);
}

TEST(the_coordinator_lends_the_lock_to_the_last_member_that_read_its_version)
{
	u64 ptr = cider_word(1, DATA_OFF + 4096);
	struct rig *r = coordinator(ptr);
	u64 e[3] = {
		cider_lq_entry(7, false, 1, 1, 3),
		cider_lq_entry(8, false, 1, 1, 4),
		cider_lq_entry(9, false, 2, 1, 5),	/* read before a DELETE */
	};

	ASSERT_TRUE(r != NULL);
	ASSERT_TRUE(states_are(r, "coord", "coord:read", ""));
	ASSERT_EQ(2U, r->f.nv);
	ASSERT_EQ(CIDER_V_READ, r->f.v[0].op);
	ASSERT_EQ(r->cfg.lock_rec, r->f.v[0].len);
	ASSERT_EQ(4096U + 3 * 8, r->f.v[1].addr);
	ring(r, ptr, 4, e);
	/* Tickets 7 and 8 combine; 9 read another version: 8 executes. */
	ASSERT_EQ(1U, r->f.sends);
	ASSERT_EQ(CIDER_MSG_EXEC, r->f.msg.type);
	ASSERT_EQ(8U, r->f.msg.ticket);
	ASSERT_EQ(4U, r->f.msg.to_slot);
	ASSERT_EQ(1U, r->f.to_cn);
	ASSERT_EQ(3U, r->f.msg.count);	/* it releases 6, 7 and 8 */
	ASSERT_EQ(ptr, r->f.msg.ptr);
	ASSERT_TRUE(states_are(r, "coord", "coord:wait", "wait:sleep"));
	free(r);
}

TEST(a_delete_ends_the_batch)
{
	u64 ptr = cider_word(1, DATA_OFF + 4096);
	struct rig *r = coordinator(ptr);
	u64 e[2] = { cider_lq_entry(7, true, 1, 1, 3), cider_lq_entry(8, false, 1, 1, 4) };

	ASSERT_TRUE(r != NULL);
	ring(r, ptr, 3, e);
	/* Nobody to combine with: the coordinator writes alone. */
	ASSERT_EQ(0U, r->f.sends);
	ASSERT_TRUE(states_are(r, "hold_write", "write:alloc", "alloc:chunk"));
	free(r);
}

TEST(a_coordinator_whose_key_is_gone_combines_nobody)
{
	u64 ptr = cider_word(1, DATA_OFF + 4096);
	struct rig *r = coordinator(ptr);
	u64 e[1] = { cider_lq_entry(7, false, 2, 1, 3) };

	ASSERT_TRUE(r != NULL);
	ring(r, cider_word(2, 0), 2, e);	/* deleted meanwhile */
	ASSERT_EQ(0U, r->f.sends);
	ASSERT_FALSE(states_are(r, "coord", "coord:wait", "wait:sleep"));
	free(r);
}

/*
 * An executor lent a batch of 3 finds the key gone (possible only after a
 * lock reset let a DELETE in): the members may be UPDATEs or PUTs, to
 * which absent means different things, so it writes nothing and reports
 * "start over" to the coordinator.
 */
TEST(an_executor_that_finds_its_batch_key_gone_has_everyone_start_over)
{
	u64 ptr = cider_word(1, DATA_OFF + 4096), gone = cider_word(2, 0);
	struct cider_msg m = { .type = CIDER_MSG_EXEC, .laddr = 8192 + 3 * 48, .ticket = 8,
			       .from_cn = 1, .from_slot = 2, .from_ticket = 6, .count = 3,
			       .ptr = gone };
	struct rig *r = queued(CIDER_PUT, ptr, 6, 2, &m);	/* ticket 8 */

	ASSERT_TRUE(r != NULL);
	ASSERT_TRUE(states_are(r, "exec_write", "write:alloc", "alloc:chunk"));
	r->f.v[0].old = 0;
	complete(r);
	/* The pointer the coordinator sent is a hint of "absent": read it. */
	ASSERT_TRUE(states_are(r, "exec_write", "write:hint", ""));
	r->f.v[0].data[0] = gone;
	r->f.sends = 0;
	complete(r);
	ASSERT_EQ(1U, r->f.sends);
	ASSERT_EQ(CIDER_MSG_EXEC_DONE, r->f.msg.type);
	ASSERT_EQ(CIDER_RES_NONE, r->f.msg.result);
	ASSERT_TRUE(states_are(r, "exec_release", "release:posted", ""));
	ASSERT_EQ(CIDER_V_FAA, r->f.v[0].op);
	free(r);
}

TEST(every_operation_state_has_its_own_name)
{
	struct cider_client c = { 0 };
	const char *names[CIDER_OP_NR_STATES];
	u32 i, j;

	for (i = 0; i < CIDER_OP_NR_STATES; i++) {
		c.state = (u8)i;
		names[i] = cider_client_state_name(&c);
		ASSERT_TRUE(names[i] && *names[i] && strcmp(names[i], "?"));
		for (j = 0; j < i; j++)
			ASSERT_STRNE(names[j], names[i]);
	}
	c.state = CIDER_OP_NR_STATES;
	ASSERT_STREQ("?", cider_client_state_name(&c));
}

/* A hash rig: 4 buckets from 4096, INSERT locks at 8192, locks after them. */
static struct rig *hash_rig(u8 mode, u8 *blk, const char *key)
{
	struct rig *r = rig_new(mode);

	if (!r)
		return NULL;
	r->cfg.index = CIDER_INDEX_HASH;
	r->cfg.nr_buckets = 4;
	r->cfg.bucket_off = 4096;
	r->cfg.ilock_off = 8192;
	r->cfg.lock_off = 16384;
	r->c.buf = blk;
	r->c.buf_len = 64;
	memcpy(r->key, key, 8);
	return r;
}

/* The bucket READs are out: slot 0 of the first bucket holds @slot. */
static void buckets_hold(struct rig *r, u64 slot)
{
	memset(r->f.v[0].data, 0, sizeof(r->f.v[0].data));
	memset(r->f.v[1].data, 0, sizeof(r->f.v[1].data));
	r->f.v[0].data[0] = slot;
	complete(r);
}

/*
 * A hash SEARCH whose only candidate block fails its checks, read within
 * the reclamation rule: the block is corrupt (it reads the same every
 * time), so the search skips it and ends NOTFOUND, counting it, instead
 * of reading the buckets again forever.
 */
TEST(hash_search_skips_a_corrupt_block_instead_of_looking_again)
{
	u8 *blk = calloc(1, 64);
	struct rig *r = hash_rig(CIDER_MODE_OSYNC, blk, "corrupt!");
	struct cider_hash_loc loc;
	struct cider_kv_args a = {
		.op = CIDER_SEARCH, .key_len = 8, .out_len = 8, .opid = 1,
	};

	ASSERT_TRUE(r != NULL && blk != NULL);
	a.key = r->key;
	a.out = r->out;
	cider_client_start(&r->c, &a);
	ASSERT_EQ(1U, r->f.posts);
	ASSERT_EQ(2U, r->f.nv);			/* the key's two buckets */
	ASSERT_TRUE(states_are(r, "locate", "locate:buckets", ""));

	cider_hash_locate(r->key, 8, r->cfg.nr_buckets, &loc);
	buckets_hold(r, cider_slot_make(loc.fp, 0, 1, DATA_OFF));
	ASSERT_EQ(2U, r->f.posts);		/* the candidate's block */
	ASSERT_EQ(CIDER_V_READ, r->f.v[0].op);
	ASSERT_EQ(DATA_OFF, r->f.v[0].addr);
	ASSERT_TRUE(states_are(r, "locate", "locate:block", ""));

	memset(blk, 0xab, 64);			/* lengths and CRC do not add up */
	complete(r);
	ASSERT_EQ(2U, r->f.posts) TH_LOG("the corrupt block sent the search round again");
	ASSERT_EQ(1U, r->f.dones);
	ASSERT_EQ(CIDER_RES_NOTFOUND, r->c.res);
	ASSERT_EQ(1U, r->c.st.corrupt);
	free(blk);
	free(r);
}

/*
 * Drive a DELETE of r->key (slot 0 of its first bucket, version 1) to its
 * lock, granted at once, and to a CAS that finds the slot at @v2: the key
 * was deleted and inserted again since it was located.  Returns the
 * lock's address, or 0 if a step went elsewhere.
 */
static u64 delete_finds_its_slot_changed(struct rig *r, u8 *blk, u64 v2)
{
	struct cider_kv_args a = {
		.op = CIDER_DELETE, .key = r->key, .key_len = 8, .opid = 1,
	};
	u64 v1 = cider_slot_make(cider_slot_fp(v2), 0, 1, DATA_OFF), laddr;

	if (cider_block_encode(blk, 1, r->key, 8, "v", 1) < 0)
		return 0;
	cider_client_start(&r->c, &a);
	buckets_hold(r, v1);
	complete(r);				/* its block: found */
	if (!states_are(r, "acquire", "acquire:faa", ""))
		return 0;
	laddr = r->f.v[0].addr;
	r->f.v[0].old = 0;			/* nobody queued: granted */
	complete(r);
	if (!states_are(r, "hold_write", "write:cas", "") || r->f.v[0].arg0 != v1)
		return 0;
	r->f.v[0].old = v2;
	complete(r);
	return laddr;
}

/* The slot word the key "hot-key!" has after a DELETE and an INSERT. */
static u64 hot_key_reinserted(const struct rig *r)
{
	struct cider_hash_loc loc;

	cider_hash_locate(r->key, 8, r->cfg.nr_buckets, &loc);
	return cider_slot_make(loc.fp, 0, 2, DATA_OFF + 64);
}

/* A DELETE of "hot-key!" holding its slot's lock, the slot changed under it. */
FIXTURE(held) {
	u8 *blk;
	struct rig *r;
	u64 v2;		/* the key's slot word now */
	u64 laddr;	/* the lock it holds */
};

FIXTURE_SETUP(held)
{
	self->blk = calloc(1, 64);
	self->r = hash_rig(CIDER_MODE_MCS, self->blk, "hot-key!");
	ASSERT_TRUE(self->r != NULL && self->blk != NULL);
	self->v2 = hot_key_reinserted(self->r);
	self->laddr = delete_finds_its_slot_changed(self->r, self->blk, self->v2);
	ASSERT_NE(0U, self->laddr);
}

FIXTURE_TEARDOWN(held)
{
	free(self->blk);
	free(self->r);
}

/*
 * A DELETE granted the lock of the slot it located finds the slot changed.
 * It locates the key again while holding the lock, finds it in the same
 * slot, and deletes it: it does not release and queue again (a DELETE of
 * a hot key starved for seconds that way in the soak).
 */
TEST_F(held, a_holder_whose_slot_changed_looks_again_under_the_lock)
{
	struct rig *r = self->r;
	u64 v2 = self->v2;

	ASSERT_TRUE(states_are(r, "hold_locate", "locate:buckets", "")) {
		TH_LOG("after the changed slot: %s > %s", cider_client_state_name(&r->c),
		       cider_client_sub_state_name(&r->c));
	}
	ASSERT_EQ(0U, r->f.sends);
	buckets_hold(r, v2);
	ASSERT_EQ(DATA_OFF + 64, r->f.v[0].addr);
	complete(r);				/* the same key's block: here */
	ASSERT_TRUE(states_are(r, "hold_write", "write:cas", ""));
	ASSERT_EQ(v2, r->f.v[0].arg0);
	ASSERT_EQ(3U, cider_slot_ver(r->f.v[0].arg1));
	ASSERT_EQ(0U, cider_slot_off(r->f.v[0].arg1));

	r->f.v[0].old = v2;
	complete(r);
	ASSERT_TRUE(states_are(r, "hold_release", "release:posted", ""));
	ASSERT_EQ(CIDER_V_FAA, r->f.v[0].op);
	ASSERT_EQ(self->laddr, r->f.v[0].addr);
	r->f.v[0].old = 1;			/* head 0, size 1: itself only */
	complete(r);
	ASSERT_EQ(1U, r->f.dones);
	ASSERT_EQ(CIDER_RES_OK, r->c.res);
}

/*
 * The same, but the key moved to another slot: the held lock (not the new
 * slot's) is released, and the DELETE starts over on the new slot's lock.
 */
TEST_F(held, a_holder_whose_key_moved_releases_its_own_lock_and_starts_over)
{
	struct rig *r = self->r;
	u64 v2 = self->v2;

	ASSERT_TRUE(states_are(r, "hold_locate", "locate:buckets", ""));
	/* Now in slot 1 of the first bucket; slot 0 is empty. */
	memset(r->f.v[0].data, 0, sizeof(r->f.v[0].data));
	memset(r->f.v[1].data, 0, sizeof(r->f.v[1].data));
	r->f.v[0].data[1] = v2;
	complete(r);
	complete(r);				/* its block */
	ASSERT_TRUE(states_are(r, "hold_release", "release:posted", ""));
	ASSERT_EQ(CIDER_V_FAA, r->f.v[0].op);
	ASSERT_EQ(self->laddr, r->f.v[0].addr);
	r->f.v[0].old = 1;
	complete(r);
	ASSERT_EQ(0U, r->f.dones);
	ASSERT_TRUE(states_are(r, "locate", "locate:buckets", ""));
}

/* ---- the CN cache (cache.c): leases in the data pointer's word ---- */

#define LEASE_NS 20000
#define MARGIN_NS 1000

static struct rig *cache_rig(u8 mode)
{
	struct rig *r = rig_new(mode);

	if (!r)
		return NULL;
	r->cfg.cache = true;
	r->cfg.cache_lease_ns = LEASE_NS;
	r->cfg.cache_margin_ns = MARGIN_NS;
	r->cfg.cache_hot = 2;
	cider_cache_init(&r->cn.cache, r->cent, r->croom, 16, 8);
	return r;
}

/* One SEARCH of key 5 that READs the pointer (@ptr) and the block (@val). */
static void search_reads(struct rig *r, u64 ptr, u64 val, u32 opid)
{
	start(r, CIDER_SEARCH, 5, 0, opid);
	r->f.v[0].data[0] = ptr;
	complete(r);
	r->f.v[0].data[0] = 5;
	r->f.v[0].data[1] = val;
	complete(r);
}

/* Two SEARCHes of key 5 finding @ptr: the second posts the lease's CAS. */
static int lease_posted(struct rig *r, u64 ptr)
{
	search_reads(r, ptr, 77, 1);
	search_reads(r, ptr, 77, 2);
	return r->f.dones == 1 && r->f.v[0].op == CIDER_V_CAS &&
	       r->f.v[0].addr == 4096U + 5 * 8 && r->f.v[0].arg0 == ptr &&
	       r->f.v[0].arg1 == (ptr | CIDER_WORD_LEASED);
}

/*
 * A key read twice with its word unchanged is leased: the second SEARCH
 * CASes the LEASED bit in, and SEARCHes within the lease post nothing.
 */
TEST(a_hot_key_is_leased_then_answered_without_a_verb)
{
	struct rig *r = cache_rig(CIDER_MODE_CIDER);
	u64 ptr = cider_word(2, DATA_OFF);
	u32 posts;

	ASSERT_TRUE(r != NULL);
	ASSERT_TRUE(lease_posted(r, ptr));
	r->f.v[0].old = ptr;
	complete(r);
	ASSERT_EQ(2U, r->f.dones);
	ASSERT_EQ(CIDER_RES_OK, r->c.res);
	posts = r->f.posts;
	r->f.now += LEASE_NS - 1;
	start(r, CIDER_SEARCH, 5, 0, 3);
	ASSERT_EQ(3U, r->f.dones);
	ASSERT_EQ(posts, r->f.posts);
	ASSERT_EQ(77U, r->c.got);
	ASSERT_EQ(1U, r->c.st.cache_hits);
	/* Past the lease: READ the pointer again; the same leased word renews it. */
	r->f.now += 2;
	start(r, CIDER_SEARCH, 5, 0, 4);
	ASSERT_EQ(posts + 1, r->f.posts);
	r->f.v[0].data[0] = ptr | CIDER_WORD_LEASED;
	complete(r);
	ASSERT_EQ(4U, r->f.dones);
	ASSERT_EQ(posts + 1, r->f.posts);		/* no block READ */
	ASSERT_EQ(77U, r->c.got);
	ASSERT_EQ(1U, r->c.st.cache_refreshes);
	free(r);
}

/*
 * A lease's CAS that completes past the reclamation rule may have found
 * the word again on a reused block: the bit is set, the bytes not kept.
 */
TEST(a_late_lease_cas_keeps_no_right)
{
	struct rig *r = cache_rig(CIDER_MODE_CIDER);
	u64 ptr = cider_word(2, DATA_OFF);
	u32 posts;

	ASSERT_TRUE(r != NULL);
	ASSERT_TRUE(lease_posted(r, ptr));
	r->f.v[0].old = ptr;
	r->f.now += r->cfg.grace_ns / 2 + 1;
	complete(r);
	ASSERT_EQ(2U, r->f.dones);
	ASSERT_EQ(1U, r->c.st.cache_marks);
	ASSERT_EQ(0U, r->c.st.cache_fills);
	posts = r->f.posts;
	start(r, CIDER_SEARCH, 5, 0, 3);
	ASSERT_EQ(posts + 1, r->f.posts);		/* READs the pointer */
	ASSERT_EQ(0U, r->c.st.cache_hits);
	free(r);
}

/*
 * The cache turned off while a lease's CAS is out (cider.ko does so as its
 * node leaves the store): the CAS's completion keeps nothing and looks
 * nothing up in the emptied table.
 */
TEST(a_lease_cas_that_completes_after_the_cache_is_off_keeps_nothing)
{
	struct rig *r = cache_rig(CIDER_MODE_CIDER);
	u64 ptr = cider_word(2, DATA_OFF);

	ASSERT_TRUE(r != NULL);
	ASSERT_TRUE(lease_posted(r, ptr));
	r->cn.cache.nr = 0;
	r->f.v[0].old = ptr;
	complete(r);
	ASSERT_EQ(2U, r->f.dones);
	ASSERT_EQ(0U, r->c.st.cache_fills);
	free(r);
}

/*
 * An UPDATE of a leased word: CAS the WAITING bit in, sleep a lease and
 * the margin, then CAS from the word waited on to the new block with the
 * version advanced.
 */
TEST(a_write_of_a_leased_word_stops_leases_waits_and_advances_the_version)
{
	struct rig *r = cache_rig(CIDER_MODE_OSYNC);
	u64 ptr = cider_word(1, DATA_OFF + 4096) | CIDER_WORD_LEASED;

	ASSERT_TRUE(r != NULL);
	start(r, CIDER_UPDATE, 3, 7, 1);
	r->f.v[0].data[0] = ptr;
	complete(r);
	r->f.v[0].old = 0;			/* the chunk's FAA */
	complete(r);
	ASSERT_EQ(1U, r->f.nv);
	ASSERT_EQ(CIDER_V_CAS, r->f.v[0].op);
	ASSERT_EQ(ptr, r->f.v[0].arg0);
	ASSERT_EQ(ptr | CIDER_WORD_WAITING, r->f.v[0].arg1);
	ASSERT_TRUE(states_are(r, "optimistic", "write:revoke", ""));
	r->f.v[0].old = ptr;
	complete(r);
	ASSERT_EQ(1U, r->f.timers);
	ASSERT_EQ((u64)LEASE_NS + MARGIN_NS, r->f.delay_ns);
	ASSERT_TRUE(states_are(r, "optimistic", "write:lease", ""));
	/* Woken early (a message): it sleeps the rest. */
	r->f.now += 5000;
	cider_client_timer(&r->c, r->f.token);
	ASSERT_EQ(2U, r->f.timers);
	ASSERT_EQ((u64)LEASE_NS + MARGIN_NS - 5000, r->f.delay_ns);
	r->f.now += LEASE_NS + MARGIN_NS - 5000;
	cider_client_timer(&r->c, r->f.token);
	ASSERT_EQ(2U, r->f.nv);
	ASSERT_EQ(CIDER_V_WRITE, r->f.v[0].op);
	ASSERT_EQ(CIDER_V_CAS, r->f.v[1].op);
	ASSERT_EQ(ptr | CIDER_WORD_WAITING, r->f.v[1].arg0);
	ASSERT_EQ(cider_word(2, DATA_OFF), r->f.v[1].arg1);
	r->f.v[1].old = r->f.v[1].arg0;
	complete(r);
	ASSERT_EQ(1U, r->f.dones);
	ASSERT_EQ(CIDER_RES_OK, r->c.res);
	ASSERT_EQ(1U, r->c.st.lease_revokes);
	free(r);
}

/*
 * The writer's INVAL goes to every other CN; it goes on when all have
 * answered, long before the lease ends, and not before.
 */
TEST(a_writer_goes_on_once_every_cn_answered_its_inval)
{
	struct rig *r = cache_rig(CIDER_MODE_OSYNC);
	u64 ptr = cider_word(1, DATA_OFF + 4096) | CIDER_WORD_LEASED | CIDER_WORD_WAITING;
	struct cider_msg ack;

	ASSERT_TRUE(r != NULL);
	r->cfg.nr_cns = 3;
	start(r, CIDER_UPDATE, 3, 7, 1);
	r->f.v[0].data[0] = ptr;
	complete(r);
	r->f.v[0].old = 0;
	complete(r);
	ASSERT_TRUE(states_are(r, "optimistic", "write:lease", ""));
	ASSERT_EQ(2U, r->f.sends);			/* to CNs 1 and 2 */
	ASSERT_EQ(CIDER_MSG_INVAL, r->f.msg.type);
	ASSERT_EQ(3U, r->f.msg.ptr);			/* names the key */
	ack = (struct cider_msg) {
		.type = CIDER_MSG_INVAL_ACK, .to_slot = 0, .ticket = r->f.msg.from_ticket,
		.from_cn = 1,
	};
	cider_cn_on_msg(&r->cn, &ack);
	ASSERT_EQ(0U, r->f.wakes);			/* one of two */
	ack.ticket--;					/* a stale answer counts for nothing */
	cider_cn_on_msg(&r->cn, &ack);
	ASSERT_EQ(0U, r->f.wakes);
	ack.ticket++;
	ack.from_cn = 2;
	cider_cn_on_msg(&r->cn, &ack);
	ASSERT_EQ(1U, r->f.wakes);
	r->f.now += 3000;				/* far from the lease's end */
	cider_client_resume(&r->c);
	ASSERT_EQ(CIDER_V_CAS, r->f.v[1].op);
	ASSERT_EQ(ptr, r->f.v[1].arg0);
	free(r);
}

/*
 * A CN that receives an INVAL drops its right and answers, and takes no
 * right from a READ posted before it arrived.
 */
TEST(an_inval_drops_the_right_and_the_reads_already_out)
{
	struct rig *r = cache_rig(CIDER_MODE_CIDER);
	u64 ptr = cider_word(2, DATA_OFF) | CIDER_WORD_LEASED;
	struct cider_msg inval = {
		.type = CIDER_MSG_INVAL, .ptr = 5, .from_cn = 1, .from_slot = 3, .from_ticket = 9,
	};
	u32 posts;

	ASSERT_TRUE(r != NULL);
	search_reads(r, ptr, 77, 1);			/* a right, from a leased word */
	ASSERT_EQ(1U, r->c.st.cache_fills);
	cider_cn_on_msg(&r->cn, &inval);
	ASSERT_EQ(1U, r->f.sends);
	ASSERT_EQ(CIDER_MSG_INVAL_ACK, r->f.msg.type);
	ASSERT_EQ(1U, r->f.to_cn);
	ASSERT_EQ(3U, r->f.msg.to_slot);
	ASSERT_EQ(9U, r->f.msg.ticket);
	posts = r->f.posts;
	start(r, CIDER_SEARCH, 5, 0, 2);		/* no right: READs */
	ASSERT_EQ(posts + 1, r->f.posts);
	/* This READ was posted as the INVAL arrived: it starts no right. */
	r->f.v[0].data[0] = ptr;
	complete(r);
	r->f.v[0].data[0] = 5;
	r->f.v[0].data[1] = 77;
	complete(r);
	ASSERT_EQ(1U, r->c.st.cache_fills);
	r->f.now++;
	search_reads(r, ptr, 77, 3);			/* a later READ does */
	ASSERT_EQ(2U, r->c.st.cache_fills);
	free(r);
}

/*
 * A CN new to a store takes no right until its hold ends (the writers'
 * membership views know it by then), and an INVAL meanwhile does not
 * shorten the hold.
 */
TEST(a_held_cn_takes_no_right_until_its_hold_ends)
{
	struct rig *r = cache_rig(CIDER_MODE_CIDER);
	u64 ptr = cider_word(2, DATA_OFF) | CIDER_WORD_LEASED;
	struct cider_msg inval = { .type = CIDER_MSG_INVAL, .ptr = 9, .from_cn = 1 };

	ASSERT_TRUE(r != NULL);
	cider_cache_hold(&r->cn, r->f.now + 1000);
	cider_cn_on_msg(&r->cn, &inval);		/* another key's, now */
	search_reads(r, ptr, 77, 1);
	ASSERT_EQ(0U, r->c.st.cache_fills);
	r->f.now += 1000;
	search_reads(r, ptr, 77, 2);			/* posted at the hold's end */
	ASSERT_EQ(0U, r->c.st.cache_fills);
	r->f.now++;
	search_reads(r, ptr, 77, 3);
	ASSERT_EQ(1U, r->c.st.cache_fills);
	free(r);
}

/*
 * A holder of the key's lock whose write keeps meeting new leases (other
 * writers win after each wait, readers lease their words again) gives up
 * after a quarter of the lock's lease: it releases the lock and starts
 * over, so that the others never reset a lock whose holder still acts.
 */
TEST(a_holder_that_keeps_meeting_leases_releases_and_starts_over)
{
	struct rig *r = cache_rig(CIDER_MODE_CASLOCK);
	u64 paddr = 4096 + 3 * 8, laddr = 8192 + 3 * (16 + 8 * 4), ver = 1, t0;
	u32 i, released = 0;

	ASSERT_TRUE(r != NULL);
	start(r, CIDER_UPDATE, 3, 7, 1);
	t0 = r->f.now;
	for (i = 0; i < 200 && !released; i++) {
		struct cider_verb *v = &r->f.v[r->f.nv - 1];

		if (r->c.parked) {			/* waiting out a lease */
			r->f.now += r->f.delay_ns;
			cider_client_timer(&r->c, r->f.token);
			continue;
		}
		r->f.now += 2000;			/* a round trip */
		if (r->f.v[0].op == CIDER_V_READ && r->f.v[0].addr == paddr) {
			r->f.v[0].data[0] = cider_word(ver, DATA_OFF + 4096) | CIDER_WORD_LEASED;
		} else if (v->op == CIDER_V_CAS && v->addr == paddr && !(v->arg1 & CIDER_WORD_LEASED)) {
			/* Another writer won meanwhile; readers leased its word. */
			ver++;
			v->old = cider_word(ver, DATA_OFF + 4096 + 16 * ver) | CIDER_WORD_LEASED;
		} else if (r->f.v[0].op == CIDER_V_CAS && r->f.v[0].addr == laddr && r->f.v[0].arg1 == 0) {
			released = 1;			/* the CAS lock's release */
			break;
		} else {
			v->old = v->arg0;		/* the lock, the chunk, the WAITING bit */
		}
		complete(r);
	}
	ASSERT_EQ(1U, released);
	ASSERT_GE(r->c.st.lease_waits, 2U);
	ASSERT_LT(r->f.now - t0, r->cfg.lease_ns / 2);
	ASSERT_EQ(0U, r->f.dones);			/* not done: it starts over */
	free(r);
}

/* Alone (nobody to ask): the writer goes on at once. */
TEST(a_writer_with_nobody_to_ask_does_not_wait)
{
	struct rig *r = cache_rig(CIDER_MODE_OSYNC);
	u64 ptr = cider_word(1, DATA_OFF + 4096) | CIDER_WORD_LEASED | CIDER_WORD_WAITING;

	ASSERT_TRUE(r != NULL);
	r->cfg.nr_cns = 1;
	start(r, CIDER_UPDATE, 3, 7, 1);
	r->f.v[0].data[0] = ptr;
	complete(r);
	r->f.v[0].old = 0;
	complete(r);
	ASSERT_EQ(0U, r->f.timers);
	ASSERT_EQ(0U, r->f.sends);
	ASSERT_EQ(CIDER_V_CAS, r->f.v[1].op);
	ASSERT_EQ(ptr, r->f.v[1].arg0);
	free(r);
}

/* With no way to reach the other CNs, a writer waits the whole lease. */
TEST(a_writer_that_cannot_broadcast_waits_the_lease_out)
{
	struct rig *r = cache_rig(CIDER_MODE_OSYNC);
	u64 ptr = cider_word(1, DATA_OFF + 4096) | CIDER_WORD_LEASED | CIDER_WORD_WAITING;
	struct cider_msg ack = { .type = CIDER_MSG_INVAL_ACK, .to_slot = 0, .ticket = 1 };

	ASSERT_TRUE(r != NULL);
	r->fab.ops = &fake_ops_silent;
	start(r, CIDER_UPDATE, 3, 7, 1);
	r->f.v[0].data[0] = ptr;
	complete(r);
	r->f.v[0].old = 0;
	complete(r);
	ASSERT_TRUE(states_are(r, "optimistic", "write:lease", ""));
	ASSERT_EQ(0U, r->f.sends);
	cider_cn_on_msg(&r->cn, &ack);		/* an answer it cannot count */
	ASSERT_EQ(0U, r->f.wakes);
	r->f.now += LEASE_NS + MARGIN_NS - 1;
	cider_client_timer(&r->c, r->f.token);
	ASSERT_TRUE(states_are(r, "optimistic", "write:lease", ""));
	r->f.now += 1;
	cider_client_timer(&r->c, r->f.token);
	ASSERT_EQ(CIDER_V_CAS, r->f.v[1].op);
	free(r);
}

/* A word another writer stopped: no CAS of the bit, just the wait. */
TEST(a_write_that_finds_the_waiting_bit_set_waits_without_a_cas)
{
	struct rig *r = cache_rig(CIDER_MODE_OSYNC);
	u64 ptr = cider_word(1, DATA_OFF + 4096) | CIDER_WORD_LEASED | CIDER_WORD_WAITING;

	ASSERT_TRUE(r != NULL);
	start(r, CIDER_UPDATE, 3, 7, 1);
	r->f.v[0].data[0] = ptr;
	complete(r);
	r->f.v[0].old = 0;
	complete(r);
	ASSERT_EQ(1U, r->f.timers);
	ASSERT_EQ(2U, r->f.posts);
	ASSERT_TRUE(states_are(r, "optimistic", "write:lease", ""));
	r->f.now += LEASE_NS + MARGIN_NS;
	cider_client_timer(&r->c, r->f.token);
	ASSERT_EQ(CIDER_V_CAS, r->f.v[1].op);
	ASSERT_EQ(ptr, r->f.v[1].arg0);
	ASSERT_EQ(0U, r->c.st.lease_revokes);
	ASSERT_EQ(1U, r->c.st.lease_waits);
	free(r);
}

/* A word a writer waits on starts no right: the SEARCH keeps nothing. */
TEST(a_search_of_a_word_a_writer_waits_on_keeps_nothing)
{
	struct rig *r = cache_rig(CIDER_MODE_CIDER);
	u64 ptr = cider_word(2, DATA_OFF) | CIDER_WORD_LEASED | CIDER_WORD_WAITING;
	u32 posts;

	ASSERT_TRUE(r != NULL);
	search_reads(r, ptr, 77, 1);
	search_reads(r, ptr, 77, 2);
	ASSERT_EQ(2U, r->f.dones);
	ASSERT_EQ(0U, r->c.st.cache_fills);
	posts = r->f.posts;
	start(r, CIDER_SEARCH, 5, 0, 3);
	ASSERT_EQ(posts + 1, r->f.posts);
	free(r);
}

TEST_HARNESS_MAIN
