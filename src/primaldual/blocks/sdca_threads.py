"""SDCA on several threads: the threaded pass and the cost model that plans it.

Shared by the threaded serial SDCA (:mod:`primaldual.solvers.sdca`;
docs/solvers.md, "Threads", describes the method and the cost model) and by
CoCoA+'s local solver on a Dask worker with several cores
(:mod:`primaldual.distributed.local_sdca`, which also picks its sync period
with :func:`auto_sync_every` where it runs, from that machine's costs).

* :func:`threaded_pass` runs a range of a pass on ``k`` threads, each on its
  copy of the dual image, on one shared image, or on copies of the hot
  columns only (:class:`ThreadWork` holds the arrays);
* :func:`warm_threads` readies them before a timed trial (which
  :mod:`.sdca_trial` judges);
* :func:`thread_plan` decides threads or serial and the sync period from the
  data (:mod:`.thread_stats`: :func:`mean_row_cosine`, :func:`distinct_columns`,
  :func:`column_overlap`) and this machine's costs
  (:func:`measured_thread_costs`); :func:`auto_sync_every` is its sync period
  alone.

Imports only the kernels and the model layer (see ``tests/test_layers.py``).
"""
from __future__ import annotations

import itertools
import time
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..kernels.sdca import (CLOCK_STRIDE, DENSE_REFRESH, Averaging, SDCAState, Shrinking,
                            ThreadCopy, prox_work_arrays, renumber, sdca_epoch, start_copy,
                            sync_copy, sync_hot)
from ..problem import Problem
from .thread_stats import (COSINE_SAMPLE, _dot, _sampled_entries, atomic_columns,  # noqa: F401
                           auto_atomic, column_overlap, distinct_columns, grouped_column_counts,
                           mean_row_cosine, sampled_column_counts)
from .._util.threads import fold_rows, resolve_n_jobs, run_threads

__all__ = ["ThreadCosts", "ThreadPlan", "ThreadWork", "atomic_columns", "auto_atomic",
           "auto_sync_every", "column_overlap", "distinct_columns", "mean_row_cosine",
           "measured_thread_costs", "pass_threads", "sampled_column_counts", "thread_plan",
           "threaded_pass", "warm_threads"]

#: n_jobs > 1: the fewest stored entries per thread and pass; with fewer, fewer
#: threads are used, and a pass of a shrunk active set this small runs serially
MIN_NNZ_PER_THREAD = 1_000_000
#: sync_every="auto" picks the flush period from these powers of two
#: (thread_plan: the one of least predicted time)
SYNC_CHOICES = tuple(2 ** p for p in range(2, 14))
#: the cost model's epoch penalty of asynchrony: a run whose steps miss about
#: ``(k - 1) S`` updates, ``S r / d`` per column (``r`` the mean entries of a
#: row), of rows of mean cosine ``c`` takes ``1 + STALE_EPOCHS (k - 1) (S r /
#: d) c^2`` times the epochs of one thread (module docstring, "Threads")
STALE_EPOCHS = 0.12
#: threads run only where the cost model predicts at least this speed-up
MIN_SPEEDUP = 1.15
#: sync_every="auto" also considers one shared v written by every step (no
#: copies, PASSCoDe's design) where the sampled column overlap is below this:
#: two threads then rarely write the same entry or cache line (orthogonal
#: TF-IDF text 0.001; the shared-vocabulary text 0.15 keeps its copies), and a
#: step costs what it costs on one thread (CPU time per stored entry 1.03-1.07x
#: one thread's on the orthogonal text, against 1.6-1.7x on copies)
WILD_OVERLAP = 0.02
#: above WILD_OVERLAP, sync_every="auto" also considers copies of the hot
#: columns only (at most HOT_MAX, the fewest whose removal leaves a column
#: overlap below WILD_OVERLAP: the shared-vocabulary text's 64 most held
#: words, 31% of its entries), the others written into the shared v, synced
#: after every chunk of a pass; a step is the serial kernel's on an image
#: whose hot columns are renumbered to the thread's copy, and costs about
#: HOT_STEP times a serial step
HOT_STEP = 1.05
#: hot-column copies: at most this many hot columns
HOT_MAX = 127
#: n_jobs > 1: a pass is cut into chunks of about this many stored entries,
#: which the threads take in turn (at least one, at most MAX_CHUNKS_PER_THREAD
#: per thread)
CHUNK_NNZ = 200_000
MAX_CHUNKS_PER_THREAD = 16
#: a test hook: when set, ``THREAD_STALL(k, chunk)`` is called by thread ``k``
#: before each chunk of a threaded pass (the tests stall a thread with it)
THREAD_STALL = None


