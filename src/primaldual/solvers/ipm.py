"""Primal-dual interior-point method (Mehrotra predictor-corrector) on the
box-constrained dual of the hinge, smoothed hinge, absolute and
epsilon-insensitive losses, with the primal ``w`` carried as a variable.

Ferris & Munson, "Interior-point methods for massive support vector
machines", SIAM J. Optim. 13(3) (2002) 783-804: the linear SVM's dual QP,
solved by a primal-dual interior-point method whose linear systems reduce to
a ``d x d`` matrix, so that an iteration costs ``O(n d^2)`` when ``d << n``.
Predictor-corrector: Mehrotra, "On the implementation of a primal-dual
interior point method", SIAM J. Optim. 2(4) (1992) 575-601; in the form of
Nocedal & Wright, Numerical Optimization (2nd ed., 2006), Algorithm 16.4, with
bounds instead of general constraints.  The L1 regression losses enter as the
same QP in split variables (Vapnik's SVR dual, alpha = p - q).

The primal ``w`` is an iterate of its own (the equation ``lam w = X^T g`` is
one of the KKT conditions the Newton steps drive to zero), not recomputed as
``X^T g / lam``: on columns of very different scales (a sample ID near 1e7
beside 0-10 scores) that sum cancels to a few digits, and its error, multiplied
by the large column, ruins the primal.  The ``d x d`` system is equilibrated
(scaled to unit diagonal) before it is factored.  Both leave the problem, its
objective and its certificate unchanged: they are the linear algebra's.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.linalg.lapack

from ..kernels.ipm import (block_step, kkt_parts, longest_step, newton_rhs, scale_rows,
                           slack_steps)
from ..kernels.objective import weighted_sum
from ..problem import Certificate
from ._base import Solver, SolveResult, register
from ._options import CommonOptions, number
from ._blas import serial_blas

#: CSR input is copied to a dense array for forming M when it has at most this
#: many entries (n d) and at least this density: BLAS then forms M several times
#: faster than a sparse product (measured on phishing, 44% dense, and a9a, 11%)
DENSIFY_MAX_ENTRIES = 10_000_000
#: the largest dense system (min(n, d)) an explicit solver="ipm" forms: 800 MB
#: and about 3e11 flops to factor, tens of seconds per iteration on one core
MAX_SYSTEM_SIZE = 10_000
DENSIFY_MIN_DENSITY = 0.05

#: the run stops (stop_reason "stalled", extras["stall"] "no_progress") when the
#: best relative gap has not halved in this many iterations after the first
#: STALL_START: an interior-point method halves it every one or two iterations
#: until rounding stops it
STALL_WINDOW = 20
STALL_START = 50
#: a step shorter than this (or a non-finite direction) ends the run with
#: stop_reason "stalled", extras["stall"] "step_collapse"
MIN_STEP = 1e-14

#: steps of iterative refinement of each reduced Newton solve
REFINE_STEPS = 1

#: the barrier target is sigma * mu with Mehrotra's sigma = (mu_aff / mu)^3
SIGMA_POWER = 3.0

#: the losses the method solves (their duals are quadratic or linear over a box)
LOSSES = ("hinge", "smooth_hinge", "absolute", "epsilon_insensitive")


@dataclass(frozen=True)
class IPMOptions(CommonOptions):
    """The options of :class:`IPMSolver` (see its docstring)."""

    solver_name = "ipm"
    step_fraction: float = number(0.995, low=0.0, high=1.0, high_strict=True,
                                  doc="fraction of the step to the boundary taken "
                                      "(eta of Nocedal & Wright Alg. 16.4)")


def supports(problem) -> bool:
    """Whether :class:`IPMSolver` solves ``problem`` (loss, ``l1 = 0``, ``lam > 0``)."""
    return problem.loss.name in LOSSES and problem.l1 == 0 and problem.lam > 0


class WholeIterations:
    """``advance`` and ``run`` of an interior-point method (an epoch is one
    iteration, ``_iterate``): whole iterations until the target, a stall
    (``self.stall``), ``max_epochs`` or the deadline, with BLAS (forming the
    Newton matrix, its Cholesky factorization) on one thread for the whole
    run: several BLAS threads on a busy machine were measured 10-100x slower
    on these sizes (primaldual.solvers._blas)."""

    def advance(self, n_epochs, deadline):
        target = self.n_iter + max(1, int(math.ceil(n_epochs - 1e-9)))
        while self.n_iter < target and not self.stall \
                and self.n_iter < self.max_epochs - 1e-9:
            self._iterate()
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.steps = self.n_iter
        self.feature_accesses = int(self.n_iter) * self.problem.nnz

    def run(self):
        with serial_blas():
            return super().run()

    #: the names of the iterate's arrays (a checkpoint holds them)
    state_arrays = ()

    def start_loop(self):
        """The loop's counters at the first iteration."""
        self.n_iter = 0
        self.stall = ""
        self.last_step = 0.0
        self.gaps = []
        #: the stall rule looks at ``gaps[gaps_from:]`` (a solver that restarts
        #: on a new central path moves it)
        self.gaps_from = 0

    @property
    def stalled(self):
        return bool(self.stall)

    def result_extras(self):
        if not self.stall:
            return {}
        why = {"step_collapse": "the interior-point step collapsed (no representable "
                                "progress)",
               "no_progress": f"the relative gap did not halve in {self.stall_window} "
                              f"iterations"}[self.stall]
        return {"stall": self.stall, "stall_detail": f"{why} after {self.n_iter} iterations"}

    def get_state(self):
        return ({"n_iter": int(self.n_iter), "stall": self.stall,
                 "last_step": float(self.last_step), "gaps": list(self.gaps),
                 "gaps_from": int(self.gaps_from)},
                {k: getattr(self, k).copy() for k in self.state_arrays})

    def set_state(self, meta, arrays):
        for k in self.state_arrays:
            setattr(self, k, np.array(arrays[k], dtype=np.float64))
        self.n_iter = int(meta["n_iter"])
        self.stall = str(meta["stall"])
        self.last_step = float(meta["last_step"])
        self.gaps = [float(x) for x in meta["gaps"]]
        self.gaps_from = int(meta.get("gaps_from", 0))

    @property
    def epochs(self):
        return float(self.n_iter)

    #: the run ends when, after ``stall_start`` iterations, the best relative
    #: gap of the last ``stall_window`` has not halved the best before them
    #: (counted from ``gaps_from``)
    stall_start = STALL_START
    stall_window = STALL_WINDOW

    def _note_gap(self, rel_gap):
        """Record the gap of the iterate (``self.gaps``); no progress ends the run."""
        if len(self.gaps) == self.n_iter:
            self.gaps.append(float(rel_gap))
        w = self.stall_window
        gaps = self.gaps[self.gaps_from:]
        if len(gaps) > self.stall_start and min(gaps[-w:]) \
                > 0.5 * min(gaps[:-w]) and not self.stall:
            self.stall = "no_progress"


