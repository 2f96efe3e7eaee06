"""Preconditioned conjugate gradient from zero, with the caller's operator,
preconditioner and inner product.

The Newton-type solvers' inner systems (DiSCO's PCG, GIANT's local solves,
``box_newton``'s face system) share this loop; each passes its own ``dot``
(a reproducible sum where partitions must agree) and counts its own passes in
``apply`` and ``precondition``.
"""
from __future__ import annotations

import math

import numpy as np


def pcg(apply, precondition, b, rtol, max_iter, dot, min_curvature=0.0):
    """``(x, r, iterations)`` for ``A x = b``, ``A`` symmetric positive
    (semi)definite given by ``apply(p)``, preconditioned by ``precondition(r)``.

    Starts at ``x = 0`` and stops when ``sqrt(dot(r, r)) <= rtol sqrt(dot(b, b))``,
    after ``max_iter`` products, when ``dot(r, precondition(r))`` is not
    positive, or at a direction ``p`` whose curvature ``dot(p, A p)`` is not
    above ``min_curvature dot(p, p)`` (that direction is not taken: ``x`` is
    then the last iterate, zero if it was the first).  ``r = b - A x``."""
    x = np.zeros_like(b, dtype=np.float64)
    r = np.array(b, dtype=np.float64)
    stop = rtol * math.sqrt(dot(r, r))
    z = precondition(r)
    p = z.copy()
    rz = dot(r, z)
    it = 0
    while it < max_iter and math.sqrt(dot(r, r)) > stop and rz > 0.0:
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
