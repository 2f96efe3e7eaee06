"""SDCA epoch kernels (Shalev-Shwartz & Zhang, JMLR 2013).

The kernels are pure: plain arrays in, counters and a status code out, no
allocation and no Python objects.  The sample order is produced by the Python
driver (so that the RNG state is explicit and a plain-Python reference fed
the same order can reproduce every iterate) and passed in as ``order``.

The kernels maintain the dual image ``v = (1/W) sum_i c_i alpha_i x_i``; with
the L2 penalty the primal point is ``w = v / lam`` (docs/conventions.md §1).

Status codes (:mod:`.status`)
-----------------------------
``STATUS_OK``          the slice ``order[start:stop]`` was processed
``STATUS_SNAPSHOT``    stopped right after step ``snap_step`` (random output):
                       ``alpha`` is the iterate to snapshot; resume at ``pos``
``STATUS_NONFINITE``   a non-finite margin or dual value appeared at ``pos``
"""
from __future__ import annotations

import math
from typing import NamedTuple

from numba import njit

from .atomics import atomic_add
from .threadsync import atomic_load, atomic_store
from ..losses import dispatch as LD
from .prefetch import prefetch, prefetch_row
from .prox_sdca import prox_dual_step
from .views import ProxWork, RowsView, StepSpec  # noqa: F401  (the kernels' arguments)

from .status import (STATUS_NEED_UNIFORMS, STATUS_NONFINITE, STATUS_OK,  # noqa: F401
                     STATUS_SNAPSHOT)


class SDCAState(NamedTuple):
    """The iterates a kernel updates in place: ``alpha``, the dual image ``v``,
    the logistic logit cache (empty for other losses) and the shrunk flags."""
    alpha: object
    v: object
    logit: object
    shrunk: object


class Shrinking(NamedTuple):
    """Shrinking on/off and the one-sided thresholds of the current pass."""
    on: bool
    up: float
    down: float


class Averaging(NamedTuple):
    """Lazy running sums of ``alpha`` for ``output="average"`` (off: empty)."""
    on: bool
    total: object
    last: object
    T0: int


class ThreadCopy(NamedTuple):
    """One thread's side of a step run that shares the dual image with other
    threads (:func:`sdca_epoch` with ``copy``): the thread steps on its own
    copy of the image (the kernel's ``v``) and every ``every`` updates
    :func:`sync_copy` publishes its changes and takes the others', for the
    columns that changed only.

    The image of the run is ``shared + sum_t parts[t]``: ``shared`` (d) is
    read only while the threads run, and ``parts`` (k x d) holds each
    thread's published changes, row ``t`` written by thread ``t`` alone (no
    atomic instruction, no lost update); the driver folds ``parts`` into
    ``shared`` when the threads are done.

    * ``base`` (d): the image's values the copy last took; the thread's own
      unpublished change of column j is ``v[j] - base[j]``.
    * ``mark`` (uint8, d) and ``touched`` (int64, d + 1): the columns the thread
      changed since its last sync.
    * ``logs`` (int64, k x L): row ``t`` is thread ``t``'s change log, a ring
      of the columns it published, so another thread refreshes those only.
    * ``clock`` (int64): at slot ``t * CLOCK_STRIDE`` thread ``t``'s updates
      published so far, at the next slot the entries written to its log (both
      stored with release ordering after what they count).
    * ``seen`` (int64, k): how far this thread has read each log;
      ``counts = [n_touched, updates since the last sync, updates published
      in all, the others' published updates at the last refresh]``.

    With ``sparse`` False the steps list nothing and every sync is one
    sequential sweep over the ``d`` columns (publish and refresh), for data
    where a sync period touches most columns anyway; the sweep advances the
    thread's log head by ``L`` so that a reader refreshes every column.

    Staleness is bounded by work: before each step the thread compares the
    others' published updates with ``counts[3]`` and syncs first when they
    did more than ``limit`` since its last refresh (a thread descheduled for a
    while comes back to this).  A log the thread fell more than ``L -
    max_flush`` entries behind on (its writer may have overwritten it) is
    replaced by a refresh of every column."""
    shared: object
    parts: object
    base: object
    mark: object
    touched: object
    logs: object
    clock: object
    seen: object
    counts: object
    tid: int
    every: int
    limit: int
    max_flush: int
    sparse: bool


