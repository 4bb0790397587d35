// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz: structure-aware fuzzer for /dev/cider.
 *
 * Builds ioctl arguments and IORING_OP_URING_CMD submissions from the
 * uapi's own structures: valid shapes with random sizes, flags, reserved
 * words, ids, offsets and lengths, and pointers to good memory, to a
 * read-only page, to an unmapped hole, across the end of a mapping, to
 * NULL and to kernel addresses.  Raw batches go to a hash-indexed node;
 * KV commands (CIDER_IOC_KV, by ioctl and io_uring) mostly to a node
 * formatted with the array store, some to the hash one (whose region
 * the raw batches also scribble on: its store may die, never the kernel), with key
 * and value lengths around every limit, keys outside the store, and GET
 * buffers too small, read-only or unmapped.  Several processes with several threads
 * each share a descriptor while one of them closes and reopens it, attach
 * and detach race raw batches, children fork off and exit with commands
 * in flight, and the supervisor SIGKILLs workers mid-command.  With fault
 * injection (the debug kernel) each worker thread turns on random
 * allocation failures around a share of its calls.
 *
 * Every call sequence follows from the seed: --seed S repeats what each
 * thread asks (the interleaving of threads is the scheduler's).  The real
 * oracle is the kernel log (KASAN, lockdep, ...), which the VM checks; the
 * fuzzer itself fails on an errno the uapi does not document, on a
 * well-formed GET_INFO that does not succeed, and on a module that no
 * longer answers at the end.
 *
 * Prints TAP: one result, with the seed to reproduce.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cider.h"
#include "root.h"
#include "cider-uring.h"
#include "faults.h"
#include "memd.h"

#define REGION_SIZE (16u << 20)
#define PAGE 4096u
/* The arena: RW pages (buffers, op arrays), a read-only page, a hole
 * (PROT_NONE). */
#define ARENA_RW (CIDER_RAW_MAX_BYTES + 16 * PAGE)
#define MAX_IDS 16
/* The KV node: an array store this small keeps the keys hot and shared. */
#define KV_KEYS 256
#define KV_SLOTS 8	/* one per SQE of a submission */

/* splitmix64: tiny, good enough, and the same everywhere. */
static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t *s, uint64_t n)
{
	return n ? rnd(s) % n : 0;
}

static bool chance(uint64_t *s, unsigned int pct)
{
	return below(s, 100) < pct;
}

static struct {
	uint64_t seed;
	long calls;		/* per worker thread; 0: unbounded */
	unsigned int procs, threads, fail_pct, kill_pct, flap_pct;
	double seconds;		/* 0: no limit */
	int verbose;
	bool fault_injection;
	char mn_addr[80];	/* a hash store: raw batches and KV */
	char kv_addr[80];	/* an array store: KV */
	unsigned int mn_port;
} cfg = { .calls = 200, .procs = 3, .threads = 3, .fail_pct = 20, .kill_pct = 30,
	  .flap_pct = 30 };

/* Per call kind: how many succeeded and failed, across all workers (a
 * shared mapping), to show the run got past the argument checks. */
static const char *const kinds[] = { "GET_INFO", "ATTACH", "DETACH", "MN_INFO", "RAW",
				     "ioctl(other)", "URING_CMD", "io_uring_setup",
				     "io_uring_submit", "open", "KV", "KV_URING", "ATTACH(home)" };
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))
static atomic_long (*tally)[2];
/* KV results by errno ([0]: success), to show how many reached a store. */
#define KV_ERRNOS 134
static atomic_long *kv_res;

/* Shared by the threads of one worker. */
struct worker {
	atomic_int fd;
	atomic_uint ids[MAX_IDS];	/* mn_ids seen from attach */
	atomic_uint nids;		/* attaches that succeeded */
	atomic_uint kv_ids[MAX_IDS];	/* the same, of the array store */
	atomic_uint nkv;
	/* The worker's own attach of the array store, made before its
	 * threads start and again when a KV command finds it gone: most KV
	 * commands go there, so that they reach a live store and meet
	 * detach, kill, fork and injected failures there. */
	atomic_uint home;		/* its mn_id + 1, 0: none */
	unsigned char *arena;		/* RW | RO page | hole */
	atomic_int bad;
	unsigned int index;
};

struct thread {
	struct worker *w;
	uint64_t rng;
	unsigned int index;
	struct io_uring ring;
	bool ring_up;
	/* This call is well-formed throughout: it must get past every
	 * argument check and exercise the data path and its error handling. */
	bool sane;
	bool failing;	/* allocation failures injected around this call */
	uint64_t scan_cursor;	/* the last cursor a SCAN returned: one to go on from */
	/* A well-formed KV command's key, value and GET buffer, one set per
	 * SQE: the thread's own, so no other thread changes them under the
	 * kernel (a GET's buffer is written at its completion). */
	struct kvbuf {
		unsigned char key[16], val[16], get[80];
		/* Only ever a valid key and value: io_uring may read them
		 * after this slot was reused (uapi: until the completion). */
		uint64_t skey, sval;
		/* io_uring commands on them not completed yet: while there
		 * are, skey stays (a key that changes under a command in
		 * flight is refused, EINVAL: kslot.c). */
		unsigned int busy;
	} kb[KV_SLOTS];
};

/* Documented errnos of /dev/cider, plus what the VFS, io_uring and
 * allocation failures add.  ECOMM: a raw batch's WRITE or atomic was sent
 * when its node was lost or detached (outcome unknown, uapi).  E2BIG: a
 * structure longer than the module's with a non-zero byte past it (an
 * ioctl number of another size reaches its call: cider(4), growth).
 * EADDRINUSE: an attach with a cn id another live attach holds in the
 * memory node's membership table (cider(4)). */
static bool errno_expected(int e)
{
	switch (e) {
	case EINVAL: case EFAULT: case ENOTTY: case ENOENT: case ERANGE:
	case EPERM: case ENOMEM: case ETIMEDOUT: case ECONNREFUSED:
	case EHOSTUNREACH: case ENETUNREACH: case EOPNOTSUPP: case EPROTO:
	case ENOTCONN: case EIO: case EREMOTEIO: case EBADF: case EINTR:
	case ENODEV: case EAGAIN: case ECANCELED: case EADDRNOTAVAIL:
	case ECONNRESET: case ECOMM: case E2BIG: case EADDRINUSE:
		return true;
	}
	return false;
}

/*
 * CIDER_IOC_KV's errnos (uapi/linux/cider.h), plus what the VFS and
 * io_uring add: narrower than the rest, since a store reports a lost
 * node as ENOTCONN or ECOMM only, never with the loss's own reason.
 * EIO: a GET found a block that is not its key's, which raw writes into
 * the array store's region (pick_id) cause.  ETIMEDOUT: an operation
 * reached its bound (kv.rst); raw writes into lock records can stall a
 * lock queue, and where nothing did, the kernel log line the bound
 * writes names the state it stalled in (a hang before the bound).
 */
static bool kv_errno_expected(int e)
{
	switch (e) {
	case ENOENT: case EEXIST: case ENOSPC: case ERANGE: case ENOTCONN:
	case ECOMM: case EAGAIN: case EINTR: case EINVAL: case ENAMETOOLONG:
	case E2BIG: case EDOM: case EFAULT: case ENXIO: case EOPNOTSUPP:
	case ENOMEM: case EIO: case ETIMEDOUT:
	case EBADF: case ENOTTY: case ECANCELED:
		return true;
	}
	return false;
}

