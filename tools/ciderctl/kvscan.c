// SPDX-License-Identifier: GPL-2.0
/*
 * ciderctl kv scan and kv dump: a store's keys page by page
 * (CIDER_KV_SCAN, libcider's cider_scan()), printed one per line, or
 * each with its value (GETs in batches, through io_uring) as a dump file
 * (kvdump.h) on standard output for kv load.
 *
 * A scan is not a snapshot: a key present for the whole scan comes at
 * least once; one written or deleted meanwhile may or may not; a key may
 * come twice (then it is in the dump twice: loading keeps the later).
 * A key deleted between its page and its GET is left out and counted.
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
#include "jsonw.h"
#include "numparse.h"
#include "ciderctl.h"
#include "kvdump.h"

/* A page: the records of up to this many bytes of keys. */
#define SCAN_BUF		(64U << 10)
/* GETs in flight while dumping. */
#define DUMP_DEPTH		64

struct scan_args {
	const char *prefix;
	unsigned int count;		/* index positions a page visits, 0: the module's */
};

void kv_print_key(FILE *f, bool array, const uint8_t *k, size_t len)
{
	uint64_t idx = 0;
	size_t i;
	bool text = len > 0;

	if (array && len == 8) {
		for (i = 8; i-- > 0;)
			idx = idx << 8 | k[i];
		fprintf(f, "%llu", (unsigned long long)idx);
		return;
	}
	for (i = 0; i < len; i++)
		text &= k[i] >= 0x20 && k[i] < 0x7f;
	if (text && !(len > 2 && k[0] == '0' && k[1] == 'x')) {
		fwrite(k, 1, len, f);
		return;
	}
	fputs("0x", f);
	for (i = 0; i < len; i++)
		fprintf(f, "%02x", k[i]);
}

