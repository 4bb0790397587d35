// SPDX-License-Identifier: GPL-2.0
/*
 * ciderctl: inspect and control cider.ko, in the style of iproute2's rdma
 * tool.  -j prints JSON for scripts.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cider.h"

static bool json;

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: ciderctl [-j] COMMAND\n"
		"\n"
		"Commands:\n"
		"  info     module version, ABI version and the RDMA devices cider.ko sees\n"
		"  help     this text\n"
		"\n"
		"Options:\n"
		"  -j, --json   print JSON\n"
		"  -h, --help   this text\n"
		"\n"
		"The device is /dev/cider, or $CIDER_DEV when set.\n");
}

static void print_dev_text(const struct cider_ibdev_info *d)
{
	printf("  %-12s guid %016" PRIx64 "  ports %u  %s  atomics %s  rd_atom %u\n",
	       d->name, (uint64_t)d->node_guid, d->port_count,
	       d->flags & CIDER_IBDEV_F_ROCE ? "roce" : "ib/iwarp",
	       d->flags & CIDER_IBDEV_F_ATOMIC ? "yes" : "no",
	       d->max_qp_rd_atom);
}

/* Print @s as a JSON string: device names are chosen by whoever added them. */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void print_dev_json(const struct cider_ibdev_info *d, bool last)
{
	printf("{\"name\":");
	json_str(d->name);
	printf(",\"node_guid\":\"%016" PRIx64 "\",\"ports\":%u,"
	       "\"roce\":%s,\"atomics\":%s,\"max_qp_rd_atom\":%u}%s",
	       (uint64_t)d->node_guid, d->port_count,
	       d->flags & CIDER_IBDEV_F_ROCE ? "true" : "false",
	       d->flags & CIDER_IBDEV_F_ATOMIC ? "true" : "false",
	       d->max_qp_rd_atom, last ? "" : ",");
}

static int cmd_info(int fd)
{
	struct cider_info info;
	unsigned int i, n;
	int ret;

	ret = cider_get_info(fd, &info);
	if (ret) {
		fprintf(stderr, "ciderctl: info: %s\n", cider_strerror(ret));
		return 1;
	}
	/* Never trust the strings to be terminated. */
	info.version[sizeof(info.version) - 1] = '\0';
	n = info.nr_devices < CIDER_INFO_MAX_DEVS ? info.nr_devices : CIDER_INFO_MAX_DEVS;
	for (i = 0; i < n; i++)
		info.devices[i].name[sizeof(info.devices[i].name) - 1] = '\0';

	if (json) {
		printf("{\"version\":");
		json_str(info.version);
		printf(",\"abi\":%u,\"nr_devices\":%u,\"devices\":[",
		       info.abi_version, info.nr_devices);
		for (i = 0; i < n; i++)
			print_dev_json(&info.devices[i], i + 1 == n);
		printf("]}\n");
		return 0;
	}
	printf("cider %s (ABI %u)\n", info.version, info.abi_version);
	printf("rdma devices: %u%s\n", info.nr_devices,
	       info.nr_devices > n ? " (first ones shown)" : "");
	for (i = 0; i < n; i++)
		print_dev_text(&info.devices[i]);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, fd, ret;

	while ((c = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[optind], "help")) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[optind], "info")) {
		fprintf(stderr, "ciderctl: unknown command '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}

	fd = cider_open();
	if (fd < 0) {
		fprintf(stderr, "ciderctl: %s\n", cider_strerror(fd));
		return 1;
	}
	ret = cmd_info(fd);
	close(fd);
	return ret;
}
