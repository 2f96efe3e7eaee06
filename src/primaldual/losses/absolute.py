"""Absolute loss: ``phi(a; y) = |a - y|``.

Dual: ``-phi*(-alpha) = alpha y`` on ``alpha in [-1, 1]``; 1-Lipschitz, not
smooth.  Contract: :mod:`primaldual.losses.registry`.

It is the epsilon-insensitive loss at ``epsilon = 0`` (a loss without a
parameter is called with ``param = 0.0``), so its operations are that loss's,
evaluated at ``param = 0``; only the flags differ: with no ``|alpha|`` term its
dual is a linear function on a box, a quadratic program for the interior-point
solver after ``alpha = p - q``.
"""
from __future__ import annotations

from .epsilon_insensitive import (box, derivative, dual_slopes, dual_step, interior,  # noqa: F401
                                  lipschitz, line_terms, neg_conjugate, neg_conjugate_grad,
                                  second_derivative, smoothness, value)

NAME = "absolute"
PARAM = None
CLASSIFICATION = False
BOX_DUAL = True
BOX_QP_DUAL = True       # after splitting alpha = p - q: the interior-point solver
QUADRATIC_DUAL = True
STEP_CACHE = False
