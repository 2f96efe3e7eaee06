"""Several independent problems (one-vs-rest classes) on ``n_jobs`` threads,
where threads are measured to pay.

:func:`run_problems` solves problem 0 alone, on one Python thread with
``n_jobs`` handed to its solver (which may use its own threads and BLAS's).
The other problems run on a pool of Python threads only when

* the method that solved problem 0 does its work in compiled ``nogil``
  kernels (:data:`NOGIL_METHODS`): Newton's and the interior point's numpy and
  BLAS calls hold the GIL between calls, and two of them side by side,
  each waking BLAS's own threads, oversubscribe the cores (issue 31: up to
  19.9x one thread on a loaded 2-core machine);
* problem 0 took at least :data:`MIN_PROBLEM_S` seconds (a fit of a few
  milliseconds spawns no thread), and the other problems fill at least
  :data:`MIN_BATCHES` batches of one problem per thread (so that the trial
  batch below is a bounded share of the work); and
* the first parallel batch (one problem per thread, BLAS limited to one
  thread by ``threadpoolctl``) processes stored entries at least
  :data:`KEEP_SPEEDUP` times faster than problem 0 did alone.  Otherwise the
  remaining problems run serially, so a wrong first choice costs at most one
  batch.

Each problem's result depends only on its own seed and data, never on how the
problems were scheduled.  ``plan["reason"]`` says what was decided and why.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from threadpoolctl import threadpool_limits

from .._util.threads import resolve_n_jobs
from .supervisor import solver_path

__all__ = ["run_problems", "NOGIL_METHODS", "MIN_PROBLEM_S", "MIN_BATCHES", "KEEP_SPEEDUP"]

#: methods whose epochs run in compiled nogil kernels (threads run them in parallel)
NOGIL_METHODS = frozenset({"sdca", "asdca", "l1cd", "minibatch_sdca", "dso", "spdc",
                           "simba", "sag", "sgd", "psgd"})
#: problem 0 faster than this (seconds): the rest run serially, no thread spawned
MIN_PROBLEM_S = 0.02
#: the problems after problem 0 must fill this many batches to try threads
MIN_BATCHES = 3
#: the parallel batch must process stored entries this much faster than problem 0
KEEP_SPEEDUP = 1.1


def _fits(res):
    """A problem's fits: its result, or the results of a list of them (a path)."""
    return list(res) if isinstance(res, (list, tuple)) else [res]


def _work(res):
    """Stored entries a problem's fits read (one unit per fit when a solver
    counts none)."""
    return sum(max(float(getattr(r, "feature_accesses", 0) or 0), 1.0) for r in _fits(res))


def _serial_reason(first, seconds, k_total, threads, min_batches=MIN_BATCHES):
    """Why the problems after the first run serially, or ``""`` to try threads."""
    methods = sorted({leg["method"] for r in _fits(first) for leg in solver_path(r)})
    if k_total - 1 < min_batches * threads:
        return (f"serial: {k_total - 1} problems after the first, fewer than "
                f"{min_batches} batches of {threads}")
    if not set(methods) <= NOGIL_METHODS:
        return (f"serial: problem 0 ran {'+'.join(methods)}, whose numpy/BLAS work holds "
                f"the GIL (its solver gets n_jobs={threads})")
    if seconds < MIN_PROBLEM_S:
        return (f"serial: problem 0 took {seconds * 1e3:.1f} ms, under "
                f"{MIN_PROBLEM_S * 1e3:g} ms")
    return ""


def run_problems(one, k_total, n_jobs, min_batches=MIN_BATCHES):
    """Solve ``one(k, n_jobs_k)`` for ``k = 0..k_total-1``; ``(results, plan)``.

    ``one`` returns a :class:`~primaldual.solvers.SolveResult` or a list of
    them (a problem solved as a path of fits).  ``n_jobs_k`` is the ``n_jobs``
    for problem ``k``'s own solver: all of ``n_jobs`` for a problem solved
    alone, 1 for one of a parallel batch.  Threads are tried when the
    problems after the first fill ``min_batches`` batches.  ``plan`` holds
    ``workers`` (Python threads used after problem 0), the measured rates
    (stored entries per second) and ``reason``."""
    threads = resolve_n_jobs(n_jobs)
    if threads <= 1 or k_total <= 1:
        results = [one(k, n_jobs) for k in range(k_total)]
        return results, {"workers": 1, "reason": "serial: n_jobs=1 or one problem"}
    t0 = time.perf_counter()
    results = [one(0, threads)]
    seconds = time.perf_counter() - t0
    plan = {"workers": 1, "serial_rate": _work(results[0]) / max(seconds, 1e-9)}
    reason = _serial_reason(results[0], seconds, k_total, threads, min_batches)
    k = 1
    if not reason:
        workers = min(threads, k_total - 1)
        with ThreadPoolExecutor(max_workers=workers) as pool, \
                threadpool_limits(limits=1, user_api="blas"):
            t1 = time.perf_counter()
            batch = list(pool.map(lambda j: one(j, 1), range(1, 1 + workers)))
            rate = sum(_work(r) for r in batch) / max(time.perf_counter() - t1, 1e-9)
            results += batch
            k = 1 + workers
            plan["parallel_rate"] = rate
            if rate >= KEEP_SPEEDUP * plan["serial_rate"]:
                plan["workers"] = workers
                reason = (f"threads: {workers} problems at a time read "
                          f"{rate / plan['serial_rate']:.2f}x the entries per second "
                          f"of problem 0 alone")
                results += list(pool.map(lambda j: one(j, 1), range(k, k_total)))
                k = k_total
            else:
                reason = (f"serial: {workers} problems at a time read only "
                          f"{rate / plan['serial_rate']:.2f}x the entries per second "
                          f"of problem 0 alone (threads kept from {KEEP_SPEEDUP}x)")
    results += [one(j, threads) for j in range(k, k_total)]
    plan["reason"] = reason
    return results, plan
