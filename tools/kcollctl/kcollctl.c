// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcollctl - administer the kcoll kernel module.
 *
 *	kcollctl [ OPTIONS ] OBJECT { COMMAND | help }
 *
 * Modelled on iproute2's rdma(8) and devlink(8): global options first, then an object, then
 * a command with its arguments.  Exit status: 0 success, 1 runtime error, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <libkcoll.h>

#include "kcollctl.h"

#define KCOLL_CTL_NAME	"kcollctl"

static const struct kcoll_ctl_obj *const kcoll_ctl_objs[] = {
	&kcoll_ctl_info_obj,
	&kcoll_ctl_dev_obj,
	&kcoll_ctl_comm_obj,
	&kcoll_ctl_config_obj,
	&kcoll_ctl_engine_obj,
	&kcoll_ctl_stats_obj,
	&kcoll_ctl_monitor_obj,
	NULL,
};

static void kcoll_ctl_usage(FILE *f)
{
	const struct kcoll_ctl_obj *const *o;

	fprintf(f,
		"Usage: kcollctl [ OPTIONS ] OBJECT { COMMAND | help }\n"
		"       kcollctl [ -j[son] ] [ -p[retty] ] [ --device=PATH ] OBJECT ...\n"
		"where  OBJECT := {");
	for (o = kcoll_ctl_objs; *o; o++)
		fprintf(f, " %s%s", (*o)->name, o[1] ? " |" : " }\n");
	fprintf(f, "       OPTIONS := { -V[ersion] | -h[elp] | -j[son] | -p[retty] |"
		   " --device=PATH }\n\nObjects:\n");
	for (o = kcoll_ctl_objs; *o; o++)
		fprintf(f, "  %-8s %s\n", (*o)->name, (*o)->summary);
}

