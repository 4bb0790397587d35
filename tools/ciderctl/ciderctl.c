// SPDX-License-Identifier: GPL-2.0
/*
 * ciderctl: inspect and control cider.ko, in the style of iproute2's rdma
 * tool.  -j prints JSON for scripts.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
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
		"  info                          module and ABI version, RDMA devices seen\n"
		"  attach ADDR:PORT [cn ID] [timeout MS]\n"
		"                                connect to a memory node (cider-memd) as\n"
		"                                compute node ID (default 0); prints its mn id\n"
		"  detach MN                     disconnect memory node MN\n"
		"  status                        attached memory nodes and their state\n"
		"  stats [MN]                    data-path counters per channel (debugfs)\n"
		"  help                          this text\n"
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

static int cmd_info(int fd, int argc, char **argv)
{
	struct cider_info info;
	unsigned int i, n;
	int ret;

	(void)argv;
	if (argc) {
		fprintf(stderr, "ciderctl: info takes no arguments\n");
		return 2;
	}
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

static int parse_uint(const char *s, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || end == s || *s == '-' || v > max)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

static int cmd_attach(int fd, int argc, char **argv)
{
	unsigned int cn = 0, timeout = 0;
	struct cider_attach at;
	int i, ret;

	if (argc < 1 || argc % 2 == 0) {
		fprintf(stderr, "ciderctl: usage: attach ADDR:PORT [cn ID] [timeout MS]\n");
		return 2;
	}
	for (i = 1; i < argc; i += 2) {
		if (!strcmp(argv[i], "cn") && !parse_uint(argv[i + 1], CIDER_MAX_CN_ID, &cn))
			continue;
		if (!strcmp(argv[i], "timeout") &&
		    !parse_uint(argv[i + 1], CIDER_ATTACH_MAX_TIMEOUT_MS, &timeout))
			continue;
		fprintf(stderr, "ciderctl: attach: bad '%s %s' (cn 0..%d, timeout 0..%d ms)\n",
			argv[i], argv[i + 1], CIDER_MAX_CN_ID, CIDER_ATTACH_MAX_TIMEOUT_MS);
		return 2;
	}
	ret = cider_attach(fd, argv[0], cn, timeout, &at);
	if (ret == -EINVAL && cider_parse_addr(argv[0], &at)) {
		fprintf(stderr, "ciderctl: attach: '%s' is not a.b.c.d:port or [v6]:port\n", argv[0]);
		return 2;
	}
	if (ret) {
		fprintf(stderr, "ciderctl: attach %s: %s\n", argv[0], cider_strerror(ret));
		return 1;
	}
	if (json)
		printf("{\"mn\":%u,\"channels\":%u,\"region_size\":%llu}\n", at.mn_id,
		       at.nr_channels, (unsigned long long)at.region_size);
	else
		printf("mn%u: attached %s, %u channels, region %llu bytes\n", at.mn_id, argv[0],
		       at.nr_channels, (unsigned long long)at.region_size);
	return 0;
}

static int parse_mn(const char *s, unsigned int *id)
{
	if (!strncmp(s, "mn", 2))
		s += 2;
	return parse_uint(s, 0x7fffffff, id);
}

static int cmd_detach(int fd, int argc, char **argv)
{
	unsigned int id;
	int ret;

	if (argc != 1 || parse_mn(argv[0], &id)) {
		fprintf(stderr, "ciderctl: usage: detach MN\n");
		return 2;
	}
	ret = cider_detach(fd, id);
	if (ret) {
		fprintf(stderr, "ciderctl: detach mn%u: %s\n", id,
			ret == -ENOENT ? "no such memory node" : cider_strerror(ret));
		return 1;
	}
	return 0;
}

static int cmd_status(int fd, int argc, char **argv)
{
	struct cider_mn_info mi;
	unsigned int id = 0, n = 0;
	char addr[64];
	int ret;

	(void)argv;
	if (argc) {
		fprintf(stderr, "ciderctl: status takes no arguments\n");
		return 2;
	}
	if (json)
		printf("[");
	while (!(ret = cider_mn_info(fd, id, &mi))) {
		bool live = mi.state == CIDER_MN_LIVE;

		mi.ibdev[sizeof(mi.ibdev) - 1] = '\0';
		cider_format_addr(mi.family, mi.addr, mi.port, addr, sizeof(addr));
		if (json) {
			printf("%s{\"mn\":%u,\"addr\":\"%s\",\"state\":\"%s\",\"reason\":%d,"
			       "\"cn\":%u,\"dev\":", n ? "," : "", mi.mn_id, addr,
			       live ? "live" : "dead", mi.dead_reason, mi.cn_id);
			json_str(mi.ibdev);
			printf(",\"channels\":%u,\"region_size\":%llu,\"layout\":%u}",
			       mi.nr_channels, (unsigned long long)mi.region_size,
			       mi.layout_version);
		} else {
			printf("mn%u: %s %s%s%s%s cn %u dev %s channels %u region %llu layout %u\n",
			       mi.mn_id, addr, live ? "live" : "dead",
			       live ? "" : " (", live ? "" : strerror(-mi.dead_reason),
			       live ? "" : ")",
			       mi.cn_id, mi.ibdev, mi.nr_channels,
			       (unsigned long long)mi.region_size, mi.layout_version);
		}
		n++;
		id = mi.mn_id + 1;
	}
	if (json)
		printf("]\n");
	if (ret != -ENOENT) {
		fprintf(stderr, "ciderctl: status: %s\n", cider_strerror(ret));
		return 1;
	}
	return 0;
}

/* One debugfs line "word [k=v ...]" as a JSON object. */
static void stats_line_json(char *line)
{
	char *tok, *save = NULL;
	bool first = true;

	putchar('{');
	for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			continue;
		*eq = '\0';
		printf("%s\"%s\":", first ? "" : ",", tok);
		if (strspn(eq + 1, "-0123456789") == strlen(eq + 1) && eq[1])
			fputs(eq + 1, stdout);
		else
			json_str(eq + 1);
		first = false;
	}
	putchar('}');
}

