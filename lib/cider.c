// SPDX-License-Identifier: LGPL-2.1-or-later
/* libcider: /dev/cider access. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cider.h"
#include "numparse.h"

/*
 * The ABI must look the same to 32- and 64-bit callers and to the module.
 * A structure only grows, at its end (uapi/linux/cider.h, "How the
 * structures grow"); these are the sizes this header has.
 */
_Static_assert(sizeof(struct cider_ibdev_info) == 88, "cider_ibdev_info ABI");
_Static_assert(sizeof(struct cider_info) == 784, "cider_info ABI");
_Static_assert(offsetof(struct cider_info, devices) == 48, "cider_info ABI");
_Static_assert(sizeof(struct cider_attach) == 88, "cider_attach ABI");
_Static_assert(sizeof(struct cider_detach) == 24, "cider_detach ABI");
_Static_assert(sizeof(struct cider_mn_info) == 184, "cider_mn_info ABI");
_Static_assert(offsetof(struct cider_mn_info, atomics) == 176, "cider_mn_info ABI");
_Static_assert(offsetof(struct cider_mn_info, cn_incarnation) == 152, "cider_mn_info ABI");
_Static_assert(offsetof(struct cider_mn_info, reconnects) == 160, "cider_mn_info ABI");
_Static_assert(sizeof(struct cider_mn_stats) == CIDER_MN_STATS_SIZE_VER0, "cider_mn_stats ABI");
_Static_assert(sizeof(struct cider_stat) == 40, "cider_stat ABI");
_Static_assert(sizeof(struct cider_raw_op) == 56, "cider_raw_op ABI");
_Static_assert(sizeof(struct cider_raw_batch) == 40, "cider_raw_batch ABI");
/* The io_uring command area of a 128-byte SQE is 80 bytes. */
_Static_assert(sizeof(struct cider_raw_batch) <= 80, "cider_raw_batch fits an SQE128");
_Static_assert(sizeof(struct cider_info) >= CIDER_INFO_SIZE_VER0, "cider_info only grows");
_Static_assert(offsetof(struct cider_info, features) == 752, "cider_info ABI");

