// SPDX-License-Identifier: GPL-2.0
/*
 * The atomics agent; see agent.h.
 *
 * One agent at a time.  Each of its tags is a buffer in its memory and, at
 * any moment, in one state (enum cider_agent_tag_state) under the agent's
 * lock.  Whoever moves a tag out of WAITING or BUSY owns it until it moves
 * it on; COPYING and COMMITTING mark an owner copying to or from user
 * memory without the lock, which the death of the agent leaves alone:
 * that owner finishes its batch itself.
 *
 * Every wait is bounded: a monitor, every 100 ms, declares the agent gone
 * when its task exits or when it has held a batch, or left one queued,
 * for op_timeout_ms; its batches then end and the nodes it served are
 * lost (they reconnect through the next agent, if one registers in time).
 * A teardown that waits for its node's batches (cider_agent_drain()) is
 * bounded by the same monitor.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bottom_half.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "agent.h"
#include "cider.h"
#include "compat.h"
#include "fault.h"
#include "mn.h"
#include "params.h"
#include "transport.h"
#include "uargs.h"
#include "uring.h"

enum cider_agent_tag_state {
	CIDER_TAG_IDLE,		/* no command of the agent's */
	CIDER_TAG_WAITING,	/* a fetch is parked: cmd */
	CIDER_TAG_DELIVERING,	/* task work queued for cmd; b or none */
	CIDER_TAG_COPYING,	/* b's request is being copied out */
	CIDER_TAG_BUSY,		/* the agent runs b */
	CIDER_TAG_COMMITTING,	/* b's result is being copied in */
};

struct cider_agent_tag {
	struct cider_agent *agent;
	u8 state;		/* enum cider_agent_tag_state */
	struct io_uring_cmd *cmd;
	u64 ubuf;
	struct cider_batch *b;
	unsigned long since;	/* jiffies: b was handed out */
	bool wake;		/* the agent died: complete the parked fetch */
};

struct cider_agent {
	struct task_struct *task;
	pid_t pid;
	u32 nr_tags;
	u32 buf_len;
	spinlock_t lock;	/* irqsave: submitters run in any context */
	bool dead;
	struct list_head queue;	/* batches no tag took yet, oldest first */
	struct delayed_work monitor;
	struct cider_agent_tag tags[];
};

/* In an agent command's pdu: which tag it is. */
struct cider_agent_pdu {
	struct cider_agent_tag *tag;
};

static struct cider_agent __rcu *cider_agent_cur;
static DEFINE_MUTEX(cider_agent_mutex);		/* changes of cider_agent_cur */
static DECLARE_WAIT_QUEUE_HEAD(cider_agent_drained);

#define CIDER_AGENT_MONITOR_PERIOD	(HZ / 10)

void cider_agent_dest_init(struct cider_agent_dest *d)
{
	atomic_set(&d->held, 0);
	atomic64_set(&d->batches, 0);
	atomic64_set(&d->verbs, 0);
	atomic64_set(&d->failed, 0);
}

static bool cider_wr_atomic(const struct cider_wr *w)
{
	return w->op == CIDER_RDMA_CAS || w->op == CIDER_RDMA_FAA;
}

bool cider_batch_has_atomic(const struct cider_batch *b)
{
	unsigned int i;

	for (i = 0; i < b->nr; i++)
		if (cider_wr_atomic(&b->wr[i]))
			return true;
	return false;
}

bool cider_agent_registered(void)
{
	bool ret;

	rcu_read_lock();
	ret = rcu_access_pointer(cider_agent_cur);
	rcu_read_unlock();
	return ret;
}

/* The bytes of WR @w in kernel memory. */
static void *cider_wr_cpu(struct cider_batch *b, const struct cider_wr *w)
{
	return w->ext ? w->ext_cpu : b->buf + w->buf_off;
}

static u64 cider_wr_remote(const struct cider_wr *w)
{
	return cider_wr_atomic(w) ? w->atomic.remote_addr : w->rdma.remote_addr;
}

/*
 * End @b: @reason for every WR without a status of its own; @handed: it
 * reached the agent, so its WRITEs and atomics may have executed.  The
 * batch's node may go once its last batch ended: @d is not touched after.
 */
