/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How the protocol core's state machines run.
 *
 * Every sub-protocol (locate, allocate, write, lock, ...) is a small
 * struct with an enum state and the scratch fields it keeps while it
 * waits, and a step function that is called when the client resumes: it
 * looks at what its state waited for (the verbs in c->v, a qnode's
 * state), fills c->v with the next verbs or asks to sleep, sets the next
 * state and says which of the results below applies.  A parent whose
 * state names a child calls the child's step function and goes on when it
 * returns CIDER_STEP_DONE, in the same resume.  Only the client's top
 * level (client.c) posts verbs and arms timers, so no sub-protocol calls
 * back into the fabric to wait (the sunrpc client's tk_action precedent:
 * Documentation/protocol.rst has each machine's state table).
 */
#ifndef _CIDER_CORE_SM_H
#define _CIDER_CORE_SM_H

#include "vocab.h"	/* each machine's states and their names */

enum cider_step {
	CIDER_STEP_NEXT,	/* the state changed: step again at once */
	CIDER_STEP_POSTED,	/* post c->v; resume when the verbs complete */
	CIDER_STEP_PARKED,	/* sleep until woken, or the timer if armed */
	CIDER_STEP_DONE,	/* finished: the parent goes on */
};

/*
 * How a child machine that reports one ended (c->outcome; its init makes
 * it OK): locate, insert, write, acquire and coord.  The fence, the CAS
 * spinlock and release have nothing to report and leave it as it was.
 */
enum cider_outcome {
	CIDER_OUT_OK,		/* done as asked (locate: the key is there) */
	CIDER_OUT_NOTFOUND,	/* locate: the key is not there */
	/*
	 * The key's slot or pointer changed under it, or a READ broke the
	 * reclamation rule: find it again.
	 */
	CIDER_OUT_RELOCATE,
	CIDER_OUT_RESTART,	/* the lock was reset, or no qnode: pause, start over */
	CIDER_OUT_ESCALATE,	/* the optimistic write lost too often: take the lock */
};

#endif
