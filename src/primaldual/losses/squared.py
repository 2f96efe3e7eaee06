"""Squared loss: ``phi(a; y) = (a - y)^2 / 2`` (half the SDCA paper's).

Dual: ``-phi*(-alpha) = alpha y - alpha^2 / 2``, ``alpha`` free; 1-smooth.
Contract: :mod:`primaldual.losses.registry`.
"""
from __future__ import annotations

import math

from ._scalar import op

NAME = "squared"
PARAM = None
CLASSIFICATION = False
BOX_DUAL = False
BOX_QP_DUAL = False
QUADRATIC_DUAL = True
STEP_CACHE = False


def smoothness(param):
    return 1.0


def lipschitz(param):
    return None


@op
def value(param, a, y):
    r = a - y
    return 0.5 * r * r


@op
def derivative(param, a, y):
    return a - y


@op
def second_derivative(param, a, y):
    return 1.0


@op
def box(param):
    return -math.inf, math.inf, False


@op
def interior(param):
    return -math.inf, math.inf


@op
def neg_conjugate(param, alpha, y):
    return alpha * y - 0.5 * alpha * alpha


@op
def neg_conjugate_grad(param, alpha, y):
    return y - alpha


@op
def dual_step(param, alpha, y, a, s):
    return (y - a + s * alpha) / (1.0 + s)


@op
def dual_slopes(param, alpha, y, a):
    g = y - alpha - a
    return g, g


@op
def line_terms(param, alpha, y, d, c):
    return c * (y - alpha) * d, c * d * d
