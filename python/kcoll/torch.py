# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The torch.distributed backend "kcoll", registered on import.

    import kcoll.torch
    torch.distributed.init_process_group(backend="kcoll")

Bootstrap: rank 0 of the group draws a kcoll unique id (it becomes the bootstrap root) and
puts it in the group's c10d store; the other ranks read it from there.  No port beyond the
store's and the root's own (ephemeral, or $KCOLL_BOOTSTRAP_PORT).  Under mpirun, mpiexec or
srun, the import sets RANK and WORLD_SIZE from the launcher's variables (kcoll.launcher_env()).

Collectives and send/recv (isend/irecv) are submitted non-blocking in the calling thread, in
call order, and complete in the background: ONE completion thread per process sleeps in
poll() on the communicators' files (kcoll._poll).  Python callers get a work whose wait()
raises the operation's error (KcollError: errno and kcoll_last_error()); C++ callers (DDP)
get the future's work.  all_reduce_coalesced is one libkcoll group (one kernel call for
consecutive tensors of one dtype), as is batch_isend_irecv; both complete before they return.
CPU tensors only.  See Documentation/pytorch.rst.
"""
import datetime
import errno
import functools
import inspect
import os
import sys
import threading

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import _create_work_from_future
from torch.distributed import distributed_c10d as c10d

from . import Comm, KcollError, KcollTimeout, SPLIT_UNDEFINED, UNIQUE_ID_BYTES  # noqa: F401
from . import launcher_env, unique_id
from . import _lib
from . import INT8, UINT8, INT32, UINT32, INT64, UINT64, FP16, BF16, FP32, FP64
from . import SUM, PROD, MIN, MAX, AVG
from ._lib import Request
from ._poll import poller

BACKEND = "kcoll"
STORE_KEY = "kcoll/unique_id"
# What rank 0 stores under STORE_KEY instead of an id when it cannot draw one (never
# UNIQUE_ID_BYTES long); the others show at most _FAILED_MAX bytes of it.
_FAILED = b"kcoll: failed: "
_FAILED_MAX = 512

# torch dtype -> kcoll datatype.  bool travels as uint8 (its reductions: see _op).
DTYPES = {
    torch.int8: INT8, torch.uint8: UINT8, torch.bool: UINT8,
    torch.int32: INT32, torch.int64: INT64,
    torch.float16: FP16, torch.bfloat16: BF16, torch.float32: FP32, torch.float64: FP64,
}
# Unsigned 32/64-bit tensors exist from torch 2.3 on.
for _name, _kt in (("uint32", UINT32), ("uint64", UINT64)):
    if hasattr(torch, _name):
        DTYPES[getattr(torch, _name)] = _kt
_FLOAT = (FP16, BF16, FP32, FP64)


def _dtype(t):
    if not isinstance(t, torch.Tensor):
        raise TypeError("kcoll: expected a tensor, got %s" % type(t).__name__)
    if t.device.type != "cpu":
        raise ValueError("kcoll: only CPU tensors are supported, got one on %s" % t.device)
    if t.is_sparse:
        raise ValueError("kcoll: sparse tensors are not supported")
    try:
        return DTYPES[t.dtype]
    except KeyError:
        raise TypeError("kcoll: dtype %s is not supported (supported: %s)" %
                        (t.dtype, ", ".join(sorted(str(d) for d in DTYPES)))) from None


def _op(reduce_op, t):
    """torch ReduceOp -> kcoll red_op for tensor t's dtype."""
    names = [("SUM", SUM), ("PRODUCT", PROD), ("MIN", MIN), ("MAX", MAX), ("AVG", AVG)]
    for name, op in names:
        if reduce_op == getattr(dist.ReduceOp, name):
            break
    else:
        raise ValueError("kcoll: reduce op %s is not supported (supported: SUM, PRODUCT, "
                         "MIN, MAX, AVG)" % _op_name(reduce_op))
    if t.dtype == torch.bool:
        # Logical or / and, as other backends give for bool: sum(x) != 0 and prod(x) != 0.
        if op == AVG:
            raise ValueError("kcoll: ReduceOp.AVG is not defined for bool tensors")
        op = {SUM: MAX, PROD: MIN}.get(op, op)
    elif op == AVG and DTYPES[t.dtype] not in _FLOAT:
        raise ValueError("kcoll: ReduceOp.AVG needs a floating-point tensor, not %s" % t.dtype)
    return op


