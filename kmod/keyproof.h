/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The store's shared key on the compute node: the proof a connect request
 * carries and the check of the memory node's proof in its accept
 * (core/keyproof.h says what is proven and why so).
 */
#ifndef _CIDER_KEYPROOF_H
#define _CIDER_KEYPROOF_H

#include <linux/socket.h>
#include <linux/types.h>

#include "core/keyproof.h"

struct crypto_shash;

struct crypto_shash *cider_key_new(const void __user *ukey, u32 len);
void cider_key_free(struct crypto_shash *key);
int cider_key_prove(struct crypto_shash *key, const struct cider_cn_hello *h,
		    const struct sockaddr *src, const struct sockaddr *dst,
		    struct cider_cn_proof *p);
int cider_key_check(struct crypto_shash *key, const struct cider_cn_proof *p,
		    const struct cider_mn_hello *h, const struct cider_mn_proof *mp);

#endif
