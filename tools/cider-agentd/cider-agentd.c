// SPDX-License-Identifier: GPL-2.0
/*
 * cider-agentd: the atomics agent of a compute node.  Registers with
 * cider.ko (CIDER_IOC_AGENT_REGISTER), takes its batches of verbs through
 * io_uring commands on /dev/cider (CIDER_URING_AGENT_FETCH / COMMIT) and
 * runs them on its own RC queue pairs, for NICs whose kernel driver
 * refuses atomics posted from the kernel (upstream mlx5).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <liburing.h>

#include "agentd.h"
#include "numparse.h"

#define MAX_POLL_FDS	64

struct agent_opts opt = {
	.tags = 8,
	.buf_len = 1U << 20,
	.device = "/dev/cider",
	/* A busy-polling daemon would keep a CPU of every compute node busy. */
	.events = true,
};

static struct io_uring ring;
static int dev_fd = -1;
static void **bufs;

void logmsg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("cider-agentd: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: cider-agentd [OPTIONS]\n"
"\n"
"The atomics agent of a compute node: registers with cider.ko through\n"
"/dev/cider and runs the batches of RDMA verbs it hands over (those with\n"
"atomics, when the RDMA device refuses atomics posted from the kernel) on\n"
"its own RC queue pairs to the memory nodes.  One per compute node; it\n"
"needs CAP_SYS_ADMIN.  SIGTERM or SIGINT ends it (the module then ends the\n"
"batches it held).\n"
"\n"
"  --tags N            requests in flight, 1..%u (default 8)\n"
"  --buf-size BYTES    each request's buffer, %uK..%uM, K and M suffixes\n"
"                      (default 1M)\n"
"  --events            wait for completions by event (the default)\n"
"  --busy-poll         poll for completions without sleeping: lower latency,\n"
"                      one CPU kept busy (for a core set aside for it)\n"
"  --device PATH       the device (default /dev/cider)\n"
"  --pid-file PATH     write the process id to PATH\n"
"  --verbose           log each batch and connection event\n"
"  --version           print the release\n"
"  --help              this text\n",
		CIDER_AGENT_MAX_TAGS, CIDER_AGENT_MIN_BUF >> 10, CIDER_AGENT_MAX_BUF >> 20);
}

/* @err quotes the argument. */
static int bad_num(const char *name, const char *err)
{
	fprintf(stderr, "cider-agentd: bad %s: %s\n", name, err);
	return 2;
}

static int parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "tags", required_argument, NULL, 't' },
		{ "buf-size", required_argument, NULL, 'b' },
		{ "events", no_argument, NULL, 'e' },
		{ "busy-poll", no_argument, NULL, 'P' },
		{ "device", required_argument, NULL, 'd' },
		{ "pid-file", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char err[128];
	int c;

	while ((c = getopt_long(argc, argv, "t:b:ePd:p:vhV", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			if (cider_num_parse_uint(optarg, 1, CIDER_AGENT_MAX_TAGS, 0, &opt.tags,
						 err, sizeof(err)))
				return bad_num("--tags", err);
			break;
		case 'b':
			if (cider_num_parse_uint(optarg, CIDER_AGENT_MIN_BUF, CIDER_AGENT_MAX_BUF,
						 CIDER_NUM_SIZE, &opt.buf_len, err, sizeof(err)))
				return bad_num("--buf-size", err);
			break;
		case 'e': opt.events = true; break;
		case 'P': opt.events = false; break;
		case 'd': opt.device = optarg; break;
		case 'p': opt.pid_file = optarg; break;
		case 'v': opt.verbose = true; break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("cider-agentd %s\n", CIDER_VERSION); exit(0);
		default:
			fprintf(stderr, "cider-agentd: see cider-agentd --help\n");
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "cider-agentd: unexpected argument '%s'; see cider-agentd --help\n",
			argv[optind]);
		return 2;
	}
	return 0;
}

/* Why the registration failed, in words. */
static const char *register_why(int err)
{
	switch (err) {
	case EBUSY: return "another agent is registered";
	case EPERM: return "needs CAP_SYS_ADMIN";
	case ENOTTY: return "unknown ioctl (not cider.ko's device, or a cider.ko without "
			    "the atomics agent, CIDER_FEAT_AGENT)";
	default: return strerror(err);
	}
}

/* Open the device and register nr_tags buffers of buf_len bytes. */
static int agent_register(void)
{
	struct cider_agent_reg reg = {
		.size = sizeof(reg), .nr_tags = opt.tags, .buf_len = opt.buf_len,
	};
	unsigned int i;

	dev_fd = open(opt.device, O_RDWR | O_CLOEXEC);
	if (dev_fd < 0) {
		logmsg("cannot open %s: %s%s", opt.device, strerror(errno),
		       errno == ENOENT ? " (is cider.ko loaded?)" : "");
		return -1;
	}
	if (ioctl(dev_fd, CIDER_IOC_AGENT_REGISTER, &reg)) {
		logmsg("cannot register with %s: %s", opt.device, register_why(errno));
		return -1;
	}
	bufs = calloc(opt.tags, sizeof(*bufs));
	if (!bufs)
		return -1;
	for (i = 0; i < opt.tags; i++) {
		if (posix_memalign(&bufs[i], 4096, opt.buf_len)) {
			logmsg("cannot allocate %u buffers of %u bytes", opt.tags, opt.buf_len);
			return -1;
		}
		memset(bufs[i], 0, opt.buf_len);
	}
	return 0;
}

/* Queue @cmd_op (FETCH or COMMIT) for @tag. */
static int queue_cmd(unsigned int cmd_op, unsigned int tag)
{
	struct cider_agent_cmd cmd = {
		.size = sizeof(cmd), .tag = tag, .buf = (uint64_t)(uintptr_t)bufs[tag],
	};
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

	if (!sqe) {
		io_uring_submit(&ring);
		sqe = io_uring_get_sqe(&ring);
		if (!sqe)
			return -EBUSY;
	}
	/* prep_rw writes 'off', which shares its place with cmd_op: first. */
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, dev_fd, NULL, 0, 0);
	sqe->cmd_op = cmd_op;
	sqe->user_data = tag;
	memset(sqe->cmd, 0, 80);
	memcpy(sqe->cmd, &cmd, sizeof(cmd));
	return 0;
}