def _op_name(reduce_op):
    for name in ("BAND", "BOR", "BXOR", "PREMUL_SUM"):
        if hasattr(dist.ReduceOp, name) and reduce_op == getattr(dist.ReduceOp, name):
            return "ReduceOp." + name
    return str(reduce_op)


class _Buf:
    """A contiguous view of tensor t for the library: t itself, or a copy written back."""

    def __init__(self, t, write_back=True):
        self.t = t
        self.c = t if t.is_contiguous() else t.contiguous()
        self.write_back = write_back and self.c is not t

    @property
    def ptr(self):
        return self.c.data_ptr()

    def done(self):
        if self.write_back:
            self.t.copy_(self.c)


def _flat(tensors):
    """One contiguous tensor holding tensors back to back (all of one dtype)."""
    return torch.cat([t.reshape(-1) for t in tensors])


def _unflat(flat, tensors):
    off = 0
    for t in tensors:
        n = t.numel()
        t.copy_(flat[off:off + n].view_as(t))
        off += n


def _same_dtype(tensors, what):
    dt = {t.dtype for t in tensors}
    if len(dt) > 1:
        raise TypeError("kcoll: %s: tensors of different dtypes %s" % (what, sorted(map(str, dt))))


def _done(result):
    fut = torch.futures.Future()
    fut.set_result(result)
    return _create_work_from_future(fut)


def _nothing():
    pass


def _all_done(bufs):
    for b in bufs:
        b.done()


def _all_unflat(pairs):
    for flat, tensors in pairs:
        _unflat(flat, tensors)


class _Countdown:
    """Completes @fut once @n requests ended: with the first error, else finish() and @result.

    Holds @keep (the memory the requests use) until then.  done() runs in the completion
    thread.
    """

    def __init__(self, n, fut, keep, finish, result):
        self._lock = threading.Lock()
        self._n = n
        self._exc = None
        self._fut = fut
        self._keep = keep
        self._finish = finish
        self._result = result

    def abandon(self, n, exc):
        """@n requests were never submitted (the submission raised @exc)."""
        self.done(exc, 0, n)

    def done(self, exc, got, n=1):
        with self._lock:
            if exc is not None and self._exc is None:
                self._exc = exc
            self._n -= n
            if self._n > 0:
                return
            exc = self._exc
        if exc is None:
            try:
                self._finish()
            except BaseException as e:
                exc = e
        if exc is not None:
            self._fut.set_exception(exc)
        else:
            self._fut.set_result(self._result)
        self._keep = self._finish = None


def _reraise(fut):
    return fut.wait()


class _Work(dist._Work):
    """A work whose wait() raises the operation's error, for Python callers.

    torch 1.13's work of _create_work_from_future() answers wait() with True and
    is_success() with True even when its future failed, which would lose the error of every
    dist.* call.  This one raises it.  A Python work hangs C++ callers in 1.13 (their wait()
    is the C++ base class's), so _work() gives them the future's work instead.
    """

    def __init__(self, fut, reqs=()):
        super().__init__()
        self._fut = fut
        self._cfut = None
        # [(comm, request)], added to the completion thread without waking it: the first
        # wait() completes them itself, anything else wakes the thread first (_announce).
        self._reqs = reqs

    def _announce(self):
        if self._reqs:
            self._reqs = ()
            poller().wake()

    def wait(self, timeout=None):
        # The caller blocks anyway: it waits for its requests itself (one kcoll_wait each)
        # rather than for the completion thread to hand them over (kcoll._poll).
        reqs, self._reqs = self._reqs, ()
        try:
            if not all([poller().wait_here(comm, req) for comm, req in reqs]):
                poller().wake()  # one the thread had in hand: it completes it
        except BaseException:
            poller().wake()  # interrupted: the thread completes the others
            raise
        self._fut.wait()  # raises the operation's exception
        return True

    def is_completed(self):
        self._announce()
        return self._fut.done()

    def is_success(self):
        self._announce()
        return self.exception() is None if self._fut.done() else False

    def exception(self):
        self._announce()
        if not self._fut.done():
            return None
        try:
            self._fut.wait()
        except Exception as e:
            return e
        return None

    def get_future(self):
        """The future of the output tensors.  Its error is re-raised by a then() callback
        (a RuntimeError carrying the KcollError's text): a comm hook hands this future to
        DDP's C++ reducer, which crashes on a Python exception object (see _work())."""
        self._announce()
        if self._cfut is None:
            self._cfut = self._fut.then(_reraise)
        return self._cfut

    def result(self):
        self._announce()
        return self._fut.wait()


