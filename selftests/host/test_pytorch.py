#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The Python package (python/kcoll/) and its PyTorch backend against a mock libkcoll.

The mock (mock_libkcoll_py.c, built next to this script as libkcoll_mock_py.so) plays rank R
of N where every rank holds the same data; it records each call's arguments and can fail the
next call on demand.  Cases that need torch SKIP when /usr/bin/python3 has none
(apt-get install python3-torch).  Output: TAP.
"""
import ctypes
import datetime
import errno
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
MOCK = os.path.join(HERE, "libkcoll_mock_py.so")
os.environ["KCOLL_LIB"] = MOCK
sys.path.insert(0, os.path.join(TOP, "python"))

import kcoll  # noqa: E402
from kcoll import _lib  # noqa: E402

try:
    import torch
    import torch.distributed as dist
    import kcoll.torch as kt
    C10 = torch._C._distributed_c10d
    NO_TORCH = None
except ImportError as e:
    NO_TORCH = "no torch in %s (apt-get install python3-torch): %s" % (sys.executable, e)


class Call(ctypes.Structure):
    _fields_ = [("fn", ctypes.c_char * 32), ("count", ctypes.c_uint64),
                ("dtype", ctypes.c_int), ("op", ctypes.c_int), ("root", ctypes.c_int),
                ("peer", ctypes.c_int), ("timeout_ms", ctypes.c_uint),
                ("nranks", ctypes.c_int), ("rank", ctypes.c_int),
                ("bootstrap_timeout_ms", ctypes.c_uint),
                ("uid", ctypes.c_ubyte * kcoll.UNIQUE_ID_BYTES),
                ("counts", ctypes.c_uint64 * 8), ("displs", ctypes.c_uint64 * 8),
                ("rcounts", ctypes.c_uint64 * 8), ("rdispls", ctypes.c_uint64 * 8)]


M = _lib.lib()
M.kcoll_mock_last.restype = ctypes.POINTER(Call)
M.kcoll_mock_last_post.restype = ctypes.POINTER(Call)
M.kcoll_mock_fail.argtypes = [ctypes.c_int, ctypes.c_char_p]
M.kcoll_mock_sizeof.argtypes = [ctypes.c_char_p]
M.kcoll_mock_sizeof.restype = ctypes.c_size_t
M.kcoll_mock_uid_timeout.restype = ctypes.c_uint


class Groups(ctypes.Structure):
    _fields_ = [("runs", ctypes.c_int), ("ops", ctypes.c_int), ("depth", ctypes.c_int),
                ("cur_ops", ctypes.c_int)]


M.kcoll_mock_groups.restype = ctypes.POINTER(Groups)
M.kcoll_mock_fail_group_end.argtypes = [ctypes.c_int]
M.kcoll_mock_fail_wait.argtypes = [ctypes.c_int, ctypes.c_char_p]
M.kcoll_mock_hold.argtypes = [ctypes.c_int]
M.kcoll_mock_split.argtypes = [ctypes.c_int, ctypes.c_int]


def groups():
    g = M.kcoll_mock_groups().contents
    return (g.runs, g.ops, g.depth)


def last():
    return M.kcoll_mock_last().contents


def last_post():
    return M.kcoll_mock_last_post().contents


def fail_next(err, msg):
    M.kcoll_mock_fail(err, msg.encode())


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


def raises(exc, fn, *args, match=None):
    try:
        fn(*args)
    except exc as e:
        if match and match not in str(e):
            raise AssertionError("%s raised %r, without %r" % (exc.__name__, str(e), match))
        return e
    raise AssertionError("%s not raised" % exc.__name__)


def comm(nranks=1, rank=0, timeout_ms=0):
    return kcoll.Comm(b"u" * kcoll.UNIQUE_ID_BYTES, nranks, rank, timeout_ms=timeout_ms)


def pg(nranks=1, rank=0, timeout=datetime.timedelta(seconds=60)):
    store = dist.HashStore()
    if rank != 0:
        store.set(kt.STORE_KEY, b"x" * kcoll.UNIQUE_ID_BYTES)
    return kt.ProcessGroupKcoll(store, rank, nranks, timeout)


def registered(g):
    """@g known to torch.distributed as new_group() records it (for dist.broadcast's root)."""
    from torch.distributed import distributed_c10d as c10d
    c10d._pg_group_ranks[g] = {k: k for k in range(g.size())}
    return g


# -- the ctypes layer (no torch) ------------------------------------------------------------

def test_struct_layout():
    for name, cls in (("uid_opts", _lib.UidOpts), ("comm_opts", _lib.CommOpts),
                      ("coll_opts", _lib.CollOpts), ("p2p_opts", _lib.P2POpts),
                      ("unique_id", _lib.UniqueId)):
        c = M.kcoll_mock_sizeof(name.encode())
        expect(c == ctypes.sizeof(cls), "%s: C %d, ctypes %d" % (name, c, ctypes.sizeof(cls)))


def test_comm_init_passes_id_rank_timeouts():
    uid = bytes(range(128))
    c = kcoll.Comm(uid, 4, 3, timeout_ms=1234, bootstrap_timeout_ms=5678)
    L = last()
    expect(L.fn == b"comm_init_rank", L.fn)
    expect(bytes(L.uid) == uid, "id bytes")
    expect((L.nranks, L.rank, L.bootstrap_timeout_ms) == (4, 3, 5678),
           (L.nranks, L.rank, L.bootstrap_timeout_ms))
    expect((c.rank, c.size) == (3, 4), (c.rank, c.size))
    c.barrier()
    expect(last().timeout_ms == 1234, last().timeout_ms)
    c.destroy()
    c.destroy()
    raises(kcoll.KcollError, c.barrier, match="destroyed")


def test_error_carries_errno_and_last_error():
    c = comm()
    fail_next(errno.ECONNRESET, "rank 1 left the communicator")
    e = raises(kcoll.KcollError, c.barrier)
    expect(e.errno == errno.ECONNRESET and e.call == "kcoll_barrier", (e.errno, e.call))
    expect("rank 1 left the communicator" in str(e) and "ECONNRESET" in str(e), str(e))
    fail_next(errno.ETIMEDOUT, "op timed out")
    e = raises(kcoll.KcollTimeout, c.barrier)
    expect(isinstance(e, TimeoutError) and isinstance(e, kcoll.KcollError), type(e))
    c.barrier()


def test_init_failure_raises_and_closes():
    fail_next(errno.ETIMEDOUT, "ranks 1 of 2 never joined")
    raises(kcoll.KcollTimeout, kcoll.Comm, b"u" * 128, 2, 0, match="ranks 1 of 2 never joined")
    raises(ValueError, kcoll.Comm, b"short", 2, 0)


def test_unique_id():
    uid = kcoll.unique_id(timeout_ms=777)
    expect(len(uid) == 128 and uid.startswith(b"mock-uid-"), uid[:16])
    expect(M.kcoll_mock_uid_timeout() == 777, M.kcoll_mock_uid_timeout())
    fail_next(errno.EADDRINUSE, "port 29600 busy")
    raises(kcoll.KcollError, kcoll.unique_id, match="port 29600 busy")


def test_missing_library_is_a_clear_error():
    saved, env = _lib._lib, os.environ["KCOLL_LIB"]
    try:
        _lib._lib = None
        os.environ["KCOLL_LIB"] = "/nonexistent/libkcoll.so.0"
        raises(ImportError, _lib.lib, match="KCOLL_LIB")
    finally:
        _lib._lib, os.environ["KCOLL_LIB"] = saved, env


def test_open_failure_names_the_module():
    fail_next(errno.ENOENT, "")
    raises(kcoll.KcollError, comm, match="is kcoll.ko loaded?")


def test_make_install_finds_its_library():
    import shutil
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        libdir, pydir = os.path.join(d, "lib"), os.path.join(d, "py")
        os.mkdir(libdir)
        shutil.copy(MOCK, os.path.join(libdir, "libkcoll.so.0"))
        subprocess.run(["make", "-s", "-C", os.path.join(TOP, "python"), "install",
                        "LIBDIR=" + libdir, "PYTHONDIR=" + pydir], check=True,
                       stdout=subprocess.DEVNULL)
        src = {f for f in os.listdir(os.path.join(TOP, "python", "kcoll")) if f.endswith(".py")}
        missing = src - set(os.listdir(os.path.join(pydir, "kcoll")))
        expect(not missing, "make install leaves out %s" % sorted(missing))
        env = dict(os.environ, PYTHONPATH=pydir, PYTHONDONTWRITEBYTECODE="1")
        del env["KCOLL_LIB"]
        out = subprocess.run([sys.executable, "-c", "import kcoll; print(kcoll.version())"],
                             env=env, cwd=d, capture_output=True, text=True)
        expect(out.returncode == 0 and out.stdout == "mock\n", (out.stdout, out.stderr))


def test_grouped_is_one_group():
    c = comm(nranks=2)
    a = (ctypes.c_float * 3)(1, 2, 3)
    b = (ctypes.c_int32 * 2)(5, 6)
    out = (ctypes.c_ubyte * 4)(1, 2, 3, 4)
    into = (ctypes.c_ubyte * 4)()
    runs = groups()[0]
    c.grouped([("allreduce", ctypes.addressof(a), ctypes.addressof(a), 3, kcoll.FP32, kcoll.SUM),
               ("isend", ctypes.addressof(out), 4, 1),
               ("allreduce", ctypes.addressof(b), ctypes.addressof(b), 2, kcoll.INT32,
                kcoll.MAX),
               ("irecv", ctypes.addressof(into), 4, 1)])
    expect(groups() == (runs + 1, 4, 0), groups())
    expect(list(a) == [2, 4, 6] and list(b) == [5, 6] and list(into) == [1, 2, 3, 4],
           (list(a), list(b), list(into)))
    # one error for the group, with the library's reason
    M.kcoll_mock_fail_group_end(errno.ECONNRESET)
    e = raises(kcoll.KcollError, c.grouped, [("allreduce", ctypes.addressof(a),
                                              ctypes.addressof(a), 3, kcoll.FP32, kcoll.SUM)])
    expect(e.errno == errno.ECONNRESET and e.call == "kcoll_group_end", str(e))
    # a Python error while recording: the group is failed and ended, and nothing is left open
    raises(ValueError, c.grouped, [("allreduce", ctypes.addressof(a), ctypes.addressof(a), 3,
                                    kcoll.FP32, kcoll.SUM), ("bcast",)], match="cannot be grouped")
    expect(groups()[2] == 0, "group left open")
    expect(last().fn == b"group_end", last().fn)


def test_completion_thread_blocks_in_poll():
    """Many receives in flight: one completion thread, asleep in poll(), not spinning."""
    import threading
    import time
    from kcoll import _poll
    c = comm(nranks=2)
    bufs = [(ctypes.c_ubyte * 8)() for _ in range(5)]
    results = []
    done = threading.Event()

    def cb(exc, got):
        results.append((exc, got))
        if len(results) == len(bufs):
            done.set()

    p = _poll.Poller()
    for buf in bufs:
        p.add(c, c.irecv(ctypes.addressof(buf), 8, 1), 8, cb)
    expect(len(p.threads()) == 1, p.threads())
    t0 = time.thread_time(), time.process_time()
    time.sleep(0.5)
    busy = time.process_time() - t0[1]
    expect(busy < 0.2, "the completion thread used %.2f s of CPU in 0.5 s" % busy)
    expect(not results, results)
    for k in range(len(bufs)):
        msg = (ctypes.c_ubyte * 8)(*([k] * 8))
        c.send(ctypes.addressof(msg), 8, 1)
    expect(done.wait(10), "receives not completed: %r" % results)
    expect(all(exc is None and got == 8 for exc, got in results), results)
    expect([b[0] for b in bufs] == [0, 1, 2, 3, 4], [b[0] for b in bufs])
    expect(len(p.threads()) == 1 and p.threads()[0].is_alive(), "one thread, still serving")


def test_timeout_clamped_to_32_bits():
    c = comm(timeout_ms=10 ** 12)
    c.barrier()
    expect(last().timeout_ms == 0xFFFFFFFF, last().timeout_ms)


# -- the PyTorch backend ----------------------------------------------------------------------

def needs_torch(fn):
    fn.needs_torch = True
    return fn


@needs_torch
def test_dtype_mapping():
    g = pg()
    table = [(torch.int8, kcoll.INT8), (torch.uint8, kcoll.UINT8), (torch.bool, kcoll.UINT8),
             (torch.int32, kcoll.INT32), (torch.int64, kcoll.INT64),
             (torch.float16, kcoll.FP16), (torch.bfloat16, kcoll.BF16),
             (torch.float32, kcoll.FP32), (torch.float64, kcoll.FP64)]
    for dt, code in table:
        t = torch.ones(3, dtype=dt)
        dist.all_reduce(t, dist.ReduceOp.MAX, group=g)
        expect(last().dtype == code and last().count == 3, (dt, last().dtype, last().count))
    for dt in (torch.int16, torch.complex64):
        raises(TypeError, g.allreduce, [torch.ones(2, dtype=dt)], dist.AllreduceOptions(),
               match="dtype %s is not supported" % dt)


@needs_torch
def test_op_mapping_and_refusals():
    g = pg(nranks=3)
    for op, code, want in ((dist.ReduceOp.SUM, kcoll.SUM, 6.0),
                           (dist.ReduceOp.PRODUCT, kcoll.PROD, 8.0),
                           (dist.ReduceOp.MIN, kcoll.MIN, 2.0),
                           (dist.ReduceOp.MAX, kcoll.MAX, 2.0),
                           (dist.ReduceOp.AVG, kcoll.AVG, 2.0)):
        t = torch.full((4,), 2.0)
        dist.all_reduce(t, op, group=g)
        expect(last().op == code, (op, last().op))
        expect(torch.equal(t, torch.full((4,), want)), (op, t))
    for op in ("BAND", "BOR", "BXOR"):
        raises(ValueError, dist.all_reduce, torch.ones(2, dtype=torch.int32),
               getattr(dist.ReduceOp, op), g, match="ReduceOp." + op)
    raises(ValueError, dist.all_reduce, torch.ones(2, dtype=torch.int32), dist.ReduceOp.AVG, g,
           match="floating-point")
    if hasattr(dist, "_make_nccl_premul_sum"):
        op = dist._make_nccl_premul_sum(2.0)
        raises(ValueError, dist.all_reduce, torch.ones(2), op, g, match="not supported")
    # bool: logical or / and, never a sum that wraps
    t = torch.tensor([True, False])
    dist.all_reduce(t, dist.ReduceOp.SUM, group=g)
    expect(last().op == kcoll.MAX and t.tolist() == [True, False], (last().op, t))
    dist.all_reduce(t, dist.ReduceOp.PRODUCT, group=g)
    expect(last().op == kcoll.MIN, last().op)


@needs_torch
def test_non_contiguous_and_cuda_refusal():
    g = pg(nranks=2)
    m = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    col = m[:, 1]
    expect(not col.is_contiguous(), "column view")
    dist.all_reduce(col, group=g)
    expect(m[:, 1].tolist() == [2.0, 10.0, 18.0] and m[:, 0].tolist() == [0.0, 4.0, 8.0],
           m)
    meta = torch.ones(2, device="meta")
    raises(ValueError, g.allreduce, [meta], dist.AllreduceOptions(), match="CPU tensors")


@needs_torch
def test_gathers_and_scatters_layout():
    g = pg(nranks=3, rank=1)
    x = torch.tensor([1, 2], dtype=torch.int64)
    outs = [torch.zeros(2, dtype=torch.int64) for _ in range(3)]
    dist.all_gather(outs, x, group=g)
    expect(all(o.tolist() == [1, 2] for o in outs) and last().fn == b"allgather", outs)
    out = torch.zeros(6, dtype=torch.int64)
    g._allgather_base(out, x, C10.AllgatherOptions()).wait()
    expect(out.tolist() == [1, 2] * 3, out)
    raises(ValueError, g._allgather_base, torch.zeros(5, dtype=torch.int64), x,
           C10.AllgatherOptions())
    # gather and scatter at a non-root: no buffer on the root's side
    g.gather([], [x], dist.GatherOptions()).wait()
    expect(last().fn == b"gather" and last().root == 0 and last().count == 2, last().fn)
    o = torch.zeros(2, dtype=torch.int64)
    g.scatter([o], [], dist.ScatterOptions()).wait()
    expect(last().fn == b"scatter" and last().root == 0 and last().count == 2, last().fn)
    # reduce_scatter: rank 1 gets block 1 summed over 3 ranks
    o = torch.zeros(2)
    dist.reduce_scatter(o, [torch.tensor([1.0, 1.0]), torch.tensor([2.0, 3.0]),
                            torch.tensor([9.0, 9.0])], group=g)
    expect(o.tolist() == [6.0, 9.0] and last().count == 2, o)
    o = torch.zeros(2)
    g._reduce_scatter_base(o, torch.arange(6, dtype=torch.float32),
                           dist.ReduceScatterOptions()).wait()
    expect(o.tolist() == [6.0, 9.0], o)


@needs_torch
def test_gather_scatter_at_root():
    g = pg(nranks=2, rank=0)
    # dist.gather/scatter/reduce/send need a default group: call the group itself
    outs = [torch.zeros(3) for _ in range(2)]
    g.gather([outs], [torch.tensor([1.0, 2.0, 3.0])], dist.GatherOptions()).wait()
    expect(all(o.tolist() == [1.0, 2.0, 3.0] for o in outs), outs)
    o = torch.zeros(1)
    g.scatter([o], [[torch.tensor([5.0]), torch.tensor([6.0])]], dist.ScatterOptions()).wait()
    expect(o.tolist() == [5.0] and last().fn == b"scatter", o)
    raises(ValueError, g.scatter, [o], [[torch.tensor([5.0])]], dist.ScatterOptions(),
           match="a list of 2 tensors")
    t = torch.tensor([4.0])
    g.broadcast([t], dist.BroadcastOptions()).wait()
    expect(last().fn == b"broadcast" and last().root == 0 and t.tolist() == [4.0], t)
    g.reduce([t], dist.ReduceOptions()).wait()
    expect(last().fn == b"reduce" and t.tolist() == [8.0], t)


@needs_torch
def test_alltoall_split_sizes():
    g = pg(nranks=2, rank=0)
    inp = torch.arange(8, dtype=torch.float32)
    out = torch.zeros(8)
    dist.all_to_all_single(out, inp, group=g)
    expect(last().fn == b"alltoall" and last().count == 4, (last().fn, last().count))
    expect(out.tolist() == [0, 1, 2, 3, 0, 1, 2, 3], out)
    # rows of 2 elements; rank 0 sends 1 row to itself and 3 to rank 1, gets 1 row from each
    inp = torch.arange(8, dtype=torch.float32).reshape(4, 2)
    out = torch.zeros(2, 2)
    dist.all_to_all_single(out, inp, output_split_sizes=[1, 1], input_split_sizes=[1, 3],
                           group=g)
    L = last()
    expect(L.fn == b"alltoallv", L.fn)
    expect(list(L.counts[:2]) == [2, 6] and list(L.displs[:2]) == [0, 2], list(L.counts[:2]))
    expect(list(L.rcounts[:2]) == [2, 2] and list(L.rdispls[:2]) == [0, 2],
           list(L.rcounts[:2]))
    expect(out.tolist() == [[0, 1], [0, 1]], out)
    raises(ValueError, g.alltoall_base, out, inp, [1, 1], [1, 2], dist.AllToAllOptions(),
           match="split sizes")
    outs = [torch.zeros(1), torch.zeros(1)]
    dist.all_to_all(outs, [torch.tensor([5.0]), torch.tensor([6.0])], group=g)
    expect([o.item() for o in outs] == [5.0, 5.0], outs)


@needs_torch
def test_send_recv_and_tags():
    g = pg(nranks=2, rank=0)
    g.send([torch.tensor([1.5, 2.5])], 1, 0).wait()
    P = last_post()
    expect(P.fn == b"isend" and P.peer == 1 and P.count == 8, (P.fn, P.peer, P.count))
    t = torch.zeros(2)
    g.recv([t], 1, 0).wait()
    expect(last_post().fn == b"irecv" and t.tolist() == [1.5, 2.5], t)
    m = torch.arange(4, dtype=torch.float32).reshape(2, 2)
    g.send([m[:, 0]], 1, 0).wait()
    t = torch.zeros(2, 2)
    g.recv([t[:, 1]], 1, 0).wait()
    expect(t.tolist() == [[0, 0], [0, 2]], t)
    # a receive posted before its send completes once the send came: irecv does not block
    t = torch.zeros(3)
    w = g.recv([t], 1, 0)
    expect(not w.is_completed(), "irecv completed before any send")
    g.send([torch.tensor([7.0, 8.0, 9.0])], 1, 0).wait()
    w.wait()
    expect(t.tolist() == [7.0, 8.0, 9.0], t)
    raises(ValueError, g.send, [torch.ones(1)], 1, 7, match="tags are not supported")
    raises(ValueError, g.send, [torch.ones(1)], 0, 0, match="not another rank")
    raises(NotImplementedError, g.recv_anysource, [torch.ones(1)], 0)
    fail_next(errno.ECONNRESET, "rank 1 left")
    raises(kcoll.KcollError, g.send, [torch.ones(1)], 1, 0, match="rank 1 left")


@needs_torch
def test_allreduce_coalesced_is_one_group():
    g = pg(nranks=2)
    m = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    ts = [torch.ones(3), torch.arange(4, dtype=torch.int32), m[:, 1], torch.tensor([2.0])]
    runs = groups()[0]
    g.allreduce_coalesced(ts).wait()
    expect(groups() == (runs + 1, 4, 0), groups())
    expect(ts[0].tolist() == [2, 2, 2] and ts[1].tolist() == [0, 2, 4, 6], ts)
    expect(m.tolist() == [[0, 2, 2], [3, 8, 5]] and ts[3].item() == 4.0, m)
    # torch's own entry point (1.13 and 2.x) reaches the same group
    opts = dist.AllreduceCoalescedOptions()
    opts.reduceOp = dist.ReduceOp.MAX
    ts = [torch.ones(2), torch.ones(1)]
    g.allreduce_coalesced(ts, opts).wait()
    expect(groups() == (runs + 2, 2, 0), groups())
    expect(ts[0].tolist() == [1, 1] and ts[1].item() == 1, ("MAX of ones", ts))
    raises(TypeError, g.allreduce_coalesced, [torch.ones(1), torch.ones(1, dtype=torch.int16)],
           match="not supported")
    expect(groups()[0] == runs + 2, "a refused tensor must not start a group")
    M.kcoll_mock_fail_group_end(errno.ECONNRESET)
    raises(kcoll.KcollError, g.allreduce_coalesced, [torch.ones(1)], match="group failed")


@needs_torch
def test_batch_isend_irecv_is_one_group():
    from torch.distributed import distributed_c10d as c10d
    g = pg(nranks=2, rank=0)
    c10d._pg_group_ranks[g] = {0: 0, 1: 1}  # what new_group() records, for dist.isend
    try:
        src = torch.tensor([1.0, 2.0, 3.0])
        dst = torch.zeros(3)
        runs = groups()[0]
        works = dist.batch_isend_irecv([dist.P2POp(dist.isend, src, 1, g),
                                        dist.P2POp(dist.irecv, dst, 1, g)])
        expect(groups() == (runs + 1, 2, 0), groups())
        for w in works:
            w.wait()
        expect(dst.tolist() == [1.0, 2.0, 3.0], dst)
        # the group fails: every work of the batch carries the error
        reqs = []
        with c10d._coalescing_manager(g, reqs):
            reqs.append(g.send([src], 1, 0))
            reqs.append(g.recv([dst], 1, 0))
            M.kcoll_mock_fail_group_end(errno.ECONNRESET)
            expect(not reqs[0].is_completed(), "recorded, not run")
    except kcoll.KcollError as e:
        expect(e.errno == errno.ECONNRESET, str(e))
        expect(all(not w.is_success() for w in reqs), "works of a failed group")
        raises(kcoll.KcollError, reqs[1].wait)
    else:
        raise AssertionError("a failed batch raised nothing")
    finally:
        del c10d._pg_group_ranks[g]


@needs_torch
def test_irecvs_share_one_completion_thread():
    import threading
    g = pg(nranks=2)
    before = {t for t in threading.enumerate() if t.name.startswith("kcoll")}
    ts = [torch.zeros(2) for _ in range(6)]
    works = [g.recv([t], 1, 0) for t in ts]
    mine = {t for t in threading.enumerate() if t.name.startswith("kcoll")} - before
    expect(len(mine) <= 1, "%d threads for 6 receives" % len(mine))
    expect(not any(w.is_completed() for w in works), "completed before any send")
    for k in range(6):
        g.send([torch.full((2,), float(k))], 1, 0).wait()
    for w in works:
        w.wait()
    expect([t[0].item() for t in ts] == [0, 1, 2, 3, 4, 5], ts)


@needs_torch
def test_recv_timeout_aborts_and_raises():
    g = pg(nranks=2, timeout=datetime.timedelta(milliseconds=200))
    w = g.recv([torch.zeros(1)], 1, 0)
    e = raises(Exception, w.wait, match="still in flight after 200 ms")
    expect(last().fn == b"comm_abort", (last().fn, str(e)))
    # the aborted request is still consumed, so that the file does not stay readable
    import select
    import time
    for _ in range(500):
        if not select.select([g.comm.fd], [], [], 0)[0]:
            break
        time.sleep(0.01)
    expect(not select.select([g.comm.fd], [], [], 0)[0], "expired request never consumed")


@needs_torch
def test_errors_and_timeouts_through_torch():
    g = pg(nranks=2, timeout=datetime.timedelta(seconds=5))
    dist.barrier(group=g)
    expect(last().timeout_ms == 5000, last().timeout_ms)
    fail_next(errno.ECONNRESET, "rank 1 died")
    e = raises(kcoll.KcollError, dist.all_reduce, torch.ones(1), dist.ReduceOp.SUM, g)
    expect("rank 1 died" in str(e) and e.errno == errno.ECONNRESET, str(e))
    opts = dist.AllreduceOptions()
    opts.timeout = datetime.timedelta(milliseconds=250)
    g.allreduce([torch.ones(1)], opts).wait()
    expect(last().timeout_ms == 250, last().timeout_ms)
    dist.barrier(group=g)
    expect(last().timeout_ms == 5000, last().timeout_ms)


@needs_torch
def test_async_collectives_overlap_and_keep_order():
    """async_op=True: submitted non-blocking in call order, completed in the background."""
    import threading
    g = registered(pg(nranks=2))
    before = {t for t in threading.enumerate() if t.name.startswith("kcoll")}
    M.kcoll_mock_hold(1)  # every collective stays in flight
    a, b = torch.ones(3), torch.arange(4, dtype=torch.int64)
    outs = [torch.zeros(2) for _ in range(2)]
    works = [dist.all_reduce(a, group=g, async_op=True),
             dist.broadcast(b, 0, group=g, async_op=True),
             dist.all_gather(outs, torch.tensor([1.0, 2.0]), group=g, async_op=True),
             dist.barrier(group=g, async_op=True)]
    expect(last().fn == b"barrier", "submitted in call order, the barrier last: %r" % last().fn)
    import time
    time.sleep(0.2)
    expect(not any(w.is_completed() for w in works), "completed while in flight")
    expect(outs[0].tolist() == [0, 0], "written back before completion: %r" % outs)
    mine = {t for t in threading.enumerate() if t.name.startswith("kcoll")} - before
    expect(len(mine) <= 1, "%d threads for 4 collectives" % len(mine))
    M.kcoll_mock_hold(0)
    for w in works:
        expect(w.wait() is True, "wait")
    expect(all(w.is_completed() and w.is_success() and w.exception() is None for w in works),
           "complete and successful")
    expect(a.tolist() == [2, 2, 2] and outs[1].tolist() == [1.0, 2.0], (a, outs))
    expect(works[0].get_future().wait()[0] is a, "the future's value is the tensors")
    # a non-contiguous tensor is written back on completion
    m = torch.ones(2, 2)
    dist.all_reduce(m[:, 0], group=g)
    expect(m.tolist() == [[2, 1], [2, 1]], m)


@needs_torch
def test_wait_completes_in_the_caller():
    """wait() of a collective waits for its request in the caller's thread (one blocking
    kcoll_wait), not for the completion thread; the completion thread still takes what
    nobody waits for."""
    import threading
    import time
    g = registered(pg(nranks=2, timeout=datetime.timedelta(seconds=5)))
    waits = []
    real = g.comm.wait
    g.comm.wait = lambda *a, **k: waits.append((threading.current_thread(), k)) or real(*a, **k)
    try:
        M.kcoll_mock_hold(1)
        t = torch.ones(2)
        w = dist.all_reduce(t, group=g, async_op=True)
        threading.Timer(0.2, M.kcoll_mock_hold, (0,)).start()
        w.wait()
        expect(t.tolist() == [2, 2] and len(waits) == 1, (t, waits))
        me, kw = waits[0]
        expect(me is threading.current_thread() and 0 < kw["timeout_ms"] <= 5000, waits)
        dist.all_reduce(t, group=g)  # blocking: the same
        expect(len(waits) == 2 and t.tolist() == [4, 4], (waits, t))
        w = dist.all_reduce(t, group=g, async_op=True)
        for _ in range(1000):  # 10 s: a loaded host may be slow to run the thread
            if w.is_completed():
                break
            time.sleep(0.01)
        expect(w.is_completed() and len(waits) == 2, "the completion thread completed it")
        w.wait()
        expect(len(waits) == 2 and t.tolist() == [8, 8], (waits, t))
        # interrupted in the caller's wait: the thread takes the request back
        g.comm.wait = lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt)
        w = dist.all_reduce(t, group=g, async_op=True)
        raises(KeyboardInterrupt, w.wait)
        w.wait()
        expect(t.tolist() == [16, 16], t)
        u = torch.ones(1)
        w = g.allreduce([t, u])  # two requests: the second is handed over too
        raises(KeyboardInterrupt, w.wait)
        w.wait()
        expect(t.tolist() == [32, 32] and u.item() == 2, (t, u))
    finally:
        del g.comm.wait


