// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of libcider (no cider.ko needed): error reporting when
 * the device is missing or is not a cider device.  Built with ASan/UBSan.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
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

TEST(mn_stats_on_other_device_is_enotty_and_leaves_the_count)
{
	struct cider_stat st[2];
	unsigned int n = 2;
	int fd = open("/dev/null", O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-ENOTTY, cider_mn_stats(fd, 0, st, &n));
	ASSERT_EQ(2, n);
	ASSERT_EQ(-EBADF, cider_mn_stats(-1, 0, st, &n));
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

TEST(kv_cmd_describes_one_operation)
{
	static const char key[] = "user:42", val[] = "hello";
	struct cider_kv_cmd cmd;

	memset(&cmd, 0x5a, sizeof(cmd));
	ASSERT_EQ(0, cider_kv_cmd_init(&cmd, 3, CIDER_KV_PUT, key, 7, val, 5));
	ASSERT_EQ(sizeof(cmd), cmd.size);
	ASSERT_EQ(3U, cmd.store);
	ASSERT_EQ((unsigned int)CIDER_KV_PUT, cmd.opcode);
	ASSERT_EQ(0U, cmd.flags);
	ASSERT_EQ((__u64)(uintptr_t)key, cmd.key);
	ASSERT_EQ(7U, cmd.key_len);
	ASSERT_EQ((__u64)(uintptr_t)val, cmd.value);
	ASSERT_EQ(5U, cmd.value_len);
	ASSERT_EQ(0U, cmd.reserved[0]);
	ASSERT_EQ(0U, cmd.reserved[1]);
}

TEST(kv_lengths_beyond_the_abi_are_refused_not_truncated)
{
	struct cider_kv_cmd cmd;
	size_t len = 8;
	char buf[8];

	memset(&cmd, 0x5a, sizeof(cmd));
	ASSERT_EQ(-EINVAL, cider_kv_cmd_init(&cmd, 0, CIDER_KV_GET, "k", 1ULL << 32, NULL, 0));
	ASSERT_EQ(-EINVAL, cider_kv_cmd_init(&cmd, 0, CIDER_KV_PUT, "k", 1, buf,
					     (1ULL << 32) + 1));
	ASSERT_EQ(0x5a5a5a5aU, cmd.size);	/* untouched */
	ASSERT_EQ(-EINVAL, cider_put(-1, 0, "k", 1, buf, 1ULL << 32));
	ASSERT_EQ(-EINVAL, cider_get(-1, 0, "k", 1ULL << 32, buf, &len));
	ASSERT_EQ(8U, len);
}

TEST(kv_on_other_device_is_enotty_and_keeps_the_length)
{
	int fd = open("/dev/null", O_RDWR);
	size_t len = sizeof(int);
	int v = 0;

	ASSERT_LE(0, fd);
	ASSERT_EQ(-ENOTTY, cider_get(fd, 0, "k", 1, &v, &len));
	ASSERT_EQ(sizeof(int), len);
	ASSERT_EQ(-ENOTTY, cider_put(fd, 0, "k", 1, &v, sizeof(v)));
	ASSERT_EQ(-ENOTTY, cider_delete(fd, 0, "k", 1));
	close(fd);
}

TEST(batch_refuses_bad_arguments)
{
	int res[1];

	errno = 0;
	ASSERT_EQ(NULL, cider_batch_new(-1, 8));
	ASSERT_EQ(EINVAL, errno);
	ASSERT_EQ(NULL, cider_batch_new(0, 0));
	ASSERT_EQ(NULL, cider_batch_new(0, CIDER_BATCH_MAX_DEPTH + 1));
	ASSERT_EQ(-EINVAL, cider_batch_run(NULL, NULL, 0, res));
	cider_batch_free(NULL);
}

/*
 * Every operation gets its own result, in its own place, also past the
 * ring's depth: on a descriptor that is not open, -EBADF each.
 */
TEST(batch_gives_each_operation_its_result)
{
	struct cider_kv_cmd cmds[37];
	int fd = 999, res[37], v = 0;	/* far above what the ring takes */
	struct cider_batch *b;
	unsigned int i;

	ASSERT_EQ(-1, fcntl(fd, F_GETFD));
	b = cider_batch_new(fd, 4);
	if (!b && (errno == ENOSYS || errno == EPERM))
		SKIP(return, "io_uring is not available here");
	ASSERT_NE(NULL, b);
	for (i = 0; i < 37; i++) {
		ASSERT_EQ(0, cider_kv_cmd_init(&cmds[i], 0, CIDER_KV_GET, "k", 1, &v, sizeof(v)));
		res[i] = 12345;
	}
	ASSERT_EQ(0, cider_batch_run(b, cmds, 37, res));
	for (i = 0; i < 37; i++)
		EXPECT_EQ(-EBADF, res[i]);
	ASSERT_EQ(0, cider_batch_run(b, cmds, 0, res));	/* nothing: done */
	cider_batch_free(b);
}

TEST(kv_strerror_speaks_of_keys)
{
	ASSERT_STREQ("no such key", cider_kv_strerror(-ENOENT));
	ASSERT_NE(NULL, strstr(cider_kv_strerror(-ECOMM), "may or may not"));
	ASSERT_STREQ(strerror(EIO), cider_kv_strerror(-EIO));
}

TEST_HARNESS_MAIN
