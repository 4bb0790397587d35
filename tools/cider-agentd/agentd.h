/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cider-agentd: what its parts share.  cider-agentd.c registers with
 * cider.ko and runs the io_uring loop, exec.c checks and runs one request,
 * conn.c holds the connections to the memory nodes.
 */
#ifndef CIDER_AGENTD_H
#define CIDER_AGENTD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/rdma_cma.h>
#include <linux/cider.h>

#include "layout.h"

#define AGENT_SQ_DEPTH		256	/* send queue: verbs in flight per connection */
#define AGENT_CONNECT_MS	2000	/* each step of a connect */
#define AGENT_BATCH_MS		5000	/* a batch's completions */

struct agent_opts {
	unsigned int tags;
	unsigned int buf_len;
	bool events;		/* completions by event, not by busy polling */
	bool verbose;
	const char *device;
	const char *pid_file;
};

extern struct agent_opts opt;

void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define vlog(...) do { if (opt.verbose) logmsg(__VA_ARGS__); } while (0)

/* One memory node's connection, for the batches of one attach generation. */
struct agent_conn {
	uint32_t mn_id;
	uint32_t generation;
	uint32_t cn_id;
	uint16_t family;
	uint16_t port;
	uint8_t addr[16];
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cc;	/* --events only */
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	void *staging;			/* 2 * buf_len: WRITE payloads, then what comes back */
	size_t staging_len;
	unsigned int sq_depth;
	struct cider_mn_hello hello;
	char peer[64];			/* addr:port, for the log */
	struct agent_conn *next;
};

/*
 * The connection @req wants: the one held, or a new one (dropping one of
 * an older generation).  NULL with the batch's -errno in @err.
 */
struct agent_conn *conn_get(const struct cider_agent_req *req, int *err);
/* Disconnect and free @c (its QP is in error, or its node went away). */
void conn_drop(struct agent_conn *c);
void conn_drop_all(void);
/* The fds the loop polls (each connection's rdma_cm events), up to @max. */
int conn_fds(int *fds, int max);
/* Handle what the connections' event channels hold; drop the gone ones. */
int conn_events(void);

/* Allocate what running requests takes; -1 on failure. */
int exec_init(size_t buf_len);
/*
 * Run the request of @len bytes in @buf (buf_len bytes) and write its
 * result over it.
 */
void exec_request(void *buf, size_t len);

#endif
