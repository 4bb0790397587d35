// SPDX-License-Identifier: GPL-2.0
/*
 * ciderctl kv load against real stores over rxe: a dump of 10,000 binary
 * keys with values of log-uniform sizes up to 64 KiB loads into a hash
 * store and reads back byte for byte; an array store's dump into an array
 * store, a key outside its range named and the rest loaded (with
 * stop-on-error: none after it); a dump of the wrong kind refused before
 * any PUT; a malformed file stops the load at its bad record, the records
 * before it loaded; a store that fills up names each key it refused.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "cider.h"
#include "root.h"
#include "memd.h"
#include "../../tools/ciderctl/kvdump.h"

#define NR_KEYS		10000
/*
 * On the debug kernel (KASAN, kmemleak: its file is there) 1,000: the
 * same paths for its checkers, where 10,000 took 5 minutes of its run
 * (load 111 s, read back 186 s under TCG).
 */
#define NR_KEYS_DEBUG	1000

static unsigned int nr_keys(void)
{
	return access("/sys/kernel/debug/kmemleak", F_OK) ? NR_KEYS : NR_KEYS_DEBUG;
}
#define SEED		0x6b766c6f6164ULL	/* "kvload" */
#define DUMP		"/tmp/kvload.dump"
#define OUT		"/tmp/kvload.out"
#define ERR		"/tmp/kvload.err"
#define EXIT_USAGE_STATUS	2	/* ciderctl(8): bad usage, a malformed file */

static unsigned int test_port(void)
{
	return 9900 + getpid() % 500;
}

static uint64_t rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);	/* splitmix64 */

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void rnd_bytes(uint64_t *s, uint8_t *p, size_t n)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!(i % 8))
			v = rnd(s);
		p[i] = (uint8_t)(v >> (8 * (i % 8)));
	}
}

/*
 * Record @i of the big dump, from the stream @s: a key of its index's 4
 * bytes and 0..28 random ones (1024 bytes for every 1000th), a value
 * whose length + 1 is log-uniform over [1, 65536) (its octave uniform,
 * then uniform in it), 64 KiB for every 500th.
 */
static void gen_record(uint64_t *s, unsigned int i, uint8_t *key, size_t *klen, uint8_t *val,
		       size_t *vlen)
{
	unsigned int octave = rnd(s) % 16;

	*klen = i % 1000 == 7 ? KVDUMP_MAX_KEY : 4 + rnd(s) % 29;
	*vlen = (((size_t)1 << octave) + rnd(s) % ((size_t)1 << octave)) - 1;
	if (i % 500 == 3)
		*vlen = KVDUMP_MAX_VALUE;
	memcpy(key, &i, 4);
	rnd_bytes(s, key + 4, *klen - 4);
	rnd_bytes(s, val, *vlen);
}

static uint8_t key[KVDUMP_MAX_KEY], val[KVDUMP_MAX_VALUE], out[KVDUMP_MAX_VALUE];

/* The big dump into DUMP; its bytes of keys and values. */
static uint64_t write_big_dump(void)
{
	struct kvdump_writer w;
	FILE *f = fopen(DUMP, "w");
	uint64_t s = SEED, bytes = 0;
	size_t klen, vlen;
	unsigned int i;
	int ret;

	if (!f)
		return 0;
	ret = kvdump_write_header(&w, f, 0);
	for (i = 0; !ret && i < nr_keys(); i++) {
		gen_record(&s, i, key, &klen, val, &vlen);
		ret = kvdump_write_record(&w, key, klen, val, vlen);
		bytes += klen + vlen;
	}
	if (!ret)
		ret = kvdump_write_trailer(&w);
	return fclose(f) || ret ? 0 : bytes;
}

/*
 * ciderctl -j kv -m MN load ARGS < @path: its exit status, its JSON
 * summary's "loaded" and "failed" in @loaded and @failed; stderr in ERR.
 */