#: int64 slots between two threads' entries of ThreadCopy.clock (a cache line)
CLOCK_STRIDE = 8
#: sync_copy refreshes every column (a sequential sweep) instead of the listed
#: ones when they number more than d / DENSE_REFRESH
DENSE_REFRESH = 8
#: sync_copy prefetches the columns this many list entries ahead
PF_SYNC = 8


@njit(cache=True, nogil=True)
def others_synced(copy):
    """Updates the other threads of the run have published."""
    total = 0
    for o in range(copy.parts.shape[0]):
        if o != copy.tid:
            total += atomic_load(copy.clock, o * CLOCK_STRIDE)
    return total


@njit(cache=True, nogil=True)
def _take(v, copy, j):
    """``v[j] = base[j] =`` the run's image at column j."""
    parts = copy.parts
    s = copy.shared[j]
    for o in range(parts.shape[0]):
        s += parts[o, j]
    v[j] = s
    copy.base[j] = s


@njit(cache=True, nogil=True)
def sync_copy(v, copy):
    """Publish the thread's changes and take the others': ``parts[tid, j] +=
    v[j] - base[j]`` for the columns it touched, logged for the others; then
    ``v[j] = base[j] = shared[j] + sum_t parts[t, j]`` for those and for the
    columns in the others' logs since the last sync (every column, in one
    sequential sweep, when those number more than ``d / DENSE_REFRESH`` or a
    log was read too late).  The cost is proportional to the columns changed,
    not to ``d``."""
    parts, base, mark, touched, counts = (copy.parts, copy.base, copy.mark,
                                          copy.touched, copy.counts)
    logs, clock, seen, tid = copy.logs, copy.clock, copy.seen, copy.tid
    K = parts.shape[0]
    L = logs.shape[1]
    nt = counts[0]
    head = atomic_load(clock, tid * CLOCK_STRIDE + 1)
    if not copy.sparse or nt * DENSE_REFRESH > v.shape[0]:
        _sweep(v, copy)
        return
    for q in range(nt):
        if q + PF_SYNC < nt:
            prefetch(base, touched[q + PF_SYNC])
        j = touched[q]
        c = v[j] - base[j]
        if c != 0.0:
            parts[tid, j] += c
        mark[j] = 0
        logs[tid, (head + q) % L] = j
    atomic_store(clock, tid * CLOCK_STRIDE + 1, head + nt)
    counts[2] += counts[1]
    counts[1] = 0
    atomic_store(clock, tid * CLOCK_STRIDE, counts[2])
    counts[0] = 0
    counts[3] = others_synced(copy)
    pending = nt
    full = False
    for o in range(K):
        if o != tid:
            h = atomic_load(clock, o * CLOCK_STRIDE + 1)
            pending += h - seen[o]
            if h + copy.max_flush - seen[o] > L:
                full = True
    if full or pending * DENSE_REFRESH > v.shape[0]:
        for o in range(K):
            if o != tid:
                seen[o] = atomic_load(clock, o * CLOCK_STRIDE + 1)
        _take_all(v, copy)
        return
    for q in range(nt):
        _take(v, copy, touched[q])
    for o in range(K):
        if o == tid:
            continue
        h = atomic_load(clock, o * CLOCK_STRIDE + 1)
        start = seen[o]
        seen[o] = h
        for p in range(start, h):
            if p + PF_SYNC < h:
                jj = logs[o, (p + PF_SYNC) % L]
                for t in range(K):
                    prefetch(parts[t], jj)
            _take(v, copy, logs[o, p % L])
        if atomic_load(clock, o * CLOCK_STRIDE + 1) + copy.max_flush - start > L:
            full = True              # the writer may have overwritten what we read
    if full:
        _take_all(v, copy)


