"""Epsilon-insensitive loss (epsilon >= 0): ``phi(a; y) = max(0, |a - y| - epsilon)``.

Dual: ``-phi*(-alpha) = alpha y - epsilon |alpha|`` on ``alpha in [-1, 1]``;
1-Lipschitz, not smooth.  Contract: :mod:`primaldual.losses.registry`.
"""
from __future__ import annotations

import math

from ._scalar import op

NAME = "epsilon_insensitive"
PARAM = ("epsilon", 0.1, True)
CLASSIFICATION = False
BOX_DUAL = True
BOX_QP_DUAL = True       # after splitting alpha = p - q: the interior-point solver
QUADRATIC_DUAL = False
STEP_CACHE = False


def smoothness(param):
    return None


def lipschitz(param):
    return 1.0


@op
def value(param, a, y):
    r = abs(a - y) - param
    return r if r > 0.0 else 0.0


@op
def derivative(param, a, y):
    """sign(a - y) outside the tube, 0 inside it and on its edges."""
    r = a - y
    if r > param:
        return 1.0
    if r < -param:
        return -1.0
    return 0.0


@op
def second_derivative(param, a, y):
    return 0.0


@op
def box(param):
    return -1.0, 1.0, False


@op
def interior(param):
    return -1.0, 1.0


@op
def neg_conjugate(param, alpha, y):
    return alpha * y - param * abs(alpha)


@op
def neg_conjugate_grad(param, alpha, y):
    """``y - epsilon sign(alpha)``, ``y`` at ``alpha = 0``."""
    if alpha > 0.0:
        return y - param
    if alpha < 0.0:
        return y + param
    return y


@op
def dual_step(param, alpha, y, a, s):
    """A concave piecewise quadratic with a kink at 0."""
    if s > 0.0:
        up = alpha + (y - a - param) / s
        if up > 0.0:
            return up if up < 1.0 else 1.0
        dn = alpha + (y - a + param) / s
        if dn < 0.0:
            return dn if dn > -1.0 else -1.0
        return 0.0
    g = y - a
    if g > param:
        return 1.0
    if g < -param:
        return -1.0
    if g == param or g == -param:
        return alpha
    return 0.0


@op
def dual_slopes(param, alpha, y, a):
    g = y - a
    if alpha > 0.0:
        gp = g - param
        gm = g - param
    elif alpha < 0.0:
        gp = g + param
        gm = g + param
    else:
        gp = g - param
        gm = g + param
    if alpha <= -1.0:
        gm = math.inf
    if alpha >= 1.0:
        gp = -math.inf
    return gp, gm


@op
def line_terms(param, alpha, y, d, c):
    """The slope along ``d``; at the kink ``alpha = 0`` the one on ``d``'s side."""
    s = 1.0 if alpha > 0.0 else (-1.0 if alpha < 0.0 else (1.0 if d > 0.0 else -1.0))
    return c * (y - param * s) * d, 0.0
