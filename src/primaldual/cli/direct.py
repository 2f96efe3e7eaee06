"""``direct-newton``: a small problem solved in numpy, with its exact certificate.

For the smooth losses ``squared_hinge``, ``logistic`` and ``squared`` with an
L2 penalty (``l1 = 0``) and at most :data:`MAX_FEATURES` columns and
:data:`MAX_CELLS` cells, ``--solver auto`` on the command line minimizes

    P(w) = (1/W) sum_i c_i phi(x_i . w; y_i) + lam/2 ||w||^2

by Newton's method with the exact (generalized, for the squared hinge)
Hessian ``lam I + (1/W) X^T diag(c phi'') X`` and a backtracking line search
on P.  It needs no compiled kernel, so a command on a file such as
heart_scale runs in a fraction of a second (benchmarks/results/startup.md).

The certificate is the one a primal method returns (docs/conventions.md §1):
``alpha_i = -phi'(x_i . w)``, ``D(alpha)`` from the conjugates, and the gap
``P(w) - D(alpha)``, all computed exactly for the returned ``w``.  The method
stops at relative gap <= tol; a problem it does not finish in
:data:`MAX_ITERATIONS` steps goes to :func:`primaldual.solve` instead.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

#: the losses solved here: name -> classification loss?
LOSSES = {"squared_hinge": True, "logistic": True, "squared": False}
MAX_FEATURES = 2000
MAX_CELLS = 4_000_000
MAX_ITERATIONS = 60
NAME = "direct-newton"


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


def applies(loss, n, d, *, l1=0.0, solver="auto", options=(), loss_params=None) -> bool:
    """Whether ``--solver auto`` solves this problem here."""
    return (solver == "auto" and loss in LOSSES and not l1 and not loss_params
            and not set(options) - {"progress"} and d <= MAX_FEATURES
            and n * d <= MAX_CELLS)


def _terms(loss, a, y):
    """phi, phi', phi'' (generalized) at margins ``a``."""
    if loss == "squared_hinge":
        z = np.maximum(1.0 - y * a, 0.0)
        return z * z, -2.0 * y * z, 2.0 * (z > 0)
    if loss == "logistic":
        m = y * a
        s = 0.5 * (1.0 - np.tanh(0.5 * m))            # sigmoid(-m), overflow-free
        return np.logaddexp(0.0, -m), -y * s, s * (1.0 - s)
    r = a - y
    return 0.5 * r * r, r, np.ones_like(a)


def _conjugate(loss, alpha, y):
    """-phi*(-alpha_i; y_i), the dual's per-sample term."""
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
    def __init__(self, X, y, c, lam, loss):
        self.X, self.y, self.lam, self.loss = X, y, lam, loss
        self.c = np.ones(y.shape[0]) if c is None else np.asarray(c, dtype=np.float64)
        self.W = float(self.c.sum())
        self.passes = 0

    def margins(self, w):
        self.passes += 1
        return np.asarray(self.X @ w, dtype=np.float64).ravel()

    def primal(self, w, a):
        phi = _terms(self.loss, a, self.y)[0]
        return float(self.c @ phi) / self.W + 0.5 * self.lam * float(w @ w)

    def certificate(self, w, a):
        phi, dphi, _ = _terms(self.loss, a, self.y)
        alpha = -dphi
        v = np.asarray(self.X.T @ (self.c * alpha), dtype=np.float64).ravel() / self.W
        primal = float(self.c @ phi) / self.W + 0.5 * self.lam * float(w @ w)
        dual = float(self.c @ _conjugate(self.loss, alpha, self.y)) / self.W \
            - float(v @ v) / (2.0 * self.lam)
        return alpha, primal, dual

    def newton_step(self, w, a):
        _, dphi, d2 = _terms(self.loss, a, self.y)
        X, cw = self.X, self.c / self.W
        g = self.lam * w + np.asarray(X.T @ (cw * dphi), dtype=np.float64).ravel()
        h = cw * d2
        H = X.T @ (h[:, None] * X)
        H[np.diag_indices_from(H)] += self.lam
        self.passes += 2
        return g, np.linalg.solve(H, -g)


def solve_direct(X, y, *, loss, lam, tol, sample_weight=None, w0=None):
    """Newton's method for the problem above; a :class:`DirectResult`, or None
    when it does not reach ``tol`` within :data:`MAX_ITERATIONS` steps.  BLAS
    runs on one thread: on products this small, more threads only wait for
    each other (40x slower on a loaded 2-core machine)."""
    global _BLAS
    if _BLAS is None:
        try:
            from threadpoolctl import ThreadpoolController
            _BLAS = ThreadpoolController()
        except ImportError:                 # pragma: no cover (scikit-learn needs it)
            _BLAS = False
    if not _BLAS:
        return _newton(X, y, loss, lam, tol, sample_weight, w0)
    with _BLAS.limit(limits=1, user_api="blas"):
        return _newton(X, y, loss, lam, tol, sample_weight, w0)


#: the BLAS libraries' thread controller, found once per process
_BLAS = None


def _newton(X, y, loss, lam, tol, sample_weight, w0):
    t0 = time.perf_counter()
    if not isinstance(X, np.ndarray):       # at most MAX_CELLS cells: dense is faster
        X = X.toarray()
    f = _Objective(X, y, sample_weight, lam, loss)
    d = X.shape[1]
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64)
    trace = []
    a = f.margins(w)
    for it in range(MAX_ITERATIONS + 1):
        alpha, primal, dual = f.certificate(w, a)
        gap = primal - dual
        rel = gap / max(abs(primal), 1e-12)
        trace.append({"epoch": f.passes, "time": time.perf_counter() - t0,
                      "primal": primal, "dual": dual, "gap": gap})
        if rel <= tol:
            return DirectResult(coef=w, dual_coef=alpha, primal=primal, dual=dual, gap=gap,
                                rel_gap=rel, converged=True, n_epochs=float(f.passes),
                                time=time.perf_counter() - t0, loss=loss, lam=float(lam),
                                tol=float(tol), trace=trace)
        if it == MAX_ITERATIONS:
            return None
        g, step = f.newton_step(w, a)
        slope = float(g @ step)
        if not slope < 0:
            return None
        t, da = 1.0, f.margins(step)
        for _ in range(40):
            cand = a + t * da
            if f.primal(w + t * step, cand) <= primal + 1e-4 * t * slope:
                break
            t *= 0.5
        else:
            return None
        w, a = w + t * step, cand
    return None