static bool is_kv(const char *what)
{
	return !strncmp(what, "KV", 2);
}

static void unexpected(struct thread *t, const char *what, long ret, int err)
{
	/* Uninjected: the write to the log may need a page and lose the line. */
	if (t->failing)
		fi_make_it_fail(0);
	fprintf(stderr, "# worker %u thread %u: %s returned %ld errno %d (%s)\n",
		t->w->index, t->index, what, ret, err, strerror(err));
	if (t->failing)
		fi_make_it_fail(1);
	atomic_fetch_add(&t->w->bad, 1);
}

static void check(struct thread *t, const char *what, long ret)
{
	int e = errno;

	if (cfg.verbose)
		fprintf(stderr, "# w%u.t%u %s -> %ld%s%s\n", t->w->index, t->index,
			what, ret, ret < 0 ? " " : "", ret < 0 ? strerror(e) : "");
	/* An attach resolves the node's address in the calling thread; the
	 * network stack reports its own allocation failures there (a route,
	 * a neighbour entry) as ENOBUFS (uapi/linux/cider.h). */
	/* A KV GET returns the value's length. */
	if (is_kv(what) ? ret > CIDER_KV_MAX_VALUE || (ret < 0 && !kv_errno_expected(e)) :
	    ret > 0 || (ret < 0 && !errno_expected(e) &&
			!(e == ENOBUFS && !strcmp(what, "ATTACH"))))
		unexpected(t, what, ret, e);
	for (unsigned int i = 0; tally && i < NKINDS; i++)
		if (!strcmp(kinds[i], what))
			atomic_fetch_add(&tally[i][ret < 0], 1);
	if (kv_res && is_kv(what))
		atomic_fetch_add(&kv_res[ret >= 0 ? 0 : e > 0 && e < KV_ERRNOS ? e : KV_ERRNOS], 1);
}

/* A pointer of a random kind, for an object of @len bytes. */
static uint64_t pick_ptr(struct thread *t, size_t len)
{
	unsigned char *a = t->w->arena;
	uint64_t *s = &t->rng;
	unsigned int k = below(s, 100);

	if (len > ARENA_RW)
		len = ARENA_RW;
	if (t->sane || k < 70)	/* good memory, any alignment */
		return (uintptr_t)(a + below(s, ARENA_RW - len + 1));
	if (k < 77)	/* the read-only page */
		return (uintptr_t)(a + ARENA_RW + below(s, PAGE));
	if (k < 84)	/* the hole */
		return (uintptr_t)(a + ARENA_RW + PAGE + below(s, PAGE));
	if (k < 91)	/* across the end of the good memory into read-only */
		return (uintptr_t)(a + ARENA_RW - below(s, len ? len : 1));
	if (k < 95)
		return 0;
	if (k < 98)	/* a kernel address */
		return 0xffff888000000000ULL + below(s, 1u << 30);
	return rnd(s);
}

/* One of the last few ids in @ids (@n attaches so far). */
static unsigned int recent(uint64_t *s, atomic_uint *ids, unsigned int n)
{
	return atomic_load(&ids[(n - 1 - below(s, n < 4 ? n : 4)) % MAX_IDS]);
}

static unsigned int pick_id(struct thread *t)
{
	uint64_t *s = &t->rng;
	unsigned int n = atomic_load(&t->w->nids), nkv = atomic_load(&t->w->nkv);

	/*
	 * Recent attaches first: the newest node is the likeliest alive.
	 * Now and then the KV node: raw writes then land in its store, and
	 * its KV operations must survive whatever they find there.
	 */
	if (nkv && chance(s, n ? 15 : 50))
		return recent(s, t->w->kv_ids, nkv);
	if (n && (t->sane || chance(s, 85)))
		return recent(s, t->w->ids, n);
	return chance(s, 50) ? (unsigned int)below(s, 8) : (unsigned int)rnd(s);
}

/* A store for a KV command: mostly the worker's own, else any id. */
static unsigned int pick_store(struct thread *t)
{
	unsigned int n = atomic_load(&t->w->nkv), home = atomic_load(&t->w->home);

	if (home && chance(&t->rng, 85))
		return home - 1;
	if (n && (t->sane || chance(&t->rng, 80)))
		return recent(&t->rng, t->w->kv_ids, n);
	return pick_id(t);
}

static __u32 pick_size(struct thread *t, __u32 real)
{
	uint64_t *s = &t->rng;

	if (t->sane || chance(s, 90))
		return real;
	switch (below(s, 4)) {
	case 0: return 0;
	case 1: return real - 1 - below(s, 8);
	case 2: return real + 1 + below(s, 64);
	default: return (__u32)rnd(s);
	}
}

/* Mostly zero, sometimes a byte set somewhere. */
static void maybe_dirty(struct thread *t, void *p, size_t len)
{
	if (len && !t->sane && chance(&t->rng, 5))
		((unsigned char *)p)[below(&t->rng, len)] = 1 + below(&t->rng, 255);
}

static void fuzz_op(struct thread *t, struct cider_raw_op *op)
{
	static const __u32 lens[] = { 0, 1, 7, 8, 9, 63, 4096, 4097, 65535, 65536, 65537 };
	uint64_t *s = &t->rng;

	memset(op, 0, sizeof(*op));
	if (t->sane) {
		op->opcode = 1 + below(s, 4);
		op->len = op->opcode >= CIDER_RAW_CAS ? 8 : 1 + below(s, 4096);
		op->remote = ((1u << 20) + below(s, 1u << 20)) & ~7ULL;
		op->local = op->opcode >= CIDER_RAW_CAS ? 0 : pick_ptr(t, op->len);
		if (op->opcode == CIDER_RAW_CAS)
			op->compare = rnd(s);
		if (op->opcode >= CIDER_RAW_CAS)
			op->swap_add = rnd(s);
		return;
	}
	op->opcode = chance(s, 95) ? 1 + below(s, 4) : (__u8)rnd(s);
	if (op->opcode == CIDER_RAW_CAS || op->opcode == CIDER_RAW_FAA)
		op->len = chance(s, 90) ? 8 : lens[below(s, 11)];
	else
		op->len = chance(s, 70) ? 1 + below(s, 512) : lens[below(s, 11)];
	/* Writes stay clear of the superblock so later attaches still work. */
	switch (below(s, 6)) {
	case 0: op->remote = REGION_SIZE - below(s, 2 * (uint64_t)op->len + 1); break;
	case 1: op->remote = rnd(s); break;
	case 2: op->remote = op->opcode == CIDER_RAW_READ ? below(s, PAGE) : REGION_SIZE / 2; break;
	default: op->remote = (1u << 20) + below(s, 1u << 20); break;
	}
	if (chance(s, 80) && op->opcode >= CIDER_RAW_CAS)
		op->remote &= ~7ULL;
	op->local = op->opcode >= CIDER_RAW_CAS && chance(s, 90) ? 0 : pick_ptr(t, op->len);
	/* Fields an opcode does not use must be zero: mostly they are. */
	if (op->opcode == CIDER_RAW_CAS || chance(s, 5))
		op->compare = rnd(s);
	if (op->opcode >= CIDER_RAW_CAS || chance(s, 5))
		op->swap_add = chance(s, 50) ? 1 : rnd(s);
	op->old = rnd(s);
	op->result = (__s32)rnd(s);
	maybe_dirty(t, op->reserved0, sizeof(op->reserved0));
	if (chance(s, 5))
		op->reserved1 = rnd(s);
}

