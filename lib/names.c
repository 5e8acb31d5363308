// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libkcoll's names of the uAPI's enums: datatypes, reduction operations, collectives and
 * algorithms and the transport setting ("fp32", "sum", "allreduce", "ring", "tcp"), from
 * include/kcoll_names.h.  kcollctl, kcoll-perf and kcolllat print and parse with
 * kcoll_*_str() and kcoll_*_from_str() too.
 */
#include <errno.h>
#include <string.h>

#include "libkcoll_internal.h"
#include "../include/kcoll_names.h"

static const char *const kcoll_dtype_names[] = { KCOLL_DATATYPE_NAMES };
static const char *const kcoll_op_names[] = { KCOLL_RED_OP_NAMES };
static const char *const kcoll_coll_names[] = { KCOLL_COLLECTIVE_NAMES };
static const char *const kcoll_algo_names[] = { KCOLL_ALGORITHM_NAMES };
static const char *const kcoll_transport_names[] = { KCOLL_TRANSPORT_NAMES };
static const unsigned char kcoll_dtype_sizes[KCOLL_NUM_DATATYPES] = {
	1, 1, 4, 4, 8, 8, 2, 2, 4, 8,
};

#define KCOLL_NAMES_CHECK(table, n) \
	_Static_assert(sizeof(table) / sizeof(table[0]) == (n), #table " has a name per value")
KCOLL_NAMES_CHECK(kcoll_dtype_names, KCOLL_NUM_DATATYPES);
KCOLL_NAMES_CHECK(kcoll_op_names, KCOLL_NUM_RED_OPS);
KCOLL_NAMES_CHECK(kcoll_coll_names, KCOLL_NUM_COLLECTIVES);
KCOLL_NAMES_CHECK(kcoll_algo_names, KCOLL_NUM_ALGORITHMS);
KCOLL_NAMES_CHECK(kcoll_transport_names, KCOLL_CONFIG_TRANSPORT_TCP + 1);

#define KCOLL_NAME_FNS(fn, table)						\
const char *kcoll_##fn##_str(int v)						\
{										\
	return v >= 0 && (size_t)v < sizeof(table) / sizeof(table[0]) ? table[v] : NULL; \
}										\
int kcoll_##fn##_from_str(const char *name)					\
{										\
	size_t i;								\
										\
	for (i = 0; name && i < sizeof(table) / sizeof(table[0]); i++)		\
		if (!strcmp(name, table[i]))					\
			return (int)i;						\
	return kcoll_err(-EINVAL);						\
}

KCOLL_NAME_FNS(datatype, kcoll_dtype_names)
KCOLL_NAME_FNS(red_op, kcoll_op_names)
KCOLL_NAME_FNS(collective, kcoll_coll_names)
KCOLL_NAME_FNS(algorithm, kcoll_algo_names)
KCOLL_NAME_FNS(transport, kcoll_transport_names)

size_t kcoll_datatype_size(int dtype)
{
	return dtype >= 0 && dtype < KCOLL_NUM_DATATYPES ? kcoll_dtype_sizes[dtype] : 0;
}
