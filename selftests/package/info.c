// SPDX-License-Identifier: GPL-2.0
/*
 * The package test's client: built in the test VM with nothing but
 * `pkg-config --cflags --libs libcider` against the installed libcider-dev,
 * run as a user in the cider group.  Reads CIDER_IOC_GET_INFO and the
 * attached memory nodes (CIDER_IOC_MN_INFO); checks the ABI version, the
 * module's version (argv[1]), that an RDMA device (argv[2]) is seen and
 * that a live memory node is attached.  Exit 0 when all hold.
 * (KV operations do not exist yet; this becomes a put/get when they do.)
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cider.h>

int main(int argc, char **argv)
{
	struct cider_info info;
	struct cider_mn_info mi;
	unsigned int i, live = 0, id = 0;
	int fd, ret, ok = 1;

	if (argc != 3 || !strcmp(argv[1], "--help")) {
		printf("usage: %s VERSION IBDEV\n", argv[0]);
		return argc == 2 ? 0 : 2;
	}
	fd = cider_open();
	if (fd < 0) {
		printf("cider_open: %s\n", cider_strerror(fd));
		return 1;
	}
	ret = cider_get_info(fd, &info);
	if (ret) {
		printf("cider_get_info: %s\n", cider_strerror(ret));
		return 1;
	}
	printf("module %s, ABI %u, %u RDMA device(s):", info.version, info.abi_version,
	       info.nr_devices);
	for (i = 0; i < info.nr_devices && i < CIDER_INFO_MAX_DEVS; i++)
		printf(" %s", info.devices[i].name);
	printf("\n");
	/* What the installed header's users need, by feature, not by version. */
	if ((cider_features(&info) & CIDER_FEAT_V0) != CIDER_FEAT_V0) {
		printf("features %#llx lack some of %#llx\n", cider_features(&info),
		       (unsigned long long)CIDER_FEAT_V0);
		ok = 0;
	}
	if (strcmp(info.version, argv[1])) {
		printf("module version '%s', expected '%s'\n", info.version, argv[1]);
		ok = 0;
	}
	for (i = 0; i < info.nr_devices && i < CIDER_INFO_MAX_DEVS; i++)
		if (!strcmp(info.devices[i].name, argv[2]))
			break;
	if (i == info.nr_devices || i == CIDER_INFO_MAX_DEVS) {
		printf("%s not among the module's devices\n", argv[2]);
		ok = 0;
	}
	while ((ret = cider_mn_info(fd, id, &mi)) == 0) {
		char addr[64];

		cider_format_addr(mi.family, mi.addr, mi.port, addr, sizeof(addr));
		printf("memory node %u at %s: %s, %llu bytes, layout %u\n", mi.mn_id, addr,
		       mi.state == CIDER_MN_LIVE ? "live" : "dead",
		       (unsigned long long)mi.region_size, mi.layout_version);
		live += mi.state == CIDER_MN_LIVE;
		id = mi.mn_id + 1;
	}
	if (ret != -ENOENT) {
		printf("cider_mn_info: %s\n", cider_strerror(ret));
		ok = 0;
	}
	if (!live) {
		printf("no live memory node attached\n");
		ok = 0;
	}
	close(fd);
	return ok ? 0 : 1;
}
