// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of cider-memd's key proof check (key.c) and of the key file
 * (lib/keyfile.c).  The compute node's proof is made here as cider.ko
 * makes it: the core's bytes (keyproof.c) under HMAC-SHA256, computed
 * with OpenSSL's one-shot HMAC() rather than key.c's own path.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "key.h"
#include "cider.h"

#define SEC 1000000000ULL
#define NOW (1800000000ULL * SEC)	/* CLOCK_REALTIME in 2027 */

static const unsigned char good[] = "0123456789abcdef-the-store-key";
static const unsigned char other[] = "0123456789abcdef-another-key!!";

struct req {
	struct cider_cn_hello hello;
	struct cider_cn_proof proof;
};

static void hmac16(const unsigned char *key, size_t klen, const uint8_t *msg, size_t len,
		   uint8_t *out)
{
	unsigned char full[EVP_MAX_MD_SIZE];
	unsigned int n;

	HMAC(EVP_sha256(), key, (int)klen, msg, len, full, &n);
	memcpy(out, full, CIDER_MAC_LEN);
}

static struct sockaddr_in from4(const char *s)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	inet_pton(AF_INET, s, &sin.sin_addr);
	return sin;
}

#define NODE "10.77.0.1"	/* the memory node, */
#define PORT 7471		/* and its port */

/* A request as cider.ko builds it, by @key's holder at @addr, for NODE:PORT. */
static struct req prove(const unsigned char *key, const char *addr, uint64_t t, uint64_t nonce)
{
	struct req r = { .hello = { .magic = CIDER_CN_MAGIC, .cn_id = 7, .channel = 1 } };
	uint8_t msg[CIDER_PROOF_CN_MSG_LEN];
	struct cider_proof_addr a = { .kind = CIDER_PROOF_IPV4 };
	struct cider_proof_addr to = { .kind = CIDER_PROOF_IPV4, .port = PORT };

	inet_pton(AF_INET, addr, a.addr);
	inet_pton(AF_INET, NODE, to.addr);
	r.proof.time_ns = t;
	r.proof.nonce = nonce;
	cider_proof_cn_msg(msg, &r.hello, &r.proof, &a, &to);
	hmac16(key, strlen((const char *)key), msg, sizeof(msg), r.proof.mac);
	return r;
}

/* The node's check of @r from @addr, arriving at @node:@port. */
static enum memd_proof check_at(struct memd_key *k, const struct req *r, const char *addr,
				const char *node, uint16_t port, uint64_t real, uint64_t mono)
{
	struct sockaddr_in sin = from4(addr), me = from4(node);

	me.sin_port = htons(port);
	return memd_key_check(k, r, sizeof(*r), (struct sockaddr *)&sin, (struct sockaddr *)&me,
			      real, mono);
}

static enum memd_proof check(struct memd_key *k, const struct req *r, const char *addr,
			     uint64_t real, uint64_t mono)
{
	return check_at(k, r, addr, NODE, PORT, real, mono);
}

FIXTURE(key) {
	struct memd_key k;
};

FIXTURE_SETUP(key)
{
	memset(&self->k, 0, sizeof(self->k));
	ASSERT_EQ(0, memd_key_set(&self->k, good, strlen((const char *)good), 4));
}

FIXTURE_TEARDOWN(key)
{
	memd_key_clear(&self->k);
}

TEST_F(key, the_holders_proof_is_admitted_and_answered_with_the_nodes_own)
{
	struct req r = prove(good, "10.77.0.2", NOW, 1);
	struct cider_mn_hello h = { .magic = CIDER_MN_MAGIC, .layout_version = 4,
				    .rkey = 0x1234, .addr = 0x7f0000000000ULL, .size = 1 << 20 };
	uint8_t msg[CIDER_PROOF_MN_MSG_LEN], want[CIDER_MAC_LEN];
	struct cider_mn_proof mp;

	EXPECT_EQ(MEMD_PROOF_OK, check(&self->k, &r, "10.77.0.2", NOW + 2 * SEC, 5));
	memd_key_answer(&self->k, &r, &h, &mp);
	cider_proof_mn_msg(msg, r.proof.mac, &h);
	hmac16(good, strlen((const char *)good), msg, sizeof(msg), want);
	EXPECT_EQ(0, memcmp(want, mp.mac, CIDER_MAC_LEN));
	/* Another rkey, another answer: the CN checks the hello it got. */
	h.rkey++;
	cider_proof_mn_msg(msg, r.proof.mac, &h);
	hmac16(good, strlen((const char *)good), msg, sizeof(msg), want);
	EXPECT_NE(0, memcmp(want, mp.mac, CIDER_MAC_LEN));
}

