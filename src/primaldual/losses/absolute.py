"""Absolute loss: ``phi(a; y) = |a - y|``.

Dual: ``-phi*(-alpha) = alpha y`` on ``alpha in [-1, 1]``; 1-Lipschitz, not
smooth.  Contract: :mod:`primaldual.losses.registry`.
"""
from __future__ import annotations

import math

from ._scalar import clip, op

NAME = "absolute"
PARAM = None
CLASSIFICATION = False
BOX_DUAL = True
BOX_QP_DUAL = True       # after splitting alpha = p - q: the interior-point solver
QUADRATIC_DUAL = True
STEP_CACHE = False


def smoothness(param):
    return None


def lipschitz(param):
    return 1.0


@op
def value(param, a, y):
    return abs(a - y)


@op
def derivative(param, a, y):
    """sign(a - y), 0 at ``a = y``."""
    r = a - y
    if r > 0.0:
        return 1.0
    if r < 0.0:
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
    return alpha * y


@op
def neg_conjugate_grad(param, alpha, y):
    return y


@op
def dual_step(param, alpha, y, a, s):
    if s > 0.0:
        return clip(alpha + (y - a) / s, -1.0, 1.0)
    g = y - a
    return 1.0 if g > 0.0 else (-1.0 if g < 0.0 else alpha)


@op
def dual_slopes(param, alpha, y, a):
    g = y - a
    gp = -math.inf if alpha >= 1.0 else g
    gm = math.inf if alpha <= -1.0 else g
    return gp, gm


@op
def line_terms(param, alpha, y, d, c):
    return c * y * d, 0.0
