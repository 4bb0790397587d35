/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The store's shared key on the memory node (cider-memd --key-file): the
 * check of a compute node's proof in its connect request, with the
 * replay window, and the node's proof back in its accept (key.c; what is
 * proven and why: kmod/core/keyproof.h).
 */
#ifndef CIDER_MEMD_KEY_H
#define CIDER_MEMD_KEY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <linux/cider.h>

#include "keyproof.h"

/*
 * Proofs seen within the window, refused if they come again: room for
 * every channel of every compute node connecting in one window.
 */
#define MEMD_KEY_SEEN	(CIDER_MN_MAX_CNS * 256)

/*
 * A proof seen: its MAC's first 8 bytes (random to whoever lacks the key:
 * two proofs share them with odds of 2^-64, and the one refused for it
 * tries again with a new nonce).
 */
struct memd_seen {
	uint64_t tag;
	uint64_t until_ns;	/* CLOCK_MONOTONIC: forgotten after */
};

struct memd_key {
	unsigned char key[CIDER_KEY_MAX_LEN];
	size_t len;		/* 0: no key, every proof is ignored */
	struct memd_seen *seen;	/* a ring, oldest at head */
	size_t cap, head, n;
};

enum memd_proof {
	MEMD_PROOF_OK,
	MEMD_PROOF_NONE,	/* no proof in the request */
	MEMD_PROOF_BAD,		/* a MAC the key does not give */
	MEMD_PROOF_STALE,	/* right MAC, time out of the window */
	MEMD_PROOF_REPLAY,	/* right MAC, seen before */
	MEMD_PROOF_BUSY,	/* more proofs in a window than remembered */
};

/*
 * Take @len bytes at @key as the store's key, remembering up to @seen
 * proofs (MEMD_KEY_SEEN): 0, or -1 (out of memory).
 */
int memd_key_set(struct memd_key *k, const unsigned char *key, size_t len, size_t seen);
void memd_key_clear(struct memd_key *k);

/*
 * Check the proof in @data (@len bytes of a connect request's private
 * data, the hello first) sent from @from to this node's @to (address and
 * port), at @real_ns (CLOCK_REALTIME) and @mono_ns (CLOCK_MONOTONIC).  A
 * proof that passes is remembered.
 */
enum memd_proof memd_key_check(struct memd_key *k, const void *data, size_t len,
			       const struct sockaddr *from, const struct sockaddr *to,
			       uint64_t real_ns, uint64_t mono_ns);

/* The node's answer to the (checked) request @data: its MAC for @h. */
void memd_key_answer(const struct memd_key *k, const void *data,
		     const struct cider_mn_hello *h, struct cider_mn_proof *out);

/*
 * Write a new key to @path (which must not exist), mode 600: 32 random
 * bytes in base64, a line.  0, or -1 with why in @err.
 */
int memd_key_new(const char *path, char *err, size_t errlen);

/* What a refusal logs. */
const char *memd_proof_why(enum memd_proof p);

#endif
