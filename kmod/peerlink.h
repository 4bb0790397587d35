/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Links between compute nodes in different kernels (peerlink.c): RC
 * SEND/RECV connections made lazily from the membership table, one per
 * direction, that carry the peer layer's wire format (peer.h).
 */
#ifndef _CIDER_PEERLINK_H
#define _CIDER_PEERLINK_H

#include <linux/types.h>

struct cider_peer_sink;
struct cider_msg;
struct ib_device;

int cider_peerlink_init(void);
void cider_peerlink_exit(void);
/*
 * The listener's port (host order) for peers of address family @family,
 * to announce in the membership table; 0: none (nobody connects).
 */
u16 cider_peerlink_port(int family);
/*
 * Send @m to core CN @to_cn of compute node @cn over a link (any context,
 * under RCU, @from live): 0 sent or queued until the link is up,
 * -ENOTCONN no link (one is being made), -ENOBUFS its queue is full.
 */
int cider_peerlink_send(struct cider_peer_sink *from, u32 cn, u32 to_cn,
			const struct cider_msg *m);
void cider_peerlink_sink_init(struct cider_peer_sink *sink);
/* Every link of @sink, made or accepted, is gone.  Process context, @sink unregistered. */
void cider_peerlink_close(struct cider_peer_sink *sink);
/* Every link on @ibdev is gone (ib_client .remove). */
void cider_peerlink_device_removed(struct ib_device *ibdev);

#endif