@njit(cache=True, nogil=True)
def _sweep(v, copy):
    """A sync in one sequential pass over all ``d`` columns: publish ``v[j] -
    base[j]`` and take the image; the log head jumps by ``L`` (a reader then
    refreshes every column), the list of touched columns is cleared."""
    shared, parts, base, mark, touched, counts = (copy.shared, copy.parts, copy.base,
                                                  copy.mark, copy.touched, copy.counts)
    clock, seen, tid = copy.clock, copy.seen, copy.tid
    K = parts.shape[0]
    for o in range(K):
        if o != tid:
            seen[o] = atomic_load(clock, o * CLOCK_STRIDE + 1)
    counts[3] = others_synced(copy)
    for j in range(v.shape[0]):
        c = v[j] - base[j]
        if c != 0.0:
            parts[tid, j] += c
        s = shared[j]
        for o in range(K):
            s += parts[o, j]
        v[j] = s
        base[j] = s
    for q in range(counts[0]):
        mark[touched[q]] = 0
    counts[0] = 0
    head = atomic_load(clock, tid * CLOCK_STRIDE + 1)
    atomic_store(clock, tid * CLOCK_STRIDE + 1, head + copy.logs.shape[1])
    counts[2] += counts[1]
    counts[1] = 0
    atomic_store(clock, tid * CLOCK_STRIDE, counts[2])


@njit(cache=True, nogil=True)
def _take_all(v, copy):
    """``v = base =`` the run's image, every column."""
    shared, parts, base = copy.shared, copy.parts, copy.base
    for j in range(v.shape[0]):
        s = shared[j]
        for o in range(parts.shape[0]):
            s += parts[o, j]
        v[j] = s
        base[j] = s


@njit(cache=True, nogil=True)
def start_copy(v, copy):
    """Make ``v`` (and ``base``) a fresh copy of the run's image, with the
    logs read up to now and nothing touched."""
    clock, seen = copy.clock, copy.seen
    for o in range(copy.parts.shape[0]):
        seen[o] = atomic_load(clock, o * CLOCK_STRIDE + 1)
    copy.counts[3] = others_synced(copy)
    for q in range(copy.counts[0]):
        copy.mark[copy.touched[q]] = 0
    copy.counts[0] = 0
    copy.counts[1] = 0
    _take_all(v, copy)


class EpochResult(NamedTuple):
    status: int
    pos: int
    steps: int
    accesses: int
    max_up: float
    max_down: float

#: how many rows ahead the row data and the per-row scalars are prefetched
PF_ROW = 3
PF_SCALAR = 6


@njit(cache=True, nogil=True)
def _prefetch_ahead(rows, state, order, pos, stop):
    """Start loading the row ``PF_ROW`` ahead and the per-row scalars of the row
    ``PF_SCALAR`` ahead: rows come in random order, so the hardware prefetcher
    cannot find them (see kernels/prefetch.py)."""
    if pos + PF_ROW < stop:
        prefetch_row(rows.data, rows.indices, rows.indptr, rows.iptr, order[pos + PF_ROW])
    if pos + PF_SCALAR < stop:
        far = order[pos + PF_SCALAR]
        prefetch(rows.indptr, far)
        prefetch(state.alpha, far)
        prefetch(rows.y, far)
        prefetch(rows.cw, far)
        prefetch(rows.sqnorm, far)
        if state.logit.shape[0] > 0:
            prefetch(state.logit, far)


@njit(cache=True, nogil=True)
def _margin(data, indices, v, rs, re, off, l1):
    """``x_i . v`` (``l1 = 0``) or ``x_i . S(v, l1)`` (elastic net)."""
    dot = 0.0
    if l1 > 0.0:
        for k in range(rs, re):
            vj = v[indices[k + off]]
            if vj > l1:
                dot += data[k] * (vj - l1)
            elif vj < -l1:
                dot += data[k] * (vj + l1)
    else:
        for k in range(rs, re):
            dot += data[k] * v[indices[k + off]]
    return dot


@njit(cache=True, nogil=True)
def coordinate_step(rows, spec, state, i, ai, a, prox):
    """The new ``alpha_i``: the exact maximizer of the coordinate problem at
    margin ``a`` (prox-SDCA's walk with ``l1 > 0``; the loss's cached step when
    ``state.logit`` holds a cache; else the loss's step)."""
    yi = rows.y[i]
    if prox is not None and spec.l1 > 0.0:    # a None prox: pruned at compile time
        return prox_dual_step(rows, spec, i, ai, state.v, prox)
    s = rows.cw[i] * rows.sqnorm[i] * spec.inv_W * (1.0 / spec.lam)
    if state.logit.shape[0] > 0:
        new, z = LD.cached_dual_step(spec.kind, spec.param, ai, yi, a, s, state.logit[i])
        state.logit[i] = z
        return new
    return LD.dual_step(spec.kind, spec.param, ai, yi, a, s)


