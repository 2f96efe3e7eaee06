"""The sequential dual method for the Crammer-Singer multiclass SVM (Keerthi,
Sundararajan, Chang, Hsieh & Lin, KDD 2008; LIBLINEAR ``-s 4``).

In LIBLINEAR's scaling the dual is::

    min_beta  1/2 ||coef||_F^2 - sum_i beta_{i, y_i},   coef = sum_i x_i^T beta_i
    s.t.      sum_m beta_im = 0,   beta_im <= C_i 1[m = y_i]

with ``C_i = c_i / (W lam)`` (docs/multiclass-models.md).  One step takes a
row ``i`` and minimizes exactly over ``beta_i`` (K values), the others fixed:
with ``A = ||x_i||^2`` and ``B_m = x_i . coef_m + 1[m != y_i] - A beta_im``
the minimizer is ``beta_im = min(C_i 1[m = y_i], (theta - B_m) / A)`` where
``theta`` solves ``sum_m max(0, D_m - theta) = A C_i`` with ``D = B + A C_i
e_{y_i}``: the water level over the sorted ``D`` (Keerthi et al., Sec. 3).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .status import STATUS_NONFINITE, STATUS_OK

__all__ = ["CSRows", "CSWork", "cs_epoch", "cs_subproblem"]


class CSRows(NamedTuple):
    """The rows as :mod:`primaldual.rows` presents them, ``||x_i||^2``, the
    labels (int64) and the bounds ``C_i``."""
    data: object
    indices: object
    indptr: object
    iptr: object
    sqnorm: object
    y: object
    C: object


class CSWork(NamedTuple):
    """Work arrays of length K: scores, B, the sorted D and the new beta_i."""
    z: object
    B: object
    D: object
    new: object


@njit(cache=True, nogil=True)
def cs_subproblem(A, C, yi, B, D, new):
    """The exact minimizer over beta_i (module docstring) into ``new``."""
    K = B.shape[0]
    for m in range(K):
        D[m] = B[m]
    D[yi] += A * C
    D.sort()                                    # ascending: read from the end
    theta = D[K - 1] - A * C
    r = 1
    while r < K and theta < r * D[K - 1 - r]:
        theta += D[K - 1 - r]
        r += 1
    theta /= r
    for m in range(K):
        v = (theta - B[m]) / A
        cap = C if m == yi else 0.0
        new[m] = v if v < cap else cap


@njit(cache=True, nogil=True)
def cs_epoch(rows, order, beta, coef, work):
    """One pass of exact block steps over the rows in ``order``; updates
    ``beta`` (n, K) and ``coef`` (d, K) in place.  Rows with ``||x_i|| = 0``
    are skipped (the driver sets their optimal beta_i once).  Returns a
    status code (:mod:`primaldual.kernels.status`)."""
    K = coef.shape[1]
    z, B, D, new = work.z, work.B, work.D, work.new
    for t in range(order.shape[0]):
        i = order[t]
        A = rows.sqnorm[i]
        if A == 0.0:
            continue
        start = rows.indptr[i]
        end = rows.indptr[i + 1]
        off = rows.iptr[i] - start
        for m in range(K):
            z[m] = 0.0
        for k in range(start, end):
            x = rows.data[k]
            j = rows.indices[k + off]
            for m in range(K):
                z[m] += x * coef[j, m]
        yi = rows.y[i]
        for m in range(K):
            B[m] = z[m] - A * beta[i, m] + (0.0 if m == yi else 1.0)
        cs_subproblem(A, rows.C[i], yi, B, D, new)
        moved = False
        for m in range(K):
            new[m] -= beta[i, m]                # now the change
            if new[m] != 0.0:
                moved = True
            beta[i, m] += new[m]
        if not moved:
            continue
        for k in range(start, end):
            x = rows.data[k]
            j = rows.indices[k + off]
            for m in range(K):
                coef[j, m] += new[m] * x
        if not np.isfinite(beta[i, yi]):
            return STATUS_NONFINITE
    return STATUS_OK
