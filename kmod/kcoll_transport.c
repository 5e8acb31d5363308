// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll: the transport interface's one piece of shared state (kcoll_transport.h).
 *
 * Point-to-point, the connection layer and the control plane register their upcalls here
 * at load; every transport calls up through kcoll_transport_up, kcoll_transport_link and
 * kcoll_transport_dev and never names a function of a higher layer.
 */
#include "kcoll.h"

/* Written once at load, before any connection exists; read-only afterwards. */
const struct kcoll_conn_upcalls *kcoll_transport_up;
const struct kcoll_link_upcalls *kcoll_transport_link;
const struct kcoll_dev_upcalls *kcoll_transport_dev;

/**
 * kcoll_transport_set_upcalls - the layer above the transports says how to reach it
 * @up:	its callbacks, all set; static, it lives as long as the module
 *
 * Context: module load, before any connection exists.
 */
void kcoll_transport_set_upcalls(const struct kcoll_conn_upcalls *up)
{
	kcoll_transport_up = up;
}

/**
 * kcoll_transport_set_link - the connection layer says how to reach it
 * @link:	its callbacks, all set; static, it lives as long as the module
 *
 * Context: module load, before any connection exists.
 */
void kcoll_transport_set_link(const struct kcoll_link_upcalls *link)
{
	kcoll_transport_link = link;
}

/**
 * kcoll_transport_set_dev - the control plane says how device tracking reaches it
 * @dev:	its callbacks, all set; static, it lives as long as the module
 *
 * Context: module load, before the ib_client is registered.
 */
void kcoll_transport_set_dev(const struct kcoll_dev_upcalls *dev)
{
	kcoll_transport_dev = dev;
}
