/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Telling systemd how the daemon is (Type=notify): notify.c speaks the
 * notification protocol of sd_notify(3) itself, a datagram of
 * "KEY=value" lines to $NOTIFY_SOCKET, documented by systemd as stable
 * for reimplementation, so that a passive daemon needs no library for it.
 */
#ifndef CIDER_MEMD_NOTIFY_H
#define CIDER_MEMD_NOTIFY_H

/*
 * Send @state ("READY=1\nSTATUS=...") to the service manager, if there
 * is one: 1 sent, 0 none ($NOTIFY_SOCKET unset), -1 with errno.
 */
int memd_notify(const char *state);

#endif
