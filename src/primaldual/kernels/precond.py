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
"""
from __future__ import annotations

from numba import njit

from .views import row_axpy, row_dot


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
            start = indptr[i]
            end = indptr[i + 1]
            off = iptr[i] - start
            xz = row_dot(data, indices, start, end, off, z)
            delta = (ai * xz - beta[i]) / (1.0 + ai * sqnorm[i] / lamp)
            if delta != 0.0:
                beta[i] += delta
                row_axpy(-delta / lamp, data, indices, start, end, off, z)
