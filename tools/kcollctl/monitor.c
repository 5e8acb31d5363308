// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcollctl monitor: the kcoll events (communicators created, destroyed, failed, peers lost,
 * devices added and removed, engines registered) as they happen, from the "kcoll" generic
 * netlink family's events group.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libkcoll.h>

#include "kcollctl.h"

static void kcoll_ctl_monitor_usage(FILE *f)
{
	fputs("Usage: kcollctl monitor [ show ] [ count N ] [ timeout SECONDS ]\n"
	      "       kcollctl monitor help\n"
	      "Print kcoll events (communicators created, destroyed, failed, peers lost,\n"
	      "devices added and removed) as they happen; with -j one JSON object per line.\n"
	      "Stops after N events, or after SECONDS (exit status 1 if fewer than N came).\n",
	      f);
}

/* Text: one line per event; JSON: one object per line, so a reader can follow it. */
static void kcoll_ctl_event_print(struct kcoll_ctl *ctl, const struct kcoll_nl_event *ev)
{
	const char *name = kcoll_nl_event_str(ev->cmd);
	bool dev = ev->cmd == KCOLL_CMD_DEV_ADDED_NTF || ev->cmd == KCOLL_CMD_DEV_REMOVED_NTF;
	bool engine = ev->cmd == KCOLL_CMD_ENGINE_REGISTERED_NTF;
	char id[20];

	snprintf(id, sizeof(id), "%016" PRIx64, ev->comm_id);
	kcoll_ctl_doc_begin(ctl, false);
	kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "event", "%s", name ? name : "unknown");
	if (dev) {
		kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "dev", " dev %s", ev->dev_name);
	} else if (engine) {
		kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "engine", " engine %s", ev->engine);
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "priority", " priority %" PRIu64,
			       ev->priority);
	} else {
		kcoll_ctl_text(ctl, " comm %s-%" PRIu32, id, ev->rank);
		kcoll_ctl_str(ctl, KCOLL_CTL_JSON, "comm_id", NULL, id);
		kcoll_ctl_uint(ctl, KCOLL_CTL_JSON, "rank", NULL, ev->rank);
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "nranks", " nranks %" PRIu64, ev->nranks);
		kcoll_ctl_uint(ctl, KCOLL_CTL_JSON, "netns", NULL, ev->netns);
		if (ev->cmd != KCOLL_CMD_PEER_LOST_NTF)
			kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "state", " state %s",
				      kcoll_ctl_name_of(kcoll_ctl_comm_states, ev->state));
	}
	if (ev->peer_rank != UINT32_MAX)
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "peer", " peer %" PRIu64, ev->peer_rank);
	if (ev->failed_rank != UINT32_MAX)
		kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "failed_rank", " failed_rank %" PRIu64,
			       ev->failed_rank);
	if (!dev && !engine)
		kcoll_ctl_int(ctl, ev->error ? KCOLL_CTL_ANY : KCOLL_CTL_JSON, "error",
			      " error %" PRId64, ev->error);
	else if (ev->error)
		kcoll_ctl_text(ctl, " error %" PRId32, ev->error);
	if (ev->error)
		kcoll_ctl_text(ctl, " (%s)", strerror(-ev->error));
	kcoll_ctl_nl(ctl);
	kcoll_ctl_doc_end(ctl);
	fflush(stdout);
}

static int kcoll_ctl_monitor(struct kcoll_ctl *ctl, int argc, char **argv)
{
	long count = 0, timeout = -1, got = 0;
	struct kcoll_nl_event ev;
	struct timespec t0, t;
	struct kcoll_nl *nl;
	int i, ret, wait;
	char *end;

	if (argc && !strcmp(argv[0], "show")) {
		argc--;
		argv++;
	}
	for (i = 0; i < argc; i += 2) {
		long *v = !strcmp(argv[i], "count") ? &count :
			  !strcmp(argv[i], "timeout") ? &timeout : NULL;

		if (!v || i + 1 >= argc)
			return kcoll_ctl_usage_err(&kcoll_ctl_monitor_obj,
						   "monitor: bad argument \"%s\"", argv[i]);
		errno = 0;
		*v = strtol(argv[i + 1], &end, 10);
		if (errno || *end || !*argv[i + 1] || *v < 0 || *v > 86400 * 365)
			return kcoll_ctl_usage_err(&kcoll_ctl_monitor_obj,
						   "monitor: bad %s \"%s\"", argv[i], argv[i + 1]);
	}
	ret = kcoll_ctl_nl_open(&nl, false);
	if (ret)
		return ret;
	ret = kcoll_nl_monitor(nl);
	if (ret) {
		kcoll_nl_close(nl);
		return kcoll_ctl_nl_err("monitor", ret);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		wait = -1;
		if (timeout >= 0) {
			long ms;

			clock_gettime(CLOCK_MONOTONIC, &t);
			ms = timeout * 1000 - ((t.tv_sec - t0.tv_sec) * 1000 +
					       (t.tv_nsec - t0.tv_nsec) / 1000000);
			if (ms <= 0)
				break;
			wait = (int)ms;
		}
		ret = kcoll_nl_event_next(nl, &ev, wait);
		if (ret == -EAGAIN)
			break;
		if (ret == -ENOBUFS) {
			fprintf(stderr, "kcollctl: monitor: events were lost\n");
			continue;
		}
		if (ret)
			break;
		kcoll_ctl_event_print(ctl, &ev);
		if (count && ++got >= count)
			break;
	}
	kcoll_nl_close(nl);
	if (ret && ret != -EAGAIN)
		return kcoll_ctl_nl_err("monitor", ret);
	return count && got < count ? KCOLL_CTL_ERR : KCOLL_CTL_OK;
}

static const struct kcoll_ctl_cmd kcoll_ctl_monitor_cmds[] = {
	{ "show",	kcoll_ctl_monitor },
	{ NULL,		NULL },
};

/* "kcollctl monitor count 3": the arguments go to the default command. */
const struct kcoll_ctl_obj kcoll_ctl_monitor_obj = {
	.name		= "monitor",
	.summary	= "print kcoll events as they happen",
	.cmds		= kcoll_ctl_monitor_cmds,
	.usage		= kcoll_ctl_monitor_usage,
	.default_takes_args = true,
};
