"""The dual on a subspace of dual changes: the per-partition terms of CoCoA+'s
``aggregation="subspace"`` (:mod:`primaldual.distributed.subspace_step`).

A partition's rows ``lo..hi-1`` move along ``p`` directions, the rows of
``U`` (p, n): row 0 is the partition's own local change ``Delta alpha_[k]``
and rows ``1..p-1`` are the last aggregated changes.  At coefficients ``coef``
(p,) the rows' dual values are ``a_i = alpha_i + sum_j coef_j U[j, i]`` and
the loss part of the dual of docs/conventions.md §1 is
``(1/W) sum_i c_i (-phi_i*(-a_i))``.  :func:`subspace_terms` returns its
change from ``coef = 0``, gradient and curvature in ``coef``, and whether
every ``a_i`` is in the dual domain; :func:`apply_subspace_step` moves
``alpha`` there.  The quadratic part ``-(1/(2 lam)) ||v + sum_j coef_j
z_j||^2`` is the driver's, which holds the ``z_j`` (the directions' images).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..losses import dispatch as L
from .summed_step import moved, step_to_bound

__all__ = ["subspace_terms", "subspace_max_step", "apply_subspace_step"]


@njit(cache=True, nogil=True)
def subspace_terms(kind, param, y, cw, alpha, U, lo, hi, coef, g, H):
    """``(e, feasible)`` of rows ``lo..hi-1`` at ``coef``; fills ``g`` (p,) with
    ``sum_i c_i h'(a_i) U[:, i]`` and ``H`` (p, p) with ``sum_i c_i (-h''(a_i))
    U[:, i] U[:, i]^T`` (``h = -phi_i*(-.)``, ``-h'' >= 0``), and ``e =
    sum_i c_i (h(a_i) - h(alpha_i))``.  ``feasible`` is False when some
    ``a_i`` leaves the dual domain (then ``e``, ``g`` and ``H`` are not
    meaningful)."""
    p = U.shape[0]
    g[:] = 0.0
    H[:, :] = 0.0
    e = 0.0
    blo, bhi, in_b = L.box(kind, param)
    for i in range(lo, hi):
        du = 0.0
        nonzero = False
        for j in range(p):
            if U[j, i] != 0.0:
                du += coef[j] * U[j, i]
                nonzero = True
        if not nonzero:
            continue
        yi = y[i]
        a0 = alpha[i]
        b = (a0 + du) * yi if in_b else a0 + du
        if b < blo or b > bhi:
            return 0.0, False
        a = moved(kind, param, a0, du, yi, 1.0)
        c = cw[i]
        e += c * (L.neg_conjugate(kind, param, a, yi) - L.neg_conjugate(kind, param, a0, yi))
        slope, curv = L.line_terms(kind, param, a, yi, 1.0, c)
        for j in range(p):
            uj = U[j, i]
            if uj == 0.0:
                continue
            g[j] += slope * uj
            for m in range(j, p):
                H[j, m] += curv * uj * U[m, i]
    for j in range(p):
        for m in range(j + 1, p):
            H[m, j] = H[j, m]
    return e, True


@njit(cache=True, nogil=True)
def subspace_max_step(kind, param, y, alpha, U, lo, hi, coef, dcoef):
    """The largest ``t`` keeping every ``a_i`` of rows ``lo..hi-1`` at
    ``coef + t dcoef`` in the dual domain (``inf`` when none limits it)."""
    p = U.shape[0]
    tmax = np.inf
    blo, bhi, in_b = L.box(kind, param)
    for i in range(lo, hi):
        du = 0.0
        dd = 0.0
        for j in range(p):
            u = U[j, i]
            if u != 0.0:
                du += coef[j] * u
                dd += dcoef[j] * u
        if dd == 0.0:
            continue
        t = step_to_bound(blo, bhi, in_b, alpha[i] + du, dd, y[i])
        if t < tmax:
            tmax = t
    return tmax if tmax > 0.0 else 0.0


@njit(cache=True, nogil=True)
def apply_subspace_step(kind, param, y, alpha, U, lo, hi, coef, change):
    """``alpha_i += sum_j coef_j U[j, i]`` for rows ``lo..hi-1`` (held in the
    domain against rounding); ``change[i]`` is the change made."""
    p = U.shape[0]
    for i in range(lo, hi):
        du = 0.0
        for j in range(p):
            du += coef[j] * U[j, i]
        old = alpha[i]
        if du != 0.0:
            alpha[i] = moved(kind, param, old, du, y[i], 1.0)
        change[i] = alpha[i] - old
