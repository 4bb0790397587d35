// SPDX-License-Identifier: GPL-2.0
/*
 * cider-hub: the Ethernet segment of the virtual cluster (cider-vm
 * cluster).  Every guest's NIC is a QEMU "dgram" netdev on a Unix
 * datagram socket whose remote end is this hub's socket.  It switches
 * as a learning bridge does: a guest's MAC is learnt from the frames it
 * sends, a frame for a learnt MAC goes to that guest only, any other
 * (broadcast, multicast, not yet learnt) to every other guest seen so
 * far, so a guest's socket queue carries only its own traffic.  The
 * guests see a private network: nothing reaches the host's own.
 *
 * A frame the receiver's socket has no room for is dropped, as a full
 * switch port drops it, and counted: RoCE then waits out a transport
 * retransmission, which is why cider-vm gives the cluster deep socket
 * queues.  On SIGTERM or SIGINT the hub prints what it forwarded and
 * dropped, and exits.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_PORTS	16
#define MAX_FRAME	65536

static struct sockaddr_un ports[MAX_PORTS];
static socklen_t port_len[MAX_PORTS];
static unsigned char port_mac[MAX_PORTS][6];	/* learnt from its frames */
static unsigned int nports;
static volatile sig_atomic_t stop;
static unsigned long long forwarded, dropped;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* The port of the guest with destination MAC @dst, or -1: send to all. */
static int port_for(const unsigned char *dst)
{
	unsigned int i;

	if (dst[0] & 1)		/* broadcast or multicast */
		return -1;
	for (i = 0; i < nports; i++)
		if (!memcmp(port_mac[i], dst, 6))
			return (int)i;
	return -1;
}

static void forward(int fd, const unsigned char *frame, size_t n, unsigned int to)
{
	if (sendto(fd, frame, n, MSG_DONTWAIT, (struct sockaddr *)&ports[to], port_len[to]) < 0) {
		/* A gone guest's socket refuses; a full one drops. */
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)
			dropped++;
		return;
	}
	forwarded++;
}

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
	int fd, me, to;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc != 2 || strlen(argv[1]) >= sizeof(addr.sun_path)) {
		usage(stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	{
		struct sigaction sa = { .sa_handler = on_stop };

		/* No SA_RESTART: the blocked recvfrom() returns EINTR. */
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
	}
	strcpy(addr.sun_path, argv[1]);
	unlink(addr.sun_path);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	/*
	 * Wake up now and then: a SIGTERM that lands between the check of
	 * stop and the recvfrom() would otherwise wait for a frame that,
	 * with every guest gone, never comes.
	 */
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){ .tv_usec = 200000 },
			   sizeof(struct timeval));
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		fprintf(stderr, "cider-hub: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	while (!stop) {
		len = sizeof(from);
		n = recvfrom(fd, frame, sizeof(frame), 0, (struct sockaddr *)&from, &len);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
				continue;
			fprintf(stderr, "cider-hub: %s\n", strerror(errno));
			return 1;
		}
		me = port_of(&from, len);
		if (n < 14)
			continue;	/* not an Ethernet frame */
		if (me >= 0)
			memcpy(port_mac[me], frame + 6, 6);
		to = port_for(frame);
		if (to >= 0) {
			if (to != me)
				forward(fd, frame, (size_t)n, (unsigned int)to);
			continue;
		}
		for (i = 0; i < nports; i++)
			if ((int)i != me)
				forward(fd, frame, (size_t)n, i);
	}
	fprintf(stderr, "cider-hub: %llu frames forwarded, %llu dropped (a receiver's queue full)\n",
		forwarded, dropped);
	return 0;
}
