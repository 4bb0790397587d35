// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/cider and CIDER_IOC_GET_INFO: the node exists, the reply agrees with
 * what sysfs says about the module and the RDMA devices, and every bad
 * request is refused with the documented errno.
 *
 * Needs cider.ko loaded.  $CIDER_EXPECT_IBDEV names a device that must be
 * present (the VM runner sets rxe0).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cider.h"
#include "root.h"
#include "grow.h"
#include "sysfs.h"

/* ioctl() as -errno, so ASSERT_EQ shows which errno came back. */
static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

static void info_init(struct cider_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
}

FIXTURE(dev) {
	int fd;
	struct cider_info info;
};

FIXTURE_SETUP(dev)
{
	self->fd = open(CIDER_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", CIDER_DEV_PATH, strerror(errno));
	info_init(&self->info);
}

FIXTURE_TEARDOWN(dev)
{
	close(self->fd);
}

TEST(node_is_misc_char_device)
{
	unsigned int maj, min;
	char buf[32];
	struct stat st;

	ASSERT_EQ(0, stat(CIDER_DEV_PATH, &st));
	ASSERT_TRUE(S_ISCHR(st.st_mode));
	ASSERT_EQ(0600, st.st_mode & 07777);
	ASSERT_EQ(0, sysfs_read("/sys/class/misc/" CIDER_DEVICE_NAME "/dev", buf, sizeof(buf)));
	ASSERT_EQ(2, sscanf(buf, "%u:%u", &maj, &min));
	ASSERT_EQ(maj, major(st.st_rdev));
	ASSERT_EQ(min, minor(st.st_rdev));
}

TEST_F(dev, info_reports_module_version_and_abi)
{
	char version[64];

	ASSERT_EQ(0, xioctl(self->fd, CIDER_IOC_GET_INFO, &self->info));
	ASSERT_EQ(sizeof(self->info), self->info.size);
	ASSERT_EQ(CIDER_ABI_VERSION, self->info.abi_version);
	ASSERT_EQ(0, sysfs_read("/sys/module/cider/version", version, sizeof(version)));
	ASSERT_STREQ(version, self->info.version);
	ASSERT_EQ(0, self->info.flags);
}

TEST_F(dev, info_devices_match_sysfs)
{
	const char *expect = getenv("CIDER_EXPECT_IBDEV");
	unsigned int i, n, found = 0;
	char names[CIDER_INFO_MAX_DEVS][CIDER_IBDEV_NAME_LEN];
	int nsys;

	nsys = sysfs_list("/sys/class/infiniband", names, CIDER_INFO_MAX_DEVS);
	ASSERT_LE(0, nsys);
	if (nsys == 0 && !expect)
		SKIP(return, "no RDMA device in /sys/class/infiniband");

	ASSERT_EQ(0, xioctl(self->fd, CIDER_IOC_GET_INFO, &self->info));
	ASSERT_EQ(nsys, self->info.nr_devices);
	n = self->info.nr_devices;
	for (i = 0; i < n && i < CIDER_INFO_MAX_DEVS; i++) {
		const struct cider_ibdev_info *d = &self->info.devices[i];

		ASSERT_NE(NULL, memchr(d->name, 0, sizeof(d->name)));
		ASSERT_TRUE(sysfs_listed(names, nsys, d->name)) TH_LOG("%s", d->name);
		ASSERT_EQ(0, d->reserved);
		if (expect && !strcmp(expect, d->name))
			found++;
	}
	if (expect)
		ASSERT_EQ(1, found) TH_LOG("%s not reported", expect);
}

TEST_F(dev, info_describes_expected_device)
{
	const char *expect = getenv("CIDER_EXPECT_IBDEV");
	const struct cider_ibdev_info *d = NULL;
	unsigned int i;
	char path[128], buf[64];
	unsigned long long guid;
	unsigned int a, b, c, e;

	if (!expect)
		SKIP(return, "CIDER_EXPECT_IBDEV not set");
	ASSERT_EQ(0, xioctl(self->fd, CIDER_IOC_GET_INFO, &self->info));
	for (i = 0; i < self->info.nr_devices && i < CIDER_INFO_MAX_DEVS; i++)
		if (!strcmp(self->info.devices[i].name, expect))
			d = &self->info.devices[i];
	ASSERT_NE(NULL, d);

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/node_guid", expect);
	ASSERT_EQ(0, sysfs_read(path, buf, sizeof(buf)));
	ASSERT_EQ(4, sscanf(buf, "%x:%x:%x:%x", &a, &b, &c, &e));
	guid = (unsigned long long)a << 48 | (unsigned long long)b << 32 | c << 16 | e;
	ASSERT_EQ(guid, d->node_guid);
	ASSERT_EQ(1, d->port_count);
	/* Soft-RoCE: RoCE, 8-byte atomics, a non-zero READ/atomic depth. */
	if (!strncmp(expect, "rxe", 3)) {
		ASSERT_TRUE(d->flags & CIDER_IBDEV_F_ROCE);
		ASSERT_TRUE(d->flags & CIDER_IBDEV_F_ATOMIC);
		ASSERT_LT(0, d->max_qp_rd_atom);
	}
}

TEST_F(dev, outputs_on_input_are_ignored)
{
	memset(self->info.version, 'x', sizeof(self->info.version));
	memset(self->info.devices, 0xa5, sizeof(self->info.devices));
	self->info.abi_version = 0xdead;
	self->info.nr_devices = 0xbeef;
	ASSERT_EQ(0, xioctl(self->fd, CIDER_IOC_GET_INFO, &self->info));
	ASSERT_EQ(CIDER_ABI_VERSION, self->info.abi_version);
	ASSERT_NE(NULL, memchr(self->info.version, 0, sizeof(self->info.version)));
	ASSERT_GT(0xbeef, self->info.nr_devices);
}

TEST_F(dev, unknown_ioctl_numbers_are_enotty)
{
	const unsigned long bad[] = {
		_IOWR(CIDER_IOC_MAGIC, 0x7f, struct cider_info),	/* unknown nr */
		_IOWR(CIDER_IOC_MAGIC + 1, 0x00, struct cider_info),	/* other magic */
		_IOR(CIDER_IOC_MAGIC, 0x00, struct cider_info),	/* wrong dir */
		_IOW(CIDER_IOC_MAGIC, 0x00, struct cider_info),
		_IO(CIDER_IOC_MAGIC, 0x00),
		0,
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unsigned long cmd = bad[i];

		EXPECT_EQ(-ENOTTY, xioctl(self->fd, cmd, &self->info))
			TH_LOG("cmd %#lx", cmd);
	}
}

TEST_F(dev, info_reports_what_the_module_can_do)
{
	const unsigned long long want = CIDER_FEAT_EXT_ARGS | CIDER_FEAT_RAW | CIDER_FEAT_KV_ARRAY |
					CIDER_FEAT_KV_HASH | CIDER_FEAT_KV_URING | CIDER_FEAT_MEMBERS |
					CIDER_FEAT_RECONNECT | CIDER_FEAT_KEY | CIDER_FEAT_STATS |
					CIDER_FEAT_KV_SCAN | CIDER_FEAT_AGENT;

	ASSERT_EQ(0, xioctl(self->fd, CIDER_IOC_GET_INFO, &self->info));
	ASSERT_EQ(want, self->info.features);
	ASSERT_EQ(want, cider_features(&self->info));
	ASSERT_STREQ("ext-args", cider_feature_name(0));
	ASSERT_STREQ("kv-uring", cider_feature_name(4));
	ASSERT_STREQ("members", cider_feature_name(5));
	ASSERT_STREQ("key", cider_feature_name(7));
	ASSERT_STREQ("stats", cider_feature_name(8));
	ASSERT_STREQ("kv-scan", cider_feature_name(9));
	ASSERT_STREQ("agent", cider_feature_name(10));
	ASSERT_EQ(NULL, cider_feature_name(63));
	/* Features are an output: on input they are a reserved word. */
	info_init(&self->info);
	self->info.features = CIDER_FEAT_RAW;
	ASSERT_EQ(-EINVAL, xioctl(self->fd, CIDER_IOC_GET_INFO, &self->info));
}

/*
 * A caller built with a later header, whose cider_info is longer: the
 * module knows nothing of the words past its own structure, so they must
 * be zero; what it writes back stops at its size; 'size' stays the
 * caller's.  At the first published size it is today's structure.
 */
TEST_F(dev, a_longer_structure_is_accepted_when_its_tail_is_zero)
{
	const size_t k = sizeof(self->info);
	char version[64];

	ASSERT_EQ(CIDER_INFO_SIZE_VER0, k);
	ASSERT_EQ(0, ioctl_sized(self->fd, CIDER_IOC_GET_INFO, &self->info, k, k + 8, false));
	ASSERT_EQ(k + 8, self->info.size);
	ASSERT_EQ(0, sysfs_read("/sys/module/cider/version", version, sizeof(version)));
	ASSERT_STREQ(version, self->info.version);
	ASSERT_NE(0, self->info.features & CIDER_FEAT_EXT_ARGS);
	info_init(&self->info);
	ASSERT_EQ(0, ioctl_sized(self->fd, CIDER_IOC_GET_INFO, &self->info, k, 4096, false));
	info_init(&self->info);
	ASSERT_EQ(-E2BIG, ioctl_sized(self->fd, CIDER_IOC_GET_INFO, &self->info, k, k + 8, true));
	ASSERT_EQ(-E2BIG, ioctl_sized(self->fd, CIDER_IOC_GET_INFO, &self->info, k, 4096, true));
	/* Past a page, whatever the tail. */
	ASSERT_EQ(-E2BIG, ioctl_sized(self->fd, CIDER_IOC_GET_INFO, &self->info, k, 4104, false));
}

TEST_F(dev, a_structure_shorter_than_the_first_published_is_einval)
{
	const size_t k = sizeof(self->info);

	ASSERT_EQ(-EINVAL, ioctl_sized(self->fd, CIDER_IOC_GET_INFO, &self->info, k, k - 8, false));
	ASSERT_EQ(-EINVAL, ioctl_sized(self->fd, CIDER_IOC_GET_INFO, &self->info, k, 4, false));
	/* The 'size' word and the command number disagree. */
	info_init(&self->info);
	self->info.size = k + 8;
	ASSERT_EQ(-EINVAL, xioctl(self->fd, CIDER_IOC_GET_INFO, &self->info));
}

TEST_F(dev, bad_size_is_einval)
{
	const __u32 sizes[] = { 0, 4, sizeof(struct cider_info) - 1,
				sizeof(struct cider_info) + 1,
				sizeof(struct cider_info) - 8, ~0U };
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		info_init(&self->info);
		self->info.size = sizes[i];
		EXPECT_EQ(-EINVAL, xioctl(self->fd, CIDER_IOC_GET_INFO, &self->info))
			TH_LOG("size %u", sizes[i]);
	}
}