static void cider_agent_end(struct cider_batch *b, int reason, bool handed)
{
	struct cider_agent_dest *d = b->agent;

	if (reason) {
		b->status = reason;
		b->acked = 0;
		b->posted = handed ? b->nr : 0;
		atomic64_inc(&d->failed);
	}
	/* The owners' callbacks expect the completion path's context. */
	local_bh_disable();
	cider_batch_finish(b);
	local_bh_enable();
	if (atomic_dec_and_test(&d->held))
		wake_up_all(&cider_agent_drained);
}

static void cider_agent_end_list(struct list_head *list, int reason, bool handed)
{
	struct cider_batch *b, *n;

	list_for_each_entry_safe(b, n, list, node) {
		list_del_init(&b->node);
		cider_agent_end(b, reason, handed);
	}
}

/* A WAITING tag, if any: any parked fetch will do. */
static struct cider_agent_tag *cider_agent_waiting(struct cider_agent *a)
{
	u32 i;

	for (i = 0; i < a->nr_tags; i++)
		if (a->tags[i].state == CIDER_TAG_WAITING)
			return &a->tags[i];
	return NULL;
}

static void cider_agent_deliver_task(struct io_uring_cmd *cmd, unsigned int issue_flags);

/* Under the lock: @t's parked fetch is to be completed from its task. */
static struct io_uring_cmd *cider_agent_wake_tag(struct cider_agent_tag *t,
						 struct cider_batch *b)
{
	t->state = CIDER_TAG_DELIVERING;
	t->b = b;
	return t->cmd;
}

int cider_agent_submit(struct cider_agent_dest *d, struct cider_batch *b)
{
	struct io_uring_cmd *cmd = NULL;
	struct cider_agent_tag *t;
	struct cider_agent *a;
	unsigned long flags;
	int ret = 0;

	rcu_read_lock();
	a = rcu_dereference(cider_agent_cur);
	if (!a) {
		ret = -ENXIO;
		goto out;
	}
	spin_lock_irqsave(&a->lock, flags);
	if (a->dead) {
		ret = -ENXIO;
	} else {
		b->agent = d;
		b->deadline = jiffies + msecs_to_jiffies(READ_ONCE(cider_op_timeout_ms));
		atomic_inc(&d->held);
		t = cider_agent_waiting(a);
		if (t)
			cmd = cider_agent_wake_tag(t, b);
		else
			list_add_tail(&b->node, &a->queue);
	}
	spin_unlock_irqrestore(&a->lock, flags);
	if (cmd)
		cider_uring_in_task(cmd, cider_agent_deliver_task);
out:
	rcu_read_unlock();
	return ret;
}

/* Bytes of @b's request (WRITEs' data in it) and of its result (READs'). */
static void cider_agent_sizes(struct cider_batch *b, size_t *req, size_t *res)
{
	unsigned int i;

	*req = struct_size_t(struct cider_agent_req, wr, b->nr);
	*res = struct_size_t(struct cider_agent_res, wr, b->nr);
	for (i = 0; i < b->nr; i++) {
		const struct cider_wr *w = &b->wr[i];

		if (w->op == CIDER_RDMA_WRITE)
			*req += ALIGN(w->sge.length, 8);
		else if (w->op == CIDER_RDMA_READ)
			*res += ALIGN(w->sge.length, 8);
	}
}

static void cider_agent_wr_fill(struct cider_agent_wr *aw, const struct cider_wr *w)
{
	static const u8 ops[CIDER_RDMA_NR_OPS] = {
		[CIDER_RDMA_READ] = CIDER_AGENT_READ,
		[CIDER_RDMA_WRITE] = CIDER_AGENT_WRITE,
		[CIDER_RDMA_CAS] = CIDER_AGENT_CAS,
		[CIDER_RDMA_FAA] = CIDER_AGENT_FAA,
	};

	memset(aw, 0, sizeof(*aw));
	aw->op = ops[w->op];
	aw->len = cider_wr_atomic(w) ? 8 : w->sge.length;
	aw->offset = cider_wr_remote(w);
	if (cider_wr_atomic(w)) {
		aw->compare_add = w->atomic.compare_add;
		aw->swap = w->atomic.swap;
	}
}