static int stats_one(unsigned int id, bool *first)
{
	char path[64], line[1024];
	bool chan = false;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/cider/mn%u", id);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "ciderctl: stats: %s: %s%s\n", path, strerror(errno),
			errno == ENOENT ? " (is debugfs mounted on /sys/kernel/debug?)" : "");
		return 1;
	}
	if (json)
		printf("%s{", *first ? "" : ",");
	*first = false;
	while (fgets(line, sizeof(line), f)) {
		if (!json) {
			fputs(line, stdout);
			continue;
		}
		if (!strncmp(line, "mn=", 3)) {
			printf("\"mn\":");
			stats_line_json(line);
			printf(",\"channels\":[");
		} else if (!strncmp(line, "chan=", 5)) {
			printf("%s", chan ? "," : "");
			stats_line_json(line);
			chan = true;
		} else if (!strncmp(line, "total", 5)) {
			printf("],\"total\":");
			stats_line_json(line);
		}
	}
	fclose(f);
	if (json)
		printf("}");
	return 0;
}

static int cmd_stats(int fd, int argc, char **argv)
{
	struct cider_mn_info mi;
	unsigned int id = 0;
	bool first = true;
	int ret = 0;

	if (argc > 1 || (argc == 1 && parse_mn(argv[0], &id))) {
		fprintf(stderr, "ciderctl: usage: stats [MN]\n");
		return 2;
	}
	if (json)
		printf("[");
	if (argc == 1) {
		ret = stats_one(id, &first);
	} else {
		while (!ret && !cider_mn_info(fd, id, &mi)) {
			ret = stats_one(mi.mn_id, &first);
			id = mi.mn_id + 1;
		}
	}
	if (json)
		printf("]\n");
	return ret;
}

static const struct {
	const char *name;
	int (*fn)(int fd, int argc, char **argv);
} cmds[] = {
	{ "info", cmd_info },
	{ "attach", cmd_attach },
	{ "detach", cmd_detach },
	{ "status", cmd_status },
	{ "stats", cmd_stats },
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int i;
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
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[optind], cmds[i].name))
			break;
	if (i == sizeof(cmds) / sizeof(cmds[0])) {
		fprintf(stderr, "ciderctl: unknown command '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}

	fd = cider_open();
	if (fd < 0) {
		fprintf(stderr, "ciderctl: %s\n", cider_strerror(fd));
		return 1;
	}
	ret = cmds[i].fn(fd, argc - optind - 1, argv + optind + 1);
	close(fd);
	return ret;
}
