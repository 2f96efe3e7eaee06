"""Squared epsilon-insensitive loss (epsilon >= 0), LIBLINEAR's L2-loss SVR
(``-s 11``, ``-s 12``): ``phi(a; y) = max(0, |a - y| - epsilon)^2``.

Dual: ``-phi*(-alpha) = alpha y - epsilon |alpha| - alpha^2 / 4``, ``alpha``
free, a concave quadratic on each side of its kink at 0; 2-smooth (with
``epsilon = 0`` it is twice the ``squared`` loss).  Shrinking holds a
coordinate at the kink, as LIBLINEAR's ``-s 12`` does.  Contract:
:mod:`primaldual.losses.registry`.
"""
from __future__ import annotations

import math

from ._scalar import op

NAME = "squared_epsilon_insensitive"
PARAM = ("epsilon", 0.1, True)
CLASSIFICATION = False
BOX_DUAL = True          # shrinking may hold alpha at the kink 0 (the domain is R)
BOX_QP_DUAL = False
QUADRATIC_DUAL = False   # quadratic on each side of the kink only
STEP_CACHE = False


def smoothness(param):
    return 2.0


def lipschitz(param):
    return None


@op
def value(param, a, y):
    r = abs(a - y) - param
    return r * r if r > 0.0 else 0.0


@op
def derivative(param, a, y):
    """``2 sign(a - y) (|a - y| - epsilon)`` outside the tube, 0 inside it."""
    r = a - y
    if r > param:
        return 2.0 * (r - param)
    if r < -param:
        return 2.0 * (r + param)
    return 0.0


@op
def second_derivative(param, a, y):
    """2 outside the tube, 0 inside it and on its edges (a generalized one)."""
    return 2.0 if abs(a - y) > param else 0.0


@op
def box(param):
    return -math.inf, math.inf, False


@op
def interior(param):
    return -math.inf, math.inf


@op
def neg_conjugate(param, alpha, y):
    return alpha * y - param * abs(alpha) - 0.25 * alpha * alpha


@op
def neg_conjugate_grad(param, alpha, y):
    """``y - epsilon sign(alpha) - alpha / 2``, ``y`` at ``alpha = 0``."""
    if alpha > 0.0:
        return y - param - 0.5 * alpha
    if alpha < 0.0:
        return y + param - 0.5 * alpha
    return y


@op
def dual_step(param, alpha, y, a, s):
    """The maximizer of ``-phi*(-b) - a (b - alpha) - s/2 (b - alpha)^2``: the
    stationary point of the side of the kink it falls on, else 0."""
    up = (y - a - param + s * alpha) / (0.5 + s)
    if up > 0.0:
        return up
    dn = (y - a + param + s * alpha) / (0.5 + s)
    if dn < 0.0:
        return dn
    return 0.0


@op
def dual_slopes(param, alpha, y, a):
    g = y - a - 0.5 * alpha
    if alpha > 0.0:
        return g - param, g - param
    if alpha < 0.0:
        return g + param, g + param
    return g - param, g + param


@op
def line_terms(param, alpha, y, d, c):
    """The slope along ``d``; at the kink ``alpha = 0`` the one on ``d``'s side."""
    s = 1.0 if alpha > 0.0 else (-1.0 if alpha < 0.0 else (1.0 if d > 0.0 else -1.0))
    return c * (y - param * s - 0.5 * alpha) * d, c * 0.5 * d * d