TEST_F(dev, nonzero_flags_are_einval)
{
	unsigned int bit;

	for (bit = 0; bit < 32; bit++) {
		info_init(&self->info);
		self->info.flags = 1U << bit;
		EXPECT_EQ(-EINVAL, xioctl(self->fd, CIDER_IOC_GET_INFO, &self->info))
			TH_LOG("flags bit %u", bit);
	}
}

TEST_F(dev, nonzero_reserved_is_einval)
{
	unsigned int i;

	for (i = 0; i < sizeof(self->info.reserved) / sizeof(self->info.reserved[0]); i++) {
		info_init(&self->info);
		self->info.reserved[i] = 1ULL << (i * 13);
		EXPECT_EQ(-EINVAL, xioctl(self->fd, CIDER_IOC_GET_INFO, &self->info))
			TH_LOG("reserved[%u]", i);
	}
}

TEST_F(dev, bad_pointers_are_efault)
{
	long page = sysconf(_SC_PAGESIZE);
	struct cider_info *ro;
	char *edge;

	ASSERT_EQ(-EFAULT, xioctl(self->fd, CIDER_IOC_GET_INFO, NULL));

	/* Readable and valid, but the reply cannot be written back. */
	ro = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	info_init(ro);
	ASSERT_EQ(0, mprotect(ro, page, PROT_READ));
	EXPECT_EQ(-EFAULT, xioctl(self->fd, CIDER_IOC_GET_INFO, ro));
	munmap(ro, page);

	/* The structure runs off the end of the mapping. */
	edge = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, edge);
	ASSERT_EQ(0, munmap(edge + page, page));
	ro = (struct cider_info *)(edge + page - 16);
	ro->size = sizeof(*ro);
	EXPECT_EQ(-EFAULT, xioctl(self->fd, CIDER_IOC_GET_INFO, ro));
	munmap(edge, page);
}

TEST(unprivileged_open_is_refused)
{
	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		fd = open(CIDER_DEV_PATH, O_RDWR);
		_exit(fd < 0 && errno == EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
