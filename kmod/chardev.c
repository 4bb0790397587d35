// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/cider: the misc device user space talks to, and ioctl dispatch.
 *
 * The file_operations carry .owner, so an open file descriptor pins the
 * module: rmmod fails with -EBUSY until the last descriptor is closed and
 * no ioctl can ever run on freed code.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "agent.h"
#include "cider.h"
#include "compat.h"
#include "mn.h"
#include "stats.h"
#include "uargs.h"
#include "uring.h"

static int cider_get_info(struct cider_info __user *uinfo, unsigned int cmd)
{
	struct cider_info *info;
	int ret;

	info = kmalloc(sizeof(*info), GFP_KERNEL);
	if (!info)
		return -ENOMEM;
	ret = cider_uargs_in(info, sizeof(*info), CIDER_INFO_SIZE_VER0, uinfo, cmd);
	if (ret)
		goto out;
	if (info->flags || info->features ||
	    memchr_inv(info->reserved, 0, sizeof(info->reserved))) {
		ret = -EINVAL;
		goto out;
	}

	/* Only the validated inputs survive into the reply. */
	memset(info, 0, sizeof(*info));
	info->size = _IOC_SIZE(cmd);
	info->abi_version = CIDER_ABI_VERSION;
	info->features = CIDER_FEATURES;
	strscpy(info->version, cider_version, sizeof(info->version));
	cider_ibdev_fill_info(info);
	ret = cider_uargs_out(uinfo, info, sizeof(*info), cmd);
out:
	kfree(info);
	return ret;
}

/*
 * By type, number and direction: the size in @cmd is the caller's
 * structure's (uargs.c), whichever release of the header it had.
 */
static long cider_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (CIDER_IOC_BASE(cmd)) {
	case CIDER_IOC_BASE(CIDER_IOC_GET_INFO):
		return cider_get_info(uarg, cmd);
	case CIDER_IOC_BASE(CIDER_IOC_ATTACH):
		return cider_ioctl_attach(uarg, cmd);
	case CIDER_IOC_BASE(CIDER_IOC_DETACH):
		return cider_ioctl_detach(uarg, cmd);
	case CIDER_IOC_BASE(CIDER_IOC_MN_INFO):
		return cider_ioctl_mn_info(uarg, cmd);
	case CIDER_IOC_BASE(CIDER_IOC_MN_STATS):
		return cider_ioctl_mn_stats(uarg, cmd);
	case CIDER_IOC_BASE(CIDER_IOC_RAW):
		return cider_ioctl_raw(uarg, cmd);
	case CIDER_IOC_BASE(CIDER_IOC_KV):
		return cider_ioctl_kv(uarg, cmd);
	case CIDER_IOC_BASE(CIDER_IOC_AGENT_REGISTER):
		return cider_agent_ioctl_register(file, uarg, cmd);
	default:
		return -ENOTTY;
	}
}

static bool cider_uring_is_kv(const struct io_uring_cmd *cmd)
{
	return CIDER_IOC_BASE(cmd->cmd_op) == CIDER_IOC_BASE(CIDER_IOC_KV);
}

static int cider_uring_dispatch(struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	/* Only commands under way were marked cancelable: RAW, KV, the agent's. */
	if (cider_uring_cancelling(issue_flags)) {
		if (cider_agent_uring_is_mine(cmd))
			cider_agent_uring_cancel(cmd, issue_flags);
		else if (cider_uring_is_kv(cmd))
			cider_kv_uring_cancel(cmd, issue_flags);
		else
			cider_raw_uring_cancel(cmd, issue_flags);
		return 0;
	}
	if (cider_agent_uring_is_mine(cmd))
		return cider_agent_uring_cmd(cmd, issue_flags);
	if (cider_uring_is_kv(cmd))
		return cider_kv_uring_cmd(cmd, issue_flags);
	return cider_uring_cmd(cmd, issue_flags);
}

/*
 * misc_open() leaves the miscdevice in private_data; nothing here needs
 * it, and an open file's private_data names the atomics agent that
 * registered through it (agent.c), none at first.
 */
static int cider_open(struct inode *inode, struct file *file)
{
	file->private_data = NULL;
	return 0;
}

/* The last reference to an open file: an agent's goes with it. */
static int cider_release(struct inode *inode, struct file *file)
{
	cider_agent_release(file);
	return 0;
}

static const struct file_operations cider_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= cider_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.uring_cmd	= cider_uring_dispatch,
	.open		= cider_open,
	.release	= cider_release,
	.llseek		= noop_llseek,
};

static struct miscdevice cider_miscdev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= CIDER_DEVICE_NAME,
	.fops	= &cider_fops,
	.mode	= 0600,
};

int cider_chardev_init(void)
{
	int ret = misc_register(&cider_miscdev);

	if (ret)
		pr_err("misc_register failed: %d\n", ret);
	return ret;
}

void cider_chardev_exit(void)
{
	misc_deregister(&cider_miscdev);
}
