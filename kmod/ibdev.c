// SPDX-License-Identifier: GPL-2.0
/*
 * The registry of RDMA devices cider.ko can use.
 *
 * ib_core calls .add for every device present at registration and for each
 * one that appears later, and .remove before a device goes away (including
 * for every device when the client unregisters), so the list is exactly
 * the set of live devices.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "cider.h"
#include "fault.h"
#include "mn.h"
#include "peerlink.h"

struct cider_ibdev {
	struct list_head node;
	struct ib_device *ibdev;
	/*
	 * One PD for every channel on this device, as nvme-rdma and rtrs;
	 * pd, pd_users and removing are under cider_ibdevs_lock.
	 */
	struct ib_pd *pd;
	unsigned int pd_users;
	bool removing;		/* no PD for new users */
};

static LIST_HEAD(cider_ibdevs);
/* The list, the count, and every device's PD fields. */
static DEFINE_MUTEX(cider_ibdevs_lock);
static unsigned int cider_nr_ibdevs;

static struct ib_client cider_ib_client;

static int cider_ib_add(struct ib_device *ibdev)
{
	struct cider_ibdev *cd;

	cd = kzalloc(sizeof(*cd), GFP_KERNEL);
	if (!cd)
		return -ENOMEM;
	cd->ibdev = ibdev;

	mutex_lock(&cider_ibdevs_lock);
	list_add_tail(&cd->node, &cider_ibdevs);
	cider_nr_ibdevs++;
	mutex_unlock(&cider_ibdevs_lock);

	ib_set_client_data(ibdev, &cider_ib_client, cd);
	pr_info("RDMA device %s added (atomics %s)\n", ibdev->name,
		ibdev->attrs.atomic_cap == IB_ATOMIC_NONE ? "no" : "yes");
	return 0;
}

/*
 * Before rdma_cm's own .remove: our CM ids on @ibdev must be gone by
 * then.  First no channel may take the device's PD any more; a channel
 * that took it before has set its device first (channel.c), so that
 * cider_mn_device_removed() finds its node and tears it down.  Then
 * nothing uses the PD, even with an attach racing the removal.
 */
static void cider_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct cider_ibdev *cd = client_data;

	mutex_lock(&cider_ibdevs_lock);
	cd->removing = true;
	mutex_unlock(&cider_ibdevs_lock);

	cider_mn_device_removed(ibdev);
	cider_peerlink_device_removed(ibdev);
	cider_fault_remove_delay();

	mutex_lock(&cider_ibdevs_lock);
	list_del(&cd->node);
	cider_nr_ibdevs--;
	WARN_ON(cd->pd_users);
	mutex_unlock(&cider_ibdevs_lock);
	pr_info("RDMA device %s removed\n", ibdev->name);
	kfree(cd);
}

static struct ib_client cider_ib_client = {
	.name	= "cider",
	.add	= cider_ib_add,
	.remove	= cider_ib_remove,
};

static struct cider_ibdev *cider_ibdev_find(const struct ib_device *ibdev)
{
	struct cider_ibdev *cd;

	lockdep_assert_held(&cider_ibdevs_lock);
	list_for_each_entry(cd, &cider_ibdevs, node)
		if (cd->ibdev == ibdev)
			return cd;
	return NULL;
}

/*
 * The device's shared PD, allocated by its first user.  ERR_PTR(-ENODEV)
 * once the device is being removed.  Process context.
 */
struct ib_pd *cider_ibdev_get_pd(struct ib_device *ibdev)
{
	struct cider_ibdev *cd;
	struct ib_pd *pd;

	mutex_lock(&cider_ibdevs_lock);
	cd = cider_ibdev_find(ibdev);
	if (!cd || cd->removing) {
		pd = ERR_PTR(-ENODEV);
		goto out;
	}
	if (!cd->pd) {
		pd = ib_alloc_pd(ibdev, 0);
		if (IS_ERR(pd))
			goto out;
		cd->pd = pd;
	}
	cd->pd_users++;
	pd = cd->pd;
out:
	mutex_unlock(&cider_ibdevs_lock);
	return pd;
}

/* The last user frees the PD. */
void cider_ibdev_put_pd(struct ib_device *ibdev)
{
	struct cider_ibdev *cd;

	mutex_lock(&cider_ibdevs_lock);
	cd = cider_ibdev_find(ibdev);
	if (!WARN_ON(!cd || !cd->pd_users) && !--cd->pd_users) {
		ib_dealloc_pd(cd->pd);
		cd->pd = NULL;
	}
	mutex_unlock(&cider_ibdevs_lock);
}

static void cider_ibdev_describe(const struct ib_device *ibdev,
				 struct cider_ibdev_info *out)
{
	strscpy(out->name, ibdev->name, sizeof(out->name));
	out->node_guid = be64_to_cpu(ibdev->node_guid);
	out->port_count = rdma_end_port(ibdev) - rdma_start_port(ibdev) + 1;
	out->max_qp_rd_atom = ibdev->attrs.max_qp_rd_atom;
	if (ibdev->attrs.atomic_cap != IB_ATOMIC_NONE)
		out->flags |= CIDER_IBDEV_F_ATOMIC;
	if (rdma_protocol_roce(ibdev, rdma_start_port(ibdev)))
		out->flags |= CIDER_IBDEV_F_ROCE;
}

/* Fill the device part of a GET_INFO reply; @info arrives zeroed. */
void cider_ibdev_fill_info(struct cider_info *info)
{
	struct cider_ibdev *cd;
	unsigned int i = 0;

	mutex_lock(&cider_ibdevs_lock);
	info->nr_devices = cider_nr_ibdevs;
	list_for_each_entry(cd, &cider_ibdevs, node) {
		if (i == CIDER_INFO_MAX_DEVS)
			break;
		cider_ibdev_describe(cd->ibdev, &info->devices[i++]);
	}
	mutex_unlock(&cider_ibdevs_lock);
}

int cider_ibdev_init(void)
{
	int ret = ib_register_client(&cider_ib_client);

	if (ret)
		pr_err("ib_register_client failed: %d\n", ret);
	return ret;
}

void cider_ibdev_exit(void)
{
	ib_unregister_client(&cider_ib_client);
	WARN_ON(!list_empty(&cider_ibdevs));
}
