// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll: the transport interface's one piece of shared state (kcoll_transport.h).
 *
 * Point-to-point and the connection layer register their upcalls here at load; every
 * transport calls up through kcoll_transport_up and kcoll_transport_link and never names a
 * function of a higher layer.
 */
#include "kcoll.h"

/* Written once at load, before any connection exists; read-only afterwards. */
const struct kcoll_conn_upcalls *kcoll_transport_up;
const struct kcoll_link_upcalls *kcoll_transport_link;

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
