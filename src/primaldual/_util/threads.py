"""Running ``nogil`` kernels on several OS threads, for the thread-parallel solvers.

What every threaded solver needs: the meaning of ``n_jobs``
(:func:`resolve_n_jobs`), and a run of one task per thread that a
KeyboardInterrupt stops cleanly (:func:`run_threads`): the tasks see a stop
flag between kernel calls, the main thread waits for all of them, and only
then reports the interrupt, so no thread is left writing into the iterates.
On it, a one-off pass cut into ranges (:func:`run_ranges`), the row
partitions of an in-process partitioned fit (:func:`run_parts`), and the sums of
the threads' partial vectors on column blocks (:func:`sum_rows`,
:func:`fold_rows`), bit for bit the sums one thread makes.  No numpy here:
the CLI imports this module before its Ctrl-C handling is in place.
"""
from __future__ import annotations

import operator
import os
import queue
import threading
from concurrent.futures import FIRST_EXCEPTION, Future, wait

__all__ = ["MIN_VALUES_PER_THREAD", "PartsOnThreads", "fold_rows", "part_threads",
           "part_threads_reason",
           "resolve_n_jobs", "run_parts", "run_ranges", "run_threads", "sum_rows"]

#: a one-off pass over an array (a finite check, the rows' norms, a sum of the
#: threads' partial vectors) is split across threads only where each gets at
#: least this many values: a wake-up costs about 0.1 ms, a million values ~1 ms
MIN_VALUES_PER_THREAD = 1_000_000


def resolve_n_jobs(n_jobs) -> int:
    """The number of threads ``n_jobs`` asks for: None and 1 mean one, ``k >= 1``
    means ``k``, ``-1`` all the cores, ``-2`` all but one, and so on (joblib's
    convention).  Zero or anything not an integer is an error."""
    if n_jobs is None:
        return 1
    try:
        if isinstance(n_jobs, bool):
            raise TypeError
        k = operator.index(n_jobs)
    except TypeError:
        raise ValueError(f"n_jobs must be an integer (-1 for all cores), "
                         f"got {n_jobs!r}") from None
    if k == 0:
        raise ValueError("n_jobs=0 means no thread; use n_jobs=1 for one thread or "
                         "-1 for all cores")
    if k < 0:
        k = max(1, (os.cpu_count() or 1) + 1 + k)
    return k


def run_threads(task, n_tasks, n_threads=None):
    """Run ``task(k, stop)`` for ``k = 0..n_tasks-1`` on ``n_threads`` OS threads
    (default: one per task).

    ``stop`` is a :class:`threading.Event` that the tasks poll between kernel
    calls.  Returns ``(results, interrupted)``: the tasks' return values in
    order, and whether a KeyboardInterrupt arrived while they ran (then
    ``stop`` was set and every task was waited for before returning).  An
    exception raised by a task is re-raised after all tasks have ended.
    """
    stop = threading.Event()
    interrupted = False
    workers = _pool(n_tasks if n_threads is None else int(n_threads))
    futures = [workers.submit(k, task, k, stop) for k in range(n_tasks)]
    pending = set(futures)
    while pending:
        try:
            done, pending = wait(pending, timeout=0.05, return_when=FIRST_EXCEPTION)
        except KeyboardInterrupt:
            interrupted = True
            stop.set()
            continue
        if any(f.exception() is not None for f in done):
            stop.set()
    return [f.result() for f in futures], interrupted


