/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * CIDER: the contract between cider.ko and user space.
 *
 * Every argument structure starts with a 'size' field that the caller sets
 * to sizeof() of the structure it was compiled with, carries explicit-width
 * fields only (identical layout for 32- and 64-bit callers), and ends with
 * reserved words that must be zero.  The module refuses flags or reserved
 * words it does not understand with -EINVAL, and an unknown ioctl number
 * with -ENOTTY.
 *
 * How the structures grow (CIDER_FEAT_EXT_ARGS; the rules of
 * copy_struct_from_user(), as openat2(2) and clone3(2) apply them):
 *  - a structure only grows at its end, by fields whose zero value means
 *    what the structure meant before they existed;
 *  - 'size' is at least the structure's first published size
 *    (CIDER_*_SIZE_VER0), else -EINVAL, and equals the size encoded in the
 *    ioctl number (_IOC_SIZE), which the caller's header computed from
 *    the same sizeof(), else -EINVAL: the module dispatches on the
 *    number's type, number and direction, not on its size;
 *  - a caller's structure larger than the module's: accepted when every
 *    byte the module does not know is zero, else -E2BIG (a caller that
 *    asks for something the module cannot do is told so); larger than a
 *    page: -E2BIG;
 *  - a caller's structure smaller than the module's: the fields it lacks
 *    read as zero;
 *  - what the module writes back (out fields) is written up to the
 *    smaller of the two sizes; 'size' is left as the caller set it.
 * A module without CIDER_FEAT_EXT_ARGS in GET_INFO's features (release
 * 0.1.0, features 0) wants each size exactly equal to the VER0 one.
 *
 * The io_uring commands (IORING_OP_URING_CMD) carry their structure in
 * the SQE's 80-byte command area: cmd_op is the ioctl number, so the
 * same rules hold up to 80 bytes (a larger size is -EINVAL; the bytes
 * past 'size' in the SQE are not read).  A command whose structure would outgrow 80 bytes gets a
 * new number, with a pointer to its arguments in user memory.
 * struct cider_raw_op, an element of an array, does not grow: a longer
 * one would come with a new command.
 */
#ifndef _UAPI_LINUX_CIDER_H
#define _UAPI_LINUX_CIDER_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/*
 * Information only: what a caller may use is in GET_INFO's features
 * (CIDER_FEAT_*), never decided by comparing versions.
 */
#define CIDER_ABI_VERSION	1

/* The misc device is /dev/CIDER_DEVICE_NAME. */
#define CIDER_DEVICE_NAME	"cider"

/* 0xC1 is unused in Documentation/userspace-api/ioctl/ioctl-number.rst. */
#define CIDER_IOC_MAGIC		0xC1

#define CIDER_VERSION_LEN	32
#define CIDER_IBDEV_NAME_LEN	64
#define CIDER_INFO_MAX_DEVS	8

/* cider_ibdev_info.flags */
#define CIDER_IBDEV_F_ATOMIC	0x1U /* reports 8-byte CAS/FAA (HCA or GLOB) */
#define CIDER_IBDEV_F_ROCE	0x2U /* port 1 runs RoCE */

struct cider_ibdev_info {
	char name[CIDER_IBDEV_NAME_LEN];	/* NUL-terminated, e.g. "rxe0" */
	__u64 node_guid;			/* host byte order */
	__u32 port_count;
	__u32 flags;				/* CIDER_IBDEV_F_* */
	__u32 max_qp_rd_atom;			/* READ/atomic depth, responder */
	__u32 reserved;
};

/*
 * cider_info.features: what this module can do.  0 (a module from before
 * feature bits, release 0.1.0) means CIDER_FEAT_V0.
 */
