// SPDX-License-Identifier: GPL-2.0
/*
 * kcoll: receive dispatch of control messages by type.
 *
 * The layers that own a message type register a handler for it at module load (as net/smc
 * does with smc_wr_rx_register_handler()); a transport hands every control message it
 * receives to kcoll_rx_dispatch() and never names a protocol function.  The framing every
 * type shares (length, magic) is checked here once; each handler checks the rest of its
 * type (kcoll_wire.h).
 */
#include "kcoll.h"

/* Written only at load, before any connection exists; read-only afterwards. */
static const struct kcoll_rx_handler *kcoll_rx_handlers[KCOLL_MSG_TYPES];

/**
 * kcoll_rx_register_handler - route messages of one type to @h
 * @h:	the handler, with its type; static, it lives as long as the module
 *
 * Return: 0, -EINVAL for a type outside the protocol, -EEXIST if the type has a handler.
 * Context: module load only.
 */
int kcoll_rx_register_handler(const struct kcoll_rx_handler *h)
{
	if (!h->type || h->type >= KCOLL_MSG_TYPES || !h->handler)
		return -EINVAL;
	if (kcoll_rx_handlers[h->type])
		return -EEXIST;
	kcoll_rx_handlers[h->type] = h;
	return 0;
}

/* Register the @n handlers of @hs; all or none. */
int kcoll_rx_register_handlers(const struct kcoll_rx_handler *hs, unsigned int n)
{
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = kcoll_rx_register_handler(&hs[i]);
		if (ret) {
			while (i--)
				kcoll_rx_handlers[hs[i].type] = NULL;
			return ret;
		}
	}
	return 0;
}

/**
 * kcoll_rx_dispatch - a control message arrived on @conn
 * @conn:	the connection it came on
 * @hdr:	the message, synced for the CPU
 * @len:	its bytes
 *
 * A message shorter than the fixed part, without the magic or (unless the peer has left)
 * of a type nobody handles is refused: the caller (the layer that registered the
 * transport upcalls) fails the communicator with EPROTO.  Once the peer said BYE it
 * sends nothing more, so what was in flight is moot: only handlers marked @after_bye see it.
 *
 * Return: 0, or -EPROTO if refused.
 * Context: the connection's receive completion (process context), comm->lock not held.
 */
int kcoll_rx_dispatch(struct kcoll_conn *conn, const struct kcoll_wire_hdr *hdr, u32 len)
{
	const struct kcoll_rx_handler *h = NULL;

	if (len < KCOLL_WIRE_FIXED_SIZE || be32_to_cpu(hdr->magic) != KCOLL_WIRE_MAGIC)
		goto bad;
	if (hdr->type < KCOLL_MSG_TYPES)
		h = kcoll_rx_handlers[hdr->type];
	if (!(h && h->after_bye) && READ_ONCE(conn->peer_left))
		return 0;
	if (!h)
		goto bad;
	h->handler(conn, hdr, len);
	return 0;
bad:
	return -EPROTO;
}
