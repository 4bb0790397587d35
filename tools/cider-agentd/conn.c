// SPDX-License-Identifier: GPL-2.0
/*
 * cider-agentd's connections: one RC queue pair per memory node, made on
 * the first request for its attach generation, as a compute node's
 * channel (struct cider_cn_hello), and dropped when a verb fails, the node
 * disconnects or its device goes away.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agentd.h"

/* Not 0: cider-memd logs channel 0 as a compute node arriving. */
#define AGENT_CHANNEL_BASE	0x10000U

static struct agent_conn *conns;

static struct agent_conn *conn_find(uint32_t mn_id)
{
	struct agent_conn *c;

	for (c = conns; c; c = c->next)
		if (c->mn_id == mn_id)
			return c;
	return NULL;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What an event other than the awaited one means, as -errno. */
static int event_errno(const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_ERROR:
		return ev->status < 0 ? ev->status : -EHOSTUNREACH;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return ev->status < 0 ? ev->status : -ENETUNREACH;
	case RDMA_CM_EVENT_UNREACHABLE:
		return ev->status < 0 ? ev->status : -ETIMEDOUT;
	case RDMA_CM_EVENT_REJECTED:
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return ev->status < 0 ? ev->status : -ECONNREFUSED;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return -ENODEV;
	case RDMA_CM_EVENT_DISCONNECTED:
		return -ECONNRESET;
	default:
		return -EPROTO;
	}
}

/*
 * The next event of @c's channel within @ms: 0 with *@ev (the caller
 * acknowledges it) when it is @want, else -errno (the event acknowledged).
 */
static int wait_event(struct agent_conn *c, enum rdma_cm_event_type want, int ms,
		      struct rdma_cm_event **ev)
{
	int64_t end = now_ms() + ms;
	struct pollfd pfd = { .fd = c->ch->fd, .events = POLLIN };
	int err;

	for (;;) {
		int64_t left = end - now_ms();

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
		if (rdma_get_cm_event(c->ch, ev)) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -errno;
		}
		if ((*ev)->event == want)
			return 0;
		err = event_errno(*ev);
		vlog("mn%u: %s (status %d) while waiting for %s", c->mn_id,
		     rdma_event_str((*ev)->event), (*ev)->status, rdma_event_str(want));
		rdma_ack_cm_event(*ev);
		return err;
	}
}