#define CIDER_FEAT_EXT_ARGS	_BITULL(0) /* structures grow as above */
#define CIDER_FEAT_RAW		_BITULL(1) /* CIDER_IOC_RAW, ioctl and io_uring */
#define CIDER_FEAT_KV_ARRAY	_BITULL(2) /* KV on CIDER_STORE_ARRAY stores */
#define CIDER_FEAT_KV_HASH	_BITULL(3) /* KV on CIDER_STORE_HASH stores */
#define CIDER_FEAT_KV_URING	_BITULL(4) /* CIDER_IOC_KV through io_uring */
/*
 * Attach claims cn_id in the memory node's membership table: a second
 * live compute node with that id is refused (EADDRINUSE), and MN_INFO
 * reports the incarnation (cn_incarnation).
 */
#define CIDER_FEAT_MEMBERS	_BITULL(5)
/*
 * A memory node that loses its link connects again by itself (module
 * parameters reconnect_delay_ms, loss_timeout_ms): MN_INFO reports it
 * CIDER_MN_RECONNECTING meanwhile, and its reconnect counters.
 */
#define CIDER_FEAT_RECONNECT	_BITULL(6)
/*
 * Attach takes the store's shared key (cider_attach.key): the module
 * proves it holds it on every connect and checks the memory node's proof
 * back (Documentation/memory-node.rst, "Admission").
 */
#define CIDER_FEAT_KEY		_BITULL(7)
/* CIDER_IOC_MN_STATS: a node's counters by name, for the device's group. */
#define CIDER_FEAT_STATS	_BITULL(8)
/* CIDER_KV_SCAN, ioctl and io_uring. */
#define CIDER_FEAT_KV_SCAN	_BITULL(9)
/*
 * The atomics agent (CIDER_IOC_AGENT_REGISTER, below): a memory node whose
 * RDMA device refuses atomics posted from the kernel (upstream mlx5)
 * runs them through a user-space process; cider_attach.flags choose,
 * cider_mn_info.atomics says which path a node's atomics take.
 */
#define CIDER_FEAT_AGENT	_BITULL(10)
#define CIDER_FEAT_V0		(CIDER_FEAT_RAW | CIDER_FEAT_KV_ARRAY | \
				 CIDER_FEAT_KV_HASH | CIDER_FEAT_KV_URING)

/*
 * CIDER_IOC_GET_INFO: what the module is and which RDMA devices it sees.
 *
 * In:  size, flags = 0, reserved[] = 0.
 * Out: abi_version, version, features, nr_devices (all devices the
 *      module tracks, may exceed CIDER_INFO_MAX_DEVS) and the first
 *      min(nr_devices, CIDER_INFO_MAX_DEVS) entries of devices[].
 * devices[] is deprecated: it stays served, and a later release gives the
 * device list a command of its own.
 */
struct cider_info {
	__u32 size;
	__u32 flags;
	__u32 abi_version;
	__u32 nr_devices;
	char version[CIDER_VERSION_LEN];
	struct cider_ibdev_info devices[CIDER_INFO_MAX_DEVS];
	__u64 features;			/* out: CIDER_FEAT_* */
	__u64 reserved[3];
};

#define CIDER_INFO_SIZE_VER0	784

#define CIDER_IOC_GET_INFO	_IOWR(CIDER_IOC_MAGIC, 0x00, struct cider_info)

/*
 * CIDER_IOC_ATTACH: connect to a memory node (CAP_SYS_ADMIN).  One RC
 * connection per possible CPU is made; the call returns when all are up
 * and the node has passed the capability probe (8-byte CAS and FAA from
 * the kernel, a CIDER superblock), or fails with:
 *   EINVAL bad field; EPERM no CAP_SYS_ADMIN; ETIMEDOUT no answer in time;
 *   ECONNREFUSED rejected (nobody listens there); EACCES the memory node
 *   refused this compute node on purpose (its address is not on the
 *   node's allow list, cider-memd --allow); EHOSTUNREACH no route;
 *   EKEYREJECTED the memory node refused the key proof (no key given,
 *   or another key than the node's); EKEYEXPIRED it refused the proof as
 *   out of its replay window (the two clocks are over 30 s apart); ENOKEY
 *   a key was given and the node did not prove it holds it (it runs
 *   without one, or with another); EOPNOTSUPP the RDMA
 *   device cannot do what CIDER needs (named in the kernel log); EPROTO
 *   not a CIDER memory node, another layout version, or a store that
 *   needs features this module lacks; EADDRINUSE another live compute
 *   node holds cn_id in the node's membership table (CIDER_FEAT_MEMBERS:
 *   when the entry shows a holder, the attach first waits the store's
 *   member lease, 2 s by default, to tell a dead holder from a live one);
 *   EINTR a fatal signal meanwhile; ENOMEM out of memory, or ENOBUFS when
 *   the network stack ran out of it resolving the node's address (a route
 *   or neighbour entry, in the calling thread).
 */