# ----------------------------------------------------------- the cost model
class ThreadCosts(NamedTuple):
    """This machine's costs, in seconds, that :func:`thread_plan` predicts
    from: a serial step per stored entry of its row, a step on a thread's
    copy (:class:`ThreadCopy`: the columns it changes are listed) per stored
    entry, a sync per column it shares (publishing it and refreshing it), a
    refresh of the whole copy per column (the sweep a sync makes when many
    columns changed), a threaded pass with nothing to do (waking the
    threads and waiting for them), and ``two_threads``, the speed-up of two
    threads over one on the same steps, as the machine gives it now (2 on two
    idle cores; near 1 when other work holds the cores)."""
    step_entry: float
    buffered_entry: float
    flush_column: float
    sweep_column: float
    wake: float
    two_threads: float = 2.0


#: [(time.monotonic() of the measurement, ThreadCosts)]
_COSTS: list = []
#: measured_thread_costs measures again when its last measurement is older
#: than this (seconds): the speed-up two threads get follows the machine's
#: load, which changes; at most one measurement (a few tens of ms) per 30 s
COSTS_MAX_AGE = 30.0
#: the sync period at which measured_thread_costs measures a sync per column,
#: and the runs of each measurement it takes the least of
SYNC_PROBE = 32
COST_REPEATS = 3
#: measured_thread_costs times two threads against one on this many passes
#: over its set (about 4 ms of steps)
PARALLEL_PASSES = 2


def measured_thread_costs() -> ThreadCosts:
    """:class:`ThreadCosts` measured on a small synthetic set (8,192 rows of 32
    entries over 65,536 columns; the least of ``COST_REPEATS`` runs of each;
    a few tens of milliseconds) and kept for ``COSTS_MAX_AGE`` seconds: a pass of the serial
    kernel, one on a thread copy that never syncs, one syncing every
    ``SYNC_PROBE`` updates (the difference, per column published, is the sync
    cost), an empty threaded pass (the wake-up) and the speed-up of two
    threads over one on the same steps (which other work on the cores lowers,
    so it is measured again once the kept value is older than
    ``COSTS_MAX_AGE``: a measurement taken while the machine was busy does not
    keep a later fit on an idle machine serial)."""
    if not _COSTS or time.monotonic() - _COSTS[0][0] > COSTS_MAX_AGE:
        costs = _measure_thread_costs()
        _COSTS[:] = [(time.monotonic(), costs)]
    return _COSTS[0][1]