@needs_torch
def test_async_errors_raise_from_wait():
    """A collective failing in flight: wait() raises the errno and kcoll_last_error()."""
    g = registered(pg(nranks=2))
    M.kcoll_mock_hold(1)
    M.kcoll_mock_fail_wait(errno.ECONNRESET, b"rank 1 left")
    w = dist.all_reduce(torch.ones(2), group=g, async_op=True)
    expect(not w.is_completed(), "completed while held")
    M.kcoll_mock_hold(0)
    e = raises(kcoll.KcollError, w.wait, match="rank 1 left")
    expect(e.errno == errno.ECONNRESET and "ECONNRESET" in str(e), str(e))
    expect(w.is_completed() and not w.is_success(), "a failed work is not a success")
    expect(isinstance(w.exception(), kcoll.KcollError), w.exception())
    # the future is C++-safe (DDP comm hooks hand it to the reducer): a RuntimeError
    raises(RuntimeError, w.get_future().wait, match="rank 1 left")
    # without async_op, dist.* raises it
    M.kcoll_mock_fail_wait(errno.ETIMEDOUT, b"rank 1 is silent")
    raises(kcoll.KcollTimeout, dist.broadcast, torch.ones(1), 0, g, match="rank 1 is silent")
    M.kcoll_mock_fail_wait(errno.ECONNABORTED, b"aborted by rank 1")
    raises(kcoll.KcollError, dist.barrier, g, match="aborted by rank 1")
    # a collective in flight past its timeout aborts the communicator and raises
    M.kcoll_mock_hold(1)
    opts = dist.AllreduceOptions()
    opts.timeout = datetime.timedelta(milliseconds=200)
    w = g.allreduce([torch.ones(1)], opts)
    raises(kcoll.KcollTimeout, w.wait, match="still in flight after 200 ms; communicator aborted")