/* A batch in good memory whose ops array may be anywhere. */
static void fuzz_batch(struct thread *t, struct cider_raw_batch *rb)
{
	uint64_t *s = &t->rng;
	unsigned int nr = t->sane || chance(s, 90) ? 1 + below(s, 8) :
			  below(s, CIDER_RAW_MAX_OPS + 4);
	struct cider_raw_op *ops;
	unsigned int i;

	memset(rb, 0, sizeof(*rb));
	rb->size = pick_size(t, sizeof(*rb));
	rb->mn_id = pick_id(t);
	rb->nr_ops = nr;
	if (!t->sane && chance(s, 3))
		rb->flags = rnd(s);
	maybe_dirty(t, rb->reserved, sizeof(rb->reserved));
	rb->ops = pick_ptr(t, (size_t)nr * sizeof(*ops));
	/* Fill what can be filled (the pointer may be read-only or a hole). */
	if (rb->ops >= (uintptr_t)t->w->arena &&
	    rb->ops + (uint64_t)nr * sizeof(*ops) <= (uintptr_t)t->w->arena + ARENA_RW) {
		ops = (struct cider_raw_op *)(uintptr_t)rb->ops;
		for (i = 0; i < nr; i++) {
			struct cider_raw_op op;

			fuzz_op(t, &op);
			memcpy(&ops[i], &op, sizeof(op));
		}
	}
}

/* An argument of @len bytes: in good memory (filled from @src) or not. */
static void *place(struct thread *t, const void *src, size_t len)
{
	uint64_t p = pick_ptr(t, len);
	unsigned char *a = t->w->arena;

	if (p >= (uintptr_t)a && p + len <= (uintptr_t)a + ARENA_RW)
		memcpy((void *)(uintptr_t)p, src, len);
	return (void *)(uintptr_t)p;
}

/* A length near a limit of the store or of the ABI, or any. */
static __u32 kv_len(struct thread *t, bool key)
{
	static const __u32 keys[] = { 0, 1, 7, 9, 16, 255, 1023, 1024, 1025, 4096 };
	static const __u32 vals[] = { 0, 1, 7, 9, 64, 4096, 65535, 65536, 65537, 1u << 20 };
	uint64_t *s = &t->rng;

	if (chance(s, 70))
		return 8;	/* the array store's one length */
	if (chance(s, 90))
		return key ? keys[below(s, 10)] : vals[below(s, 10)];
	return (__u32)rnd(s);
}

/* A pointer to @len bytes: the thread's own buffer @own, or anywhere. */
static __u64 kv_ptr(struct thread *t, unsigned char *own, size_t own_len, __u32 len)
{
	uint64_t *s = &t->rng;

	/* Mostly where the key or value starts, sometimes misaligned. */
	if (len <= own_len - 8 && (t->sane || chance(s, 60)))
		return (uintptr_t)(own + (chance(s, 70) ? 0 : below(s, 8)));
	return pick_ptr(t, len);
}

/*
 * A SCAN's words: a buffer in the arena (it is written), a prefix of any
 * length, and a cursor that is the last one a SCAN returned, 0, or made
 * up (it must be refused, never followed).
 */
static void fuzz_kv_scan(struct thread *t, struct cider_kv_cmd *cmd)
{
	uint64_t *s = &t->rng;

	cmd->value_len = chance(s, 70) ? CIDER_KV_SCAN_MIN_BUF + below(s, 4096) :
			 kv_len(t, false);
	cmd->value = pick_ptr(t, cmd->value_len);
	cmd->cursor = chance(s, 40) ? t->scan_cursor : chance(s, 50) ? 0 : rnd(s);
	cmd->count = chance(s, 80) ? below(s, 300) : (__u32)rnd(s);
	if (chance(s, 60))
		cmd->key_len = 0;
}

/*
 * A KV command in @cmd, its key and value in the thread's buffers of
 * @slot.  Well-formed (t->sane): an 8-byte key below KV_KEYS (mostly one
 * of 16 hot keys, which the threads fight over), an 8-byte value, a GET
 * buffer of 8 to 72 bytes, DELETE without a value.
 */
static void fuzz_kv_cmd(struct thread *t, struct cider_kv_cmd *cmd, unsigned int slot)
{
	static const __u32 bad_ops[] = { 0, CIDER_KV_SCAN + 1, 0x80000001u };
	struct kvbuf *kb = &t->kb[slot % KV_SLOTS];
	uint64_t *s = &t->rng;
	uint64_t key = chance(s, 70) ? below(s, 16) : below(s, KV_KEYS);
	uint64_t val = rnd(s);

	memset(cmd, 0, sizeof(*cmd));
	cmd->size = pick_size(t, sizeof(*cmd));
	cmd->store = pick_store(t);
	/* SCAN only unsane: its buffer is the shared arena. */
	cmd->opcode = t->sane ? 1 + below(s, 5) : chance(s, 95) ? 1 + below(s, 6) :
		      chance(s, 50) ? bad_ops[below(s, 3)] : (__u32)rnd(s);
	if (!t->sane && chance(s, 3))
		cmd->flags = rnd(s);
	maybe_dirty(t, cmd->reserved, sizeof(cmd->reserved));
	/* Keys past the store's capacity, or any 8 bytes at all. */
	if (!t->sane && chance(s, 10))
		key = chance(s, 50) ? KV_KEYS + below(s, 1000) : rnd(s);
	/* The kernel reads the key and value at submission: fill both. */
	for (unsigned int i = 0; i < 8; i++) {
		kb->key[i] = kb->key[i + 8] = (unsigned char)(key >> (8 * i));
		kb->val[i] = kb->val[i + 8] = (unsigned char)(val >> (8 * i));
	}
	cmd->key_len = t->sane ? 8 : kv_len(t, true);
	cmd->key = kv_ptr(t, kb->key, sizeof(kb->key), cmd->key_len);
	if (t->sane) {
		if (!kb->busy)
			kb->skey = key;
		cmd->key = (uintptr_t)&kb->skey;
	}
	switch (cmd->opcode) {
	case CIDER_KV_GET:
		cmd->value_len = t->sane ? 8 + below(s, 65) :
				 chance(s, 50) ? below(s, 9) : kv_len(t, false);
		cmd->value = t->sane ? (uintptr_t)kb->get :
			     kv_ptr(t, kb->get, sizeof(kb->get), cmd->value_len);
		break;
	case CIDER_KV_SCAN:
		fuzz_kv_scan(t, cmd);
		break;
	case CIDER_KV_DELETE:
		if (t->sane || chance(s, 90))
			break;
		cmd->value_len = chance(s, 50) ? kv_len(t, false) : 0;
		cmd->value = chance(s, 50) ? pick_ptr(t, 8) : 0;
		break;
	default:
		cmd->value_len = t->sane ? 8 : kv_len(t, false);
		cmd->value = kv_ptr(t, kb->val, sizeof(kb->val), cmd->value_len);
		if (t->sane) {
			kb->sval = val;
			cmd->value = (uintptr_t)&kb->sval;
		}
		break;
	}
}