_HERE = _nothing.__code__.co_filename


def _python_caller():
    """Whether the backend method running was called by Python code (dist.all_reduce, a
    user's pg.allreduce()), not by C++ through pybind11's trampoline (torch 1.13's DDP:
    the bucket all-reduces, the parameter check, the module-state broadcast); and the name
    of that method.

    The caller is the first frame outside this file; a Python caller names the method it
    called (co_names holds the attribute), C++'s caller called a C++ function instead (and
    an autograd thread has no Python frame at all).
    """
    f = sys._getframe(1)
    entry = None
    while f is not None and f.f_code.co_filename == _HERE:
        entry = f.f_code.co_name
        f = f.f_back
    return f is not None and entry in f.f_code.co_names, entry


def _work(fut, reqs, python, entry):
    """The work of @fut for whoever called the backend.

    Python callers get a _Work: wait() raises the error.  C++ callers (torch 1.13's DDP)
    get the future's work, which answers wait() with success whatever happened, so only an
    all-reduce stays asynchronous for them (the reducer's bucket all-reduces read the
    future, and a failed one fails backward()); any other collective C++ calls (the
    parameter check's all-gather, the bucket-order and module-state broadcasts, whose
    callers wait() and would go on with garbage) completes here and raises.  The future's
    error is re-raised by a then() callback, which torch turns into a C++
    std::runtime_error carrying the message: 1.13's DDP crashes on a future failed with a
    Python exception object (set_exception()).
    """
    if python:
        return _Work(fut, reqs)
    if entry != "allreduce":
        fut.wait()  # raises the operation's error
    return _create_work_from_future(fut.then(_reraise))


def _ms(timeout):
    """A timedelta in milliseconds; None for torch's "unset" (zero or negative)."""
    if timeout is None:
        return None
    ms = int(timeout / datetime.timedelta(milliseconds=1))
    return ms if ms > 0 else None