#define CIDER_MAX_CN_ID		255
#define CIDER_ATTACH_TIMEOUT_MS	5000	/* when timeout_ms is 0 */
#define CIDER_ATTACH_MAX_TIMEOUT_MS 60000

/*
 * cider_attach.flags (CIDER_FEAT_AGENT): where the node's atomics go.
 * Neither: the kernel's own verbs, and when the device refuses them
 * (EOPNOTSUPP) and an agent is registered, the agent.  KERNEL: only the
 * kernel's (EOPNOTSUPP on such a device).  AGENT: every batch holding an
 * atomic goes through the agent whole (ENXIO: no agent registered).  A
 * store with a key cannot use the agent yet (EOPNOTSUPP).
 */
#define CIDER_ATTACH_ATOMICS_KERNEL	0x1U
#define CIDER_ATTACH_ATOMICS_AGENT	0x2U

struct cider_attach {
	__u32 size;
	__u32 flags;			/* CIDER_ATTACH_* (0 before CIDER_FEAT_AGENT) */
	__u32 cn_id;			/* this compute node, <= CIDER_MAX_CN_ID */
	__u16 family;			/* AF_INET or AF_INET6 */
	__u16 port;			/* host byte order, non-zero */
	__u8 addr[16];			/* AF_INET: first 4 bytes, rest 0 */
	__u32 timeout_ms;		/* 0: CIDER_ATTACH_TIMEOUT_MS */
	__u32 mn_id;			/* out: handle for the other calls */
	__u32 nr_channels;		/* out */
	__u32 reserved0;
	__u64 region_size;		/* out */
	/*
	 * CIDER_FEAT_KEY: the store's shared key, key_len bytes at user
	 * address key, or key 0 and key_len 0 for a node without one.  The
	 * module keeps it (as HMAC state, not its bytes) until the detach,
	 * to prove it again on each reconnect; it never shows it.
	 */
	__u64 key;			/* in */
	__u32 key_len;			/* in: CIDER_KEY_MIN_LEN..CIDER_KEY_MAX_LEN */
	__u32 reserved1;
	__u64 reserved[2];
};

#define CIDER_KEY_MIN_LEN	16
#define CIDER_KEY_MAX_LEN	64	/* HMAC-SHA256's block: longer adds nothing */

#define CIDER_ATTACH_SIZE_VER0	88
#define CIDER_IOC_ATTACH	_IOWR(CIDER_IOC_MAGIC, 0x01, struct cider_attach)

/* CIDER_IOC_DETACH: disconnect; pending operations fail (CAP_SYS_ADMIN). */
struct cider_detach {
	__u32 size;
	__u32 mn_id;
	__u64 reserved[2];
};

#define CIDER_DETACH_SIZE_VER0	24
#define CIDER_IOC_DETACH	_IOW(CIDER_IOC_MAGIC, 0x02, struct cider_detach)

/* cider_mn_info.state */
#define CIDER_MN_LIVE		1
#define CIDER_MN_DEAD		2	/* lost for good; every operation fails */
/*
 * Lost, connecting again (CIDER_FEAT_RECONNECT): the operations it was
 * running ended (ENOTCONN, ECOMM, ETIMEDOUT); new ones wait for it, up
 * to the module's op_timeout_ms, then fail with ENOTCONN; raw operations
 * fail at once.  It turns LIVE again (a memory node restarted on its
 * backing file serves the same store), or DEAD once loss_timeout_ms has
 * passed or when the node it reaches does not hold the store it attached
 * (a memory node restarted without one: ESTALE), refuses it (EACCES,
 * EKEYREJECTED), does not prove the key (ENOKEY), or gave its cn_id to
 * another compute node (EADDRINUSE).  A proof refused as out of the
 * window (EKEYEXPIRED, a clock step) is tried again.
 */