static int run_load(unsigned int mn, const char *path, const char *args, uint64_t *loaded,
		    uint64_t *failed)
{
	char cmd[512], line[512];
	unsigned long long l = 0, f = 0;
	FILE *o;
	int st;

	snprintf(cmd, sizeof(cmd), "tools/ciderctl/ciderctl -j kv -m %u load %s < %s > %s 2> %s",
		 mn, args, path, OUT, ERR);
	st = system(cmd);
	o = fopen(OUT, "r");
	if (o && fgets(line, sizeof(line), o)) {
		char *p = strstr(line, "\"loaded\":"), *q = strstr(line, "\"failed\":");

		if (p && q && sscanf(p, "\"loaded\":%llu", &l) == 1 &&
		    sscanf(q, "\"failed\":%llu", &f) == 1)
			fprintf(stderr, "# load: %s", line);
	}
	if (o)
		fclose(o);
	*loaded = l;
	*failed = f;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Does ERR hold @what?  Its lines as TAP comments when it does not. */
static bool err_says(const char *what)
{
	int n = file_count(ERR, what);

	if (n <= 0 && system("sed 's/^/# stderr: /' " ERR " >&2"))
		return false;
	return n > 0;
}

struct node {
	int fd;
	bool skip;
	struct memd memd;
	struct cider_attach at;
};

static int node_up(struct node *n, const char *size, unsigned int port, const char *const *store)
{
	n->skip = !getenv("CIDER_MN_ADDR");
	n->fd = n->skip ? -1 : cider_open();
	if (n->skip)
		return 0;
	if (n->fd < 0)
		return -1;
	if (memd_start_store(&n->memd, size, port, store))
		return -1;
	return cider_attach(n->fd, n->memd.addr, 3, 0, &n->at);
}

static void node_down(struct node *n)
{
	if (!n->skip) {
		cider_detach(n->fd, n->at.mn_id);
		memd_stop(&n->memd, SIGTERM);
	}
	if (n->fd >= 0)
		close(n->fd);
}

FIXTURE(hash) {
	struct node n;
};

FIXTURE_SETUP(hash)
{
	/* 10,000 keys, about 61 MB of values in size classes: room to spare. */
	static const char *const store[] = { "--index", "hash", "--keys", "16384", NULL };

	ASSERT_EQ(0, node_up(&self->n, "256M", test_port(), store))
		TH_LOG("no store; cider-memd's log %s", self->n.memd.log);
}

FIXTURE_TEARDOWN(hash)
{
	node_down(&self->n);
}

#define NEED_MN() do { if (self->n.skip) SKIP(return, "CIDER_MN_ADDR not set"); } while (0)

/* Every key of the big dump reads back as its value, byte for byte. */
static void check_big(struct __test_metadata *_metadata, struct node *n)
{
	uint64_t s = SEED;
	size_t klen, vlen, len;
	unsigned int i;

	for (i = 0; i < nr_keys(); i++) {
		gen_record(&s, i, key, &klen, val, &vlen);
		len = sizeof(out);
		ASSERT_EQ(0, cider_get(n->fd, n->at.mn_id, key, klen, out, &len))
			TH_LOG("key %u (%zu bytes)", i, klen);
		ASSERT_EQ(vlen, len) TH_LOG("key %u", i);
		ASSERT_EQ(0, memcmp(val, out, vlen)) TH_LOG("key %u", i);
	}
}

TEST_F_TIMEOUT(hash, ten_thousand_binary_keys_load_and_read_back, 600)
{
	uint64_t bytes, loaded, failed;
	double t0, t1;

	NEED_MN();
	bytes = write_big_dump();
	ASSERT_NE(0U, bytes);
	t0 = memd_now();
	ASSERT_EQ(0, run_load(self->n.at.mn_id, DUMP, "depth 64", &loaded, &failed))
		err_says("?");
	t1 = memd_now();
	ASSERT_EQ(nr_keys(), loaded);
	ASSERT_EQ(0U, failed);
	fprintf(stderr, "# loaded %u records, %.1f MB in %.2f s: %.0f records/s, %.1f MB/s\n",
		nr_keys(), bytes / 1e6, t1 - t0, nr_keys() / (t1 - t0), bytes / 1e6 / (t1 - t0));
	check_big(_metadata, &self->n);
	fprintf(stderr, "# read back byte for byte in %.2f s\n", memd_now() - t1);
	unlink(DUMP);
}

#define DUMP2		"/tmp/kvload.dump2"

/*
 * ciderctl kv dump of a store that holds the big dump, loaded into a new
 * store: every key comes back byte for byte (the dump's records are what
 * the store holds, whatever order its scan gives them).
 */
TEST_F_TIMEOUT(hash, a_dump_loads_into_a_second_store_byte_for_byte, 600)
{
	static const char *const store[] = { "--index", "hash", "--keys", "16384", NULL };
	uint64_t loaded, failed;
	char cmd[256];
	double t0;

	NEED_MN();
	ASSERT_NE(0U, write_big_dump());
	ASSERT_EQ(0, run_load(self->n.at.mn_id, DUMP, "", &loaded, &failed));
	ASSERT_EQ(nr_keys(), loaded);
	unlink(DUMP);
	t0 = memd_now();
	snprintf(cmd, sizeof(cmd), "tools/ciderctl/ciderctl kv -m %u dump > %s 2> %s",
		 self->n.at.mn_id, DUMP2, ERR);
	ASSERT_EQ(0, system(cmd)) err_says("?");
	fprintf(stderr, "# dumped in %.2f s\n", memd_now() - t0);
	ASSERT_TRUE(err_says("10000 records") || nr_keys() != 10000);
	/* The first store goes (memory for the second), then the load. */
	node_down(&self->n);
	ASSERT_EQ(0, node_up(&self->n, "256M", test_port() + 1, store))
		TH_LOG("no second store; cider-memd's log %s", self->n.memd.log);
	ASSERT_EQ(0, run_load(self->n.at.mn_id, DUMP2, "", &loaded, &failed)) err_says("?");
	ASSERT_EQ(nr_keys(), loaded);
	ASSERT_EQ(0U, failed);
	check_big(_metadata, &self->n);
	unlink(DUMP2);
}

/*
 * A dump of @n records "m%u" => "v%u" into @path: record @bad (-1: none)
 * a key length of 2000, or with @bad_crc the CRC's last byte changed.
 */
static int write_small(const char *path, unsigned int n, int bad, bool bad_crc)
{
	struct kvdump_writer w;
	FILE *f = fopen(path, "w");
	char k[32], v[32];
	unsigned int i;
	int ret;

	if (!f)
		return -1;
	ret = kvdump_write_header(&w, f, 0);
	for (i = 0; !ret && i < n; i++) {
		snprintf(k, sizeof(k), "m%u", i);
		snprintf(v, sizeof(v), "v%u", i);
		if ((int)i == bad) {
			/* What the writer refuses: the lengths written by hand. */
			uint8_t h[8] = { 0xd0, 0x07, 0, 0, 0, 0, 0, 0 };	/* key_len 2000 */

			ret = fwrite(h, 1, 8, f) == 8 ? 0 : -1;
			continue;
		}
		ret = kvdump_write_record(&w, k, strlen(k), v, strlen(v));
	}
	if (!ret)
		ret = kvdump_write_trailer(&w);
	if (!ret && bad_crc && !fseek(f, -1, SEEK_END))
		ret = fputc(0x5a, f) == EOF ? -1 : 0;
	return fclose(f) || ret ? -1 : 0;
}

/* Keys m0..m(@n-1): how many of them are there. */
static unsigned int count_small(struct node *n, unsigned int nr)
{
	unsigned int i, found = 0;
	char k[32];
	size_t len;

	for (i = 0; i < nr; i++) {
		snprintf(k, sizeof(k), "m%u", i);
		len = sizeof(out);
		found += !cider_get(n->fd, n->at.mn_id, k, strlen(k), out, &len);
	}
	return found;
}

TEST_F(hash, a_malformed_file_stops_at_its_bad_record)
{
	uint64_t loaded, failed;

	NEED_MN();
	/* Record 150 has a key of 2000 bytes: 0..149 loaded, none after. */
	ASSERT_EQ(0, write_small(DUMP, 300, 150, false));
	ASSERT_EQ(EXIT_USAGE_STATUS, run_load(self->n.at.mn_id, DUMP, "depth 16", &loaded, &failed));
	ASSERT_TRUE(err_says("key length 2000 out of range 1..1024"));
	ASSERT_TRUE(err_says("nothing after it loaded"));
	ASSERT_EQ(150U, loaded);
	ASSERT_EQ(150U, count_small(&self->n, 300));
}

TEST_F(hash, a_bad_crc_is_found_at_the_trailer)
{
	uint64_t loaded, failed;

	NEED_MN();
	ASSERT_EQ(0, write_small(DUMP, 20, -1, true));
	ASSERT_EQ(EXIT_USAGE_STATUS, run_load(self->n.at.mn_id, DUMP, "", &loaded, &failed));
	ASSERT_TRUE(err_says("CRC-32C mismatch"));
	/* Streamed: the records came before the CRC that condemns them. */
	ASSERT_EQ(20U, loaded);
}

TEST_F(hash, an_array_dump_is_refused_before_any_put)
{
	struct kvdump_writer w;
	uint64_t loaded, failed, k = 1, v = 2;
	FILE *f = fopen(DUMP, "w");

	NEED_MN();
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, kvdump_write_header(&w, f, KVDUMP_F_ARRAY));
	ASSERT_EQ(0, kvdump_write_record(&w, &k, 8, &v, 8));
	ASSERT_EQ(0, kvdump_write_trailer(&w));
	ASSERT_EQ(0, fclose(f));
	ASSERT_EQ(EXIT_USAGE_STATUS, run_load(self->n.at.mn_id, DUMP, "", &loaded, &failed));
	ASSERT_TRUE(err_says("the dump is of an array store"));
	ASSERT_EQ(0U, loaded);
}