/*
 * What no well-formed KV command may get: a refusal of its shape, its
 * lengths, its key or its pointers.  Anything about the node (ENXIO,
 * ENOTCONN, ECOMM, EAGAIN) can happen.
 */
static void check_sane_kv(struct thread *t, const char *what, long ret, int e)
{
	if (!t->sane || ret >= 0)
		return;
	if (e == EINVAL || e == EFAULT || e == ENAMETOOLONG || e == E2BIG || e == EDOM)
		unexpected(t, what, ret, e);
}

/*
 * (Re)attach the worker's own store (uninjected: a refusal here is no
 * finding); cn 200 + worker, an id of its own (two attaches of one store
 * with one cn id would share lock-queue ids).
 */
static void home_attach(struct worker *w)
{
	struct cider_attach at;
	int ret;

	if (!cfg.kv_addr[0])
		return;
	ret = cider_attach(atomic_load(&w->fd), cfg.kv_addr, 200 + w->index % 50, 0, &at);
	if (!ret)
		atomic_store(&w->home, at.mn_id + 1);
	else if (cfg.verbose)
		fprintf(stderr, "# w%u home attach: %s\n", w->index, strerror(-ret));
	if (tally) {
		atomic_fetch_add(&tally[NKINDS - 1][ret != 0], 1);
		if (ret)	/* the row past the calls' count: the last refusal */
			atomic_store(&tally[NKINDS][1], -ret);
	}
}

/*
 * Detach every node still attached: the round's workers are gone, and
 * what a SIGKILLed one (or one past MAX_IDS attaches) left behind holds
 * kernel memory, a KV store each.  Left to pile up over a 10-minute run
 * (seed 796364409220) it took ~680 MB of a 1 GB guest: the OOM killer
 * then took the memory nodes and 7,034 of 9,500 KV commands found none.
 * Returns how many it detached.
 */
static long detach_all(int fd)
{
	struct cider_mn_info mi;
	unsigned int id = 0;
	long n = 0;

	while (!cider_mn_info(fd, id, &mi)) {
		n += !cider_detach(fd, mi.mn_id);
		id = mi.mn_id + 1;
	}
	return n;
}

/*
 * A KV command found the worker's own store gone (a random detach) or
 * its node lost (a raw write broke it, a killed channel): back.
 */
static void home_lost(struct thread *t, const struct cider_kv_cmd *cmd, long ret, int e)
{
	unsigned int home = atomic_load(&t->w->home);

	if (ret >= 0 || (e != ENXIO && e != ENOTCONN) || !home || cmd->store != home - 1)
		return;
	if (!atomic_compare_exchange_strong(&t->w->home, &home, 0))
		return;		/* another thread does it */
	if (t->failing)
		fi_make_it_fail(0);
	if (e == ENOTCONN)
		cider_detach(atomic_load(&t->w->fd), home - 1);
	home_attach(t->w);
	if (t->failing)
		fi_make_it_fail(1);
}

static void do_kv(struct thread *t)
{
	struct cider_kv_cmd cmd;
	__u32 len;
	long ret;
	int fd = atomic_load(&t->w->fd), e;
	bool own;

	fuzz_kv_cmd(t, &cmd, 0);
	len = cmd.value_len;
	/* On the stack (the result is checked) or anywhere. */
	own = t->sane || chance(&t->rng, 50);
	ret = ioctl(fd, CIDER_IOC_KV, own ? (void *)&cmd : place(t, &cmd, sizeof(cmd)));
	e = errno;
	check(t, "KV", ret);
	home_lost(t, &cmd, ret, e);
	errno = e;
	if (own) {
		check_sane_kv(t, "well-formed KV", ret, e);
		/* A GET fills at most its buffer; ERANGE says how much it needs. */
		if (ret > 0 && cmd.opcode != CIDER_KV_SCAN && (cmd.opcode != CIDER_KV_GET || ret > len))
			unexpected(t, "KV (longer than the buffer)", ret, 0);
		/* A SCAN's records take 8 bytes at least, in its buffer. */
		if (ret >= 0 && cmd.opcode == CIDER_KV_SCAN &&
		    ((size_t)ret * 8 > cmd.value_len || cmd.value_len > len))
			unexpected(t, "KV SCAN (more than the buffer)", ret, 0);
		if (ret >= 0 && cmd.opcode == CIDER_KV_SCAN)
			t->scan_cursor = cmd.cursor;
		if (ret < 0 && e == ERANGE && (cmd.value_len <= len ||
					       cmd.value_len > CIDER_KV_MAX_VALUE))
			unexpected(t, "KV ERANGE (needed length)", cmd.value_len, e);
	}
}

static void do_get_info(struct thread *t)
{
	struct cider_info in = { 0 };
	void *arg;
	long ret;
	int fd = atomic_load(&t->w->fd), e;

	in.size = pick_size(t, sizeof(in));
	if (!t->sane && chance(&t->rng, 3))
		in.flags = rnd(&t->rng);
	maybe_dirty(t, in.reserved, sizeof(in.reserved));
	/* A well-formed call keeps its argument to itself: in the shared arena
	 * another thread may overwrite it (its arguments, op arrays and READ
	 * buffers land there) between our write and the kernel's read. */
	arg = t->sane ? (void *)&in : place(t, &in, sizeof(in));
	ret = ioctl(fd, CIDER_IOC_GET_INFO, arg);
	e = errno;
	check(t, "GET_INFO", ret);
	/* Nothing may refuse a well-formed GET_INFO (a descriptor another
	 * thread closed, or whose number a ring took, aside). */
	if (t->sane && !t->failing && ret && e != EBADF && e != ENOTTY)
		unexpected(t, "well-formed GET_INFO", ret, e);
}

static void do_attach(struct thread *t)
{
	uint64_t *s = &t->rng;
	struct cider_attach at = { 0 };
	long ret;
	int fd = atomic_load(&t->w->fd);

	bool kv = cfg.kv_addr[0] && chance(s, 50);

	if (kv && (t->sane || chance(s, 80)))
		cider_parse_addr(cfg.kv_addr, &at);
	else if (cfg.mn_addr[0] && (t->sane || chance(s, 80)))
		cider_parse_addr(cfg.mn_addr, &at);
	else {
		at.family = chance(s, 80) ? AF_INET : chance(s, 50) ? AF_INET6 : (__u16)rnd(s);
		at.port = chance(s, 90) ? 7000 + below(s, 2000) : 0;
		at.addr[0] = 169;
		at.addr[1] = 254;
		at.addr[2] = 77;
		at.addr[3] = chance(s, 50) ? 1 : (__u8)rnd(s);
	}
	at.size = pick_size(t, sizeof(at));
	at.cn_id = t->sane || chance(s, 90) ? below(s, CIDER_MAX_CN_ID + 1) : (__u32)rnd(s);
	/* Short limits keep attempts at absent nodes from eating the run;
	 * a sane attach gets the default and reaches the live node. */
	at.timeout_ms = t->sane ? 0 : chance(s, 90) ? 1 + below(s, 300) : (__u32)rnd(s);
	if (!t->sane && chance(s, 3))
		at.flags = rnd(s);
	if (!t->sane && chance(s, 3))
		at.reserved0 = rnd(s);
	maybe_dirty(t, at.reserved, sizeof(at.reserved));
	maybe_dirty(t, at.addr + 4, 12);
	if (t->sane || chance(s, 90)) {
		ret = ioctl(fd, CIDER_IOC_ATTACH, &at);
		if (ret == 0 && kv)
			atomic_store(&t->w->kv_ids[atomic_fetch_add(&t->w->nkv, 1) % MAX_IDS],
				     at.mn_id);
		else if (ret == 0)
			atomic_store(&t->w->ids[atomic_fetch_add(&t->w->nids, 1) % MAX_IDS],
				     at.mn_id);
	} else {
		ret = ioctl(fd, CIDER_IOC_ATTACH, place(t, &at, sizeof(at)));
	}
	check(t, "ATTACH", ret);
}