def _measure_thread_costs() -> ThreadCosts:
    rng = np.random.default_rng(0)
    n, r, d = 8192, 32, 65536
    cols = rng.integers(0, d, n * r)
    X = sp.csr_matrix((rng.standard_normal(n * r), cols, np.arange(0, n * r + 1, r)),
                      shape=(n, d))
    X.sum_duplicates()
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    prob = Problem(X, y, loss="squared_hinge", lam=1e-4)
    rows, spec = prob.rows_view(), prob.step_spec()
    order = rng.permutation(n).astype(np.int64)
    no_shrink = Shrinking(False, np.inf, np.inf)
    no_avg = Averaging(False, np.zeros(0), np.zeros(0, np.int64), 0)
    prox = prox_work_arrays(prob.rows, 0.0)
    nnz = float(X.nnz)
    serial, buffered, flush, sweep, wake = [], [], [], [], []
    long_order = np.concatenate([order] * PARALLEL_PASSES)
    long_serial, long_two = [], []
    two_work = ThreadWork(d, 2, 1 << 30, False, r, False)
    pool_work = ThreadWork(d, 2, 1 << 30, False, r)

    def on_copy(every):
        work = ThreadWork(d, 1, every, False, r)
        state = SDCAState(np.zeros(n), np.zeros(d), np.zeros(0), np.zeros(0, np.uint8))
        copy = work.copy(0, np.zeros(d))
        start_copy(state.v, copy)
        t0 = time.perf_counter()
        sdca_epoch(rows, spec, state, order, 0, n, 0, -1, no_shrink, no_avg, prox,
                   False, copy)
        return time.perf_counter() - t0, int(work.clock[1])

    synced, columns = [], 1
    for _ in range(COST_REPEATS):
        state = SDCAState(np.zeros(n), np.zeros(d), np.zeros(0), np.zeros(0, np.uint8))
        t0 = time.perf_counter()
        sdca_epoch(rows, spec, state, order, 0, n, 0, -1, no_shrink, no_avg, prox)
        serial.append((time.perf_counter() - t0) / nnz)
        buffered.append(on_copy(1 << 30)[0] / nnz)
        secs, columns = on_copy(SYNC_PROBE)
        synced.append(secs)
        probe = ThreadWork(d, 1, 1, False, r)
        t0 = time.perf_counter()
        start_copy(probe.local[0], probe.copy(0, state.v))
        sweep.append((time.perf_counter() - t0) / d)
        t0 = time.perf_counter()
        threaded_pass(rows, spec, state, order, 0, 0, pool_work, 0, no_shrink,
                      [prox, prox])
        wake.append(time.perf_counter() - t0)
        # the same steps on one thread and on two (no syncs but the last)
        m = long_order.shape[0]
        t0 = time.perf_counter()
        sdca_epoch(rows, spec, state, long_order, 0, m, 0, -1, no_shrink, no_avg, prox)
        long_serial.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        threaded_pass(rows, spec, state, long_order, 0, m, two_work, 0, no_shrink,
                      [prox, prox])
        long_two.append(time.perf_counter() - t0)
    # a sync per column published: what syncing every SYNC_PROBE updates adds
    # (at least a tenth of a step's entry: the difference of two noisy times)
    flush = [max(min(synced) - min(buffered) * nnz, 0.1 * min(serial) * nnz) / columns]
    # the two-thread speed-up on the steps alone: the wake-up (counted apart
    # in the model, once per pass) is taken out of the two-thread time, else
    # on these few milliseconds of steps it would pass for slow threads
    steps_two = max(min(long_two) - min(wake), min(long_serial) / 2.0)
    return ThreadCosts(min(serial), min(buffered), min(flush), min(sweep), min(wake),
                       min(2.0, min(long_serial) / steps_two))


class ThreadPlan(NamedTuple):
    """What :func:`thread_plan` decided: the threads to use, the sync period
    ``sync_every``, the predicted speed-up over one thread, why, in words,
    and whether the syncs list the changed columns (``sparse``) or sweep all
    ``d``."""
    threads: int
    sync_every: int
    speedup: float
    reason: str
    sparse: bool = True
    #: the best number of threads, whether or not they are predicted to win,
    #: and the epoch penalty of asynchrony predicted for it
    best_threads: int = 1
    penalty: float = 1.0
    #: hot-column copies (``sparse == "hot"``): the hot columns
    hot: object = None


