"""Squared loss: ``phi(a; y) = (a - y)^2 / 2`` (half the SDCA paper's).

Dual: ``-phi*(-alpha) = alpha y - alpha^2 / 2``, ``alpha`` free; 1-smooth.
Contract: :mod:`primaldual.losses.registry`.
"""
from __future__ import annotations

import math

from ._scalar import scalar

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


@scalar
def value(param, a, y):
    r = a - y
    return 0.5 * r * r


@scalar
def derivative(param, a, y):
    return a - y


@scalar
def second_derivative(param, a, y):
    return 1.0


@scalar
def box(param):
    return -math.inf, math.inf, False


@scalar
def interior(param):
    return -math.inf, math.inf


@scalar
def neg_conjugate(param, alpha, y):
    return alpha * y - 0.5 * alpha * alpha


@scalar
def neg_conjugate_grad(param, alpha, y):
    return y - alpha


@scalar
def dual_step(param, alpha, y, a, s):
    return (y - a + s * alpha) / (1.0 + s)


@scalar
def cached_dual_step(param, alpha, y, a, s, z):
    return dual_step(param, alpha, y, a, s), z


@scalar
def dual_slopes(param, alpha, y, a):
    g = y - alpha - a
    return g, g


@scalar
def line_terms(param, alpha, y, d, c):
    return c * (y - alpha) * d, c * d * d
