// SPDX-License-Identifier: GPL-2.0-only
/*
 * Stand-ins for the collective entry points of libkcoll (KCOLL_0.3) that the library kcoll-perf
 * is linked against does not define yet.  The Makefile looks at libkcoll.a and defines
 * KCOLL_PERF_STUB_<name> for each missing one; each stub fails with -ENOSYS, which kcoll-perf
 * reports as "not in this libkcoll".  Against a complete library nothing here is compiled but
 * kcoll_perf_nstubs = 0.
 */
#include <errno.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"

#include <libkcoll.h>

#define STUB_FAIL	do { errno = ENOSYS; return -ENOSYS; } while (0)

const int kcoll_perf_nstubs = 0
#ifdef KCOLL_PERF_STUB_kcoll_broadcast
	+ 1
#endif
#ifdef KCOLL_PERF_STUB_kcoll_scatter
	+ 1
#endif
#ifdef KCOLL_PERF_STUB_kcoll_gather
	+ 1
#endif
#ifdef KCOLL_PERF_STUB_kcoll_reduce
	+ 1
#endif
#ifdef KCOLL_PERF_STUB_kcoll_allreduce
	+ 1
#endif
#ifdef KCOLL_PERF_STUB_kcoll_allgather
	+ 1
#endif
#ifdef KCOLL_PERF_STUB_kcoll_reduce_scatter
	+ 1
#endif
#ifdef KCOLL_PERF_STUB_kcoll_alltoall
	+ 1
#endif
#ifdef KCOLL_PERF_STUB_kcoll_barrier
	+ 1
#endif
#ifdef KCOLL_PERF_STUB_kcoll_allgatherv
	+ 1
#endif
#ifdef KCOLL_PERF_STUB_kcoll_reduce_scatterv
	+ 1
#endif
#ifdef KCOLL_PERF_STUB_kcoll_alltoallv
	+ 1
#endif
	;

#ifdef KCOLL_PERF_STUB_kcoll_broadcast
int kcoll_broadcast(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		    int dtype, int root, const struct kcoll_coll_opts *opts)
{
	STUB_FAIL;
}
#endif

#ifdef KCOLL_PERF_STUB_kcoll_scatter
int kcoll_scatter(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		  int dtype, int root, const struct kcoll_coll_opts *opts)
{
	STUB_FAIL;
}
#endif

#ifdef KCOLL_PERF_STUB_kcoll_gather
int kcoll_gather(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		 int dtype, int root, const struct kcoll_coll_opts *opts)
{
	STUB_FAIL;
}
#endif

#ifdef KCOLL_PERF_STUB_kcoll_reduce
int kcoll_reduce(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		 int dtype, int op, int root, const struct kcoll_coll_opts *opts)
{
	STUB_FAIL;
}
#endif

#ifdef KCOLL_PERF_STUB_kcoll_allreduce
int kcoll_allreduce(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		    int dtype, int op, const struct kcoll_coll_opts *opts)
{
	STUB_FAIL;
}
#endif

#ifdef KCOLL_PERF_STUB_kcoll_allgather
int kcoll_allgather(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		    int dtype, const struct kcoll_coll_opts *opts)
{
	STUB_FAIL;
}
#endif

#ifdef KCOLL_PERF_STUB_kcoll_reduce_scatter
int kcoll_reduce_scatter(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
			 size_t count, int dtype, int op, const struct kcoll_coll_opts *opts)
{
	STUB_FAIL;
}
#endif

#ifdef KCOLL_PERF_STUB_kcoll_alltoall
int kcoll_alltoall(struct kcoll_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		   int dtype, const struct kcoll_coll_opts *opts)
{
	STUB_FAIL;
}
#endif

#ifdef KCOLL_PERF_STUB_kcoll_barrier
int kcoll_barrier(struct kcoll_comm *c, const struct kcoll_coll_opts *opts)
{
	STUB_FAIL;
}
#endif

#ifdef KCOLL_PERF_STUB_kcoll_allgatherv
int kcoll_allgatherv(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
		     const size_t *counts, const size_t *displs, int dtype,
		     const struct kcoll_coll_opts *opts)
{
	STUB_FAIL;
}
#endif

#ifdef KCOLL_PERF_STUB_kcoll_reduce_scatterv
int kcoll_reduce_scatterv(struct kcoll_comm *c, const void *sendbuf, void *recvbuf,
			  const size_t *counts, const size_t *displs, int dtype, int op,
			  const struct kcoll_coll_opts *opts)
{
	STUB_FAIL;
}
#endif

#ifdef KCOLL_PERF_STUB_kcoll_alltoallv
int kcoll_alltoallv(struct kcoll_comm *c, const void *sendbuf, const size_t *send_counts,
		    const size_t *send_displs, void *recvbuf, const size_t *recv_counts,
		    const size_t *recv_displs, int dtype, const struct kcoll_coll_opts *opts)
{
	STUB_FAIL;
}
#endif
