"""The dual along a summed update: the per-partition terms of the step on
``alpha + theta Delta alpha`` (Lee & Roth, ICML 2015; Lee & Chang, MLJ 2020).

With ``v(theta) = v + theta Delta v`` the dual of docs/conventions.md §1 along
the line is::

    D(theta) = (1/W) sum_i c_i (-phi_i*(-(alpha_i + theta Delta alpha_i)))
               - (1/(2 lam)) ||v + theta Delta v||^2

The quadratic part needs ``v . Delta v`` and ``||Delta v||^2`` (the driver has
both); the loss part is a sum over rows, so each partition reduces it to
scalars: :func:`line_terms` returns, for the rows ``lo..hi-1`` at ``theta``,

``e``     ``sum_i c_i [-phi_i*(-a_i(theta)) + phi_i*(-alpha_i)]``
``g``     ``sum_i c_i d/dtheta (-phi_i*(-a_i(theta)))``
``h``     ``sum_i c_i (-d^2/dtheta^2)(-phi_i*(-a_i(theta)))`` (>= 0)
``tmax``  the largest ``theta`` keeping every ``a_i`` in the dual domain

with ``a_i(theta) = alpha_i + theta Delta alpha_i`` held in the domain against
rounding (:func:`moved`).  The per-row slope and curvature are the loss's
``line_terms``.  Where ``-phi*`` is quadratic on the domain (the loss's
``QUADRATIC_DUAL``) ``g`` and ``h`` at ``theta = 0`` and ``tmax`` give ``D``
exactly on ``[0, tmax]``; the other duals are searched
(``primaldual.distributed.line_step``).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..losses import dispatch as L
from ..losses._scalar import clip

__all__ = ["line_terms", "apply_summed_step", "moved", "step_to_bound"]


@njit(cache=True, nogil=True, inline="always")
def step_to_bound(blo, bhi, in_b, a, d, y):
    """The largest ``t`` keeping ``a + t d`` (``d != 0``) in the dual box
    ``[blo, bhi]`` of the loss (of ``a y`` where ``in_b``, ``L.box``)."""
    b0 = a * y if in_b else a
    db = d * y if in_b else d
    return (bhi - b0) / db if db > 0.0 else (blo - b0) / db


@njit(cache=True, nogil=True)
def moved(kind, param, alpha, dalpha, y, theta):
    """``alpha + theta dalpha`` kept in the part of the dual domain the solvers
    keep iterates in (a rounding guard: for ``theta <= tmax`` the exact value
    is inside)."""
    a = alpha + theta * dalpha
    lo, hi = L.interior(kind, param)
    if L.box(kind, param)[2]:
        b = a * y
        return clip(b, lo, hi) * y if (b < lo or b > hi) else a
    return clip(a, lo, hi)


@njit(cache=True, nogil=True)
def line_terms(kind, param, y, cw, alpha, dalpha, lo, hi, theta):
    """``(e, g, h, tmax)`` of rows ``lo..hi-1`` at ``theta`` (module docstring)."""
    e = 0.0
    g = 0.0
    h = 0.0
    tmax = np.inf
    blo, bhi, in_b = L.box(kind, param)
    for i in range(lo, hi):
        d = dalpha[i]
        if d == 0.0:
            continue
        yi = y[i]
        c = cw[i]
        a0 = alpha[i]
        t = step_to_bound(blo, bhi, in_b, a0, d, yi)
        if t < tmax:
            tmax = t
        a = moved(kind, param, a0, d, yi, theta)
        if theta != 0.0:
            e += c * (L.neg_conjugate(kind, param, a, yi) - L.neg_conjugate(kind, param, a0, yi))
        gi, hi_ = L.line_terms(kind, param, a, yi, d, c)
        g += gi
        h += hi_
    return e, g, h, tmax


@njit(cache=True, nogil=True)
def apply_summed_step(kind, param, y, alpha, dalpha, theta):
    """``alpha += theta dalpha`` (held in the domain), then ``dalpha = 0``."""
    for i in range(alpha.shape[0]):
        d = dalpha[i]
        if d != 0.0:
            alpha[i] = moved(kind, param, alpha[i], d, y[i], theta)
            dalpha[i] = 0.0
