/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints on the data path's state changes: every change of a memory
 * node's state (mn.c) and of a channel's (channel.c), from the one
 * function that makes it; and every lock acquisition, release and reset
 * the protocol core reports (kvstore.c).  Free when off; on a
 * running system:
 *
 *	echo 1 > /sys/kernel/tracing/events/cider/enable
 *	cat /sys/kernel/tracing/trace_pipe
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM cider

#if !defined(_CIDER_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _CIDER_TRACE_H

#include <linux/tracepoint.h>

#include "compat.h"
#include "core/proto.h"
#include "mn.h"

/* The symbols come from the lists that define the enums (vocab.h). */
CIDER_MN_STATES(CIDER_MN_STATE_TRACE_ENUM, CIDER_MN_STATE_TRACE_ENUM)
CIDER_CHAN_STATES(CIDER_CHAN_TRACE_ENUM, CIDER_CHAN_TRACE_ENUM)
CIDER_TRACE_TYPES(CIDER_T_TRACE_ENUM, CIDER_T_TRACE_ENUM)

#define cider_show_mn_state(v) \
	__print_symbolic(v, CIDER_MN_STATES(CIDER_MN_SYM, CIDER_MN_SYM_LAST))

#define cider_show_chan_state(v) \
	__print_symbolic(v, CIDER_CHAN_STATES(CIDER_CHAN_SYM, CIDER_CHAN_SYM_LAST))

TRACE_EVENT(cider_mn_state,
	    TP_PROTO(u32 mn, int old, int new, int reason),
	    TP_ARGS(mn, old, new, reason),
	    TP_STRUCT__entry(__field(u32, mn)
			     __field(int, old)
			     __field(int, new)
			     __field(int, reason)),
	    TP_fast_assign(__entry->mn = mn;
			   __entry->old = old;
			   __entry->new = new;
			   __entry->reason = reason;),
	    TP_printk("mn%u %s -> %s reason=%d", __entry->mn,
		      cider_show_mn_state(__entry->old),
		      cider_show_mn_state(__entry->new), __entry->reason)
);

TRACE_EVENT(cider_chan_state,
	    TP_PROTO(const char *owner, unsigned int index, int old, int new, int reason),
	    TP_ARGS(owner, index, old, new, reason),
	    TP_STRUCT__entry(__string(owner, owner)
			     __field(unsigned int, index)
			     __field(int, old)
			     __field(int, new)
			     __field(int, reason)),
	    TP_fast_assign(cider_assign_str(owner, owner);
			   __entry->index = index;
			   __entry->old = old;
			   __entry->new = new;
			   __entry->reason = reason;),
	    TP_printk("%s channel %u %s -> %s reason=%d", __get_str(owner),
		      __entry->index, cider_show_chan_state(__entry->old),
		      cider_show_chan_state(__entry->new), __entry->reason)
);

#define cider_show_lock_event(t) \
	__print_symbolic(t, CIDER_TRACE_TYPES(CIDER_T_SYM, CIDER_T_SYM_LAST))

/*
 * @lock: the lock record's offset in the region; @a: the holder (queue
 * node id, or the CAS lock's word); @b: on the lock queue bit 63 and the
 * generation and ticket acquired, or the count and first ticket released
 * (core/proto.h); for a reset, the header replaced.
 */
TRACE_EVENT(cider_lock,
	    TP_PROTO(u32 mn, u32 cn, u32 client, u8 type, u64 lock, u64 a, u64 b),
	    TP_ARGS(mn, cn, client, type, lock, a, b),
	    TP_STRUCT__entry(__field(u32, mn)
			     __field(u32, cn)
			     __field(u32, client)
			     __field(u8, type)
			     __field(u64, lock)
			     __field(u64, a)
			     __field(u64, b)),
	    TP_fast_assign(__entry->mn = mn;
			   __entry->cn = cn;
			   __entry->client = client;
			   __entry->type = type;
			   __entry->lock = lock;
			   __entry->a = a;
			   __entry->b = b;),
	    TP_printk("mn%u cn %u client %u %s lock %#llx %#llx %#llx", __entry->mn,
		      __entry->cn, __entry->client, cider_show_lock_event(__entry->type),
		      __entry->lock, __entry->a, __entry->b)
);

#endif /* _CIDER_TRACE_H */

/* Out of tree: define_trace.h finds this file through -I$(src)/kmod. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE cider_trace
#include <trace/define_trace.h>
