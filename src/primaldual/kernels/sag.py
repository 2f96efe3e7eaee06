"""SAG kernel (Le Roux, Schmidt & Bach, NIPS 2012) with just-in-time sparse updates.

Problem: ``min_w (1/W) sum_i c_i phi_i(x_i . w) + lam/2 ||w||^2``.  SAG keeps
the last derivative ``g_i = phi_i'(x_i . w)`` seen for every sample and the
aggregate ``d = (1/W) sum_i c_i g_i x_i``.  Iteration t (sample i drawn by
the driver)::

    g_new = phi_i'(x_i . w);  d += (c_i/W) (g_new - g_i) x_i;  g_i = g_new
    w <- (1 - eta lam) w - eta d

(the L2 term's gradient is used exactly, as in the paper's regularized
experiments).  Between two touches of coordinate ``j``, ``d_j`` is constant
and ``w_j`` follows the affine recursion ``w <- c w - eta d_j``
(``c = 1 - eta lam``) with fixed point ``w* = -d_j/lam``, so ``k`` missed
steps are applied in O(1): ``w_j <- w* + c^k (w_j - w*)``.  Each iteration
costs O(nnz(x_i)).

:func:`sag_run` takes a few structured arguments (NamedTuples, compiled by
Numba into structs): the rows (:class:`~primaldual.kernels.views.RowsView`),
the problem (:class:`~primaldual.kernels.views.StepSpec`), the iterates
(:class:`SAGState`); it returns a :class:`SAGResult`.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from numba import njit

from ..losses import dispatch as L
from .prefetch import prefetch_row

from .status import STATUS_NONFINITE, STATUS_OK  # noqa: F401


class SAGState(NamedTuple):
    """The iterates, updated in place: the last derivative ``grad`` (n) seen for
    every sample, ``w`` (d; ``w_j`` current up to iteration ``last[j]``), the
    aggregate ``d`` (d) and ``last`` (d, int)."""
    grad: object
    w: object
    d: object
    last: object


class SAGResult(NamedTuple):
    """Status code (:mod:`.status`), iterations done, feature accesses."""
    status: int
    iterations: int
    accesses: int


@njit(cache=True, nogil=True)
def _late(wj, k, dj, eta, lam, logc):
    if k <= 0:
        return wj
    ws = -dj / lam
    return wj + math.expm1(k * logc) * (wj - ws)


@njit(cache=True, nogil=True)
def sag_run(rows, spec, eta, state, order, t0):
    """SAG iterations ``t0, t0+1, ...`` over the sample indices in ``order``.

    ``rows`` (:class:`~primaldual.kernels.views.RowsView`; reads ``data``,
    ``indices``, ``indptr``, ``iptr``, ``y`` and the weights ``cw``), ``spec``
    (:class:`~primaldual.kernels.views.StepSpec`; ``kind``, ``param``, ``lam``,
    ``inv_W``), the step ``eta``, ``state`` (:class:`SAGState`, updated in
    place; ``last[j]`` is the iteration up to which ``w_j`` is current).
    Returns a :class:`SAGResult` ``(status, iterations done, feature accesses)``.
    """
    data, indices, indptr, iptr = rows.data, rows.indices, rows.indptr, rows.iptr
    y, cw = rows.y, rows.cw
    kind, param, lam, inv_W = spec.kind, spec.param, spec.lam, spec.inv_W
    grad, w, d, last = state.grad, state.w, state.d, state.last
    logc = math.log1p(-eta * lam)
    c = 1.0 - eta * lam
    acc = 0
    for it in range(order.shape[0]):
        t = t0 + it
        i = order[it]
        if it + 2 < order.shape[0]:
            prefetch_row(data, indices, indptr, iptr, order[it + 2])
        rs = indptr[i]
        re = indptr[i + 1]
        off = iptr[i] - rs
        a = 0.0
        for k in range(rs, re):
            j = indices[k + off]
            if last[j] < t:
                w[j] = _late(w[j], t - last[j], d[j], eta, lam, logc)
                last[j] = t
            a += data[k] * w[j]
        acc += re - rs
        if not math.isfinite(a):
            return SAGResult(STATUS_NONFINITE, it, acc)
        g = L.derivative(kind, param, a, y[i])
        coef = cw[i] * inv_W * (g - grad[i])
        grad[i] = g
        for k in range(rs, re):
            j = indices[k + off]
            if coef != 0.0:
                d[j] += coef * data[k]
            w[j] = c * w[j] - eta * d[j]
            last[j] = t + 1
    return SAGResult(STATUS_OK, order.shape[0], acc)


@njit(cache=True, nogil=True)
def sag_current_w(w, d, last, t, eta, lam, out):
    """out = w at iteration t for every coordinate (state untouched)."""
    logc = math.log1p(-eta * lam)
    for j in range(w.shape[0]):
        out[j] = _late(w[j], t - last[j], d[j], eta, lam, logc)