#define CIDER_MN_RECONNECTING	3

/* cider_mn_info.store_index: the KV store cider-memd formatted */
#define CIDER_STORE_ARRAY	1	/* pointer array: 8-byte integer keys */
#define CIDER_STORE_HASH	2	/* hash index: byte-string keys */

/* cider_mn_info.store_mode: how every compute node synchronizes writes */
#define CIDER_STORE_OSYNC	1
#define CIDER_STORE_CASLOCK	2
#define CIDER_STORE_MCS		3
#define CIDER_STORE_CIDER	4

/*
 * CIDER_IOC_MN_INFO: the attached memory node with the lowest id >= mn_id
 * (so a loop from 0 lists them all); ENOENT when there is none.
 */
struct cider_mn_info {
	__u32 size;
	__u32 mn_id;			/* in: lowest id; out: its id */
	__u32 state;			/* CIDER_MN_* */
	__s32 dead_reason;		/* -errno that killed it, or 0 */
	__u32 cn_id;
	__u16 family;
	__u16 port;
	__u8 addr[16];
	__u32 nr_channels;
	__u32 layout_version;
	__u64 region_size;
	char ibdev[CIDER_IBDEV_NAME_LEN];
	__u32 store_index;		/* out: CIDER_STORE_ARRAY or _HASH */
	__u32 store_mode;		/* out: CIDER_STORE_OSYNC .. _CIDER */
	__u64 store_keys;		/* out: the capacity it was sized for */
	__u32 max_key_len;		/* out: bytes */
	__u32 max_value_len;		/* out: bytes */
	__u64 reserved[1];
	/* CIDER_FEAT_MEMBERS */
	__u64 cn_incarnation;		/* out: this attach's, from 1 (0: unknown) */
	/* CIDER_FEAT_RECONNECT */
	__u32 reconnects;		/* out: times the node came back */
	__u32 reconnect_attempts;	/* out: connects tried while it was lost */
	__s32 lost_reason;		/* out: -errno it was last lost for (0: never) */
	__s32 last_reason;		/* out: that, or its last attempt's -errno */
	/* CIDER_FEAT_AGENT */
	__u32 atomics;			/* out: CIDER_MN_ATOMICS_* */
	__u32 reserved2;
};

/* cider_mn_info.atomics: which path the node's atomic verbs take */
#define CIDER_MN_ATOMICS_KERNEL	1
#define CIDER_MN_ATOMICS_AGENT	2

#define CIDER_MN_INFO_SIZE_VER0	152
#define CIDER_IOC_MN_INFO	_IOWR(CIDER_IOC_MAGIC, 0x03, struct cider_mn_info)

/*
 * CIDER_IOC_MN_STATS: the counters of attached memory node mn_id since
 * its attach, by name, as ethtool -S has a NIC's (CIDER_FEAT_STATS).  No
 * capability: whoever may open the device may read every attached
 * node's counters (stores have no owner).  stats points to nr struct
 * cider_stat; the call fills the first min(nr, total) and sets nr to the
 * total, so a call with nr 0 sizes the buffer.  A name is at most
 * CIDER_STAT_NAME_LEN - 1 bytes of [a-z0-9_], NUL-terminated, and keeps
 * its meaning in every later release; a release may add names, anywhere
 * in the list, and a counter a node does not have is not listed (the KV
 * ones without a KV store).  ENOENT: no attached node mn_id (not the
 * next one); EINVAL: flags or reserved not 0, or nr above
 * CIDER_STATS_MAX; EFAULT: stats unreachable.  The names and what they
 * count: Documentation/kv.rst, "Counters".
 */