TEST_F(key, another_key_a_changed_byte_or_another_address_is_a_wrong_proof)
{
	struct req r = prove(other, "10.77.0.2", NOW, 1);

	EXPECT_EQ(MEMD_PROOF_BAD, check(&self->k, &r, "10.77.0.2", NOW, 1));
	r = prove(good, "10.77.0.2", NOW, 2);
	r.hello.cn_id = 8;				/* claims another id */
	EXPECT_EQ(MEMD_PROOF_BAD, check(&self->k, &r, "10.77.0.2", NOW, 1));
	r = prove(good, "10.77.0.2", NOW, 3);
	r.proof.time_ns++;
	EXPECT_EQ(MEMD_PROOF_BAD, check(&self->k, &r, "10.77.0.2", NOW, 1));
	r = prove(good, "10.77.0.2", NOW, 4);
	EXPECT_EQ(MEMD_PROOF_BAD, check(&self->k, &r, "10.77.0.3", NOW, 1));
	EXPECT_EQ(0U, self->k.n);			/* none remembered */
}

/* A captured request is good for the node and port it was made for only. */
TEST_F(key, a_proof_for_another_node_or_port_is_a_wrong_proof)
{
	struct req r = prove(good, "10.77.0.2", NOW, 1);

	EXPECT_EQ(MEMD_PROOF_BAD, check_at(&self->k, &r, "10.77.0.2", "10.77.0.9", PORT, NOW, 1));
	EXPECT_EQ(MEMD_PROOF_BAD, check_at(&self->k, &r, "10.77.0.2", NODE, PORT + 1, NOW, 1));
	EXPECT_EQ(MEMD_PROOF_OK, check(&self->k, &r, "10.77.0.2", NOW, 1));
}

TEST_F(key, no_proof_is_told_apart_from_a_wrong_one)
{
	struct req r = { .hello = { .magic = CIDER_CN_MAGIC, .cn_id = 7 } };
	struct sockaddr_in sin = from4("10.77.0.2"), me = from4(NODE);

	/* IB CM pads a keyless CN's 16-byte hello with zeros to 56. */
	EXPECT_EQ(MEMD_PROOF_NONE, check(&self->k, &r, "10.77.0.2", NOW, 1));
	EXPECT_EQ(MEMD_PROOF_NONE, memd_key_check(&self->k, &r, sizeof(r.hello),
						  (struct sockaddr *)&sin, (struct sockaddr *)&me,
						  NOW, 1));
}

TEST_F(key, a_proof_out_of_the_window_is_stale_either_way)
{
	struct req r = prove(good, "10.77.0.2", NOW - CIDER_PROOF_WINDOW_NS - 1, 1);

	EXPECT_EQ(MEMD_PROOF_STALE, check(&self->k, &r, "10.77.0.2", NOW, 1));
	r = prove(good, "10.77.0.2", NOW + CIDER_PROOF_WINDOW_NS + 1, 2);
	EXPECT_EQ(MEMD_PROOF_STALE, check(&self->k, &r, "10.77.0.2", NOW, 1));
	r = prove(good, "10.77.0.2", NOW - CIDER_PROOF_WINDOW_NS, 3);
	EXPECT_EQ(MEMD_PROOF_OK, check(&self->k, &r, "10.77.0.2", NOW, 1));
}

TEST_F(key, a_replay_within_the_window_is_refused_and_forgotten_after_it)
{
	struct req r = prove(good, "10.77.0.2", NOW, 1);
	uint64_t later = 2 * CIDER_PROOF_WINDOW_NS + 2;

	EXPECT_EQ(MEMD_PROOF_OK, check(&self->k, &r, "10.77.0.2", NOW, 1));
	EXPECT_EQ(MEMD_PROOF_REPLAY, check(&self->k, &r, "10.77.0.2", NOW + 29 * SEC, 1 + 29 * SEC));
	/* Two windows on, the ring forgot it; the clock refuses it instead. */
	EXPECT_EQ(MEMD_PROOF_STALE, check(&self->k, &r, "10.77.0.2", NOW + later, later));
	EXPECT_EQ(1U, self->k.n);
	r = prove(good, "10.77.0.2", NOW + later, 2);
	EXPECT_EQ(MEMD_PROOF_OK, check(&self->k, &r, "10.77.0.2", NOW + later, later));
	EXPECT_EQ(1U, self->k.n);			/* the first one expired */
}

