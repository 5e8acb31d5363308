/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers shared by the host tests: throw-away sysfs trees and running programs with
 * captured output.  None of them use the harness, so they can fail softly (return -errno)
 * and let the test decide between ASSERT and SKIP.
 */
#ifndef _KCOLL_TEST_H
#define _KCOLL_TEST_H

#include <stddef.h>

/* Fake sysfs roots and other scratch directories: mkdtemp() under $TMPDIR or /tmp. */
int kcoll_test_mkdtemp(char *buf, size_t len);
int kcoll_test_rmtree(const char *dir);

/* Write @content to @root/@rel, creating the directories in between. */
int kcoll_test_write(const char *root, const char *rel, const char *content);
int kcoll_test_mkdir(const char *root, const char *rel);

/*
 * A device directory devices/@name with the four attributes as the module prints them;
 * a NULL attribute is left out.
 */
struct kcoll_test_dev {
	const char *name;
	const char *node_type;
	const char *ports;
	const char *allowed;
	const char *node_guid;
};
int kcoll_test_add_dev(const char *root, const struct kcoll_test_dev *dev);

struct kcoll_test_cmd {
	const char *const *argv;	/* argv[0] is looked up in $PATH if it has no '/' */
	const char *const *env;		/* "NAME=value" to set, "NAME" to unset; NULL-ended */
	const char *input;		/* standard input; NULL: /dev/null */
	const char *stdout_path;	/* file to write standard output to instead of capturing */
};

struct kcoll_test_proc {
	int status;		/* exit code, 128 + signal if killed; 127: could not exec */
	char out[16384];	/* captured output, NUL terminated (truncated if longer) */
	char err[8192];
};

int kcoll_test_run(const struct kcoll_test_cmd *cmd, struct kcoll_test_proc *proc);

/* Path of the kcollctl under test: $KCOLLCTL, else the one built in this tree. */
const char *kcoll_test_kcollctl(void);

#endif /* _KCOLL_TEST_H */
