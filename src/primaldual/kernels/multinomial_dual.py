"""Dual coordinate descent for multinomial logistic regression (the maximum
entropy dual; Yu, Huang & Lin, Machine Learning 85 (2011), Sec. 5).

In LIBLINEAR's scaling, with ``p_i = e_{y_i} - alpha_i`` on the simplex and
``C_i = c_i / (W lam)``, the dual is::

    min_P  1/2 ||coef||_F^2 - sum_i C_i entropy(p_i),
    coef = sum_i C_i x_i^T (e_{y_i} - p_i)

One step minimizes exactly over one row's ``p_i`` (K values), the others
fixed.  With ``A = ||x_i||^2``, ``a = A C_i`` and the scores ``z = x_i coef``
the subproblem is ``min_p -z.p + a/2 ||p - p_old||^2 + sum_k p_k log p_k`` over
the simplex, whose optimality conditions are::

    log p_k + a p_k = b_k - mu,    b_k = z_k + a p_old_k,    sum_k p_k = 1

Each ``t_k = log p_k`` solves ``t + a e^t = b_k - mu`` (a convex increasing
function of ``t``: Newton from above converges monotonically), and ``sum_k
p_k(mu)`` is convex and decreasing in ``mu``: Newton on ``mu`` from the left
(``mu_0 = max_k b_k - a``, where the largest ``p_k`` alone is 1) converges
monotonically too.  Working in ``t`` keeps every ``p_k`` positive.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .status import STATUS_NONFINITE, STATUS_OK

__all__ = ["MNRows", "MNWork", "mn_subproblem", "mn_epochs"]

#: Newton on mu stops when |sum_k p_k - 1| is below this
MU_TOL = 1e-13
#: Newton on t stops when its step is below this (absolute, in log p)
T_TOL = 1e-12
#: caps on the Newton iterations (never reached in practice: both converge
#: monotonically and quadratically)
MAX_MU_ITER = 100
MAX_T_ITER = 60


class MNRows(NamedTuple):
    """The rows as :mod:`primaldual.rows` presents them, ``||x_i||^2``, the
    labels (int64) and the bounds ``C_i``."""
    data: object
    indices: object
    indptr: object
    iptr: object
    sqnorm: object
    y: object
    C: object


class MNWork(NamedTuple):
    """Work arrays of length K: scores, b, t = log p, the new p, the changes
    of beta and their classes."""
    z: object
    b: object
    t: object
    new: object
    delta: object
    cls: object


@njit(cache=True, nogil=True)
def _log_start(a, c):
    """An approximation of the root of ``t + a e^t = c``: ``c - W(a e^c)``
    with Winitzki's approximation of Lambert's W (within a few percent)."""
    if a == 0.0:
        return c
    lx = math.log(a) + c
    L = math.log1p(math.exp(lx)) if lx < 30.0 else lx
    return c - L * (1.0 - math.log1p(L) / (2.0 + L))


@njit(cache=True, nogil=True)
def _log_root(a, c, t):
    """The root of ``t + a e^t = c`` by Newton from ``t``: the function is
    convex and increasing, so after the first step the iterates decrease to
    the root (quadratically once close)."""
    for _ in range(MAX_T_ITER):
        e = a * math.exp(t)
        step = (t + e - c) / (1.0 + e)
        t -= step
        if abs(step) < T_TOL:
            break
    return t


@njit(cache=True, nogil=True)
def mn_subproblem(a, b, t, new, K):
    """The exact minimizer of ``-z.p + a/2 ||p - p_old||^2 + sum p log p`` on
    the simplex into ``new[:K]`` (``b = z + a p_old``; module docstring);
    returns the Newton iterations on ``mu``."""
    bmax = b[0]
    for k in range(1, K):
        if b[k] > bmax:
            bmax = b[k]
    mu = bmax - a
    for k in range(K):
        t[k] = _log_start(a, b[k] - mu)
    it = 0
    while it < MAX_MU_ITER:
        it += 1
        s = -1.0
        ds = 0.0
        for k in range(K):
            t[k] = _log_root(a, b[k] - mu, t[k])
            p = math.exp(t[k])
            new[k] = p
            s += p
            ds += p / (1.0 + a * p)
        if s <= MU_TOL or ds == 0.0:
            break
        mu_next = mu + s / ds                # stays left of the root (convexity)
        if mu_next == mu:                    # b - mu is exact only to ulp(mu)
            break
        mu = mu_next
    tot = 0.0
    for k in range(K):
        tot += new[k]
    for k in range(K):
        new[k] /= tot
    return it


@njit(cache=True, nogil=True)
def _mn_row(rows, i, P, coef, work):
    """One exact block step on row ``i``; returns the entries read (twice
    the row's: scores and update)."""
    z, b, t, new, delta, cls = work.z, work.b, work.t, work.new, work.delta, work.cls
    K = P.shape[1]
    start = rows.indptr[i]
    end = rows.indptr[i + 1]
    off = rows.iptr[i] - start
    for k in range(K):
        z[k] = 0.0
    for p in range(start, end):
        x = rows.data[p]
        j = rows.indices[p + off]
        for k in range(K):
            z[k] += x * coef[j, k]
    Ci = rows.C[i]
    a = rows.sqnorm[i] * Ci
    for k in range(K):
        b[k] = z[k] + a * P[i, k]
    mn_subproblem(a, b, t, new, K)
    moved = 0
    for k in range(K):
        dk = new[k] - P[i, k]
        P[i, k] = new[k]
        if dk != 0.0:
            delta[moved] = -Ci * dk
            cls[moved] = k
            moved += 1
    for p in range(start, end):
        x = rows.data[p]
        j = rows.indices[p + off]
        for m in range(moved):
            coef[j, int(cls[m])] += delta[m] * x
    return 2 * (end - start)


@njit(cache=True, nogil=True)
def mn_epochs(rows, order, P, coef, work, uniforms):
    """``uniforms.shape[0]`` epochs of exact block steps over the rows of
    nonzero ``C_i``, each in the order of ``order`` shuffled (Fisher-Yates)
    with that row of ``uniforms`` (n values in [0, 1), drawn by the driver
    from ``random_state``).  Updates ``P`` (n, K), ``coef`` (d, K) and
    ``order`` in place.  Returns ``(status, epochs done, entries read)``."""
    reads = 0
    m = order.shape[0]
    for e in range(uniforms.shape[0]):
        for s in range(m - 1, 0, -1):
            r = int(uniforms[e, s] * (s + 1))
            order[s], order[r] = order[r], order[s]
        for s in range(m):
            i = order[s]
            reads += _mn_row(rows, i, P, coef, work)
            if not np.isfinite(P[i, 0]):
                return STATUS_NONFINITE, e, reads
    return STATUS_OK, uniforms.shape[0], reads
