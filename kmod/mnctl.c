// SPDX-License-Identifier: GPL-2.0
/*
 * The memory-node ioctls of /dev/cider: ATTACH, DETACH and MN_INFO.  What
 * user space hands in is checked here (capability, sizes, reserved
 * fields, ranges); the node's life is mn.c's.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/string.h>

#include "cider.h"
#include "core/store.h"
#include "keyproof.h"
#include "mn.h"
#include "uargs.h"
#include "vocab.h"

static int cider_attach_check(const struct cider_attach *at)
{
	const u32 both = CIDER_ATTACH_ATOMICS_KERNEL | CIDER_ATTACH_ATOMICS_AGENT;

	if ((at->flags & ~both) || (at->flags & both) == both || at->reserved0 ||
	    at->reserved1 || memchr_inv(at->reserved, 0, sizeof(at->reserved)))
		return -EINVAL;
	if (at->cn_id > CIDER_MAX_CN_ID || !at->port ||
	    at->timeout_ms > CIDER_ATTACH_MAX_TIMEOUT_MS)
		return -EINVAL;
	if (at->key ? at->key_len < CIDER_KEY_MIN_LEN || at->key_len > CIDER_KEY_MAX_LEN :
		      at->key_len)
		return -EINVAL;
	if (at->family == AF_INET)
		return memchr_inv(at->addr + 4, 0, 12) ? -EINVAL : 0;
	return at->family == AF_INET6 ? 0 : -EINVAL;
}

long cider_ioctl_attach(void __user *uarg, unsigned int cmd)
{
	struct crypto_shash *key = NULL;
	struct cider_attach at;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = cider_uargs_in(&at, sizeof(at), CIDER_ATTACH_SIZE_VER0, uarg, cmd);
	ret = ret ?: cider_attach_check(&at);
	if (ret)
		return ret;
	if (at.flags & CIDER_ATTACH_ATOMICS_AGENT) {
		/* The agent cannot prove the store's key on its connections yet. */
		if (at.key)
			return -EOPNOTSUPP;
		if (!cider_agent_registered())
			return -ENXIO;
	}
	if (at.key) {
		key = cider_key_new(u64_to_user_ptr(at.key), at.key_len);
		if (IS_ERR(key))
			return PTR_ERR(key);
	}
	ret = cider_mn_attach(&at, key);
	if (!ret)	/* a fault leaves it attached: the node shows in MN_INFO */
		ret = cider_uargs_out(uarg, &at, sizeof(at), cmd);
	return ret;
}

long cider_ioctl_detach(void __user *uarg, unsigned int cmd)
{
	struct cider_detach dt;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = cider_uargs_in(&dt, sizeof(dt), CIDER_DETACH_SIZE_VER0, uarg, cmd);
	if (ret)
		return ret;
	if (memchr_inv(dt.reserved, 0, sizeof(dt.reserved)))
		return -EINVAL;
	return cider_mn_detach(dt.mn_id);
}

/* The ABI numbers index and mode as the superblock's lists do (vocab.h). */
CIDER_SB_INDEXES(CIDER_STORE_CHECK)
CIDER_SB_MODES(CIDER_STORE_CHECK)

/* MN_INFO's answer for @mn (under the node list's lock: cider_mn_describe()). */
static void cider_mn_info_fill(const struct cider_mn *mn, void *arg)
{
	struct cider_mn_info *mi = arg;

	mi->mn_id = mn->id;
	mi->state = cider_mn_uapi_state(mn);
	mi->dead_reason = mi->state == CIDER_MN_DEAD ? READ_ONCE(mn->dead_reason) : 0;
	mi->cn_id = mn->cn_id;
	mi->family = mn->addr.ss_family;
	if (mi->family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)&mn->addr;

		mi->port = ntohs(sin->sin_port);
		memcpy(mi->addr, &sin->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&mn->addr;

		mi->port = ntohs(sin6->sin6_port);
		memcpy(mi->addr, &sin6->sin6_addr, 16);
	}
	mi->nr_channels = mn->nr_chans;
	mi->layout_version = CIDER_LAYOUT_VERSION;
	mi->region_size = mn->size;
	strscpy(mi->ibdev, mn->ibdev_name, sizeof(mi->ibdev));
	/* The superblock numbers index and mode as the ABI does. */
	mi->store_index = mn->sb.index;
	mi->store_mode = mn->sb.mode;
	mi->store_keys = mn->sb.nr_keys;
	mi->max_key_len = mn->sb.max_key_len;
	mi->max_value_len = mn->sb.max_value_len;
	mi->cn_incarnation = cider_member_incarnation(&mn->member);
	mi->reconnects = READ_ONCE(mn->reconnects);
	mi->reconnect_attempts = READ_ONCE(mn->reconnect_attempts);
	mi->lost_reason = READ_ONCE(mn->lost_reason);
	mi->last_reason = READ_ONCE(mn->last_reason);
	mi->atomics = mn->atomics;
}

long cider_ioctl_mn_info(void __user *uarg, unsigned int cmd)
{
	struct cider_mn_info mi;
	unsigned long id;
	int ret;

	ret = cider_uargs_in(&mi, sizeof(mi), CIDER_MN_INFO_SIZE_VER0, uarg, cmd);
	if (ret)
		return ret;
	if (memchr_inv(mi.reserved, 0, sizeof(mi.reserved)) || mi.reserved2)
		return -EINVAL;
	id = mi.mn_id;
	memset(&mi, 0, sizeof(mi));
	mi.size = _IOC_SIZE(cmd);
	ret = cider_mn_describe(id, cider_mn_info_fill, &mi);
	return ret ?: cider_uargs_out(uarg, &mi, sizeof(mi), cmd);
}