#define CIDER_STAT_NAME_LEN	32
#define CIDER_STATS_MAX		1024

struct cider_stat {
	char name[CIDER_STAT_NAME_LEN];
	__u64 value;
};

struct cider_mn_stats {
	__u32 size;
	__u32 mn_id;			/* in */
	__u32 nr;			/* in: room at stats; out: counters the node has */
	__u32 flags;			/* 0 */
	__u64 stats;			/* user pointer to nr struct cider_stat */
	__u64 reserved[2];		/* 0 */
};

#define CIDER_MN_STATS_SIZE_VER0	40
#define CIDER_IOC_MN_STATS	_IOWR(CIDER_IOC_MAGIC, 0x04, struct cider_mn_stats)

/*
 * Raw one-sided operations on a memory node's region, for tests and
 * benchmarks (CAP_SYS_ADMIN).  A batch is posted with one doorbell on the
 * calling CPU's channel.  Synchronously with CIDER_IOC_RAW, or through
 * io_uring: IORING_OP_URING_CMD on /dev/cider, ring set up with
 * IORING_SETUP_SQE128, cmd_op = CIDER_IOC_RAW, struct cider_raw_batch in
 * the SQE's command area, uring_cmd_flags 0.  Either way each operation's
 * own result (and, when it succeeded, an atomic's old value or a READ's
 * data) is written back, and the result is 0 when every operation
 * succeeded, -ECOMM when any operation's outcome is unknown, else the
 * first failing operation's -errno.
 *
 * Refused before anything is sent (no result written back): EINVAL (bad
 * opcode, length, flags, reserved field, unaligned atomic, any
 * uring_cmd_flags), ERANGE (outside the region), EPERM, ENOENT (no such
 * memory node).
 *
 * An operation's result:
 *   0          it executed.
 *   -ECOMM     outcome unknown: a WRITE, CAS or FAA was sent, and the
 *              node was lost before it was confirmed.  It may or may not
 *              have executed: never retry a FAA or CAS on ECOMM blindly.
 *   any other  it did not execute (a READ never has an unknown outcome):
 *              ENOTCONN (the node was lost or detached), ETIMEDOUT (no
 *              completion within the module's op_timeout_ms: the node is
 *              declared lost), ENODEV (its RDMA device was removed), EIO
 *              (the NIC reported an error), EREMOTEIO (the node refused
 *              the access), or the errno of a refused post (ENOMEM,
 *              EOPNOTSUPP).
 */
#define CIDER_RAW_READ		1
#define CIDER_RAW_WRITE		2
#define CIDER_RAW_CAS		3	/* 8 bytes, 8-byte aligned */
#define CIDER_RAW_FAA		4	/* 8 bytes, 8-byte aligned */

#define CIDER_RAW_MAX_LEN	(64U << 10)	/* per READ/WRITE */
#define CIDER_RAW_MAX_OPS	64		/* per batch */
#define CIDER_RAW_MAX_BYTES	(256U << 10)	/* per batch */

struct cider_raw_op {
	__u8 opcode;			/* CIDER_RAW_* */
	__u8 reserved0[3];
	__u32 len;			/* READ/WRITE: 1..MAX_LEN; atomics: 8 */
	__u64 remote;			/* offset in the region */
	__u64 local;			/* READ/WRITE: user buffer; atomics: 0 */
	__u64 compare;			/* CAS: expected value */
	__u64 swap_add;			/* CAS: new value; FAA: addend */
	__u64 old;			/* out: atomics: the value before */
	__s32 result;			/* out: 0 or -errno */
	__u32 reserved1;
};

struct cider_raw_batch {
	__u32 size;
	__u32 mn_id;
	__u32 nr_ops;			/* 1..CIDER_RAW_MAX_OPS */
	__u32 flags;			/* must be 0 */
	__u64 ops;			/* user pointer to struct cider_raw_op[] */
	__u64 reserved[2];
};

#define CIDER_RAW_BATCH_SIZE_VER0 40
#define CIDER_IOC_RAW		_IOWR(CIDER_IOC_MAGIC, 0x10, struct cider_raw_batch)

