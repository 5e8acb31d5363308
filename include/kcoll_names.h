/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The names of the uAPI's enums (include/uapi/linux/kcoll.h, kcoll_netlink.h), in the order
 * of their values:
 * the one list of each.  libkcoll's kcoll_*_str() (lib/names.c) and with them kcollctl,
 * kcoll-perf and kcolllat, and core/ (in the module and on the host) expand these; nothing
 * else spells the names.  Not installed.
 */
#ifndef _KCOLL_NAMES_H
#define _KCOLL_NAMES_H

/* enum kcoll_datatype */
#define KCOLL_DATATYPE_NAMES \
	"int8", "uint8", "int32", "uint32", "int64", "uint64", "fp16", "bf16", "fp32", "fp64"

/* enum kcoll_red_op */
#define KCOLL_RED_OP_NAMES	"sum", "prod", "min", "max", "avg"

/* enum kcoll_collective */
#define KCOLL_COLLECTIVE_NAMES \
	"broadcast", "scatter", "gather", "reduce", "allreduce", "allgather", "reduce_scatter", \
	"alltoall", "barrier", "allgatherv", "alltoallv", "reduce_scatterv"

/* enum kcoll_algorithm */
#define KCOLL_ALGORITHM_NAMES \
	"auto", "ring", "recdbl", "rabenseifner", "binomial", "dbtree", "chain", "pairwise", \
	"bruck", "hier"

/* KCOLL_CONFIG_TRANSPORT_* (uapi/linux/kcoll_netlink.h): the transport setting */
#define KCOLL_TRANSPORT_NAMES	"auto", "rdma", "tcp"

#endif /* _KCOLL_NAMES_H */
