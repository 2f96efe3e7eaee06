"""Hinge loss: ``phi(a; y) = max(0, 1 - y a)``, labels -1/+1.

Dual (``b = alpha y``): ``-phi*(-alpha) = b`` on ``b in [0, 1]``; 1-Lipschitz,
not smooth.  The module contract is in :mod:`primaldual.losses.registry`.
"""
from __future__ import annotations

import math

from ._scalar import clip, op

NAME = "hinge"
PARAM = None
CLASSIFICATION = True
BOX_DUAL = True          # shrinking applies
BOX_QP_DUAL = True       # the dual is a quadratic over a box (interior-point solver)
QUADRATIC_DUAL = True    # -phi* is quadratic on its domain (exact summed steps)
STEP_CACHE = False       # no per-sample cache for the SDCA step


def smoothness(param):
    return None


def lipschitz(param):
    return 1.0


@op
def value(param, a, y):
    m = 1.0 - y * a
    return m if m > 0.0 else 0.0


@op
def derivative(param, a, y):
    """-y below the hinge, 0 from ``y a = 1`` on."""
    return -y if y * a < 1.0 else 0.0


@op
def second_derivative(param, a, y):
    return 0.0


@op
def box(param):
    return 0.0, 1.0, True


@op
def interior(param):
    return 0.0, 1.0


@op
def neg_conjugate(param, alpha, y):
    return alpha * y


@op
def neg_conjugate_grad(param, alpha, y):
    return y


@op
def dual_step(param, alpha, y, a, s):
    b0 = alpha * y
    if s > 0.0:
        b = clip(b0 + (1.0 - a * y) / s, 0.0, 1.0)
    else:
        g = 1.0 - a * y
        b = 1.0 if g > 0.0 else (0.0 if g < 0.0 else b0)
    return b * y


@op
def dual_slopes(param, alpha, y, a):
    b = alpha * y
    g = 1.0 - a * y
    gp = -math.inf if b >= 1.0 else g
    gm = math.inf if b <= 0.0 else g
    return gp, gm


@op
def line_terms(param, alpha, y, d, c):
    return c * y * d, 0.0