@register
class IPMSolver(WholeIterations, Solver):
    """Primal-dual interior-point method on the box-constrained dual; for
    ``hinge``, ``smooth_hinge``, ``absolute`` and ``epsilon_insensitive``
    with ``l1 = 0``.

    Problem (docs/conventions.md §1, weights ``c_i``, ``W = sum_i c_i``)::

        primal  P(w)     = (1/W) sum_i c_i phi(x_i . w; y_i) + lam/2 ||w||^2
        dual    D(alpha) = (1/W) sum_i c_i (-phi*(-alpha_i; y_i)) - lam/2 ||w(alpha)||^2

    In the scaled dual variable ``g_i = c_i alpha_i / W`` and with ``u_i =
    c_i / W``, ``-D`` is a convex QP over a box, written with ``K`` blocks of
    variables ``0 <= p_k <= u``, signs ``sigma_k``, linear terms ``b_k`` and a
    diagonal ``Q_k``, ``g = sum_k sigma_k p_k`` (Ferris & Munson 2002 for the
    SVM; Vapnik's split ``alpha = p - q`` for the L1 regression losses)::

        min  1/(2 lam) ||X^T g||^2 + sum_k (b_k^T p_k + p_k^T Q_k p_k / 2)

        hinge, smooth_hinge (K = 1):  sigma = y, b = -1, Q = diag(gamma W / c)
        absolute, epsilon_insensitive (K = 2):  sigma = (1, -1),
                                      b = (eps - y, eps + y), Q = 0

    With ``w`` a variable and multipliers ``s_k, t_k >= 0`` for the bounds,
    the KKT conditions are::

        r_w = lam w - X^T g = 0,
        r_k = sigma_k X w + b_k + Q_k p_k - s_k + t_k = 0,
        s_k p_k = 0,   t_k (u - p_k) = 0.

    Update (Nocedal & Wright, Algorithm 16.4, with bounds): from ``0 < p_k <
    u``, ``s_k, t_k > 0``, ``mu`` the mean complementarity product, the
    Newton system of the KKT conditions is solved twice with one
    factorization.  With ``D_k = Q_k + s_k / p_k + t_k / (u - p_k)`` and
    ``h_k = -r_k - rs_k / p_k + rt_k / (u - p_k)`` it reduces to::

        (lam I + X^T E X) dw = -r_w + X^T rho,   E = sum_k 1 / D_k,
                                                 rho = sum_k sigma_k h_k / D_k,
        dp_k = (h_k - sigma_k X dw) / D_k,
        ds_k = -(rs_k + s_k dp_k) / p_k,   dt_k = -(rt_k - t_k dp_k) / (u - p_k),

    first the affine step (``rs = s p``, ``rt = t (u - p)``), whose largest
    feasible length gives ``mu_aff`` and Mehrotra's ``sigma = (mu_aff/mu)^3``;
    then the corrector (``rs = s p + ds_aff dp_aff - sigma mu``, ``rt = t (u -
    p) - dt_aff dp_aff - sigma mu``).  The step is ``step_fraction`` (0.995)
    of the largest one keeping ``p, s, t`` interior, for every variable.

    Linear algebra: when ``d <= n`` the ``d x d`` matrix ``lam I + X^T E X``
    (BLAS on dense input, one thread; a sparse product on CSR), scaled to unit
    diagonal and Cholesky-factored once per iteration (an ``O(n d^2)``
    iteration); when ``n < d`` the kernel form
    ``(X X^T / lam + diag(1 / E)) dg = rho / E + X r_w / lam`` with ``X X^T``
    formed once.  One step of iterative refinement on the exact residual
    follows each solve.  The cost is independent of ``R^2 / (lam n)``: the
    method is for unscaled or standardized dense features with small
    ``min(n, d)``.

    Unscaled data: the iterates, and so the number of iterations, are those
    of the problem itself; column scales (measured: a sample ID near 1e7
    beside 0-10 scores, columns spanning five orders of magnitude) enter only
    through rounding, which the equilibrated factorization and the primal
    iterate keep at the level of the data's own conditioning.

    Stopping: ``tol``, ``max_epochs``, ``time_limit``; and ``stop_reason
    "stalled"`` with ``extras["stall"]`` naming why: ``"step_collapse"`` (a
    step under 1e-14 or a non-finite direction) or ``"no_progress"`` (the best
    relative gap has not halved in 20 iterations, after the first 50).

    Passes (``n_epochs``): one per iteration (forming the matrix reads the
    data once, with ``min(n, d)`` times the flops of a matrix-vector product).

    Certificate: ``alpha_i = g_i W / c_i`` (strictly inside the dual box) and
    the iterate ``w``, or ``w(alpha)`` when its primal value is lower; both
    are exact for the original loss.

    Start: ``w = 0``, ``p_k = u / 2``, ``s_k = t_k = 1 + |b_k|``.  Warm start:
    a SolveResult (its ``coef`` and ``dual_coef``), a dual point ``alpha``
    ``(n,)``, or a coefficient vector ``(d,)``; the dual point is pulled 1% of
    the box inside it (an interior point is required).

    Options
    -------
    step_fraction : float, default 0.995
        The fraction of the step to the boundary that is taken.
    """

    name = "ipm"
    summary = ("interior-point (Mehrotra predictor-corrector) on the box dual, "
               "primal iterate and equilibrated d x d systems (Ferris & Munson 2002)")
    default_max_epochs = 1000
    newton_type = True
    options_class = IPMOptions
    supports_l1 = False
    requires = ("box_qp_dual",)
    _xw = None                      # (w, X w) of the last check

    # ------------------------------------------------------------ options
    def setup(self):
        prob = self.problem
        m = min(prob.n, prob.d)
        if m > MAX_SYSTEM_SIZE:
            raise ValueError(
                f"solver='ipm' forms and factors a dense {m:,} x {m:,} matrix (min(n, d), "
                f"{8 * m * m / 1e9:.1f} GB) at every iteration, which no time_limit can "
                f"interrupt; it is meant for min(n, d) <= {MAX_SYSTEM_SIZE:,}. Use "
                f"solver='sdca' (or 'auto') on data this size")
        if not np.isfinite(prob.rows.sqnorm).all():
            raise FloatingPointError(
                "solver='ipm': a row's squared norm overflows double precision, so the "
                "interior-point method's linear systems cannot be formed; scale the rows "
                "(e.g. --normalize, StandardScaler) or use solver='sdca'")
        self.eta = float(self.opts.step_fraction)
        self.u = prob.sample_weight / prob.W
        self.sig, self.b, self.qd, self.lo, self.hi = _blocks(prob, self.u)
        # the closest p may come to its lower bound: 1e-300 above 0, a rounding inside -u
        self._inner_lo = np.where(self.lo == 0.0, 1e-300, self.lo * (1.0 - 1e-16))
        self.use_kernel = prob.n < prob.d
        self._kernel = None
        # CSR data dense enough for BLAS to form M faster is densified once (a copy)
        self._dense = prob.rows.X.toarray() if densifies(prob) else None
        self._buf = None            # X sqrt(E) on dense data, reused by every iteration
        # the products X m and X^T v (about ten per iteration) read the dense copy
        # when there is one; a CSR matrix's transpose view is made once
        self._X = prob.rows.X if self._dense is None else self._dense
        self._XT = self._X.T

    # -------------------------------------------------------------- state
    def init_state(self, warm_start):
        prob = self.problem
        self.w, alpha = self._warm_pair(warm_start)
        frac = 0.5 if alpha is None else \
            0.01 + 0.98 * _box_fraction(alpha, prob.y, prob.loss.name)
        self.p = self.lo + (self.hi - self.lo) * frac
        self.s = 1.0 + np.abs(self.b)
        self.t = self.s.copy()
        self.start_loop()

    def _warm_pair(self, warm_start):
        """``(w, alpha or None)`` to start from."""
        prob = self.problem
        if warm_start is None:
            return np.zeros(prob.d), None
        if isinstance(warm_start, SolveResult):
            return self.warm_start_coef(), self.warm_start_alpha()
        if self.warm_start_is_alpha():
            alpha = self.warm_start_alpha()
            return prob.w_of(alpha), alpha
        return self.warm_start_coef(), None

    #: the iterate's arrays, saved in checkpoints
    state_arrays = ("w", "p", "s", "t")

    def set_state(self, meta, arrays):
        if "p" not in arrays or "w" not in arrays:
            raise ValueError("cannot resume: the checkpoint holds the state of the earlier "
                             "dual-only interior-point method (no primal iterate w); start "
                             "a new run (warm_start= takes the previous result)")
        super().set_state(meta, arrays)

    # ---------------------------------------------------- linear algebra
    def _x(self, m):
        """X m."""
        return np.asarray(self._X @ m, dtype=np.float64).ravel()

    def _xt(self, v):
        """X^T v."""
        return np.asarray(self._XT @ v, dtype=np.float64).ravel()

    def _reduced_solver(self, E):
        """``solve(r_w, rho) -> (dw, dg)`` for ``(lam I + X^T E X) dw = -r_w + X^T rho``
        (``dg = rho - E X dw``: None where the solver does not have it directly)."""
        lam = self.problem.lam
        if self.use_kernel:
            return self._kernel_solver(E)
        cf, scale = self._factor_normal(E)

        def apply(v):
            return lam * v + self._xt(E * self._x(v))

        def solve(r_w, rho):
            rhs = self._xt(rho) - r_w
            dw = scaled_solve(cf, scale, rhs)
            for _ in range(REFINE_STEPS):
                dw = dw + scaled_solve(cf, scale, rhs - apply(dw))
            return dw, None
        return solve

    def _factor_normal(self, E):
        """Cholesky factor of ``S (lam I + X^T E X) S``, ``S`` its unit-diagonal scaling."""
        prob = self.problem
        X = self._X
        if self._dense is None and prob.rows.is_sparse:
            Xs = X.multiply(np.sqrt(E)[:, None]).tocsr()
            M = (Xs.T @ Xs).toarray()
        else:
            if self._buf is None:
                self._buf = np.empty(X.shape)
            Xs = self._buf
            scale_rows(X, np.sqrt(E), Xs)
            M = Xs.T @ Xs
        return equilibrated_factor(M, prob.lam)

    def _kernel_solver(self, E):
        """The ``n < d`` form: ``(X X^T / lam + diag(1/E)) dg = rho / E + X r_w / lam``,
        then ``dw = (X^T dg - r_w) / lam``."""
        prob = self.problem
        lam = prob.lam
        if self._kernel is None:
            K = self._X @ self._XT
            self._kernel = (K.toarray() if hasattr(K, "toarray") else np.asarray(K)) / lam
        A = self._kernel.copy()
        A.flat[::A.shape[0] + 1] += 1.0 / E
        cf = spd_factor(A)

        def solve(r_w, rho):
            rhs = rho / E + self._x(r_w) / lam
            dg = _cho_solve(cf, rhs)
            for _ in range(REFINE_STEPS):
                dg = dg + _cho_solve(cf, rhs - self._kernel @ dg - dg / E)
            return (self._xt(dg) - r_w) / lam, dg
        return solve

    # ------------------------------------------------------------ updates
    def _iterate(self):
        prob = self.problem
        sig, p, s, t = self.sig, self.p, self.s, self.t
        pl, ph = p - self.lo, self.hi - p          # the slacks of the two bounds
        r_w = prob.lam * self.w - self._xt((sig * p).sum(0))
        xw = self._xw[1] if self._xw is not None and self._xw[0] is self.w \
            else self._x(self.w)
        # the elementwise work in compiled loops (the numpy expressions' values)
        r, D, E = np.empty_like(p), np.empty_like(p), np.empty(p.shape[1])
        kkt_parts(sig, xw, self.b, self.qd, p, s, t, pl, ph, r, D, E)
        mu = (np.sum(s * pl) + np.sum(t * ph)) / (2 * p.size)
        solve = self._reduced_solver(E)

        def direction(rs, rt):
            h, rho = np.empty_like(p), np.empty(p.shape[1])
            newton_rhs(r, rs, rt, pl, ph, sig, D, h, rho)
            dw, dg = solve(r_w, rho)
            dp = np.empty_like(p)
            block_step(h, sig, self._x(dw), D, dp)
            if dg is not None:
                dp = _with_sum(dp, dg, sig, D)
            ds, dt = np.empty_like(p), np.empty_like(p)
            slack_steps(rs, rt, s, t, dp, pl, ph, ds, dt)
            return dw, dp, ds, dt

        dw, dp, ds, dt = direction(s * pl, t * ph)
        a = _longest_step(pl, ph, s, t, dp, ds, dt)
        mu_aff = (np.sum((s + a * ds) * (pl + a * dp))
                  + np.sum((t + a * dt) * (ph - a * dp))) / (2 * p.size)
        sigma = (mu_aff / mu) ** SIGMA_POWER if mu > 0 else 0.0
        dw, dp, ds, dt = direction(s * pl + ds * dp - sigma * mu, t * ph - dt * dp - sigma * mu)
        a = self.eta * _longest_step(pl, ph, s, t, dp, ds, dt)
        self.last_step = float(a)
        if not (a > MIN_STEP and all(np.isfinite(x).all() for x in (dw, dp, ds, dt))):
            self.stall = "step_collapse"        # no representable progress left
            return
        # rounding may put p on a bound when the step fraction is near 1: keep it interior
        self.p = np.minimum(np.maximum(p + a * dp, self._inner_lo), self.hi * (1.0 - 1e-16))
        self.w, self.s, self.t = self.w + a * dw, s + a * ds, t + a * dt
        self.n_iter += 1

    # -------------------------------------------------------- certificate
    def dual_point(self):
        """alpha = g W / c (strictly inside the dual box)."""
        return (self.sig * self.p).sum(0) / self.u

    def certificate(self):
        """The iterate ``w`` or ``w(alpha)``, whichever has the lower primal, with
        ``alpha``: both pairs are exact certificates.  ``X w`` is made by BLAS
        (kept for the next iteration's residual), and ``w(alpha)``'s pair, whose
        dual is ``alpha``'s, needs only its primal ``P(w(alpha))``."""
        prob = self.problem
        alpha = self.dual_point()
        self._xw = (self.w, self._x(self.w))
        cert = prob.certificate(self.w, alpha, margins=self._xw[1])
        w_alpha = cert.v / prob.lam
        if np.isfinite(w_alpha).all():
            margins = prob.rows.matvec(w_alpha)
            primal = float(weighted_sum(prob.sample_weight, prob.loss.value(margins, prob.y))
                           / prob.W + prob.penalty.value(w_alpha))
            if primal < cert.primal:
                cert = Certificate(w=w_alpha, alpha=cert.alpha, primal=primal,
                                   dual=cert.dual, v=cert.v, margins=margins)
        self._note_gap(cert.rel_gap)
        return cert

    def trace_extras(self):
        p, s, t = self.p, self.s, self.t
        mu = (np.sum(s * (p - self.lo)) + np.sum(t * (self.hi - p))) / (2 * p.size)
        return {"iterations": int(self.n_iter), "mu": float(mu), "step": self.last_step}