int kcoll_ctl_err(const char *fmt, ...)
{
	va_list ap;

	fputs(KCOLL_CTL_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return KCOLL_CTL_ERR;
}

int kcoll_ctl_usage_err(const struct kcoll_ctl_obj *obj, const char *fmt, ...)
{
	va_list ap;

	fputs(KCOLL_CTL_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (obj)
		fprintf(stderr, "\nTry \"" KCOLL_CTL_NAME " %s help\".\n", obj->name);
	else
		fputs("\nTry \"" KCOLL_CTL_NAME " --help\".\n", stderr);
	return KCOLL_CTL_USAGE;
}

int kcoll_ctl_extra_arg(const struct kcoll_ctl_obj *obj, const char *what, const char *arg)
{
	return kcoll_ctl_usage_err(obj, "%s: unexpected argument \"%s\"", what, arg);
}

const char *kcoll_ctl_hint(int err)
{
	switch (err) {
	case ENOENT:
	case ENODEV:
	case ENXIO:
		return " (is the kcoll module loaded? try: modprobe kcoll)";
	case EACCES:
	case EPERM:
		return " (try as root)";
	default:
		return "";
	}
}

static const struct kcoll_ctl_obj *kcoll_ctl_find_obj(const char *name)
{
	const struct kcoll_ctl_obj *const *o;

	for (o = kcoll_ctl_objs; *o; o++) {
		if (!strcmp((*o)->name, name))
			return *o;
	}
	return NULL;
}

static bool kcoll_ctl_is_help(const char *arg)
{
	return !strcmp(arg, "help") || !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

/* Run "OBJECT [COMMAND [ARGS...]]"; argv[0] is the command word (absent: the default). */
static int kcoll_ctl_dispatch(struct kcoll_ctl *ctl, const struct kcoll_ctl_obj *obj,
			      int argc, char **argv)
{
	const struct kcoll_ctl_cmd *cmd;

	if (!argc)
		return obj->cmds[0].fn(ctl, 0, argv);
	if (kcoll_ctl_is_help(argv[0])) {
		obj->usage(stdout);
		return KCOLL_CTL_OK;
	}
	for (cmd = obj->cmds; cmd->name; cmd++) {
		if (!strcmp(cmd->name, argv[0]))
			return cmd->fn(ctl, argc - 1, argv + 1);
	}
	if (obj->default_takes_args)
		return obj->cmds[0].fn(ctl, argc, argv);
	return kcoll_ctl_usage_err(obj, "%s: unknown command \"%s\"", obj->name, argv[0]);
}

static void kcoll_ctl_print_version(void)
{
	printf(KCOLL_CTL_NAME " %s (libkcoll %s, uAPI ABI %d)\n",
	       kcoll_version(), kcoll_version(), KCOLL_ABI_VERSION);
}

enum {
	KCOLL_CTL_OPT_DEVICE = 0x100,
};

static const struct option kcoll_ctl_longopts[] = {
	{ "json",	no_argument,		NULL, 'j' },
	{ "pretty",	no_argument,		NULL, 'p' },
	{ "version",	no_argument,		NULL, 'V' },
	{ "help",	no_argument,		NULL, 'h' },
	{ "device",	required_argument,	NULL, KCOLL_CTL_OPT_DEVICE },
	{ NULL,		0,			NULL, 0 },
};

/*
 * Parse the global options.  Returns -1 to go on with the object, or an exit code
 * (-V and -h finish here).  "+" stops at the first non-option: the object's arguments are its
 * own, so "kcollctl dev show -x" is the dev object's business.
 */
static int kcoll_ctl_parse_opts(struct kcoll_ctl *ctl, int argc, char **argv)
{
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:jpVh", kcoll_ctl_longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			ctl->json = true;
			break;
		case 'p':
			ctl->pretty = true;
			break;
		case 'V':
			kcoll_ctl_print_version();
			return KCOLL_CTL_OK;
		case 'h':
			kcoll_ctl_usage(stdout);
			return KCOLL_CTL_OK;
		case KCOLL_CTL_OPT_DEVICE:
			ctl->dev_path = optarg;
			break;
		case ':':
			return kcoll_ctl_usage_err(NULL, "option \"%s\" requires an argument",
						   argv[optind - 1]);
		default:
			/* optopt is the character of a bad short option, 0 for a bad long one */
			if (optopt > 0 && optopt < 0x100)
				return kcoll_ctl_usage_err(NULL, "invalid option -- '%c'", optopt);
			return kcoll_ctl_usage_err(NULL, "invalid option \"%s\"",
						   argv[optind - 1]);
		}
	}
	return -1;
}

static int kcoll_ctl_run(struct kcoll_ctl *ctl, int argc, char **argv)
{
	const struct kcoll_ctl_obj *obj;
	int ret;

	ret = kcoll_ctl_parse_opts(ctl, argc, argv);
	if (ret >= 0)
		return ret;
	argc -= optind;
	argv += optind;
	if (!argc) {
		kcoll_ctl_usage(stderr);
		return KCOLL_CTL_USAGE;
	}
	if (kcoll_ctl_is_help(argv[0])) {
		kcoll_ctl_usage(stdout);
		return KCOLL_CTL_OK;
	}
	obj = kcoll_ctl_find_obj(argv[0]);
	if (!obj)
		return kcoll_ctl_usage_err(NULL, "unknown object \"%s\"", argv[0]);
	return kcoll_ctl_dispatch(ctl, obj, argc - 1, argv + 1);
}

/* A full disk or a closed pipe must not look like success to a script. */
static int kcoll_ctl_flush(int ret)
{
	int err = 0;

	if (fflush(stdout) == EOF)
		err = errno;
	else if (ferror(stdout))
		err = EIO;
	if (!err)
		return ret;
	kcoll_ctl_err("write error: %s", strerror(err));
	return ret == KCOLL_CTL_OK ? KCOLL_CTL_ERR : ret;
}

int main(int argc, char **argv)
{
	struct kcoll_ctl ctl = { .dev_path = KCOLL_DEVICE_PATH };

	return kcoll_ctl_flush(kcoll_ctl_run(&ctl, argc, argv));
}
