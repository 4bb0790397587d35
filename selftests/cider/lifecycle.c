// SPDX-License-Identifier: GPL-2.0
/*
 * cider.ko's life cycle: unload and reload any number of times, an open
 * descriptor pins the module, many opens leave no reference behind, and
 * RDMA devices that come and go while the module is loaded are tracked.
 *
 * Needs cider.ko loaded and $CIDER_KO naming the module file; leaves it
 * loaded.  The hot-plug test needs the veth cider1 from tools/vm/rxe-up.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cider.h"
#include "root.h"
#include "sysfs.h"

static bool module_loaded(void)
{
	return access("/sys/module/cider", F_OK) == 0;
}

/* Open /dev/cider and run GET_INFO; the info's nr_devices or -errno. */
static int probe_info(struct cider_info *info)
{
	int fd = cider_open(), ret;

	if (fd < 0)
		return fd;
	ret = cider_get_info(fd, info);
	close(fd);
	return ret ? ret : (int)info->nr_devices;
}

static bool info_has(const struct cider_info *info, const char *name)
{
	unsigned int i;

	for (i = 0; i < info->nr_devices && i < CIDER_INFO_MAX_DEVS; i++)
		if (!strcmp(info->devices[i].name, name))
			return true;
	return false;
}

FIXTURE(mod) {
	int unused;
};

FIXTURE_SETUP(mod)
{
	ASSERT_NE(NULL, getenv("CIDER_KO"));
	if (!module_loaded())
		ASSERT_EQ(0, module_load());
}

FIXTURE_TEARDOWN(mod)
{
	if (!module_loaded())
		EXPECT_EQ(0, module_load());
}

TEST_F(mod, unload_reload_cycles)
{
	struct cider_info info;
	int i, before;

	before = probe_info(&info);
	ASSERT_LE(0, before);
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, module_unload()) TH_LOG("cycle %d", i);
		ASSERT_FALSE(module_loaded());
		ASSERT_NE(0, access(CIDER_DEV_PATH, F_OK));
		ASSERT_EQ(0, module_load()) TH_LOG("cycle %d", i);
		/* Every device is found again on each load. */
		ASSERT_EQ(before, probe_info(&info)) TH_LOG("cycle %d", i);
	}
}

TEST_F(mod, open_descriptor_pins_module)
{
	struct cider_info info;
	int fd;

	fd = cider_open();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EWOULDBLOCK, module_unload());
	EXPECT_TRUE(module_loaded());
	EXPECT_EQ(0, cider_get_info(fd, &info));
	ASSERT_EQ(0, close(fd));
	EXPECT_EQ(0, module_unload());
	EXPECT_FALSE(module_loaded());
}

TEST_F(mod, many_opens_leave_no_reference)
{
	struct cider_info info;
	char refcnt[16];
	int i, fds[64];

	for (i = 0; i < 64; i++) {
		fds[i] = cider_open();
		ASSERT_LE(0, fds[i]);
	}
	ASSERT_EQ(0, sysfs_read("/sys/module/cider/refcnt", refcnt, sizeof(refcnt)));
	EXPECT_EQ(64, atoi(refcnt));
	for (i = 0; i < 64; i++) {
		EXPECT_EQ(0, cider_get_info(fds[i], &info));
		close(fds[i]);
	}
	ASSERT_EQ(0, sysfs_read("/sys/module/cider/refcnt", refcnt, sizeof(refcnt)));
	EXPECT_EQ(0, atoi(refcnt));
	EXPECT_EQ(0, module_unload());
}

static int sh(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST_F(mod, rdma_device_hotplug_is_tracked)
{
	struct cider_info info;
	int before;

	if (access("/sys/class/net/cider1", F_OK))
		SKIP(return, "no cider1 netdev (tools/vm/rxe-up not run)");
	before = probe_info(&info);
	ASSERT_LE(0, before);
	ASSERT_FALSE(info_has(&info, "cidertest0"));

	ASSERT_EQ(0, sh("rdma link add cidertest0 type rxe netdev cider1"));
	EXPECT_EQ(before + 1, probe_info(&info));
	EXPECT_TRUE(info_has(&info, "cidertest0"));

	/* Reload with the new device present: .add runs for it again. */
	EXPECT_EQ(0, module_unload());
	EXPECT_EQ(0, module_load());
	EXPECT_EQ(before + 1, probe_info(&info));

	ASSERT_EQ(0, sh("rdma link delete cidertest0"));
	EXPECT_EQ(before, probe_info(&info));
	EXPECT_FALSE(info_has(&info, "cidertest0"));
}

TEST_F(mod, device_removed_while_descriptor_open)
{
	struct cider_info info;
	int fd, before;

	if (access("/sys/class/net/cider1", F_OK))
		SKIP(return, "no cider1 netdev (tools/vm/rxe-up not run)");
	fd = cider_open();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, cider_get_info(fd, &info));
	before = (int)info.nr_devices;
	ASSERT_EQ(0, sh("rdma link add cidertest1 type rxe netdev cider1"));
	ASSERT_EQ(0, cider_get_info(fd, &info));
	EXPECT_EQ(before + 1, (int)info.nr_devices);
	ASSERT_EQ(0, sh("rdma link delete cidertest1"));
	ASSERT_EQ(0, cider_get_info(fd, &info));
	EXPECT_EQ(before, (int)info.nr_devices);
	close(fd);
}

TEST_HARNESS_MAIN
