// SPDX-License-Identifier: GPL-2.0
/*
 * cider-hub: the Ethernet segment of the virtual cluster (cider-vm
 * cluster).  Every guest's NIC is a QEMU "dgram" netdev on a Unix
 * datagram socket whose remote end is this hub's socket; each frame a
 * guest sends is forwarded to every other guest that has sent one, as a
 * hub would.  The guests see a private network: nothing reaches the
 * host's own.  Runs until killed; no output but errors.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_PORTS	16
#define MAX_FRAME	65536

static struct sockaddr_un ports[MAX_PORTS];
static socklen_t port_len[MAX_PORTS];
static unsigned int nports;

static void usage(FILE *f)
{
	fprintf(f, "Usage: cider-hub SOCKET\n\n"
		"Forward the Ethernet frames that arrive on the Unix datagram socket\n"
		"SOCKET (created, replacing a stale one) to every other sender seen so\n"
		"far: the virtual cluster's network (tools/vm/cider-vm cluster).\n");
}

/* The sender's port number, learnt on its first frame; -1 if full. */
static int port_of(const struct sockaddr_un *from, socklen_t len)
{
	unsigned int i;

	for (i = 0; i < nports; i++)
		if (port_len[i] == len && !memcmp(&ports[i], from, len))
			return (int)i;
	if (nports == MAX_PORTS)
		return -1;
	ports[nports] = *from;
	port_len[nports] = len;
	return (int)nports++;
}

int main(int argc, char **argv)
{
	static unsigned char frame[MAX_FRAME];
	struct sockaddr_un addr = { .sun_family = AF_UNIX }, from;
	socklen_t len;
	unsigned int i;
	ssize_t n;
	int fd, me;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc != 2 || strlen(argv[1]) >= sizeof(addr.sun_path)) {
		usage(stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	strcpy(addr.sun_path, argv[1]);
	unlink(addr.sun_path);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		fprintf(stderr, "cider-hub: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	for (;;) {
		len = sizeof(from);
		n = recvfrom(fd, frame, sizeof(frame), 0, (struct sockaddr *)&from, &len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "cider-hub: %s\n", strerror(errno));
			return 1;
		}
		me = port_of(&from, len);
		for (i = 0; i < nports; i++)
			if ((int)i != me)	/* a gone guest's socket: ignore the error */
				sendto(fd, frame, (size_t)n, MSG_DONTWAIT,
				       (struct sockaddr *)&ports[i], port_len[i]);
	}
}
