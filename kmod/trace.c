// SPDX-License-Identifier: GPL-2.0
/* The one place the tracepoints of cider_trace.h are defined. */
#include "mn.h"
#include "transport.h"

#define CREATE_TRACE_POINTS
#include "cider_trace.h"