def pass_threads(n, nnz, n_jobs) -> int:
    """The most threads a pass over ``n`` rows and ``nnz`` stored entries can
    use: ``n_jobs``, each with at least :data:`MIN_NNZ_PER_THREAD` entries (a
    step pass, or a check's certificate pass, which reads ``alpha`` and ``w``
    only and so runs on them whatever the steps do)."""
    return max(1, min(resolve_n_jobs(n_jobs), n, nnz // max(MIN_NNZ_PER_THREAD, 1)))


def thread_plan(rows, n_jobs, sync_every="auto", costs=None, hot_ok=True) -> ThreadPlan:
    """Threads or serial, predicted from the data and this machine's costs.

    Per update with ``k`` threads flushing every ``S`` updates, in the
    measured costs (:func:`measured_thread_costs`, or ``costs``):

    * one thread: ``r * step_entry`` (``r`` the mean stored entries of a row);
    * ``k`` threads: ``(r * buffered_entry + sync(S) / S) / cores``, ``cores =
      k * two_threads / 2`` (the cores the machine gives now), ``U(S)`` the
      distinct columns of ``S`` random rows (:func:`distinct_columns`): a
      sync publishes that many columns and takes about ``(k - 1) U(S)`` from
      the other threads' logs, ``sync(S) = k U(S) flush_column``, or ``U(S)
      flush_column + d sweep_column`` when ``k U(S)`` exceeds ``d /
      DENSE_REFRESH`` (a sweep refreshes every column), plus
      ``wake / n`` (one wake-up and wait per pass), times the epoch penalty
      of asynchrony ``1 + STALE_EPOCHS (k - 1) (S r / d) c^2`` (``c`` the
      mean row cosine, :func:`mean_row_cosine`; ``S r / d`` the missed
      updates per column).

    ``sync_every="auto"`` takes the ``S`` of :data:`SYNC_CHOICES` with the
    least predicted time; an integer fixes it (0: one shared ``v``, no
    flushes).  The threads are used when the predicted speed-up of the best
    ``k <= n_jobs`` is at least :data:`MIN_SPEEDUP`, and each gets at least
    :data:`MIN_NNZ_PER_THREAD` stored entries per pass."""
    K = resolve_n_jobs(n_jobs)
    if K <= 1:
        return ThreadPlan(1, 0, 1.0, "n_jobs=1")
    cap = pass_threads(rows.n, rows.nnz, K)
    if cap <= 1:
        return ThreadPlan(1, 0, 1.0, (
            f"serial: {rows.nnz} stored entries, fewer than {MIN_NNZ_PER_THREAD} for "
            f"each of 2 threads"))
    model = _ThreadModel(rows, measured_thread_costs() if costs is None else costs)
    fixed = None if sync_every == "auto" else int(sync_every or 0)
    choices = [(S, sparse) for S in (SYNC_CHOICES if fixed is None else (fixed,))
               for sparse in ((True, False) if S else (True,))]
    if fixed is None and model.overlap < WILD_OVERLAP:
        choices.append((0, True))
    elif fixed is None and hot_ok and model.hot()[0].shape[0]:
        # hot columns synced after each chunk of the pass (threaded_pass)
        choices.append((int(max(CHUNK_NNZ / max(model.r, 1.0),
                                rows.n / (MAX_CHUNKS_PER_THREAD * cap))), "hot"))
    best = max((model.predict(k, S, sparse) for k in range(2, cap + 1)
                for S, sparse in choices), key=lambda p: p[0])
    speedup, k, S, flush_share, penalty, sparse = best
    hot = model.hot() if sparse == "hot" else (None, 0.0)
    syncs = (f"one shared v, column overlap {model.overlap:.3f}" if S == 0 else
             f"copies of {hot[0].shape[0]} hot columns ({100 * hot[1]:.0f}% of the "
             f"entries), the others shared" if sparse == "hot" else
             f"{'sparse' if sparse else 'sweeping'} syncs {100 * flush_share:.0f}% of the "
             f"step cost")
    detail = (f"{k} threads predicted {speedup:.2f}x one thread with sync_every={S} "
              f"({syncs}, "
              f"{penalty:.2f}x the epochs at mean row cosine {model.cosine:.2f})")
    if speedup < MIN_SPEEDUP:
        return ThreadPlan(1, S, speedup, f"serial: {detail}, below {MIN_SPEEDUP}x", sparse,
                          k, penalty, hot[0])
    return ThreadPlan(k, S, speedup, f"threads: {detail}", sparse, k, penalty, hot[0])


def auto_sync_every(rows, n_threads=2, costs=None) -> int:
    """``sync_every="auto"`` for ``n_threads`` threads: the flush period of
    :data:`SYNC_CHOICES` with the least predicted time (:func:`thread_plan`'s
    model), whether or not threads are predicted to win."""
    model = _ThreadModel(rows, measured_thread_costs() if costs is None else costs)
    return max((model.predict(max(int(n_threads), 2), S, True) for S in SYNC_CHOICES),
               key=lambda p: p[0])[2]


def _most_held(omega, k):
    """``np.argsort(-omega, kind="stable")[:k]`` without sorting all ``d``
    counts: the ``k`` largest, ties to the lower column, largest first."""
    if omega.shape[0] <= k:
        return np.argsort(-omega, kind="stable")
    kth = omega[np.argpartition(-omega, k - 1)[k - 1]]
    above = np.flatnonzero(omega > kth)
    top = np.concatenate([above, np.flatnonzero(omega == kth)[:k - above.shape[0]]])
    return top[np.argsort(-omega[top], kind="stable")]


class _ThreadModel:
    """:func:`thread_plan`'s prediction for one data set."""

    def __init__(self, rows, costs):
        self.rows, self.costs = rows, costs
        self.r = rows.nnz / max(rows.n, 1)
        # the data's statistics, computed once per row view (solver="auto"
        # with n_jobs > 1 plans before choosing SDCA and again in its setup)
        stats = getattr(rows, "_thread_model_stats", None)
        if stats is None:
            entries = _sampled_entries(rows, COSINE_SAMPLE)
            # the counts grouped by value (U(S) is a sum over columns)
            stats = (mean_row_cosine(rows, entries=entries),
                     *grouped_column_counts(rows, entries=entries))
            rows._thread_model_stats = stats
        self.cosine, self.omega, self.multiplicity = stats
        # the sampled column overlap, sum_j omega_j^2 / (n nnz) (column_overlap)
        total = _dot(self.omega, self.multiplicity)
        self.overlap = (_dot(self.omega ** 2, self.multiplicity) / (rows.n * total)
                        if total > 0 else 0.0)
        self._U = {}

    def hot(self):
        """``(hot columns, their share of the entries)``: the fewest (at most
        HOT_MAX) most held columns whose removal leaves a sampled column
        overlap below WILD_OVERLAP (none when more are needed)."""
        found = getattr(self.rows, "_thread_hot", None)
        if found is None:
            omega = sampled_column_counts(self.rows)
            top = _most_held(omega, HOT_MAX)
            total, n = float(omega.sum()), max(self.rows.n, 1)
            left = (_dot(omega, omega) - np.cumsum(omega[top] ** 2)) / (n * max(total, 1.0))
            ok = np.flatnonzero(left < WILD_OVERLAP)
            h = int(ok[0]) + 1 if ok.size and total > 0 else 0
            found = (np.sort(top[:h]).astype(np.int64),
                     float(omega[top[:h]].sum()) / total if h else 0.0)
            self.rows._thread_hot = found
        return found

    def predict(self, k, S, sparse):
        """``(speed-up, k, S, sync share of the step cost, epoch penalty,
        sparse)`` for ``k`` threads syncing every ``S`` updates, listing the
        changed columns (``sparse``), sweeping all ``d`` at each sync, or
        copying the hot columns only (``sparse == "hot"``)."""
        c, r, n, d = self.costs, self.r, self.rows.n, self.rows.d
        stale = S * r                 # updates' entries a step may miss
        if S == 0:
            # one shared v: the serial step, nothing to sync
            step, sync = r * c.step_entry, 0.0
        elif sparse == "hot":
            hot, share = self.hot()
            step, sync = r * c.step_entry * HOT_STEP, hot.shape[0] * c.flush_column
            stale = S * r * share    # only the hot columns are ever stale
        elif sparse:
            step = r * c.buffered_entry
            # a sync publishes the thread's U(S) columns and takes the
            # others' ~(k - 1) U(S), or sweeps every column when those are
            # many (as sync_copy does)
            if S not in self._U:
                self._U[S] = (distinct_columns(self.omega, n, S, self.multiplicity)
                              if S > 0 else 0.0)
            U = self._U[S]
            sync = (U * c.flush_column + d * c.sweep_column
                    if k * U * DENSE_REFRESH > d else k * U * c.flush_column)
        else:
            # nothing listed; a sync reads and writes every column (twice a
            # refresh)
            step = r * c.step_entry
            sync = 2.0 * d * c.sweep_column
        flush = sync / S if S > 0 else 0.0
        per_column = max(stale, r) / max(d, 1)
        penalty = 1.0 + STALE_EPOCHS * (k - 1) * per_column * self.cosine ** 2
        # the cores the k threads get: k on idle cores, fewer when other work
        # holds them (measured with two threads)
        cores = k * min(c.two_threads, 2.0) / 2.0
        per_update = ((step + flush) / cores + c.wake / max(n, 1)) * penalty
        return (r * c.step_entry / per_update, k, S, flush / max(step, 1e-300), penalty,
                sparse)


# ---------------------------------------------------------- threaded passes
class ThreadWork:
    """The arrays ``k`` threads step with, allocated once per run: each
    thread's copy of the image and its :class:`ThreadCopy` arrays (``base``,
    ``mark``, ``touched``, ``seen``, ``counts``), the threads' published
    changes ``parts`` (k x d), their change logs (``k`` rings of ``L = 4 F +
    64`` columns, ``F = min(d, sync_every * longest row)`` the most one sync
    publishes) and the ``clock``.  With ``sync_every = 0`` there are none:
    every step writes the shared ``v`` (atomically when ``atomic``).  With
    ``hot`` (hot-column copies) there are none either: the threads step with
    the serial kernel on ``ext``, the image in ``ext[:d]`` and thread ``t``'s
    copy of the hot columns at ``ext[d + t P:]`` (``P`` = their number + 8),
    through rows whose hot columns are renumbered to that copy
    (:meth:`hot_view`, one index array per thread)."""

    def __init__(self, d, n_threads, sync_every, atomic, max_row, sparse=True, hot=None):
        K = int(n_threads)
        self.n_threads, self.sync_every = K, int(sync_every)
        # a bool (every addition alike) or a uint8 mask of the atomic columns
        self.atomic = atomic if isinstance(atomic, np.ndarray) else bool(atomic)
        self.sparse = bool(sparse)
        self.hot = np.asarray(hot if hot is not None and self.sync_every else [], np.int64)
        H = self.hot.shape[0]
        self.pad = H + 8
        self.ext = np.zeros(d + K * self.pad if H else 0)
        self.hot_base = np.zeros((K, self.pad))
        self._views = None
        # others may publish this many updates since a thread's last refresh
        # before it syncs ahead of its own period (staleness bounded by work)
        self.limit = 2 * max(K - 1, 1) * self.sync_every
        m = d if self.sync_every and not H else 0
        self.max_flush = int(min(d, self.sync_every * max(int(max_row), 1)))
        L = 4 * self.max_flush + 64 if m else 0
        self.clock = np.zeros(max(K, 1) * CLOCK_STRIDE, dtype=np.int64)
        self.parts = np.zeros((K if m else 0, m))
        self.logs = np.zeros((K, L), dtype=np.int64)
        self.local = [np.zeros(m) for _ in range(K)]
        self.base = [np.zeros(m) for _ in range(K)]
        self.mark = [np.zeros(m, dtype=np.uint8) for _ in range(K)]
        self.touched = [np.zeros(m + 1, dtype=np.int64) for _ in range(K)]
        # each thread's counters on cache lines of their own (a step writes
        # them: two threads' counters on one line would bounce it between
        # the cores at every step)
        pad = CLOCK_STRIDE * (1 + (K + 3) // CLOCK_STRIDE)
        self._own = np.zeros((K, 2 * pad), dtype=np.int64)
        self.seen = [self._own[k, :K] for k in range(K)]
        self.counts = [self._own[k, pad:pad + 4] for k in range(K)]
        #: each thread's CPU seconds in threaded_pass (time.thread_time)
        self.cpu = np.zeros(K)

    def prefault(self):
        """Write every page of the work arrays once (fresh zeroed pages are
        mapped on first write: tens of megabytes of page faults that would
        otherwise land in the first threaded pass, e.g. in a timed trial)."""
        for a in (self.parts, self.logs, self._own, self.ext, *self.local, *self.base,
                  *self.mark, *self.touched):
            a.fill(0)

    def hot_slots(self, rows):
        """The threads' views of ``rows`` (None: not built yet), a new list for
        new data."""
        if self._views is None or self._views[0] is not rows.indices:
            self._views = (rows.indices, [None] * self.n_threads)
        return self._views[1]

    def hot_view(self, rows, t):
        """``rows`` with hot column ``hot[s]`` renumbered to ``d + t P + s``
        (its place in ``ext``), for thread ``t``; built once per data, on the
        thread that asks (the threads build theirs at once)."""
        views = self.hot_slots(rows)
        if views[t] is None:
            d, H = self.ext.shape[0] - self.n_threads * self.pad, self.hot.shape[0]
            remap = np.arange(d, dtype=rows.indices.dtype)
            remap[self.hot] = d + t * self.pad + np.arange(H)
            out = np.empty_like(rows.indices)
            renumber(rows.indices, remap, out)
            views[t] = rows._replace(indices=out)
        return views[t]

    def copy(self, k, shared):
        """Thread ``k``'s :class:`ThreadCopy` of the image ``shared`` (None with
        ``sync_every = 0`` or hot-column copies)."""
        if not self.sync_every or self.hot.shape[0]:
            return None
        return ThreadCopy(shared, self.parts, self.base[k], self.mark[k], self.touched[k],
                          self.logs, self.clock, self.seen[k], self.counts[k], k,
                          self.sync_every, self.limit, self.max_flush, self.sparse)

    def fold(self, shared):
        """After the threads are done: ``shared += sum_t parts[t]``, and the
        parts start again from zero (hot-column mode: nothing to fold), on
        the threads; whether a KeyboardInterrupt arrived meanwhile."""
        if self.sync_every and self.parts.shape[1]:
            return fold_rows(self.parts, shared, self.n_threads)      # column blocks
        return False


def threaded_pass(rows, spec, state, order, start, stop, work, entries, shrink, prox):
    """Run ``order[start:stop]`` (no coordinate twice) on ``work.n_threads``
    threads (:class:`ThreadWork`).

    The range is cut into contiguous chunks (:func:`_chunk_bounds`; ``entries``:
    the range's estimated stored entries) that the threads take in turn, each
    running :func:`sdca_epoch` on ``state`` (``prox[k]``: its prox work arrays).
    With ``work.sync_every > 0`` each thread steps on its own copy of
    ``state.v``, taken when it starts, and syncs the columns that changed every
    ``sync_every`` updates, sooner when the others got more than ``work.limit``
    updates ahead of it, and when it is done (:class:`ThreadCopy`); with 0 every
    step writes ``state.v`` (atomically where ``work.atomic`` says so).  Shared
    by the threaded solver and CoCoA+'s local solver (:mod:`primaldual.distributed.local_sdca`).

    Returns ``(results, interrupted)`` as :func:`run_threads` does, one
    ``(status, pos, steps, accesses, max_up, max_down)`` per thread.
    """
    K = work.n_threads
    chunks = _chunk_bounds(start, stop, K, entries)
    n_chunks = chunks.shape[0] - 1
    next_chunk = itertools.count().__next__          # atomic under the GIL
    no_avg = Averaging(False, state.v[:0], np.zeros(0, np.int64), 0)
    atomic = False if work.sync_every else work.atomic
    hot, d, P = work.hot, state.v.shape[0], work.pad
    if hot.shape[0]:
        work.hot_slots(rows)          # each thread then builds its own view
        work.ext[:d] = state.v
        for t in range(K):
            work.ext[d + t * P:d + t * P + hot.shape[0]] = state.v[hot]
            work.hot_base[t, :hot.shape[0]] = state.v[hot]

    def task(k, stop_flag):
        cpu0 = time.thread_time()
        copy, local = work.copy(k, state.v), state
        if hot.shape[0]:
            local = state._replace(v=work.ext)
        elif copy is not None:
            local = state._replace(v=work.local[k])
            start_copy(local.v, copy)
        status, pos, steps, acc, up, down = 0, 0, 0, 0, 0.0, 0.0
        try:
            while not stop_flag.is_set():
                c = next_chunk()
                if c >= n_chunks:
                    break
                if THREAD_STALL is not None:
                    THREAD_STALL(k, c)
                view = work.hot_view(rows, k) if hot.shape[0] else rows
                res = sdca_epoch(view, spec, local, order, chunks[c], chunks[c + 1], 0,
                                 -1, shrink, no_avg, prox[k], atomic, copy)
                if hot.shape[0]:
                    sync_hot(work.ext, hot, d + k * P, work.hot_base[k])
                steps += res.steps
                acc += res.accesses
                up, down = max(up, res.max_up), max(down, res.max_down)
                if res.status != 0:
                    status, pos = res.status, res.pos
                    break
        finally:
            if copy is not None:
                sync_copy(local.v, copy)
            elif hot.shape[0]:
                sync_hot(work.ext, hot, d + k * P, work.hot_base[k])
            work.cpu[k] += time.thread_time() - cpu0
        return status, pos, steps, acc, up, down

    try:
        results, interrupted = run_threads(task, K)
    finally:
        folded = work.fold(state.v)   # what the threads published, even on an error
        if hot.shape[0]:
            state.v[:] = work.ext[:d]
    return results, interrupted or folded


def _chunk_bounds(start, stop, K, entries):
    """``m`` equal chunks (``entries / CHUNK_NNZ``, ``K`` to ``MAX_CHUNKS_PER_THREAD
    K``), the last ``K`` cut in 4: the threads end within a quarter chunk of each
    other (whole chunks leave one thread alone at the end for 8% of a trial)."""
    if stop <= start:
        return np.array([start, start], dtype=np.int64)       # one empty chunk
    m = int(min(MAX_CHUNKS_PER_THREAD * K, max(K, entries // CHUNK_NNZ)))
    even = np.linspace(start, stop, m + 1)
    tail = np.linspace(even[m - K], stop, 4 * K + 1)[1:] if m > K else even[1:]
    return np.unique(np.concatenate([even[:max(m - K, 0) + 1], tail]).round().astype(np.int64))


def warm_threads(rows, spec, state, work, prox):
    """Before a timed threaded pass: ``work``'s arrays paged in
    (:meth:`ThreadWork.prefault`), the threads' renumbered rows built
    (hot-column copies), and their kernel loaded and their pool woken (an
    empty :func:`threaded_pass`); ``work.cpu`` back at 0."""
    work.prefault()
    if work.hot.shape[0]:            # each thread's renumbered rows, at once
        work.hot_slots(rows)
        run_threads(lambda k, stop: work.hot_view(rows, k), work.n_threads)
    threaded_pass(rows, spec, state, np.zeros(0, np.int64), 0, 0, work, 0,
                  Shrinking(False, np.inf, np.inf), prox)
    work.cpu[:] = 0.0
