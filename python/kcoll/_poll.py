# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""One completion thread for the process's non-blocking requests.

The thread sleeps in poll() on the files of the communicators that have requests in flight
(/dev/kcoll reports POLLIN while a non-blocking request on the file has completed and not
been waited for) and on a wake pipe; it never spins.  When a file is readable it tests each
of that file's requests (kcoll_wait with timeout 0) and hands every completed one to its
callback.  A request still in flight at its communicator's timeout_ms aborts the
communicator (its memory cannot be handed back while the kernel may write it) and completes
with KcollTimeout.
"""
import os
import select
import threading
import time

from ._lib import KcollError

# A readable file none of whose requests completed (a request of someone else's): look
# again only after this long, rather than spin on the level-triggered POLLIN.
_FOREIGN_BACKOFF_S = 0.01


class _Entry:
    __slots__ = ("comm", "req", "nbytes", "done", "deadline", "ms", "busy", "quiet")

    def __init__(self, comm, req, nbytes, done, deadline, ms):
        self.comm = comm
        self.req = req
        self.nbytes = nbytes
        self.done = done  # None once completed: an expired request kept to be consumed
        self.deadline = deadline
        self.ms = ms
        self.busy = False  # the thread is testing it: wait_here() must leave it alone
        self.quiet = False  # added without waking the thread: its file is not polled for it


class Poller:
    """Completes requests from one daemon thread, started on first use."""

    def __init__(self):
        self._lock = threading.Lock()
        self._pending = {}		# fd -> [_Entry]
        self._thread = None
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)

    def add(self, comm, req, nbytes, done, timeout_ms=None, wake=True):
        """Complete @req of @comm: done(None, nbytes) on success, done(exception, 0) else.

        @nbytes: the bytes the request must move (None: any).  @timeout_ms: the request's
        own deadline (None: the communicator's timeout_ms; 0: none).  @done runs in the
        completion thread; it must not block.  @wake False: the thread is not woken for it
        (it sees it when it next looks); the caller then either wait_here()s for it or calls
        wake() before anything waits on @done.  Waking costs the caller the thread's turn at
        the interpreter lock, which under emulation costs more than a small collective.
        """
        ms = comm.timeout_ms if timeout_ms is None else timeout_ms
        deadline = time.monotonic() + ms / 1000.0 if ms else None
        e = _Entry(comm, req, nbytes, done, deadline, ms)
        e.quiet = not wake
        with self._lock:
            self._pending.setdefault(comm.fd, []).append(e)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="kcoll-completion",
                                                daemon=True)
                self._thread.start()
        if wake:
            self._wake()

    def wake(self):
        """Make the thread look at every request added so far."""
        with self._lock:
            for lst in self._pending.values():
                for e in lst:
                    e.quiet = False
        self._wake()

    def wait_here(self, comm, req):
        """Complete @req of @comm in the calling thread (a blocking kcoll_wait up to the
        request's deadline) instead of the completion thread; False when that thread already
        has it in hand (it completes it as usual).

        A caller that is going to block on the result anyway saves the completion thread's
        wake-up and the hand-over back to it, which under emulation cost more than a small
        collective itself.
        """
        fd = comm.fd
        with self._lock:
            lst = self._pending.get(fd, [])
            e = next((e for e in lst if e.req is req), None)
            if e is None or e.busy or e.done is None:
                return False
            lst.remove(e)
        ms = -1
        if e.deadline is not None:
            ms = max(1, int((e.deadline - time.monotonic()) * 1000))
        try:
            exc, got = None, comm.wait(req, e.nbytes, timeout_ms=ms, expired_ms=e.ms)
        except KcollError as x:
            exc, got = x, 0
        except BaseException:
            # Interrupted (KeyboardInterrupt) with the request in flight: the thread takes it
            # back, and @done keeps its memory until it ends.
            with self._lock:
                e.quiet = False
                self._pending.setdefault(fd, []).append(e)
            self._wake()
            raise
        e.done(exc, got)
        return True

    def threads(self):
        """The completion thread, if started (for tests)."""
        return [self._thread] if self._thread else []

    def _wake(self):
        try:
            os.write(self._wake_w, b"w")
        except BlockingIOError:
            pass  # the pipe is full: the thread is awake anyway

    def _run(self):
        while True:
            # Quiet requests are their callers' to wait for: their files are polled only
            # along with announced ones (a readable file's requests are all tested).
            with self._lock:
                fds = [fd for fd, lst in self._pending.items()
                       if any(not e.quiet for e in lst)]
                deadlines = [e.deadline for lst in self._pending.values() for e in lst
                             if e.deadline is not None and not e.quiet]
            p = select.poll()
            p.register(self._wake_r, select.POLLIN)
            for fd in fds:
                p.register(fd, select.POLLIN)
            timeout = None
            if deadlines:
                timeout = max(0, int((min(deadlines) - time.monotonic()) * 1000) + 1)
            ready = {fd for fd, _ in p.poll(timeout)}
            if self._wake_r in ready:
                try:
                    while os.read(self._wake_r, 4096):
                        pass
                except BlockingIOError:
                    pass
            foreign = False
            now = time.monotonic()
            for fd in fds:
                if self._sweep(fd, fd in ready, now) == 0 and fd in ready:
                    foreign = True
            if foreign:
                time.sleep(_FOREIGN_BACKOFF_S)

    def _sweep(self, fd, readable, now):
        """Test the requests of @fd (when readable) and expire overdue ones; how many ended."""
        with self._lock:
            entries = list(self._pending.get(fd, ()))
            for e in entries:
                e.busy = True
        ended, expired = [], []
        for e in entries:
            if readable:
                try:
                    got = e.comm.test(e.req, e.nbytes)
                except KcollError as exc:
                    ended.append((e, exc, 0))
                    continue
                if got is not None:
                    ended.append((e, None, got))
                    continue
            if e.done is not None and e.deadline is not None and now >= e.deadline:
                expired.append((e, e.comm.expire(e.req, e.ms), 0))
        with self._lock:
            lst = self._pending.get(fd, [])
            for e, _, _ in ended:
                lst.remove(e)
            for e in entries:
                e.busy = False
        # An expired request stays listed until the abort ends it and a test consumes it:
        # left unconsumed it would keep the file readable.
        for e, exc, got in ended + expired:
            done, e.done = e.done, None
            e.deadline = None
            if done is None:
                continue
            try:
                done(exc, got)
            except Exception:  # a callback's bug must not stop every other completion
                pass
        return len(ended) + len(expired)


_poller = None
_poller_lock = threading.Lock()


def poller():
    """The process's Poller."""
    global _poller
    with _poller_lock:
        if _poller is None:
            _poller = Poller()
        return _poller
