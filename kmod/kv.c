// SPDX-License-Identifier: GPL-2.0
/*
 * Key-value operations from user space (CIDER_IOC_KV): synchronously
 * through ioctl, asynchronously through io_uring passthrough.  Every
 * byte of the command is checked, against the ABI and then against the
 * store, before the operation starts; the key and value are copied in
 * once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/uaccess.h>

#include "cider.h"
#include "compat.h"
#include "core/store.h"
#include "kvscan.h"
#include "kvstore.h"
#include "mn.h"
#include "uargs.h"

/* Per-command state kept in the io_uring command itself. */
struct cider_kv_pdu {
	struct cider_kv_req *r;
};

/* The command's shape, before any store is looked at. */
static int cider_kv_check(const struct cider_kv_cmd *cmd)
{
	if (cmd->flags)
		return -EINVAL;
	if (cmd->opcode == CIDER_KV_SCAN)
		return cider_kv_scan_check(cmd);
	if (memchr_inv(cmd->reserved, 0, sizeof(cmd->reserved)))
		return -EINVAL;
	if (cmd->opcode < CIDER_KV_GET || cmd->opcode > CIDER_KV_DELETE || !cmd->key_len)
		return -EINVAL;
	if (cmd->opcode == CIDER_KV_DELETE && (cmd->value || cmd->value_len))
		return -EINVAL;
	if (cmd->key_len > CIDER_KV_MAX_KEY)
		return -ENAMETOOLONG;
	if (cmd->opcode != CIDER_KV_GET && cmd->value_len > CIDER_KV_MAX_VALUE)
		return -E2BIG;
	return 0;
}

static bool cider_kv_writes(const struct cider_kv_cmd *cmd)
{
	return cmd->opcode == CIDER_KV_PUT || cmd->opcode == CIDER_KV_INSERT ||
	       cmd->opcode == CIDER_KV_UPDATE;
}

/* The array's keys are little-endian integers below its capacity. */
static int cider_kv_array_key(const struct cider_kv_cmd *cmd, const struct cider_mn_sb *sb)
{
	__le64 key;

	if (cmd->key_len != 8 || (cider_kv_writes(cmd) && cmd->value_len != 8))
		return -EINVAL;
	if (copy_from_user(&key, u64_to_user_ptr(cmd->key), 8))
		return -EFAULT;
	return le64_to_cpu(key) < sb->nr_keys ? 0 : -EDOM;
}

/* The command against the store it names (its superblock's limits). */
static int cider_kv_fits(struct cider_mn *mn, const struct cider_kv_cmd *cmd)
{
	const struct cider_mn_sb *sb = &mn->sb;

	if (cmd->key_len > sb->max_key_len)
		return -ENAMETOOLONG;
	if (cider_kv_writes(cmd) && cmd->value_len > sb->max_value_len)
		return -E2BIG;
	if (!cider_kvs_of(mn))
		return -EOPNOTSUPP;	/* no KV store on this node */
	if (cmd->opcode == CIDER_KV_SCAN)
		return 0;		/* its cursor: cider_kv_build() */
	if (sb->index == CIDER_SB_INDEX_ARRAY)
		return cider_kv_array_key(cmd, sb);
	return 0;
}

/*
 * A request of the store's pool for the command, checked against the
 * ABI and the store (@nowait: -EAGAIN rather than wait for one).  The
 * bytes are copied in later, once, into the operation's slot
 * (kvstore.c).
 */
static struct cider_kv_req *cider_kv_build(const struct cider_kv_cmd *cmd, bool nowait)
{
	struct cider_kv_req *r;
	struct cider_mn *mn;
	int ret = cider_kv_check(cmd);

