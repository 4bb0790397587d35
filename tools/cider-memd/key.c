// SPDX-License-Identifier: GPL-2.0
/*
 * The store's shared key on the memory node (key.h).  The HMAC is
 * OpenSSL's; the bytes it covers are the core's (keyproof.c), the same
 * the compute node's kernel computes.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "key.h"

int memd_key_set(struct memd_key *k, const unsigned char *key, size_t len, size_t seen)
{
	memd_key_clear(k);
	k->seen = calloc(seen, sizeof(*k->seen));
	if (!k->seen)
		return -1;
	k->cap = seen;
	memcpy(k->key, key, len);
	k->len = len;
	return 0;
}

void memd_key_clear(struct memd_key *k)
{
	free(k->seen);
	OPENSSL_cleanse(k, sizeof(*k));
}

/* The first CIDER_MAC_LEN bytes of the HMAC of @msg: 0, or -1. */
static int mac_of(const struct memd_key *k, const uint8_t *msg, size_t len,
		  uint8_t out[CIDER_MAC_LEN])
{
	unsigned char full[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	int ret = -1;

	if (HMAC(EVP_sha256(), k->key, (int)k->len, msg, len, full, &n) && n >= CIDER_MAC_LEN) {
		memcpy(out, full, CIDER_MAC_LEN);
		ret = 0;
	}
	OPENSSL_cleanse(full, sizeof(full));
	return ret;
}

/*
 * @sa as a proof names it: IPv4-mapped IPv6 as IPv4 (keyproof.h); the
 * port when @port (this node's).
 */
static void proof_addr(const struct sockaddr *sa, bool port, struct cider_proof_addr *a)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

	memset(a, 0, sizeof(*a));
	if (port)
		a->port = ntohs(sa->sa_family == AF_INET ?
				((const struct sockaddr_in *)sa)->sin_port : s6->sin6_port);
	if (sa->sa_family == AF_INET) {
		a->kind = CIDER_PROOF_IPV4;
		memcpy(a->addr, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (!memcmp(&s6->sin6_addr, mapped, sizeof(mapped))) {
		a->kind = CIDER_PROOF_IPV4;
		memcpy(a->addr, s6->sin6_addr.s6_addr + 12, 4);
	} else {
		a->kind = CIDER_PROOF_IPV6;
		memcpy(a->addr, &s6->sin6_addr, 16);
	}
}

/*
 * Forget what is past its window; whether @tag is still remembered.  A
 * scan: connects are rare next to what the node serves one-sidedly, and a
 * full ring is 64 K words.
 */
static bool seen_before(struct memd_key *k, uint64_t tag, uint64_t mono_ns)
{
	size_t i;

	while (k->n && k->seen[k->head].until_ns < mono_ns) {
		k->head = (k->head + 1) % k->cap;
		k->n--;
	}
	for (i = 0; i < k->n; i++)
		if (k->seen[(k->head + i) % k->cap].tag == tag)
			return true;
	return false;
}

static void remember(struct memd_key *k, uint64_t tag, uint64_t mono_ns)
{
	struct memd_seen *s = &k->seen[(k->head + k->n) % k->cap];

	s->tag = tag;
	/* A proof's time is fresh for at most two windows after it came. */
	s->until_ns = mono_ns + 2 * CIDER_PROOF_WINDOW_NS;
	k->n++;
}

enum memd_proof memd_key_check(struct memd_key *k, const void *data, size_t len,
			       const struct sockaddr *from, const struct sockaddr *to,
			       uint64_t real_ns, uint64_t mono_ns)
{
	static const uint8_t none[CIDER_MAC_LEN];
	uint8_t msg[CIDER_PROOF_CN_MSG_LEN], mac[CIDER_MAC_LEN];
	struct cider_proof_addr a, b;
	struct cider_cn_hello h;
	struct cider_cn_proof p;
	uint64_t tag;

	if (len < sizeof(h) + sizeof(p))
		return MEMD_PROOF_NONE;
	memcpy(&h, data, sizeof(h));
	memcpy(&p, (const uint8_t *)data + sizeof(h), sizeof(p));
	/* IB CM pads private data with zeros: a CN without a key sends these. */
	if (!p.time_ns && !memcmp(p.mac, none, sizeof(none)))
		return MEMD_PROOF_NONE;
	proof_addr(from, false, &a);
	proof_addr(to, true, &b);
	cider_proof_cn_msg(msg, &h, &p, &a, &b);
	if (mac_of(k, msg, sizeof(msg), mac) || cider_mac_differs(mac, p.mac))
		return MEMD_PROOF_BAD;
	if (!cider_proof_fresh(real_ns, p.time_ns))
		return MEMD_PROOF_STALE;
	tag = cider_le64(mac, 8);
	if (seen_before(k, tag, mono_ns))
		return MEMD_PROOF_REPLAY;
	if (k->n == k->cap)
		return MEMD_PROOF_BUSY;
	remember(k, tag, mono_ns);
	return MEMD_PROOF_OK;
}

void memd_key_answer(const struct memd_key *k, const void *data,
		     const struct cider_mn_hello *h, struct cider_mn_proof *out)
{
	uint8_t msg[CIDER_PROOF_MN_MSG_LEN];
	struct cider_cn_proof p;

	memcpy(&p, (const uint8_t *)data + sizeof(struct cider_cn_hello), sizeof(p));
	cider_proof_mn_msg(msg, p.mac, h);
	if (mac_of(k, msg, sizeof(msg), out->mac))
		memset(out->mac, 0, sizeof(out->mac));	/* the CN refuses it */
}

int memd_key_new(const char *path, char *err, size_t errlen)
{
	unsigned char raw[32], text[48];
	int fd, n, ret = -1;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		snprintf(err, errlen, "no randomness: %s", strerror(errno));
		return -1;
	}
	n = EVP_EncodeBlock(text, raw, sizeof(raw));	/* 44 characters */
	text[n++] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		snprintf(err, errlen, "%s: %s%s", path, strerror(errno),
			 errno == EEXIST ? " (not overwritten)" : "");
	else if (write(fd, text, (size_t)n) != n || fsync(fd))
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	else
		ret = 0;
	if (fd >= 0 && close(fd) && !ret) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		ret = -1;
	}
	if (fd >= 0 && ret)
		unlink(path);
	OPENSSL_cleanse(raw, sizeof(raw));
	OPENSSL_cleanse(text, sizeof(text));
	return ret;
}

const char *memd_proof_why(enum memd_proof p)
{
	switch (p) {
	case MEMD_PROOF_OK: return "a good key proof";
	case MEMD_PROOF_NONE: return "no key proof (attach it with --key-file)";
	case MEMD_PROOF_BAD: return "a wrong key proof (another key)";
	case MEMD_PROOF_STALE: return "a key proof out of the 30 s window (are the clocks apart?)";
	case MEMD_PROOF_REPLAY: return "a key proof seen before (a replay)";
	case MEMD_PROOF_BUSY: return "more key proofs within the window than it remembers";
	}
	return "?";
}
