"""Logistic loss: ``phi(a; y) = log(1 + exp(-y a))``, labels -1/+1.

Dual (``b = alpha y``): ``-phi*(-alpha) = -[b log b + (1 - b) log(1 - b)]`` on
``b in [0, 1]``; 1/4-smooth and 1-Lipschitz.  The SDCA step has no closed form:
:func:`logistic_newton` solves it in logit space, and the solvers keep ``b``
strictly inside (0, 1) (:func:`interior`).  Its SDCA step can start from a
cached logit per sample (``STEP_CACHE``).  Contract:
:mod:`primaldual.losses.registry`.
"""
from __future__ import annotations

import math

from ._scalar import op, scalar, sigmoid, softplus, xlogx

NAME = "logistic"
PARAM = None
CLASSIFICATION = True
BOX_DUAL = False
BOX_QP_DUAL = False
QUADRATIC_DUAL = False
STEP_CACHE = True

#: largest float strictly below 1; the logistic dual never reaches 1
ONE_MINUS = 1.0 - 2.0 ** -53
#: smallest positive b kept for the logistic dual (never exactly 0)
TINY = 1e-300

_NEWTON_TOL = 1e-12
#: a Newton step below this (relative) is the last one (quadratic convergence)
_NEWTON_QUAD = 1e-6
_NEWTON_MAXITER = 100


def smoothness(param):
    return 0.25


def lipschitz(param):
    return 1.0


@op
def value(param, a, y):
    return softplus(-y * a)


@op
def derivative(param, a, y):
    return -y * sigmoid(-y * a)


@op
def second_derivative(param, a, y):
    s = sigmoid(-y * a)
    return s * (1.0 - s)


@op
def box(param):
    return 0.0, 1.0, True


@op
def interior(param):
    return TINY, ONE_MINUS


@op
def neg_conjugate(param, alpha, y):
    b = alpha * y
    return -(xlogx(b) + xlogx(1.0 - b))


@op
def neg_conjugate_grad(param, alpha, y):
    b = alpha * y
    return y * math.log((1.0 - b) / b)


@scalar
def logistic_newton(b0, ay, s, z0):
    """Exact logistic coordinate maximizer by safeguarded Newton in logit space.

    With ``b = alpha y = sigmoid(z)`` the optimality condition of
    ``H(b) - a y b - (s/2)(b - b0)^2`` is ``h(z) = -z - a y - s (sigmoid(z) - b0) = 0``.
    ``h`` is strictly decreasing with ``h' = -1 - s sigmoid'(z) <= -1``, and its
    root lies in the bracket ``[-a y - s (1 - b0), -a y + s b0]``.  Newton starts
    from ``z0`` (the logit of ``b0`` cached by the caller; NaN means unknown: it is
    then computed from ``b0``), steps that leave the current bracket are replaced
    by bisection.

    Stopping: Newton's error contracts as ``e' <= |h''/(2 h')| e^2 <= e^2 / 2``
    (``|h''| = s sigmoid'(z) |1 - 2 sigmoid(z)| <= |h'|``), so once a step is below
    ``1e-6 (1 + |z|)`` the point after it is within ``5e-13 (1 + |z|)^2`` of the
    root: that step is taken and the loop stops without another sigmoid; ``b``
    is then the first-order update ``sigmoid(z) + sigmoid'(z) step`` (error
    below 1e-13).  A bracket narrower than ``1e-12 (1 + |z|)`` also stops it.
    ``b`` never leaves the open interval (0, 1).

    Returns ``(b, z)``: the new ``alpha y`` and its logit (for the next start).
    """
    lo = -ay - s * (1.0 - b0)
    hi = -ay + s * b0
    if hi - lo <= 0.0:  # s == 0: the unique root is -ay
        z = -ay
        b = sigmoid(z)
    else:
        z = z0
        # with a cached logit, sigmoid(z0) is b0 itself: the first Newton step
        # needs no exponential
        known = math.isfinite(z) and z > lo and z < hi
        if not known:
            if b0 > 0.0 and b0 < 1.0:
                z = math.log(b0) - math.log1p(-b0)
            else:
                z = -ay
            if not (z > lo and z < hi):
                z = 0.5 * (lo + hi)
        b = 0.5
        for _ in range(_NEWTON_MAXITER):
            if known:
                sg = b0
                known = False
            else:
                sg = sigmoid(z)
            h = -z - ay - s * (sg - b0)
            if h > 0.0:
                lo = z
            else:
                hi = z
            dsg = sg * (1.0 - sg)
            step = h / (1.0 + s * dsg)      # = -h / h'
            if abs(step) <= _NEWTON_QUAD * (1.0 + abs(z)):
                # quadratic convergence: the step lands within ~1e-12 of the root
                z += step
                b = sg + dsg * step
                break
            zn = z + step
            if not (zn > lo and zn < hi):
                zn = 0.5 * (lo + hi)
            if hi - lo <= _NEWTON_TOL * (1.0 + abs(zn)):
                z = zn
                b = sigmoid(z)
                break
            z = zn
        else:
            b = sigmoid(z)
    if b < TINY:
        b = TINY
        z = math.log(b) - math.log1p(-b)
    elif b > ONE_MINUS:
        b = ONE_MINUS
        z = math.log(b) - math.log1p(-b)
    return b, z


@op
def dual_step(param, alpha, y, a, s):
    """:func:`logistic_newton` started from ``alpha`` itself (no cached logit)."""
    b, _ = logistic_newton(alpha * y, a * y, s, math.nan)
    return b * y


@op
def cached_dual_step(param, alpha, y, a, s, z):
    """:func:`logistic_newton` started from the cached logit ``z`` (NaN: unknown)."""
    b, z = logistic_newton(alpha * y, a * y, s, z)
    return b * y, z


@op
def dual_slopes(param, alpha, y, a):
    b = alpha * y
    if b <= 0.0 or b >= 1.0:
        g = math.inf if b <= 0.0 else -math.inf
    else:
        g = (math.log1p(-b) - math.log(b) - a * y)
    return g, g


@op
def line_terms(param, alpha, y, d, c):
    b = alpha * y
    return c * (math.log1p(-b) - math.log(b)) * y * d, c * d * d / (b * (1.0 - b))