	if (ret)
		return ERR_PTR(ret);
	mn = cider_mn_get(cmd->store);
	if (!mn)
		return ERR_PTR(-ENXIO);
	ret = cider_kv_fits(mn, cmd);
	r = ret ? ERR_PTR(ret) : cider_kv_req_get(mn, nowait);
	if (IS_ERR(r)) {
		cider_mn_put(mn);
		return r;
	}
	r->store = cmd->store;
	r->op = cmd->opcode;
	r->ukey = u64_to_user_ptr(cmd->key);
	r->key_len = cmd->key_len;
	r->uval = u64_to_user_ptr(cmd->value);
	/* A GET's buffer beyond the store's longest value is never used. */
	r->val_len = min(cmd->value_len, mn->sb.max_value_len);
	if (r->op != CIDER_KV_SCAN)
		return r;
	/* A page's records: up to what a value may be, whatever the store. */
	r->val_len = min(cmd->value_len, CIDER_KV_MAX_VALUE);
	ret = cider_kv_scan_fits(cider_kvs_of(mn), cmd, &r->scan_pos, &r->scan_count);
	if (ret) {
		cider_kv_req_put(r);
		return ERR_PTR(ret);
	}
	return r;
}

/*
 * The result for user space, in the submitter's task: a GET's value or a
 * SCAN's records go to its buffer.  *res2: a GET's value length, for
 * -ERANGE; a SCAN's next cursor.
 */
static int cider_kv_result(struct cider_kv_req *r, u64 *res2)
{
	int ret;

	*res2 = 0;
	if (r->result)
		return r->result;
	if (r->op == CIDER_KV_SCAN) {
		*res2 = r->got_pos;
		return cider_kv_scan_result(r->out, r->got_len, r->uval);
	}
	if (r->op != CIDER_KV_GET)
		return 0;
	*res2 = r->got_len;
	if (r->got_len > r->val_len)
		return -ERANGE;
	ret = cider_kv_req_copy_value(r);
	return ret ?: (int)r->got_len;
}

static void cider_kv_wake(struct cider_kv_req *r)
{
	complete(&r->done);
}

/*
 * The store ends a running operation by its bound (kslot.c), so this
 * wait ends by then; a second of slack for the timer's softirq.  Should
 * the store ever fail to, the caller still gets an answer (-ECOMM: the
 * operation may still take effect), and the warning names the bug.  A
 * fatal signal ends the wait early; the operation finishes on the
 * store's reference.
 */
static int cider_kv_wait(struct cider_kv_req *r)
{
	s64 ns = (s64)(r->ends_at - ktime_get_ns()) + NSEC_PER_SEC;
	long left = wait_for_completion_killable_timeout(&r->done,
							 nsecs_to_jiffies(max_t(s64, ns, 0)) + 1);

	if (left < 0)
		return -EINTR;
	if (WARN_ONCE(!left, "cider: KV op %u outlived its bound\n", r->op))
		return -ECOMM;
	return 0;
}

long cider_ioctl_kv(void __user *uarg, unsigned int ioc)
{
	struct cider_kv_cmd __user *ucmd = uarg;
	struct cider_kv_cmd cmd;
	struct cider_kv_req *r;
	u64 res2;
	int ret;

	ret = cider_uargs_in(&cmd, sizeof(cmd), CIDER_KV_CMD_SIZE_VER0, uarg, ioc);
	if (ret)
		return ret;
	r = cider_kv_build(&cmd, false);
	if (IS_ERR(r))
		return PTR_ERR(r);
	r->complete = cider_kv_wake;
	ret = cider_kvs_submit(r->mn, r, false);
	if (ret)
		goto out;
	ret = cider_kv_wait(r);
	if (ret)
		goto out;
	ret = cider_kv_result(r, &res2);
	if (ret == -ERANGE && put_user((u32)res2, &ucmd->value_len))
		ret = -EFAULT;
	if (ret >= 0 && r->op == CIDER_KV_SCAN &&
	    (put_user(res2, &ucmd->cursor) || put_user(r->got_len, &ucmd->value_len)))
		ret = -EFAULT;
out:
	cider_kv_req_put(r);
	return ret;
}

/*
 * Task context of the submitter: user memory is reachable again, unless
 * the submitter is exiting.
 */
