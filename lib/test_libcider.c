// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of libcider (no cider.ko needed): error reporting when
 * the device is missing or is not a cider device.  Built with ASan/UBSan.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cider.h"

TEST(open_missing_device_is_enoent)
{
	ASSERT_EQ(0, setenv("CIDER_DEV", "/nonexistent/cider", 1));
	ASSERT_EQ(-ENOENT, cider_open());
	ASSERT_NE(NULL, strstr(cider_strerror(-ENOENT), "cider.ko"));
}

TEST(open_uses_cider_dev_override)
{
	int fd;

	ASSERT_EQ(0, setenv("CIDER_DEV", "/dev/null", 1));
	fd = cider_open();
	ASSERT_LE(0, fd);
	close(fd);
}

TEST(get_info_on_other_device_is_enotty)
{
	struct cider_info info;
	int fd = open("/dev/null", O_RDWR);

	ASSERT_LE(0, fd);
	memset(&info, 0x5a, sizeof(info));
	ASSERT_EQ(-ENOTTY, cider_get_info(fd, &info));
	/* The request went out well-formed even though it was refused. */
	ASSERT_EQ(sizeof(info), info.size);
	ASSERT_EQ(0, info.flags);
	close(fd);
}

TEST(get_info_on_closed_fd_is_ebadf)
{
	struct cider_info info;

	ASSERT_EQ(-EBADF, cider_get_info(-1, &info));
}

TEST(strerror_covers_any_errno)
{
	ASSERT_STREQ(strerror(EIO), cider_strerror(-EIO));
	ASSERT_NE(NULL, strstr(cider_strerror(-ENOTTY), "cider"));
	ASSERT_NE(NULL, strstr(cider_strerror(-EACCES), "permission"));
}

TEST_HARNESS_MAIN