static void do_detach(struct thread *t)
{
	struct cider_detach d = { .size = sizeof(d) };
	long ret;
	int fd = atomic_load(&t->w->fd);

	d.size = pick_size(t, sizeof(d));
	d.mn_id = pick_id(t);
	maybe_dirty(t, d.reserved, sizeof(d.reserved));
	ret = ioctl(fd, CIDER_IOC_DETACH, place(t, &d, sizeof(d)));
	check(t, "DETACH", ret);
}

static void do_mn_info(struct thread *t)
{
	struct cider_mn_info mi = { 0 };
	long ret;
	int fd = atomic_load(&t->w->fd);

	mi.size = pick_size(t, sizeof(mi));
	mi.mn_id = pick_id(t);
	maybe_dirty(t, mi.reserved, sizeof(mi.reserved));
	ret = ioctl(fd, CIDER_IOC_MN_INFO, place(t, &mi, sizeof(mi)));
	check(t, "MN_INFO", ret);
}

static void do_raw(struct thread *t)
{
	struct cider_raw_batch rb;
	long ret;
	int fd = atomic_load(&t->w->fd);

	fuzz_batch(t, &rb);
	ret = ioctl(fd, CIDER_IOC_RAW, place(t, &rb, sizeof(rb)));
	check(t, "RAW", ret);
}

/*
 * An ioctl number near a real one: other nr, size, direction or magic.
 * Another size reaches the call, which reads that many bytes (a caller
 * of a later or earlier header).
 */
static void do_bad_ioctl(struct thread *t)
{
	static const unsigned long real[] = { CIDER_IOC_GET_INFO, CIDER_IOC_ATTACH,
					      CIDER_IOC_DETACH, CIDER_IOC_MN_INFO, CIDER_IOC_RAW,
					      CIDER_IOC_KV };
	uint64_t *s = &t->rng;
	unsigned long nr = real[below(s, 6)];
	long ret;
	int fd = atomic_load(&t->w->fd);

	switch (below(s, 4)) {
	case 0: nr = (nr & ~0xffUL) | (__u8)rnd(s); break;
	case 1: nr ^= (unsigned long)(1 + below(s, 0x3fff)) << _IOC_SIZESHIFT; break;
	case 2: nr ^= (unsigned long)(1 + below(s, 3)) << _IOC_DIRSHIFT; break;
	default: nr = (__u32)rnd(s); break;
	}
	ret = ioctl(fd, nr, pick_ptr(t, 256));
	check(t, "ioctl(other)", ret);
}

/* user_data of an SQE: what it carries, so that its CQE is judged right. */
#define UD_KV		0x100
#define UD_SANE		0x200
#define UD_KVBUF	0x400	/* built as a KV command on kb[slot] */

/* A KV command or a raw batch into @sqe's 80-byte command area (SQE128). */
static void prep_cmd(struct thread *t, struct io_uring_sqe *sqe, int fd, unsigned int i)
{
	uint64_t *s = &t->rng;
	unsigned char *cmd = (unsigned char *)sqe + offsetof(struct io_uring_sqe, cmd);
	bool kv = cfg.kv_addr[0] && chance(s, 50);
	struct cider_raw_batch rb;
	struct cider_kv_cmd kc;

	if (kv) {
		fuzz_kv_cmd(t, &kc, i);
		t->kb[i % KV_SLOTS].busy++;	/* until its CQE (none if unsubmitted) */
	} else
		fuzz_batch(t, &rb);
	/* prep_rw writes 'off', which shares its place with cmd_op: first. */
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	/* The other command's number now and then: the shape must not pass. */
	if (t->sane || chance(s, 90))
		sqe->cmd_op = kv ? CIDER_IOC_KV : CIDER_IOC_RAW;
	else
		sqe->cmd_op = chance(s, 50) ? (kv ? CIDER_IOC_RAW : CIDER_IOC_KV) : (__u32)rnd(s);
	/* Judged by the command number the module sees. */
	sqe->user_data = i | (sqe->cmd_op == CIDER_IOC_KV ? UD_KV : 0) | (kv ? UD_KVBUF : 0) |
			 (t->sane && (t->ring.flags & IORING_SETUP_SQE128) ? UD_SANE : 0);
	/* The command area runs into the SQE's second half. */
	if (t->ring.flags & IORING_SETUP_SQE128) {
		memset(cmd, 0, 80);
		if (kv)
			memcpy(cmd, &kc, sizeof(kc));
		else
			memcpy(cmd, &rb, sizeof(rb));
	}
}

static void on_cqe(struct thread *t, const struct io_uring_cqe *cqe)
{
	const char *what = cqe->user_data & UD_KV ? "KV_URING" : "URING_CMD";
	bool sane = t->sane;

	if (cqe->res < 0) {
		errno = -cqe->res;
		check(t, what, -1);
	} else {
		check(t, what, cqe->res);
	}
	t->sane = cqe->user_data & UD_SANE;
	if ((cqe->user_data & UD_KVBUF) && t->kb[(cqe->user_data & 0xff) % KV_SLOTS].busy)
		t->kb[(cqe->user_data & 0xff) % KV_SLOTS].busy--;
	if (cqe->user_data & UD_KV)
		check_sane_kv(t, "well-formed KV_URING", cqe->res < 0 ? -1 : cqe->res, -cqe->res);
	/* With CQE32, an -ERANGE GET says in big_cqe[0] how much it needs. */
	if ((cqe->user_data & UD_KV) && cqe->res == -ERANGE &&
	    (t->ring.flags & IORING_SETUP_CQE32) &&
	    (!cqe->big_cqe[0] || cqe->big_cqe[0] > CIDER_KV_MAX_VALUE))
		unexpected(t, "KV_URING ERANGE (needed length)", (long)cqe->big_cqe[0], ERANGE);
	t->sane = sane;
}