static void cider_kv_uring_task(struct io_uring_cmd *ucmd, unsigned int issue_flags)
{
	struct cider_kv_pdu *pdu = (struct cider_kv_pdu *)ucmd->pdu;
	struct cider_kv_req *r = pdu->r;
	u64 res2 = 0;
	int ret = cider_uring_task_gone() ? -ECANCELED : cider_kv_result(r, &res2);

	/* big_cqe[0]: a GET's length for -ERANGE, a SCAN's next cursor. */
	io_uring_cmd_done(ucmd, ret, ret == -ERANGE || (ret >= 0 && r->op == CIDER_KV_SCAN) ?
			  res2 : 0, issue_flags);
	cider_kv_req_put(r);
}

/* Any context: io_uring_cmd_done() must not run in softirq on 6.1. */
static void cider_kv_uring_complete(struct cider_kv_req *r)
{
	cider_uring_link_end(&r->ulink);
}

/* The command's ring or task is going away (6.7+): complete it now. */
void cider_kv_uring_cancel(struct io_uring_cmd *ucmd, unsigned int issue_flags)
{
	struct cider_kv_pdu *pdu = (struct cider_kv_pdu *)ucmd->pdu;
	struct cider_kv_req *r = pdu->r;

	if (cider_uring_link_cancel(&r->ulink, issue_flags))
		cider_kv_req_put(r);
}

/*
 * Answer -EAGAIN (io_uring issues the command again from a worker) rather
 * than wait for a request or a slot?  Only where the re-issue reads the
 * same command (compat.h).
 */
static bool cider_kv_uring_nowait(unsigned int issue_flags)
{
	return (issue_flags & IO_URING_F_NONBLOCK) && CIDER_URING_REISSUE_KEEPS_SQE;
}

/*
 * A command refused with @ret.  One that waited (!@nowait) for its slot
 * and still got none ends -EAGAIN in its CQE: returned from a first
 * issue, io_uring would issue it again from a worker, which on 6.10+
 * reads an SQE the application may have refilled by now.
 */
static int cider_kv_uring_refuse(struct io_uring_cmd *ucmd, int ret, bool nowait,
				 unsigned int issue_flags)
{
	if (ret != -EAGAIN || nowait)
		return ret;
	io_uring_cmd_done(ucmd, ret, 0, issue_flags);
	return -EIOCBQUEUED;
}

int cider_kv_uring_cmd(struct io_uring_cmd *ucmd, unsigned int issue_flags)
{
	struct cider_kv_pdu *pdu = (struct cider_kv_pdu *)ucmd->pdu;
	bool nowait = cider_kv_uring_nowait(issue_flags);
	struct cider_kv_cmd cmd;
	struct cider_kv_req *r;
	int ret;

	BUILD_BUG_ON(sizeof(*pdu) > sizeof(ucmd->pdu));
	BUILD_BUG_ON(sizeof(cmd) > CIDER_URING_CMD_AREA);
	if (ucmd->flags || !(issue_flags & IO_URING_F_SQE128))
		return -EINVAL;
	ret = cider_uargs_in_sqe(&cmd, sizeof(cmd), CIDER_KV_CMD_SIZE_VER0,
				 cider_uring_payload(ucmd), ucmd->cmd_op);
	if (ret)
		return ret;
	/* A SCAN's next cursor goes in the CQE's second word. */
	if (cmd.opcode == CIDER_KV_SCAN && !(issue_flags & IO_URING_F_CQE32))
		return -EINVAL;
	/* -EAGAIN without a free request: io_uring retries from a worker. */
	r = cider_kv_build(&cmd, nowait);
	if (IS_ERR(r))
		return cider_kv_uring_refuse(ucmd, PTR_ERR(r), nowait, issue_flags);
	cider_uring_link_init(&r->ulink, ucmd, cider_kv_uring_task);
	r->complete = cider_kv_uring_complete;
	pdu->r = r;
	/* -EAGAIN without a free slot: io_uring retries from a worker. */
	ret = cider_kvs_submit(r->mn, r, nowait);
	if (ret) {
		cider_kv_req_put(r);
		return cider_kv_uring_refuse(ucmd, ret, nowait, issue_flags);
	}
	cider_uring_link_arm(&r->ulink, issue_flags);
	return -EIOCBQUEUED;
}