/* An array store's dump: indexes 0..999 => i * 3, and one index past the store's keys. */
TEST(an_array_dump_loads_into_an_array_store)
{
	static const char *const store[] = { "--index", "array", "--keys", "1000", NULL };
	struct kvdump_writer w;
	struct node n;
	uint64_t i, v, loaded, failed;
	size_t len;
	FILE *f;

	ASSERT_EQ(0, node_up(&n, "16M", test_port() + 1, store));
	if (n.skip)
		SKIP(return, "CIDER_MN_ADDR not set");
	f = fopen(DUMP, "w");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, kvdump_write_header(&w, f, KVDUMP_F_ARRAY));
	for (i = 0; i <= 1000; i++) {
		uint64_t k = htole64(i == 1000 ? 5000 : i), x = htole64(i * 3);

		ASSERT_EQ(0, kvdump_write_record(&w, &k, 8, &x, 8));
	}
	ASSERT_EQ(0, kvdump_write_trailer(&w));
	ASSERT_EQ(0, fclose(f));
	/* The key outside the range is named; the rest loaded; usage (EDOM). */
	ASSERT_EQ(EXIT_USAGE_STATUS, run_load(n.at.mn_id, DUMP, "depth 256", &loaded, &failed));
	ASSERT_TRUE(err_says("key 5000 (record at byte"));
	ASSERT_EQ(1000U, loaded);
	ASSERT_EQ(1U, failed);
	for (i = 0; i < 1000; i++) {
		uint64_t k = htole64(i);

		len = sizeof(v);
		ASSERT_EQ(0, cider_get(n.fd, n.at.mn_id, &k, 8, &v, &len));
		ASSERT_EQ(i * 3, le64toh(v));
	}
	/* stop-on-error, one in flight: the 10 records before the bad one, no more. */
	f = fopen(DUMP, "w");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, kvdump_write_header(&w, f, KVDUMP_F_ARRAY));
	for (i = 0; i < 100; i++) {
		uint64_t k = htole64(i == 10 ? 7000 : i), x = htole64(i + 1000000);

		ASSERT_EQ(0, kvdump_write_record(&w, &k, 8, &x, 8));
	}
	ASSERT_EQ(0, kvdump_write_trailer(&w));
	ASSERT_EQ(0, fclose(f));
	ASSERT_EQ(EXIT_USAGE_STATUS, run_load(n.at.mn_id, DUMP, "depth 1 stop-on-error", &loaded,
					      &failed));
	ASSERT_TRUE(err_says("key 7000 (record at byte 256)"));
	ASSERT_EQ(10U, loaded);
	ASSERT_EQ(1U, failed);
	for (i = 0; i < 100; i++) {
		uint64_t k = htole64(i);

		len = sizeof(v);
		ASSERT_EQ(0, cider_get(n.fd, n.at.mn_id, &k, 8, &v, &len));
		/* Loaded below 10; 11 and up keep the first load's value. */
		ASSERT_EQ(i < 10 ? i + 1000000 : i * 3, le64toh(v)) TH_LOG("index %llu",
									    (unsigned long long)i);
	}
	/* A hash store's dump is refused by an array store. */
	ASSERT_EQ(0, write_small(DUMP, 3, -1, false));
	ASSERT_EQ(EXIT_USAGE_STATUS, run_load(n.at.mn_id, DUMP, "", &loaded, &failed));
	ASSERT_TRUE(err_says("the dump is of a hash store"));
	unlink(DUMP);
	node_down(&n);
}