static void do_uring(struct thread *t)
{
	uint64_t *s = &t->rng;
	struct io_uring_cqe *cqe;
	unsigned int i, n, got = 0;
	struct __kernel_timespec ts = { .tv_nsec = 200 * 1000 * 1000 };
	int fd = atomic_load(&t->w->fd), ret;

	if (!t->ring_up) {
		/* Without SQE128 the command must be refused, not misread;
		 * with CQE32 an ERANGE carries the length the value needs. */
		unsigned int flags = t->sane || chance(s, 90) ? IORING_SETUP_SQE128 : 0;

		if (chance(s, 30))
			flags |= IORING_SETUP_CQE32;
		/*
		 * Not with injected failures: 6.1's io_uring_setup() then leaks
		 * the xarray nodes of its task context (576-byte objects from
		 * __io_uring_add_tctx_node(), kmemleak found 19 in a long run),
		 * a kernel bug, not cider.ko's.  The commands stay injected.
		 */
		if (t->failing)
			fi_make_it_fail(0);
		ret = io_uring_queue_init(16, &t->ring, flags);
		if (t->failing)
			fi_make_it_fail(1);
		if (ret < 0) {
			errno = -ret;
			check(t, "io_uring_setup", -1);
			return;
		}
		t->ring_up = true;
	}
	n = 1 + below(s, 8);
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);

		if (!sqe)
			break;
		prep_cmd(t, sqe, fd, i);
		/* Through io-wq too, and chains that a failure cuts. */
		if (chance(s, 20))
			sqe->flags |= IOSQE_ASYNC;
		if (chance(s, 10))
			sqe->flags |= IOSQE_IO_LINK;
		if (!t->sane && chance(s, 3))
			sqe->rw_flags = rnd(s);
	}
	ret = io_uring_submit(&t->ring);
	if (ret < 0) {
		errno = -ret;
		check(t, "io_uring_submit", -1);
	}
	/* Sometimes leave with commands in flight: the ring goes, they must end. */
	if (chance(s, 15)) {
		io_uring_queue_exit(&t->ring);
		t->ring_up = false;
		return;
	}
	while (got < i && io_uring_wait_cqe_timeout(&t->ring, &cqe, &ts) == 0) {
		on_cqe(t, cqe);
		io_uring_cqe_seen(&t->ring, cqe);
		got++;
	}
}

static void do_reopen(struct thread *t)
{
	int nfd = open(CIDER_DEV_PATH, O_RDWR);
	int old;

	if (nfd < 0) {
		check(t, "open", -1);
		return;
	}
	/* Other threads may be inside a call on the old descriptor. */
	old = atomic_exchange(&t->w->fd, nfd);
	if (chance(&t->rng, 50))
		close(old);
	else
		dup2(nfd, old);	/* replaced under them instead */
}

/* A child with commands in flight dies: by exit or by SIGKILL. */
/*
 * Injected failures stay out of the parent's fork(): it write-protects the
 * parent's pages, and the kernel's next write to one on the parent's
 * behalf (a signal frame, the rseq area on the way back to user space)
 * needs a new page; an injected failure there ends in a forced SIGSEGV,
 * the kernel's rule for user memory it cannot write, not cider.ko's (a
 * worker died of signal 11 in make check's debug run, without its
 * handler's line).  The parent stays uninjected until it has reaped the
 * child and its pages are its own again; the child runs injected.
 */
static void do_fork_and_die(struct thread *t)
{
	uint64_t child_seed = rnd(&t->rng);
	pid_t pid;

	if (t->failing)
		fi_make_it_fail(0);
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0) {
		/* Failing like its parent, so that it too stays uninjected
		 * where the parent would (io_uring_setup(), its log lines). */
		struct thread c = { .w = t->w, .rng = child_seed, .index = 100 + t->index,
				    .failing = t->failing };

		fi_after_fork();
		if (c.failing)
			fi_make_it_fail(1);	/* if that fails, it runs uninjected */

		switch (below(&c.rng, 3)) {
		case 0: do_uring(&c); break;
		case 1: do_raw(&c); break;
		default: do_kv(&c); break;
		}
		_exit(0);
	}
	if (chance(&t->rng, 50))
		kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void one_call(struct thread *t)
{
	unsigned int k = below(&t->rng, 100);
	bool fail = cfg.fault_injection && chance(&t->rng, cfg.fail_pct);

	t->sane = chance(&t->rng, 50);
	t->failing = fail;
	if (tally)
		atomic_fetch_add(&tally[NKINDS][0], 1);

	if (fail)
		fi_make_it_fail(1);
	if (k < 6)
		do_get_info(t);
	else if (k < 18)
		do_attach(t);
	else if (k < 24)
		do_detach(t);
	else if (k < 28)
		do_mn_info(t);
	else if (k < 44)
		do_raw(t);
	else if (k < 62)
		do_kv(t);
	else if (k < 85)
		do_uring(t);
	else if (k < 92)
		do_bad_ioctl(t);
	else if (k < 96)
		do_reopen(t);
	else
		do_fork_and_die(t);
	if (fail)
		fi_make_it_fail(0);
}

static double now(void);
static double t_start;

/*
 * The fatal-signal handler runs on a stack of its own, touched and locked
 * before any failure is injected: on the thread's stack, the kernel may
 * need a new page for the signal frame, an injected failure refuses it,
 * and the worker dies of a forced SIGSEGV without its handler's line.
 */
static void own_signal_stack(void)
{
	static const size_t size = 64 * 1024;
	stack_t ss = { .ss_size = size };

	ss.ss_sp = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ss.ss_sp == MAP_FAILED)
		return;
	memset(ss.ss_sp, 0, size);
	if (mlock(ss.ss_sp, size) || sigaltstack(&ss, NULL))
		munmap(ss.ss_sp, size);	/* the handler runs where it can */
}

static void *thread_main(void *arg)
{
	struct thread *t = arg;
	long i;

	own_signal_stack();
	for (i = 0; !cfg.calls || i < cfg.calls; i++) {
		if (cfg.seconds && now() - t_start > cfg.seconds)
			break;
		one_call(t);
	}
	if (t->ring_up)
		io_uring_queue_exit(&t->ring);
	return NULL;
}

/*
 * A worker that dies of SIGSEGV or SIGBUS says how first: si_code
 * SI_KERNEL (128) is a signal the kernel forced (it failed to write to
 * our memory on our behalf), anything else a fault of our own at @addr.
 */