/* The request's node address, as a sockaddr; and as text, into c->peer. */
static int conn_addr(struct agent_conn *c, struct sockaddr_storage *ss)
{
	char host[INET6_ADDRSTRLEN] = "?";

	memset(ss, 0, sizeof(*ss));
	if (c->family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(c->port);
		memcpy(&s4->sin_addr, c->addr, 4);
		inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
		snprintf(c->peer, sizeof(c->peer), "%s:%u", host, c->port);
		return 0;
	}
	if (c->family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(c->port);
		memcpy(&s6->sin6_addr, c->addr, 16);
		inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
		snprintf(c->peer, sizeof(c->peer), "[%s]:%u", host, c->port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

/* PD, CQ (and its channel), staging MR and QP on the device the route chose. */
static int conn_verbs(struct agent_conn *c, const struct ibv_device_attr *attr)
{
	struct ibv_context *verbs = c->id->verbs;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC };

	c->sq_depth = attr->max_qp_wr < AGENT_SQ_DEPTH ? (unsigned int)attr->max_qp_wr :
		      AGENT_SQ_DEPTH;
	c->pd = ibv_alloc_pd(verbs);
	if (!c->pd)
		return -errno;
	if (opt.events) {
		c->cc = ibv_create_comp_channel(verbs);
		if (!c->cc || set_nonblock(c->cc->fd))
			return -errno;
	}
	c->cq = ibv_create_cq(verbs, (int)c->sq_depth + 1, c, c->cc, 0);
	if (!c->cq)
		return -errno;
	c->staging_len = 2 * (size_t)opt.buf_len;
	if (posix_memalign(&c->staging, 4096, c->staging_len))
		return -ENOMEM;
	c->mr = ibv_reg_mr(c->pd, c->staging, c->staging_len, IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr)
		return -errno;
	qa.send_cq = qa.recv_cq = c->cq;
	qa.cap.max_send_wr = c->sq_depth;
	qa.cap.max_recv_wr = 1;
	qa.cap.max_send_sge = qa.cap.max_recv_sge = 1;
	if (rdma_create_qp(c->id, c->pd, &qa))
		return -errno;
	return 0;
}

/* The MN's hello in the accept of @ev: 0, or -EPROTO with the reason logged. */
static int conn_hello(struct agent_conn *c, const struct rdma_cm_event *ev,
		      uint64_t region_size)
{
	const struct rdma_conn_param *p = &ev->param.conn;

	if (!p->private_data || p->private_data_len < sizeof(c->hello)) {
		logmsg("mn%u (%s): no hello in its accept", c->mn_id, c->peer);
		return -EPROTO;
	}
	memcpy(&c->hello, p->private_data, sizeof(c->hello));
	if (c->hello.magic != CIDER_MN_MAGIC) {
		logmsg("mn%u (%s): not a CIDER memory node", c->mn_id, c->peer);
		return -EPROTO;
	}
	if (c->hello.layout_version != CIDER_LAYOUT_VERSION) {
		logmsg("mn%u (%s): layout %u, this agent knows %u", c->mn_id, c->peer,
		       c->hello.layout_version, CIDER_LAYOUT_VERSION);
		return -EPROTO;
	}
	if (c->hello.size != region_size) {
		logmsg("mn%u (%s): region of %llu bytes, cider.ko attached %llu", c->mn_id,
		       c->peer, (unsigned long long)c->hello.size,
		       (unsigned long long)region_size);
		return -EPROTO;
	}
	return 0;
}

/* rdma_connect as compute node cn_id, and the node's accept. */
static int conn_connect(struct agent_conn *c, const struct ibv_device_attr *attr,
			uint64_t region_size)
{
	struct cider_cn_hello who = {
		.magic = CIDER_CN_MAGIC, .cn_id = c->cn_id,
		.channel = AGENT_CHANNEL_BASE + c->mn_id,
	};
	struct rdma_conn_param param = {
		.private_data = &who, .private_data_len = sizeof(who),
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct rdma_cm_event *ev;
	int err;

	param.initiator_depth = attr->max_qp_init_rd_atom > 255 ? 255 :
				(uint8_t)attr->max_qp_init_rd_atom;
	param.responder_resources = attr->max_qp_rd_atom > 255 ? 255 :
				    (uint8_t)attr->max_qp_rd_atom;
	if (rdma_connect(c->id, &param))
		return -errno;
	err = wait_event(c, RDMA_CM_EVENT_ESTABLISHED, AGENT_CONNECT_MS, &ev);
	if (err)
		return err;
	err = conn_hello(c, ev, region_size);
	rdma_ack_cm_event(ev);
	return err;
}

/* Resolve, set up and connect @c, whose node fields are set. */
static int conn_open(struct agent_conn *c, uint64_t region_size)
{
	struct ibv_device_attr attr;
	struct sockaddr_storage ss;
	struct rdma_cm_event *ev;
	int err;

	err = conn_addr(c, &ss);
	if (err)
		return err;
	c->ch = rdma_create_event_channel();
	if (!c->ch || set_nonblock(c->ch->fd) || rdma_create_id(c->ch, &c->id, c, RDMA_PS_TCP))
		return -errno;
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&ss, AGENT_CONNECT_MS))
		return -errno;
	err = wait_event(c, RDMA_CM_EVENT_ADDR_RESOLVED, AGENT_CONNECT_MS + 500, &ev);
	if (err)
		return err;
	rdma_ack_cm_event(ev);
	if (rdma_resolve_route(c->id, AGENT_CONNECT_MS))
		return -errno;
	err = wait_event(c, RDMA_CM_EVENT_ROUTE_RESOLVED, AGENT_CONNECT_MS + 500, &ev);
	if (err)
		return err;
	rdma_ack_cm_event(ev);
	if (ibv_query_device(c->id->verbs, &attr))
		return -errno;
	if (attr.atomic_cap == IBV_ATOMIC_NONE)
		logmsg("mn%u: %s claims no atomics; trying anyway", c->mn_id,
		       ibv_get_device_name(c->id->verbs->device));
	err = conn_verbs(c, &attr);
	if (err)
		return err;
	return conn_connect(c, &attr, region_size);
}

/* Free what conn_open() made of @c, and @c. */
static void conn_free(struct agent_conn *c)
{
	if (c->id && c->id->qp) {
		rdma_disconnect(c->id);
		rdma_destroy_qp(c->id);
	}
	if (c->mr)
		ibv_dereg_mr(c->mr);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->cc)
		ibv_destroy_comp_channel(c->cc);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->id)
		rdma_destroy_id(c->id);
	if (c->ch)
		rdma_destroy_event_channel(c->ch);
	free(c->staging);
	free(c);
}

