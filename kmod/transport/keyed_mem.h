/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Regions named by a key of the module's own (keyed_mem.c): the memory operations of the
 * transports whose receiving side copies itself (loop, TCP) rather than a device that
 * checks rkeys.  A key names a region peers may write into; the receiver looks it up,
 * under kcoll_kmem_lock(), for every copy, so nothing lands in memory revoked since.
 */
#ifndef _KCOLL_TRANSPORT_KEYED_MEM_H
#define _KCOLL_TRANSPORT_KEYED_MEM_H

#include <linux/types.h>

struct kcoll_comm;
struct kcoll_conn;
struct kcoll_region;
struct kcoll_wire_seg;

/* One segment of a region: the wire's segment length is 32 bits. */
#define KCOLL_KMEM_SEG_MAX	SZ_1G

u64 kcoll_kmem_span(const struct kcoll_region *r);
void kcoll_kmem_lock(void);
void kcoll_kmem_unlock(void);
struct kcoll_region *kcoll_kmem_find(u32 key, const struct kcoll_comm *comm, u64 off, u64 len);

extern const struct kcoll_mem_ops kcoll_kmem_ops;

#endif /* _KCOLL_TRANSPORT_KEYED_MEM_H */
