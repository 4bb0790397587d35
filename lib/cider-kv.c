// SPDX-License-Identifier: LGPL-2.1-or-later
/* libcider: key-value operations through CIDER_IOC_KV. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>

#include "cider.h"

_Static_assert(sizeof(struct cider_kv_cmd) == 56, "cider_kv_cmd ABI");
/* The io_uring command area of a 128-byte SQE is 80 bytes. */
_Static_assert(sizeof(struct cider_kv_cmd) <= 80, "cider_kv_cmd fits an SQE128");

int cider_kv_cmd_init(struct cider_kv_cmd *cmd, unsigned int store, unsigned int opcode,
		      const void *key, size_t key_len, const void *value, size_t value_len)
{
	/* Lengths above 32 bits would wrap into valid-looking ones. */
	if (key_len > UINT32_MAX || value_len > UINT32_MAX)
		return -EINVAL;
	memset(cmd, 0, sizeof(*cmd));
	cmd->size = sizeof(*cmd);
	cmd->store = store;
	cmd->opcode = opcode;
	cmd->key = (__u64)(uintptr_t)key;
	cmd->key_len = (__u32)key_len;
	cmd->value = (__u64)(uintptr_t)value;
	cmd->value_len = (__u32)value_len;
	return 0;
}

static int cider_kv(int fd, struct cider_kv_cmd *cmd)
{
	int ret = ioctl(fd, CIDER_IOC_KV, cmd);

	return ret < 0 ? -errno : ret;
}

int cider_get(int fd, unsigned int store, const void *key, size_t key_len,
	      void *value, size_t *value_len)
{
	struct cider_kv_cmd cmd;
	int ret;

	ret = cider_kv_cmd_init(&cmd, store, CIDER_KV_GET, key, key_len, value, *value_len);
	if (ret)
		return ret;
	ret = cider_kv(fd, &cmd);
	if (ret >= 0)
		*value_len = (size_t)ret;
	else if (ret == -ERANGE)
		*value_len = cmd.value_len;
	return ret < 0 ? ret : 0;
}

static int cider_kv_write(int fd, unsigned int store, unsigned int opcode, const void *key,
			  size_t key_len, const void *value, size_t value_len)
{
	struct cider_kv_cmd cmd;
	int ret;

	ret = cider_kv_cmd_init(&cmd, store, opcode, key, key_len, value, value_len);
	return ret ? ret : cider_kv(fd, &cmd);
}

int cider_put(int fd, unsigned int store, const void *key, size_t key_len,
	      const void *value, size_t value_len)
{
	return cider_kv_write(fd, store, CIDER_KV_PUT, key, key_len, value, value_len);
}

int cider_insert(int fd, unsigned int store, const void *key, size_t key_len,
		 const void *value, size_t value_len)
{
	return cider_kv_write(fd, store, CIDER_KV_INSERT, key, key_len, value, value_len);
}

int cider_update(int fd, unsigned int store, const void *key, size_t key_len,
		 const void *value, size_t value_len)
{
	return cider_kv_write(fd, store, CIDER_KV_UPDATE, key, key_len, value, value_len);
}

int cider_delete(int fd, unsigned int store, const void *key, size_t key_len)
{
	return cider_kv_write(fd, store, CIDER_KV_DELETE, key, key_len, NULL, 0);
}

int cider_scan(int fd, unsigned int store, const void *prefix, size_t prefix_len,
	       uint64_t *cursor, unsigned int count, void *buf, size_t *len)
{
	struct cider_kv_cmd cmd;
	int ret;

	ret = cider_kv_cmd_init(&cmd, store, CIDER_KV_SCAN, prefix, prefix_len, buf, *len);
	if (ret)
		return ret;
	cmd.cursor = *cursor;
	cmd.count = count;
	ret = cider_kv(fd, &cmd);
	if (ret < 0)
		return ret;
	*cursor = cmd.cursor;
	*len = cmd.value_len;
	return ret;
}

const void *cider_scan_rec(const void *buf, size_t len, size_t *at, size_t *key_len)
{
	const unsigned char *b = buf;
	__u32 klen;

	if (*at + sizeof(klen) > len)
		return NULL;
	memcpy(&klen, b + *at, sizeof(klen));
	if (klen > CIDER_KV_MAX_KEY || *at + CIDER_KV_SCAN_REC_SIZE(klen) > len)
		return NULL;
	*key_len = klen;
	*at += CIDER_KV_SCAN_REC_SIZE(klen);
	return b + *at - CIDER_KV_SCAN_REC_SIZE(klen) + sizeof(klen);
}

const char *cider_kv_strerror(int err)
{
	switch (-err) {
	case ENOENT:
		return "no such key";
	case EEXIST:
		return "the key exists";
	case ENOSPC:
		return "the store is full";
	case ERANGE:
		return "the value is larger than the buffer";
	case ENAMETOOLONG:
		return "key too long for the store";
	case E2BIG:
		return "value too long for the store";
	case EDOM:
		return "key outside the store's key range";
	case ENXIO:
		return "no such store (no attached memory node with that id)";
	case ENOTCONN:
		return "the memory node was lost; the operation did not happen";
	case ECOMM:
		return "the memory node was lost; the operation may or may not have happened";
	default:
		return cider_strerror(err);
	}
}