/* The request's header, for @b of node @d. */
static void cider_agent_req_fill(struct cider_agent_req *r, const struct cider_batch *b)
{
	const struct cider_agent_dest *d = b->agent;

	memset(r, 0, sizeof(*r));
	r->type = CIDER_AGENT_REQ_BATCH;
	r->mn_id = d->mn_id;
	r->generation = READ_ONCE(d->generation);
	r->nr = b->nr;
	r->cn_id = d->cn_id;
	r->family = d->family;
	r->port = d->port;
	memcpy(r->addr, d->addr, sizeof(r->addr));
	r->region_size = d->region_size;
}

/* Copy @b's request to the agent's buffer at @ubuf: its length or -errno. */
static ssize_t cider_agent_copy_out(struct cider_agent *a, struct cider_batch *b, u64 ubuf)
{
	void __user *p = u64_to_user_ptr(ubuf), *data;
	struct cider_agent_req req;
	struct cider_agent_wr aw;
	size_t req_len, res_len;
	unsigned int i;

	cider_agent_sizes(b, &req_len, &res_len);
	if (req_len > a->buf_len || res_len > a->buf_len)
		return -EMSGSIZE;
	cider_agent_req_fill(&req, b);
	if (copy_to_user(p, &req, sizeof(req)))
		return -EFAULT;
	data = p + struct_size_t(struct cider_agent_req, wr, b->nr);
	for (i = 0; i < b->nr; i++) {
		const struct cider_wr *w = &b->wr[i];

		cider_agent_wr_fill(&aw, w);
		if (copy_to_user(p + offsetof(struct cider_agent_req, wr[i]), &aw, sizeof(aw)))
			return -EFAULT;
		if (w->op != CIDER_RDMA_WRITE)
			continue;
		if (copy_to_user(data, cider_wr_cpu(b, w), w->sge.length))
			return -EFAULT;
		data += ALIGN(w->sge.length, 8);
	}
	return req_len;
}

/*
 * The agent took no request from @t (it is dead, or @t's copy failed):
 * @t is the caller's.  Give it the next queued batch, or park @cmd on it
 * (WAITING), or, dead, leave it IDLE.  Returns the next batch (@t is then
 * COPYING) or NULL; *@err: -ENODEV when dead, -EIOCBQUEUED when parked.
 */
static struct cider_batch *cider_agent_next(struct cider_agent *a, struct cider_agent_tag *t,
					    struct io_uring_cmd *cmd, u64 ubuf, int *err)
{
	struct cider_batch *b = NULL;

	spin_lock_irq(&a->lock);
	t->b = NULL;
	if (a->dead) {
		t->state = CIDER_TAG_IDLE;
		t->cmd = NULL;
		*err = -ENODEV;
	} else {
		b = list_first_entry_or_null(&a->queue, struct cider_batch, node);
		if (b) {
			list_del_init(&b->node);
			t->state = CIDER_TAG_COPYING;
			t->b = b;
		} else {
			t->state = CIDER_TAG_WAITING;
			t->cmd = cmd;
			t->ubuf = ubuf;
			*err = -EIOCBQUEUED;
		}
	}
	spin_unlock_irq(&a->lock);
	return b;
}

/*
 * @t is COPYING @b: hand it out.  Returns the request's length (@t BUSY),
 * or -errno with @b ended (not executed) and @t the caller's again.
 */
static ssize_t cider_agent_hand(struct cider_agent *a, struct cider_agent_tag *t,
				struct cider_batch *b, u64 ubuf)
{
	ssize_t len;
	bool dead;

	cider_fault_agent_delay();
	len = cider_agent_copy_out(a, b, ubuf);
	spin_lock_irq(&a->lock);
	dead = a->dead;
	if (len >= 0 && !dead) {
		t->state = CIDER_TAG_BUSY;
		t->b = b;
		t->since = jiffies;
		t->ubuf = ubuf;
	}
	spin_unlock_irq(&a->lock);
	if (len >= 0 && !dead) {
		atomic64_inc(&b->agent->batches);
		atomic64_add(b->nr, &b->agent->verbs);
		return len;
	}
	/* The agent never sees it: not executed. */
	cider_agent_end(b, dead ? -ENOTCONN : len, false);
	return dead ? -ENODEV : len;
}