static double scan_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* [PREFIX] [count N]: 0, or the usage status after saying why. */
static int scan_parse(const char *what, int argc, char **argv, struct scan_args *a)
{
	char err[128];
	int i = 0;

	*a = (struct scan_args){ 0 };
	if (argc % 2)
		a->prefix = argv[i++];
	for (; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "count") ||
		    cider_num_parse_uint(argv[i + 1], 1, CIDER_KV_SCAN_MAX_COUNT, 0, &a->count,
					 err, sizeof(err))) {
			fprintf(stderr, "ciderctl: usage: kv [-m MN] %s [PREFIX] [count 1..%u]\n",
				what, CIDER_KV_SCAN_MAX_COUNT);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* The store, refusing a prefix an array store cannot have. */
static int scan_open(const char *what, const char *mn, const struct scan_args *a,
		     struct cider_mn_info *mi, int *fd)
{
	int ret;

	*fd = ctl_dev();
	if (*fd < 0)
		return EXIT_UNAVAILABLE;
	ret = kv_store(*fd, mn, mi);
	if (ret)
		return ret;
	if (a->prefix && mi->store_index == CIDER_STORE_ARRAY) {
		fprintf(stderr, "ciderctl: kv %s: an array store's keys are numbers: no prefix\n",
			what);
		return EXIT_USAGE;
	}
	return 0;
}

/* One page into @buf; its records' bytes in *@len.  The status on failure. */
static int scan_page(int fd, const struct cider_mn_info *mi, const struct scan_args *a,
		     uint64_t *cursor, uint8_t *buf, size_t *len, const char *what)
{
	int ret;

	*len = SCAN_BUF;
	ret = cider_scan(fd, mi->mn_id, a->prefix, a->prefix ? strlen(a->prefix) : 0, cursor,
			 a->count, buf, len);
	if (ret >= 0)
		return 0;
	fprintf(stderr, "ciderctl: kv %s: %s\n", what,
		ret == -ENOTTY || ret == -EINVAL ? "this cider.ko cannot scan (no kv-scan in "
		"ciderctl info's features) or refused the page" : cider_kv_strerror(ret));
	return kv_status(ret);
}

static void scan_print(bool array, const uint8_t *k, size_t len)
{
	if (!json) {
		kv_print_key(stdout, array, k, len);
		putchar('\n');
		return;
	}
	if (array) {
		printf("{\"key\":");
		kv_print_key(stdout, true, k, len);
	} else if (cider_utf8_ok(k, len)) {
		printf("{\"key\":");
		cider_json_str(stdout, (const char *)k, len);
	} else {
		printf("{\"key_base64\":");
		cider_json_base64(stdout, k, len);
	}
	printf("}\n");
}

int kv_scan(const char *mn, int argc, char **argv)
{
	static uint8_t buf[SCAN_BUF];
	struct cider_mn_info mi;
	struct scan_args a;
	uint64_t cursor = 0;
	size_t len, at, kl;
	const void *k;
	int fd, ret;

	ret = scan_parse("scan", argc, argv, &a);
	if (!ret)
		ret = scan_open("scan", mn, &a, &mi, &fd);
	if (ret)
		return ret;
	do {
		ret = scan_page(fd, &mi, &a, &cursor, buf, &len, "scan");
		if (ret)
			return ret;
		for (at = 0; (k = cider_scan_rec(buf, len, &at, &kl));)
			scan_print(mi.store_index == CIDER_STORE_ARRAY, k, kl);
	} while (cursor);
	return fflush(stdout) ? 1 : 0;
}

/* A dump: the writer, the GETs in flight and what became of them. */
struct dump_ctx {
	struct kvdump_writer w;
	struct cider_batch *cb;
	struct cider_kv_cmd cmds[DUMP_DEPTH];
	int res[DUMP_DEPTH];
	uint8_t keys[DUMP_DEPTH][CIDER_KV_MAX_KEY];
	uint8_t *vals;			/* DUMP_DEPTH values of the store's largest */
	unsigned int n;
	uint32_t vmax;
	uint64_t dumped, gone, bytes;
	int worst;
	double start, shown;
	bool progress, array;
};

/* GET the batch's keys and write what came back. */
static int dump_flush(struct dump_ctx *d)
{
	unsigned int i;
	int ret;

	if (!d->n)
		return 0;
	ret = cider_batch_run(d->cb, d->cmds, d->n, d->res);
	for (i = 0; !ret && i < d->n; i++) {
		const struct cider_kv_cmd *c = &d->cmds[i];

		if (d->res[i] == -ENOENT) {
			d->gone++;	/* deleted since its page */
		} else if (d->res[i] < 0) {
			fputs("ciderctl: kv dump: key ", stderr);
			kv_print_key(stderr, d->array, d->keys[i], c->key_len);
			fprintf(stderr, ": %s\n", cider_kv_strerror(d->res[i]));
			ret = d->res[i];
		} else if (kvdump_write_record(&d->w, d->keys[i], c->key_len,
					       d->vals + (size_t)i * d->vmax, (size_t)d->res[i])) {
			fprintf(stderr, "ciderctl: kv dump: writing: %s\n", strerror(errno));
			return -EIO;
		} else {
			d->dumped++;
			d->bytes += c->key_len + (size_t)d->res[i];
		}
	}
	d->n = 0;
	if (d->progress && scan_now() - d->shown >= 1) {
		d->shown = scan_now();
		fprintf(stderr, "\rciderctl: kv dump: %llu records, %.1f MB",
			(unsigned long long)d->dumped, d->bytes / 1e6);
	}
	return ret;
}

/* Queue a GET of @key (a page's record); flush when the batch is full. */
static int dump_key(struct dump_ctx *d, unsigned int mn, const void *key, size_t kl)
{
	memcpy(d->keys[d->n], key, kl);
	cider_kv_cmd_init(&d->cmds[d->n], mn, CIDER_KV_GET, d->keys[d->n], kl,
			  d->vals + (size_t)d->n * d->vmax, d->vmax);
	return ++d->n == DUMP_DEPTH ? dump_flush(d) : 0;
}

static int dump_pages(int fd, const struct cider_mn_info *mi, const struct scan_args *a,
		      struct dump_ctx *d)
{
	static uint8_t buf[SCAN_BUF];
	uint64_t cursor = 0;
	size_t len, at, kl;
	const void *k;
	int ret;

	do {
		ret = scan_page(fd, mi, a, &cursor, buf, &len, "dump");
		if (ret)
			return ret;
		for (at = 0; (k = cider_scan_rec(buf, len, &at, &kl));) {
			ret = dump_key(d, mi->mn_id, k, kl);
			if (ret)
				return ret == -EIO ? 1 : kv_status(ret);
		}
	} while (cursor);
	ret = dump_flush(d);
	return ret == -EIO ? 1 : ret ? kv_status(ret) : 0;
}

static int dump_run(int fd, const struct cider_mn_info *mi, const struct scan_args *a,
		    struct dump_ctx *d)
{
	int status;

	d->cb = cider_batch_new(fd, DUMP_DEPTH);
	if (!d->cb) {
		fprintf(stderr, "ciderctl: kv dump: io_uring: %s\n", strerror(errno));
		return EXIT_UNAVAILABLE;
	}
	status = kvdump_write_header(&d->w, stdout, d->array ? KVDUMP_F_ARRAY : 0) ? 1 :
		 dump_pages(fd, mi, a, d);
	if (!status && kvdump_write_trailer(&d->w)) {
		fprintf(stderr, "ciderctl: kv dump: writing: %s\n", strerror(errno));
		status = 1;
	}
	cider_batch_free(d->cb);
	if (d->progress)
		fputc('\n', stderr);
	fprintf(stderr, "ciderctl: kv dump: %llu records, %llu bytes, %llu deleted while "
		"dumping, %.2f s%s\n", (unsigned long long)d->dumped,
		(unsigned long long)d->bytes, (unsigned long long)d->gone,
		scan_now() - d->start, status ? " (incomplete: no trailer, kv load refuses it)" :
		"");
	return status;
}

int kv_dump(const char *mn, int argc, char **argv)
{
	static struct dump_ctx d;
	struct cider_mn_info mi;
	struct scan_args a;
	int fd, ret;

	ret = scan_parse("dump", argc, argv, &a);
	if (ret)
		return ret;
	if (isatty(STDOUT_FILENO)) {
		fprintf(stderr, "ciderctl: kv dump: writes a dump file to standard output "
			"(kv dump > FILE)\n");
		return EXIT_USAGE;
	}
	ret = scan_open("dump", mn, &a, &mi, &fd);
	if (ret)
		return ret;
	d.array = mi.store_index == CIDER_STORE_ARRAY;
	d.vmax = mi.max_value_len ? mi.max_value_len : 8;
	d.vals = malloc((size_t)DUMP_DEPTH * d.vmax);
	if (!d.vals) {
		fprintf(stderr, "ciderctl: kv dump: out of memory\n");
		return 1;
	}
	d.start = d.shown = scan_now();
	d.progress = isatty(STDERR_FILENO);
	ret = dump_run(fd, &mi, &a, &d);
	free(d.vals);
	return ret;
}
