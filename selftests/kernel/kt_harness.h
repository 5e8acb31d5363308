/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kselftest harness, with its per-test alarm scaled on the debug tier.  The alarm
 * catches a hung test; it is not a speed check.  Under KASAN, lockdep and kmemleak on a
 * loaded TCG host the same work takes several times longer, and the harness's 30 s
 * default ended fixture-heavy cases (an rxe device added and removed around each) that
 * were still making progress.  Every test gets this first (-include, see the Makefile).
 */
#ifndef KT_HARNESS_H
#define KT_HARNESS_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The harness sets and clears its alarm with this; a debug run waits 4 times longer. */
static inline unsigned int kt_alarm(unsigned int secs)
{
	const char *f = getenv("RIG_FLAVOUR");

	return alarm(secs && f && !strcmp(f, "debug") ? secs * 4 : secs);
}

#define alarm(secs) kt_alarm(secs)
#include "kselftest_harness.h"
#undef alarm

/* Keeps a test with a TAP main of its own (no TEST_HARNESS_MAIN) free of unused warnings. */
static inline int kt_harness_main(int argc, char **argv)
{
	return test_harness_run(argc, argv);
}

#endif /* KT_HARNESS_H */
