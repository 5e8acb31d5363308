// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll: collective communication over RDMA, driven by the kernel.
 *
 * Module entry: parameters, the feature set, and the order in which the parts come up and go
 * down.  Bring-up is sysfs (so devices have a place to appear), the netlink
 * family (so device and comm events can be sent), then the ib_client (devices),
 * then /dev/kcoll last, so no user can reach a half-initialised module; tear-down is the exact
 * reverse.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "kcoll.h"
#include "kcoll_nl.h"

static char *devices;
module_param(devices, charp, 0444);
MODULE_PARM_DESC(devices,
		 "Comma-separated RDMA device names kcoll may use (default: all devices)");

/* listen_port, tos, connect_timeout_ms, op_timeout_ms: views of the store, kcoll_config.c */

unsigned int kcoll_max_buf_mb = 1024;
module_param_named(max_buf_mb, kcoll_max_buf_mb, uint, 0644);
MODULE_PARM_DESC(max_buf_mb, "Largest zero-copy buffer in MiB (default 1024)");

/* Per open file of /dev/kcoll: past a cap, the call fails with EMFILE (security.rst). */
unsigned int kcoll_max_comms_per_file = 64;
module_param_named(max_comms_per_file, kcoll_max_comms_per_file, uint, 0644);
MODULE_PARM_DESC(max_comms_per_file, "Communicators per open file (default 64)");
unsigned int kcoll_max_reqs_per_file = 4096;
module_param_named(max_reqs_per_file, kcoll_max_reqs_per_file, uint, 0644);
MODULE_PARM_DESC(max_reqs_per_file,
		 "Non-blocking transfers and collectives per open file not waited for yet (default 4096)");
unsigned int kcoll_max_bufs_per_file = 1024;
module_param_named(max_bufs_per_file, kcoll_max_bufs_per_file, uint, 0644);
MODULE_PARM_DESC(max_bufs_per_file, "Zero-copy buffers per open file (default 1024)");

/* Only for testing how a peer speaking another protocol version is refused. */
unsigned int kcoll_proto_version = KCOLL_PROTO_VERSION;
module_param_named(proto_version, kcoll_proto_version, uint, 0444);

bool kcoll_require_secret;
module_param_named(require_secret, kcoll_require_secret, bool, 0644);
MODULE_PARM_DESC(require_secret,
		 "refuse communicators created without a secret (all-zero secret field)");
MODULE_PARM_DESC(proto_version,
		 "Wire protocol version spoken (testing only; default: the module's own)");

struct workqueue_struct *kcoll_wq;

/**
 * kcoll_dev_name_allowed - does the devices= parameter let kcoll use this device?
 * @name: RDMA device name, e.g. "rxe0" or "mlx5_0"
 *
 * An empty or absent list allows every device, so a plain `modprobe kcoll` just works.
 */
bool kcoll_dev_name_allowed(const char *name)
{
	const char *p = devices;
	size_t len = strlen(name);

	if (!p || !*p)
		return true;
	while (*p) {
		const char *end = strchrnul(p, ',');

		if (end - p == len && !strncmp(p, name, len))
			return true;
		p = *end ? end + 1 : end;
	}
	return false;
}

/* Device tracking (the RDMA transport's ib_client) reaches the control plane through these. */
static const struct kcoll_dev_upcalls kcoll_dev_upcalls = {
	.allowed	= kcoll_dev_name_allowed,
	.publish	= kcoll_sysfs_dev_add,
	.event		= kcoll_nl_event_dev,
	.shutdown	= kcoll_comm_shutdown_dev,
	.unpublish	= kcoll_sysfs_dev_del,
	.rename		= kcoll_sysfs_dev_rename,
};

static int __init kcoll_init(void)
{
	int ret;

	kcoll_fault_init();	/* first: every later step has fail points */
	/* Each layer routes its message types to itself (kcoll_rx.c), connections to p2p. */
	ret = kcoll_conn_init() ?: kcoll_p2p_init() ?: kcoll_buf_rx_init();
	if (ret) {
		kcoll_fault_exit();
		return ret;
	}
	kcoll_wq = alloc_workqueue("kcoll", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!kcoll_wq) {
		kcoll_fault_exit();
		return -ENOMEM;
	}
	ret = kcoll_sysfs_init();
	if (ret)
		goto out_wq;
	ret = kcoll_engine_init(kcoll_sysfs_subdir("engines", 0755), kcoll_nl_event_engine);
	if (ret)
		goto out_sysfs;
	/* Before devices and comms, which send events; its commands cope with neither yet. */
	ret = kcoll_nl_init();
	if (ret)
		goto out_engine;
	ret = kcoll_comm_init();
	if (ret)
		goto out_nl;
	kcoll_transport_set_dev(&kcoll_dev_upcalls);
	ret = kcoll_ib_init();
	if (ret)
		goto out_comm;
	ret = kcoll_chrdev_init();
	if (ret)
		goto out_ib;
	/* The node's listener, from now until unload (transport/rdma_listen.c says why). */
	kcoll_listen_keep(READ_ONCE(kcoll_listen_port));
	pr_info("version %s loaded (ABI %d)\n", KCOLL_VERSION, KCOLL_ABI_VERSION);
	return 0;

out_ib:
	kcoll_ib_exit();
out_comm:
	kcoll_comm_exit();
out_nl:
	kcoll_nl_exit();
out_engine:
	kcoll_engine_exit();
out_sysfs:
	kcoll_sysfs_exit();
out_wq:
	destroy_workqueue(kcoll_wq);
	kcoll_fault_exit();
	return ret;
}

static void __exit kcoll_exit(void)
{
	kcoll_chrdev_exit();
	kcoll_ib_exit();
	kcoll_comm_exit();
	kcoll_listeners_exit();	/* unused by now: no communicator is left */
	kcoll_tcp_listen_exit();
	kcoll_nl_exit();
	kcoll_engine_exit();
	kcoll_sysfs_exit();
	destroy_workqueue(kcoll_wq);
	kcoll_fault_exit();
	pr_info("unloaded\n");
}

module_init(kcoll_init);
module_exit(kcoll_exit);

MODULE_AUTHOR("The kcoll authors");
MODULE_DESCRIPTION("kcoll: kernel collective communication over RDMA");
MODULE_LICENSE("GPL");
MODULE_VERSION(KCOLL_VERSION);
