"""Preconditioned conjugate gradient from zero, with the caller's operator,
preconditioner and inner product.

The Newton-type solvers' inner systems (DiSCO's PCG, GIANT's local solves,
``box_newton``'s face system) share :func:`pcg`, and the trust-region Newton
methods (binary and multinomial) share :func:`steihaug`; each passes its own ``dot``
(a reproducible sum where partitions must agree) and counts its own passes in
``apply`` and ``precondition``.
"""
from __future__ import annotations

import math
import time

import numpy as np


def flat_dot(a, b) -> float:
    """``sum(a * b)`` over the arrays flattened, by a compiled loop (``einsum``:
    BLAS ``ddot`` wakes its threads for long vectors); the ``dot`` of the
    single-process solvers."""
    return float(np.einsum("i,i->", a.ravel(), b.ravel()))


def pcg(apply, precondition, b, rtol, max_iter, dot, min_curvature=0.0, late=None):
    """``(x, r, iterations)`` for ``A x = b``, ``A`` symmetric positive
    (semi)definite given by ``apply(p)``, preconditioned by ``precondition(r)``.

    Starts at ``x = 0`` and stops when ``sqrt(dot(r, r)) <= rtol sqrt(dot(b, b))``,
    after ``max_iter`` products, when ``dot(r, precondition(r))`` is not
    positive, or at a direction ``p`` whose curvature ``dot(p, A p)`` is not
    above ``min_curvature dot(p, p)`` (that direction is not taken: ``x`` is
    then the last iterate, zero if it was the first), or before a product
    once ``late()`` (a deadline) is true.  ``r = b - A x``."""
    x = np.zeros_like(b, dtype=np.float64)
    r = np.array(b, dtype=np.float64)
    stop = rtol * math.sqrt(dot(r, r))
    z = precondition(r)
    p = z.copy()
    rz = dot(r, z)
    it = 0
    while it < max_iter and math.sqrt(dot(r, r)) > stop and rz > 0.0:
        if late is not None and late():
            break
        Ap = apply(p)
        it += 1
        pAp = dot(p, Ap)
        floor = min_curvature * dot(p, p) if min_curvature else 0.0
        if not pAp > floor:
            break
        step = rz / pAp
        x += step * p
        r -= step * Ap
        if math.sqrt(dot(r, r)) <= stop or it >= max_iter:
            break
        z = precondition(r)
        rz_new = dot(r, z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return x, r, it


def _to_boundary(s, d, m, delta, dot):
    """``tau >= 0`` with ``||s + tau d||_M = delta`` (``||s||_M < delta``)."""
    sMd, dMd, sMs = dot(s * m, d), dot(d * m, d), dot(s * m, s)
    room = max(delta * delta - sMs, 0.0)
    rad = math.sqrt(sMd * sMd + dMd * room)
    # the two forms of the positive root, each free of cancellation on its side
    return room / (sMd + rad) if sMd >= 0.0 else (rad - sMd) / dMd


def steihaug(apply, g, precondition, m, delta, stop, max_iter, dot, deadline=None):
    """Preconditioned CG on ``H s = -g`` inside ``||s||_M <= delta`` (Steihaug
    1983, Toint 1981; ``||s||_M^2 = sum m s^2``, ``m`` the metric's diagonal or
    a scalar, ``H`` given by ``apply``): stops at ``||r|| <= stop``, at
    ``max_iter`` products, at ``deadline`` (``time.perf_counter``), at a
    direction of no curvature, or where an iterate would leave the region,
    then at the boundary along the last direction.  Returns ``(s, r,
    iterations, on_boundary)`` with ``r = -g - H s``."""
    s = np.zeros_like(g)
    r = -g
    z = precondition(r)
    p = z.copy()
    rz = dot(r, z)
    it = 0
    while it < max_iter and math.sqrt(dot(r, r)) > stop:
        if deadline is not None and time.perf_counter() >= deadline:
            break
        Hp = apply(p)
        it += 1
        pHp = dot(p, Hp)
        if not pHp > 0.0:                     # H is lam-strongly convex: rounding only
            break
        a = rz / pHp
        s_new = s + a * p
        if dot(s_new * m, s_new) >= delta * delta:
            tau = _to_boundary(s, p, m, delta, dot)
            s += tau * p
            r -= tau * Hp
            return s, r, it, True
        s = s_new
        r -= a * Hp
        z = precondition(r)
        rz_new = dot(r, z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return s, r, it, False
