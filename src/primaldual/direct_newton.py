"""``direct-newton``: a small dense smooth problem solved in numpy.

For the losses ``squared_hinge``, ``logistic``, ``squared`` and
``squared_epsilon_insensitive`` (its ``epsilon`` the one parameter, ``param``)
with an L2 penalty (``l1 = 0``) on a dense ``n x d`` matrix, :func:`solve_direct`
minimizes

    P(w) = (1/W) sum_i c_i phi(x_i . w; y_i) + lam/2 ||w||^2

by Newton's method with the exact (generalized, for the squared hinge)
Hessian ``lam I + (1/W) X^T diag(c phi'') X`` (generalized for the squared
hinge and the squared epsilon-insensitive loss), formed by BLAS and solved by a
Cholesky factorization, and a backtracking line search on P.  Steps whose
decrease of P is below the rounding of its n-term sum are judged by the
gradient norm instead (the gap ``~ ||grad P||^2 / (2 lam)`` may still be far
from ``tol`` there).  On a problem of a few hundred rows a fit takes about a
millisecond: no compiled kernel, no solver machinery.

The certificate is the one every primal method returns (docs/conventions.md
§1): ``alpha_i = -phi'(x_i . w)``, ``D(alpha)`` from the conjugates and the
gap ``P(w) - D(alpha)``, computed for the returned ``w``; the caller may give
its own exact ``certify(w, margins, alpha) -> (primal, dual)`` (the solver
layer passes the :class:`~primaldual.problem.Problem`'s), which then judges
every point whose numpy gap reaches ``tol`` and the point returned.  It stops
at relative gap <= tol;
after :data:`MAX_ITERATIONS` steps, or when no step decreases P, it returns
its last point unconverged and the caller goes on from there.

Users: ``solver="auto"`` (:mod:`primaldual.solvers._direct`, hence the
estimators) and the command line (:mod:`primaldual.cli.core`), which runs it
without loading the solver registry.  This module needs numpy only.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ._util.blas import serial_blas

__all__ = ["LOSSES", "PARAMS", "param_of", "MAX_FEATURES", "MAX_CELLS", "MAX_ITERATIONS",
           "NAME", "DirectResult", "applies", "solve_direct"]

#: the losses solved here: name -> classification loss?
LOSSES = {"squared_hinge": True, "logistic": True, "squared": False,
          "squared_epsilon_insensitive": False}
#: the parameter a loss here takes in ``loss_params`` and its default, as the
#: loss registry has them (the others take none)
PARAMS = {"squared_epsilon_insensitive": ("epsilon", 0.1)}
#: the losses whose generalized Hessian vanishes on some rows (skipped when formed)
_FLAT = ("squared_hinge", "squared_epsilon_insensitive")
MAX_FEATURES = 2000
MAX_CELLS = 4_000_000
MAX_ITERATIONS = 60
NAME = "direct-newton"
#: BLAS runs on one thread from this many cells (OpenBLAS keeps products this
#: small on one thread itself; the limit costs about 0.1 ms to set)
SERIAL_BLAS_CELLS = 8192
#: Armijo's constant and the halvings of the line search
ARMIJO = 1e-4
HALVINGS = 40


@dataclass
class DirectResult:
    """The fields of :class:`primaldual.SolveResult` the command line reads."""

    coef: np.ndarray
    dual_coef: np.ndarray
    primal: float
    dual: float
    gap: float
    rel_gap: float
    converged: bool
    n_epochs: float
    time: float
    loss: str
    lam: float
    tol: float
    l1: float = 0.0
    solver: str = NAME
    stop_reason: str = "converged"
    trace: list = field(default_factory=list)
    options: dict = field(default_factory=dict)
    n_iter: int = 0


def applies(loss, n, d, *, l1=0.0, solver="auto", options=(), loss_params=None) -> bool:
    """Whether the command line's ``--solver auto`` solves this problem here."""
    return (solver == "auto" and loss in LOSSES and not l1
            and set(loss_params or ()) <= {PARAMS.get(loss, (None,))[0]}
            and not set(options) - {"progress"} and d <= MAX_FEATURES
            and n * d <= MAX_CELLS)


