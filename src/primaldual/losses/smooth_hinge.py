"""Smoothed hinge loss (gamma > 0), labels -1/+1, with ``m = 1 - y a``:
``phi = 0`` for ``m <= 0``, ``m - gamma/2`` for ``m >= gamma``, ``m^2/(2 gamma)``
between.

Dual (``b = alpha y``): ``-phi*(-alpha) = b - gamma b^2 / 2`` on ``b in [0, 1]``;
1/gamma-smooth (SDCA paper, eq. 7).  Contract: :mod:`primaldual.losses.registry`.
"""
from __future__ import annotations

import math

from ._scalar import clip, op

NAME = "smooth_hinge"
PARAM = ("gamma", 1.0, False)       # name, default, zero allowed
CLASSIFICATION = True
BOX_DUAL = True
BOX_QP_DUAL = True
QUADRATIC_DUAL = True
STEP_CACHE = False


def smoothness(param):
    return 1.0 / param


def lipschitz(param):
    return 1.0


@op
def value(param, a, y):
    m = 1.0 - y * a
    if m <= 0.0:
        return 0.0
    if m >= param:
        return m - 0.5 * param
    return m * m / (2.0 * param)


@op
def derivative(param, a, y):
    m = 1.0 - y * a
    if m <= 0.0:
        return 0.0
    if m >= param:
        return -y
    return -y * m / param


@op
def second_derivative(param, a, y):
    """1/gamma on the quadratic piece; at its ends the outer pieces' 0."""
    m = 1.0 - y * a
    if m <= 0.0 or m >= param:
        return 0.0
    return 1.0 / param


@op
def box(param):
    return 0.0, 1.0, True


@op
def interior(param):
    return 0.0, 1.0


@op
def neg_conjugate(param, alpha, y):
    return alpha * y - 0.5 * param * alpha * alpha


@op
def neg_conjugate_grad(param, alpha, y):
    return y - param * alpha


@op
def dual_step(param, alpha, y, a, s):
    b0 = alpha * y
    b = clip((1.0 - a * y + s * b0) / (param + s), 0.0, 1.0)
    return b * y


@op
def dual_slopes(param, alpha, y, a):
    b = alpha * y
    g = 1.0 - a * y - param * b
    gp = -math.inf if b >= 1.0 else g
    gm = math.inf if b <= 0.0 else g
    return gp, gm


@op
def line_terms(param, alpha, y, d, c):
    return c * (y - param * alpha) * d, c * param * d * d
