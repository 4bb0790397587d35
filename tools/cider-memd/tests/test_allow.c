// SPDX-License-Identifier: GPL-2.0
/* Unit tests of cider-memd's allow list (allow.c). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "kselftest_harness.h"
#include "allow.h"

static struct sockaddr_storage ss;

static const struct sockaddr *v4(const char *s)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

	memset(&ss, 0, sizeof(ss));
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, s, &sin->sin_addr);
	return (struct sockaddr *)&ss;
}

static const struct sockaddr *v6(const char *s)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	sin6->sin6_family = AF_INET6;
	inet_pton(AF_INET6, s, &sin6->sin6_addr);
	return (struct sockaddr *)&ss;
}

TEST(addresses_and_prefixes_of_both_families_match_what_they_cover)
{
	struct memd_allow a = { 0 };
	char err[128];

	ASSERT_EQ(0, memd_allow_parse(&a, "10.77.0.0/24,192.168.1.7,fd77::/64", err, sizeof(err)));
	ASSERT_EQ(3U, a.n);
	EXPECT_TRUE(memd_allow_match(&a, v4("10.77.0.2")));
	EXPECT_TRUE(memd_allow_match(&a, v4("10.77.0.255")));
	EXPECT_FALSE(memd_allow_match(&a, v4("10.77.1.2")));
	EXPECT_TRUE(memd_allow_match(&a, v4("192.168.1.7")));
	EXPECT_FALSE(memd_allow_match(&a, v4("192.168.1.8")));
	EXPECT_TRUE(memd_allow_match(&a, v6("fd77::2")));
	EXPECT_FALSE(memd_allow_match(&a, v6("fd78::2")));
	/* A dual-stack listener sees IPv4 peers as IPv4-mapped IPv6. */
	EXPECT_TRUE(memd_allow_match(&a, v6("::ffff:10.77.0.9")));
	EXPECT_FALSE(memd_allow_match(&a, v6("::ffff:10.78.0.9")));
}

TEST(prefixes_that_are_not_byte_aligned_cut_inside_a_byte)
{
	struct memd_allow a = { 0 };
	char err[128];

	ASSERT_EQ(0, memd_allow_parse(&a, "10.0.0.64/27", err, sizeof(err)));
	EXPECT_TRUE(memd_allow_match(&a, v4("10.0.0.64")));
	EXPECT_TRUE(memd_allow_match(&a, v4("10.0.0.95")));
	EXPECT_FALSE(memd_allow_match(&a, v4("10.0.0.96")));
	EXPECT_FALSE(memd_allow_match(&a, v4("10.0.0.63")));
	ASSERT_EQ(0, memd_allow_parse(&a, "0.0.0.0/0", err, sizeof(err)));
	EXPECT_TRUE(memd_allow_match(&a, v4("203.0.113.5")));
	EXPECT_FALSE(memd_allow_match(&a, v6("2001:db8::1")));
}

TEST(any_admits_everyone)
{
	struct memd_allow a = { 0 };
	char err[128];

	ASSERT_EQ(0, memd_allow_parse(&a, "any", err, sizeof(err)));
	EXPECT_TRUE(a.set);
	EXPECT_TRUE(memd_allow_match(&a, v4("203.0.113.5")));
	EXPECT_TRUE(memd_allow_match(&a, v6("2001:db8::1")));
}

TEST(bad_lists_are_refused_with_the_reason)
{
	static const char *const bad[] = { "", ",", "10.0.0.1/33", "fd77::/129", "10.0.0.1/",
					   "10.0.0.1/x", "10.0.0.1/-1", "host.example", "10.0.0.256" };
	unsigned int i;
	char err[128];

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct memd_allow a = { 0 };

		err[0] = '\0';
		EXPECT_EQ(-1, memd_allow_parse(&a, bad[i], err, sizeof(err))) TH_LOG("'%s'", bad[i]);
		EXPECT_NE('\0', err[0]) TH_LOG("'%s': no reason", bad[i]);
	}
}

TEST(loopback_is_told_apart)
{
	EXPECT_TRUE(memd_addr_loopback(v4("127.0.0.1")));
	EXPECT_TRUE(memd_addr_loopback(v4("127.9.9.9")));
	EXPECT_TRUE(memd_addr_loopback(v6("::1")));
	EXPECT_TRUE(memd_addr_loopback(v6("::ffff:127.0.0.1")));
	EXPECT_FALSE(memd_addr_loopback(v4("169.254.77.1")));
	EXPECT_FALSE(memd_addr_loopback(v4("0.0.0.0")));
	EXPECT_FALSE(memd_addr_loopback(v6("::")));
	EXPECT_FALSE(memd_addr_loopback(v6("fd77::1")));
}

TEST_HARNESS_MAIN