def param_of(loss, loss_params) -> float:
    """The parameter of ``loss`` in ``loss_params`` (0 when it takes none);
    the registry's default when not given."""
    if loss not in PARAMS:
        return 0.0
    key, default = PARAMS[loss]
    return float((loss_params or {}).get(key, default))


def _terms(loss, a, y, param=0.0):
    """phi, phi', phi'' (generalized) at margins ``a``."""
    if loss == "squared_epsilon_insensitive":
        r = a - y
        z = np.sign(r) * np.maximum(np.abs(r) - param, 0.0)
        return z * z, 2.0 * z, 2.0 * (z != 0)
    if loss == "squared_hinge":
        z = np.maximum(1.0 - y * a, 0.0)
        return z * z, -2.0 * y * z, 2.0 * (z > 0)
    if loss == "logistic":
        m = y * a
        s = 0.5 * (1.0 - np.tanh(0.5 * m))            # sigmoid(-m), overflow-free
        return np.logaddexp(0.0, -m), -y * s, s * (1.0 - s)
    r = a - y
    return 0.5 * r * r, r, np.ones_like(a)


def _conjugate(loss, alpha, y, param=0.0):
    """-phi*(-alpha_i; y_i), the dual's per-sample term."""
    if loss == "squared_epsilon_insensitive":
        return alpha * y - param * np.abs(alpha) - 0.25 * alpha * alpha
    if loss == "squared_hinge":
        return alpha * y - 0.25 * alpha * alpha
    if loss == "logistic":
        p = np.clip(alpha * y, 0.0, 1.0)
        q = 1.0 - p
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = np.where(p > 0, p * np.log(p), 0.0) + np.where(q > 0, q * np.log(q), 0.0)
        return -ent
    return alpha * y - 0.5 * alpha * alpha


class _Objective:
    """P, its gradient, Hessian and certificate on dense rows; counts passes.
    ``terms`` are ``_terms`` at the margins of a point, computed once per point."""

    def __init__(self, X, y, c, lam, loss, param=0.0):
        self.X, self.y, self.lam, self.loss, self.param = X, y, lam, loss, param
        c = np.ones(y.shape[0]) if c is None else np.asarray(c, dtype=np.float64)
        self.cw = c / float(c.sum())
        self.equal = bool(np.all(c == c[0]))    # equal weights: the same cw in every row
        self.passes = 0

    def margins(self, w):
        self.passes += 1
        return self.X @ w

    def terms(self, a):
        return _terms(self.loss, a, self.y, self.param)

    def primal(self, w, terms):
        return float(self.cw @ terms[0]) + 0.5 * self.lam * float(w @ w)

    def image(self, alpha):
        """v = (1/W) sum_i c_i alpha_i x_i (one pass); grad P(w) = lam w - v."""
        self.passes += 1
        return self.X.T @ (self.cw * alpha)

    def dual(self, alpha, v):
        return float(self.cw @ _conjugate(self.loss, alpha, self.y, self.param)) \
            - float(v @ v) / (2.0 * self.lam)

    def newton_step(self, terms, g):
        """The Newton direction ``-H^{-1} g``, H scaled to unit diagonal."""
        h = self.cw * terms[2]
        if self.loss in _FLAT:
            keep = np.flatnonzero(h)
            Xs, h = self.X[keep], h[keep]
            Xs *= np.sqrt(h)[:, None]               # the gathered copy, in place
        elif self.loss == "squared" and self.equal:
            Xs = None                           # h = 1/n in every row: H = X^T X / n
        else:
            Xs = self.X * np.sqrt(h)[:, None]
        H = (self.X.T @ self.X) * h[0] if Xs is None else Xs.T @ Xs
        H.flat[::H.shape[0] + 1] += self.lam
        self.passes += 1
        s = 1.0 / np.sqrt(H.diagonal())
        H *= s[:, None]
        H *= s
        return s * np.linalg.solve(H, -s * g)


