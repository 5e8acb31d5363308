# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""kcoll from Python: communicators and collectives of libkcoll over ctypes.

    import kcoll.torch          # registers the torch.distributed backend "kcoll"

This module itself does not import torch.  Comm works on raw addresses (buffers the caller
keeps alive); kcoll.torch builds the process group on it.  Every failure raises KcollError
(errno, the call, and kcoll_last_error()'s reason).  See Documentation/pytorch.rst.
"""
import ctypes
import errno as _errno
import os

from ._lib import KcollError, KcollTimeout, UNIQUE_ID_BYTES, SPLIT_UNDEFINED, lib, check
from . import _lib

__all__ = ["Comm", "KcollError", "KcollTimeout", "unique_id", "UNIQUE_ID_BYTES", "SPLIT_UNDEFINED",
           "INT8", "UINT8", "INT32", "UINT32", "INT64", "UINT64", "FP16", "BF16", "FP32",
           "FP64", "SUM", "PROD", "MIN", "MAX", "AVG", "version", "LAUNCHERS", "launcher",
           "launcher_env"]

# enum kcoll_datatype and enum kcoll_red_op (include/uapi/linux/kcoll.h)
INT8, UINT8, INT32, UINT32, INT64, UINT64, FP16, BF16, FP32, FP64 = range(10)
SUM, PROD, MIN, MAX, AVG = range(5)

# timeout_ms is 32 bits in the uAPI; longer timeouts are clamped.
_MS_MAX = 0xFFFFFFFF


def version():
    return lib().kcoll_version().decode()


# Where a launcher puts rank, size and local rank, in libkcoll's order of precedence
# (lib/boot_env.c, kcoll_env_sources; the host test compares the two tables): the innermost
# launcher first, Slurm last (an sbatch script's SLURM_PROCID leaks into mpirun's processes).
LAUNCHERS = (
    ("KCOLL", "KCOLL_RANK", "KCOLL_NRANKS", "KCOLL_LOCAL_RANK"),
    ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"),
    ("Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
    ("MPICH (PMI)", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
    ("Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
)


def launcher(environ):
    """(name, rank, size, local rank or None) of the first launcher of LAUNCHERS whose rank
    or size is set in @environ (an empty value is unset, as in libkcoll), else None.
    Values are given as found: libkcoll checks them."""
    for name, rank, size, local in LAUNCHERS:
        if environ.get(rank) or environ.get(size):
            return name, environ.get(rank, ""), environ.get(size, ""), \
                environ.get(local) if local else None
    return None


def launcher_env(environ=os.environ):
    """Give torch's env:// rendezvous the rank and size of an MPI or Slurm launch.

    mpirun, mpiexec and srun start the same script as torchrun does, but torch's env://
    reads only RANK and WORLD_SIZE.  When neither is set, they (and LOCAL_RANK) are set from
    the launcher libkcoll's environment bootstrap would use (LAUNCHERS).  MASTER_ADDR
    and MASTER_PORT stay the caller's: no launcher says where rank 0 runs.  Returns the
    launcher's name, or None when nothing was set.
    """
    if environ.get("RANK") or environ.get("WORLD_SIZE"):
        return None
    found = launcher(environ)
    if found is None or found[0] == "torchrun":
        return None
    name, rank, size, local = found
    if not rank or not size:  # half a pair: libkcoll's bootstrap says what is missing
        return None
    environ["RANK"], environ["WORLD_SIZE"] = rank, size
    if local:
        environ["LOCAL_RANK"] = local
    return name


def _ms(ms):
    return max(0, min(int(ms), _MS_MAX))


def unique_id(timeout_ms=0, addr=None, port=0):
    """kcoll_get_unique_id(): draw an id and make this process its bootstrap root."""
    uid = _lib.UniqueId()
    o = _lib.opts(_lib.UidOpts, timeout_ms=_ms(timeout_ms), port=port,
                  addr=addr.encode() if addr else None)
    check("kcoll_get_unique_id", lib().kcoll_get_unique_id(ctypes.byref(uid), ctypes.byref(o)))
    return bytes(uid.internal)


def _sizes(seq):
    arr = (ctypes.c_size_t * len(seq))(*seq)
    return arr


class Comm:
    """One kcoll communicator (and the /dev/kcoll handle it lives on).

    Buffers are addresses (ints); counts are elements of dtype.  timeout_ms: blocking
    collectives give up after this long (0: no limit), point-to-point calls too (0: the
    module's op_timeout_ms); a collective's timeout_ms argument overrides it for one call.
    """

    def __init__(self, uid, nranks, rank, timeout_ms=0, bootstrap_timeout_ms=0):
        if len(uid) != UNIQUE_ID_BYTES:
            raise ValueError("kcoll: a unique id is %d bytes, not %d" %
                             (UNIQUE_ID_BYTES, len(uid)))
        L = lib()
        self._h = ctypes.c_void_p()
        self._c = None
        rc = L.kcoll_open(None, ctypes.byref(self._h))
        if rc < 0 and not L.kcoll_last_error():
            raise KcollError("kcoll_open", -rc, "cannot open /dev/kcoll: is kcoll.ko loaded?")
        check("kcoll_open", rc)
        u = _lib.UniqueId()
        ctypes.memmove(u.internal, uid, UNIQUE_ID_BYTES)
        o = _lib.opts(_lib.CommOpts, bootstrap_timeout_ms=_ms(bootstrap_timeout_ms))
        c = ctypes.c_void_p()
        try:
            check("kcoll_comm_init_rank",
                  L.kcoll_comm_init_rank(self._h, ctypes.byref(u), nranks, rank,
                                         ctypes.byref(o), ctypes.byref(c)))
        except BaseException:
            L.kcoll_close(self._h)
            self._h = None
            raise
        self._c = c
        self._users = [1]  # the communicators on handle _h: the last one closes it
        self.timeout_ms = _ms(timeout_ms)

    def split(self, color, key, timeout_ms=None, connect_timeout_ms=0):
        """kcoll_comm_split(): the child Comm of @color (>= 0), ranked by @key; None for
        SPLIT_UNDEFINED.  Collective over this communicator; no new rendezvous.  The child
        shares this one's /dev/kcoll handle (closed when the last of them is destroyed)."""
        ms = self.timeout_ms if timeout_ms is None else _ms(timeout_ms)
        o = _lib.opts(_lib.SplitOpts, timeout_ms=ms, connect_timeout_ms=_ms(connect_timeout_ms))
        c = ctypes.c_void_p()
        check("kcoll_comm_split", lib().kcoll_comm_split(self._comm(), color, key,
                                                         ctypes.byref(o), ctypes.byref(c)))
        if not c:
            return None
        child = Comm.__new__(Comm)
        child._h, child._c, child._users = self._h, c, self._users
        child._users[0] += 1
        child.timeout_ms = self.timeout_ms
        return child

    @property
    def fd(self):
        """The communicator's /dev/kcoll file: poll() reports POLLIN while a non-blocking
        request on it has completed and not been waited for (kcoll._poll uses it)."""
        if self._h is None:
            raise KcollError("communicator", 9, "already destroyed")  # EBADF
        return check("kcoll_fd", lib().kcoll_fd(self._h))

    def _comm(self):
        if self._c is None:
            raise KcollError("communicator", 9, "already destroyed")  # EBADF
        return self._c

    @property
    def rank(self):
        return lib().kcoll_comm_rank(self._comm())

    @property
    def size(self):
        return lib().kcoll_comm_size(self._comm())

    def destroy(self):
        """kcoll_comm_destroy() and close the handle; idempotent."""
        if self._c is not None:
            c, self._c = self._c, None
            lib().kcoll_comm_destroy(c)
        if self._h is not None:
            h, self._h = self._h, None
            self._users[0] -= 1
            if not self._users[0]:
                lib().kcoll_close(h)

    def abort(self):
        check("kcoll_comm_abort", lib().kcoll_comm_abort(self._comm()))

    def __del__(self):
        try:
            self.destroy()
        except Exception:
            pass

    def _copts(self, timeout_ms=None, req=None):
        ms = self.timeout_ms if timeout_ms is None else _ms(timeout_ms)
        o = _lib.opts(_lib.CollOpts, timeout_ms=ms)
        if req is not None:
            o.req = ctypes.addressof(req)
        return ctypes.byref(o)

    def _popts(self):
        return ctypes.byref(_lib.opts(_lib.P2POpts, timeout_ms=self.timeout_ms))

    # Collectives: the library's arguments, in its order.  With @req (a kcoll._lib.Request)
    # the call is non-blocking: it returns once submitted and @req is in flight (complete it
    # with wait() or test(); the buffers must stay alive and untouched until then).
    def allreduce(self, send, recv, count, dtype, op, timeout_ms=None, req=None):
        check("kcoll_allreduce", lib().kcoll_allreduce(self._comm(), send, recv, count, dtype,
                                                       op, self._copts(timeout_ms, req)))

    def reduce(self, send, recv, count, dtype, op, root, timeout_ms=None, req=None):
        check("kcoll_reduce", lib().kcoll_reduce(self._comm(), send, recv, count, dtype, op,
                                                 root, self._copts(timeout_ms, req)))

    def broadcast(self, send, recv, count, dtype, root, timeout_ms=None, req=None):
        check("kcoll_broadcast", lib().kcoll_broadcast(self._comm(), send, recv, count, dtype,
                                                       root, self._copts(timeout_ms, req)))

    def allgather(self, send, recv, count, dtype, timeout_ms=None, req=None):
        check("kcoll_allgather", lib().kcoll_allgather(self._comm(), send, recv, count, dtype,
                                                       self._copts(timeout_ms, req)))

    def gather(self, send, recv, count, dtype, root, timeout_ms=None, req=None):
        check("kcoll_gather", lib().kcoll_gather(self._comm(), send, recv, count, dtype, root,
                                                 self._copts(timeout_ms, req)))

    def scatter(self, send, recv, count, dtype, root, timeout_ms=None, req=None):
        check("kcoll_scatter", lib().kcoll_scatter(self._comm(), send, recv, count, dtype,
                                                   root, self._copts(timeout_ms, req)))

    def reduce_scatter(self, send, recv, count, dtype, op, timeout_ms=None, req=None):
        check("kcoll_reduce_scatter",
              lib().kcoll_reduce_scatter(self._comm(), send, recv, count, dtype, op,
                                         self._copts(timeout_ms, req)))

    def alltoall(self, send, recv, count, dtype, timeout_ms=None, req=None):
        check("kcoll_alltoall", lib().kcoll_alltoall(self._comm(), send, recv, count, dtype,
                                                     self._copts(timeout_ms, req)))

    def alltoallv(self, send, send_counts, send_displs, recv, recv_counts, recv_displs, dtype,
                  timeout_ms=None, req=None):
        check("kcoll_alltoallv",
              lib().kcoll_alltoallv(self._comm(), send, _sizes(send_counts),
                                    _sizes(send_displs), recv, _sizes(recv_counts),
                                    _sizes(recv_displs), dtype, self._copts(timeout_ms, req)))

    def barrier(self, timeout_ms=None, req=None):
        check("kcoll_barrier", lib().kcoll_barrier(self._comm(), self._copts(timeout_ms, req)))

    # Point-to-point: lengths in bytes.  Messages between two ranks match in posting order.
    def send(self, buf, nbytes, peer):
        check("kcoll_send", lib().kcoll_send(self._comm(), buf, nbytes, peer, self._popts()))

    def recv(self, buf, nbytes, peer):
        got = ctypes.c_size_t()
        check("kcoll_recv", lib().kcoll_recv(self._comm(), buf, nbytes, peer,
                                             ctypes.byref(got), self._popts()))
        if got.value != nbytes:
            raise KcollError("kcoll_recv", 74,  # EBADMSG
                             "received %d bytes where %d were expected" % (got.value, nbytes))
        return got.value

    # Non-blocking point-to-point: the request, then wait() (from any thread).  The buffer
    # must stay alive and untouched until wait() returned.
    def isend(self, buf, nbytes, peer):
        req = _lib.Request()
        check("kcoll_isend", lib().kcoll_isend(self._comm(), buf, nbytes, peer,
                                               self._popts(), ctypes.byref(req)))
        return req

    def irecv(self, buf, nbytes, peer):
        req = _lib.Request()
        check("kcoll_irecv", lib().kcoll_irecv(self._comm(), buf, nbytes, peer,
                                               self._popts(), ctypes.byref(req)))
        return req

    def _moved(self, got, nbytes):
        if nbytes is not None and got != nbytes:
            raise KcollError("kcoll_wait", _errno.EBADMSG,
                             "moved %d bytes where %d were expected" % (got, nbytes))
        return got

    def wait(self, req, nbytes=None, timeout_ms=None, expired_ms=None):
        """kcoll_wait() up to @timeout_ms (None: timeout_ms; 0 or negative: no limit but the
        module's); bytes moved.

        A request still in flight at the timeout aborts the communicator (its memory cannot
        be handed back while the kernel may still write it) and raises KcollTimeout (whose
        message gives @expired_ms, when set, as the request's timeout).
        """
        got = ctypes.c_size_t()
        ms = self.timeout_ms if timeout_ms is None else timeout_ms
        ms = ms if 0 < ms <= 0x7FFFFFFF else -1
        rc = lib().kcoll_wait(self._comm(), ctypes.byref(req), ms, ctypes.byref(got))
        if rc == -_errno.EAGAIN:  # still in flight after the timeout
            raise self.expire(req, expired_ms)
        check("kcoll_wait", rc)
        return self._moved(got.value, nbytes)

    def test(self, req, nbytes=None):
        """kcoll_wait() without waiting: None while in flight, else as wait()."""
        got = ctypes.c_size_t()
        rc = lib().kcoll_wait(self._comm(), ctypes.byref(req), 0, ctypes.byref(got))
        if rc == -_errno.EAGAIN:
            return None
        check("kcoll_wait", rc)
        return self._moved(got.value, nbytes)

    def expire(self, req, ms=None):
        """Abort the communicator for @req, overdue at @ms (None: timeout_ms); the
        KcollTimeout to raise."""
        try:
            self.abort()
        except KcollError:
            pass  # already failed: the request is failed with it
        return KcollTimeout("kcoll_wait", _errno.ETIMEDOUT,
                            "still in flight after %d ms; communicator aborted" %
                            (self.timeout_ms if ms is None else ms))

    # Groups: kcoll_group_start() ... kcoll_group_end() around libkcoll calls.
    def grouped(self, ops):
        """Run @ops as one libkcoll group; raise the group's one error.

        ops: ("allreduce", send, recv, count, dtype, op), ("isend", buf, nbytes, peer) or
        ("irecv", buf, nbytes, peer).  Consecutive all-reduces of one dtype and op become
        one kernel call on a packed buffer; sends and receives are posted and waited for
        before this returns.  Either everything completed or KcollError is raised (and
        nothing is left in flight).
        """
        L = lib()
        c = self._comm()
        copts = self._copts()
        popts = self._popts()
        req = _lib.Request()
        check("kcoll_group_start", L.kcoll_group_start())
        try:
            for op in ops:
                if op[0] == "allreduce":
                    L.kcoll_allreduce(c, op[1], op[2], op[3], op[4], op[5], copts)
                elif op[0] in ("isend", "irecv"):
                    fn = L.kcoll_isend if op[0] == "isend" else L.kcoll_irecv
                    fn(c, op[1], op[2], op[3], popts, ctypes.byref(req))
                else:
                    raise ValueError("kcoll: %r cannot be grouped" % (op[0],))
        except BaseException:
            # A Python error mid-group: a refused call fails the group, so that the end
            # below runs none of it (a partial group would not match the other ranks').
            L.kcoll_barrier(c, copts)
            L.kcoll_group_end()
            raise
        check("kcoll_group_end", L.kcoll_group_end())