static void on_fatal_signal(int sig, siginfo_t *si, void *uc)
{
	char line[160];
	int n;

	/*
	 * Failures off first: under injection the write below can fail for
	 * want of a page (a pipe's, a file's), and the line would be lost.
	 */
	if (cfg.fault_injection)
		fi_make_it_fail(0);
	n = snprintf(line, sizeof(line),
		     "# worker pid %d tid %d: signal %d, si_code %d, addr %p, ip %#llx\n",
		     getpid(), gettid(), sig, si->si_code, si->si_addr,
		     (unsigned long long)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP]);
	if (n > 0 && write(STDOUT_FILENO, line, n) < 0)
		n = 0;
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * A worker's own pages are in memory before any failure is injected, and
 * stay there (threads' stacks and later mappings too): otherwise the
 * first run of a code page (of the fuzzer, libc or liburing, on the
 * guest's 9p root) reads it in, and an injected failure in that read
 * ends in SIGBUS, a refused page for a signal frame in SIGSEGV: the
 * kernel's page-fault rules, not cider.ko's.  Copies to and from user
 * memory in cider.ko then fail only where the fuzzer points them on
 * purpose.
 * CIDER_FUZZ_NO_MLOCK=1 runs without it, to see what that costs.
 */
static void resident_worker(void)
{
	const char *off = getenv("CIDER_FUZZ_NO_MLOCK");

	if (off && *off == '1')
		return;
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		/* Not through stdio: its buffer may hold the supervisor's lines. */
		dprintf(STDOUT_FILENO, "# mlockall: %s (pages may fault in under injection)\n",
			strerror(errno));
}

static int worker_main(unsigned int index, uint64_t seed)
{
	struct worker w = { .index = index };
	struct thread th[16];
	pthread_t tid[16];
	unsigned int i, n = cfg.threads > 16 ? 16 : cfg.threads;

	struct sigaction sa = {
		.sa_sigaction = on_fatal_signal, .sa_flags = SA_SIGINFO | SA_ONSTACK,
	};

	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	resident_worker();
	w.arena = mmap(NULL, ARENA_RW + 2 * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w.arena == MAP_FAILED)
		return 2;
	memset(w.arena, 0x5a, ARENA_RW + PAGE);
	/*
	 * The hole is a PROT_NONE page, not an unmapped one: a later small
	 * mapping (a thread's io_uring ring, its signal stack) could fill an
	 * unmapped page, and the pointers meant to fault would have the
	 * kernel write there instead.
	 */
	if (mprotect(w.arena + ARENA_RW, PAGE, PROT_READ) ||
	    mprotect(w.arena + ARENA_RW + PAGE, PAGE, PROT_NONE))
		return 2;
	atomic_store(&w.fd, open(CIDER_DEV_PATH, O_RDWR));
	if (atomic_load(&w.fd) < 0)
		return 2;
	home_attach(&w);
	for (i = 0; i < n; i++) {
		th[i] = (struct thread){ .w = &w, .index = i };
		th[i].rng = seed ^ (0x1000193ULL * (i + 1));
		rnd(&th[i].rng);
		if (pthread_create(&tid[i], NULL, thread_main, &th[i]))
			return 2;
	}
	for (i = 0; i < n; i++)
		pthread_join(tid[i], NULL);
	/* What this worker attached, it detaches (the module must not care). */
	if (atomic_load(&w.home))
		cider_detach(atomic_load(&w.fd), atomic_load(&w.home) - 1);
	for (i = 0; i < MAX_IDS; i++) {
		cider_detach(atomic_load(&w.fd), atomic_load(&w.ids[i]));
		cider_detach(atomic_load(&w.fd), atomic_load(&w.kv_ids[i]));
	}
	return atomic_load(&w.bad) ? 1 : 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Break @n channels' links (the nodes' watchdogs visit them within 250 ms):
 * their nodes reconnect while the workers go on.  Without the knob (no
 * debugfs) nothing happens.
 */
static void link_flap(unsigned int n)
{
	FILE *f = fopen("/sys/kernel/debug/cider/fault/break_qps", "w");

	if (!f)
		return;
	fprintf(f, "%u\n", n);
	fclose(f);
	if (cfg.verbose)
		printf("# %u links broken\n", n);
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: fuzz [--seed S] [--calls N] [--procs N] [--threads N] [--rounds N]\n"
"            [--seconds S] [--fail-pct P] [--kill-pct P] [--flap-pct P]\n"
"            [--no-memd] [-v]\n"
"\n"
"Fuzz /dev/cider (cider.ko loaded) with structure-aware ioctls and io_uring\n"
"commands.  Each round forks --procs workers of --threads threads, each\n"
"making --calls calls (default 200; 0: forever); --rounds rounds (default 3,\n"
"0: forever) or until --seconds (checked between calls).  The seed\n"
"(default: from the clock) is printed: --seed S replays every thread's calls.\n"
"$CIDER_FUZZ_SEED, $CIDER_FUZZ_CALLS, $CIDER_FUZZ_ROUNDS, $CIDER_FUZZ_SECONDS\n"
"and $CIDER_FUZZ_FLAP_PCT set the defaults.  Workers lock their memory (mlockall) so that the kernel\n"
"need not bring pages in for them while their allocations fail on purpose;\n"
"$CIDER_FUZZ_NO_MLOCK=1 turns that off.\n"
"With $CIDER_MN_ADDR two cider-memd are started there, so that attach, raw\n"
"batches and KV commands reach live nodes: a hash store and an array store\n"
"(256 keys, its mode chosen by the seed).  Where the kernel can inject faults, worker\n"
"threads fail allocations at random around --fail-pct %% of their calls\n"
"(default 20; 0: never), and the supervisor SIGKILLs a worker mid-run in\n"
"--kill-pct %% of rounds (default 30).  In --flap-pct %% of rounds (default\n"
"30) it breaks the links of whatever nodes are attached at a random moment\n"
"(fault knob break_qps), so that they reconnect under the load.  -v logs\n"
"every call.\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", 1, NULL, 's' }, { "calls", 1, NULL, 'c' },
		{ "procs", 1, NULL, 'p' }, { "threads", 1, NULL, 't' },
		{ "rounds", 1, NULL, 'r' }, { "seconds", 1, NULL, 'S' },
		{ "fail-pct", 1, NULL, 'f' }, { "kill-pct", 1, NULL, 'k' },
		{ "flap-pct", 1, NULL, 'F' },
		{ "no-memd", 0, NULL, 'n' }, { "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 }
	};
	long rounds = 3, r, failed = 0, total_calls, leftover = 0;
	bool memd_wanted = true, seed_set = false;
	struct memd memd = { 0 }, kvmemd = { 0 };
	static const char *const modes[] = { "cider", "mcs", "caslock", "osync" };
	const char *kv_store[] = { "--index", "array", "--keys", "256", "--mode", NULL, NULL };
	struct cider_info info;
	double t0 = t_start = now();
	uint64_t rs, fs;
	int o, fd;

	/*
	 * glibc registers each thread's rseq area, and the kernel writes it
	 * whenever the thread returns to user space after being preempted or
	 * migrated (kernel/rseq.c, __rseq_handle_notify_resume()).  After a
	 * fork (do_fork_and_die) that area is copy-on-write; a thread whose
	 * allocations fail on purpose then cannot get the page for that write,
	 * and the kernel kills the whole worker with SIGSEGV: not something
	 * cider.ko does, and it ends a round early.  Run without rseq.
	 */
	if (!getenv("CIDER_FUZZ_NO_RSEQ")) {
		const char *tun = getenv("GLIBC_TUNABLES");
		char val[512];

		snprintf(val, sizeof(val), "%s%sglibc.pthread.rseq=0", tun ? tun : "",
			 tun ? ":" : "");
		setenv("GLIBC_TUNABLES", val, 1);
		setenv("CIDER_FUZZ_NO_RSEQ", "1", 1);
		execv("/proc/self/exe", argv);
		perror("fuzz: re-exec without rseq");
		return 2;
	}
	if (getenv("CIDER_FUZZ_SEED")) {
		cfg.seed = strtoull(getenv("CIDER_FUZZ_SEED"), NULL, 0);
		seed_set = true;
	}
	if (getenv("CIDER_FUZZ_CALLS"))
		cfg.calls = strtol(getenv("CIDER_FUZZ_CALLS"), NULL, 0);
	if (getenv("CIDER_FUZZ_SECONDS"))
		cfg.seconds = atof(getenv("CIDER_FUZZ_SECONDS"));
	if (getenv("CIDER_FUZZ_ROUNDS"))
		rounds = strtol(getenv("CIDER_FUZZ_ROUNDS"), NULL, 0);
	if (getenv("CIDER_FUZZ_FLAP_PCT"))
		cfg.flap_pct = atoi(getenv("CIDER_FUZZ_FLAP_PCT"));
	while ((o = getopt_long(argc, argv, "vh", lo, NULL)) != -1) {
		switch (o) {
		case 's': cfg.seed = strtoull(optarg, NULL, 0); seed_set = true; break;
		case 'c': cfg.calls = strtol(optarg, NULL, 0); break;
		case 'p': cfg.procs = atoi(optarg); break;
		case 't': cfg.threads = atoi(optarg); break;
		case 'r': rounds = strtol(optarg, NULL, 0); break;
		case 'S': cfg.seconds = atof(optarg); break;
		case 'f': cfg.fail_pct = atoi(optarg); break;
		case 'k': cfg.kill_pct = atoi(optarg); break;
		case 'F': cfg.flap_pct = atoi(optarg); break;
		case 'n': memd_wanted = false; break;
		case 'v': cfg.verbose++; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!seed_set)
		cfg.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (!cfg.procs || cfg.procs > 64 || !cfg.threads)
		return usage(stderr), 2;
	printf("TAP version 13\n1..1\n");
	printf("# seed %llu (reproduce: fuzz --seed %llu --calls %ld --procs %u --threads %u --rounds %ld)\n",
	       (unsigned long long)cfg.seed, (unsigned long long)cfg.seed, cfg.calls,
	       cfg.procs, cfg.threads, rounds);
	fflush(stdout);

	/* One more row: [NKINDS][0] counts the calls made (one_call()). */
	tally = mmap(NULL, sizeof(*tally) * (NKINDS + 1), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tally == MAP_FAILED)
		tally = NULL;
	kv_res = mmap(NULL, sizeof(*kv_res) * (KV_ERRNOS + 1), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (kv_res == MAP_FAILED)
		kv_res = NULL;
	fd = cider_open();
	if (fd < 0) {
		printf("not ok 1 fuzz: cannot open %s: %s\n", CIDER_DEV_PATH, strerror(-fd));
		return 1;
	}
	cfg.fault_injection = cfg.fail_pct && fi_available() && fi_setup(10) == 0;
	printf("# fault injection %s\n", cfg.fault_injection ? "on (failslab, fail_page_alloc)" : "off");
	/* A worker killed by the kernel leaves its registers in the kernel log. */
	if (cfg.fault_injection) {
		int pf = open("/proc/sys/kernel/print-fatal-signals", O_WRONLY);

		if (pf >= 0 && write(pf, "1", 1) != 1)
			printf("# print-fatal-signals: %s\n", strerror(errno));
		if (pf >= 0)
			close(pf);
	}
	fflush(stdout);	/* before the daemons fork */
	if (memd_wanted && getenv("CIDER_MN_ADDR")) {
		if (memd_start(&memd, "16M", 9400 + getpid() % 500)) {
			printf("not ok 1 fuzz: cider-memd did not start (log %s)\n", memd.log);
			return 1;
		}
		snprintf(cfg.mn_addr, sizeof(cfg.mn_addr), "%s", memd.addr);
		/* The KV node's synchronization mode follows from the seed too. */
		kv_store[5] = modes[cfg.seed % 4];
		if (memd_start_store(&kvmemd, "16M", 10000 + getpid() % 500, kv_store)) {
			printf("not ok 1 fuzz: cider-memd (array store) did not start (log %s)\n",
			       kvmemd.log);
			memd_stop(&memd, SIGTERM);
			return 1;
		}
		snprintf(cfg.kv_addr, sizeof(cfg.kv_addr), "%s", kvmemd.addr);
		printf("# KV store: array, %u keys, mode %s, at %s\n", KV_KEYS, kv_store[5],
		       kvmemd.addr);
	}
	rs = cfg.seed;
	/* A stream of its own: the seeds of runs from before flaps replay as they did. */
	fs = cfg.seed ^ 0x9e3779b97f4a7c15ULL;
	for (r = 0; !rounds || r < rounds; r++) {
		pid_t pids[64];
		unsigned int i, alive = 0;
		bool killer = chance(&rs, cfg.kill_pct);
		double kill_at = now() + below(&rs, 3000) / 1000.0;
		bool flap = chance(&fs, cfg.flap_pct);
		double flap_at = now() + below(&fs, 3000) / 1000.0;

		if (cfg.seconds && now() - t0 > cfg.seconds)
			break;
		for (i = 0; i < cfg.procs; i++) {
			uint64_t ws = rnd(&rs);

			pids[i] = fork();
			if (pids[i] == 0) {
				memd.pid = 0;
				kvmemd.pid = 0;
				_exit(worker_main(i, ws));
			}
			alive += pids[i] > 0;
		}
		while (alive) {
			int status;
			pid_t p = waitpid(-1, &status, killer || flap ? WNOHANG : 0);

			if (p == 0) {
				if (killer && now() >= kill_at) {
					kill(pids[below(&rs, cfg.procs)], SIGKILL);
					killer = false;
				}
				if (flap && now() >= flap_at) {
					link_flap(1 + below(&fs, 4));
					flap = false;
				}
				usleep(10000);
				continue;
			}
			if (p < 0)
				break;
			alive--;
			if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
				continue;
			if (!WIFEXITED(status) || WEXITSTATUS(status)) {
				printf("# round %ld: a worker %s %d\n", r,
				       WIFEXITED(status) ? "exited with" : "died of signal",
				       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
				failed++;
			}
		}
		leftover += detach_all(fd);
		if (cfg.verbose || !rounds)
			printf("# round %ld done, %.0f s\n", r, now() - t0);
		fflush(stdout);
	}
	if (cfg.fault_injection)
		fi_setup(0);
	if (memd.pid)
		memd_stop(&memd, SIGTERM);
	if (kvmemd.pid)
		memd_stop(&kvmemd, SIGTERM);
	/* The module must still answer, and with nothing left attached. */
	if (cider_get_info(fd, &info)) {
		printf("# GET_INFO fails after the run\n");
		failed++;
	}
	close(fd);
	for (unsigned int i = 0; tally && i < NKINDS; i++)
		printf("# %-16s %8ld ok %8ld failed\n", kinds[i],
		       atomic_load(&tally[i][0]), atomic_load(&tally[i][1]));
	if (tally && atomic_load(&tally[NKINDS][1]))
		printf("# ATTACH(home) last refused with %s\n",
		       strerror((int)atomic_load(&tally[NKINDS][1])));
	if (kv_res) {
		printf("# KV results: %ld done", atomic_load(&kv_res[0]));
		for (unsigned int e = 1; e <= KV_ERRNOS; e++)
			if (atomic_load(&kv_res[e]))
				printf(", %ld %s", atomic_load(&kv_res[e]),
				       e < KV_ERRNOS ? strerrorname_np(e) : "other");
		printf("\n");
	}
	/* Calls made, those of SIGKILLed workers included (a shared counter). */
	total_calls = tally ? atomic_load(&tally[NKINDS][0]) : 0;
	if (!total_calls) {
		printf("# no call was made\n");
		failed++;
	}
	printf("# nodes left attached by the rounds' workers, detached after them: %ld\n",
	       leftover);
	printf("%sok 1 fuzz: %ld rounds, %ld calls, %ld failures, seed %llu, %.0f s\n",
	       failed ? "not " : "", r, total_calls, failed,
	       (unsigned long long)cfg.seed, now() - t0);
	return failed ? 1 : 0;
}
