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

#include <stdio.h>
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

/*
 * KT_ONLY=FIXTURE.TEST keeps that one test (the 6.1 harness has no -r): the repeat suite
 * runs one test many times to catch a rare failure (Documentation/testing.rst).
 */
static inline void kt_harness_only(void)
{
	const char *only = getenv("KT_ONLY");
	struct __test_metadata *t, *next, **link;
	struct __fixture_metadata *f;
	unsigned int kept = 0;
	char name[256];

	if (!only || !*only)
		return;
	for (f = __fixture_list; f; f = f->next) {
		link = &f->tests;
		for (t = f->tests; t; t = next) {
			next = t->next;
			snprintf(name, sizeof(name), "%s.%s", f->name, t->name);
			if (!strcmp(name, only)) {
				*link = t;
				link = &t->next;
				kept++;
			}
		}
		*link = NULL;
	}
	/* Before the plan: a run of nothing is a failure, not a pass. */
	if (!kept) {
		fprintf(stderr, "KT_ONLY=%s: no such test\n", only);
		exit(1);
	}
}

static inline int kt_harness_run(int argc, char **argv)
{
	kt_harness_only();
	return test_harness_run(argc, argv);
}
#define test_harness_run(argc, argv) kt_harness_run(argc, argv)

/* Keeps a test with a TAP main of its own (no TEST_HARNESS_MAIN) free of unused warnings. */
static inline int kt_harness_main(int argc, char **argv)
{
	return test_harness_run(argc, argv);
}

#endif /* KT_HARNESS_H */
