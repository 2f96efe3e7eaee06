"""Loss objects: one object per loss (docs/conventions.md §2).

Each :class:`Loss` gives the value, a (sub)derivative, ``-phi*(-alpha)`` with
its domain, the exact SDCA coordinate step (with ``||x_i||^2`` or a
per-coordinate curvature ``v_i``), its smoothness or Lipschitz constant and
capability flags.  The numerical work is done by the compiled scalar
functions in :mod:`primaldual.kernels.loss_kernels`; the epoch kernels use
``loss.code`` and ``loss.param`` to call the very same functions.

Solvers declare what they need (``Solver.requires``) and
:func:`check_capabilities` refuses an impossible loss/solver combination
before any work starts.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .kernels import loss_kernels as K

__all__ = ["Loss", "make_loss", "LOSS_NAMES", "check_capabilities"]


@njit(cache=True, nogil=True)
def _vec_value(kind, param, a, y, out):
    for i in range(a.shape[0]):
        out[i] = K.loss_value(kind, param, a[i], y[i])


@njit(cache=True, nogil=True)
def _vec_derivative(kind, param, a, y, out):
    for i in range(a.shape[0]):
        out[i] = K.loss_derivative(kind, param, a[i], y[i])


@njit(cache=True, nogil=True)
def _vec_second_derivative(kind, param, a, y, out):
    for i in range(a.shape[0]):
        out[i] = K.loss_second_derivative(kind, param, a[i], y[i])


@njit(cache=True, nogil=True)
def _vec_neg_conjugate(kind, param, alpha, y, out):
    for i in range(alpha.shape[0]):
        out[i] = K.neg_conjugate(kind, param, alpha[i], y[i])


@njit(cache=True, nogil=True)
def _vec_in_domain(kind, param, alpha, y, out):
    for i in range(alpha.shape[0]):
        out[i] = K.dual_in_domain(kind, param, alpha[i], y[i])


@njit(cache=True, nogil=True)
def _vec_dual_step(kind, param, alpha, y, a, s, out):
    for i in range(alpha.shape[0]):
        out[i] = K.dual_step(kind, param, alpha[i], y[i], a[i], s[i])


def _plain_vector(x):
    """A 1-D C-contiguous float64 ndarray, which the kernels take as it is."""
    return (type(x) is np.ndarray and x.ndim == 1 and x.dtype == np.float64
            and x.flags.c_contiguous)


def _arr(x):
    return np.ascontiguousarray(np.atleast_1d(np.asarray(x, dtype=np.float64)))


class Loss:
    """A loss phi(a; y) with everything the solvers need.

    Attributes
    ----------
    name : str
    code : int           integer code used by the compiled kernels
    param : float        gamma (smooth_hinge), epsilon (epsilon_insensitive), else 0
    classification : bool    labels must be -1/+1
    smooth : bool        phi has a Lipschitz derivative
    smoothness : float or None   Lipschitz constant of phi' (1/gamma in SDCA's notation)
    lipschitz : float or None    Lipschitz constant of phi itself
    generalized_hessian : bool  phi' is Lipschitz and piecewise smooth, so a
                         (generalized) second derivative exists: the smooth losses
    box_dual : bool      dual domain is a bounded box (shrinking applies)
    box_qp_dual : bool   the dual is a quadratic (or linear) objective over a bounded
                         box, after splitting alpha = p - q for the L1 regression losses:
                         hinge, smooth_hinge, absolute, epsilon_insensitive (what the
                         interior-point solver solves)
    """

    def __init__(self, name, code, param, *, classification, smoothness,
                 lipschitz, box_dual):
        self.name = name
        self.code = int(code)
        self.param = float(param)
        self.classification = classification
        self.smoothness = smoothness
        self.lipschitz = lipschitz
        self.smooth = smoothness is not None
        # every smooth loss of docs/conventions.md §2 has a piecewise-constant or smooth phi''
        self.generalized_hessian = self.smooth
        self.box_dual = box_dual
        # -phi*(-alpha) is alpha y - (param/2) alpha^2 on alpha y in [0, 1], or
        # alpha y - param |alpha| on alpha in [-1, 1]
        self.box_qp_dual = code in (K.HINGE, K.SMOOTH_HINGE, K.ABSOLUTE,
                                    K.EPSILON_INSENSITIVE)

    # --------------------------------------------------------------- params
    @property
    def params(self) -> dict:
        if self.code == K.SMOOTH_HINGE:
            return {"gamma": self.param}
        if self.code == K.EPSILON_INSENSITIVE:
            return {"epsilon": self.param}
        return {}

    def __repr__(self):
        ps = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"Loss({self.name!r}{', ' if ps else ''}{ps})"

    def __eq__(self, other):
        return (isinstance(other, Loss) and other.code == self.code
                and other.param == self.param)

    def __hash__(self):
        return hash((self.code, self.param))

    # ----------------------------------------------------------- functions
    def _pointwise(self, kernel, x, y, dtype=np.float64):
        """``kernel(code, param, x_i, y_i)`` over broadcast 1-D ``x`` and ``y``."""
        if _plain_vector(x) and _plain_vector(y) and x.shape == y.shape:
            # the solvers' case (two float64 vectors of n): no conversions
            out = np.empty(x.shape[0], dtype=dtype)
            kernel(self.code, self.param, x, y, out)
            return out
        x, y = np.broadcast_arrays(_arr(x), _arr(y))
        out = np.empty(x.shape[0], dtype=dtype)
        kernel(self.code, self.param, np.ascontiguousarray(x), np.ascontiguousarray(y), out)
        return out

    def value(self, a, y):
        """phi(a; y), elementwise."""
        return self._pointwise(_vec_value, a, y)

    def derivative(self, a, y):
        """A subgradient phi'(a; y) with -phi' in the dual domain."""
        return self._pointwise(_vec_derivative, a, y)

    def second_derivative(self, a, y):
        """A generalized second derivative phi''(a; y), elementwise (smooth losses)."""
        return self._pointwise(_vec_second_derivative, a, y)

    def neg_conjugate(self, alpha, y):
        """-phi*(-alpha; y), elementwise; -inf outside the dual domain."""
        return self._pointwise(_vec_neg_conjugate, alpha, y)

    def conjugate(self, u, y):
        """phi*(u; y) = -neg_conjugate(-u); +inf outside the domain."""
        return -self.neg_conjugate(-_arr(u), y)

    def in_dual_domain(self, alpha, y):
        return self._pointwise(_vec_in_domain, alpha, y, dtype=np.bool_)

    def dual_bounds(self, y):
        """Per-sample bounds ``(lo, hi)`` of the dual domain, the one home of the box.

        ``alpha_i`` is dual feasible exactly when ``lo_i <= alpha_i <= hi_i`` (the
        logistic conjugate is finite on the closed interval, with value 0 at both
        ends). For the classification losses, with ``y_i = +-1``:
        ``alpha_i y_i in [0, 1]`` (hinge, smooth hinge, logistic) or ``[0, inf)``
        (squared hinge); ``alpha_i`` free for the squared loss and in ``[-1, 1]``
        for the absolute and epsilon-insensitive losses.

        Parameters
        ----------
        y : array-like of shape (n,) or float
            Labels.

        Returns
        -------
        lo, hi : ndarray of float64, shape (n,)
            C-contiguous; entries may be infinite.
        """
        y = _arr(y)
        if self.code in (K.HINGE, K.SMOOTH_HINGE, K.LOGISTIC, K.SQUARED_HINGE):
            top = np.inf if self.code == K.SQUARED_HINGE else 1.0
            lo = np.where(y > 0, 0.0, -top)
            hi = np.where(y > 0, top, 0.0)
        elif self.code == K.SQUARED:
            lo, hi = np.full(y.shape, -np.inf), np.full(y.shape, np.inf)
        else:
            lo, hi = np.full(y.shape, -1.0), np.full(y.shape, 1.0)
        return np.ascontiguousarray(lo), np.ascontiguousarray(hi)

    def dual_domain(self, y):
        """Bounds ``(lo, hi)`` of alpha for one label ``y`` (may be infinite)."""
        lo, hi = self.dual_bounds(float(y))
        return float(lo[0]), float(hi[0])

    def dual_step(self, alpha, y, a, sqnorm, lam_n, *, curvature=None):
        """Exact SDCA coordinate maximizer (new alpha_i).

        Maximizes ``-phi*(-(alpha + delta)) - (lam n / 2) ||w + delta x_i/(lam n)||^2``
        where ``a = x_i . w`` and ``sqnorm = ||x_i||^2``; with ``curvature``
        (mini-batch SDCA update (2)) ``v_i`` replaces ``||x_i||^2``.  With
        sample weights pass ``lam_n = lam W / c_i``.
        """
        q = _arr(sqnorm if curvature is None else curvature)
        alpha, y, a, q, ln = np.broadcast_arrays(_arr(alpha), _arr(y), _arr(a),
                                                 q, _arr(lam_n))
        s = np.ascontiguousarray(q / ln)
        out = np.empty(alpha.shape[0])
        _vec_dual_step(self.code, self.param, np.ascontiguousarray(alpha),
                       np.ascontiguousarray(y), np.ascontiguousarray(a), s, out)
        return out

    def sdca_dual_step_s(self, alpha, y, a, s):
        """Same as :meth:`dual_step` with the curvature ``s`` given directly."""
        alpha, y, a, s = np.broadcast_arrays(_arr(alpha), _arr(y), _arr(a), _arr(s))
        out = np.empty(alpha.shape[0])
        _vec_dual_step(self.code, self.param, *(np.ascontiguousarray(t) for t in
                                                (alpha, y, a, s)), out)
        return out


def _positive_param(loss, key, params, default, allow_zero):
    val = params.get(key, default)
    try:
        val = float(val)
    except (TypeError, ValueError):
        raise ValueError(f"loss_params[{key!r}] for loss={loss!r} must be a number, "
                         f"got {val!r}") from None
    if not np.isfinite(val) or val < 0 or (val == 0 and not allow_zero):
        need = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"loss_params[{key!r}] for loss={loss!r} must be finite and "
                         f"{need}, got {val!r}")
    return val


LOSS_NAMES = ("hinge", "smooth_hinge", "squared_hinge", "logistic", "squared",
              "absolute", "epsilon_insensitive")

_ALLOWED_PARAMS = {"smooth_hinge": {"gamma"}, "epsilon_insensitive": {"epsilon"}}


def make_loss(loss, loss_params=None) -> Loss:
    """Build a :class:`Loss` from a name (and ``loss_params``) or pass one through."""
    if isinstance(loss, Loss):
        if loss_params:
            raise ValueError("loss_params given together with a Loss object; put the "
                             "parameters in the object")
        return loss
    if not isinstance(loss, str) or loss not in LOSS_NAMES:
        raise ValueError(f"unknown loss {loss!r}; choose one of {', '.join(LOSS_NAMES)}")
    params = dict(loss_params or {})
    unknown = set(params) - _ALLOWED_PARAMS.get(loss, set())
    if unknown:
        allowed = sorted(_ALLOWED_PARAMS.get(loss, set()))
        raise ValueError(f"unknown loss_params {sorted(unknown)} for loss={loss!r}; "
                         f"allowed: {allowed or 'none'}")
    if loss == "hinge":
        return Loss(loss, K.HINGE, 0.0, classification=True, smoothness=None,
                    lipschitz=1.0, box_dual=True)
    if loss == "smooth_hinge":
        g = _positive_param(loss, "gamma", params, 1.0, allow_zero=False)
        return Loss(loss, K.SMOOTH_HINGE, g, classification=True, smoothness=1.0 / g,
                    lipschitz=1.0, box_dual=True)
    if loss == "squared_hinge":
        return Loss(loss, K.SQUARED_HINGE, 0.0, classification=True, smoothness=2.0,
                    lipschitz=None, box_dual=True)
    if loss == "logistic":
        return Loss(loss, K.LOGISTIC, 0.0, classification=True, smoothness=0.25,
                    lipschitz=1.0, box_dual=False)
    if loss == "squared":
        return Loss(loss, K.SQUARED, 0.0, classification=False, smoothness=1.0,
                    lipschitz=None, box_dual=False)
    if loss == "absolute":
        return Loss(loss, K.ABSOLUTE, 0.0, classification=False, smoothness=None,
                    lipschitz=1.0, box_dual=True)
    e = _positive_param(loss, "epsilon", params, 0.1, allow_zero=True)
    return Loss(loss, K.EPSILON_INSENSITIVE, e, classification=False, smoothness=None,
                lipschitz=1.0, box_dual=True)


_CAPABILITY_TEXT = {
    "smooth": "a smooth loss (hinge, absolute and epsilon_insensitive are not smooth)",
    "lipschitz": "a Lipschitz loss",
    "generalized_hessian": ("a loss with a (generalized) Hessian: logistic, squared_hinge, "
                            "squared or smooth_hinge (hinge, absolute and "
                            "epsilon_insensitive are not differentiable)"),
    "classification": "a classification loss with labels -1/+1",
    "box_qp_dual": ("a loss whose dual is a quadratic over a box: hinge, smooth_hinge, "
                    "absolute or epsilon_insensitive (for the other losses use "
                    "solver='auto', 'sdca' or 'newton')"),
}


def check_capabilities(loss: Loss, solver_name: str, requires) -> None:
    """Raise ValueError, before any work, when ``loss`` lacks what the solver needs."""
    for cap in requires:
        if not getattr(loss, cap):
            raise ValueError(
                f"solver={solver_name!r} does not support loss={loss.name!r}: it needs "
                f"{_CAPABILITY_TEXT.get(cap, cap)}")