/*
 * Key-value operations on a store (today: an attached memory node, named
 * by its mn_id; a store spread over several nodes will get ids of its
 * own without changing this structure).  They need no capability: who
 * may open /dev/cider may use the stores (its mode and group are the udev
 * rule's: group cider, mode 0660).
 *
 * One operation per call: synchronously with CIDER_IOC_KV, or through
 * io_uring as IORING_OP_URING_CMD on /dev/cider (ring set up with
 * IORING_SETUP_SQE128), cmd_op = CIDER_IOC_KV, struct cider_kv_cmd in
 * the SQE's command area, uring_cmd_flags 0.  Key and value are read
 * from user memory when the command is issued: for the ioctl, they may
 * be reused once it returned; through io_uring they must stay valid
 * until the completion, like a GET's buffer (io_uring may issue the
 * command after io_uring_enter() returned: IOSQE_ASYNC, or from its
 * worker when every operation slot was busy).
 *
 * Result (the ioctl's return value, or the CQE's res):
 *   >= 0       done: 0 for PUT, INSERT, UPDATE and DELETE; for GET the
 *              value's length (its bytes are in the buffer).
 *   -ENOENT    GET, UPDATE or DELETE of an absent key.
 *   -EEXIST    INSERT of a present key.
 *   -ENOSPC    the store has no room (data area or the key's buckets).
 *   -ERANGE    GET: the buffer is smaller than the value.  The ioctl
 *              writes the value's length to value_len; through io_uring
 *              it is the CQE's big_cqe[0] when the ring uses
 *              IORING_SETUP_CQE32.
 *   -ENOTCONN  the store's node was lost, detached or its device removed
 *              before the operation took effect: it did not happen.
 *   -ECOMM     outcome unknown: a write was sent and the node was lost
 *              before it was confirmed.  Read the key to find out.
 *   -EAGAIN    every operation slot stayed busy for the module's
 *              op_timeout_ms.
 *   -ENOMEM    the kernel had no memory for the operation (for its
 *              verbs: for op_timeout_ms): it did not happen.
 *   -EIO       GET: the block the index points to holds another key:
 *              the region was written by other means (raw operations).
 *              Nothing was changed.
 *   -EINTR     a fatal signal arrived while waiting for a slot.
 * Refused before anything is sent:
 *   -EINVAL    size, opcode, flags or reserved words not as documented;
 *              key_len 0; an array store's key or value shorter than 8
 *              bytes; a DELETE with a value pointer or length.
 *   -ENAMETOOLONG  key longer than the store's limit (hash 1024 bytes,
 *              array 8).
 *   -E2BIG     value longer than the store's limit (hash 64 KiB, array 8).
 *   -EDOM      array store: the key (a little-endian u64) is not below
 *              the store's capacity.
 *   -EFAULT    key or value not readable, GET buffer not writable.
 *   -ENXIO     no attached memory node with that id.
 *   -EOPNOTSUPP  the node holds no KV store (a raw region), or one
 *              whose index this module does not serve (see features).
 */
#define CIDER_KV_GET		1
#define CIDER_KV_PUT		2	/* insert or update */
#define CIDER_KV_INSERT		3	/* -EEXIST if present */
#define CIDER_KV_UPDATE		4	/* -ENOENT if absent */
#define CIDER_KV_DELETE		5	/* -ENOENT if absent */
#define CIDER_KV_SCAN		6	/* keys, a page at a time: below */

/*
 * value and value_len: PUT, INSERT and UPDATE the value and its length
 * (0..CIDER_KV_MAX_VALUE); GET the buffer and its size, and out (ioctl)
 * the value's length; DELETE 0 and 0.
 */
#define CIDER_KV_MAX_KEY	1024U
#define CIDER_KV_MAX_VALUE	(64U << 10)

