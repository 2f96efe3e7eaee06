"""Compiled scalar kernels for the seven losses of docs/conventions.md §2.

Every function here is a pure ``@njit`` scalar function dispatched on an
integer loss code ``kind`` with one real parameter ``param`` (``gamma`` for the
smoothed hinge, ``epsilon`` for the epsilon-insensitive loss, unused
otherwise).  The :mod:`primaldual.losses` objects wrap them for Python use;
the epoch kernels call them directly so that one definition of each formula
serves both.

Conventions (docs/conventions.md §1), with ``a = x . w`` and ``b = alpha * y``:

========================  =================================  ===========================
loss                      phi(a; y)                          -phi*(-alpha; y), domain
========================  =================================  ===========================
hinge (0)                 max(0, 1 - y a)                    b,  b in [0, 1]
smooth_hinge (1)          see docs/conventions.md §2         b - gamma b^2 / 2, b in [0,1]
squared_hinge (2)         max(0, 1 - y a)^2                  b - b^2 / 4 ... see below
logistic (3)              log(1 + exp(-y a))                 -[b log b + (1-b) log(1-b)]
squared (4)               (a - y)^2 / 2                      alpha y - alpha^2 / 2
absolute (5)              |a - y|                            alpha y, alpha in [-1, 1]
epsilon_insensitive (6)   max(0, |a - y| - eps)              alpha y - eps |alpha|, [-1,1]
========================  =================================  ===========================

For the squared hinge, ``-phi*(-alpha) = alpha y - alpha^2 / 4`` with
``alpha y >= 0``; since ``y = +-1`` this is ``b - b^2/4``.

The SDCA coordinate step (Shalev-Shwartz & Zhang 2013, Procedure SDCA, and
the closed forms of their Section 6) maximizes over the new value ``beta``

    -phi*(-beta; y) - a (beta - alpha) - (s / 2) (beta - alpha)^2

where ``s = c_i ||x_i||^2 / (lam W)`` for plain SDCA (the weighted
objective of docs/conventions.md §1, ``W = sum_i c_i``) and ``s = c_i v_i / (lam W)`` for update (2) of
mini-batch SDCA (Takac, Richtarik & Srebro), ``v_i`` being the ESO weight.
``s = 0`` (a row of zeros) is valid: the maximizer is then ``-phi'(0)``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

HINGE = 0
SMOOTH_HINGE = 1
SQUARED_HINGE = 2
LOGISTIC = 3
SQUARED = 4
ABSOLUTE = 5
EPSILON_INSENSITIVE = 6

#: largest float strictly below 1; the logistic dual never reaches 1
_ONE_MINUS = 1.0 - 2.0 ** -53
#: smallest positive b kept for the logistic dual (never exactly 0)
_TINY = 1e-300

#: the scalar functions below are called from compiled code only: without the
#: CPython and C-callable wrappers Numba compiles each about a fifth faster,
#: which the first fit in a fresh process (empty cache) waits for
#: (benchmarks/bench_startup.py); :func:`dual_step`, which tests and drivers
#: call from Python, keeps its wrapper
scalar = njit(cache=True, nogil=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)

_NEWTON_TOL = 1e-12
#: a Newton step below this (relative) is the last one (quadratic convergence)
_NEWTON_QUAD = 1e-6
_NEWTON_MAXITER = 100


@scalar
def _softplus(z):
    """log(1 + exp(z)) without overflow."""
    if z > 0.0:
        return z + math.log1p(math.exp(-z))
    return math.log1p(math.exp(z))


@scalar
def _sigmoid(z):
    """1 / (1 + exp(-z)) without overflow."""
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@scalar
def _xlogx(b):
    if b <= 0.0:
        return 0.0
    return b * math.log(b)


@scalar
def loss_value(kind, param, a, y):
    """phi(a; y)."""
    if kind == HINGE:
        m = 1.0 - y * a
        return m if m > 0.0 else 0.0
    if kind == SMOOTH_HINGE:
        m = 1.0 - y * a  # = 1 - ya
        if m <= 0.0:
            return 0.0
        if m >= param:
            return m - 0.5 * param
        return m * m / (2.0 * param)
    if kind == SQUARED_HINGE:
        m = 1.0 - y * a
        return m * m if m > 0.0 else 0.0
    if kind == LOGISTIC:
        return _softplus(-y * a)
    if kind == SQUARED:
        r = a - y
        return 0.5 * r * r
    if kind == ABSOLUTE:
        return abs(a - y)
    # EPSILON_INSENSITIVE
    r = abs(a - y) - param
    return r if r > 0.0 else 0.0


@scalar
def loss_derivative(kind, param, a, y):
    """A (sub)derivative phi'(a; y) whose negation lies in the dual domain.

    At kinks the subgradient 0 is chosen where it is admissible (hinge at
    ``y a = 1``, absolute at ``a = y``, epsilon-insensitive inside the tube).
    """
    if kind == HINGE:
        return -y if y * a < 1.0 else 0.0
    if kind == SMOOTH_HINGE:
        m = 1.0 - y * a
        if m <= 0.0:
            return 0.0
        if m >= param:
            return -y
        return -y * m / param
    if kind == SQUARED_HINGE:
        m = 1.0 - y * a
        return -2.0 * y * m if m > 0.0 else 0.0
    if kind == LOGISTIC:
        return -y * _sigmoid(-y * a)
    if kind == SQUARED:
        return a - y
    if kind == ABSOLUTE:
        r = a - y
        if r > 0.0:
            return 1.0
        if r < 0.0:
            return -1.0
        return 0.0
    r = a - y
    if r > param:
        return 1.0
    if r < -param:
        return -1.0
    return 0.0


@scalar
def dual_in_domain(kind, param, alpha, y):
    """True when -alpha is in the domain of phi* (alpha is dual feasible)."""
    if kind == HINGE or kind == SMOOTH_HINGE:
        b = alpha * y
        return b >= 0.0 and b <= 1.0
    if kind == SQUARED_HINGE:
        return alpha * y >= 0.0
    if kind == LOGISTIC:
        b = alpha * y
        return b >= 0.0 and b <= 1.0
    if kind == SQUARED:
        return math.isfinite(alpha)
    return alpha >= -1.0 and alpha <= 1.0


@scalar
def neg_conjugate(kind, param, alpha, y):
    """-phi*(-alpha; y); -inf outside the dual domain."""
    if not dual_in_domain(kind, param, alpha, y):
        return -np.inf
    if kind == HINGE:
        return alpha * y
    if kind == SMOOTH_HINGE:
        return alpha * y - 0.5 * param * alpha * alpha
    if kind == SQUARED_HINGE:
        return alpha * y - 0.25 * alpha * alpha
    if kind == LOGISTIC:
        b = alpha * y
        return -(_xlogx(b) + _xlogx(1.0 - b))
    if kind == SQUARED:
        return alpha * y - 0.5 * alpha * alpha
    if kind == ABSOLUTE:
        return alpha * y
    return alpha * y - param * abs(alpha)


@scalar
def _clip(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


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
        b = _sigmoid(z)
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
                sg = _sigmoid(z)
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
                b = _sigmoid(z)
                break
            z = zn
        else:
            b = _sigmoid(z)
    if b < _TINY:
        b = _TINY
        z = math.log(b) - math.log1p(-b)
    elif b > _ONE_MINUS:
        b = _ONE_MINUS
        z = math.log(b) - math.log1p(-b)
    return b, z


@scalar
def _logistic_step(alpha, y, a, s):
    """:func:`logistic_newton` started from ``alpha`` itself (no cached logit)."""
    b, _ = logistic_newton(alpha * y, a * y, s, math.nan)
    return b * y


@njit(cache=True, nogil=True)
def dual_step(kind, param, alpha, y, a, s):
    """New value of alpha_i maximizing the SDCA coordinate objective.

    Maximizes ``-phi*(-beta) - a (beta - alpha) - (s/2)(beta - alpha)^2`` over
    ``beta`` in the dual domain (see the module docstring).  Closed form for
    all losses but logistic (SDCA paper, Section 6, rewritten with the
    curvature ``s``), safeguarded Newton for logistic.
    """
    if kind == HINGE:
        b0 = alpha * y
        if s > 0.0:
            b = _clip(b0 + (1.0 - a * y) / s, 0.0, 1.0)
        else:
            g = 1.0 - a * y
            b = 1.0 if g > 0.0 else (0.0 if g < 0.0 else b0)
        return b * y
    if kind == SMOOTH_HINGE:
        b0 = alpha * y
        b = _clip((1.0 - a * y + s * b0) / (param + s), 0.0, 1.0)
        return b * y
    if kind == SQUARED_HINGE:
        b0 = alpha * y
        b = (1.0 - a * y + s * b0) / (0.5 + s)
        if b < 0.0:
            b = 0.0
        return b * y
    if kind == LOGISTIC:
        return _logistic_step(alpha, y, a, s)
    if kind == SQUARED:
        return (y - a + s * alpha) / (1.0 + s)
    if kind == ABSOLUTE:
        if s > 0.0:
            return _clip(alpha + (y - a) / s, -1.0, 1.0)
        g = y - a
        return 1.0 if g > 0.0 else (-1.0 if g < 0.0 else alpha)
    # EPSILON_INSENSITIVE: concave piecewise quadratic with a kink at 0
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


@scalar
def dual_slopes(kind, param, alpha, y, a):
    """One-sided slopes (g_plus, g_minus) of the coordinate gain at delta = 0.

    ``g_plus`` is the right derivative of ``-phi*(-(alpha + d)) - a d`` at
    ``d = 0`` and ``g_minus`` the left derivative; a side blocked by the
    domain returns -inf (right) or +inf (left).  Used by shrinking: a
    coordinate is optimal when ``g_plus <= 0 <= g_minus``.
    """
    inf = np.inf
    if kind == HINGE or kind == SMOOTH_HINGE or kind == SQUARED_HINGE:
        b = alpha * y
        if kind == HINGE:
            g = 1.0 - a * y
        elif kind == SMOOTH_HINGE:
            g = 1.0 - a * y - param * b
        else:
            g = 1.0 - a * y - 0.5 * b
        # slope in b-space equals slope in alpha-space times y; report in b
        gp = g
        gm = g
        if b <= 0.0:
            gm = inf
        if kind != SQUARED_HINGE and b >= 1.0:
            gp = -inf
        return gp, gm
    if kind == LOGISTIC or kind == SQUARED:
        if kind == SQUARED:
            g = y - alpha - a
        else:
            b = alpha * y
            if b <= 0.0 or b >= 1.0:
                g = inf if b <= 0.0 else -inf
            else:
                g = (math.log1p(-b) - math.log(b) - a * y)
            return g, g
        return g, g
    if kind == ABSOLUTE:
        g = y - a
        gp = g
        gm = g
        if alpha <= -1.0:
            gm = inf
        if alpha >= 1.0:
            gp = -inf
        return gp, gm
    # EPSILON_INSENSITIVE
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
        gm = inf
    if alpha >= 1.0:
        gp = -inf
    return gp, gm


@scalar
def loss_second_derivative(kind, param, a, y):
    """A (generalized) second derivative phi''(a; y) of the smooth losses.

    Where phi' has a kink (squared hinge at ``y a = 1``, the smoothed hinge at
    ``y a = 1`` and ``y a = 1 - gamma``) the value of the side ``y a >= 1`` or
    ``y a <= 1 - gamma`` is taken: this is the generalized Hessian of
    Mangasarian (2002) used by LIBLINEAR's ``-s 2``.  The non-smooth losses
    (hinge, absolute, epsilon-insensitive) return 0; no solver uses them here.
    """
    if kind == SMOOTH_HINGE:
        m = 1.0 - y * a
        if m <= 0.0 or m >= param:
            return 0.0
        return 1.0 / param
    if kind == SQUARED_HINGE:
        return 2.0 if 1.0 - y * a > 0.0 else 0.0
    if kind == LOGISTIC:
        s = _sigmoid(-y * a)
        return s * (1.0 - s)
    if kind == SQUARED:
        return 1.0
    return 0.0