static int ring_start(void)
{
	unsigned int i;
	int ret;

	ret = io_uring_queue_init(opt.tags, &ring, IORING_SETUP_SQE128);
	if (ret) {
		logmsg("io_uring: %s", strerror(-ret));
		return -1;
	}
	for (i = 0; i < opt.tags; i++)
		if (queue_cmd(CIDER_URING_AGENT_FETCH, i))
			return -1;
	ret = io_uring_submit(&ring);
	if (ret < 0) {
		logmsg("io_uring_submit: %s", strerror(-ret));
		return -1;
	}
	return 0;
}

/* One CQE: run the request its tag's buffer holds and commit it. */
static int on_cqe(unsigned long long tag, int res)
{
	if (tag >= opt.tags) {
		logmsg("completion of unknown tag %llu", tag);
		return -1;
	}
	if (res == -ENODEV) {
		logmsg("unregistered by cider.ko (stalled past its op timeout, or unloading)");
		return -1;
	}
	if (res < 0) {
		logmsg("tag %llu: %s", tag, strerror(-res));
		return -1;
	}
	exec_request(bufs[tag], (size_t)res);
	return queue_cmd(CIDER_URING_AGENT_COMMIT, (unsigned int)tag) ? -1 : 0;
}

/* Every completion that is there: 0, or -1 to exit. */
static int drain(void)
{
	struct io_uring_cqe *cqe;
	unsigned int n = 0;
	int ret;

	while (!io_uring_peek_cqe(&ring, &cqe)) {
		unsigned long long tag = cqe->user_data;
		int res = cqe->res;

		io_uring_cqe_seen(&ring, cqe);
		if (on_cqe(tag, res))
			return -1;
		n++;
	}
	if (!n)
		return 0;
	ret = io_uring_submit(&ring);
	if (ret < 0) {
		logmsg("io_uring_submit: %s", strerror(-ret));
		return -1;
	}
	return 0;
}

/* Until a signal (0) or an error (1). */
static int serve(int sfd)
{
	struct pollfd pfd[MAX_POLL_FDS];
	int fds[MAX_POLL_FDS - 2];
	int i, n;

	for (;;) {
		if (drain())
			return 1;
		n = conn_fds(fds, MAX_POLL_FDS - 2);
		pfd[0] = (struct pollfd){ .fd = ring.ring_fd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		for (i = 0; i < n; i++)
			pfd[2 + i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
		if (poll(pfd, (nfds_t)(2 + n), 1000) < 0 && errno != EINTR) {
			logmsg("poll: %s", strerror(errno));
			return 1;
		}
		if (pfd[1].revents) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				logmsg("signal %u: exiting", si.ssi_signo);
				return 0;
			}
		}
		if (conn_events())
			return 1;
	}
}

static int write_pid_file(void)
{
	FILE *f = fopen(opt.pid_file, "w");

	if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f)) {
		logmsg("cannot write %s: %s", opt.pid_file, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	sigset_t mask;
	int sfd, ret;

	ret = parse_args(argc, argv);
	if (ret)
		return ret;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0 || exec_init(opt.buf_len) || agent_register() || ring_start())
		return 1;
	if (opt.pid_file && write_pid_file())
		return 1;
	logmsg("registered: %u tags of %u bytes, %s", opt.tags, opt.buf_len,
	       opt.events ? "events" : "busy polling");
	ret = serve(sfd);
	conn_drop_all();
	/* Closing the device unregisters the agent; its held batches end. */
	close(dev_fd);
	io_uring_queue_exit(&ring);
	if (opt.pid_file)
		unlink(opt.pid_file);
	return ret;
}
