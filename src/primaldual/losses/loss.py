"""The :class:`Loss` object, :func:`make_loss` and :func:`check_capabilities`.

A :class:`Loss` is a loss module (:mod:`primaldual.losses.registry` states the
contract) with its parameter: the Python view the solvers and
:class:`~primaldual.problem.Problem` use (elementwise value, derivative,
conjugate, dual box, SDCA step; constants and capability flags), computed by
the module's compiled functions through :mod:`primaldual.losses.dispatch`.
Solvers declare what they need (``Solver.requires``) and
:func:`check_capabilities` refuses an impossible loss/solver combination
before any work starts.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from . import dispatch as L
from .dispatch import BUILTIN
from .registry import CODES, NAMES

__all__ = ["Loss", "make_loss", "LOSS_NAMES", "check_capabilities"]

#: the names of the built-in scalar losses, in registry order
LOSS_NAMES = NAMES


@njit(cache=True, nogil=True)
def _vec_value(kind, param, a, y, out):
    for i in range(a.shape[0]):
        out[i] = L.value(kind, param, a[i], y[i])


@njit(cache=True, nogil=True)
def _vec_derivative(kind, param, a, y, out):
    for i in range(a.shape[0]):
        out[i] = L.derivative(kind, param, a[i], y[i])


@njit(cache=True, nogil=True)
def _vec_second_derivative(kind, param, a, y, out):
    for i in range(a.shape[0]):
        out[i] = L.second_derivative(kind, param, a[i], y[i])


@njit(cache=True, nogil=True)
def _vec_neg_conjugate(kind, param, alpha, y, out):
    for i in range(alpha.shape[0]):
        out[i] = L.neg_conjugate(kind, param, alpha[i], y[i])


@njit(cache=True, nogil=True)
def _vec_in_domain(kind, param, alpha, y, out):
    for i in range(alpha.shape[0]):
        out[i] = L.dual_in_domain(kind, param, alpha[i], y[i])


@njit(cache=True, nogil=True)
def _vec_dual_step(kind, param, alpha, y, a, s, out):
    for i in range(alpha.shape[0]):
        out[i] = L.dual_step(kind, param, alpha[i], y[i], a[i], s[i])


@njit(cache=True, nogil=True)
def _box(kind, param):
    return L.box(kind, param)


def _plain_vector(x):
    """A 1-D C-contiguous float64 ndarray, which the kernels take as it is."""
    return (type(x) is np.ndarray and x.ndim == 1 and x.dtype == np.float64
            and x.flags.c_contiguous)


def _arr(x):
    return np.ascontiguousarray(np.atleast_1d(np.asarray(x, dtype=np.float64)))


class Loss:
    """A loss phi(a; y) with everything the solvers need.

    ``Loss(module, param=None)``: ``module`` is a loss module (one of
    :data:`~primaldual.losses.dispatch.BUILTIN`, or one outside the package
    meeting the same contract), ``param`` its parameter (its default when None).

    Attributes
    ----------
    name : str
    module : the loss module
    code : int           position in the registry, used by the compiled kernels
                         (-1 for a module outside it)
    builtin : bool       the module is in the registry
    param : float        gamma (smooth_hinge), epsilon (epsilon_insensitive,
                         squared_epsilon_insensitive), else 0
    classification : bool    labels must be -1/+1
    smooth : bool        phi has a Lipschitz derivative
    smoothness : float or None   Lipschitz constant of phi' (1/gamma in SDCA's notation)
    lipschitz : float or None    Lipschitz constant of phi itself
    generalized_hessian : bool  phi' is Lipschitz and piecewise smooth, so a
                         (generalized) second derivative exists: the smooth losses
    box_dual : bool      dual domain is a box shrinking may hold a coordinate at
    box_qp_dual : bool   the dual is a quadratic (or linear) objective over a bounded
                         box, after splitting alpha = p - q for the L1 regression losses:
                         hinge, smooth_hinge, absolute, epsilon_insensitive (what the
                         interior-point solver solves)
    quadratic_dual : bool    -phi* is quadratic on its domain
    step_cache : bool    the SDCA step keeps a float per sample
    """

    def __init__(self, module, param=None):
        self.module = module
        self.name = module.NAME
        self.builtin = CODES.get(self.name, -1) >= 0 and BUILTIN[CODES[self.name]] is module
        self.code = CODES[self.name] if self.builtin else -1
        if param is None:
            param = module.PARAM[1] if module.PARAM else 0.0
        self.param = float(param)
        self.classification = bool(module.CLASSIFICATION)
        self.smoothness = module.smoothness(self.param)
        self.lipschitz = module.lipschitz(self.param)
        self.smooth = self.smoothness is not None
        # every loss with a Lipschitz phi' has a piecewise-constant or smooth phi''
        self.generalized_hessian = self.smooth
        self.box_dual = bool(module.BOX_DUAL)
        self.box_qp_dual = bool(module.BOX_QP_DUAL)
        self.quadratic_dual = bool(module.QUADRATIC_DUAL)
        self.step_cache = bool(module.STEP_CACHE)

    # --------------------------------------------------------------- params
    @property
    def params(self) -> dict:
        return {self.module.PARAM[0]: self.param} if self.module.PARAM else {}

    def __repr__(self):
        ps = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"Loss({self.name!r}{', ' if ps else ''}{ps})"

    def __eq__(self, other):
        return (isinstance(other, Loss) and other.module is self.module
                and other.param == self.param)

    def __hash__(self):
        return hash((self.name, self.code, self.param))

    def kernel(self, func):
        """The compiled ``func`` for this loss (:func:`~primaldual.losses.dispatch.specialise`)."""
        return L.specialise(func, self)

    # ----------------------------------------------------------- functions
    def _pointwise(self, kernel, x, y, dtype=np.float64):
        """``kernel(code, param, x_i, y_i)`` over broadcast 1-D ``x`` and ``y``."""
        kernel = L.specialise(kernel, self)
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
        """Per-sample bounds ``(lo, hi)`` of the dual domain (the module's ``box``).

        ``alpha_i`` is dual feasible exactly when ``lo_i <= alpha_i <= hi_i`` (the
        logistic conjugate is finite on the closed interval, with value 0 at both
        ends).  A box in ``b = alpha y`` is mapped to ``alpha`` with ``y = +-1``.

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
        blo, bhi, in_b = L.specialise(_box, self)(self.code, self.param)
        if in_b:
            lo = np.where(y > 0, blo, -bhi) + 0.0      # + 0.0: no -0.0
            hi = np.where(y > 0, bhi, -blo) + 0.0
        else:
            lo, hi = np.full(y.shape, blo), np.full(y.shape, bhi)
        return np.ascontiguousarray(lo, dtype=np.float64), np.ascontiguousarray(hi, dtype=np.float64)

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
        return self.sdca_dual_step_s(alpha, y, a, q / ln)

    def sdca_dual_step_s(self, alpha, y, a, s):
        """Same as :meth:`dual_step` with the curvature ``s`` given directly."""
        alpha, y, a, s = np.broadcast_arrays(_arr(alpha), _arr(y), _arr(a), _arr(s))
        out = np.empty(alpha.shape[0])
        L.specialise(_vec_dual_step, self)(
            self.code, self.param, *(np.ascontiguousarray(t) for t in (alpha, y, a, s)), out)
        return out


def _param_value(loss, key, params, default, allow_zero):
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


def make_loss(loss, loss_params=None) -> Loss:
    """Build a :class:`Loss` from a name (and ``loss_params``) or pass one through."""
    if isinstance(loss, Loss):
        if loss_params:
            raise ValueError("loss_params given together with a Loss object; put the "
                             "parameters in the object")
        return loss
    if not isinstance(loss, str) or loss not in CODES:
        raise ValueError(f"unknown loss {loss!r}; choose one of {', '.join(LOSS_NAMES)}")
    module = BUILTIN[CODES[loss]]
    params = dict(loss_params or {})
    allowed = {module.PARAM[0]} if module.PARAM else set()
    unknown = set(params) - allowed
    if unknown:
        raise ValueError(f"unknown loss_params {sorted(unknown)} for loss={loss!r}; "
                         f"allowed: {sorted(allowed) or 'none'}")
    if module.PARAM is None:
        return Loss(module)
    key, default, allow_zero = module.PARAM
    return Loss(module, _param_value(loss, key, params, default, allow_zero))


_CAPABILITY_TEXT = {
    "smooth": "a smooth loss (hinge, absolute and epsilon_insensitive are not smooth)",
    "lipschitz": "a Lipschitz loss",
    "generalized_hessian": ("a loss with a (generalized) Hessian: logistic, squared_hinge, "
                            "squared, squared_epsilon_insensitive or smooth_hinge "
                            "(hinge, absolute and "
                            "epsilon_insensitive are not differentiable)"),
    "classification": "a classification loss with labels -1/+1",
    "box_dual": ("a loss whose dual domain is a box (hinge, smooth_hinge, squared_hinge, "
                 "absolute, epsilon_insensitive, squared_epsilon_insensitive)"),
    "box_qp_dual": ("a loss whose dual is a quadratic over a box: hinge, smooth_hinge, "
                    "absolute or epsilon_insensitive (for the other losses use "
                    "solver='auto', 'sdca' or 'newton')"),
    "builtin": (f"one of the registered losses ({', '.join(LOSS_NAMES)}); a loss module "
                "outside the registry runs with solver='sdca' or 'newton'"),
}


def check_capabilities(loss: Loss, solver_name: str, requires) -> None:
    """Raise ValueError, before any work, when ``loss`` lacks what the solver needs."""
    for cap in requires:
        if not getattr(loss, cap):
            raise ValueError(
                f"solver={solver_name!r} does not support loss={loss.name!r}: it needs "
                f"{_CAPABILITY_TEXT.get(cap, cap)}")
