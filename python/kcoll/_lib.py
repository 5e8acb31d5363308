# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""ctypes bindings of the parts of libkcoll.so.0 the Python package uses.

The library is $KCOLL_LIB when set (tests load a mock this way), else libkcoll.so.0 from the
dynamic linker's search path, else the one `make install` put in its LIBDIR.
"""
import ctypes
import errno as _errno
import os

UNIQUE_ID_BYTES = 128


class UniqueId(ctypes.Structure):
    _fields_ = [("internal", ctypes.c_ubyte * UNIQUE_ID_BYTES)]


class UidOpts(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t),
                ("addr", ctypes.c_char_p),
                ("port", ctypes.c_uint),
                ("timeout_ms", ctypes.c_uint),
                ("flags", ctypes.c_uint)]


class CommOpts(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t),
                ("flags", ctypes.c_uint),
                ("bootstrap_timeout_ms", ctypes.c_uint),
                ("connect_timeout_ms", ctypes.c_uint),
                ("port", ctypes.c_uint),
                ("addr", ctypes.c_char_p),
                ("ifname", ctypes.c_char_p),
                ("transport", ctypes.c_char_p)]


class CollOpts(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t),
                ("flags", ctypes.c_uint),
                ("algo", ctypes.c_uint),
                ("timeout_ms", ctypes.c_uint),
                ("req", ctypes.c_void_p),
                ("algo_used", ctypes.POINTER(ctypes.c_uint))]


class Request(ctypes.Structure):
    _fields_ = [("id", ctypes.c_uint64),
                ("comm", ctypes.c_uint32),
                ("state", ctypes.c_uint32)]


class SplitOpts(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t),
                ("flags", ctypes.c_uint),
                ("timeout_ms", ctypes.c_uint),
                ("connect_timeout_ms", ctypes.c_uint)]


SPLIT_UNDEFINED = -1


class P2POpts(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t),
                ("timeout_ms", ctypes.c_uint),
                ("flags", ctypes.c_uint)]


def opts(cls, **fields):
    """A zeroed option struct with sz set, as KCOLL_OPTS() makes one."""
    o = cls()
    o.sz = ctypes.sizeof(cls)
    for k, v in fields.items():
        setattr(o, k, v)
    return o


_P = ctypes.c_void_p
_I = ctypes.c_int
_SZ = ctypes.c_size_t
_SZP = ctypes.POINTER(ctypes.c_size_t)

# name: (restype, argtypes)
_PROTOS = {
    "kcoll_version": (ctypes.c_char_p, []),
    "kcoll_last_error": (ctypes.c_char_p, []),
    "kcoll_datatype_size": (_SZ, [_I]),
    "kcoll_open": (_I, [_P, ctypes.POINTER(_P)]),
    "kcoll_close": (None, [_P]),
    "kcoll_get_unique_id": (_I, [ctypes.POINTER(UniqueId), ctypes.POINTER(UidOpts)]),
    "kcoll_comm_init_rank": (_I, [_P, ctypes.POINTER(UniqueId), _I, _I,
                                  ctypes.POINTER(CommOpts), ctypes.POINTER(_P)]),
    "kcoll_comm_destroy": (_I, [_P]),
    "kcoll_comm_abort": (_I, [_P]),
    "kcoll_comm_rank": (_I, [_P]),
    "kcoll_comm_size": (_I, [_P]),
    "kcoll_send": (_I, [_P, _P, _SZ, _I, ctypes.POINTER(P2POpts)]),
    "kcoll_recv": (_I, [_P, _P, _SZ, _I, _SZP, ctypes.POINTER(P2POpts)]),
    "kcoll_isend": (_I, [_P, _P, _SZ, _I, ctypes.POINTER(P2POpts), ctypes.POINTER(Request)]),
    "kcoll_irecv": (_I, [_P, _P, _SZ, _I, ctypes.POINTER(P2POpts), ctypes.POINTER(Request)]),
    "kcoll_wait": (_I, [_P, ctypes.POINTER(Request), _I, _SZP]),
    "kcoll_broadcast": (_I, [_P, _P, _P, _SZ, _I, _I, ctypes.POINTER(CollOpts)]),
    "kcoll_scatter": (_I, [_P, _P, _P, _SZ, _I, _I, ctypes.POINTER(CollOpts)]),
    "kcoll_gather": (_I, [_P, _P, _P, _SZ, _I, _I, ctypes.POINTER(CollOpts)]),
    "kcoll_reduce": (_I, [_P, _P, _P, _SZ, _I, _I, _I, ctypes.POINTER(CollOpts)]),
    "kcoll_allreduce": (_I, [_P, _P, _P, _SZ, _I, _I, ctypes.POINTER(CollOpts)]),
    "kcoll_allgather": (_I, [_P, _P, _P, _SZ, _I, ctypes.POINTER(CollOpts)]),
    "kcoll_reduce_scatter": (_I, [_P, _P, _P, _SZ, _I, _I, ctypes.POINTER(CollOpts)]),
    "kcoll_alltoall": (_I, [_P, _P, _P, _SZ, _I, ctypes.POINTER(CollOpts)]),
    "kcoll_alltoallv": (_I, [_P, _P, _SZP, _SZP, _P, _SZP, _SZP, _I,
                             ctypes.POINTER(CollOpts)]),
    "kcoll_barrier": (_I, [_P, ctypes.POINTER(CollOpts)]),
    "kcoll_fd": (_I, [_P]),
    "kcoll_group_start": (_I, []),
    "kcoll_group_end": (_I, []),
    "kcoll_comm_split": (_I, [_P, _I, _I, ctypes.POINTER(SplitOpts), ctypes.POINTER(_P)]),
}
# Newer than the oldest library the package runs on: has() says whether it is there.
_OPTIONAL = {"kcoll_comm_split"}


def _candidates():
    env = os.environ.get("KCOLL_LIB")
    if env:
        return [env]
    names = ["libkcoll.so.0"]
    try:
        from . import _install  # written by `make install`
        names.append(os.path.join(_install.LIBDIR, "libkcoll.so.0"))
    except ImportError:
        pass
    return names


_lib = None


def lib():
    """The loaded library, with its prototypes declared (loaded on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    errors = []
    for name in _candidates():
        try:
            handle = ctypes.CDLL(name, use_errno=True)
            break
        except OSError as e:
            errors.append(str(e))
    else:
        raise ImportError("kcoll: cannot load libkcoll (install it with `make install`, or "
                          "point KCOLL_LIB at libkcoll.so.0): " + "; ".join(errors))
    for fn, (res, args) in _PROTOS.items():
        if fn in _OPTIONAL and not hasattr(handle, fn):
            continue
        f = getattr(handle, fn)
        f.restype = res
        f.argtypes = args
    _lib = handle
    return _lib


def has(fn):
    """Whether the loaded library has function @fn (libkcoll 0.6 added kcoll_comm_split)."""
    return hasattr(lib(), fn)


class KcollError(RuntimeError):
    """A libkcoll call failed: errno (positive), the call, and kcoll_last_error()'s reason."""

    def __init__(self, call, err, detail=""):
        self.errno = err
        self.call = call
        self.detail = detail
        msg = "kcoll: %s: %s" % (call, os.strerror(err))
        name = _errno.errorcode.get(err)
        if name:
            msg += " (%s)" % name
        if detail:
            msg += ": " + detail
        super().__init__(msg)


class KcollTimeout(KcollError, TimeoutError):
    """The call failed with ETIMEDOUT."""


def check(call, rc):
    """Raise KcollError for a negative return of libkcoll function @call."""
    if rc >= 0:
        return rc
    detail = lib().kcoll_last_error()
    detail = detail.decode(errors="replace") if detail else ""
    cls = KcollTimeout if -rc == _errno.ETIMEDOUT else KcollError
    raise cls(call, -rc, detail)
