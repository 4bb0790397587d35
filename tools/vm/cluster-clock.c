// SPDX-License-Identifier: GPL-2.0
/*
 * cluster-clock: the virtual cluster's clocks (cider-vm cluster).  Guest
 * clocks under emulation start from the host's RTC to the second and
 * then drift apart, so histories recorded on several guests can be
 * merged only with the skew between their clocks known and bounded.
 *
 * Guest 1 serves its CLOCK_REALTIME on a UDP port; another guest asks it
 * several times, keeps the exchange with the shortest round trip and
 * reports the offset of guest 1's clock from its own at the midpoint of
 * that exchange, with its error bound (half the round trip: the reply's
 * timestamp was taken somewhere inside it).  "sync" then steps the
 * local clock by the offset at boot, and again (up to three times) while
 * the offset measured after a step exceeds its error; "offset" only measures, before
 * and after a run, so that a checker can widen every operation's
 * interval by |offset| + error and stay sound.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "numparse.h"

#define DEFAULT_PORT	7470
#define DEFAULT_ROUNDS	40
#define SYNC_STEPS	4	/* steps at most: the first and three refinements */
#define REPLY_WAIT_MS	200

struct probe {
	uint64_t seq;
	int64_t server_ns;	/* 0 in a request */
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: cluster-clock serve [--port P]\n"
"       cluster-clock offset ADDR [--port P] [--rounds N] [--wait S]\n"
"       cluster-clock sync ADDR [--port P] [--rounds N] [--wait S]\n"
"\n"
"The virtual cluster's clocks (tools/vm/cider-vm cluster).  serve answers\n"
"requests with this guest's CLOCK_REALTIME (guest 1 runs it).  offset asks\n"
"the server N times (default %d) and prints, from the exchange with the\n"
"shortest round trip, the server's clock minus ours and its error bound:\n"
"  offset_ns=O error_ns=E rtt_ns=R skew_ns=|O|+E\n"
"sync does the same, steps this guest's clock by the offset (again, up to\n"
"%d steps in all, while the offset after a step exceeds its error), and\n"
"prints the offset measured after the last step.  --wait S: keep asking for up to S\n"
"seconds while the server is not up yet (default 0: one attempt of N\n"
"requests).  Port %d unless --port.  Exit status 1 if no reply came.\n",
		DEFAULT_ROUNDS, SYNC_STEPS, DEFAULT_PORT);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int serve(unsigned int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_ANY) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "cluster-clock: port %u: %s\n", port, strerror(errno));
		return 1;
	}
	for (;;) {
		struct sockaddr_in from;
		socklen_t len = sizeof(from);
		struct probe p;
		ssize_t n = recvfrom(fd, &p, sizeof(p), 0, (struct sockaddr *)&from, &len);

		if (n != sizeof(p))
			continue;
		p.server_ns = now_ns();
		sendto(fd, &p, sizeof(p), 0, (struct sockaddr *)&from, len);
	}
}

struct sample {
	int64_t offset_ns, rtt_ns;
	bool ok;
};

/* N exchanges; the one with the shortest round trip. */
static struct sample measure(int fd, unsigned int rounds)
{
	struct sample best = { 0 };
	unsigned int i;

	for (i = 0; i < rounds; i++) {
		struct probe q = { .seq = i + 1 }, p = { 0 };
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		int64_t t0 = now_ns(), t1;

		if (send(fd, &q, sizeof(q), 0) != sizeof(q))
			continue;
		/* A late reply of an earlier round is read and skipped. */
		do {
			if (poll(&pf, 1, REPLY_WAIT_MS) <= 0)
				break;
			if (recv(fd, &p, sizeof(p), 0) != sizeof(p))
				break;
		} while (p.seq != q.seq);
		t1 = now_ns();
		if (p.seq != q.seq || !(pf.revents & POLLIN))
			continue;
		if (!best.ok || t1 - t0 < best.rtt_ns) {
			best.ok = true;
			best.rtt_ns = t1 - t0;
			best.offset_ns = p.server_ns - (t0 + (t1 - t0) / 2);
		}
	}
	return best;
}

static void print(const char *what, struct sample s)
{
	int64_t err = s.rtt_ns / 2 + 1;

	printf("%soffset_ns=%lld error_ns=%lld rtt_ns=%lld skew_ns=%lld\n", what,
	       (long long)s.offset_ns, (long long)err, (long long)s.rtt_ns,
	       (long long)(llabs(s.offset_ns) + err));
}

static int step(int64_t by_ns)
{
	struct timespec ts;
	int64_t t = now_ns() + by_ns;

	ts.tv_sec = t / 1000000000LL;
	ts.tv_nsec = t % 1000000000LL;
	if (clock_settime(CLOCK_REALTIME, &ts)) {
		fprintf(stderr, "cluster-clock: cannot set the clock: %s\n", strerror(errno));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "rounds", required_argument, NULL, 'n' },
		{ "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long port = DEFAULT_PORT, rounds = DEFAULT_ROUNDS, wait_s = 0;
	struct sockaddr_in a = { .sin_family = AF_INET };
	const char *cmd;
	struct sample s;
	time_t until;
	char err[128];
	uint64_t n;
	int o, fd;

	while ((o = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		unsigned long *v = o == 'p' ? &port : o == 'n' ? &rounds : &wait_s;

		switch (o) {
		case 'p': case 'n': case 'w':
			if (cider_num_parse(optarg, o == 'p' ? 1 : 0, o == 'p' ? 65535 : UINT32_MAX, 0,
					    &n, err, sizeof(err)))
				goto bad;
			*v = (unsigned long)n;
			break;
		case 'h': usage(stdout); return 0;
		default: goto bad;
		}
	}
	if (optind >= argc || !port || port > 65535 || !rounds || rounds > 10000)
		goto bad;
	cmd = argv[optind++];
	if (!strcmp(cmd, "serve") && optind == argc)
		return serve(port);
	if ((strcmp(cmd, "offset") && strcmp(cmd, "sync")) || optind != argc - 1 ||
	    inet_pton(AF_INET, argv[optind], &a.sin_addr) != 1)
		goto bad;
	a.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "cluster-clock: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	until = time(NULL) + wait_s;
	for (;;) {
		s = measure(fd, rounds);
		if (s.ok || time(NULL) >= until)
			break;
		usleep(100000);
	}
	if (!s.ok) {
		fprintf(stderr, "cluster-clock: no reply from %s:%lu\n", argv[optind], port);
		return 1;
	}
	if (!strcmp(cmd, "offset")) {
		print("", s);
		return 0;
	}
	print("before: ", s);
	/*
	 * A step lands late by however long the guest took to apply it
	 * (under TCG, with other guests on the same CPUs, up to a
	 * millisecond): measure again and refine while the offset is
	 * larger than what a measurement can tell.
	 */
	for (o = 0; o < SYNC_STEPS; o++) {
		if (step(s.offset_ns))
			return 1;
		s = measure(fd, rounds);
		if (!s.ok)
			return 1;
		if (llabs(s.offset_ns) <= s.rtt_ns / 2 + 1)
			break;
	}
	print("after: ", s);
	return 0;
bad:
	usage(stderr);
	return 2;
}
