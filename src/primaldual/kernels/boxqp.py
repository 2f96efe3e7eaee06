"""Loops of the box-QP dual solver (:mod:`primaldual.solvers.box_newton`).

The dual of the hinge family, in the scaled variable ``g_i = c_i alpha_i y_i / W``
(``u_i = c_i / W``), is the box QP

    max  D(g) = sum_i g_i - 1/2 sum_i q_i g_i^2 - lam/2 ||w||^2,
         w = X^T (y g) / lam,   0 <= g_i <= hi_i,

with ``dD/dg_i = 1 - q_i g_i - y_i x_i . w`` and ``d2D/dg_i^2 = -(q_i + ||x_i||^2 / lam)``.

``cd_sweep``     one pass of exact coordinate ascent over ``order`` (Hsieh et
                 al. 2008, Algorithm 1, on this scaling), updating ``g`` and
                 ``w`` in place; returns the largest projected step taken
                 (margin units) and counts the entries read
"""
from __future__ import annotations

from typing import NamedTuple

from numba import njit

from .views import row_axpy, row_dot


class BoxQP(NamedTuple):
    """The box QP: diagonal ``q`` and upper bounds ``hi`` of ``g`` (``(n,)``,
    ``hi`` may be inf) and ``1 / lam``."""
    q: object
    hi: object
    inv_lam: float


@njit(cache=True, nogil=True)
def cd_sweep(rows, qp, order, g, w, counts):
    """Exact coordinate ascent on each ``i`` of ``order``: ``g_i <- clip(g_i +
    G_i / H_ii, 0, hi_i)``, ``w += delta y_i x_i / lam``.  ``counts[0]`` gains the
    entries read; the return value is ``max_i |delta_i| H_ii``, the largest
    gradient step in margin units (0 when nothing moved)."""
    data, indices, indptr, iptr = rows.data, rows.indices, rows.indptr, rows.iptr
    y, sq = rows.y, rows.sqnorm
    biggest = 0.0
    read = 0
    for k in range(order.shape[0]):
        i = order[k]
        start, end, off = indptr[i], indptr[i + 1], iptr[i] - indptr[i]
        h = qp.q[i] + sq[i] * qp.inv_lam
        grad = 1.0 - qp.q[i] * g[i] - y[i] * row_dot(data, indices, start, end, off, w)
        read += end - start
        if h > 0.0:
            new = g[i] + grad / h
        elif grad > 0.0:
            new = qp.hi[i]          # a row of zeros (hinge): the dual is linear in g_i
        else:
            new = 0.0 if grad < 0.0 else g[i]
        if new < 0.0:
            new = 0.0
        elif new > qp.hi[i]:
            new = qp.hi[i]
        delta = new - g[i]
        if delta != 0.0:
            row_axpy(delta * y[i] * qp.inv_lam, data, indices, start, end, off, w)
            read += end - start
            g[i] = new
            step = abs(delta) * h if h > 0.0 else abs(grad)
            if step > biggest:
                biggest = step
    counts[0] += read
    return biggest
