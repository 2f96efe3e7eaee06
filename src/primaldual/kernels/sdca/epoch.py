"""SDCA epoch kernels (Shalev-Shwartz & Zhang, JMLR 2013).

The kernels are pure: plain arrays in, counters and a status code out, no
allocation and no Python objects.  The sample order is produced by the Python
driver (so that the RNG state is explicit and a plain-Python reference fed
the same order can reproduce every iterate) and passed in as ``order``.

The kernels maintain the dual image ``v = (1/W) sum_i c_i alpha_i x_i``; with
the L2 penalty the primal point is ``w = v / lam`` (docs/conventions.md §1).

Status codes (:mod:`primaldual.kernels.status`)
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

from ...losses import dispatch as LD
from ..atomics import add_entry, any_atomic
from ..prefetch import prefetch, prefetch_columns, prefetch_row
from ..views import ProxWork, RowsView, StepSpec  # noqa: F401  (the kernels' arguments)
from ..status import (STATUS_NEED_UNIFORMS, STATUS_NONFINITE, STATUS_OK,  # noqa: F401
                      STATUS_SNAPSHOT)
from .copies import ThreadCopy, others_synced, sync_copy  # noqa: F401
from .prox import prox_dual_step


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


class EpochResult(NamedTuple):
    status: int
    pos: int
    steps: int
    accesses: int
    max_up: float
    max_down: float

#: how many rows ahead the row data and the per-row scalars are prefetched
PF_ROW = 3
#: how many rows ahead the image's entries in the row's columns are prefetched
#: for writing (0: not), where the image has at least PF_V_MIN_COLUMNS entries
#: (1 MB: beyond the caches it pays, 11-25% of a serial pass at d = 0.8-1.4M
#: and 3-5% of a threaded one at d = 200k; in them it costs 4-12%, at d = 50k)
PF_V = 1
PF_V_MIN_COLUMNS = 131_072
PF_SCALAR = 6


@njit(cache=True, nogil=True, inline="always")
def _add_row(v, indices, data, rs, re, off, coef, atomic, copy):
    """``v += coef x_i``: on this thread's copy (listing the changed columns and
    syncing every ``copy.every`` updates), or on the shared ``v``, atomically
    where ``atomic`` (a bool, or a uint8 mask over the columns) says so."""
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
    elif any_atomic(atomic):
        for k in range(rs, re):
            add_entry(v, indices[k + off], coef * data[k], atomic)
    else:
        for k in range(rs, re):
            v[indices[k + off]] += coef * data[k]


@njit(cache=True, nogil=True)
def sdca_epoch(rows, spec, state, order, start, stop, step0, snap_step, shrink, avg, prox,
               atomic=False, copy=None):
    """SDCA coordinate steps for ``i in order[start:stop]`` (Procedure SDCA).

    A step takes the margin ``a = x_i . v / lam`` (``x_i . S(v, l1) / lam``),
    sets ``alpha_i`` to the exact coordinate maximizer (the loss's ``dual_step``,
    from ``state.logit``'s cached float where the loss keeps one; prox-SDCA's
    walk with ``l1 > 0``, ``prox`` its work arrays or None) and adds the change
    to ``v`` (:func:`_add_row`; ``atomic`` or a thread's ``copy``, which syncs).
    ``shrink``: LIBLINEAR's one-sided test on the slopes marks ``state.shrunk``;
    the largest violations are returned.  ``avg``: lazy sums of ``alpha`` for
    ``output="average"``; ``snap_step`` (-1: none) stops after that step.
    Returns an :class:`EpochResult` (``pos``: where processing stopped).
    """
    data, indices, indptr, iptr = rows.data, rows.indices, rows.indptr, rows.iptr
    sqnorm, y, cw = rows.sqnorm, rows.y, rows.cw
    kind, param, l1, inv_W = spec.kind, spec.param, spec.l1, spec.inv_W
    alpha, v, logit, shrunk = state.alpha, state.v, state.logit, state.shrunk
    shrinking, shrink_up, shrink_down = shrink.on, shrink.up, shrink.down
    averaging, avg_sum, avg_last, avg_T0 = avg.on, avg.total, avg.last, avg.T0
    accesses = 0
    max_up = 0.0
    max_down = 0.0
    inv_lam = 1.0 / spec.lam
    pf_v = PF_V > 0 and v.shape[0] >= PF_V_MIN_COLUMNS
    t = step0
    for pos in range(start, stop):
        i = order[pos]
        if pos + PF_ROW < stop:     # rows come in random order: load ahead
            prefetch_row(data, indices, indptr, iptr, order[pos + PF_ROW])
        if pf_v and pos + PF_V < stop:   # the image's lines of a nearer row
            prefetch_columns(v, indices, indptr, iptr, order[pos + PF_V])
        if pos + PF_SCALAR < stop:
            far = order[pos + PF_SCALAR]
            prefetch(indptr, far)
            prefetch(alpha, far)
            prefetch(y, far)
            prefetch(cw, far)
            prefetch(sqnorm, far)
            if logit.shape[0] > 0:
                prefetch(logit, far)
        if shrinking and shrunk[i]:
            continue
        rs = indptr[i]
        re = indptr[i + 1]
        off = iptr[i] - rs
        if copy is not None:
            if others_synced(copy) - copy.counts[3] > copy.limit:
                sync_copy(v, copy)      # the others got far ahead: catch up first
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
        a = dot * inv_lam
        accesses += re - rs
        ai = alpha[i]
        yi = y[i]
        if shrinking:
            gp, gm = LD.dual_slopes(kind, param, ai, yi, a)
            if gp < -shrink_down and gm > shrink_up:
                shrunk[i] = 1
                t += 1
                if t == snap_step:
                    return EpochResult(STATUS_SNAPSHOT, pos + 1, t, accesses, max_up, max_down)
                continue
            if gp > max_up:
                max_up = gp
            if -gm > max_down:
                max_down = -gm
        # the step: the exact maximizer of the coordinate problem
        if prox is not None and l1 > 0.0:    # a None prox: pruned at compile time
            new = prox_dual_step(rows, spec, i, ai, v, prox)
        elif logit.shape[0] > 0:             # the loss's step from its cached float
            new, z = LD.cached_dual_step(kind, param, ai, yi, a,
                                         cw[i] * sqnorm[i] * inv_W * inv_lam, logit[i])
            logit[i] = z
        else:
            new = LD.dual_step(kind, param, ai, yi, a, cw[i] * sqnorm[i] * inv_W * inv_lam)
        if not (math.isfinite(new) and math.isfinite(a)):
            return EpochResult(STATUS_NONFINITE, pos, t, accesses, max_up, max_down)
        t += 1
        delta = new - ai
        if delta != 0.0:
            if averaging:
                lo = avg_last[i] if avg_last[i] > avg_T0 else avg_T0
                if t - 1 >= lo:
                    avg_sum[i] += ai * (t - lo)
                avg_last[i] = t
            alpha[i] = new
            _add_row(v, indices, data, rs, re, off, cw[i] * delta * inv_W, atomic, copy)
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