def _blocks(prob, u):
    """``(sigma, b, Q, lo, hi)``, each ``(K, n)``: the QP's blocks (class docstring)."""
    n, y = prob.n, prob.y
    name, param = prob.loss.name, prob.loss.param
    if name not in LOSSES:
        raise ValueError(f"solver='ipm' does not support loss={name!r}; it solves "
                         f"{', '.join(LOSSES)}")
    zeros, box = np.zeros((1, n)), u[None, :]
    if name in ("hinge", "smooth_hinge"):
        gamma = param if name == "smooth_hinge" else 0.0
        return y[None, :].copy(), -np.ones((1, n)), \
            (gamma * prob.W / prob.sample_weight)[None, :], zeros, box
    if name == "absolute":
        # one box variable g in [-u, u]: split, p + q would be a free direction
        # of zero cost wherever a residual is 0 (every row when n <= d)
        return np.ones((1, n)), -y[None, :].copy(), zeros, -box, box
    sig = np.vstack([np.ones(n), -np.ones(n)])
    return sig, np.vstack([param - y, param + y]), np.zeros((2, n)), \
        np.zeros((2, n)), np.vstack([u, u])


def _box_fraction(alpha, y, name):
    """Where a dual point sits in each block's box, as fractions ``(K, n)`` in
    [0, 1]: ``alpha y`` (hinge family), ``(alpha + 1) / 2`` (absolute),
    ``(alpha^+, alpha^-)`` (the epsilon-insensitive pair)."""
    a = np.clip(alpha, -1.0, 1.0)
    if name == "epsilon_insensitive":
        return np.vstack([np.maximum(a, 0.0), np.maximum(-a, 0.0)])
    if name == "absolute":
        return ((a + 1.0) / 2.0)[None, :]
    return np.clip(alpha * y, 0.0, 1.0)[None, :]