def run_ranges(length, n_values, n_threads, task):
    """``task(a, b)`` over contiguous ranges covering ``0..length``: one range on
    this thread, or ``k`` equal ones on ``k`` threads, ``k`` the most of
    ``n_threads`` that gives each at least ``MIN_VALUES_PER_THREAD`` of the
    ``n_values`` values the ranges read (a one-off pass: a finite check, the
    rows' norms, a sum of the threads' partial vectors).  Every range runs;
    returns whether a KeyboardInterrupt arrived meanwhile, for the caller to
    raise or report, and the tasks' return values in range order."""
    k = min(int(n_threads), int(n_values) // MIN_VALUES_PER_THREAD, int(length))
    if k <= 1:
        return False, [task(0, int(length))]
    cuts = [int(length) * t // k for t in range(k + 1)]
    results, interrupted = run_threads(lambda t, stop: task(cuts[t], cuts[t + 1]), k)
    return interrupted, results


def part_threads(n_parts, n_values, n_jobs) -> int:
    """The threads the ``n_parts`` row partitions of an in-process fit run on:
    at most ``n_jobs`` (resolved) and ``n_parts``, and only as many as give
    each at least ``MIN_VALUES_PER_THREAD`` of the ``n_values`` values a call
    reads (tiny data stays on the calling thread)."""
    return max(1, min(resolve_n_jobs(n_jobs), int(n_parts),
                      int(n_values) // max(MIN_VALUES_PER_THREAD, 1)))


def part_threads_reason(n_parts, n_values, n_jobs, what="stored entries") -> str:
    """Why :func:`part_threads` gives what it gives, for ``SolveResult.extras``."""
    k = part_threads(n_parts, n_values, n_jobs)
    asked = resolve_n_jobs(n_jobs)
    if k > 1:
        return (f"threads on: {n_parts} partitions on {k} threads, {n_values:,} {what}, "
                f"at least {MIN_VALUES_PER_THREAD:,} a thread")
    if asked <= 1:
        return "one thread: n_jobs is 1"
    if n_parts <= 1:
        return "one thread: one partition"
    return (f"one thread: {n_values:,} {what} in {n_parts} partitions, under "
            f"{MIN_VALUES_PER_THREAD:,} for each of 2 threads")


def run_parts(task, n_parts, n_threads):
    """``[task(k) for k in range(n_parts)]``, on ``n_threads`` threads when it
    is above 1 (:func:`run_threads`).  The partitions' calls are independent
    and each returns its own part, so the list is the same numbers on any
    number of threads; the caller adds the parts in partition order.  A
    KeyboardInterrupt that arrived while they ran is raised once every call
    has ended (no thread is left writing into a partition's state)."""
    if n_threads <= 1 or n_parts <= 1:
        return [task(k) for k in range(n_parts)]
    out, interrupted = run_threads(lambda k, stop: task(k), n_parts,
                                   n_threads=min(int(n_threads), int(n_parts)))
    if interrupted:
        raise KeyboardInterrupt
    return out


class PartsOnThreads:
    """Mixin of a block of row partitions (``self.parts``) whose calls run on
    threads in process: :meth:`set_part_threads` picks ``n_threads``
    (:func:`part_threads`), :meth:`each_part` runs a call on every partition
    (:func:`run_parts`).  A Dask actor holds one partition: one thread."""

    n_threads = 1

    def set_part_threads(self, n_values, n_jobs, what="stored entries"):
        """``n_threads`` for calls that read ``n_values`` values in all;
        returns it and why (:func:`part_threads_reason`)."""
        n_parts = len(self.parts)
        self.n_threads = part_threads(n_parts, n_values, n_jobs)
        return self.n_threads, part_threads_reason(n_parts, n_values, n_jobs, what)

    def each_part(self, task, n_threads=None):
        """``[task(k, part) for each partition]`` on ``n_threads`` threads
        (default: :attr:`n_threads`), in partition order."""
        n_threads = self.n_threads if n_threads is None else n_threads
        return run_parts(lambda k: task(k, self.parts[k]), len(self.parts), n_threads)


def sum_rows(parts, out, n_threads=1):
    """``out[:] = parts[0] + parts[1] + ...`` (``parts`` of shape ``(K, d)``), the
    rows added in order, so the result is the same bit for bit on any number of
    threads (:func:`run_ranges` on the columns: no ``K d`` loop on the main
    thread, 64 M additions a check with 64 threads' images of a million
    columns).  Returns whether a KeyboardInterrupt arrived (the
    sum is complete either way)."""
    def block(a, b):
        out[a:b] = parts[0, a:b]
        for j in range(1, parts.shape[0]):
            out[a:b] += parts[j, a:b]
    return run_ranges(parts.shape[1], parts.size, n_threads, block)[0]


def fold_rows(parts, out, n_threads=1):
    """``out += parts[0] + parts[1] + ...`` in that order, then ``parts[:] = 0``:
    the threads' partial images folded into the shared one, on column blocks
    (:func:`run_ranges`).  Returns whether a
    KeyboardInterrupt arrived."""
    def block(a, b):
        for j in range(parts.shape[0]):
            out[a:b] += parts[j, a:b]
        parts[:, a:b] = 0.0
    return run_ranges(parts.shape[1], parts.size, n_threads, block)[0]


class _Workers:
    """``n`` threads started once, each with its own queue: task ``k`` runs on
    thread ``k mod n``, so ``n`` tasks always run on ``n`` threads at once.
    (A ``ThreadPoolExecutor`` spawns threads lazily and hands a task to any idle
    thread, so it does not promise that ``n`` tasks run on ``n`` distinct
    threads; the slices of an SDCA pass must.)"""

    def __init__(self, n):
        self.queues = [queue.SimpleQueue() for _ in range(n)]
        for i, q in enumerate(self.queues):
            threading.Thread(target=self._loop, args=(q,), daemon=True,
                             name=f"primaldual-{n}-{i}").start()

    @staticmethod
    def _loop(q):
        while True:
            fut, fn, args = q.get()
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(fn(*args))
            except BaseException as exc:          # handed to the caller
                fut.set_exception(exc)

    def submit(self, k, fn, *args) -> Future:
        fut = Future()
        self.queues[k % len(self.queues)].put((fut, fn, args))
        return fut


_POOLS: dict = {}
_POOLS_LOCK = threading.Lock()


def _pool(n_threads) -> _Workers:
    """One set of ``n_threads`` threads per size, kept for the process: a
    solver with shrinking runs a pass per call, and passes can be short."""
    with _POOLS_LOCK:
        workers = _POOLS.get(n_threads)
        if workers is None:
            workers = _POOLS[n_threads] = _Workers(n_threads)
        return workers