def solve_direct(X, y, *, loss, lam, tol, sample_weight=None, w0=None, certify=None,
                 param=0.0):
    """Newton's method for the problem of the module docstring: a
    :class:`DirectResult` (``converged`` False when it stops before ``tol``).

    ``X`` dense (a sparse matrix is densified: at most :data:`MAX_CELLS`
    cells); ``certify(w, margins, alpha) -> (primal, dual)``, when given,
    replaces the numpy certificate wherever that one reaches ``tol`` and for
    the point returned (the trace's other records are numpy's).  BLAS runs on one thread:
    on products this small, more threads only wait for each other."""
    if not isinstance(X, np.ndarray):
        X = X.toarray()
    X = np.asarray(X, dtype=np.float64)
    with serial_blas(X.shape[0] * X.shape[1] >= SERIAL_BLAS_CELLS):
        return _newton(X, np.asarray(y, dtype=np.float64), loss, float(lam), tol,
                       sample_weight, w0, certify, float(param))


def _newton(X, y, loss, lam, tol, sample_weight, w0, certify, param):
    t0 = time.perf_counter()
    f = _Objective(X, y, sample_weight, lam, loss, param)
    n, d = X.shape
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64).ravel()
    # the rounding of P's n-term sums: decreases below it are not seen
    resolution = max(1e-14, 4.0 * 2.0 ** -53 * math.sqrt(n))
    trace, best, stop = [], None, "max_iterations"
    a = f.margins(w)
    terms = f.terms(a)
    for it in range(MAX_ITERATIONS + 1):
        alpha = -terms[1]
        v = f.image(alpha)
        p_here = f.primal(w, terms)
        primal, dual = p_here, f.dual(alpha, v)
        rel = (primal - dual) / max(abs(primal), 1e-12)
        sure = certify is None
        if not sure and (rel <= tol or it == MAX_ITERATIONS):
            # the caller's certificate decides; numpy's judges the other iterates
            primal, dual = certify(w, a, alpha)
            rel, sure = (primal - dual) / max(abs(primal), 1e-12), True
        trace.append({"epoch": float(f.passes), "time": time.perf_counter() - t0,
                      "primal": primal, "dual": dual, "gap": primal - dual, "rel_gap": rel,
                      "feature_accesses": int(f.passes * n * d)})
        if best is None or rel < best[-1]:
            best = (w, a, alpha, primal, dual, sure, rel)
        if (rel <= tol and sure) or it == MAX_ITERATIONS:
            stop = "converged" if rel <= tol else stop
            break
        g = lam * w - v
        step = f.newton_step(terms, g)
        slope = float(g @ step)
        moved = _line_search(f, w, a, g, step, slope, p_here, resolution) \
            if slope < 0 else None
        if moved is None:
            stop = "stalled"
            break
        w, a, terms = moved
    w, a, alpha, primal, dual, sure, rel = best
    if not sure:
        primal, dual = certify(w, a, alpha)
        rel = (primal - dual) / max(abs(primal), 1e-12)
    return DirectResult(coef=w, dual_coef=alpha, primal=primal, dual=dual, gap=primal - dual,
                        rel_gap=rel, converged=rel <= tol, n_epochs=float(f.passes),
                        time=time.perf_counter() - t0, loss=loss, lam=lam, tol=float(tol),
                        stop_reason=stop, trace=trace, n_iter=len(trace) - 1)


def _line_search(f, w, a, g, step, slope, primal, resolution):
    """``(w, margins, terms)`` after the step ``t step`` with Armijo's decrease
    of P (t halved from 1); where the decrease is below P's rounding, the full
    step when it reduces the gradient norm.  None when neither holds."""
    da = f.margins(step)
    t = 1.0
    for _ in range(HALVINGS):
        cand_w, cand_a = w + t * step, a + t * da
        terms = f.terms(cand_a)
        p = f.primal(cand_w, terms)
        if p <= primal + ARMIJO * t * slope:
            return cand_w, cand_a, terms
        if t == 1.0 and abs(p - primal) <= resolution * abs(primal):
            g_new = f.lam * cand_w - f.image(-terms[1])
            if float(g_new @ g_new) < float(g @ g):
                return cand_w, cand_a, terms
        t *= 0.5
    return None