def _with_sum(dp, dg, sig, D):
    """``dp`` made to satisfy ``sum_k sigma_k dp_k = dg`` exactly: where ``D``
    is small (free variables near the end) ``(h - sigma X dw) / D`` cancels,
    while ``dg`` from the kernel system does not; the block of largest ``D``
    keeps its own value and the other takes the rest."""
    if dp.shape[0] == 1:
        return (sig[0] * dg)[None, :]
    keep = D[0] >= D[1]
    out = dp.copy()
    out[1] = np.where(keep, sig[1] * (dg - sig[0] * dp[0]), dp[1])
    out[0] = np.where(keep, dp[0], sig[0] * (dg - sig[1] * dp[1]))
    return out


def _longest_step(pl, ph, s, t, dp, ds, dt):
    """The largest step in (0, 1] keeping the slacks ``pl, ph`` and ``s, t`` nonnegative
    (one compiled pass: :func:`primaldual.kernels.ipm.longest_step`)."""
    return longest_step(pl.ravel(), ph.ravel(), s.ravel(), t.ravel(), dp.ravel(),
                        ds.ravel(), dt.ravel())


def densifies(problem) -> bool:
    """CSR data that the solver copies to a dense array (DENSIFY_MAX_ENTRIES)."""
    n, d = problem.n, problem.d
    return problem.rows.is_sparse and d <= n and n * d <= DENSIFY_MAX_ENTRIES \
        and problem.nnz >= DENSIFY_MIN_DENSITY * n * d


