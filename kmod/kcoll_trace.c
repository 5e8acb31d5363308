// SPDX-License-Identifier: GPL-2.0
/*
 * The kcoll:* tracepoints are defined here (kcoll_trace.h); the state changes that trace
 * are in kcoll_state.c.
 */
#include "kcoll.h"

#define CREATE_TRACE_POINTS
#include "kcoll_trace.h"
