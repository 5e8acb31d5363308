// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll as an ib_client: follow RDMA devices as they come and go; a communicator's device,
 * PD and listener (the transport's attach and detach).
 *
 * Removal contract (Documentation/infiniband/core_locking.rst): a client must finish with a
 * device before its remove() returns.  remove() therefore unlists the device first, so no new
 * user can find it, shuts down the communicators using it, drops the list's reference and
 * waits until every other user has dropped its own; only then does the memory go (through
 * the sysfs kobject's release).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/in.h>
#include <linux/in6.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "../kcoll.h"
#include "ends.h"
#include "rdma.h"

/* Devices in add order; kcoll_ndevs counts them.  Both guarded by kcoll_devs_mutex. */
static LIST_HEAD(kcoll_devs);
static unsigned int kcoll_ndevs;
static DEFINE_MUTEX(kcoll_devs_mutex);

static struct ib_client kcoll_ib_client;

unsigned int kcoll_dev_count(void)
{
	unsigned int n;

	mutex_lock(&kcoll_devs_mutex);
	n = kcoll_ndevs;
	mutex_unlock(&kcoll_devs_mutex);
	return n;
}

const char *kcoll_dev_node_type(struct kcoll_dev *dev)
{
	u32 port = rdma_start_port(dev->ibdev);

	if (rdma_protocol_roce(dev->ibdev, port))
		return "RoCE";
	if (rdma_protocol_iwarp(dev->ibdev, port))
		return "iWARP";
	if (rdma_protocol_ib(dev->ibdev, port))
		return "InfiniBand";
	return "unknown";
}

/**
 * kcoll_dev_get_by_name - find a device and take a user reference on it
 * @name: RDMA device name
 *
 * Return: the device, to be released with kcoll_dev_put(), or NULL when kcoll does not track
 * it (never added, or being removed).
 */
struct kcoll_dev *kcoll_dev_get_by_name(const char *name)
{
	struct kcoll_dev *dev, *found = NULL;

	mutex_lock(&kcoll_devs_mutex);
	list_for_each_entry(dev, &kcoll_devs, list) {
		if (!strcmp(dev_name(&dev->ibdev->dev), name)) {
			/* Listed devices still hold the list's reference, so this cannot be 0. */
			refcount_inc(&dev->users);
			found = dev;
			break;
		}
	}
	mutex_unlock(&kcoll_devs_mutex);
	return found;
}

/* The kcoll device of an ib_device, with a user reference, or NULL if not tracked. */
struct kcoll_dev *kcoll_dev_get_by_ibdev(struct ib_device *ibdev)
{
	struct kcoll_dev *dev, *found = NULL;

	mutex_lock(&kcoll_devs_mutex);
	list_for_each_entry(dev, &kcoll_devs, list) {
		if (dev->ibdev == ibdev) {
			refcount_inc(&dev->users);
			found = dev;
			break;
		}
	}
	mutex_unlock(&kcoll_devs_mutex);
	return found;
}

/**
 * kcoll_dev_get_nth - the device at position @pos of the list, with a user reference
 * @pos: 0 for the first
 *
 * For dumps, which resume at a position.  Return: the device (release with
 * kcoll_dev_put()), or NULL past the end.
 */
struct kcoll_dev *kcoll_dev_get_nth(unsigned long pos)
{
	struct kcoll_dev *dev, *found = NULL;

	mutex_lock(&kcoll_devs_mutex);
	list_for_each_entry(dev, &kcoll_devs, list) {
		if (!pos--) {
			refcount_inc(&dev->users);
			found = dev;
			break;
		}
	}
	mutex_unlock(&kcoll_devs_mutex);
	return found;
}

void kcoll_dev_put(struct kcoll_dev *dev)
{
	if (refcount_dec_and_test(&dev->users))
		complete(&dev->drained);
}

static int kcoll_ib_add(struct ib_device *ibdev)
{
	struct kcoll_dev *dev;
	int ret;

	dev = kzalloc_node(sizeof(*dev), GFP_KERNEL, ibdev_to_node(ibdev));
	if (!dev)
		return -ENOMEM;
	dev->ibdev = ibdev;
	INIT_LIST_HEAD(&dev->list);
	refcount_set(&dev->users, 1);
	init_completion(&dev->drained);
	dev->allowed = kcoll_transport_dev->allowed(dev_name(&ibdev->dev));
	dev->tos = -1;
	dev->gid_index = -1;

	/* On failure the kobject's release has freed dev already. */
	ret = kcoll_transport_dev->publish(dev);
	if (ret)
		return ret;

	ib_set_client_data(ibdev, &kcoll_ib_client, dev);
	mutex_lock(&kcoll_devs_mutex);
	list_add_tail(&dev->list, &kcoll_devs);
	kcoll_ndevs++;
	mutex_unlock(&kcoll_devs_mutex);

	dev_info(&ibdev->dev, "kcoll: tracking %s device, %u port(s)%s\n",
		 kcoll_dev_node_type(dev), ibdev->phys_port_cnt,
		 dev->allowed ? "" : ", not allowed by devices=");
	kcoll_transport_dev->event(dev, true);
	return 0;
}

static void kcoll_ib_remove(struct ib_device *ibdev, void *client_data)
{
	struct kcoll_dev *dev = client_data;

	mutex_lock(&kcoll_devs_mutex);
	list_del_init(&dev->list);
	kcoll_ndevs--;
	WRITE_ONCE(dev->removing, true);
	mutex_unlock(&kcoll_devs_mutex);
	kcoll_transport_dev->event(dev, false);

	/*
	 * Drain: communicators on the device lose their connections and memory registrations
	 * now (their users see -ENODEV), then we wait for any other user that found the
	 * device before it was unlisted.
	 */
	kcoll_transport_dev->shutdown(dev);
	kcoll_dev_put(dev);
	wait_for_completion(&dev->drained);

	dev_info(&ibdev->dev, "kcoll: device removed\n");
	kcoll_transport_dev->unpublish(dev);
}

static void kcoll_ib_rename(struct ib_device *ibdev, void *client_data)
{
	kcoll_transport_dev->rename(client_data);
}

static struct ib_client kcoll_ib_client = {
	.name	= "kcoll",
	.add	= kcoll_ib_add,
	.remove	= kcoll_ib_remove,
	.rename	= kcoll_ib_rename,
};

int kcoll_ib_init(void)
{
	return ib_register_client(&kcoll_ib_client);
}

void kcoll_ib_exit(void)
{
	/* Calls kcoll_ib_remove() for every device still present. */
	ib_unregister_client(&kcoll_ib_client);
}

/* The probe id below gets no event worth acting on. */
static int kcoll_probe_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	return 0;
}

/* Which device carries this rank's traffic: the one its own address belongs to. */
static int kcoll_rdma_find_dev(struct kcoll_comm *comm)
{
	struct sockaddr_storage own = comm->addrs[comm->rank];
	struct rdma_cm_id *probe;
	struct kcoll_dev *dev;
	int ret;

	if (own.ss_family == AF_INET)
		((struct sockaddr_in *)&own)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&own)->sin6_port = 0;
	probe = kcoll_fi(CM, ERR_PTR(-ENOMEM),
			 rdma_create_id(comm->net, kcoll_probe_handler, NULL, RDMA_PS_TCP,
					IB_QPT_RC));
	if (IS_ERR(probe))
		return PTR_ERR(probe);
	ret = kcoll_fi(CM, -ENOMEM, rdma_bind_addr(probe, (struct sockaddr *)&own));
	if (ret == -ENOMEM)
		goto out_destroy;	/* not the address's fault: say so */
	if (ret || !probe->device) {
		ret = -EADDRNOTAVAIL;
		goto out_destroy;
	}
	dev = kcoll_dev_get_by_ibdev(probe->device);
	if (!dev) {
		ret = -EADDRNOTAVAIL;
		goto out_destroy;
	}
	if (!READ_ONCE(dev->allowed)) {
		kcoll_dev_put(dev);
		ret = -EPERM;
		goto out_destroy;
	}
	comm->dev = dev;
	ret = 0;
out_destroy:
	rdma_destroy_id(probe);
	return ret;
}