struct cider_kv_cmd {
	__u32 size;			/* sizeof(struct cider_kv_cmd), <= 80 */
	__u32 store;			/* the memory node's mn_id */
	__u32 opcode;			/* CIDER_KV_* */
	__u32 flags;			/* must be 0 */
	__u64 key;			/* user pointer to key_len bytes */
	__u64 value;			/* user pointer, see value_len */
	__u32 key_len;			/* 1..CIDER_KV_MAX_KEY (SCAN: from 0) */
	__u32 value_len;		/* see below */
	union {
		__u64 reserved[2];	/* 0, but for SCAN: */
		struct {
			__u64 cursor;	/* SCAN: in and out, below */
			__u32 count;	/* SCAN: positions to visit, 0: 256 */
			__u32 scan_reserved;	/* 0 */
		};
	};
};

#define CIDER_KV_CMD_SIZE_VER0	56

/*
 * CIDER_KV_SCAN (CIDER_FEAT_KV_SCAN): the store's keys, a page per call,
 * with Redis SCAN's promise: a key present for a whole scan (cursor 0
 * until a call returns cursor 0) is returned at least once; a key
 * inserted or deleted meanwhile may or may not be; a key may come twice.
 * Only keys: GET the values wanted.
 *
 *   key, key_len  a prefix: only keys starting with it (key_len 0: all;
 *                 an array store takes none)
 *   value         the buffer for the page's records, each a struct
 *                 cider_kv_scan_rec padded to 8 bytes
 *                 (CIDER_KV_SCAN_REC_SIZE), one after the other
 *   value_len     its size, at least CIDER_KV_SCAN_MIN_BUF (one record
 *                 of the longest key); out (ioctl): the bytes used
 *   cursor        0 to start, else the cursor the last call returned
 *                 (opaque: one not made by this store is refused,
 *                 EINVAL); out: where the next page starts, 0 at the end
 *                 (ioctl: this field; io_uring: the CQE's big_cqe[0],
 *                 so the ring must use IORING_SETUP_CQE32, else EINVAL)
 *   count         index positions this call visits, 1..
 *                 CIDER_KV_SCAN_MAX_COUNT, 0 for 256 (fewer when the
 *                 buffer fills: the next page starts at the key that did
 *                 not fit)
 *
 * Result: the number of records (0 is a page without keys, not the end:
 * the end is cursor 0), or the errors above.  A page reads the index (one
 * READ per 8 positions) and the header and key of each key's block (up to
 * 4 READs in one batch), so a scan costs the memory node about
 * positions / 8 + keys / 4 round trips.  An array store's keys are its
 * 8-byte little-endian indexes.
 */
struct cider_kv_scan_rec {
	__u32 key_len;
	__u8 key[];
};

#define CIDER_KV_SCAN_REC_SIZE(key_len)	(((key_len) + 4U + 7U) & ~7U)
#define CIDER_KV_SCAN_MIN_BUF	CIDER_KV_SCAN_REC_SIZE(CIDER_KV_MAX_KEY)
#define CIDER_KV_SCAN_MAX_COUNT	16384U
#define CIDER_IOC_KV		_IOWR(CIDER_IOC_MAGIC, 0x20, struct cider_kv_cmd)

/*
 * The atomics agent (CIDER_FEAT_AGENT; cider-agentd(8)), after ublk's
 * fetch and commit: one process per compute node registers an open file
 * of the device (CIDER_IOC_AGENT_REGISTER, CAP_SYS_ADMIN; EBUSY while
 * another is registered) with nr_tags tags, each a buffer of buf_len
 * bytes in the agent's memory.  It then queues, on an io_uring of that
 * file, one CIDER_URING_AGENT_FETCH per tag; the module completes a
 * fetch when it has a batch of verbs for the agent, which it writes to
 * the tag's buffer (CQE res: the request's length, or -errno: ENODEV the
 * agent was unregistered because it stalled past op_timeout_ms or the
 * module is going; the agent then exits).  The agent runs the request's
 * verbs on its own connections to the memory node, in order on one
 * queue pair, writes a struct cider_agent_res to the buffer and queues
 * CIDER_URING_AGENT_COMMIT for the tag, which commits the result and
 * fetches the next request.  The agent is gone when its file is closed
 * or its task exits: the batches it holds end as if their channel had
 * failed (WRITEs and atomics "outcome unknown", READs not executed) and
 * every node whose atomics it carried is lost.
 */
