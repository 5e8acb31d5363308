/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * kcollctl: shared definitions of the command-line front end and its objects.
 *
 * Each OBJECT (info, dev, comm, config, engine, stats, monitor) is a struct kcoll_ctl_obj in
 * a file of its own, with its command table and help; kcollctl.c only finds the object and
 * hands it the rest of the command line, so adding an object is one file plus one line in
 * the object table.  Objects print through print.c: one call per field, for text and JSON.
 */
#ifndef _KCOLLCTL_H
#define _KCOLLCTL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* netlink.c: the "kcoll" generic netlink family, and where show commands read from */
struct kcoll_nl;
extern const char *const kcoll_ctl_node_types[];
extern const char *const kcoll_ctl_gid_types[];
extern const char *const kcoll_ctl_comm_states[];
/* tbl[v], or "unknown" past the end of a NULL-terminated table */
const char *kcoll_ctl_name_of(const char *const *tbl, unsigned int v);
int kcoll_ctl_nl_open(struct kcoll_nl **nl, bool quiet);
int kcoll_ctl_nl_err(const char *what, int err);
/* Close @nl after the request of @what that returned @ret: KCOLL_CTL_OK or its failure. */
int kcoll_ctl_nl_done(struct kcoll_nl *nl, const char *what, int ret);
#define KCOLL_CTL_SYSFS		(-1)
/* 0 with *nl open (netlink), KCOLL_CTL_SYSFS (read sysfs instead), or an exit code */
int kcoll_ctl_source(struct kcoll_nl **nl);
/* sysfs could not be read: the message, with what the errno likely means */
int kcoll_ctl_sysfs_err(const char *what, int err);

/* print.c: one call per field, as text or as JSON (see there) */
enum kcoll_ctl_where {
	KCOLL_CTL_ANY,
	KCOLL_CTL_TEXT,
	KCOLL_CTL_JSON,
};

/* A document: a JSON array (@list) or object; nothing as text.  end: an exit code. */
void kcoll_ctl_doc_begin(struct kcoll_ctl *ctl, bool list);
int kcoll_ctl_doc_end(struct kcoll_ctl *ctl);
void kcoll_ctl_obj_begin(struct kcoll_ctl *ctl, const char *key);
void kcoll_ctl_obj_end(struct kcoll_ctl *ctl);
void kcoll_ctl_arr_begin(struct kcoll_ctl *ctl, const char *key);
void kcoll_ctl_arr_end(struct kcoll_ctl *ctl);
void kcoll_ctl_str(struct kcoll_ctl *ctl, enum kcoll_ctl_where where, const char *key,
		   const char *fmt, const char *v);
void kcoll_ctl_uint(struct kcoll_ctl *ctl, enum kcoll_ctl_where where, const char *key,
		    const char *fmt, uint64_t v);
void kcoll_ctl_int(struct kcoll_ctl *ctl, enum kcoll_ctl_where where, const char *key,
		   const char *fmt, int64_t v);
void kcoll_ctl_bool(struct kcoll_ctl *ctl, enum kcoll_ctl_where where, const char *key,
		    const char *fmt, bool v);
void kcoll_ctl_text(struct kcoll_ctl *ctl, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void kcoll_ctl_nl(struct kcoll_ctl *ctl);

struct kcoll_ctl_traffic {
	uint64_t tx_bytes, tx_ops, rx_bytes, rx_ops;
};

void kcoll_ctl_traffic(struct kcoll_ctl *ctl, const struct kcoll_ctl_traffic *t);

/* "kcollctl: <message>\n" on stderr; returns KCOLL_CTL_ERR for "return kcoll_ctl_err(...)". */
int kcoll_ctl_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, followed by "Try ..." and KCOLL_CTL_USAGE. */
int kcoll_ctl_usage_err(const struct kcoll_ctl_obj *obj, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "@what: unexpected argument "@arg"", as kcoll_ctl_usage_err() prints it. */
int kcoll_ctl_extra_arg(const struct kcoll_ctl_obj *obj, const char *what, const char *arg);

/* Hint appended to an errno message, e.g. how to load the module; "" when there is none. */
const char *kcoll_ctl_hint(int err);

#endif /* _KCOLLCTL_H */
