"""Loops of the interior-point method (:mod:`primaldual.solvers.ipm`) that numpy
makes several passes and temporaries for.

``longest_step``  the largest step in (0, 1] that keeps four slack vectors
                  nonnegative (numpy: a boolean mask, two gathers and a
                  division per vector)
``scale_rows``    ``out[i, :] = X[i, :] * r[i]`` (numpy broadcasts a column
                  over a short inner dimension, element by element)
``kkt_parts``, ``newton_rhs``, ``block_step``, ``slack_steps``  the elementwise
                  work of an iteration over the ``(K, n)`` blocks, one pass each
                  instead of a numpy temporary per operation

Each computes exactly the floating-point values of its numpy form, so the
iterates do not change (tests/test_fit_overhead.py).
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


# The elementwise parts of an iteration over the ``(K, n)`` blocks, each
# written in the order of operations of its numpy expression (quoted), so that
# the values are bitwise those of the expression; a sum over the blocks
# starts from block 0 and adds the others in order, as ``ndarray.sum(0)``.
@njit(cache=True, nogil=True)
def kkt_parts(sig, xw, b, qd, p, s, t, pl, ph, r, D, E):
    """``r = sig * xw + b + qd * p - s + t``, ``D = qd + s / pl + t / ph`` and
    ``E = (1 / D).sum(0)``."""
    K, n = p.shape
    for i in range(n):
        e = 0.0
        for k in range(K):
            r[k, i] = (((sig[k, i] * xw[i] + b[k, i]) + qd[k, i] * p[k, i]) - s[k, i]) \
                + t[k, i]
            d = (qd[k, i] + s[k, i] / pl[k, i]) + t[k, i] / ph[k, i]
            D[k, i] = d
            e = 1.0 / d if k == 0 else e + 1.0 / d
        E[i] = e


@njit(cache=True, nogil=True)
def newton_rhs(r, rs, rt, pl, ph, sig, D, h, rho):
    """``h = -r - rs / pl + rt / ph`` and ``rho = (sig * h / D).sum(0)``."""
    K, n = r.shape
    for i in range(n):
        acc = 0.0
        for k in range(K):
            hk = (-r[k, i] - rs[k, i] / pl[k, i]) + rt[k, i] / ph[k, i]
            h[k, i] = hk
            q = sig[k, i] * hk / D[k, i]
            acc = q if k == 0 else acc + q
        rho[i] = acc


@njit(cache=True, nogil=True)
def block_step(h, sig, xdw, D, dp):
    """``dp = (h - sig * xdw) / D``."""
    K, n = h.shape
    for k in range(K):
        for i in range(n):
            dp[k, i] = (h[k, i] - sig[k, i] * xdw[i]) / D[k, i]


@njit(cache=True, nogil=True)
def slack_steps(rs, rt, s, t, dp, pl, ph, ds, dt):
    """``ds = -(rs + s * dp) / pl`` and ``dt = -(rt - t * dp) / ph``."""
    K, n = s.shape
    for k in range(K):
        for i in range(n):
            ds[k, i] = -(rs[k, i] + s[k, i] * dp[k, i]) / pl[k, i]
            dt[k, i] = -(rt[k, i] - t[k, i] * dp[k, i]) / ph[k, i]