int cider_open(void)
{
	const char *path = getenv("CIDER_DEV");
	int fd;

	fd = open(path && *path ? path : CIDER_DEV_PATH, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int cider_get_info(int fd, struct cider_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	if (ioctl(fd, CIDER_IOC_GET_INFO, info) < 0)
		return -errno;
	return 0;
}

unsigned long long cider_features(const struct cider_info *info)
{
	return info->features ? info->features : CIDER_FEAT_V0;
}

static const char *const cider_feature_names[] = {
	"ext-args", "raw", "kv-array", "kv-hash", "kv-uring", "members", "reconnect", "key",
	"stats", "kv-scan", "agent",
};

const char *cider_feature_name(unsigned int bit)
{
	return bit < sizeof(cider_feature_names) / sizeof(cider_feature_names[0]) ?
	       cider_feature_names[bit] : NULL;
}

int cider_parse_addr(const char *s, struct cider_attach *at)
{
	char host[INET6_ADDRSTRLEN + 2], *port, err[128];
	size_t n;
	uint64_t p;

	port = strrchr(s, ':');
	if (!port || (size_t)(port - s) >= sizeof(host))
		return -EINVAL;
	n = (size_t)(port - s);
	memcpy(host, s, n);
	host[n] = '\0';
	if (cider_num_parse(port + 1, 1, 65535, 0, &p, err, sizeof(err)))
		return -EINVAL;
	memset(at->addr, 0, sizeof(at->addr));
	at->port = (__u16)p;
	if (n > 2 && host[0] == '[' && host[n - 1] == ']') {
		host[n - 1] = '\0';
		at->family = AF_INET6;
		return inet_pton(AF_INET6, host + 1, at->addr) == 1 ? 0 : -EINVAL;
	}
	at->family = AF_INET;
	return inet_pton(AF_INET, host, at->addr) == 1 ? 0 : -EINVAL;
}

void cider_format_addr(unsigned int family, const __u8 addr[16], unsigned int port,
		       char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, addr, host, sizeof(host));
	snprintf(buf, len, family == AF_INET6 ? "[%s]:%u" : "%s:%u", host, port);
}

int cider_attach_key(int fd, const char *addr, unsigned int cn_id, unsigned int timeout_ms,
		     const void *key, size_t key_len, struct cider_attach *out)
{
	struct cider_attach at;
	int ret;

	memset(&at, 0, sizeof(at));
	at.size = sizeof(at);
	ret = cider_parse_addr(addr, &at);
	if (ret)
		return ret;
	at.cn_id = cn_id;
	at.timeout_ms = timeout_ms;
	at.key = (__u64)(uintptr_t)key;
	at.key_len = (__u32)key_len;
	if (key && key_len > UINT32_MAX)
		return -EINVAL;
	if (ioctl(fd, CIDER_IOC_ATTACH, &at) < 0)
		return -errno;
	if (out) {
		*out = at;
		out->key = 0;	/* the caller's buffer, not the module's */
	}
	return 0;
}

int cider_attach(int fd, const char *addr, unsigned int cn_id,
		 unsigned int timeout_ms, struct cider_attach *out)
{
	return cider_attach_key(fd, addr, cn_id, timeout_ms, NULL, 0, out);
}

int cider_detach(int fd, unsigned int mn_id)
{
	struct cider_detach dt;

	memset(&dt, 0, sizeof(dt));
	dt.size = sizeof(dt);
	dt.mn_id = mn_id;
	return ioctl(fd, CIDER_IOC_DETACH, &dt) < 0 ? -errno : 0;
}

int cider_mn_stats(int fd, unsigned int mn_id, struct cider_stat *st, unsigned int *nr)
{
	struct cider_mn_stats a = {
		.size = sizeof(a), .mn_id = mn_id, .nr = *nr,
		.stats = (uint64_t)(uintptr_t)st,
	};

	if (ioctl(fd, CIDER_IOC_MN_STATS, &a) < 0)
		return -errno;
	*nr = a.nr;
	return 0;
}

int cider_mn_info(int fd, unsigned int mn_id, struct cider_mn_info *mi)
{
	memset(mi, 0, sizeof(*mi));
	mi->size = sizeof(*mi);
	mi->mn_id = mn_id;
	if (ioctl(fd, CIDER_IOC_MN_INFO, mi) == 0)
		return 0;
	if (errno != ENOTTY)
		return -errno;
	/*
	 * A module from before growing structures (release 0.1.0, without
	 * CIDER_FEAT_EXT_ARGS) knows the structure's first size only: ask
	 * again with it.  The fields past it stay 0 ("unknown").
	 */
	memset(mi, 0, sizeof(*mi));
	mi->size = CIDER_MN_INFO_SIZE_VER0;
	mi->mn_id = mn_id;
	return ioctl(fd, _IOC(_IOC_READ | _IOC_WRITE, CIDER_IOC_MAGIC, _IOC_NR(CIDER_IOC_MN_INFO),
			      CIDER_MN_INFO_SIZE_VER0), mi) < 0 ? -errno : 0;
}

void cider_raw_batch_init(struct cider_raw_batch *rb, unsigned int mn_id,
			  struct cider_raw_op *ops, unsigned int nr)
{
	memset(rb, 0, sizeof(*rb));
	rb->size = sizeof(*rb);
	rb->mn_id = mn_id;
	rb->nr_ops = nr;
	rb->ops = (__u64)(uintptr_t)ops;
}

int cider_raw(int fd, unsigned int mn_id, struct cider_raw_op *ops, unsigned int nr)
{
	struct cider_raw_batch rb;

	cider_raw_batch_init(&rb, mn_id, ops, nr);
	return ioctl(fd, CIDER_IOC_RAW, &rb) < 0 ? -errno : 0;
}

const char *cider_strerror(int err)
{
	switch (-err) {
	case ENOENT:
		return "no " CIDER_DEV_PATH ": is cider.ko loaded?";
	case EACCES:
	case EPERM:
		return "permission denied on " CIDER_DEV_PATH;
	case ENOTTY:
		return "not a cider device, or cider.ko too old for this request";
	case EOPNOTSUPP:
		return "the RDMA device cannot do what CIDER needs (see the kernel log)";
	case EPROTO:
		return "not a CIDER memory node, another layout version, or a store that "
		       "needs features this module lacks (see the kernel log)";
	case EADDRINUSE:
		return "another live compute node holds that cn id on the memory node";
	case ENOTCONN:
		return "the memory node was lost or detached";
	default:
		return strerror(-err);
	}
}
