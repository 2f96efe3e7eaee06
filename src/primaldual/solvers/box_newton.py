"""Projected Newton on the box-constrained dual of the hinge family, with
coordinate-ascent sweeps: the certified finish of a dual coordinate method.

Dual coordinate ascent (SDCA; LIBLINEAR's dual CD, Hsieh et al. 2008) finds
which dual variables sit at a bound within a few passes but converges
sublinearly on the hinge when ``R^2 / (lam n)`` is large.  Once the bounds are
known the rest is a linear system: the free coordinates' margins are exactly
one.  Each iteration here is a sweep of exact coordinate ascent (which moves
variables onto and off the bounds) followed by a Newton step on the face of
the box: the variables at a bound are fixed (the sweeps move them), the
system on the others is solved by preconditioned conjugate gradients
over the rows (no ``n x n`` matrix), and the step is projected onto the box
with a backtracking search that accepts only an ascent (Bertsekas, "Projected
Newton methods for optimization problems with simple constraints", SIAM J.
Control Optim. 20(2) (1982) 221-246; Moré & Toraldo, "On the solution of large
quadratic programming problems with bound constraints", SIAM J. Optim. 1(1)
(1991) 93-113, alternate a projection phase and CG on the face; Lin & Moré,
"Newton's method for large bound-constrained optimization problems", SIAM J.
Optim. 9(4) (1999) 1100-1127).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .._util.cg import pcg
from ..kernels.boxqp import BoxQP, cd_sweep
from ._base import Solver, SolveResult, register
from ._blas import serial_blas
from ._options import CommonOptions, number

#: the losses solved, with ``(s, U)``: ``-phi*(-alpha; y) = b - s b^2 / 2`` on
#: ``0 <= b = alpha y <= U`` (docs/conventions.md §1); smooth_hinge's s is gamma
LOSSES = {"hinge": (0.0, 1.0), "smooth_hinge": (None, 1.0),
          "squared_hinge": (0.5, math.inf)}
#: Armijo constant of the projected search: the dual must rise by this share of
#: the first-order prediction ``grad . step``
SIGMA = 1e-4
#: halvings of the projected step before the Newton step is given up
MAX_HALVINGS = 30
#: a Levenberg term ``MU * max diag`` keeps the face system definite (hinge:
#: more free coordinates than the rank of their rows)
MU = 1e-12
#: CG stops at a direction whose curvature is below this share of the largest
#: diagonal entry (a null direction of the face system)
CURVATURE = 1e-10


@dataclass(frozen=True)
class BoxNewtonOptions(CommonOptions):
    """The options of :class:`BoxNewtonSolver` (see its docstring)."""

    solver_name = "box_newton"
    sweeps: int = number(1, integer=True, low=0.0, strict=False,
                         doc="coordinate-ascent sweeps before each Newton step")
    cg_max_iter: int = number(200, integer=True, low=1.0, strict=False,
                              doc="conjugate-gradient iterations per Newton step")


def supports(problem) -> bool:
    """Whether :class:`BoxNewtonSolver` solves ``problem`` (loss, ``l1 = 0``, ``lam > 0``)."""
    return problem.loss.name in LOSSES and problem.l1 == 0 and problem.lam > 0


#: the hinge (no quadratic term in its dual) is a candidate of ``solver="auto"``
#: only with at least this many features per sample: with many more samples
#: than features the face holds many more free coordinates than the rank of
#: their rows, its system is singular, and the projected steps crawl (measured:
#: 200 x 12 at C = 100 far from the optimum after 300 iterations); the
#: interior-point method, whose systems are ``min(n, d)`` square, takes those
HINGE_MIN_FEATURES_PER_SAMPLE = 0.5


def suits(problem) -> bool:
    """``solver="auto"`` may run :class:`BoxNewtonSolver` on ``problem``:
    :func:`supports`, and for the hinge ``d >= HINGE_MIN_FEATURES_PER_SAMPLE n``."""
    return supports(problem) and (problem.loss.name != "hinge"
                                  or problem.d >= HINGE_MIN_FEATURES_PER_SAMPLE * problem.n)


@register
class BoxNewtonSolver(Solver):
    """Projected Newton with coordinate-ascent sweeps on the box dual; for
    ``hinge``, ``smooth_hinge`` and ``squared_hinge`` with ``l1 = 0``.

    Problem (docs/conventions.md §1, weights ``c_i``, ``W = sum_i c_i``)::

        primal  P(w)     = (1/W) sum_i c_i phi(x_i . w; y_i) + lam/2 ||w||^2
        dual    D(alpha) = (1/W) sum_i c_i (-phi*(-alpha_i; y_i)) - lam/2 ||w(alpha)||^2

    With ``b_i = alpha_i y_i`` in ``[0, U]`` and ``-phi*(-alpha_i; y_i) = b_i - s
    b_i^2 / 2`` (hinge ``s = 0, U = 1``; smooth_hinge ``s = gamma, U = 1``;
    squared_hinge ``s = 1/2, U = inf``), in ``g_i = c_i b_i / W`` the dual is
    the box QP (:mod:`primaldual.kernels.boxqp`)::

        max  D(g) = sum_i g_i - 1/2 sum_i q_i g_i^2 - lam/2 ||w||^2,
             w = X^T (y g) / lam,  0 <= g_i <= hi_i = c_i U / W,  q_i = s W / c_i,

    with gradient ``G_i = 1 - q_i g_i - y_i x_i . w`` (zero: a margin of exactly
    ``1 - s b_i``) and Hessian ``-(diag(q) + Y X X^T Y / lam)``.

    An iteration: ``sweeps`` passes of exact coordinate ascent in a random
    order (Hsieh et al. 2008, Algorithm 1); then the face ``F`` (the ``i``
    strictly inside their box: ``0 < g_i < hi_i``), the Newton system
    ``(diag(q_F) + Y_F X_F X_F^T Y_F / lam + mu I) d = G_F`` solved by
    Jacobi-preconditioned CG to a relative residual ``min(0.1, sqrt(max |G_F|))``
    (at most ``cg_max_iter`` iterations), and the projected step ``g_F <-
    clip(g_F + t d, 0, hi_F)``, ``t`` halved from ``min(1, max hi / max |d|)``
    until the dual rises by ``1e-4 grad . step`` (Bertsekas 1982; Moré &
    Toraldo 1991).  The dual never falls.  CG stops early at a direction of
    (near) zero curvature: on the hinge (``q = 0``) a face with more free
    coordinates than the rank of their rows has a singular system, and the
    projected search then carries the step to the bounds.

    Where it works: a face system of full rank, or nearly (the squared and
    smoothed hinge always; the hinge with ``d`` not much below ``n``, or from
    a dual coordinate method's point).  On the hinge with many more samples
    than features from ``alpha = 0`` it crawls (``solver="auto"`` does not
    run it there: :func:`suits`).

    Epochs (``n_epochs``): one per iteration, as the interior-point method
    counts them; ``feature_accesses`` counts the stored entries read (a sweep
    about ``2 nnz``, a CG iteration twice the face's rows).

    Stopping: ``tol``, ``max_epochs``, ``time_limit``; ``stop_reason
    "stalled"`` when an iteration changes nothing (the dual is at its maximum
    to rounding).

    Certificate: the iterate ``w`` and ``alpha_i = b_i y_i`` (``primal``, ``dual``
    and ``gap`` exact, as for every solver); the check's pass also recomputes
    ``w(alpha)``, which replaces the iterate.

    Start: ``alpha = 0``; warm start: a SolveResult (its ``dual_coef``), a dual
    point ``alpha`` ``(n,)``, or a coefficient vector ``(d,)`` (``alpha_i =
    -phi'(x_i . w)``), each clipped to the box.

    Options
    -------
    sweeps : int, default 1
        Coordinate-ascent sweeps before each Newton step (0: Newton steps only).
    cg_max_iter : int, default 200
        Conjugate-gradient iterations per Newton step.
    """

    name = "box_newton"
    summary = ("projected Newton-CG on the face of the box dual, with coordinate-ascent "
               "sweeps (Bertsekas 1982; More & Toraldo 1991): hinge family")
    default_max_epochs = 1000
    newton_type = True
    options_class = BoxNewtonOptions
    supports_l1 = False
    requires = ("box_dual", "classification")

    # ------------------------------------------------------------ options
    def setup(self):
        prob = self.problem
        if prob.loss.name not in LOSSES:
            raise ValueError(f"solver='box_newton' does not support loss={prob.loss.name!r}; "
                             f"it solves {', '.join(LOSSES)}")
        s, U = LOSSES[prob.loss.name]
        s = prob.loss.param if s is None else s
        u = prob.sample_weight / prob.W
        self.u, self.U = u, U
        self.qp = BoxQP(np.ascontiguousarray(s / u), np.ascontiguousarray(U * u),
                        1.0 / prob.lam)
        self.view = prob.rows_view()
        self.X = prob.rows.X
        self.counts = np.zeros(1, dtype=np.int64)

    # -------------------------------------------------------------- state
    def init_state(self, warm_start):
        prob = self.problem
        alpha = self._warm_alpha(warm_start)
        b = np.zeros(prob.n) if alpha is None else np.clip(alpha * prob.y, 0.0, self.U)
        self.g = self.u * b
        self.w = prob.rows.rmatvec(prob.y * self.g) / prob.lam
        self.n_iter, self.n_cg, self.stall = 0, 0, False
        self.last_gain = 0.0

    def _warm_alpha(self, warm_start):
        if warm_start is None:
            return None
        if isinstance(warm_start, SolveResult) or self.warm_start_is_alpha():
            return self.warm_start_alpha()
        return self.problem.dual_from_primal(self.warm_start_coef())

    @property
    def stalled(self):
        return self.stall

    @property
    def epochs(self):
        return float(self.n_iter)

    def get_state(self):
        return ({"n_iter": int(self.n_iter), "n_cg": int(self.n_cg), "stall": self.stall,
                 "accesses": int(self.counts[0])},
                {"g": self.g.copy(), "w": self.w.copy()})

    def set_state(self, meta, arrays):
        self.g = np.array(arrays["g"], dtype=np.float64)
        self.w = np.array(arrays["w"], dtype=np.float64)
        self.n_iter, self.n_cg = int(meta["n_iter"]), int(meta["n_cg"])
        self.stall = bool(meta["stall"])
        self.counts[0] = int(meta["accesses"])
        self.last_gain = 0.0

    # ---------------------------------------------------- linear algebra
    @staticmethod
    def _x(XF, m):
        """``X_F @ m`` for the face's rows, as float64."""
        return np.asarray(XF @ m, dtype=np.float64).ravel()

    @staticmethod
    def _xt(XF, v):
        """``X_F^T @ v``, as float64."""
        return np.asarray(XF.T @ v, dtype=np.float64).ravel()

    # ------------------------------------------------------------ updates
    def advance(self, n_epochs, deadline):
        target = self.n_iter + max(1, int(math.ceil(n_epochs - 1e-9)))
        while not self.stall and self.n_iter < target and self.n_iter < self.max_epochs - 1e-9:
            self._iterate()
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.feature_accesses = int(self.counts[0])

    def run(self):
        # dense products through BLAS on one thread, as the interior-point method
        # (several BLAS threads on a busy machine: primaldual.solvers._blas)
        with serial_blas():
            return super().run()

    def _iterate(self):
        moved = 0.0
        for _ in range(int(self.opts.sweeps)):
            order = self.rng.permutation(self.problem.n).astype(np.int64, copy=False)
            moved = max(moved, cd_sweep(self.view, self.qp, order, self.g, self.w,
                                        self.counts))
        gain = self._newton_step()
        self.n_iter += 1
        self.last_gain = gain
        if moved == 0.0 and gain <= 0.0:
            self.stall = True

    def _newton_step(self) -> float:
        """One projected Newton step on the face; the dual's rise (0: no step)."""
        prob, qp, g = self.problem, self.qp, self.g
        y = prob.y
        F = np.flatnonzero((g > 0.0) & (g < qp.hi))
        if F.size == 0:
            return 0.0
        XF = self.X[F]
        nnz_F = int(prob.rows.row_nnz[F].sum())
        yF, qF = y[F], qp.q[F]
        GF = 1.0 - qF * g[F] - yF * self._x(XF, self.w)
        self.counts[0] += nnz_F
        diag = qF + prob.rows.sqnorm[F] * qp.inv_lam
        mu = MU * max(float(diag.max()), 1e-300)

        def apply(p):
            return (qF + mu) * p + yF * self._x(XF, self._xt(XF, yF * p)) * qp.inv_lam

        rtol = min(0.1, math.sqrt(float(np.abs(GF).max())))
        m_inv = 1.0 / (diag + mu)
        d, _, iters = pcg(apply, lambda r: m_inv * r, GF, rtol, int(self.opts.cg_max_iter),
                          _dot, min_curvature=CURVATURE * float((diag + mu).max()))
        if iters and not d.any():
            d = m_inv * GF       # no curvature along the first direction: move along it
        self.n_cg += iters
        self.counts[0] += 2 * nnz_F * iters
        return self._projected_search(F, XF, nnz_F, GF, d)

    def _projected_search(self, F, XF, nnz_F, GF, d) -> float:
        """Backtracking along ``clip(g_F + t d)``; the accepted rise of the dual, or 0."""
        prob, qp = self.problem, self.qp
        gF, hiF, qF, yF = self.g[F], qp.hi[F], qp.q[F], prob.y[F]
        big = float(np.abs(d).max())
        if not (big > 0 and np.isfinite(big)):
            return 0.0
        finite = hiF[np.isfinite(hiF)]
        t = min(1.0, float(finite.max()) / big) if finite.size else 1.0
        for _ in range(MAX_HALVINGS):
            new = np.clip(gF + t * d, 0.0, hiF)
            step = new - gF
            lin = float(step @ GF)
            dw = self._xt(XF, yF * step) * qp.inv_lam
            self.counts[0] += nnz_F
            # D(g + step) - D(g), without the cancellation of two dual values
            gain = lin - 0.5 * float((qF * step) @ step) - 0.5 * prob.lam * float(dw @ dw)
            if lin > 0 and gain > 0 and gain >= SIGMA * lin:
                self.g[F] = new         # not gF + step: that may round past hi
                self.w += dw
                return gain
            t *= 0.5
        return 0.0

    # -------------------------------------------------------- certificate
    def certificate(self):
        """The pair (iterate ``w``, ``alpha = b y``), evaluated exactly; the same
        pass gives the fresh image ``v(alpha)``, from which the iterate ``w`` is
        then resynchronized (``w = v / lam``), so rounding does not accumulate
        across iterations."""
        prob = self.problem
        cert = prob.certificate(self.w, prob.y * self.g / self.u)
        self.w = prob.penalty.grad_conjugate(cert.v)
        return cert

    def trace_extras(self):
        return {"iterations": int(self.n_iter), "cg_iterations": int(self.n_cg)}

    def result_extras(self):
        if not self.stall:
            return {}
        return {"stall": "no_progress",
                "stall_detail": f"an iteration changed nothing after {self.n_iter} "
                                f"iterations (the dual is at its maximum to rounding)"}



def _dot(a, b):
    return float(a @ b)
