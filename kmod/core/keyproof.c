// SPDX-License-Identifier: GPL-2.0
/*
 * The bytes the key proof's MACs cover (keyproof.h).  Every integer is
 * written little-endian, field by field: no structure padding or host
 * order reaches the MAC.
 */
#include "keyproof.h"

/* Labels keep a CN's MAC from ever passing as an MN's, or another use's. */
static const char cider_cn_label[16] = "CIDER cn proof 1";
static const char cider_mn_label[16] = "CIDER mn proof 1";

static u8 *cider_put(u8 *p, u64 v, u32 len)
{
	cider_put_le64(p, v, len);
	return p + len;
}

void cider_proof_cn_msg(u8 *buf, const struct cider_cn_hello *h,
			const struct cider_cn_proof *p,
			const struct cider_proof_addr *from,
			const struct cider_proof_addr *to)
{
	u8 *b = buf;

	memcpy(b, cider_cn_label, 16);
	b = cider_put(b + 16, h->magic, 8);
	b = cider_put(b, h->cn_id, 4);
	b = cider_put(b, h->channel, 4);
	b = cider_put(b, from->kind, 4);
	memcpy(b, from->addr, 16);
	b = cider_put(b + 16, to->kind, 4);
	memcpy(b, to->addr, 16);
	b = cider_put(b + 16, to->port, 2);
	b = cider_put(b, p->time_ns, 8);
	cider_put(b, p->nonce, 8);
}

void cider_proof_mn_msg(u8 *buf, const u8 cn_mac[CIDER_MAC_LEN],
			const struct cider_mn_hello *h)
{
	u8 *b = buf;

	memcpy(b, cider_mn_label, 16);
	memcpy(b + 16, cn_mac, CIDER_MAC_LEN);
	b = cider_put(b + 16 + CIDER_MAC_LEN, h->magic, 8);
	b = cider_put(b, h->layout_version, 4);
	b = cider_put(b, h->rkey, 4);
	b = cider_put(b, h->addr, 8);
	cider_put(b, h->size, 8);
}