@njit(cache=True, nogil=True)
def _accumulate_average(avg, i, ai, t):
    """Output averaging: ``avg.total[i]`` gains ``alpha_i`` held since its last change."""
    lo = avg.last[i] if avg.last[i] > avg.T0 else avg.T0
    if t - 1 >= lo:
        avg.total[i] += ai * (t - lo)
    avg.last[i] = t


@njit(cache=True, nogil=True)
def _add_row(v, indices, data, rs, re, off, coef, atomic, copy):
    """``v += coef x_i``: on this thread's copy (listing the changed columns and
    syncing every ``copy.every`` updates), atomically, or plainly."""
    if copy is not None and not copy.sparse:
        for k in range(rs, re):
            v[indices[k + off]] += coef * data[k]
        copy.counts[1] += 1
        if copy.counts[1] >= copy.every:
            sync_copy(v, copy)
    elif copy is not None:
        # this thread's copy: list the columns changed since the last sync
        mark, touched, counts = copy.mark, copy.touched, copy.counts
        nt = counts[0]
        for k in range(rs, re):
            j = indices[k + off]
            v[j] += coef * data[k]
            # branch-free: the slot is kept only for a column not yet listed
            touched[nt] = j
            nt += 1 - mark[j]
            mark[j] = 1
        counts[0] = nt
        counts[1] += 1
        if counts[1] >= copy.every:
            sync_copy(v, copy)
    elif atomic:
        for k in range(rs, re):
            atomic_add(v, indices[k + off], coef * data[k])
    else:
        for k in range(rs, re):
            v[indices[k + off]] += coef * data[k]


@njit(cache=True, nogil=True)
def sdca_epoch(rows, spec, state, order, start, stop, step0, snap_step, shrink, avg, prox,
               atomic=False, copy=None):
    """Run SDCA coordinate steps for ``i in order[start:stop]``.

    Each step (Procedure SDCA / SDCA-Perm) takes the margin ``a = x_i . v / lam``
    (``x_i . S(v, l1) / lam`` with ``l1 > 0``), sets ``alpha_i`` to
    :func:`coordinate_step`'s exact maximizer and adds the change to ``v``
    (:func:`_add_row`).  ``prox`` holds the elastic-net step's work arrays
    (:class:`ProxWork`; None with ``l1 = 0``: Numba prunes that branch).

    Shrinking (``shrink.on``): a coordinate at a bound or kink of its dual
    domain is marked in ``state.shrunk`` and skipped when its one-sided slopes
    satisfy ``g_plus < -shrink.down`` and ``g_minus > shrink.up`` (LIBLINEAR's
    ``PGmax_old`` / ``PGmin_old``); an interior coordinate is never shrunk.
    The largest upward (``max(g_plus, 0)``) and downward (``max(-g_minus, 0)``)
    violations over the coordinates not shrunk are returned.

    ``state.logit`` (logistic with L2) caches each sample's step start
    (:func:`~primaldual.losses.logistic.logistic_newton`; NaN: unknown); it
    changes the cost of a step, not its result.  Averaging (``avg.on``):
    ``avg.total[i]`` accumulates ``sum_{t = T0}^{T-1} alpha_i^{(t)}`` lazily.
    ``snap_step`` (-1: none) stops right after that step (random output).

    Threads: with ``atomic`` ``v`` is shared and added to atomically; with
    ``copy`` (:class:`ThreadCopy`) ``v`` is this thread's copy of
    ``copy.shared``, synced every ``copy.every`` updates or sooner when the
    others did more than ``copy.limit`` (:func:`sync_copy`).

    Returns an :class:`EpochResult` ``(status, pos, steps, accesses, max_up,
    max_down)``: ``pos`` is where processing stopped in ``order``.
    """
    data, indices, indptr, iptr = rows.data, rows.indices, rows.indptr, rows.iptr
    alpha, v, shrunk = state.alpha, state.v, state.shrunk
    accesses = 0
    max_up = 0.0
    max_down = 0.0
    inv_lam = 1.0 / spec.lam
    t = step0
    for pos in range(start, stop):
        i = order[pos]
        _prefetch_ahead(rows, state, order, pos, stop)
        if shrink.on and shrunk[i]:
            continue
        rs = indptr[i]
        re = indptr[i + 1]
        off = iptr[i] - rs
        if copy is not None and others_synced(copy) - copy.counts[3] > copy.limit:
            # the others did more than `limit` updates since this copy was
            # refreshed (this thread was descheduled, or is slow): catch up
            sync_copy(v, copy)
        a = _margin(data, indices, v, rs, re, off, spec.l1) * inv_lam
        accesses += re - rs
        ai = alpha[i]
        if shrink.on:
            gp, gm = LD.dual_slopes(spec.kind, spec.param, ai, rows.y[i], a)
            if gp < -shrink.down and gm > shrink.up:
                shrunk[i] = 1
                t += 1
                if t == snap_step:
                    return EpochResult(STATUS_SNAPSHOT, pos + 1, t, accesses, max_up, max_down)
                continue
            if gp > max_up:
                max_up = gp
            if -gm > max_down:
                max_down = -gm
        new = coordinate_step(rows, spec, state, i, ai, a, prox)
        if not (math.isfinite(new) and math.isfinite(a)):
            return EpochResult(STATUS_NONFINITE, pos, t, accesses, max_up, max_down)
        t += 1
        delta = new - ai
        if delta != 0.0:
            if avg.on:
                _accumulate_average(avg, i, ai, t)
            alpha[i] = new
            _add_row(v, indices, data, rs, re, off, rows.cw[i] * delta * spec.inv_W,
                     atomic, copy)
        if t == snap_step:
            return EpochResult(STATUS_SNAPSHOT, pos + 1, t, accesses, max_up, max_down)
    return EpochResult(STATUS_OK, stop, t, accesses, max_up, max_down)