#define CIDER_AGENT_MAX_TAGS	64
#define CIDER_AGENT_MIN_BUF	(256U << 10)	/* the largest batch fits */
#define CIDER_AGENT_MAX_BUF	(16U << 20)

struct cider_agent_reg {
	__u32 size;
	__u32 flags;			/* 0 */
	__u32 nr_tags;			/* 1..CIDER_AGENT_MAX_TAGS */
	__u32 buf_len;			/* CIDER_AGENT_MIN_BUF..CIDER_AGENT_MAX_BUF */
	__u64 reserved[2];		/* 0 */
};

#define CIDER_AGENT_REG_SIZE_VER0	32
#define CIDER_IOC_AGENT_REGISTER	_IOW(CIDER_IOC_MAGIC, 0x30, struct cider_agent_reg)

/* In the SQE's command area of the two commands below. */
struct cider_agent_cmd {
	__u32 size;
	__u32 tag;			/* 0..nr_tags - 1 */
	__u64 buf;			/* the tag's buffer, buf_len bytes, 8-aligned */
	__u64 reserved[2];		/* 0 */
};

#define CIDER_AGENT_CMD_SIZE_VER0	32
/* Wait for the tag's first request (the tag must be idle: else EBUSY). */
#define CIDER_URING_AGENT_FETCH		_IOW(CIDER_IOC_MAGIC, 0x31, struct cider_agent_cmd)
/* The tag's request is done, its result in buf: commit it, fetch the next. */
#define CIDER_URING_AGENT_COMMIT	_IOW(CIDER_IOC_MAGIC, 0x32, struct cider_agent_cmd)

/* cider_agent_wr.op */
#define CIDER_AGENT_READ	1
#define CIDER_AGENT_WRITE	2
#define CIDER_AGENT_CAS		3	/* 8 bytes: compare_add, then swap */
#define CIDER_AGENT_FAA		4	/* 8 bytes: add compare_add */

struct cider_agent_wr {
	__u8 op;			/* CIDER_AGENT_* */
	__u8 reserved[3];
	__u32 len;			/* bytes; 8 for CAS and FAA */
	__u64 offset;			/* in the node's region */
	__u64 compare_add;
	__u64 swap;
};

/*
 * A request in the tag's buffer: the header, nr verbs, then the bytes of
 * the WRITEs in their order, each padded to 8.  The agent connects to
 * (family, addr, port) as compute node cn_id when it holds no connection
 * for (mn_id, generation) yet, and drops one of an older generation.
 */
#define CIDER_AGENT_REQ_BATCH	1

struct cider_agent_req {
	__u32 type;			/* CIDER_AGENT_REQ_* */
	__u32 mn_id;
	__u32 generation;		/* of the node's attach */
	__u32 nr;			/* verbs */
	__u32 cn_id;
	__u16 family;			/* AF_INET or AF_INET6 */
	__u16 port;			/* host byte order */
	__u8 addr[16];
	__u64 region_size;		/* the size the node's hello must say */
	struct cider_agent_wr wr[];
};

/*
 * The result the agent writes over the request before committing: the
 * header, nr statuses, then the bytes of the READs in their order, each
 * padded to 8.  A verb's status: 0 done (an atomic's old value in
 * value, little-endian as the node stores it); -ECOMM a WRITE or atomic
 * that may or may not have executed; any other -errno: not executed.
 * status: 0, or the batch's -errno when no verb ran (e.g. -ECONNREFUSED).
 */
struct cider_agent_wr_res {
	__s32 status;
	__u32 reserved;
	__u64 value;
};

struct cider_agent_res {
	__s32 status;
	__u32 nr;			/* the request's */
	__u64 reserved;			/* 0 */
	struct cider_agent_wr_res wr[];
};

#endif /* _UAPI_LINUX_CIDER_H */
