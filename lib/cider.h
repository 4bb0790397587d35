/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libcider: user-space access to cider.ko through /dev/cider.
 *
 * Functions return 0 (or a non-negative value) on success and a negative
 * errno on failure, as liburing does.
 */
#ifndef LIBCIDER_H
#define LIBCIDER_H

#include <stddef.h>
#include <stdint.h>
#include <linux/cider.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CIDER_DEV_PATH "/dev/" CIDER_DEVICE_NAME

/* Open /dev/cider (or $CIDER_DEV when set); a descriptor or -errno. */
int cider_open(void);

/* CIDER_IOC_GET_INFO on @fd into @info; 0 or -errno. */
int cider_get_info(int fd, struct cider_info *info);

/*
 * What the module can do (CIDER_FEAT_*): @info's features, or
 * CIDER_FEAT_V0 from a module that predates them.  Decide by these, never
 * by comparing ABI versions.
 */
unsigned long long cider_features(const struct cider_info *info);

/* A feature bit's name ("ext-args", "kv-hash", ...), NULL if unknown. */
const char *cider_feature_name(unsigned int bit);

/*
 * Fill the address part of @at from "a.b.c.d:port" or "[v6]:port";
 * 0 or -EINVAL.
 */
int cider_parse_addr(const char *s, struct cider_attach *at);

/* Attach to the memory node at "ADDR:PORT" as compute node @cn_id. */
int cider_attach(int fd, const char *addr, unsigned int cn_id,
		 unsigned int timeout_ms, struct cider_attach *out);
/*
 * The same, proving the store's shared key (@key_len bytes at @key, as
 * cider_key_load() reads a key file, keyfile.h) on every connect; needs
 * CIDER_FEAT_KEY.  The key is the caller's to wipe afterwards.
 */
int cider_attach_key(int fd, const char *addr, unsigned int cn_id, unsigned int timeout_ms,
		     const void *key, size_t key_len, struct cider_attach *out);

/*
 * Read a store's shared key file, as cider-memd --key-file and ciderctl
 * attach key-file do: its bytes are the key (one trailing newline
 * dropped), CIDER_KEY_MIN_LEN to CIDER_KEY_MAX_LEN of them, in a regular
 * file that only its owner may read or write (cider-memd --new-key makes
 * one).  @key has room for CIDER_KEY_MAX_LEN bytes; 0 with its length in
 * @len, or -1 with why in @err (never any of the key's bytes).
 */
int cider_key_load(const char *path, unsigned char *key, size_t *len,
		   char *err, size_t errlen);
int cider_detach(int fd, unsigned int mn_id);

/* The attached memory node with the lowest id >= @mn_id; -ENOENT at the end. */
int cider_mn_info(int fd, unsigned int mn_id, struct cider_mn_info *mi);
/*
 * Node @mn_id's counters by name (CIDER_IOC_MN_STATS): at most *@nr into
 * @st, and *@nr set to how many the node has (call with *@nr 0 to size
 * @st; at most CIDER_STATS_MAX).  0, or -errno: -ENOENT no such node,
 * -ENOTTY a module without CIDER_FEAT_STATS, -EINVAL *@nr above
 * CIDER_STATS_MAX, -EFAULT @st not writable.
 */
int cider_mn_stats(int fd, unsigned int mn_id, struct cider_stat *st, unsigned int *nr);

/* Format a memory node's address as "a.b.c.d:port" or "[v6]:port". */
void cider_format_addr(unsigned int family, const __u8 addr[16], unsigned int port,
		       char *buf, size_t len);

/* Describe @nr raw operations on memory node @mn_id (ioctl or io_uring). */
void cider_raw_batch_init(struct cider_raw_batch *rb, unsigned int mn_id,
			  struct cider_raw_op *ops, unsigned int nr);

/*
 * Run @nr raw operations on memory node @mn_id as one batch and wait;
 * 0 or the first operation's -errno (each op's result in ops[i].result).
 */