def equilibrate(M, lam):
    """``(S (M + lam I) S, S)``, in place (``M`` symmetric positive
    semidefinite): ``S`` scales it to a unit diagonal, which keeps the
    factorization accurate when the diagonal spans many orders of magnitude."""
    M.flat[::M.shape[0] + 1] += lam
    scale = 1.0 / np.sqrt(np.maximum(np.diag(M), 1e-300))
    M *= scale[:, None]
    M *= scale[None, :]
    return M, scale


def equilibrated_factor(M, lam):
    """``(cf, S)``: the Cholesky factor of :func:`equilibrate`'s matrix and
    ``S``; solve with :func:`scaled_solve`."""
    M, scale = equilibrate(M, lam)
    return spd_factor(M), scale


def scaled_solve(cf, scale, b):
    """``(M + lam I)^{-1} b`` from :func:`equilibrated_factor`'s ``(cf, S)``."""
    return scale * _cho_solve(cf, scale * b)


def _cho_solve(cf, b):
    """``scipy.linalg.cho_solve(cf, b)`` through LAPACK's ``potrs`` directly: the
    solves are the inner loop and on small systems the checks of the public
    wrapper cost more than the solve."""
    c, lower = cf
    x, info = _POTRS(c, b, lower=int(lower))
    if info != 0:
        raise ValueError(f"LAPACK potrs failed (info={info})")
    return x


_POTRS = scipy.linalg.lapack.dpotrs


def spd_factor(A):
    """Cholesky factor of the symmetric positive definite A; a relative jitter
    of the diagonal when rounding makes it indefinite."""
    try:
        return scipy.linalg.cho_factor(A, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        jitter = 1e-12 * max(float(np.max(np.abs(np.diag(A)))), 1e-300)
        A = A.copy()
        A[np.diag_indices_from(A)] += jitter
        return scipy.linalg.cho_factor(A, lower=True, check_finite=False)
