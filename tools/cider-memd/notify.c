// SPDX-License-Identifier: GPL-2.0
/* The service manager's notification socket (notify.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "notify.h"

int memd_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n, len;
	ssize_t sent;
	int fd;

	if (!path || !*path)
		return 0;
	n = strlen(path);
	/* A path, or an abstract name written with a leading '@'. */
	if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sa.sun_path)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(sa.sun_path, path, n);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	len = offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '/');
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		      (socklen_t)len);
	close(fd);
	return sent < 0 ? -1 : 1;
}
