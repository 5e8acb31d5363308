// SPDX-License-Identifier: GPL-2.0-only
/*
 * kcollctl stats: the traffic counters of every communicator on the node and their totals,
 * through the "kcoll" generic netlink family.
 */
#include <inttypes.h>
#include <string.h>

#include <libkcoll.h>

#include "kcollctl.h"

static void kcoll_ctl_stats_usage(FILE *f)
{
	fputs("Usage: kcollctl stats [ show ]\n"
	      "       kcollctl stats help\n"
	      "Traffic counters of every communicator on the node, and their totals.\n", f);
}

static int kcoll_ctl_stats_show(struct kcoll_ctl *ctl, int argc, char **argv)
{
	struct kcoll_ctl_traffic total = { 0 };
	struct kcoll_nl_comm *comms;
	struct kcoll_nl *nl;
	char id[40];
	size_t n, i;
	int ret;

	if (argc)
		return kcoll_ctl_extra_arg(&kcoll_ctl_stats_obj, "stats show", argv[0]);
	ret = kcoll_ctl_nl_open(&nl, false);
	if (ret)
		return ret;
	ret = kcoll_ctl_nl_done(nl, "stats show", kcoll_nl_comm_list(nl, &comms, &n));
	if (ret)
		return ret;
	kcoll_ctl_doc_begin(ctl, false);
	kcoll_ctl_arr_begin(ctl, "comms");
	for (i = 0; i < n; i++) {
		const struct kcoll_nl_comm *c = &comms[i];
		struct kcoll_ctl_traffic t = {
			.tx_bytes = c->tx_bytes, .tx_ops = c->tx_ops,
			.rx_bytes = c->rx_bytes, .rx_ops = c->rx_ops,
		};

		snprintf(id, sizeof(id), "%016" PRIx64 "-%" PRIu32, c->comm_id, c->rank);
		total.tx_bytes += t.tx_bytes;
		total.tx_ops += t.tx_ops;
		total.rx_bytes += t.rx_bytes;
		total.rx_ops += t.rx_ops;
		kcoll_ctl_obj_begin(ctl, NULL);
		kcoll_ctl_str(ctl, KCOLL_CTL_ANY, "name", "%s:", id);
		kcoll_ctl_traffic(ctl, &t);
		kcoll_ctl_nl(ctl);
		kcoll_ctl_obj_end(ctl);
	}
	kcoll_nl_comm_list_free(comms, n);
	kcoll_ctl_arr_end(ctl);
	kcoll_ctl_uint(ctl, KCOLL_CTL_ANY, "ncomms", "total: comms %" PRIu64, n);
	kcoll_ctl_traffic(ctl, &total);
	kcoll_ctl_nl(ctl);
	return kcoll_ctl_doc_end(ctl);
}

static const struct kcoll_ctl_cmd kcoll_ctl_stats_cmds[] = {
	{ "show",	kcoll_ctl_stats_show },
	{ NULL,		NULL },
};

const struct kcoll_ctl_obj kcoll_ctl_stats_obj = {
	.name		= "stats",
	.summary	= "traffic counters of the communicators",
	.cmds		= kcoll_ctl_stats_cmds,
	.usage		= kcoll_ctl_stats_usage,
};
