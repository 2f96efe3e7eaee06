"""Ctrl-C during a fit: SIGINT becomes a flag that the driver polls between kernel calls.

Python's default SIGINT handler raises :class:`KeyboardInterrupt` in the main
thread at the next point where the interpreter runs Python code.  Inside a
call to a compiled Numba function that point can be the wrapper that boxes the
kernel's result (a named tuple: building it runs Python code that looks up
the tuple's class); the exception then makes that lookup return NULL, the
wrapper calls NULL, and the process dies with a segmentation fault (numba
issue 2324).  So no exception may be raised while a kernel runs.

:func:`sigint_as_flag` replaces the default handler, for the duration of a
fit, by one that only sets a flag (:class:`InterruptFlag`).  The solvers
stop at their next deadline check, between kernel calls, because
:class:`Deadline` -- the point in time the driver hands to ``advance`` --
reports itself as passed once the flag is set.  The previous handler is put
back when the fit ends.  A handler other than Python's default (one the
caller installed, or ``SIG_IGN``) is left alone, and so is any thread other
than the main one (only the main thread receives Python signal handlers).

Imports are the other unsafe moment: a KeyboardInterrupt inside an import
leaves the modules it had started half-initialized in ``sys.modules`` (Numba's
first load then fails for the rest of the process: "partially initialized
module 'numba.core.types'").  :func:`primaldual._util.lazy.lazy_module` holds a
Ctrl-C back until the import has finished (:func:`sigint_held`) and raises it
then; an import that fails anyway takes every module it added out of
``sys.modules`` (:func:`forget_new_modules`), so the next attempt starts clean.
"""
from __future__ import annotations

import contextlib
import importlib.machinery
import math
import signal
import sys
import threading

__all__ = ["InterruptFlag", "Deadline", "sigint_as_flag", "sigint_held",
           "forget_new_modules"]

try:        # the C functions under signal's, which turn each handler into an enum
    # member when they can (an enum lookup that fails: ~4 us a call, 8 a fit)
    from _signal import getsignal as _getsignal, signal as _setsignal
except ImportError:                                 # pragma: no cover
    _getsignal, _setsignal = signal.getsignal, signal.signal


class InterruptFlag:
    """Set by SIGINT while :func:`sigint_as_flag` is active; polled by the driver."""

    def __init__(self):
        self.count = 0

    def is_set(self) -> bool:
        return self.count > 0

    def set(self):
        self.count += 1

    def handler(self, signum, frame):       # a Python signal handler: it never raises
        self.count += 1


class Deadline(float):
    """A time on the :func:`time.perf_counter` clock that also passes at once
    when ``flag`` is set.

    The solvers test ``time.perf_counter() >= deadline`` between kernel calls.
    Python evaluates that as ``deadline <= now`` here (a float subclass that
    overrides the reflected comparison is asked first), so the same test stops
    the run on a time limit or on Ctrl-C.  ``Deadline(math.inf, flag)`` is a
    run without a time limit.
    """

    def __new__(cls, when, flag):
        self = super().__new__(cls, math.inf if when is None else when)
        self.flag = flag
        return self

    def passed(self, now) -> bool:
        return self.flag.is_set() or float(self) <= now

    def __le__(self, now):              # now >= deadline
        return self.passed(now)

    def __lt__(self, now):              # now > deadline
        return self.flag.is_set() or float(self) < now

    def __ge__(self, now):              # now <= deadline
        return not self.flag.is_set() and float(self) >= now

    def __gt__(self, now):              # now < deadline
        return not self.flag.is_set() and float(self) > now

    __hash__ = float.__hash__

    def __reduce__(self):                # pickled (never in files): a plain time
        return (float, (float(self),))


@contextlib.contextmanager
def sigint_as_flag(flag: InterruptFlag | None = None):
    """While the block runs, SIGINT sets ``flag`` instead of raising
    :class:`KeyboardInterrupt` (in the main thread, when Python's default
    handler is in place; otherwise nothing changes).  Yields the flag.

    Blocks nest: an inner block -- in the main thread or in a worker thread
    (one-vs-rest and cross-validation fit on several) -- finds the outer
    block's handler in place and shares its flag, so one Ctrl-C stops every
    fit under the outer block.
    """
    flag = InterruptFlag() if flag is None else flag
    installed = False
    try:
        current = _getsignal(signal.SIGINT)
    except (ValueError, OSError):           # no signals here (embedded interpreter)
        current = None
    if isinstance(getattr(current, "__self__", None), InterruptFlag):
        flag = current.__self__             # an outer block's flag (any thread): share it
    elif (current is signal.default_int_handler
          and threading.current_thread() is threading.main_thread()):
        _setsignal(signal.SIGINT, flag.handler)
        installed = True
    try:
        yield flag
    finally:
        if installed:
            _setsignal(signal.SIGINT, signal.default_int_handler)


def forget_new_modules(before):
    """Take the Python modules added to ``sys.modules`` since ``before`` (a set
    of names) out again, after an import that failed.  Compiled extension
    modules stay: they cannot be loaded twice in a process, and they hold no
    half-initialized Python module."""
    for key in set(sys.modules) - before:
        spec = getattr(sys.modules.get(key), "__spec__", None)
        if isinstance(getattr(spec, "loader", None), importlib.machinery.ExtensionFileLoader):
            continue
        sys.modules.pop(key, None)


@contextlib.contextmanager
def sigint_held():
    """While the block runs, SIGINT sets the yielded flag instead of raising
    (main thread, default handler only; elsewhere nothing changes); the
    caller raises KeyboardInterrupt after the block when the flag is set."""
    flag = InterruptFlag()
    installed = False
    try:
        if (threading.current_thread() is threading.main_thread()
                and signal.getsignal(signal.SIGINT) is signal.default_int_handler):
            signal.signal(signal.SIGINT, flag.handler)
            installed = True
    except (ValueError, OSError):
        pass
    try:
        yield flag
    finally:
        if installed:
            signal.signal(signal.SIGINT, signal.default_int_handler)