TEST_F(key, more_proofs_than_remembered_are_refused_until_some_expire)
{
	struct req r;
	uint64_t n;

	for (n = 1; n <= 4; n++) {
		r = prove(good, "10.77.0.2", NOW, n);
		EXPECT_EQ(MEMD_PROOF_OK, check(&self->k, &r, "10.77.0.2", NOW, n));
	}
	r = prove(good, "10.77.0.2", NOW, 5);
	EXPECT_EQ(MEMD_PROOF_BUSY, check(&self->k, &r, "10.77.0.2", NOW, 5));
	EXPECT_EQ(MEMD_PROOF_OK, check(&self->k, &r, "10.77.0.2", NOW,
				       2 * CIDER_PROOF_WINDOW_NS + 2));
}

/* A key file in a temporary directory, with @mode. */
static void key_file(char *path, const char *bytes, size_t len, mode_t mode)
{
	FILE *f;

	strcpy(path, "/tmp/test_key.XXXXXX");
	close(mkstemp(path));
	f = fopen(path, "w");
	fwrite(bytes, 1, len, f);
	fclose(f);
	chmod(path, mode);
}

TEST(a_key_file_gives_its_bytes_without_the_newline)
{
	unsigned char k[CIDER_KEY_MAX_LEN];
	char path[64], err[256];
	size_t len = 0;

	key_file(path, "c2VjcmV0LWtleS1vZi10aGUtc3RvcmUK\n", 33, 0600);
	ASSERT_EQ(0, cider_key_load(path, k, &len, err, sizeof(err)));
	EXPECT_EQ(32U, len);
	EXPECT_EQ(0, memcmp(k, "c2VjcmV0LWtleS1vZi10aGUtc3RvcmUK", 32));
	unlink(path);
}

TEST(a_key_file_others_may_read_or_of_the_wrong_size_is_refused_saying_why)
{
	unsigned char k[CIDER_KEY_MAX_LEN];
	char path[64], err[256], big[CIDER_KEY_MAX_LEN + 2];
	size_t len = 0;

	key_file(path, "0123456789abcdef0123", 20, 0640);
	EXPECT_EQ(-1, cider_key_load(path, k, &len, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "chmod 600"));
	EXPECT_EQ(NULL, strstr(err, "0123456789"));	/* never the key */
	unlink(path);
	key_file(path, "short\n", 6, 0600);
	EXPECT_EQ(-1, cider_key_load(path, k, &len, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "16 to 64 bytes"));
	unlink(path);
	memset(big, 'x', sizeof(big));
	key_file(path, big, sizeof(big), 0600);
	EXPECT_EQ(-1, cider_key_load(path, k, &len, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "more bytes"));
	unlink(path);
	EXPECT_EQ(-1, cider_key_load("/nonexistent/key", k, &len, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "No such file"));
	EXPECT_EQ(-1, cider_key_load("/tmp", k, &len, err, sizeof(err)));
	EXPECT_EQ(0U, len);
}

TEST(a_new_key_is_a_private_file_that_loads_and_is_never_overwritten)
{
	unsigned char k[CIDER_KEY_MAX_LEN], k2[CIDER_KEY_MAX_LEN];
	char path[64], err[256];
	size_t len = 0, len2 = 0;
	struct stat st;

	snprintf(path, sizeof(path), "/tmp/test_key.new.%d", (int)getpid());
	unlink(path);
	ASSERT_EQ(0, memd_key_new(path, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(0600U, st.st_mode & 07777);
	ASSERT_EQ(0, cider_key_load(path, k, &len, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(44U, len);				/* 32 bytes in base64 */
	EXPECT_EQ(-1, memd_key_new(path, err, sizeof(err)));
	EXPECT_NE(NULL, strstr(err, "not overwritten"));
	ASSERT_EQ(0, cider_key_load(path, k2, &len2, err, sizeof(err)));
	EXPECT_EQ(0, memcmp(k, k2, len));
	unlink(path);
	ASSERT_EQ(0, memd_key_new(path, err, sizeof(err)));
	ASSERT_EQ(0, cider_key_load(path, k2, &len2, err, sizeof(err)));
	EXPECT_NE(0, memcmp(k, k2, len));		/* each one new */
	unlink(path);
}

TEST_HARNESS_MAIN
