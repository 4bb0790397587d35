/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Protothreads: each operation is written as straight-line code but runs
 * as an event-driven state machine.  PT_YIELD saves the resume point (the
 * source line) and returns; the next call resumes there.  No state lives
 * in locals across a yield: everything is in the owning structure.  Never
 * yield inside a nested switch statement.
 */
#ifndef _CIDER_CORE_PT_H
#define _CIDER_CORE_PT_H

#define PT_BEGIN(pt)	switch (*(pt)) { case 0:
#define PT_YIELD(pt)	do { *(pt) = __LINE__; return false; case __LINE__:; } while (0)
#define PT_END(pt)	} *(pt) = 0; return true
#define PT_RESTART(pt)	do { *(pt) = 0; return false; } while (0)

#endif
