"""Prox-SDCA kernels for the elastic net (Shalev-Shwartz & Zhang, "Accelerated
proximal stochastic dual coordinate ascent for regularized loss minimization",
Math. Programming 2016 / ICML 2014; Prox-SDCA, Option I: exact maximization).

With ``g(w) = lam/2 ||w||^2 + l1 ||w||_1`` the dual is
``D(alpha) = (1/W) sum_i c_i (-phi_i*(-alpha_i)) - g*(v)`` with
``g*(v) = sum_j max(|v_j| - l1, 0)^2 / (2 lam)`` and ``w(v) = S(v, l1)/lam``.
The exact coordinate step maximizes over ``delta`` (divided by ``c_i/W``)::

    H(delta) = -phi_i*(-(alpha_i + delta)) - G(delta),
    G(delta) = (W/c_i) g*(v + kappa delta x_i),       kappa = c_i / W.

``G`` is convex, C^1 and piecewise quadratic along the line: coordinate ``j``
contributes ``max(|v_j + kappa x_ij delta| - l1, 0)^2 / (2 lam kappa)`` whose
breakpoints are ``delta = (+-l1 - v_j)/(kappa x_ij)``.  Its derivative is
``G'(delta) = x_i . w(v + kappa delta x_i)`` (the margin at the moved point),
piecewise linear: on a segment where coordinate ``j`` has state
``s_j in {-1, 0, +1}`` (``v_j(delta)`` below ``-l1``, inside, above ``l1``)::

    G'(delta) = A + B delta,  A = sum_{s_j != 0} x_ij (v_j - s_j l1)/lam,
                              B = sum_{s_j != 0} kappa x_ij^2 / lam.

On such a segment ``H`` equals ``-phi*(-(alpha + delta)) - A delta - B delta^2/2``
(+ const), whose maximizer is the SDCA closed form / Newton step
``dual_step(alpha, a=A, s=B)``.  ``H`` is concave, so the global maximizer is
found by walking the segments from ``delta = 0`` in the direction of ascent,
taking breakpoints in order (a binary heap: O(nnz) to build, O(log nnz) per
crossing, so at worst O(nnz log nnz) per step) until the segment's maximizer
falls inside the segment.  Because ``G'`` is continuous, a maximizer at a
breakpoint is detected whichever side's (A, B) is used.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ...losses import dispatch as L
from ..views import ProxWork


@njit(cache=True, nogil=True)
def _sift_down(keys, heap, start, size):
    pos = start
    while True:
        left = 2 * pos + 1
        if left >= size:
            return
        small = left
        right = left + 1
        if right < size and keys[heap[right]] < keys[heap[left]]:
            small = right
        if keys[heap[small]] < keys[heap[pos]]:
            tmp = heap[pos]
            heap[pos] = heap[small]
            heap[small] = tmp
            pos = small
        else:
            return


@njit(cache=True, nogil=True)
def _contrib(x, vj, s, l1, lam):
    return x * (vj - s * l1) / lam


class RowSegment(NamedTuple):
    """Row ``i`` as the step reads it: its values ``data[start:end]``, the column of
    ``data[k]`` at ``indices[k + off]``, its label ``y`` and ``kappa = c_i / W``."""
    data: object
    indices: object
    start: int
    end: int
    off: int
    y: float
    kappa: float


@njit(cache=True, nogil=True)
def _walk(row, spec, alpha, v, work, dirn):
    """Maximize H along direction ``dirn`` (+1 right, -1 left) from delta = 0
    (``row`` a :class:`RowSegment`, the other arguments as in
    :func:`prox_dual_step`).

    Returns the new alpha (or ``alpha`` itself with a flag when the first
    segment's maximizer points the other way).
    """
    data, indices, rs, re, off = row.data, row.indices, row.start, row.end, row.off
    y, kappa = row.y, row.kappa
    kind, param, lam, l1 = spec.kind, spec.param, spec.lam, spec.l1
    keys, dA, dB, heap = work.keys, work.dA, work.dB, work.heap
    A = 0.0
    B = 0.0
    ne = 0
    for k in range(rs, re):
        x = data[k]
        if x == 0.0:
            continue
        vj = v[indices[k + off]]
        b1 = (-l1 - vj) / (kappa * x)
        b2 = (l1 - vj) / (kappa * x)
        e1 = b1 if b1 < b2 else b2
        e2 = b2 if b1 < b2 else b1
        sb = -1.0 if x > 0.0 else 1.0          # state before e1
        sa = -sb                               # state after e2
        slope = kappa * x * x / lam
        if dirn > 0:
            if e2 <= 0.0:
                st = sa
            elif e1 <= 0.0:
                st = 0.0
            else:
                st = sb
            if e1 > 0.0:   # leave sb at e1
                keys[ne] = e1
                dA[ne] = -_contrib(x, vj, sb, l1, lam)
                dB[ne] = -slope
                ne += 1
            if e2 > 0.0:   # enter sa at e2
                keys[ne] = e2
                dA[ne] = _contrib(x, vj, sa, l1, lam)
                dB[ne] = slope
                ne += 1
        else:
            if e1 >= 0.0:
                st = sb
            elif e2 >= 0.0:
                st = 0.0
            else:
                st = sa
            if e2 < 0.0:   # leave sa at e2 (moving left)
                keys[ne] = -e2
                dA[ne] = -_contrib(x, vj, sa, l1, lam)
                dB[ne] = -slope
                ne += 1
            if e1 < 0.0:   # enter sb at e1
                keys[ne] = -e1
                dA[ne] = _contrib(x, vj, sb, l1, lam)
                dB[ne] = slope
                ne += 1
        if st != 0.0:
            A += _contrib(x, vj, st, l1, lam)
            B += slope
    for q in range(ne):
        heap[q] = q
    for q in range(ne // 2 - 1, -1, -1):
        _sift_down(keys, heap, q, ne)
    lo = 0.0
    size = ne
    first = True
    while True:
        hi = keys[heap[0]] if size > 0 else math.inf
        new = L.dual_step(kind, param, alpha, y, A, B)
        step = (new - alpha) * dirn
        if first:
            first = False
            if step <= 0.0:
                return alpha, False
        if step <= hi:
            if step < lo:
                return alpha + dirn * lo, True
            return new, True
        # cross the next breakpoint
        q = heap[0]
        A += dA[q]
        B += dB[q]
        if B < 0.0:
            B = 0.0
        lo = hi
        size -= 1
        heap[0] = heap[size]
        _sift_down(keys, heap, 0, size)


# prox_dual_step is inlined into its callers and hands _walk (called, not inlined)
# only the row's segment: as a called function taking the whole RowsView the
# elastic-net SDCA epoch was 4-6% slower than with loose arrays, and with _walk
# inlined too the L2 epoch lost ~3% (measured with benchmarks/bench_kernel_ab.py)
@njit(cache=True, nogil=True, inline="always")
def prox_dual_step(rows, spec, i, alpha, v, work):
    """Exact maximizer (new alpha_i) of the elastic-net SDCA coordinate problem of
    row ``i``.

    ``rows`` (:class:`~primaldual.kernels.views.RowsView`): the row ``x_i``, its
    label ``y_i`` and weight ``c_i``; ``spec``
    (:class:`~primaldual.kernels.views.StepSpec`): the loss, ``lam``, ``l1`` and
    ``1/W`` (so ``kappa = c_i / W``); ``alpha`` the current ``alpha_i``; ``v``
    the dual image the step reads; ``work``
    (:class:`~primaldual.kernels.views.ProxWork`): ``keys, dA, dB`` (float64)
    and ``heap`` (int64), of length at least ``2 * nnz(x_i)``
    (:func:`prox_work_arrays`).
    """
    rs = rows.indptr[i]
    row = RowSegment(rows.data, rows.indices, rs, rows.indptr[i + 1], rows.iptr[i] - rs,
                     rows.y[i], rows.cw[i] * spec.inv_W)
    new, moved = _walk(row, spec, alpha, v, work, 1)
    if moved:
        return new
    new, moved = _walk(row, spec, alpha, v, work, -1)
    if moved:
        return new
    return alpha


def prox_work_arrays(rows, l1):
    """The work arrays (:class:`~primaldual.kernels.views.ProxWork`) of
    :func:`prox_dual_step`: two breakpoints per nonzero of the longest row.
    None when ``l1 == 0``: an epoch kernel given None compiles without the
    elastic-net step (only the branch the call uses is compiled)."""
    if not l1 > 0:
        return None
    size = 2 * int(rows.row_nnz.max(initial=0))
    return ProxWork(np.empty(size), np.empty(size), np.empty(size),
                    np.empty(size, dtype=np.int64))