/* Free every peer's RDMA end (each torn down, or never connected). */
static void kcoll_rdma_peers_free(struct kcoll_comm *comm)
{
	u32 i;

	for (i = 0; i < comm->nranks; i++) {
		kvfree(comm->conns[i].tp_priv);
		comm->conns[i].tp_priv = NULL;
	}
}

static int kcoll_rdma_end_init(struct kcoll_conn *conn, void *end)
{
	((struct kcoll_rdma_conn *)end)->conn = conn;
	return 0;
}

/**
 * kcoll_rdma_attach - attach: the RDMA resources a communicator of several ranks needs
 * @comm:	a comm being created, not listed yet
 *
 * The device of this rank's own address (a user reference in comm->dev, dropped by
 * kcoll_comm.c after detach: dumps read it under the comm list's mutex), a PD on it, and
 * the namespace's listener on the rank's port, and every peer's struct kcoll_rdma_conn.
 * On failure nothing is left attached.
 *
 * Return: 0, -EADDRNOTAVAIL (no kcoll device has the address), -EPERM (the device is not
 * allowed) or -ENOMEM.  Context: process.
 */
int kcoll_rdma_attach(struct kcoll_comm *comm)
{
	struct sockaddr_storage *own = &comm->addrs[comm->rank];
	u16 port = ntohs(own->ss_family == AF_INET ? ((struct sockaddr_in *)own)->sin_port :
			 ((struct sockaddr_in6 *)own)->sin6_port);
	struct kcoll_listener *l;
	int ret;

	ret = kcoll_tp_ends_alloc(comm, sizeof(struct kcoll_rdma_conn),
				  kcoll_rdma_end_init);
	if (ret)
		goto out_peers;
	ret = kcoll_rdma_find_dev(comm);
	if (ret)
		goto out_peers;
	comm->pd = kcoll_fi(REG, ERR_PTR(-ENOMEM), ib_alloc_pd(comm->dev->ibdev, 0));
	if (IS_ERR(comm->pd)) {
		ret = PTR_ERR(comm->pd);
		goto out_dev;
	}
	l = kcoll_listener_get(comm->net, port);
	if (IS_ERR(l)) {
		ret = PTR_ERR(l);
		ib_dealloc_pd(comm->pd);
		goto out_dev;
	}
	comm->listener = l;
	return 0;

out_dev:
	comm->pd = NULL;
	kcoll_dev_put(comm->dev);
	comm->dev = NULL;
out_peers:
	kcoll_rdma_peers_free(comm);
	return ret;
}

/**
 * kcoll_rdma_detach - detach: release what kcoll_rdma_attach() took but the device
 * @comm:	a comm shutting down, every connection torn down
 *
 * A no-op for a comm that attached nothing (one rank, or attach failed).
 * Context: process, comm->teardown_mutex held.
 */
void kcoll_rdma_detach(struct kcoll_comm *comm)
{
	lockdep_assert_held(&comm->teardown_mutex);
	kcoll_rdma_peers_free(comm);
	if (comm->pd) {
		ib_dealloc_pd(comm->pd);
		comm->pd = NULL;
	}
	if (comm->listener) {
		kcoll_listener_put(comm->listener);
		comm->listener = NULL;
	}
}