@needs_torch
def test_ddp_sees_a_failed_bucket():
    """C++ callers: DDP's backward raises a failed bucket all-reduce's error; a collective
    whose C++ caller only wait()s (the parameter check) raises at once."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    store = dist.HashStore()
    dist.init_process_group(backend="kcoll", store=store, rank=0, world_size=1)
    try:
        torch.manual_seed(0)
        for hook in (None, default_hooks.allreduce_hook):  # C++, then Python, all-reduce
            ddp = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 2))
            if hook:
                ddp.register_comm_hook(None, hook)

            def step():
                ddp(torch.randn(8, 4)).sum().backward()
            step()
            step()  # the buckets are rebuilt (a broadcast) in this forward
            M.kcoll_mock_fail_wait(errno.ECONNRESET, b"rank 3 died")
            raises(RuntimeError, step, match="rank 3 died")
        M.kcoll_mock_fail_wait(errno.ECONNRESET, b"rank 2 died")
        pg = dist.distributed_c10d._get_default_group()
        raises(RuntimeError, C10._verify_params_across_processes, pg,
               [torch.nn.Parameter(torch.ones(3))], None, match="rank 2 died")
    finally:
        dist.destroy_process_group()


def test_comm_split():
    """Comm.split: color, key and timeout reach kcoll_comm_split; the child shares the
    handle, which closes with the last communicator on it."""
    c = comm(nranks=4, rank=2, timeout_ms=700)
    M.kcoll_mock_split(2, 1)
    child = c.split(1, 5)
    L = last()
    expect(L.fn == b"comm_split" and (L.root, L.peer, L.timeout_ms) == (1, 5, 700),
           (L.fn, L.root, L.peer, L.timeout_ms))
    expect((child.rank, child.size) == (1, 2) and child.fd == c.fd, "child")
    expect(c.split(kcoll.SPLIT_UNDEFINED, 0) is None, "undefined color: no child")
    fd = c.fd
    c.destroy()
    child.barrier()  # the handle is still open
    expect(child.fd == fd and last().fn == b"barrier", last().fn)
    child.destroy()
    c = comm(nranks=4, rank=2)
    fail_next(errno.ETIMEDOUT, "rank 3 never answered")
    raises(kcoll.KcollTimeout, c.split, 0, 0, match="rank 3 never answered")


@needs_torch
def test_new_group_splits_the_default_group():
    """new_group on a kcoll default group is a kcoll_comm_split, no new rendezvous."""
    store = dist.HashStore()
    for k in range(1, 5):  # rank 1 of 2 has reached torch's store-based barriers
        store.add("store_based_barrier_key:%d" % k, 1)
    dist.init_process_group(backend="kcoll", store=store, rank=0, world_size=2,
                            timeout=datetime.timedelta(seconds=7))
    try:
        M.kcoll_mock_split(1, 0)
        g = dist.new_group([0])
        L = last()
        expect(L.fn == b"comm_split" and (L.root, L.peer) == (0, 0), (L.fn, L.root, L.peer))
        expect(L.timeout_ms == 7000, L.timeout_ms)
        expect(isinstance(g, kt.ProcessGroupKcoll) and (g.rank(), g.size()) == (0, 1), g)
        t = torch.tensor([3.0])
        dist.all_reduce(t, group=g)
        expect(last().fn == b"allreduce", last().fn)
        # a rank outside the group passes KCOLL_SPLIT_UNDEFINED and gets no group
        g2 = dist.new_group([1], timeout=datetime.timedelta(seconds=3))
        L = last()
        expect(L.fn == b"comm_split" and L.root == kcoll.SPLIT_UNDEFINED, (L.fn, L.root))
        expect(L.timeout_ms == 3000 and g2 == dist.GroupMember.NON_GROUP_MEMBER, g2)
        # the split's rank must be torch's
        M.kcoll_mock_split(2, 1)
        raises(RuntimeError, dist.new_group, [0, 1], match="the split gave rank 1 of 2")
    finally:
        dist.destroy_process_group()


@needs_torch
def test_bootstrap_through_store():
    store = dist.HashStore()
    timeout = datetime.timedelta(seconds=9)
    g0 = kt._create(dist.PrefixStore("g", store), 0, 2, timeout)
    uid0 = bytes(last().uid)
    expect(uid0.startswith(b"mock-uid-") and M.kcoll_mock_uid_timeout() == 9000, uid0[:16])
    expect(bytes(store.get("g/" + kt.STORE_KEY)) == uid0, "the id is in the store")
    g1 = kt._create(dist.PrefixStore("g", store), 1, 2, timeout)
    L = last()
    expect(bytes(L.uid) == uid0 and L.rank == 1 and L.nranks == 2, (L.rank, L.nranks))
    expect(L.bootstrap_timeout_ms == 9000, L.bootstrap_timeout_ms)
    expect(g1.getBackendName() == "kcoll" and (g1.rank(), g1.size()) == (1, 2), "names")
    g0.destroy()
    g1.destroy()
    os.environ["KCOLL_BOOTSTRAP_TIMEOUT_MS"] = "1000"
    try:
        kt._create(dist.PrefixStore("h", store), 0, 1, timeout).destroy()
    finally:
        del os.environ["KCOLL_BOOTSTRAP_TIMEOUT_MS"]
    expect(M.kcoll_mock_uid_timeout() == 0, "the environment's bootstrap timeout wins")
    # rank 0 cannot draw an id: the others learn it from the store, not from their timeout
    fail_next(errno.EADDRNOTAVAIL, "no address to listen on")
    raises(kcoll.KcollError, kt._create, dist.PrefixStore("i", store), 0, 2, timeout)
    e = raises(kcoll.KcollError, kt._create, dist.PrefixStore("i", store), 1, 2, timeout,
               match="rank 0 could not start it: kcoll: kcoll_get_unique_id")
    expect("no address to listen on" in str(e) and e.errno == errno.ECONNABORTED, e)


@needs_torch
def test_init_process_group_and_ddp():
    store = dist.HashStore()
    dist.init_process_group(backend="kcoll", store=store, rank=0, world_size=1)
    try:
        expect(dist.get_backend() == "kcoll", dist.get_backend())
        t = torch.tensor([1.0])
        dist.all_reduce(t)
        expect(t.item() == 1.0 and last().fn == b"allreduce", t)
        # DDP calls the group from C++ (parameter check, bucket all-reduce)
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(),
                                    torch.nn.Linear(8, 1))
        ref = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
        ref.load_state_dict(model.state_dict())
        ddp = torch.nn.parallel.DistributedDataParallel(model)
        x = torch.randn(16, 4)
        ddp(x).sum().backward()
        ref(x).sum().backward()
        for a, b in zip(model.parameters(), ref.parameters()):
            expect(torch.allclose(a.grad, b.grad), "DDP gradient differs")
    finally:
        dist.destroy_process_group()


def main():
    tests = [(n, f) for n, f in sorted(globals().items(), key=lambda kv: kv[0])
             if n.startswith("test_") and callable(f)]
    tests.sort(key=lambda nf: nf[1].__code__.co_firstlineno)
    print("TAP version 13")
    print("1..%d" % len(tests))
    failed = 0
    for i, (name, fn) in enumerate(tests, 1):
        if getattr(fn, "needs_torch", False) and NO_TORCH:
            print("ok %d %s # SKIP %s" % (i, name, NO_TORCH))
            continue
        M.kcoll_mock_world(0, 1)
        M.kcoll_mock_reset()
        try:
            fn()
            print("ok %d %s" % (i, name))
        except Exception:
            failed += 1
            for line in traceback.format_exc().splitlines():
                print("# " + line)
            print("not ok %d %s" % (i, name))
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
