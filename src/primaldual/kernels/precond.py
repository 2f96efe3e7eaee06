"""The local preconditioner of the distributed Newton-CG (DiSCO-style).

``sgs_solve`` applies ``z ~ (A_k + lam' I)^{-1} r`` with
``A_k = sum_i a_i x_i x_i^T`` over one partition's rows, by symmetric
Gauss-Seidel sweeps on the dual of the ridge system: with
``z = r / lam' - X^T beta / lam'`` each coordinate step is

    beta_i += (a_i x_i . z - beta_i) / (1 + a_i ||x_i||^2 / lam')

(SDCA's exact step for the squared loss, Shalev-Shwartz & Zhang 2013), in
the order ``0..n-1`` then ``n-1..0``.  From ``beta = 0`` and a fixed number of
double sweeps the map ``r -> z`` is linear, symmetric and positive definite
(between ``(A_k + lam' I)^{-1}`` and ``I / lam'``), so preconditioned CG keeps
its guarantees.  Rows with ``a_i = 0`` (the flat side of the squared hinge)
are skipped.

``dual_cd`` solves GIANT's local Newton system ``(A_k + lam I) p = -g`` by
the same coordinate steps, as a solver rather than a fixed map: the dual of
``min_p 1/2 sum_i a_i (x_i . p)^2 + lam/2 ||p||^2 + g . p`` is
``D(beta) = -sum_i beta_i^2 / (2 a_i) - lam/2 ||p(beta)||^2`` with
``p(beta) = -(g + X^T beta) / lam``, and the duality gap is
``sum_i (a_i x_i . p - beta_i)^2 / (2 a_i)``.  Epochs run coordinate steps
until the gap, summed over an epoch at the points the steps saw (as
LIBLINEAR's dual solvers test their stale projected gradients), is at most
``tol (-D(beta))``.  Were that the exact gap, ``Q(p) - Q* <= tol/(1-tol)
(Q(0) - Q*)``: a relative error of at most ``sqrt(tol/(1-tol))`` in the
``A_k + lam I`` norm; the summed gap, which costs no pass, is an estimate
(measured up to 1.3 times that bound on the squared hinge).  Each epoch
takes a new random permutation: one order swept again stalled on text
whose rows share a direction (cyclic coordinate descent's worst case).
"""
from __future__ import annotations

import math
from typing import NamedTuple

from numba import njit

from .status import STATUS_NONFINITE, STATUS_OK
from .views import row_axpy, row_dot

__all__ = ["LocalQuad", "DualCDState", "dual_cd", "sgs_solve"]


class LocalQuad(NamedTuple):
    """The local quadratic of :func:`dual_cd`: curvatures ``a`` (n_k,), the
    linear term ``g`` (d,), ``lam``, the relative gap ``tol`` and the epochs
    at most."""
    a: object
    g: object
    lam: float
    tol: float
    max_epochs: int


class DualCDState(NamedTuple):
    """``beta`` (n_k,) and ``p = -(g + X^T beta) / lam`` (d,), updated in
    place; ``order`` (E n_k,) E permutations of the rows, one an epoch."""
    beta: object
    p: object
    order: object


@njit(cache=True, nogil=True, inline="always")
def _coordinate_step(data, indices, start, end, off, ai, sqnorm_i, lamp, beta, i, z):
    """The exact step on ``beta_i`` of ``D(beta)`` (module docstring, with
    ``lam'`` for ``lam``), ``z = -(g + X^T beta) / lam'`` kept in step; returns
    the residual ``a_i x_i . z - beta_i`` before it."""
    res = ai * row_dot(data, indices, start, end, off, z) - beta[i]
    delta = res / (1.0 + ai * sqnorm_i / lamp)
    if delta != 0.0:
        beta[i] += delta
        row_axpy(-delta / lamp, data, indices, start, end, off, z)
    return res


@njit(cache=True, nogil=True)
def sgs_solve(data, indices, indptr, iptr, a, sqnorm, lamp, sweeps, z, beta):
    """``sweeps`` forward-and-backward passes; ``z`` holds ``r / lam'`` on entry
    and the preconditioned vector on exit; ``beta`` (zeros on entry) the dual."""
    n = indptr.shape[0] - 1
    for _ in range(sweeps):
        for p in range(2 * n):
            i = p if p < n else 2 * n - 1 - p
            ai = a[i]
            if ai == 0.0:
                continue
            _coordinate_step(data, indices, indptr[i], indptr[i + 1], iptr[i] - indptr[i],
                             ai, sqnorm[i], lamp, beta, i, z)


@njit(cache=True, nogil=True)
def dual_cd(rows, quad, state):
    """Epochs of exact dual coordinate steps on :class:`LocalQuad` (see the
    module docstring) from ``state``, one a permutation of ``state.order``,
    at most ``quad.max_epochs``; ``rows`` a
    :class:`~primaldual.kernels.views.RowsView` of the partition (``y``,
    ``cw`` unread).  Returns ``(status, epochs, gap, dual, done)``: the last
    epoch's summed gap, ``D(beta)`` at its end, and whether it met ``tol``."""
    a, lam, beta, p, order = quad.a, quad.lam, state.beta, state.p, state.order
    n = a.shape[0]
    epochs = min(quad.max_epochs, order.shape[0] // max(n, 1))
    gap = 0.0
    dual = 0.0
    for ep in range(epochs):
        gap = 0.0
        for t in range(ep * n, (ep + 1) * n):
            i = order[t]
            ai = a[i]
            if ai == 0.0:
                continue
            start = rows.indptr[i]
            res = _coordinate_step(rows.data, rows.indices, start, rows.indptr[i + 1],
                                   rows.iptr[i] - start, ai, rows.sqnorm[i], lam, beta, i, p)
            gap += res * res / (2.0 * ai)
        dual = 0.0
        for i in range(n):
            if a[i] > 0.0:
                dual -= beta[i] * beta[i] / (2.0 * a[i])
        pp = 0.0
        for j in range(p.shape[0]):
            pp += p[j] * p[j]
        dual -= 0.5 * lam * pp
        if not (math.isfinite(gap) and math.isfinite(dual)):
            return STATUS_NONFINITE, ep + 1, gap, dual, False
        if gap <= quad.tol * (-dual):
            return STATUS_OK, ep + 1, gap, dual, True
    return STATUS_OK, epochs, gap, dual, False