/*
 * Fetch for @t, which the caller owns with @b (COPYING) or without: the
 * length of the request handed out, -EIOCBQUEUED when parked, -ENODEV.
 */
static ssize_t cider_agent_fetch(struct cider_agent *a, struct cider_agent_tag *t,
				 struct cider_batch *b, struct io_uring_cmd *cmd, u64 ubuf)
{
	ssize_t len;
	int err = 0;

	for (;;) {
		if (!b)
			b = cider_agent_next(a, t, cmd, ubuf, &err);
		if (!b)
			return err;
		len = cider_agent_hand(a, t, b, ubuf);
		if (len >= 0 || len == -ENODEV)
			return len;
		b = NULL;	/* that one ended; the next */
	}
}

static void cider_agent_fail(struct cider_agent *a, const char *why);

/* The agent's task (or io_uring's fallback when it exits): complete a fetch. */
static void cider_agent_deliver_task(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct cider_agent_tag *t = ((struct cider_agent_pdu *)cmd->pdu)->tag;
	bool gone = cider_uring_task_gone(), dead;
	struct cider_agent *a = t->agent;
	struct cider_batch *b;
	ssize_t len;

	spin_lock_irq(&a->lock);
	b = t->b;
	t->b = NULL;
	t->cmd = NULL;
	dead = a->dead || gone;
	t->state = dead ? CIDER_TAG_IDLE : b ? CIDER_TAG_COPYING : CIDER_TAG_IDLE;
	spin_unlock_irq(&a->lock);
	if (dead) {
		if (b)
			cider_agent_end(b, -ENOTCONN, false);
		if (gone)
			cider_agent_fail(a, "its task exits");
		io_uring_cmd_done(cmd, -ENODEV, 0, issue_flags);
		return;
	}
	len = cider_agent_fetch(a, t, b, cmd, t->ubuf);
	if (len != -EIOCBQUEUED)
		io_uring_cmd_done(cmd, len, 0, issue_flags);
}

/* A verb's status from the agent: 0 or an errno, nothing else. */
static int cider_agent_status(s32 st)
{
	return st > 0 || st < -MAX_ERRNO ? -EPROTO : st;
}

/*
 * Copy the agent's result for @b from @ubuf into @b: its statuses, the
 * atomics' old values, the READs' bytes.  0, or -errno when the result is
 * unreadable or malformed (then @b's verbs are "outcome unknown").
 */
static int cider_agent_copy_in(struct cider_batch *b, u64 ubuf)
{
	void __user *p = u64_to_user_ptr(ubuf), *data;
	struct cider_agent_wr_res wr;
	struct cider_agent_res res;
	unsigned int i;

	if (copy_from_user(&res, p, sizeof(res)))
		return -EFAULT;
	if (res.nr != b->nr || res.reserved)
		return -EPROTO;
	if (res.status) {
		b->status = cider_agent_status(res.status) ?: -EPROTO;
		return 0;	/* nothing ran: every verb not executed */
	}
	data = p + struct_size_t(struct cider_agent_res, wr, b->nr);
	for (i = 0; i < b->nr; i++) {
		struct cider_wr *w = &b->wr[i];

		if (copy_from_user(&wr, p + offsetof(struct cider_agent_res, wr[i]), sizeof(wr)))
			return -EFAULT;
		w->status = cider_agent_status(wr.status);
		if (!w->status && cider_wr_atomic(w))
			memcpy(cider_wr_cpu(b, w), &wr.value, 8);
		if (w->op != CIDER_RDMA_READ)
			continue;
		if (!w->status && copy_from_user(cider_wr_cpu(b, w), data, w->sge.length))
			return -EFAULT;
		data += ALIGN(w->sge.length, 8);
	}
	b->acked = b->nr;
	b->posted = b->nr;
	return 0;
}

/* The agent's file, if @file is one: the agent it registered. */
static struct cider_agent *cider_agent_of(struct file *file)
{
	return READ_ONCE(file->private_data);
}

