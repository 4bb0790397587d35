/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pointer-array index and its lock entries (CIDER paper §2.2, §4.2):
 * what the words on the memory node mean.
 *
 * Data pointer (8 bytes per key, index area):
 *   bits 63..52 version (advanced by every DELETE), 51 leased, 50 a
 *   writer waits (the CN cache's read lease, cache.h), 49..0 block
 *   offset (0: no KV pair).
 * Lock record (16 + 8 * lock_qlen bytes per key, lock area): the lock
 *   queue's header and ring (lockqueue.h); in caslock mode word 0 is the
 *   holder's client id + 1 and word 1 the epoch: bits 63..32 reset
 *   generation, 31..0 releases (every release adds 1, a reset 1 << 32).
 *
 * The paper's versions are 4 bits.  Ours are 12 (CIDER_VER_BITS, the hash
 * slot's too): a client preempted between its READ of the pointer and
 * its enqueue holds a version that wraps around after 2^bits - 1
 * DELETEs, and then the version rule no longer keeps it out of a batch
 * of another incarnation (writecomb.c; the soak found the like with 4
 * bits; see Documentation/protocol.rst).
 * KV block (16 bytes, data area, written out of place, never modified):
 *   key, value.
 */
#ifndef _CIDER_CORE_KV_H
#define _CIDER_CORE_KV_H

#include "platform.h"
#include "vocab.h"

#define CIDER_VER_BITS		12
#define CIDER_VER_MASK		((1U << CIDER_VER_BITS) - 1)
#define CIDER_OFF_BITS		(64 - CIDER_VER_BITS)
#define CIDER_OFF_MASK		((1ULL << CIDER_OFF_BITS) - 1)
#define CIDER_WORD_LEASED	BIT_ULL(51)
#define CIDER_WORD_WAITING	BIT_ULL(50)
#define CIDER_WORD_ADDR_MASK	((1ULL << 50) - 1)
#define CIDER_BLOCK_SIZE	16
#define CIDER_EPOCH_GEN		0x100000000ULL	/* 1 << 32 */

/* The lists of vocab.h. */
enum cider_op { CIDER_OPS(CIDER_CORE_OP_ENUM) CIDER_OP_NR };

/* Does the operation install a value over a present key (UPDATE, PUT)? */
static inline bool cider_op_updates(u8 op)
{
	return op == CIDER_UPDATE || op == CIDER_PUT;
}

enum cider_res { CIDER_RESULTS(CIDER_RES_ENUM) CIDER_RES_NR };

static inline const char *cider_op_name(u8 op)
{
	static const char *const names[] = { CIDER_OPS(CIDER_VOCAB_NAME) };

	return op < ARRAY_SIZE(names) ? names[op] : "?";
}

static inline const char *cider_res_name(u8 res)
{
	static const char *const names[] = { CIDER_RESULTS(CIDER_VOCAB_NAME) };

	return res < ARRAY_SIZE(names) ? names[res] : "?";
}

static inline u64 cider_word(u32 ver, u64 off)
{
	return (u64)(ver & CIDER_VER_MASK) << CIDER_OFF_BITS | (off & CIDER_WORD_ADDR_MASK);
}

static inline u32 cider_word_ver(u64 w)
{
	return (u32)(w >> CIDER_OFF_BITS);
}

static inline u64 cider_word_off(u64 w)
{
	return w & CIDER_WORD_ADDR_MASK;
}

static inline u32 cider_epoch_gen(u64 e)
{
	return (u32)(e >> 32);
}

#endif
