// SPDX-License-Identifier: GPL-2.0
/*
 * cider-bench tear: do 8-byte RDMA READs return values the word held?
 * One thread CASes a word of the memory node through a cycle of values
 * whose eight bytes are equal (k * 0x0101010101010101, k = 0..255), two
 * threads READ it as fast as they can, and every READ whose bytes differ
 * is counted torn.  The KV protocol relies on the answer (cider.ko's
 * read_atomic parameter, Documentation/datapath.rst): soft-RoCE copies a
 * READ's payload with memcpy(), which need not move the word at once.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "numparse.h"
#include "bench.h"
#include "cider.h"

#define TEAR_M		0x0101010101010101ULL
#define TEAR_SHOWN	5

static struct {
	int fd;
	unsigned int mn;
	unsigned long long off;
	_Atomic int stop;
	_Atomic unsigned long cas, reads, torn, errors;
} tear;

static void tear_usage(FILE *f)
{
	fprintf(f,
"Usage: cider-bench tear --offset OFF [--duration S] [--mn ID]\n"
"\n"
"Whether 8-byte RDMA READs from cider.ko can return a value the word never\n"
"held: one thread CASes the 8-byte word at region offset OFF through values\n"
"with eight equal bytes, two threads READ it, each on its own CPU's channel,\n"
"for S seconds (default 10), and READs with unequal bytes are counted and\n"
"the first %d printed.  The word is overwritten: name one nothing else\n"
"uses (a scratch memory node), on memory node ID (default 0).  Raw\n"
"operations need CAP_SYS_ADMIN.\n"
"Exit status 0 none torn, 1 some torn or an error, 2 bad usage.\n", TEAR_SHOWN);
}

static void tear_pin(unsigned int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu % (unsigned int)sysconf(_SC_NPROCESSORS_ONLN), &s);
	sched_setaffinity(0, sizeof(s), &s);
}

static void *tear_writer(void *arg)
{
	uint64_t k = 0;

	tear_pin(0);
	while (!tear.stop) {
		struct cider_raw_op op = {
			.opcode = CIDER_RAW_CAS, .len = 8, .remote = tear.off,
			.compare = k * TEAR_M, .swap_add = ((k + 1) % 256) * TEAR_M,
		};

		if (cider_raw(tear.fd, tear.mn, &op, 1)) {
			tear.errors++;
			break;
		}
		/* Not ours to begin with: start the cycle from what it holds. */
		k = op.old == k * TEAR_M ? (k + 1) % 256 : (op.old / TEAR_M) % 256;
		tear.cas++;
	}
	return arg;
}

static void *tear_reader(void *arg)
{
	uint64_t v;

	tear_pin((unsigned int)(uintptr_t)arg);
	while (!tear.stop) {
		struct cider_raw_op op = {
			.opcode = CIDER_RAW_READ, .len = 8, .remote = tear.off,
			.local = (uintptr_t)&v,
		};

		if (cider_raw(tear.fd, tear.mn, &op, 1)) {
			tear.errors++;
			break;
		}
		tear.reads++;
		if (v % TEAR_M || v / TEAR_M > 255) {
			if (tear.torn++ < TEAR_SHOWN)
				printf("  torn: %016llx\n", (unsigned long long)v);
		}
	}
	return arg;
}

int cmd_tear(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "offset", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "mn", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int secs = 10, i, ran;
	bool have_off = false;
	pthread_t t[3];
	char err[128];
	uint64_t off;
	int o;

	tear.mn = 0;
	while ((o = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (o) {
		case 'o':
			if (cider_num_parse(optarg, 0, UINT64_MAX, CIDER_NUM_HEX, &off, err,
					    sizeof(err)) || off % 8)
				goto bad;
			tear.off = off;
			have_off = true;
			break;
		case 'd':
			if (!bench_parse_num(optarg, 1, 3600, &secs))
				goto bad;
			break;
		case 'm':
			if (!bench_parse_num(optarg, 0, 1U << 20, &tear.mn))
				goto bad;
			break;
		case 'h':
			tear_usage(stdout);
			return 0;
		default:
			goto bad;
		}
	}
	if (!have_off || optind != argc)
		goto bad;
	tear.fd = cider_open();
	if (tear.fd < 0) {
		fprintf(stderr, "cider-bench: %s\n", cider_strerror(tear.fd));
		return 1;
	}
	pthread_create(&t[0], NULL, tear_writer, NULL);
	for (i = 1; i < 3; i++)
		pthread_create(&t[i], NULL, tear_reader, (void *)(uintptr_t)i);
	for (ran = 0; ran < secs && !tear.errors; ran++)
		sleep(1);
	tear.stop = 1;
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	close(tear.fd);
	printf("tear: %lu CAS, %lu READs of the word at %#llx on mn%u in %u s: %lu torn\n",
	       (unsigned long)tear.cas, (unsigned long)tear.reads, tear.off, tear.mn, ran,
	       (unsigned long)tear.torn);
	if (tear.errors)
		fprintf(stderr, "cider-bench: tear: a raw operation failed\n");
	return tear.torn || tear.errors ? 1 : 0;
bad:
	tear_usage(stderr);
	return 2;
}