/*
 * COMMIT for @t: end its batch with the agent's result.  0, or -errno
 * (the tag was not BUSY, or its result was bad: the batch then ends
 * "outcome unknown", and the tag is IDLE).
 */
static int cider_agent_commit(struct cider_agent *a, struct cider_agent_tag *t, u64 ubuf)
{
	struct cider_batch *b;
	int ret;

	spin_lock_irq(&a->lock);
	if (t->state != CIDER_TAG_BUSY || ubuf != t->ubuf) {
		spin_unlock_irq(&a->lock);
		return -EINVAL;
	}
	t->state = CIDER_TAG_COMMITTING;
	b = t->b;
	spin_unlock_irq(&a->lock);
	ret = cider_agent_copy_in(b, ubuf);
	cider_agent_end(b, ret ? -ENOTCONN : 0, true);
	if (ret) {
		spin_lock_irq(&a->lock);
		t->b = NULL;
		t->state = CIDER_TAG_IDLE;
		spin_unlock_irq(&a->lock);
	}
	return ret;
}

static int cider_agent_cmd_in(struct io_uring_cmd *cmd, struct cider_agent *a,
			      struct cider_agent_cmd *ac)
{
	int ret = cider_uargs_in_sqe(ac, sizeof(*ac), CIDER_AGENT_CMD_SIZE_VER0,
				     cider_uring_payload(cmd), cmd->cmd_op);

	if (ret)
		return ret;
	if (ac->tag >= a->nr_tags || !ac->buf || (ac->buf & 7) ||
	    memchr_inv(ac->reserved, 0, sizeof(ac->reserved)))
		return -EINVAL;
	return 0;
}

bool cider_agent_uring_is_mine(const struct io_uring_cmd *cmd)
{
	unsigned int base = CIDER_IOC_BASE(cmd->cmd_op);

	return base == CIDER_IOC_BASE(CIDER_URING_AGENT_FETCH) ||
	       base == CIDER_IOC_BASE(CIDER_URING_AGENT_COMMIT);
}

/* FETCH, or COMMIT then fetch, on the agent's file. */
int cider_agent_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct cider_agent *a = cider_agent_of(cmd->file);
	struct cider_agent_tag *t;
	struct cider_agent_cmd ac;
	bool commit;
	ssize_t len;
	int ret;

	BUILD_BUG_ON(sizeof(struct cider_agent_pdu) > sizeof(cmd->pdu));
	if (!a || cmd->flags || !(issue_flags & IO_URING_F_SQE128))
		return a ? -EINVAL : -EBADF;
	if (READ_ONCE(a->dead))
		return -ENODEV;
	ret = cider_agent_cmd_in(cmd, a, &ac);
	if (ret)
		return ret;
	t = &a->tags[ac.tag];
	commit = CIDER_IOC_BASE(cmd->cmd_op) == CIDER_IOC_BASE(CIDER_URING_AGENT_COMMIT);
	if (commit) {
		ret = cider_agent_commit(a, t, ac.buf);
		if (ret)
			return ret;
	} else {
		spin_lock_irq(&a->lock);
		ret = t->state == CIDER_TAG_IDLE ? 0 : -EBUSY;
		if (!ret)
			t->state = CIDER_TAG_COPYING;	/* ours, until it parks */
		spin_unlock_irq(&a->lock);
		if (ret)
			return ret;
	}
	/*
	 * Marked before it can park: a submitter may hand it a batch at
	 * once.  So it is never returned synchronously (a marked command
	 * stays listed until io_uring_cmd_done()).
	 */
	((struct cider_agent_pdu *)cmd->pdu)->tag = t;
	cider_uring_mark_cancelable(cmd, issue_flags);
	len = cider_agent_fetch(a, t, NULL, cmd, ac.buf);
	if (len != -EIOCBQUEUED)
		io_uring_cmd_done(cmd, len, 0, issue_flags);
	return -EIOCBQUEUED;
}

/*
 * The ring or task of a parked fetch goes away (6.7+): the agent cannot
 * fetch any more, it is gone.  A fetch being delivered is asked again.
 */