int cider_raw(int fd, unsigned int mn_id, struct cider_raw_op *ops, unsigned int nr);

/*
 * Key-value operations on store @store (an attached memory node's
 * mn_id), synchronous, through CIDER_IOC_KV.  Each returns 0 or -errno;
 * the errnos are those of CIDER_IOC_KV in <linux/cider.h>: -ENOENT no
 * such key, -EEXIST (insert) present, -ENOSPC no room, -ENOTCONN the
 * node was lost and the operation did not happen, -ECOMM outcome unknown.
 *
 * cider_get: *value_len is the buffer's size on entry and the value's
 * length on return, also with -ERANGE (buffer too small; nothing copied).
 */
int cider_get(int fd, unsigned int store, const void *key, size_t key_len,
	      void *value, size_t *value_len);
/* Insert or update. */
int cider_put(int fd, unsigned int store, const void *key, size_t key_len,
	      const void *value, size_t value_len);
/* -EEXIST when the key is present. */
int cider_insert(int fd, unsigned int store, const void *key, size_t key_len,
		 const void *value, size_t value_len);
/* -ENOENT when the key is absent. */
int cider_update(int fd, unsigned int store, const void *key, size_t key_len,
		 const void *value, size_t value_len);
/* -ENOENT when the key is absent. */
int cider_delete(int fd, unsigned int store, const void *key, size_t key_len);

/*
 * One page of the store's keys (CIDER_KV_SCAN, CIDER_FEAT_KV_SCAN): its
 * records into @buf, *@len bytes (at least CIDER_KV_SCAN_MIN_BUF), and
 * out the bytes used; keys starting with @prefix (@prefix_len 0: all);
 * *@cursor 0 to start, and out where the next page starts, 0 at the end;
 * @count index positions to visit (0: the module's default).  Returns the
 * number of records (0 is not the end: *@cursor 0 is) or -errno.  A key
 * present for the whole scan comes at least once; one added or removed
 * meanwhile may or may not; a key may come twice.
 */
int cider_scan(int fd, unsigned int store, const void *prefix, size_t prefix_len,
	       uint64_t *cursor, unsigned int count, void *buf, size_t *len);
/*
 * Walk a page of @len bytes: the key of the record at byte *@at, its
 * length in *@key_len, *@at moved to the next; NULL at the end.
 */
const void *cider_scan_rec(const void *buf, size_t len, size_t *at, size_t *key_len);

/*
 * Describe one KV operation (for CIDER_IOC_KV or an io_uring SQE);
 * -EINVAL, with @cmd untouched, for lengths the ABI cannot carry.
 */
int cider_kv_cmd_init(struct cider_kv_cmd *cmd, unsigned int store, unsigned int opcode,
		      const void *key, size_t key_len, const void *value, size_t value_len);

/*
 * KV operations in batches, up to @depth (1..CIDER_BATCH_MAX_DEPTH) in
 * flight at once through io_uring, for callers that do not use liburing
 * themselves.  cider_batch_new() returns NULL with errno set.
 *
 * cider_batch_run() runs @nr operations described by cider_kv_cmd_init()
 * (their keys, values and GET buffers valid until it returns), in order
 * of submission but completing in any order, and puts each result in
 * @res[i] as CIDER_IOC_KV returns it (GET: the value's length, or
 * -errno).  It returns 0 once all have completed, or -errno if the ring
 * itself failed: then it waited for the operations the kernel had taken,
 * the others (-ECANCELED) did not run, and the batch refuses further runs.
 */
#define CIDER_BATCH_MAX_DEPTH	4096
struct cider_batch;
struct cider_batch *cider_batch_new(int fd, unsigned int depth);
int cider_batch_run(struct cider_batch *b, const struct cider_kv_cmd *cmds, unsigned int nr,
		    int *res);
void cider_batch_free(struct cider_batch *b);

/* A message for a KV operation's result (-ENOENT is "no such key"). */
const char *cider_kv_strerror(int err);

/* A message for an error a libcider call returned. */
const char *cider_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* LIBCIDER_H */
