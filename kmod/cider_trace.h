/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints on the data path's state changes: every change of a memory
 * node's state (mn.c) and of a channel's (channel.c), from the one
 * function that makes it.  Free when off; on a running system:
 *
 *	echo 1 > /sys/kernel/tracing/events/cider/enable
 *	cat /sys/kernel/tracing/trace_pipe
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM cider

#if !defined(_CIDER_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _CIDER_TRACE_H

#include <linux/tracepoint.h>

#define cider_show_mn_state(s)				\
	__print_symbolic(s,				\
			 { 0, "attaching" },		\
			 { 1, "live" },			\
			 { 2, "dead" },			\
			 { 3, "stopped" })

#define cider_show_chan_state(s)			\
	__print_symbolic(s,				\
			 { 0, "connecting" },		\
			 { 1, "live" },			\
			 { 2, "stopped" },		\
			 { 3, "drained" })

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
	    TP_fast_assign(__assign_str(owner, owner);
			   __entry->index = index;
			   __entry->old = old;
			   __entry->new = new;
			   __entry->reason = reason;),
	    TP_printk("%s channel %u %s -> %s reason=%d", __get_str(owner),
		      __entry->index, cider_show_chan_state(__entry->old),
		      cider_show_chan_state(__entry->new), __entry->reason)
);

#endif /* _CIDER_TRACE_H */

/* Out of tree: define_trace.h finds this file through -I$(src)/kmod. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE cider_trace
#include <trace/define_trace.h>