void cider_agent_uring_cancel(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct cider_agent_tag *t = ((struct cider_agent_pdu *)cmd->pdu)->tag;
	struct cider_agent *a = t->agent;
	bool mine;

	spin_lock_irq(&a->lock);
	mine = t->state == CIDER_TAG_WAITING && t->cmd == cmd;
	if (mine) {
		t->state = CIDER_TAG_IDLE;
		t->cmd = NULL;
	}
	spin_unlock_irq(&a->lock);
	if (!mine)
		return;
	io_uring_cmd_done(cmd, -ECANCELED, 0, issue_flags);
	cider_agent_fail(a, "its ring goes away");
}

/*
 * Under the lock, @a just died: take the batches it held and queued,
 * and wake every parked fetch (each completes -ENODEV from its task).
 */
static void cider_agent_collect(struct cider_agent *a, struct list_head *held,
				struct list_head *unsent)
{
	u32 i;

	list_splice_init(&a->queue, unsent);
	for (i = 0; i < a->nr_tags; i++) {
		struct cider_agent_tag *t = &a->tags[i];

		if (t->state == CIDER_TAG_BUSY) {
			list_add_tail(&t->b->node, held);
			t->b = NULL;
			t->state = CIDER_TAG_IDLE;
		} else if (t->state == CIDER_TAG_WAITING) {
			cider_agent_wake_tag(t, NULL);
			t->wake = true;
		}
	}
}

/* After cider_agent_collect(), without the lock: DELIVERING is nobody else's. */
static void cider_agent_wake_all(struct cider_agent *a)
{
	u32 i;

	for (i = 0; i < a->nr_tags; i++) {
		struct cider_agent_tag *t = &a->tags[i];

		if (t->wake) {
			t->wake = false;
			cider_uring_in_task(t->cmd, cider_agent_deliver_task);
		}
	}
}

/*
 * @a is gone for @why: nothing more goes to it, it leaves cider_agent_cur
 * (another may register), what it held ends "outcome unknown", what it
 * never saw ends not executed, and every node whose atomics it carried is
 * lost.  Process context; once per agent.
 */
static void cider_agent_fail(struct cider_agent *a, const char *why)
{
	LIST_HEAD(held);
	LIST_HEAD(unsent);

	spin_lock_irq(&a->lock);
	if (a->dead) {
		spin_unlock_irq(&a->lock);
		return;
	}
	a->dead = true;
	cider_agent_collect(a, &held, &unsent);
	spin_unlock_irq(&a->lock);
	cider_agent_wake_all(a);
	mutex_lock(&cider_agent_mutex);
	if (rcu_access_pointer(cider_agent_cur) == a)
		RCU_INIT_POINTER(cider_agent_cur, NULL);
	mutex_unlock(&cider_agent_mutex);
	pr_warn("atomics agent (pid %d) gone: %s\n", a->pid, why);
	cider_agent_end_list(&held, -ENOTCONN, true);
	cider_agent_end_list(&unsent, -ENOTCONN, false);
	cider_mn_agent_gone();
}

/* Held a batch, or left one queued, for op_timeout_ms? */
static bool cider_agent_stalled(struct cider_agent *a)
{
	unsigned long tmo = msecs_to_jiffies(READ_ONCE(cider_op_timeout_ms));
	struct cider_batch *b;
	bool stalled = false;
	u32 i;

	spin_lock_irq(&a->lock);
	b = list_first_entry_or_null(&a->queue, struct cider_batch, node);
	if (b && time_after(jiffies, b->deadline))
		stalled = true;
	for (i = 0; i < a->nr_tags && !stalled; i++) {
		const struct cider_agent_tag *t = &a->tags[i];

		if ((t->state == CIDER_TAG_BUSY || t->state == CIDER_TAG_COMMITTING) &&
		    time_after(jiffies, t->since + tmo))
			stalled = true;
	}
	spin_unlock_irq(&a->lock);
	return stalled;
}

static void cider_agent_monitor(struct work_struct *work)
{
	struct cider_agent *a = container_of(to_delayed_work(work), struct cider_agent,
					     monitor);

	if (a->task->flags & PF_EXITING)
		cider_agent_fail(a, "its task exits");
	else if (cider_agent_stalled(a))
		cider_agent_fail(a, "it kept a batch past op_timeout_ms");
	if (!READ_ONCE(a->dead))
		schedule_delayed_work(&a->monitor, CIDER_AGENT_MONITOR_PERIOD);
}

