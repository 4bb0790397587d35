// SPDX-License-Identifier: GPL-2.0
/*
 * ciderctl kv load: a dump file (kvdump.h) from standard input into a
 * store, PUT by PUT through libcider's batches (io_uring), up to depth
 * operations in flight.  A key that fails is named and loading goes on
 * (unless stop-on-error); a malformed file stops it at the bad record,
 * the records before it loaded.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cider.h"
#include "numparse.h"
#include "ciderctl.h"
#include "kvdump.h"

#define LOAD_DEFAULT_DEPTH	64
/* A batch also stops at this many bytes of keys and values: depth 4096
 * of 64 KiB values would otherwise hold 270 MB. */
#define LOAD_BATCH_BYTES	(8U << 20)

struct load_args {
	unsigned int depth;
	bool stop_on_error;
};

struct load_stats {
	uint64_t loaded, failed, bytes;
	int worst;			/* the highest exit status of a failure */
	double start, shown;		/* when the load began, the last progress line */
	bool progress;			/* stderr is a terminal */
};

/* One batch of PUTs: the records' bytes copied into an arena. */
struct load_batch {
	unsigned int n, depth;
	struct cider_kv_cmd *cmds;
	int *res;
	uint64_t *offsets;		/* each record's byte offset, for messages */
	uint8_t *arena;
	size_t used;
};

static double load_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int load_parse(int argc, char **argv, struct load_args *a)
{
	char err[128];
	int i;

	*a = (struct load_args){ .depth = LOAD_DEFAULT_DEPTH };
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "stop-on-error")) {
			a->stop_on_error = true;
		} else if (!strcmp(argv[i], "depth") && i + 1 < argc) {
			if (cider_num_parse_uint(argv[++i], 1, CIDER_BATCH_MAX_DEPTH, 0, &a->depth,
						 err, sizeof(err))) {
				fprintf(stderr, "ciderctl: kv load: depth %s: %s\n", argv[i], err);
				return -1;
			}
		} else {
			fprintf(stderr, "ciderctl: usage: kv [-m MN] load [depth N] "
				"[stop-on-error] < FILE\n");
			return -1;
		}
	}
	return 0;
}

static void load_fail(struct load_stats *st, bool array, uint64_t offset, const void *key,
		      size_t key_len, int err)
{
	int status = kv_status(err);

	st->failed++;
	if (status > st->worst)
		st->worst = status;
	if (st->progress)
		fputc('\n', stderr);	/* not onto the progress line */
	fputs("ciderctl: kv load: key ", stderr);
	kv_print_key(stderr, array, key, key_len);
	fprintf(stderr, " (record at byte %llu): %s\n", (unsigned long long)offset,
		cider_kv_strerror(err));
}

static void load_progress(struct load_stats *st, bool last)
{
	double now = load_now(), secs = now - st->start;

	if (!st->progress || (!last && now - st->shown < 1))
		return;
	st->shown = now;
	fprintf(stderr, "\rciderctl: kv load: %llu records, %.1f MB, %.0f records/s%s",
		(unsigned long long)st->loaded, st->bytes / 1e6,
		secs > 0 ? st->loaded / secs : 0.0, last ? "\n" : "");
}

static int batch_alloc(struct load_batch *b, unsigned int depth)
{
	*b = (struct load_batch){ .depth = depth };
	b->cmds = calloc(depth, sizeof(*b->cmds));
	b->res = calloc(depth, sizeof(*b->res));
	b->offsets = calloc(depth, sizeof(*b->offsets));
	/* Room for the byte limit plus the record that crosses it. */
	b->arena = malloc(LOAD_BATCH_BYTES + KVDUMP_MAX_KEY + KVDUMP_MAX_VALUE);
	return b->cmds && b->res && b->offsets && b->arena ? 0 : -ENOMEM;
}

static void batch_free(struct load_batch *b)
{
	free(b->cmds);
	free(b->res);
	free(b->offsets);
	free(b->arena);
}

/* Copy @rec into the batch as a PUT on @mn. */
static void batch_add(struct load_batch *b, unsigned int mn, const struct kvdump_record *rec)
{
	uint8_t *k = b->arena + b->used, *v = k + rec->key_len;

	memcpy(k, rec->key, rec->key_len);
	memcpy(v, rec->value, rec->value_len);
	b->used += rec->key_len + rec->value_len;
	/* The lengths are the format's (at most 64 KiB): init cannot fail. */
	cider_kv_cmd_init(&b->cmds[b->n], mn, CIDER_KV_PUT, k, rec->key_len, v, rec->value_len);
	b->offsets[b->n++] = rec->offset;
}

static bool batch_full(const struct load_batch *b)
{
	return b->n == b->depth || b->used >= LOAD_BATCH_BYTES;
}

/* Run the batch's PUTs and count them; 0, or the ring's -errno. */
static int batch_flush(struct cider_batch *cb, struct load_batch *b, struct load_stats *st,
		       bool array)
{
	unsigned int i;
	int ret;

	if (!b->n)
		return 0;
	ret = cider_batch_run(cb, b->cmds, b->n, b->res);
	for (i = 0; i < b->n; i++) {
		const struct cider_kv_cmd *c = &b->cmds[i];

		if (b->res[i] < 0 && b->res[i] != -ECANCELED) {
			load_fail(st, array, b->offsets[i], (const void *)(uintptr_t)c->key,
				  c->key_len, b->res[i]);
		} else if (b->res[i] >= 0) {
			st->loaded++;
			st->bytes += c->key_len + c->value_len;
		}
	}
	b->n = 0;
	b->used = 0;
	load_progress(st, false);
	return ret;
}

