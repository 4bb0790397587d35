// SPDX-License-Identifier: GPL-2.0
/*
 * Raw one-sided operations on a memory node's region (CIDER_IOC_RAW), for
 * tests and benchmarks: synchronously through ioctl, asynchronously
 * through io_uring passthrough.  Every byte from user space is checked
 * before anything is posted.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "cider.h"
#include "compat.h"
#include "core/proto.h"
#include "mn.h"
#include "uargs.h"
#include "uring.h"

CIDER_VERBS(CIDER_VERB_CHECK)

/* Owned by the batch (cider_raw_release): it lives as long as the batch. */
struct cider_raw_ctx {
	struct cider_mn *mn;		/* a reference */
	struct cider_raw_op __user *uops;
	unsigned int nr;
	struct cider_uring_link link;	/* io_uring: the command */
	struct cider_raw_op ops[];
};

/* Per-command state kept in the io_uring command itself. */
struct cider_raw_pdu {
	struct cider_batch *b;
};

static int cider_raw_check_op(const struct cider_raw_op *op, u64 region)
{
	if (op->reserved0[0] || op->reserved0[1] || op->reserved0[2] || op->reserved1)
		return -EINVAL;
	switch (op->opcode) {
	case CIDER_RAW_READ:
	case CIDER_RAW_WRITE:
		if (!op->len || op->len > CIDER_RAW_MAX_LEN || !op->local ||
		    op->compare || op->swap_add)
			return -EINVAL;
		break;
	case CIDER_RAW_FAA:
		if (op->compare)
			return -EINVAL;
		fallthrough;
	case CIDER_RAW_CAS:
		if (op->len != 8 || op->local || op->remote % 8)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (op->remote > region || op->len > region - op->remote)
		return -ERANGE;
	return 0;
}

static int cider_raw_check(const struct cider_raw_batch *rb)
{
	if (rb->flags || memchr_inv(rb->reserved, 0, sizeof(rb->reserved)))
		return -EINVAL;
	if (!rb->nr_ops || rb->nr_ops > CIDER_RAW_MAX_OPS)
		return -EINVAL;
	return 0;
}

/* Fill WR @i of @b from @op; WRITE data is copied in now. */
static int cider_raw_add(struct cider_batch *b, unsigned int i,
			 const struct cider_raw_op *op, u32 off)
{
	switch (op->opcode) {
	case CIDER_RAW_READ:
		cider_batch_read(b, i, op->remote, op->len, off);
		return 0;
	case CIDER_RAW_WRITE:
		if (copy_from_user(b->buf + off, u64_to_user_ptr(op->local), op->len))
			return -EFAULT;
		cider_batch_write(b, i, op->remote, op->len, off);
		return 0;
	case CIDER_RAW_CAS:
		cider_batch_cas(b, i, op->remote, op->compare, op->swap_add, off);
		return 0;
	default:
		cider_batch_faa(b, i, op->remote, op->swap_add, off);
		return 0;
	}
}

static void cider_raw_release(struct cider_batch *b)
{
	struct cider_raw_ctx *ctx = b->priv;

	cider_mn_put(ctx->mn);
	kfree(ctx);
}

/*
 * Validate @rb and its operations and build the batch; the batch holds a
 * reference on the memory node.
 */
static struct cider_batch *cider_raw_build(const struct cider_raw_batch *rb)
{
	struct cider_raw_ctx *ctx;
	struct cider_batch *b = NULL;
	struct cider_mn *mn;
	u32 i, len = 0;
	int ret;

	ret = cider_raw_check(rb);
	if (ret)
		return ERR_PTR(ret);
	ctx = kmalloc(struct_size(ctx, ops, rb->nr_ops), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return ERR_PTR(-ENOMEM);
	ctx->nr = rb->nr_ops;
	ctx->uops = u64_to_user_ptr(rb->ops);
	ret = -EFAULT;
	if (copy_from_user(ctx->ops, ctx->uops, flex_array_size(ctx, ops, ctx->nr)))
		goto err_ctx;
	ret = -ENOENT;
	mn = cider_mn_get(rb->mn_id);
	if (!mn)
		goto err_ctx;
	for (i = 0; i < ctx->nr; i++) {
		ret = cider_raw_check_op(&ctx->ops[i], mn->size);
		if (ret)
			goto err_mn;
		len += ALIGN(ctx->ops[i].len, 8);
	}
	ret = -EINVAL;
	if (len > CIDER_RAW_MAX_BYTES)
		goto err_mn;
	ret = -ENOMEM;
	b = cider_batch_alloc(ctx->nr, len, GFP_KERNEL_ACCOUNT);
	if (!b)
		goto err_mn;
	ctx->mn = mn;
	b->priv = ctx;
	b->release = cider_raw_release;
	for (i = 0, len = 0; i < ctx->nr; len += ALIGN(ctx->ops[i].len, 8), i++) {
		ret = cider_raw_add(b, i, &ctx->ops[i], len);
		if (ret) {
			cider_batch_put(b);	/* the data path's reference */
			cider_batch_put(b);
			return ERR_PTR(ret);
		}
	}
	return b;
err_mn:
	cider_mn_put(mn);
err_ctx:
	kfree(ctx);
	return ERR_PTR(ret);
}

/* Results back to user space: per-op status, old values, READ data. */
static int cider_raw_copy_out(struct cider_batch *b)
{
	struct cider_raw_ctx *ctx = b->priv;
	u32 i, off = 0;
	int ret = b->status;

	for (i = 0; i < ctx->nr; off += ALIGN(ctx->ops[i].len, 8), i++) {
		struct cider_raw_op *op = &ctx->ops[i];

		op->result = b->wr[i].status;
		if (op->result)
			continue;
		if (op->opcode == CIDER_RAW_CAS || op->opcode == CIDER_RAW_FAA)
			op->old = cider_batch_u64(b, i);
		else if (op->opcode == CIDER_RAW_READ &&
			 copy_to_user(u64_to_user_ptr(op->local), b->buf + off, op->len))
			ret = ret ?: -EFAULT;
	}
	if (copy_to_user(ctx->uops, ctx->ops, flex_array_size(ctx, ops, ctx->nr)))
		ret = ret ?: -EFAULT;
	return ret;
}

long cider_ioctl_raw(void __user *uarg, unsigned int cmd)
{
	struct cider_raw_batch rb;
	struct cider_batch *b;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = cider_uargs_in(&rb, sizeof(rb), CIDER_RAW_BATCH_SIZE_VER0, uarg, cmd);
	if (ret)
		return ret;
	b = cider_raw_build(&rb);
	if (IS_ERR(b))
		return PTR_ERR(b);
	b->complete = cider_batch_wake;
	cider_mn_submit(((struct cider_raw_ctx *)b->priv)->mn, NULL, b);
	/*
	 * Bounded by the node's watchdog (op_timeout_ms).  A fatal signal
	 * ends the wait; the batch finishes later on its own reference.
	 */
	if (wait_for_completion_killable(&b->done))
		ret = -EINTR;
	else
		ret = cider_raw_copy_out(b);
	cider_batch_put(b);
	return ret;
}

/*
 * Task context of the submitter: user memory is reachable again, unless
 * the submitter is exiting.
 */
static void cider_raw_uring_task(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct cider_raw_pdu *pdu = (struct cider_raw_pdu *)cmd->pdu;
	struct cider_batch *b = pdu->b;
	int ret = cider_uring_task_gone() ? -ECANCELED : cider_raw_copy_out(b);

	io_uring_cmd_done(cmd, ret, 0, issue_flags);
	cider_batch_put(b);
}

/* Softirq: io_uring_cmd_done() must not run here on 6.1. */
static void cider_raw_uring_complete(struct cider_batch *b)
{
	struct cider_raw_ctx *ctx = b->priv;

	cider_uring_link_end(&ctx->link);
}

/* The command's ring or task is going away (6.7+): complete it now. */
void cider_raw_uring_cancel(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct cider_raw_pdu *pdu = (struct cider_raw_pdu *)cmd->pdu;
	struct cider_batch *b = pdu->b;
	struct cider_raw_ctx *ctx = b->priv;

	if (cider_uring_link_cancel(&ctx->link, issue_flags))
		cider_batch_put(b);
}

int cider_uring_cmd(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct cider_raw_pdu *pdu = (struct cider_raw_pdu *)cmd->pdu;
	struct cider_raw_batch rb;
	struct cider_raw_ctx *ctx;
	struct cider_batch *b;
	int ret;

	BUILD_BUG_ON(sizeof(*pdu) > sizeof(cmd->pdu));
	if (CIDER_IOC_BASE(cmd->cmd_op) != CIDER_IOC_BASE(CIDER_IOC_RAW))
		return -ENOTTY;
	/*
	 * No flag is understood (IORING_URING_CMD_FIXED would name a
	 * registered buffer this command does not use).
	 */
	if (cmd->flags)
		return -EINVAL;
	/* struct cider_raw_batch needs the 80-byte command area. */
	if (!(issue_flags & IO_URING_F_SQE128))
		return -EINVAL;
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = cider_uargs_in_sqe(&rb, sizeof(rb), CIDER_RAW_BATCH_SIZE_VER0,
				 cider_uring_payload(cmd), cmd->cmd_op);
	if (ret)
		return ret;
	b = cider_raw_build(&rb);
	if (IS_ERR(b))
		return PTR_ERR(b);
	ctx = b->priv;
	cider_uring_link_init(&ctx->link, cmd, cider_raw_uring_task);
	pdu->b = b;
	b->complete = cider_raw_uring_complete;
	/* Never blocks (no lock, RCU-fenced): fine under IO_URING_F_NONBLOCK. */
	cider_mn_submit(ctx->mn, NULL, b);
	cider_uring_link_arm(&ctx->link, issue_flags);
	return -EIOCBQUEUED;
}
