"""Projected Newton on the face of the Crammer-Singer dual, with sweeps of the
sequential dual method: the certified finish where the dual coordinate method
converges sublinearly (docs/multiclass-models.md).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._util.cg import flat_dot, pcg
from ..kernels.cs_face import cs_face_project, cs_project_rows
from ..kernels.multiclass import CSActive, CSRows, CSWork, cs_certificate, cs_epoch
from ..kernels.status import STATUS_OK
from ..multiclass import FEAS_TOL
from ..problem import Certificate
from ._blas import serial_blas
# the projected search's Armijo constant and halvings, and CG's curvature cut,
# as box_newton's on the binary box dual
from .box_newton import CURVATURE, MAX_HALVINGS, SIGMA
from ._multiclass_base import MulticlassDualSolver
from ._options import CommonOptions, number
from .multinomial import _multiclass_eval

__all__ = ["CrammerSingerNewtonOptions", "CrammerSingerNewton"]

#: the Levenberg term is ``mu = rho * mean ||x_i||^2`` over the face's rows;
#: ``rho`` starts at RHO0, shrinks by RHO_STEP after a full step accepted at
#: once and grows by it after a cut one, within [RHO_MIN, RHO_MAX]
RHO0 = 1e-2
RHO_STEP = 4.0
RHO_MIN = 1e-10
RHO_MAX = 1e4
#: stalled when the lowest certified gap has not halved in STALL_WINDOW
#: iterations after the first STALL_START (news20 certifies in 13-68
#: iterations; standardized at C = 100 it is at 0.12 after 229)
STALL_WINDOW = 50
STALL_START = 100


@dataclass(frozen=True)
class CrammerSingerNewtonOptions(CommonOptions):
    """The options of :class:`CrammerSingerNewton` (see its docstring)."""

    solver_name = "crammer_singer_newton"
    sweeps: int = number(5, integer=True, low=0.0, strict=False,
                         doc="sweeps of the sequential dual method before each Newton step")
    cg_max_iter: int = number(200, integer=True, low=1.0, strict=False,
                              doc="conjugate-gradient iterations per Newton step")


class CrammerSingerNewton(MulticlassDualSolver):
    """Projected Newton-CG on the face of the Crammer-Singer dual, with sweeps
    of the sequential dual method; a dual method.

    Problem (Crammer & Singer, JMLR 2 (2001); docs/multiclass-models.md):
    with labels ``y_i`` in ``0..K-1`` and ``coef`` (d x K), minimize::

        P(coef) = (1/W) sum_i c_i max_k (1[k != y_i] + x_i coef_k - x_i coef_{y_i})
                  + lam/2 ||coef||_F^2

    through its dual in LIBLINEAR's scaling ``beta_i = C_i alpha_i``, ``C_i =
    c_i / (W lam)``::

        min_beta f(beta) = 1/2 ||sum_i x_i^T beta_i||_F^2 - sum_i beta_{i, y_i}
        s.t.     sum_m beta_im = 0,  beta_im <= C_i 1[m = y_i]

    with gradient ``G_im = x_i . coef_m - 1[m = y_i]`` (``coef = X^T beta``)
    and Hessian ``X X^T`` on each class.

    An iteration: ``sweeps`` epochs of the sequential dual method (Keerthi
    et al., KDD 2008; every row in a random order, exact row steps, no
    shrinking), which move variables onto and off their bounds; then a Newton
    step on the face: the ``(i, m)`` at their bound ``C_i 1[m = y_i]`` are
    fixed, and a row's free variables keep their sum, so the direction solves
    ``P (X X^T + mu I) P d = -P G`` (``P``: each row minus its mean over its
    free classes, zero on the fixed; rows with fewer than two free classes, or
    ``x_i = 0``, do not move; ``mu = rho mean ||x_i||^2``, a Levenberg term:
    ``rho`` starts at 1e-2, is divided by 4 after a full step accepted at
    once and multiplied by 4 after a cut one, as in Levenberg-Marquardt) by
    projected CG preconditioned by ``1 / (||x_i||^2 + mu)`` (which commutes
    with ``P``), to a relative residual ``min(0.1,
    sqrt(max |P G|))`` in at most ``cg_max_iter`` products, each two sparse
    products with K columns (``X_F^T D``, then ``X_F`` times it; no n x n
    matrix).  The step is projected back onto each row's set (the Euclidean
    projection onto ``{sum b = 0, b <= cap}``: the sequential dual method's
    row subproblem with ``||x_i||^2 = 1``), with ``t`` halved from ``min(1,
    2 max C / max |d|)`` until ``f`` falls by ``1e-4`` of ``G . step``
    (Bertsekas, SIAM J. Control Optim. 20(2) (1982) 221-246; Moré & Toraldo,
    SIAM J. Optim. 1(1) (1991) 93-113; Lin & Moré, SIAM J. Optim. 9(4)
    (1999) 1100-1127).  The dual never falls.

    Epochs (``n_epochs``): one per iteration.  Stopping: ``tol``,
    ``max_epochs``, ``time_limit``; ``stop_reason "stalled"`` when an
    iteration changes nothing, or when past 100 iterations the lowest
    certified gap has not halved in 50.

    Certificate: that of :class:`~primaldual.solvers.crammer_singer.CrammerSingerDual`
    at the iterate (``alpha = beta / C``, ``coef(alpha) = X^T beta``
    recomputed, ``primal``, ``dual`` and ``gap`` exact).

    Start: as the sequential dual method from zero; warm start: a SolveResult
    or a dual point alpha (n, K) (e.g. the sequential dual method's result).

    Options
    -------
    sweeps : int, default 5
        Epochs of the sequential dual method before each Newton step.
    cg_max_iter : int, default 200
        Conjugate-gradient iterations per Newton step.
    """

    name = "crammer_singer_newton"
    summary = ("Crammer-Singer multiclass SVM: projected Newton-CG on the face of the "
               "dual, with sequential dual sweeps (Bertsekas 1982; More & Toraldo 1991)")
    options_class = CrammerSingerNewtonOptions
    default_max_epochs = 1000
    loss_names = ("crammer_singer",)
    newton_type = True
    adaptive_checks = False

    def setup(self):
        prob = self.problem
        r = prob.rows
        n, K = prob.n, prob.K
        self.C = self.row_bounds()
        X = r.X if r.is_sparse else sp.csr_matrix(r.X)
        self.X = sp.csr_matrix(X, dtype=np.float64)
        self.X.sort_indices()
        Xc = self.X
        self.sqnorm = np.ascontiguousarray(r.sqnorm, dtype=np.float64)
        self.view = CSRows(Xc.data, Xc.indices, Xc.indptr, Xc.indptr, self.sqnorm,
                           prob.y, self.C)
        self.work = CSWork(*(np.empty(K) for _ in range(5)), np.zeros(n),
                           np.zeros(n, dtype=np.int64))
        self.act = CSActive(np.arange(n, dtype=np.int64), np.full(n, K, dtype=np.int64),
                            np.tile(np.arange(K, dtype=np.int64), (n, 1)))
        self.sched = np.array([float(n), 1.0, 0.0, 0.0])
        self.cap = np.zeros((n, K))
        self.cap[np.arange(n), prob.y] = self.C
        self.empty = np.empty((0, K))
        self.accesses = 0

    # -------------------------------------------------------------- state
    def init_state(self, warm_start):
        prob = self.problem
        alpha = self._warm_alpha(warm_start)
        if alpha is None:
            alpha = np.zeros((prob.n, prob.K))
            zero = np.flatnonzero(prob.rows.sqnorm == 0.0)     # as the dual method
            alpha[zero, prob.y[zero]] = 1.0
            alpha[zero, (prob.y[zero] + 1) % prob.K] = -1.0
        self.beta = np.ascontiguousarray(alpha * self.C[:, None])
        self.coef = self._xt(self.beta)
        self.n_iter, self.n_cg, self.stall, self.rho = 0, 0, False, RHO0
        self.low, self.halved_at, self.flat = math.inf, 0, False

    def get_state(self):
        return ({"n_iter": int(self.n_iter), "n_cg": int(self.n_cg), "stall": self.stall,
                 "rho": float(self.rho), "low": float(self.low),
                 "halved_at": int(self.halved_at), "flat": self.flat},
                {"beta": self.beta.copy(), "coef": self.coef.copy()})

    def set_state(self, meta, arrays):
        self.beta = np.ascontiguousarray(arrays["beta"], dtype=np.float64)
        self.coef = np.ascontiguousarray(arrays["coef"], dtype=np.float64)
        self.n_iter, self.n_cg = int(meta["n_iter"]), int(meta["n_cg"])
        self.stall = bool(meta["stall"])
        self.rho = float(meta["rho"])
        self.low, self.halved_at = float(meta["low"]), int(meta["halved_at"])
        self.flat = bool(meta["flat"])

    @property
    def stalled(self):
        return self.stall or self.flat

    @property
    def epochs(self):
        return float(self.n_iter)

    # ---------------------------------------------------- linear algebra
    def _xt(self, B, XR=None):
        """``X_R^T B`` (d, K), float64 and C-contiguous."""
        X = self.X if XR is None else XR
        return np.ascontiguousarray(X.T @ B, dtype=np.float64)

    # ------------------------------------------------------------ updates
    def advance(self, n_epochs, deadline):
        target = self.n_iter + max(1, int(math.ceil(n_epochs - 1e-9)))
        with serial_blas():
            while not self.stalled and self.n_iter < target and \
                    self.n_iter < self.max_epochs - 1e-9:
                self._iterate()
                if deadline is not None and time.perf_counter() >= deadline:
                    break
        self.feature_accesses = int(self.accesses)

    def _iterate(self):
        n = self.problem.n
        moved = 0.0
        for _ in range(int(self.opts.sweeps)):
            self.act.rows[:] = self.rng.permutation(n)
            status, _, viol, reads = cs_epoch(self.view, self.act, n, self.beta, self.coef,
                                              self.work, False, self.empty, 0.0)
            self.accesses += int(reads)
            if status != STATUS_OK:
                raise FloatingPointError(f"{self.name}: a non-finite step at iteration "
                                         f"{self.n_iter}; scale the features")
            moved = max(moved, viol)
        gain = self._newton_step()
        self.n_iter += 1
        if moved == 0.0 and gain <= 0.0:
            self.stall = True

    def _face(self):
        """The moving rows (at least two free classes, ``x_i != 0``) and their free mask."""
        free = self.beta < self.cap
        R = np.flatnonzero((free.sum(axis=1) >= 2) & (self.sqnorm > 0.0))
        return R, np.ascontiguousarray(free[R])

    def _newton_step(self) -> float:
        """One projected Newton step on the face; the fall of ``f`` (0: no step)."""
        R, free = self._face()
        if R.size == 0:
            return 0.0
        prob = self.problem
        XR = self.X[R]
        nnz = int(XR.nnz)
        G = np.asarray(XR @ self.coef, dtype=np.float64)
        G[np.arange(R.size), prob.y[R]] -= 1.0
        self.accesses += nnz
        A = self.sqnorm[R]
        mu = self.rho * float(A.mean())
        ones = np.ones(R.size)
        b = -G
        cs_face_project(b, free, ones)
        shape = b.shape

        def apply(p):
            P = p.reshape(shape)
            out = np.asarray(XR @ self._xt(P, XR), dtype=np.float64) + mu * P
            cs_face_project(out, free, ones)
            return out.ravel()

        inv = 1.0 / (A + mu)

        def precondition(r):
            z = r.reshape(shape).copy()
            cs_face_project(z, free, inv)
            return z.ravel()

        rtol = min(0.1, math.sqrt(float(np.abs(b).max())))
        d, _, iters = pcg(apply, precondition, b.ravel(), rtol, int(self.opts.cg_max_iter),
                          flat_dot, min_curvature=CURVATURE * float(A.max() + mu))
        if iters and not d.any():
            d = precondition(b.ravel())       # no curvature along the first direction
        self.n_cg += iters
        self.accesses += 2 * nnz * iters
        return self._projected_search(R, XR, G, d.reshape(shape))

    def _projected_search(self, R, XR, G, d) -> float:
        """Backtracking along the projection of ``beta_R + t d``; the accepted
        fall of ``f``, or 0."""
        prob = self.problem
        big = float(np.abs(d).max())
        if not (big > 0 and np.isfinite(big)):
            return 0.0
        t = t0 = min(1.0, 2.0 * float(self.C[R].max()) / big)
        bR = self.beta[R]
        new = np.empty_like(bR)
        K = prob.K
        w = tuple(np.empty(K) for _ in range(4))
        for _ in range(MAX_HALVINGS):
            if cs_project_rows(self.beta, R, d, t, self.C, prob.y, new, *w) != STATUS_OK:
                return 0.0
            step = new - bR
            lin = float(np.einsum("ij,ij->", G, step))
            dcoef = self._xt(step, XR)
            self.accesses += int(XR.nnz)
            change = lin + 0.5 * float(np.einsum("ij,ij->", dcoef, dcoef))
            if lin < 0 and change < 0 and change <= SIGMA * lin:
                self.beta[R] = new
                self.coef += dcoef
                self.rho = max(RHO_MIN, self.rho / RHO_STEP) if t == 1.0 else \
                    min(RHO_MAX, self.rho * RHO_STEP) if t < t0 else self.rho
                return -change
            t *= 0.5
        self.rho = min(RHO_MAX, self.rho * RHO_STEP)
        return 0.0

    # -------------------------------------------------------- certificate
    def certificate(self):
        """The iterate's pair, as :class:`~primaldual.solvers.crammer_singer.CrammerSingerDual`
        checks it (:func:`~primaldual.kernels.multiclass.cs_certificate`, no
        averaging): ``coef = X^T beta`` recomputed (its drift dropped),
        ``alpha = beta / C``, ``P(coef)`` and ``D(alpha)``."""
        prob = self.problem
        alpha = np.empty_like(self.beta)
        loss, conj, bad = cs_certificate(self.view, self.beta, prob.sample_weight, self.coef,
                                         self.work.z, alpha, FEAS_TOL, self.act, self.sched,
                                         np.zeros(0, dtype=np.bool_), self.empty, self.empty,
                                         self.empty)
        w = self.coef
        sq = float(np.einsum("i,i->", w.ravel(), w.ravel()))
        primal = loss / prob.W + 0.5 * prob.lam * sq
        dual = conj / prob.W - 0.5 * prob.lam * sq if bad == 0 else -np.inf
        cert = Certificate(w=w.copy(), alpha=alpha, primal=float(primal), dual=float(dual),
                           v=prob.lam * w, margins=None)
        if cert.rel_gap <= 0.5 * self.low or not math.isfinite(self.low):
            self.low, self.halved_at = cert.rel_gap, self.n_iter     # the gap halved
        self.flat = self.n_iter >= STALL_START and \
            self.n_iter - self.halved_at >= STALL_WINDOW
        return cert

    def trace_extras(self):
        return {"iterations": int(self.n_iter), "cg_iterations": int(self.n_cg)}

    def result_extras(self):
        if self.flat and not self.stall:
            return {"stall": "no_progress",
                    "stall_detail": f"the lowest gap has not halved in {STALL_WINDOW} "
                                    f"iterations (iteration {self.n_iter})"}
        if not self.stall:
            return {}
        return {"stall": "no_progress",
                "stall_detail": f"an iteration changed nothing after {self.n_iter} "
                                f"iterations (the dual is at its maximum to rounding)"}

    def _evaluate(self, w):
        return _multiclass_eval(self, w)