void conn_drop(struct agent_conn *c)
{
	struct agent_conn **pp;

	for (pp = &conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	vlog("mn%u: connection dropped", c->mn_id);
	conn_free(c);
}

void conn_drop_all(void)
{
	while (conns)
		conn_drop(conns);
}

/*
 * The devices this process opened through rdma_cm: librdmacm keeps a
 * device's context open as long as the process lives, connections or
 * not, so a device that goes away must see the process go too.
 */
#define MAX_DEVS	16
static char *dev_paths[MAX_DEVS];

static void conn_remember_device(const struct ibv_device *dev)
{
	int i;

	for (i = 0; i < MAX_DEVS && dev_paths[i]; i++)
		if (!strcmp(dev_paths[i], dev->dev_path))
			return;
	if (i < MAX_DEVS)
		dev_paths[i] = strdup(dev->dev_path);
}

/* A device this process holds is being removed: its path went away. */
static const char *conn_removed_device(void)
{
	int i;

	for (i = 0; i < MAX_DEVS && dev_paths[i]; i++)
		if (access(dev_paths[i], F_OK))
			return dev_paths[i];
	return NULL;
}

/* Whether @c serves what @req describes (same attach, same node). */
static bool conn_matches(const struct agent_conn *c, const struct cider_agent_req *req)
{
	return c->generation == req->generation && c->cn_id == req->cn_id &&
	       c->family == req->family && c->port == req->port &&
	       !memcmp(c->addr, req->addr, sizeof(c->addr)) && c->hello.size == req->region_size;
}

struct agent_conn *conn_get(const struct cider_agent_req *req, int *err)
{
	struct agent_conn *c = conn_find(req->mn_id);

	if (c && conn_matches(c, req))
		return c;
	if (c && (int32_t)(req->generation - c->generation) < 0) {
		/* A batch of an attach the node has since replaced: not ours to run. */
		logmsg("mn%u: a request of generation %u, connected for %u: refused",
		       req->mn_id, req->generation, c->generation);
		*err = -ESTALE;
		return NULL;
	}
	if (c)
		conn_drop(c);
	c = calloc(1, sizeof(*c));
	if (!c) {
		*err = -ENOMEM;
		return NULL;
	}
	c->mn_id = req->mn_id;
	c->generation = req->generation;
	c->cn_id = req->cn_id;
	c->family = req->family;
	c->port = req->port;
	memcpy(c->addr, req->addr, sizeof(c->addr));
	*err = conn_open(c, req->region_size);
	if (*err) {
		logmsg("cannot connect to mn%u (%s): %s", c->mn_id, c->peer, strerror(-*err));
		conn_free(c);
		return NULL;
	}
	logmsg("connected to mn%u (%s) via %s", c->mn_id, c->peer,
	       ibv_get_device_name(c->id->verbs->device));
	conn_remember_device(c->id->verbs->device);
	c->next = conns;
	conns = c;
	return c;
}

int conn_fds(int *fds, int max)
{
	struct agent_conn *c;
	int n = 0;

	for (c = conns; c && n < max; c = c->next)
		fds[n++] = c->ch->fd;
	return n;
}

/*
 * Whether @c's device is being removed.  rdma_cm says so only when its
 * turn to let go of the device comes; uverbs may go first and, for a
 * device that cannot disassociate its user contexts (rxe), wait for every
 * process to close it, before rdma_cm tells anyone.  uverbs deletes the
 * device's char device before it waits: its going away is the sign.
 */
static bool conn_device_gone(const struct agent_conn *c)
{
	return c->id->verbs && access(c->id->verbs->device->dev_path, F_OK) != 0;
}

/* Drain @c's event channel: true when @c is to be dropped. */
static bool conn_check(struct agent_conn *c)
{
	struct rdma_cm_event *ev;
	bool drop = false;

	if (conn_device_gone(c)) {
		logmsg("mn%u: RDMA device %s removed", c->mn_id,
		       ibv_get_device_name(c->id->verbs->device));
		return true;
	}
	while (!rdma_get_cm_event(c->ch, &ev)) {
		switch (ev->event) {
		case RDMA_CM_EVENT_DISCONNECTED:
			logmsg("mn%u (%s) disconnected", c->mn_id, c->peer);
			drop = true;
			break;
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			logmsg("mn%u: RDMA device removed", c->mn_id);
			drop = true;
			break;
		default:
			vlog("mn%u: %s", c->mn_id, rdma_event_str(ev->event));
			break;
		}
		rdma_ack_cm_event(ev);
	}
	return drop;
}

int conn_events(void)
{
	struct agent_conn *c = conns, *next;
	const char *gone;

	for (; c; c = next) {
		next = c->next;
		if (conn_check(c))
			conn_drop(c);
	}
	gone = conn_removed_device();
	if (!gone)
		return 0;
	/* Only exiting closes it; the nodes reconnect through the next agent. */
	logmsg("RDMA device %s is being removed: exiting so that its removal can complete", gone);
	return -1;
}
