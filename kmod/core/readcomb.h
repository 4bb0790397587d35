/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Read combining of one key on one CN (readcomb.c): concurrent SEARCHes
 * of a key share one lookup, the read-side twin of local write combining.
 */
#ifndef _CIDER_CORE_READCOMB_H
#define _CIDER_CORE_READCOMB_H

#include "platform.h"

struct cider_client;

bool cider_rc_join(struct cider_client *c);
u64 cider_rc_finish(struct cider_client *c);
void cider_rc_leave(struct cider_client *c);

#endif
