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
rounding (:func:`moved`).  For hinge, smoothed hinge, squared hinge, squared
and absolute loss ``-phi*`` is quadratic on the domain, so ``g`` and ``h`` at
``theta = 0`` and ``tmax`` give ``D`` exactly on ``[0, tmax]``; the logistic
and epsilon-insensitive duals are searched (``primaldual.distributed.line_step``).
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from .loss_kernels import (ABSOLUTE, HINGE, LOGISTIC, SMOOTH_HINGE,
                           SQUARED, SQUARED_HINGE, _clip, neg_conjugate)

__all__ = ["line_terms", "apply_summed_step", "moved", "QUADRATIC_DUALS"]

#: losses whose -phi* is a quadratic on its (box) domain
QUADRATIC_DUALS = (HINGE, SMOOTH_HINGE, SQUARED_HINGE, SQUARED, ABSOLUTE)

# the logistic dual stays strictly inside (0, 1), as the SDCA step keeps it
_LOGISTIC_LO = 1e-300
_LOGISTIC_HI = 1.0 - 2.0 ** -53


@njit(cache=True, nogil=True)
def _box(kind):
    """(lo, hi, in_b) of the dual domain: in ``b = alpha y`` when ``in_b``,
    else in ``alpha``."""
    if kind == HINGE or kind == SMOOTH_HINGE or kind == LOGISTIC:
        return 0.0, 1.0, True
    if kind == SQUARED_HINGE:
        return 0.0, np.inf, True
    if kind == SQUARED:
        return -np.inf, np.inf, False
    return -1.0, 1.0, False


@njit(cache=True, nogil=True)
def moved(kind, alpha, dalpha, y, theta):
    """``alpha + theta dalpha`` kept in the dual domain (a rounding guard: for
    ``theta <= tmax`` the exact value is inside)."""
    a = alpha + theta * dalpha
    lo, hi, in_b = _box(kind)
    if kind == LOGISTIC:
        lo, hi = _LOGISTIC_LO, _LOGISTIC_HI
    if in_b:
        b = a * y
        return _clip(b, lo, hi) * y if (b < lo or b > hi) else a
    return _clip(a, lo, hi)


@njit(cache=True, nogil=True)
def line_terms(kind, param, y, cw, alpha, dalpha, lo, hi, theta):
    """``(e, g, h, tmax)`` of rows ``lo..hi-1`` at ``theta`` (module docstring)."""
    e = 0.0
    g = 0.0
    h = 0.0
    tmax = np.inf
    blo, bhi, in_b = _box(kind)
    for i in range(lo, hi):
        d = dalpha[i]
        if d == 0.0:
            continue
        yi = y[i]
        c = cw[i]
        a0 = alpha[i]
        b0 = a0 * yi if in_b else a0
        db = d * yi if in_b else d
        t = (bhi - b0) / db if db > 0.0 else (blo - b0) / db
        if t < tmax:
            tmax = t
        a = moved(kind, a0, d, yi, theta)
        if theta != 0.0:
            e += c * (neg_conjugate(kind, param, a, yi) - neg_conjugate(kind, param, a0, yi))
        if kind == HINGE or kind == ABSOLUTE:
            g += c * yi * d
        elif kind == SMOOTH_HINGE:
            g += c * (yi - param * a) * d
            h += c * param * d * d
        elif kind == SQUARED_HINGE:
            g += c * (yi - 0.5 * a) * d
            h += c * 0.5 * d * d
        elif kind == SQUARED:
            g += c * (yi - a) * d
            h += c * d * d
        elif kind == LOGISTIC:
            b = a * yi
            g += c * (math.log1p(-b) - math.log(b)) * yi * d
            h += c * d * d / (b * (1.0 - b))
        else:   # EPSILON_INSENSITIVE: alpha y - eps |alpha|, the slope along +d at a kink
            s = 1.0 if a > 0.0 else (-1.0 if a < 0.0 else (1.0 if d > 0.0 else -1.0))
            g += c * (yi - param * s) * d
    return e, g, h, tmax


@njit(cache=True, nogil=True)
def apply_summed_step(kind, y, alpha, dalpha, theta):
    """``alpha += theta dalpha`` (held in the domain), then ``dalpha = 0``."""
    for i in range(alpha.shape[0]):
        d = dalpha[i]
        if d != 0.0:
            alpha[i] = moved(kind, alpha[i], d, y[i], theta)
            dalpha[i] = 0.0

