"""Loops of the interior-point method (:mod:`primaldual.solvers.ipm`) that numpy
makes several passes and temporaries for.

``longest_step``  the largest step in (0, 1] that keeps four slack vectors
                  nonnegative (numpy: a boolean mask, two gathers and a
                  division per vector)
``scale_rows``    ``out[i, :] = X[i, :] * r[i]`` (numpy broadcasts a column
                  over a short inner dimension, element by element)

Both compute exactly the floating-point values of their numpy forms, so the
iterates do not change.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _step_bound(x, dx, sign):
    """min(1, min over sign dx_i < 0 of -x_i / (sign dx_i)), and 1 when a ratio is
    NaN (as ``min(1.0, np.min(ratios))`` in Python, whose ``min`` keeps 1.0
    against a NaN)."""
    best = 1.0
    for i in range(x.shape[0]):
        step = sign * dx[i]
        if step < 0.0:
            r = -x[i] / step
            if r != r:
                return 1.0
            if r < best:
                best = r
    return best


@njit(cache=True, nogil=True)
def longest_step(pl, ph, s, t, dp, ds, dt):
    """The largest ``a`` in (0, 1] with ``pl + a dp``, ``ph - a dp``, ``s + a ds``
    and ``t + a dt`` all >= 0 (1-D arrays, ``pl, ph, s, t > 0``)."""
    return min(_step_bound(pl, dp, 1.0), _step_bound(ph, dp, -1.0),
               _step_bound(s, ds, 1.0), _step_bound(t, dt, 1.0))


@njit(cache=True, nogil=True)
def scale_rows(X, r, out):
    """``out[i, j] = X[i, j] * r[i]`` for a C-ordered ``(n, d)`` ``X``."""
    n, d = X.shape
    for i in range(n):
        ri = r[i]
        for j in range(d):
            out[i, j] = X[i, j] * ri