class ProcessGroupKcoll(dist.ProcessGroup):
    """A torch.distributed process group over one kcoll communicator."""

    def __init__(self, store, rank, size, timeout=datetime.timedelta(minutes=30), comm=None):
        super().__init__(rank, size)
        self._rank = rank
        self._size = size
        self._coalesced = None  # batch_isend_irecv's sends and receives, while it records
        ms = _ms(timeout) or 0
        if comm is not None:  # a child of kcoll_comm_split (new_group)
            if (comm.rank, comm.size) != (rank, size):
                raise RuntimeError("kcoll: new_group: the split gave rank %d of %d, torch "
                                   "expects rank %d of %d" % (comm.rank, comm.size, rank, size))
            comm.timeout_ms = ms
            self.comm = comm
            return
        # The bootstrap waits as long as the group's timeout, unless the environment says
        # otherwise (libkcoll reads KCOLL_BOOTSTRAP_TIMEOUT_MS when given 0).
        boot = 0 if os.environ.get("KCOLL_BOOTSTRAP_TIMEOUT_MS") else ms
        if rank == 0:
            try:
                uid = unique_id(timeout_ms=boot)
            except BaseException as e:
                # The others wait in store.get() for an id: tell them why there is none,
                # rather than let them wait for the whole timeout.
                why = _FAILED + str(e).encode(errors="replace")
                store.set(STORE_KEY, why + b"." * (len(why) == UNIQUE_ID_BYTES))
                raise
            store.set(STORE_KEY, uid)
        else:
            uid = bytes(store.get(STORE_KEY))
            if uid.startswith(_FAILED) and len(uid) != UNIQUE_ID_BYTES:
                raise KcollError("kcoll bootstrap", errno.ECONNABORTED,
                                 "rank 0 could not start it: %s" %
                                 uid[len(_FAILED):_FAILED_MAX].decode(errors="replace"))
        self.comm = Comm(uid, size, rank, timeout_ms=ms, bootstrap_timeout_ms=boot)

    # -- process group identity ------------------------------------------------------------

    def getBackendName(self):
        return BACKEND

    def _get_backend_name(self):
        return BACKEND

    def name(self):
        return BACKEND

    def rank(self):
        return self._rank

    def size(self):
        return self._size

    def destroy(self):
        self.comm.destroy()

    # -- collectives -----------------------------------------------------------------------
    #
    # Every collective is submitted non-blocking (kcoll's KCOLL_COLL_NONBLOCK) in the calling
    # thread, in call order, and completed by the process's completion thread (kcoll._poll),
    # which copies results back into the caller's tensors and completes the work's future.
    # dist.* without async_op waits at once; with async_op=True computation overlaps.

    def _ms_of(self, opts):
        """The op's own timeout, when it sets one, else None (the group's)."""
        return _ms(getattr(opts, "timeout", None)) if opts is not None else None

    def _submit(self, opts, calls, keep, finish, result):
        """Submit @calls non-blocking, in order; the work completes when all of them have.

        calls: [(Comm method, args)]; keep: every object whose memory the calls use (it
        stays referenced until they completed); finish(): in the completion thread once all
        succeeded, copies results into the caller's tensors; result: the future's value.
        """
        ms = self._ms_of(opts)
        python, entry = _python_caller()
        fut = torch.futures.Future()
        count = _Countdown(len(calls), fut, keep, finish, result)
        reqs = []
        for k, (fn, args) in enumerate(calls):
            req = Request()
            try:
                fn(*args, timeout_ms=ms, req=req)
            except BaseException as e:
                # Those submitted complete in the background (their memory is kept until
                # then); this caller gets the error now.
                count.abandon(len(calls) - k, e)
                if reqs:
                    poller().wake()
                raise
            # A Python caller's work completes them, or wakes the thread (_Work); C++
            # callers need the thread at once.
            poller().add(self.comm, req, None, count.done, timeout_ms=ms, wake=not python)
            reqs.append((self.comm, req))
        return _work(fut, reqs, python, entry)

    def allreduce(self, tensors, opts=None):
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        bufs, calls = [], []
        for t in tensors:  # every refusal before anything is submitted
            dt, kop = _dtype(t), _op(op, t)
            b = _Buf(t)
            bufs.append(b)
            calls.append((self.comm.allreduce, (b.ptr, b.ptr, t.numel(), dt, kop)))
        return self._submit(opts, calls, bufs, lambda: _all_done(bufs), tensors)

    def allreduce_coalesced(self, tensors, opts=None):
        """One libkcoll group: consecutive tensors of one dtype cost one kernel call."""
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        bufs, ops = [], []
        for t in tensors:  # every refusal before the group starts
            dt, kop = _dtype(t), _op(op, t)
            b = _Buf(t)
            bufs.append(b)
            ops.append(("allreduce", b.ptr, b.ptr, t.numel(), dt, kop))
        self.comm.grouped(ops)
        _all_done(bufs)
        return _done(tensors)

    def broadcast(self, tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        bufs, calls = [], []
        for t in tensors:
            dt = _dtype(t)
            b = _Buf(t, write_back=self._rank != root)
            bufs.append(b)
            calls.append((self.comm.broadcast, (b.ptr, b.ptr, t.numel(), dt, root)))
        return self._submit(opts, calls, bufs, lambda: _all_done(bufs), tensors)

    def reduce(self, tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        bufs, calls = [], []
        for t in tensors:
            dt, kop = _dtype(t), _op(op, t)
            b = _Buf(t, write_back=self._rank == root)
            bufs.append(b)
            calls.append((self.comm.reduce, (b.ptr, b.ptr, t.numel(), dt, kop, root)))
        return self._submit(opts, calls, bufs, lambda: _all_done(bufs), tensors)

    def _allgather_base(self, output, input, opts=None):
        dt = _dtype(input)
        if output.dtype != input.dtype or output.numel() != input.numel() * self._size:
            raise ValueError("kcoll: all_gather_into_tensor: output must hold %d x %d "
                             "elements of %s" % (self._size, input.numel(), input.dtype))
        i, o = _Buf(input, write_back=False), _Buf(output)
        return self._submit(opts, [(self.comm.allgather, (i.ptr, o.ptr, input.numel(), dt))],
                            (i, o), o.done, [output])

    def allgather(self, output_tensors, input_tensors, opts=None):
        calls, keep, unflat = [], [], []
        for outs, inp in zip(output_tensors, input_tensors):
            self._check_list(outs, inp, "all_gather")
            dt = _dtype(inp)
            i = _Buf(inp, write_back=False)
            flat = torch.empty(self._size * inp.numel(), dtype=inp.dtype)
            keep += [i, flat]
            unflat.append((flat, outs))
            calls.append((self.comm.allgather, (i.ptr, flat.data_ptr(), inp.numel(), dt)))
        return self._submit(opts, calls, keep, lambda: _all_unflat(unflat), output_tensors)

    def _check_list(self, lst, like, what):
        if len(lst) != self._size:
            raise ValueError("kcoll: %s: a list of %d tensors is needed, got %d" %
                             (what, self._size, len(lst)))
        for t in lst:
            if t.dtype != like.dtype or t.numel() != like.numel():
                raise ValueError("kcoll: %s: every tensor must be %d elements of %s" %
                                 (what, like.numel(), like.dtype))

    def gather(self, output_tensors, input_tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        inp = input_tensors[0]
        dt = _dtype(inp)
        i = _Buf(inp, write_back=False)
        if self._rank == root:
            outs = output_tensors[0]
            self._check_list(outs, inp, "gather")
            flat = torch.empty(self._size * inp.numel(), dtype=inp.dtype)
            call = (self.comm.gather, (i.ptr, flat.data_ptr(), inp.numel(), dt, root))
            return self._submit(opts, [call], (i, flat), lambda: _unflat(flat, outs),
                                output_tensors)
        call = (self.comm.gather, (i.ptr, None, inp.numel(), dt, root))
        return self._submit(opts, [call], (i,), _nothing, output_tensors)

    def scatter(self, output_tensors, input_tensors, opts=None):
        root = opts.rootRank if opts is not None else 0
        out = output_tensors[0]
        dt = _dtype(out)
        o = _Buf(out)
        flat = None
        if self._rank == root:
            ins = input_tensors[0]
            self._check_list(ins, out, "scatter")
            flat = _flat(ins)
        call = (self.comm.scatter, (flat.data_ptr() if flat is not None else None, o.ptr,
                                    out.numel(), dt, root))
        return self._submit(opts, [call], (o, flat), o.done, output_tensors)

    def _reduce_scatter_base(self, output, input, opts=None):
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        dt, kop = _dtype(input), _op(op, input)
        if output.dtype != input.dtype or input.numel() != output.numel() * self._size:
            raise ValueError("kcoll: reduce_scatter_tensor: input must hold %d x %d "
                             "elements of %s" % (self._size, output.numel(), output.dtype))
        i, o = _Buf(input, write_back=False), _Buf(output)
        call = (self.comm.reduce_scatter, (i.ptr, o.ptr, output.numel(), dt, kop))
        return self._submit(opts, [call], (i, o), o.done, [output])

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        op = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        calls, keep, bufs = [], [], []
        for out, ins in zip(output_tensors, input_tensors):
            self._check_list(ins, out, "reduce_scatter")
            dt, kop = _dtype(out), _op(op, out)
            flat, o = _flat(ins), _Buf(out)
            keep += [flat, o]
            bufs.append(o)
            calls.append((self.comm.reduce_scatter,
                          (flat.data_ptr(), o.ptr, out.numel(), dt, kop)))
        return self._submit(opts, calls, keep, lambda: _all_done(bufs), output_tensors)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        dt = _dtype(input)
        if output.dtype != input.dtype:
            raise TypeError("kcoll: all_to_all_single: input and output dtypes differ")
        i, o = _Buf(input, write_back=False), _Buf(output)
        if not output_split_sizes and not input_split_sizes:
            if input.numel() != output.numel() or input.numel() % self._size:
                raise ValueError("kcoll: all_to_all_single: input and output must have the "
                                 "same size, a multiple of the group size %d" % self._size)
            call = (self.comm.alltoall, (i.ptr, o.ptr, input.numel() // self._size, dt))
        else:
            sc, sd = self._splits(input, input_split_sizes, "input")
            rc, rd = self._splits(output, output_split_sizes, "output")
            call = (self.comm.alltoallv, (i.ptr, sc, sd, o.ptr, rc, rd, dt))
        return self._submit(opts, [call], (i, o), o.done, [output])

    def _splits(self, t, sizes, what):
        """Split sizes (rows of dim 0; empty: equal) -> element counts and displacements."""
        rows = t.shape[0] if t.dim() else 1
        per_row = t.numel() // rows if rows else 0
        if not sizes:
            if rows % self._size:
                raise ValueError("kcoll: all_to_all_single: %s's %d rows do not split in %d" %
                                 (what, rows, self._size))
            sizes = [rows // self._size] * self._size
        sizes = list(sizes)
        if len(sizes) != self._size or sum(sizes) != rows or min(sizes) < 0:
            raise ValueError("kcoll: all_to_all_single: %s split sizes %s do not split %d "
                             "rows in %d" % (what, sizes, rows, self._size))
        counts = [s * per_row for s in sizes]
        displs = [sum(counts[:k]) for k in range(len(counts))]
        return counts, displs

    def alltoall(self, output_tensors, input_tensors, opts=None):
        _same_dtype(list(output_tensors) + list(input_tensors), "all_to_all")
        if len(output_tensors) != self._size or len(input_tensors) != self._size:
            raise ValueError("kcoll: all_to_all: lists of %d tensors are needed" % self._size)
        dt = _dtype(input_tensors[0])
        send = _flat(input_tensors)
        recv = torch.empty(sum(t.numel() for t in output_tensors), dtype=send.dtype)
        sc = [t.numel() for t in input_tensors]
        rc = [t.numel() for t in output_tensors]
        sd = [sum(sc[:k]) for k in range(len(sc))]
        rd = [sum(rc[:k]) for k in range(len(rc))]
        call = (self.comm.alltoallv, (send.data_ptr(), sc, sd, recv.data_ptr(), rc, rd, dt))
        return self._submit(opts, [call], (send, recv), lambda: _unflat(recv, output_tensors),
                            output_tensors)

    def barrier(self, opts=None):
        return self._submit(opts, [(self.comm.barrier, ())], (), _nothing, None)

    # -- point-to-point --------------------------------------------------------------------

    def _p2p_check(self, tensors, peer, tag, what):
        if tag:
            raise ValueError("kcoll: %s: tags are not supported (tag %d); messages between "
                             "two ranks match in posting order" % (what, tag))
        if len(tensors) != 1:
            raise ValueError("kcoll: %s: exactly one tensor" % what)
        if not 0 <= peer < self._size or peer == self._rank:
            raise ValueError("kcoll: %s: peer %d is not another rank of the group" %
                             (what, peer))
        _dtype(tensors[0])

    def _p2p(self, post, tensors, peer, what):
        """Post a non-blocking send or receive; the process's completion thread completes the
        future when poll() on the communicator's file reports it done (the kernel moves the
        data meanwhile, so isend/irecv overlap with the caller).  In batch_isend_irecv it is
        recorded instead, and run with the others as one group."""
        b = _Buf(tensors[0], write_back=what == "recv")
        nbytes = b.c.numel() * b.c.element_size()
        fut = torch.futures.Future()
        if self._coalesced is not None:
            self._coalesced.append((what, b, nbytes, peer, fut, tensors))
            return _Work(fut)
        req = post(b.ptr, nbytes, peer)
        # A countdown of one: the error, or b.done()'s copy-back then the tensors.
        poller().add(self.comm, req, nbytes, _Countdown(1, fut, b, b.done, tensors).done)
        return _Work(fut)

    # batch_isend_irecv: torch brackets its isend/irecv calls with these (1.13: end gets the
    # list of works; 2.x: start and end get a device and end returns a work).
    def _start_coalescing(self, *args):
        if self._coalesced is not None:
            raise RuntimeError("kcoll: batch_isend_irecv inside batch_isend_irecv")
        self._coalesced = []

    def _end_coalescing(self, *args):
        batch, self._coalesced = self._coalesced or [], None
        ops = [("i" + what, b.ptr, nbytes, peer) for what, b, nbytes, peer, _, _ in batch]
        try:
            self.comm.grouped(ops)
            for _, b, _, _, _, _ in batch:
                b.done()
        except BaseException as e:
            for entry in batch:
                entry[4].set_exception(e)
            raise
        for entry in batch:
            entry[4].set_result(entry[5])
        return _done(None)

    def send(self, tensors, dstRank, tag=0):
        self._p2p_check(tensors, dstRank, tag, "send")
        return self._p2p(self.comm.isend, tensors, dstRank, "send")

    def recv(self, tensors, srcRank, tag=0):
        self._p2p_check(tensors, srcRank, tag, "recv")
        return self._p2p(self.comm.irecv, tensors, srcRank, "recv")

    def recv_anysource(self, tensors, tag=0):
        raise NotImplementedError("kcoll: receiving from any source is not supported")

    def monitored_barrier(self, opts=None, wait_all_ranks=False):
        return self.barrier(opts)

    def _not_supported(self, what):
        raise NotImplementedError("kcoll: %s is not supported" % what)

    def allgather_coalesced(self, *args, **kwargs):
        self._not_supported("allgather_coalesced")


# new_group(): the child communicator split off the default group for the group torch is
# about to create (None: torch creates it by a rendezvous through the store).
_split_child = None


def _create(store, rank, size, timeout):
    global _split_child
    comm, _split_child = _split_child, None
    return ProcessGroupKcoll(store, rank, size, timeout, comm=comm)


def _default_kcoll():
    """The default group's ProcessGroupKcoll, or None."""
    try:
        pg = c10d._get_default_group()
    except RuntimeError:
        return None
    if isinstance(pg, ProcessGroupKcoll):
        return pg
    try:  # torch 2.x: the backend behind the default ProcessGroup
        pg = pg._get_backend(torch.device("cpu"))
    except Exception:
        return None
    return pg if isinstance(pg, ProcessGroupKcoll) else None


def _new_group(*args, **kwargs):
    """torch's new_group, but a kcoll group on a kcoll default group is split off it
    (kcoll_comm_split: no new rendezvous) rather than bootstrapped through the store.

    Every rank calls new_group (torch requires it), members and non-members alike: that is
    the split's collective.  Members get color 0 ranked by global rank, which is torch's
    group rank order (it sorts the ranks); the others KCOLL_SPLIT_UNDEFINED.
    """
    global _split_child
    bound = _new_group_sig.bind(*args, **kwargs)
    ranks, backend = bound.arguments.get("ranks"), bound.arguments.get("backend")
    parent = _default_kcoll()
    if (parent is None or not _lib.has("kcoll_comm_split") or
            (backend and dist.Backend(backend) != BACKEND)):
        return _torch_new_group(*args, **kwargs)
    me = parent.rank()
    members = range(parent.size()) if ranks is None else set(ranks)
    timeout = bound.arguments.get("timeout")
    color = 0 if me in members else SPLIT_UNDEFINED
    _split_child = parent.comm.split(color, me, timeout_ms=_ms(timeout))
    try:
        return _torch_new_group(*args, **kwargs)
    finally:
        child, _split_child = _split_child, None
        if child is not None:  # torch never called the creator
            child.destroy()


_torch_new_group = c10d.new_group
_new_group_sig = inspect.signature(_torch_new_group)


def register():
    """Register the backend and new_group's split; done on import, idempotent."""
    if not hasattr(dist.Backend, BACKEND.upper()):
        dist.Backend.register_backend(BACKEND, _create)
    if c10d.new_group is _torch_new_group:
        functools.update_wrapper(_new_group, _torch_new_group)
        c10d.new_group = dist.new_group = _new_group


register()
launcher_env()