@njit(cache=True, nogil=True)
def flush_average(alpha, avg_sum, avg_last, avg_T0, t):
    """Bring the lazy averages up to step ``t`` (exclusive upper end T = t)."""
    for i in range(alpha.shape[0]):
        lo = avg_last[i] if avg_last[i] > avg_T0 else avg_T0
        if t > lo:
            avg_sum[i] += alpha[i] * (t - lo)
        avg_last[i] = t


@njit(cache=True, nogil=True)
def modified_sgd_epoch(rows, spec, order, alpha, u):
    """Procedure Modified-SGD (SDCA paper, Section 4), one pass over ``order``.

    For t = 1..n with ``W_t = sum_{k<=t} c_k``: ``a = x_t . w^{(t-1)}`` with
    ``w^{(t-1)} = u / (lam W_{t-1})`` (zero at t = 1), ``alpha_t`` maximizes
    ``-phi*(-alpha) - a alpha - (c_t ||x_t||^2 / (2 lam W_t)) alpha^2`` and
    ``u += c_t alpha_t x_t``.  On return ``u = sum_i c_i alpha_i x_i``.
    """
    data, indices, indptr, iptr = rows.data, rows.indices, rows.indptr, rows.iptr
    sqnorm, y, cw = rows.sqnorm, rows.y, rows.cw
    kind, param, lam = spec.kind, spec.param, spec.lam
    W_prev = 0.0
    accesses = 0
    for pos in range(order.shape[0]):
        i = order[pos]
        if pos + 2 < order.shape[0]:
            prefetch_row(data, indices, indptr, iptr, order[pos + 2])
        rs = indptr[i]
        re = indptr[i + 1]
        off = iptr[i] - rs
        a = 0.0
        if W_prev > 0.0:
            dot = 0.0
            for k in range(rs, re):
                dot += data[k] * u[indices[k + off]]
            a = dot / (lam * W_prev)
        W_t = W_prev + cw[i]
        s = cw[i] * sqnorm[i] / (lam * W_t)
        new = LD.dual_step(kind, param, 0.0, y[i], a, s)
        if not (math.isfinite(new) and math.isfinite(a)):
            return STATUS_NONFINITE, pos, accesses
        alpha[i] = new
        accesses += re - rs
        coef = cw[i] * new
        if coef != 0.0:
            for k in range(rs, re):
                u[indices[k + off]] += coef * data[k]
        W_prev = W_t
    return STATUS_OK, order.shape[0], accesses
