/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kcollctl: shared definitions of the command-line front end and its objects.
 *
 * Each OBJECT (info, dev, comm, and later engine, config, stats, monitor) is a
 * struct kcoll_ctl_obj with its own command table and help; kcollctl.c only finds the object
 * and hands it the rest of the command line, so adding an object is one file plus one line
 * in the object table.
 */
#ifndef _KCOLLCTL_H
#define _KCOLLCTL_H

#include <stdbool.h>
#include <stdio.h>

#include "json_writer.h"

/* Exit codes, as documented in kcollctl(8). */
#define KCOLL_CTL_OK		0
#define KCOLL_CTL_ERR		1	/* runtime failure: message on stderr */
#define KCOLL_CTL_USAGE		2	/* bad command line: message and usage on stderr */

struct kcoll_ctl {
	bool json;
	bool pretty;
	const char *dev_path;	/* --device, default KCOLL_DEVICE_PATH */
	struct kcoll_jw jw;	/* valid while a command prints JSON */
};

struct kcoll_ctl_cmd {
	const char *name;
	/* argc/argv: the arguments after the command word */
	int (*fn)(struct kcoll_ctl *ctl, int argc, char **argv);
};

struct kcoll_ctl_obj {
	const char *name;
	const char *summary;
	/* NULL-terminated; the first command runs when none is given ("kcollctl dev") */
	const struct kcoll_ctl_cmd *cmds;
	void (*usage)(FILE *f);
	/* an unknown command word is an argument of the first command ("monitor count 3") */
	bool default_takes_args;
};

extern const struct kcoll_ctl_obj kcoll_ctl_info_obj;
extern const struct kcoll_ctl_obj kcoll_ctl_dev_obj;
extern const struct kcoll_ctl_obj kcoll_ctl_comm_obj;
extern const struct kcoll_ctl_obj kcoll_ctl_config_obj;
extern const struct kcoll_ctl_obj kcoll_ctl_engine_obj;
extern const struct kcoll_ctl_obj kcoll_ctl_stats_obj;
extern const struct kcoll_ctl_obj kcoll_ctl_monitor_obj;

/* netlink.c: the "kcoll" generic netlink family */
struct kcoll_nl;
extern const char *const kcoll_ctl_colls[];
extern const char *const kcoll_ctl_algos[];
int kcoll_ctl_lookup(const char *const *tbl, const char *name);
int kcoll_ctl_nl_open(struct kcoll_nl **nl, bool quiet);
int kcoll_ctl_nl_err(const char *what, int err);
/* -1: no netlink family, use sysfs; else an exit code */
int kcoll_ctl_nl_dev_show(struct kcoll_ctl *ctl, const char *name);
int kcoll_ctl_nl_comm_show(struct kcoll_ctl *ctl, const char *arg);
int kcoll_ctl_nl_dev_set(struct kcoll_ctl *ctl, int argc, char **argv);
int kcoll_ctl_nl_comm_abort(struct kcoll_ctl *ctl, int argc, char **argv);

/* "kcollctl: <message>\n" on stderr; returns KCOLL_CTL_ERR for "return kcoll_ctl_err(...)". */
int kcoll_ctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, followed by "Try ..." and KCOLL_CTL_USAGE. */
int kcoll_ctl_usage_err(const struct kcoll_ctl_obj *obj, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Hint appended to an errno message, e.g. how to load the module; "" when there is none. */
const char *kcoll_ctl_hint(int err);

/* JSON document bracketing for commands: start it, then end it and report writer misuse. */
void kcoll_ctl_json_begin(struct kcoll_ctl *ctl);
int kcoll_ctl_json_end(struct kcoll_ctl *ctl);

#endif /* _KCOLLCTL_H */
