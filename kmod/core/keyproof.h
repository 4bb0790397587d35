/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The key proof: how a compute node shows a memory node that it holds the
 * store's shared key, and how the node shows it back (cider-memd
 * --key-file, ciderctl attach --key-file).
 *
 * The proof rides in the connection set-up's private data, so that a
 * connect stays one round trip and the memory node stays passive (no
 * message exchange on its QPs, which serve only one-sided verbs):
 *  - the CN's connect request carries, after its hello, a timestamp, a
 *    random nonce and an HMAC-SHA256 (first 16 bytes) over the hello,
 *    the CN's own address, the memory node's address and port it
 *    connects to (a captured request is good for no other node, nor for
 *    another port of the same host), the timestamp and the nonce;
 *  - the memory node admits it when the MAC is right, the timestamp is
 *    within CIDER_PROOF_WINDOW_NS of its own clock, and it has not seen
 *    that MAC within the window (a replay); only then does its accept
 *    hand out the region's rkey;
 *  - the accept carries, after the MN's hello, an HMAC over the CN's MAC
 *    and that hello: the CN knows it reached a node with the key (not one
 *    that answers anything), and that the rkey is the keyed node's.
 * Why not a nonce exchange (the MN sends a challenge, the rkey follows the
 * answer): it needs messages the passive memory node does not otherwise
 * send, and a second round trip on every channel of every (re)connect.
 * The price of the timestamp: clocks within the window (NTP does it).
 *
 * Here are only the bytes each MAC covers, so that cider.ko (the kernel
 * crypto API) and cider-memd (libcrypto) compute the same thing; each side
 * computes the HMAC with its own library.
 */
#ifndef _CIDER_CORE_KEYPROOF_H
#define _CIDER_CORE_KEYPROOF_H

#include "layout.h"

/* A key is CIDER_KEY_MIN_LEN..CIDER_KEY_MAX_LEN bytes (uapi/linux/cider.h). */

#define CIDER_PROOF_WINDOW_NS	(30ULL * 1000000000ULL)	/* either side of the MN's clock */

/* The address kinds a proof names (not AF_*: the core uses no libc). */
#define CIDER_PROOF_IPV4	4
#define CIDER_PROOF_IPV6	6

/* An address as the proof covers it: IPv4 in the first 4 bytes. */
struct cider_proof_addr {
	u32 kind;		/* CIDER_PROOF_IPV4 or CIDER_PROOF_IPV6 */
	u8 addr[16];
	u16 port;		/* host order; the memory node's only */
};

#define CIDER_PROOF_CN_MSG_LEN	(16 + 16 + (4 + 16) + (4 + 16 + 2) + 8 + 8)
#define CIDER_PROOF_MN_MSG_LEN	(16 + CIDER_MAC_LEN + 32)

/* The bytes a CN's MAC covers, CIDER_PROOF_CN_MSG_LEN of them at @buf. */
void cider_proof_cn_msg(u8 *buf, const struct cider_cn_hello *h,
			const struct cider_cn_proof *p,
			const struct cider_proof_addr *from,
			const struct cider_proof_addr *to);

/* The bytes the MN's MAC covers: the CN's MAC and the MN's hello. */
void cider_proof_mn_msg(u8 *buf, const u8 cn_mac[CIDER_MAC_LEN],
			const struct cider_mn_hello *h);

/* @time_ns, a proof's, is within the window of @now_ns (the MN's clock). */
static inline bool cider_proof_fresh(u64 now_ns, u64 time_ns)
{
	u64 d = now_ns > time_ns ? now_ns - time_ns : time_ns - now_ns;

	return d <= CIDER_PROOF_WINDOW_NS;
}

/* Constant-time comparison of two MACs: 0 when equal. */
static inline int cider_mac_differs(const u8 *a, const u8 *b)
{
	u8 d = 0;
	int i;

	for (i = 0; i < CIDER_MAC_LEN; i++)
		d |= a[i] ^ b[i];
	return d;
}

#endif
