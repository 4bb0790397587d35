/* SPDX-License-Identifier: GPL-2.0 */
/* The array store's 8-byte keys and values, as the KV selftests use them. */
#ifndef CIDER_SELFTEST_KV8_H
#define CIDER_SELFTEST_KV8_H

#include <errno.h>
#include <stdint.h>

#include "cider.h"

/* GET @key's 8-byte value: 0, -errno, or -EBADMSG for any other length. */
static inline int get8(int fd, unsigned int store, uint64_t key, uint64_t *val)
{
	size_t len = sizeof(*val);
	int ret = cider_get(fd, store, &key, sizeof(key), val, &len);

	return ret ? ret : len == 8 ? 0 : -EBADMSG;
}

static inline int put8(int fd, unsigned int store, uint64_t key, uint64_t val)
{
	return cider_put(fd, store, &key, sizeof(key), &val, sizeof(val));
}

#endif
