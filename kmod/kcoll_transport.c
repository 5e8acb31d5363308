// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll: the transport interface's one piece of shared state (kcoll_transport.h).
 *
 * Point-to-point registers its upcalls here at load; every transport calls up through
 * kcoll_transport_up and never names a function of a higher layer.
 */
#include "kcoll.h"

/* Written once at load, before any connection exists; read-only afterwards. */
const struct kcoll_conn_upcalls *kcoll_transport_up;

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
