"""Squared hinge loss: ``phi(a; y) = max(0, 1 - y a)^2``, labels -1/+1.

Dual (``b = alpha y``): ``-phi*(-alpha) = b - b^2 / 4`` on ``b >= 0``; 2-smooth.
Contract: :mod:`primaldual.losses.registry`.
"""
from __future__ import annotations

import math

from ._scalar import op

NAME = "squared_hinge"
PARAM = None
CLASSIFICATION = True
BOX_DUAL = True
BOX_QP_DUAL = False
QUADRATIC_DUAL = True
STEP_CACHE = False


def smoothness(param):
    return 2.0


def lipschitz(param):
    return None


@op
def value(param, a, y):
    m = 1.0 - y * a
    return m * m if m > 0.0 else 0.0


@op
def derivative(param, a, y):
    m = 1.0 - y * a
    return -2.0 * y * m if m > 0.0 else 0.0


@op
def second_derivative(param, a, y):
    """2 below the hinge, 0 from ``y a = 1`` on (Mangasarian's generalized Hessian)."""
    return 2.0 if 1.0 - y * a > 0.0 else 0.0


@op
def box(param):
    return 0.0, math.inf, True


@op
def interior(param):
    return 0.0, math.inf


@op
def neg_conjugate(param, alpha, y):
    return alpha * y - 0.25 * alpha * alpha


@op
def neg_conjugate_grad(param, alpha, y):
    return y - 0.5 * alpha


@op
def dual_step(param, alpha, y, a, s):
    b0 = alpha * y
    b = (1.0 - a * y + s * b0) / (0.5 + s)
    if b < 0.0:
        b = 0.0
    return b * y


@op
def dual_slopes(param, alpha, y, a):
    b = alpha * y
    g = 1.0 - a * y - 0.5 * b
    gm = math.inf if b <= 0.0 else g
    return g, gm


@op
def line_terms(param, alpha, y, d, c):
    return c * (y - 0.5 * alpha) * d, c * 0.5 * d * d
