// SPDX-License-Identifier: GPL-2.0
/*
 * The store's shared key on the compute node (keyproof.h).  The key's
 * bytes live only in the HMAC transform, which keeps the hashed inner and
 * outer pads rather than the key, and which the crypto API frees with
 * kfree_sensitive(); the copy from user space is wiped at once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/hash.h>
#include <crypto/sha2.h>
#include <linux/err.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/random.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <net/ipv6.h>

#include <linux/cider.h>

#include "keyproof.h"

/* The transform for @len key bytes at @ukey (checked by the caller). */
struct crypto_shash *cider_key_new(const void __user *ukey, u32 len)
{
	u8 key[CIDER_KEY_MAX_LEN];
	struct crypto_shash *tfm;
	int ret;

	if (len < CIDER_KEY_MIN_LEN || len > sizeof(key))
		return ERR_PTR(-EINVAL);
	tfm = crypto_alloc_shash("hmac(sha256)", 0, 0);
	if (IS_ERR(tfm) && PTR_ERR(tfm) == -ENOENT) {
		pr_warn("attach with a key: no hmac(sha256) in this kernel\n");
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (IS_ERR(tfm))
		return tfm;
	ret = copy_from_user(key, ukey, len) ? -EFAULT : 0;
	if (!ret)
		ret = crypto_shash_setkey(tfm, key, len);
	memzero_explicit(key, sizeof(key));
	if (ret) {
		crypto_free_shash(tfm);
		return ERR_PTR(ret);
	}
	return tfm;
}

void cider_key_free(struct crypto_shash *key)
{
	if (key)
		crypto_free_shash(key);
}

/* The first CIDER_MAC_LEN bytes of the HMAC of @len bytes at @msg. */
static int cider_key_mac(struct crypto_shash *key, const u8 *msg, unsigned int len,
			 u8 mac[CIDER_MAC_LEN])
{
	u8 full[SHA256_DIGEST_SIZE];
	int ret;

	ret = crypto_shash_tfm_digest(key, msg, len, full);
	memcpy(mac, full, CIDER_MAC_LEN);
	memzero_explicit(full, sizeof(full));
	return ret;
}

/*
 * @sa as the proof names it: an IPv4-mapped IPv6 address as IPv4; the
 * port when @port (the memory node's).
 */
static int cider_key_addr(const struct sockaddr *sa, bool port, struct cider_proof_addr *a)
{
	const struct in6_addr *in6;

	memset(a, 0, sizeof(*a));
	if (sa->sa_family == AF_INET) {
		a->kind = CIDER_PROOF_IPV4;
		memcpy(a->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		if (port)
			a->port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
		return 0;
	}
	if (sa->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	if (port)
		a->port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
	in6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
	if (ipv6_addr_v4mapped(in6)) {
		a->kind = CIDER_PROOF_IPV4;
		memcpy(a->addr, &in6->s6_addr32[3], 4);
	} else {
		a->kind = CIDER_PROOF_IPV6;
		memcpy(a->addr, in6, 16);
	}
	return 0;
}

/*
 * Fill @p: the proof that hello @h, sent from @src to the memory node at
 * @dst, comes from a key holder.
 */
int cider_key_prove(struct crypto_shash *key, const struct cider_cn_hello *h,
		    const struct sockaddr *src, const struct sockaddr *dst,
		    struct cider_cn_proof *p)
{
	u8 msg[CIDER_PROOF_CN_MSG_LEN];
	struct cider_proof_addr from, to;
	int ret;

	ret = cider_key_addr(src, false, &from) ?: cider_key_addr(dst, true, &to);
	if (ret)
		return ret;
	p->time_ns = ktime_get_real_ns();
	p->nonce = get_random_u64();
	cider_proof_cn_msg(msg, h, p, &from, &to);
	return cider_key_mac(key, msg, sizeof(msg), p->mac);
}

/*
 * 0 when @mp, in the accept that answered our proof @p, shows that the
 * node that sent hello @h holds the key; else -ENOKEY.
 */
int cider_key_check(struct crypto_shash *key, const struct cider_cn_proof *p,
		    const struct cider_mn_hello *h, const struct cider_mn_proof *mp)
{
	u8 msg[CIDER_PROOF_MN_MSG_LEN], mac[CIDER_MAC_LEN];
	int ret;

	cider_proof_mn_msg(msg, p->mac, h);
	ret = cider_key_mac(key, msg, sizeof(msg), mac);
	if (ret)
		return ret;
	return cider_mac_differs(mac, mp->mac) ? -ENOKEY : 0;
}