/* A record beyond the store's limits fails here, as the store would fail it. */
static int load_fits(const struct cider_mn_info *mi, const struct kvdump_record *rec)
{
	if (rec->key_len > mi->max_key_len)
		return -ENAMETOOLONG;
	if (rec->value_len > mi->max_value_len)
		return -E2BIG;
	return 0;
}

struct load_ctx {
	const struct cider_mn_info *mi;
	const struct load_args *a;
	struct kvdump_reader *r;
	struct cider_batch *cb;
	struct load_batch b;
	struct load_stats st;
	bool array, malformed, ring_failed;
};

/* Read and PUT every record; stops at the trailer, a bad record or a stop. */
static void load_records(struct load_ctx *c)
{
	struct kvdump_record rec;
	int ret, err;

	while ((ret = kvdump_read_record(c->r, &rec)) == 1) {
		err = load_fits(c->mi, &rec);
		if (err) {
			load_fail(&c->st, c->array, rec.offset, rec.key, rec.key_len, err);
		} else {
			batch_add(&c->b, c->mi->mn_id, &rec);
			if (batch_full(&c->b) &&
			    batch_flush(c->cb, &c->b, &c->st, c->array)) {
				c->ring_failed = true;
				return;
			}
		}
		if (c->a->stop_on_error && c->st.failed)
			break;
	}
	/* What was read before the end, the bad record or the stop goes in. */
	if (batch_flush(c->cb, &c->b, &c->st, c->array))
		c->ring_failed = true;
	if (ret < 0) {
		c->malformed = true;
		if (c->st.progress)
			fputc('\n', stderr);
		fprintf(stderr, "ciderctl: kv load: malformed dump: %s; nothing after it loaded\n",
			c->r->err);
	}
}

static void load_summary(const struct load_ctx *c, int status)
{
	double secs = load_now() - c->st.start;

	if (json) {
		printf("{\"loaded\":%llu,\"failed\":%llu,\"bytes\":%llu,\"seconds\":%.3f,"
		       "\"complete\":%s,\"status\":%d}\n",
		       (unsigned long long)c->st.loaded, (unsigned long long)c->st.failed,
		       (unsigned long long)c->st.bytes, secs,
		       status || c->malformed ? "false" : "true", status);
		return;
	}
	fprintf(stderr, "ciderctl: kv load: %llu records loaded, %llu failed, %llu bytes, "
		"%.2f s%s\n", (unsigned long long)c->st.loaded,
		(unsigned long long)c->st.failed, (unsigned long long)c->st.bytes, secs,
		c->malformed ? " (the file is malformed: see above)" : "");
}

/* The file's kind against the store's: refused before any PUT. */
static int load_check_kind(const struct cider_mn_info *mi, uint32_t flags)
{
	bool array = mi->store_index == CIDER_STORE_ARRAY;

	if (array == !!(flags & KVDUMP_F_ARRAY))
		return 0;
	fprintf(stderr, "ciderctl: kv load: the dump is of %s store, mn%u's store is %s\n",
		flags & KVDUMP_F_ARRAY ? "an array" : "a hash", mi->mn_id,
		array ? "an array store" : "a hash store");
	return EXIT_USAGE;
}

static int load_run(int fd, struct load_ctx *c)
{
	int status;

	if (batch_alloc(&c->b, c->a->depth)) {
		fprintf(stderr, "ciderctl: kv load: out of memory\n");
		return 1;
	}
	c->cb = cider_batch_new(fd, c->a->depth);
	if (!c->cb) {
		fprintf(stderr, "ciderctl: kv load: io_uring: %s\n", strerror(errno));
		batch_free(&c->b);
		return EXIT_UNAVAILABLE;
	}
	c->st.start = c->st.shown = load_now();
	c->st.progress = isatty(STDERR_FILENO);
	load_records(c);
	load_progress(&c->st, true);
	status = c->st.worst;
	if (c->ring_failed) {
		fprintf(stderr, "ciderctl: kv load: the io_uring ring failed; stopped\n");
		status = status > EXIT_UNAVAILABLE ? status : EXIT_UNAVAILABLE;
	}
	if (c->malformed && status < EXIT_USAGE)
		status = EXIT_USAGE;
	load_summary(c, status);
	cider_batch_free(c->cb);
	batch_free(&c->b);
	return status;
}

int kv_load(const char *mn, int argc, char **argv)
{
	static struct kvdump_reader r;	/* 66 KB of record buffers */
	struct load_args a;
	struct cider_mn_info mi;
	struct load_ctx c = { .a = &a, .r = &r, .mi = &mi };
	int fd, ret;

	if (load_parse(argc, argv, &a))
		return EXIT_USAGE;
	if (isatty(STDIN_FILENO)) {
		fprintf(stderr, "ciderctl: kv load: reads a dump file from standard input "
			"(kv load < FILE)\n");
		return EXIT_USAGE;
	}
	if (kvdump_read_header(&r, stdin)) {
		fprintf(stderr, "ciderctl: kv load: malformed dump: %s; nothing loaded\n", r.err);
		return EXIT_USAGE;
	}
	fd = ctl_dev();
	if (fd < 0)
		return EXIT_UNAVAILABLE;
	ret = kv_store(fd, mn, &mi);
	if (!ret)
		ret = load_check_kind(&mi, r.flags);
	if (ret)
		return ret;
	c.array = mi.store_index == CIDER_STORE_ARRAY;
	return load_run(fd, &c);
}
