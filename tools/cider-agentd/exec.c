// SPDX-License-Identifier: GPL-2.0
/*
 * cider-agentd: one request of cider.ko, checked, run on its node's queue
 * pair as one chain of signaled work requests (in windows of the send
 * queue's depth when it is longer), and answered in place.
 *
 * The staging area of a connection (2 * buf_len, registered) holds the
 * WRITEs' bytes in its first half, copied from the request, and what comes
 * back (READs' bytes, atomics' old values) in its second half, each verb's
 * part padded to 8.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agentd.h"

#define PAD8(n)		(((uint64_t)(n) + 7) & ~(uint64_t)7)
#define ST_PENDING	1	/* not a status the kernel sees: posted, not done */

struct plan {
	struct cider_agent_wr wr;
	uint64_t req_off;	/* WRITE: its bytes in the request */
	uint64_t res_off;	/* READ: its bytes in the result */
	uint64_t stage_off;	/* its bytes in the staging area */
	int status;
	uint64_t value;
};

static struct plan *plan;
static size_t max_nr, buf_len;
static struct ibv_send_wr swr[AGENT_SQ_DEPTH];
static struct ibv_sge sge[AGENT_SQ_DEPTH];

int exec_init(size_t len)
{
	buf_len = len;
	max_nr = (len - sizeof(struct cider_agent_req)) / sizeof(struct cider_agent_wr);
	plan = calloc(max_nr ? max_nr : 1, sizeof(*plan));
	return plan ? 0 : -1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One verb's fields, against the node's region: 0 or -EINVAL. */
static int check_wr(const struct cider_agent_wr *w, uint64_t region_size)
{
	switch (w->op) {
	case CIDER_AGENT_READ:
	case CIDER_AGENT_WRITE:
		if (!w->len || w->len > buf_len)
			return -EINVAL;
		break;
	case CIDER_AGENT_CAS:
	case CIDER_AGENT_FAA:
		if (w->len != 8 || w->offset % 8)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	if (w->offset > region_size || w->len > region_size - w->offset)
		return -EINVAL;
	return 0;
}

/* Check the request of @len bytes in @buf (header in @req) and fill plan[]. */
static int validate(const char *buf, size_t len, const struct cider_agent_req *req)
{
	uint64_t wr_end, req_off, res_off, stage_in = buf_len, stage_out = 0;
	uint32_t i;

	if (len < sizeof(*req) || len > buf_len || req->type != CIDER_AGENT_REQ_BATCH ||
	    req->nr > max_nr || (req->family != AF_INET && req->family != AF_INET6) ||
	    !req->port)
		return -EINVAL;
	wr_end = sizeof(*req) + (uint64_t)req->nr * sizeof(struct cider_agent_wr);
	if (wr_end > len)
		return -EINVAL;
	req_off = wr_end;
	res_off = sizeof(struct cider_agent_res) +
		  (uint64_t)req->nr * sizeof(struct cider_agent_wr_res);
	for (i = 0; i < req->nr; i++) {
		struct plan *p = &plan[i];

		memcpy(&p->wr, buf + sizeof(*req) + i * sizeof(p->wr), sizeof(p->wr));
		if (check_wr(&p->wr, req->region_size))
			return -EINVAL;
		p->status = ST_PENDING;
		p->value = 0;
		if (p->wr.op == CIDER_AGENT_WRITE) {
			p->req_off = req_off;
			p->stage_off = stage_out;
			req_off += PAD8(p->wr.len);
			stage_out += PAD8(p->wr.len);
			continue;
		}
		if (p->wr.op == CIDER_AGENT_READ) {
			p->res_off = res_off;
			res_off += PAD8(p->wr.len);
		}
		p->stage_off = stage_in;
		stage_in += PAD8(p->wr.len);
	}
	if (req_off > len || res_off > buf_len || stage_in > 2 * buf_len)
		return -EINVAL;
	return 0;
}

/*
 * The result: header, statuses, then (when plan[] holds a checked request)
 * each READ's bytes, zero unless it was done on @c.
 */
static void write_result(char *buf, uint32_t nr, int status, bool checked,
			 const struct agent_conn *c)
{
	struct cider_agent_res res = { .status = status, .nr = nr };
	uint32_t i;

	memcpy(buf, &res, sizeof(res));
	for (i = 0; i < nr; i++) {
		struct cider_agent_wr_res wr = { .status = plan[i].status, .value = plan[i].value };
		const struct plan *p = &plan[i];

		memcpy(buf + sizeof(res) + i * sizeof(wr), &wr, sizeof(wr));
		if (!checked || p->wr.op != CIDER_AGENT_READ)
			continue;
		memset(buf + p->res_off, 0, PAD8(p->wr.len));
		if (!p->status && c)
			memcpy(buf + p->res_off, (char *)c->staging + p->stage_off, p->wr.len);
	}
}

/* Every verb of the batch gets @wr_status; the batch @status. */
static void fail_all(char *buf, uint32_t nr, int status, int wr_status, bool checked)
{
	uint32_t i;

	for (i = 0; i < nr; i++) {
		plan[i].status = wr_status;
		plan[i].value = 0;
	}
	write_result(buf, nr, status, checked, NULL);
}

/* plan[@i] as a work request, into swr[@k] / sge[@k]. */
static void build_wr(const struct agent_conn *c, uint32_t i, unsigned int k)
{
	const struct plan *p = &plan[i];
	struct ibv_send_wr *w = &swr[k];
	uint64_t remote = c->hello.addr + p->wr.offset;

	memset(w, 0, sizeof(*w));
	sge[k] = (struct ibv_sge) {
		.addr = (uint64_t)(uintptr_t)c->staging + p->stage_off,
		.length = p->wr.len, .lkey = c->mr->lkey,
	};
	w->wr_id = i;
	w->sg_list = &sge[k];
	w->num_sge = 1;
	w->send_flags = IBV_SEND_SIGNALED;
	switch (p->wr.op) {
	case CIDER_AGENT_READ:
	case CIDER_AGENT_WRITE:
		w->opcode = p->wr.op == CIDER_AGENT_READ ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
		w->wr.rdma.remote_addr = remote;
		w->wr.rdma.rkey = c->hello.rkey;
		break;
	default:
		w->opcode = p->wr.op == CIDER_AGENT_CAS ? IBV_WR_ATOMIC_CMP_AND_SWP :
			    IBV_WR_ATOMIC_FETCH_AND_ADD;
		w->wr.atomic.remote_addr = remote;
		w->wr.atomic.rkey = c->hello.rkey;
		w->wr.atomic.compare_add = p->wr.compare_add;
		w->wr.atomic.swap = p->wr.swap;
		break;
	}
}

/*
 * Post plan[@first..@first+@n) as one chain (one doorbell).  Returns how
 * many were posted; *@err the post's -errno when not all were.
 */
static uint32_t post_chain(struct agent_conn *c, uint32_t first, uint32_t n, int *err)
{
	struct ibv_send_wr *bad = NULL;
	unsigned int k;
	int ret;

	for (k = 0; k < n; k++) {
		build_wr(c, first + k, k);
		swr[k].next = k + 1 < n ? &swr[k + 1] : NULL;
	}
	ret = ibv_post_send(c->id->qp, swr, &bad);
	if (!ret)
		return n;
	*err = -ret;
	logmsg("mn%u: ibv_post_send: %s", c->mn_id, strerror(ret));
	return bad ? (uint32_t)(bad - swr) : 0;
}

/* One completion into plan[]: false when it failed (the QP is in error). */
static bool complete(const struct agent_conn *c, const struct ibv_wc *wc)
{
	struct plan *p = &plan[wc->wr_id];
	bool read = p->wr.op == CIDER_AGENT_READ;

	if (wc->status == IBV_WC_SUCCESS) {
		p->status = 0;
		if (!read && p->wr.op != CIDER_AGENT_WRITE)
			memcpy(&p->value, (char *)c->staging + p->stage_off, 8);
		return true;
	}
	if (wc->status == IBV_WC_WR_FLUSH_ERR) {
		p->status = read ? -ECANCELED : -ECOMM;
		return false;
	}
	logmsg("mn%u: verb %u (op %u, offset 0x%llx): %s", c->mn_id, (unsigned int)wc->wr_id,
	       p->wr.op, (unsigned long long)p->wr.offset, ibv_wc_status_str(wc->status));
	p->status = read ? -EIO : -ECOMM;
	return false;
}

/* Completions polled from @c's CQ into plan[]: how many, or -errno. */
static int poll_some(struct agent_conn *c, bool *failed)
{
	struct ibv_wc wc[16];
	int n, i;

	n = ibv_poll_cq(c->cq, 16, wc);
	if (n < 0)
		return -EIO;
	for (i = 0; i < n; i++)
		if (!complete(c, &wc[i]))
			*failed = true;
	return n;
}

/* Wait for the completion channel until @end: 0, or -ETIMEDOUT / -EIO. */
static int wait_channel(struct agent_conn *c, int64_t end)
{
	struct pollfd pfd = { .fd = c->cc->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *ctx;
	int64_t left = end - now_ms();

	if (left <= 0)
		return -ETIMEDOUT;
	if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
		return -EIO;
	if (!ibv_get_cq_event(c->cc, &cq, &ctx))
		ibv_ack_cq_events(cq, 1);
	else if (errno != EAGAIN && errno != EINTR)
		return -EIO;
	return 0;
}

/* At least one completion by @end (busy or by event): how many, or -errno. */
static int reap(struct agent_conn *c, int64_t end, bool *failed)
{
	unsigned int spins = 0;
	int n;

	for (;;) {
		n = poll_some(c, failed);
		if (n)
			return n;
		if (!opt.events) {
			if (++spins % 1024 == 0 && now_ms() >= end)
				return -ETIMEDOUT;
			continue;
		}
		if (ibv_req_notify_cq(c->cq, 0))
			return -EIO;
		n = poll_some(c, failed);	/* what came before the arming */
		if (n)
			return n;
		n = wait_channel(c, end);
		if (n)
			return n;
	}
}

/* Verbs never done: not posted, or posted with no completion (@err: why). */
static void settle(uint32_t nr, int err)
{
	uint32_t i;

	for (i = 0; i < nr; i++) {
		struct plan *p = &plan[i];

		if (p->status != ST_PENDING)
			continue;
		if (p->wr.op == CIDER_AGENT_READ)
			p->status = err;
		else
			p->status = err == -ECANCELED ? -ECANCELED : -ECOMM;
	}
}

/*
 * Run plan[0..@nr) on @c, in order.  Returns the batch's status: 0, or
 * the post's -errno when no verb was posted.  *@broken when the
 * connection is no longer usable.
 */
static int run(struct agent_conn *c, uint32_t nr, bool *broken)
{
	uint32_t posted = 0, done = 0;
	int64_t end = now_ms() + AGENT_BATCH_MS;
	bool failed = false;
	int err = 0, n;

	while (done < posted || (posted < nr && !failed)) {
		if (!failed && posted < nr && posted - done < c->sq_depth) {
			uint32_t want = nr - posted, room = c->sq_depth - (posted - done);
			uint32_t k = post_chain(c, posted, want < room ? want : room, &err);

			posted += k;
			if (err)
				failed = true;
			continue;
		}
		n = reap(c, end, &failed);
		if (n < 0) {
			logmsg("mn%u: %u of %u verbs unfinished: %s", c->mn_id, posted - done,
			       nr, strerror(-n));
			settle(posted, n == -ETIMEDOUT ? -ETIMEDOUT : -EIO);
			break;
		}
		done += (uint32_t)n;
	}
	settle(nr, -ECANCELED);		/* never posted */
	*broken = failed || done < posted;
	return err && !posted ? err : 0;
}

void exec_request(void *buf, size_t len)
{
	struct cider_agent_req req;
	uint32_t nr;
	struct agent_conn *c;
	bool broken = false;
	int err, status;
	uint32_t i;

	memcpy(&req, buf, sizeof(req));		/* buf_len is larger than a header */
	nr = req.nr <= max_nr ? req.nr : 0;
	if (validate(buf, len, &req)) {
		logmsg("malformed request of %zu bytes (type %u, %u verbs): refused", len,
		       req.type, req.nr);
		fail_all(buf, nr, -EINVAL, -EINVAL, false);
		return;
	}
	if (!nr) {
		write_result(buf, 0, 0, true, NULL);
		return;
	}
	c = conn_get(&req, &err);
	if (!c) {
		fail_all(buf, nr, err, -ENOTCONN, true);
		return;
	}
	for (i = 0; i < nr; i++)
		if (plan[i].wr.op == CIDER_AGENT_WRITE)
			memcpy((char *)c->staging + plan[i].stage_off, (char *)buf + plan[i].req_off,
			       plan[i].wr.len);
	status = run(c, nr, &broken);
	vlog("mn%u: %u verbs, status %d%s", req.mn_id, nr, status, broken ? ", reconnecting" : "");
	write_result(buf, nr, status, true, c);
	if (broken)
		conn_drop(c);
}