static struct cider_agent *cider_agent_alloc(const struct cider_agent_reg *reg)
{
	struct cider_agent *a;
	u32 i;

	a = kzalloc(struct_size(a, tags, reg->nr_tags), GFP_KERNEL);
	if (!a)
		return NULL;
	a->nr_tags = reg->nr_tags;
	a->buf_len = reg->buf_len;
	spin_lock_init(&a->lock);
	INIT_LIST_HEAD(&a->queue);
	INIT_DELAYED_WORK(&a->monitor, cider_agent_monitor);
	for (i = 0; i < a->nr_tags; i++)
		a->tags[i].agent = a;
	a->task = get_task_struct(current);
	a->pid = task_pid_nr(current);
	return a;
}

static int cider_agent_reg_check(const struct cider_agent_reg *reg)
{
	if (reg->flags || memchr_inv(reg->reserved, 0, sizeof(reg->reserved)))
		return -EINVAL;
	if (!reg->nr_tags || reg->nr_tags > CIDER_AGENT_MAX_TAGS)
		return -EINVAL;
	if (reg->buf_len < CIDER_AGENT_MIN_BUF || reg->buf_len > CIDER_AGENT_MAX_BUF)
		return -EINVAL;
	return 0;
}

/* CIDER_IOC_AGENT_REGISTER: @file becomes the agent's. */
long cider_agent_ioctl_register(struct file *file, void __user *uarg, unsigned int cmd)
{
	struct cider_agent_reg reg;
	struct cider_agent *a;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = cider_uargs_in(&reg, sizeof(reg), CIDER_AGENT_REG_SIZE_VER0, uarg, cmd);
	ret = ret ?: cider_agent_reg_check(&reg);
	if (ret)
		return ret;
	a = cider_agent_alloc(&reg);
	if (!a)
		return -ENOMEM;
	mutex_lock(&cider_agent_mutex);
	if (rcu_access_pointer(cider_agent_cur) || cider_agent_of(file)) {
		ret = -EBUSY;
	} else {
		WRITE_ONCE(file->private_data, a);
		rcu_assign_pointer(cider_agent_cur, a);
		schedule_delayed_work(&a->monitor, CIDER_AGENT_MONITOR_PERIOD);
	}
	mutex_unlock(&cider_agent_mutex);
	if (ret) {
		put_task_struct(a->task);
		kfree(a);
		return ret;
	}
	pr_info("atomics agent registered: pid %d, %u tags of %u bytes\n", a->pid,
		a->nr_tags, a->buf_len);
	return 0;
}

/*
 * The agent's file is closed for good: no command of it is in flight (a
 * ring holds the file while one is), so only BUSY tags can be left.
 */
void cider_agent_release(struct file *file)
{
	struct cider_agent *a = cider_agent_of(file);

	if (!a)
		return;
	cider_agent_fail(a, "its device file was closed");
	cancel_delayed_work_sync(&a->monitor);
	/* Submitters and drains that found it under RCU are done with it. */
	synchronize_rcu();
	put_task_struct(a->task);
	kfree(a);
}

/*
 * @d's node stops (process context): its batches not handed out end now,
 * not executed; those the agent holds end with its result or when the
 * monitor gives the agent up, op_timeout_ms at most.
 */
void cider_agent_drain(struct cider_agent_dest *d)
{
	struct cider_batch *b, *n;
	struct cider_agent *a;
	LIST_HEAD(mine);

	rcu_read_lock();
	a = rcu_dereference(cider_agent_cur);
	if (a) {
		spin_lock_irq(&a->lock);
		list_for_each_entry_safe(b, n, &a->queue, node)
			if (b->agent == d)
				list_move_tail(&b->node, &mine);
		spin_unlock_irq(&a->lock);
	}
	rcu_read_unlock();
	cider_agent_end_list(&mine, -ENOTCONN, false);
	wait_event(cider_agent_drained, !atomic_read(&d->held));
}