/* A store that fills up: each key that did not fit is named (binary: in hex), the rest go on. */
TEST(a_full_store_names_each_key_that_did_not_fit)
{
	static const char *const store[] = { "--index", "hash", "--keys", "64", NULL };
	struct kvdump_writer w;
	struct node n;
	uint64_t loaded, failed;
	uint8_t k[6] = { 0x01, 0xff, 'k' };
	unsigned int i;
	FILE *f;

	ASSERT_EQ(0, node_up(&n, "2M", test_port() + 2, store));
	if (n.skip)
		SKIP(return, "CIDER_MN_ADDR not set");
	f = fopen(DUMP, "w");
	ASSERT_NE(NULL, f);
	ASSERT_EQ(0, kvdump_write_header(&w, f, 0));
	/* 100 values of 16 KiB into a data area of 1 MiB. */
	memset(val, 0x5a, 16384);
	for (i = 0; i < 100; i++) {
		memcpy(k + 3, &i, 3);
		ASSERT_EQ(0, kvdump_write_record(&w, k, sizeof(k), val, 16384));
	}
	ASSERT_EQ(0, kvdump_write_trailer(&w));
	ASSERT_EQ(0, fclose(f));
	ASSERT_EQ(1, run_load(n.at.mn_id, DUMP, "depth 8", &loaded, &failed));
	ASSERT_TRUE(err_says("the store is full"));
	ASSERT_TRUE(err_says("key 0x01ff6b"));
	ASSERT_LT(0U, loaded);
	ASSERT_LT(0U, failed);
	ASSERT_EQ(100U, loaded + failed);
	ASSERT_EQ((int)failed, file_count(ERR, "the store is full"));
	unlink(DUMP);
	node_down(&n);
}

TEST_HARNESS_MAIN
