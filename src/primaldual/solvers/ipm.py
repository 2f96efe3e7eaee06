"""Primal-dual interior-point method (Mehrotra predictor-corrector) on the
box-constrained dual of the hinge and smoothed-hinge SVM.

Ferris & Munson, "Interior-point methods for massive support vector
machines", SIAM J. Optim. 13(3) (2002) 783-804: the linear SVM's dual QP,
solved by a primal-dual interior-point method whose linear systems go through
the Sherman-Morrison-Woodbury formula, so that an iteration costs ``O(n d^2)``
when ``d << n``.  Predictor-corrector: Mehrotra, "On the implementation of a
primal-dual interior point method", SIAM J. Optim. 2(4) (1992) 575-601; in the
form of Nocedal & Wright, Numerical Optimization (2nd ed., 2006), Algorithm
16.4 (predictor-corrector for QP), with bounds instead of general constraints.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.linalg.lapack

from ._base import Solver, register
from ._options import CommonOptions, number
from .newton import _serial_blas_enter, _serial_blas_exit

#: CSR input is copied to a dense array for forming M when it has at most this
#: many entries (n d) and at least this density: BLAS then forms M several times
#: faster than a sparse product (measured on phishing, 44% dense, and a9a, 11%)
DENSIFY_MAX_ENTRIES = 10_000_000
#: the largest dense system (min(n, d)) an explicit solver="ipm" forms: 800 MB
#: and about 3e11 flops to factor, tens of seconds per iteration on one core
MAX_SYSTEM_SIZE = 10_000
DENSIFY_MIN_DENSITY = 0.05

#: the run ends (``finished``) when the best relative gap has not halved in this
#: many iterations after the first STALL_START: an interior-point method
#: halves it every one or two iterations until rounding stops it (features of
#: very different scales, see docs/solvers.md)
STALL_WINDOW = 20
STALL_START = 50

#: steps of iterative refinement of each Woodbury solve
REFINE_STEPS = 2

#: the barrier target is sigma * mu with Mehrotra's sigma = (mu_aff / mu)^3
SIGMA_POWER = 3.0


@dataclass(frozen=True)
class IPMOptions(CommonOptions):
    """The options of :class:`IPMSolver` (see its docstring)."""

    solver_name = "ipm"
    step_fraction: float = number(0.995, low=0.0, high=1.0, high_strict=True,
                                  doc="fraction of the step to the boundary taken "
                                      "(eta of Nocedal & Wright Alg. 16.4)")


@register
class IPMSolver(Solver):
    """Primal-dual interior-point method on the box-constrained dual; for
    ``hinge`` and ``smooth_hinge`` with ``l1 = 0``.

    Problem (docs/conventions.md §1, weights ``c_i``, ``W = sum_i c_i``)::

        primal  P(w)     = (1/W) sum_i c_i phi(y_i x_i . w) + lam/2 ||w||^2
        dual    D(alpha) = (1/W) sum_i c_i (alpha_i y_i - gamma (alpha_i y_i)^2 / 2)
                           - lam/2 ||w(alpha)||^2,     alpha_i y_i in [0, 1]

    (``gamma = 0`` for the hinge).  With ``z_i = y_i x_i`` and the scaled dual
    variable ``g_i = c_i alpha_i y_i / W`` in the box ``0 <= g_i <= u_i = c_i / W``,
    ``w(alpha) = Z^T g / lam`` and ``-D`` is the convex QP (Ferris & Munson
    2002, the dual SVM problem)::

        min_g  q(g) = 1/(2 lam) ||Z^T g||^2 + 1/2 g^T Dq g - 1^T g,   0 <= g <= u

    with ``Dq = diag(gamma W / c_i)``.  Its KKT conditions, with multipliers
    ``s >= 0`` for ``g >= 0`` and ``t >= 0`` for ``g <= u``::

        r = Z Z^T g / lam + Dq g - 1 - s + t = 0,   s g = 0,   t (u - g) = 0.

    Update (Nocedal & Wright, Algorithm 16.4, with bounds): from an interior
    point ``0 < g < u``, ``s, t > 0`` and ``mu = (s^T g + t^T (u - g)) / (2 n)``,
    solve the Newton system of the KKT conditions twice with one factorization:

        (Z Z^T / lam + D) dg = -r - r_s / g + r_t / (u - g),
        ds = -(r_s + s dg) / g,      dt = -(r_t - t dg) / (u - g),
        D  = Dq + s / g + t / (u - g),

    first the affine step (``r_s = s g``, ``r_t = t (u - g)``), whose largest
    feasible length gives ``mu_aff`` and Mehrotra's ``sigma = (mu_aff/mu)^3``;
    then the corrector (``r_s = s g + ds_aff dg_aff - sigma mu``,
    ``r_t = t (u - g) - dt_aff dg_aff - sigma mu``).  The step is
    ``step_fraction`` (0.995) of the largest one keeping ``g, s, t``
    interior.

    Linear algebra: when ``d <= n`` the Sherman-Morrison-Woodbury formula
    (Ferris & Munson 2002)
    ``(Z Z^T/lam + D)^{-1} = D^{-1} - D^{-1} Z M^{-1} Z^T D^{-1}`` with the
    ``d x d`` matrix ``M = lam I + X^T D^{-1} X`` (formed by BLAS on dense
    input, one thread; by a sparse product on CSR), Cholesky-factored once
    per iteration; when ``n < d`` the ``n x n`` matrix ``diag(y) X X^T diag(y)``
    is formed once and ``Z Z^T / lam + D`` is factored each iteration.  An
    iteration costs ``O(n d min(n, d))`` flops, independent of
    ``R^2 / (lam n)``: the method is for the regime where SDCA's rate is
    hopeless (unscaled or standardized dense features) and ``min(n, d)`` is
    small (``solver="auto"`` picks it there, see :func:`resolve_solver`).

    Stopping: besides ``tol``, ``max_epochs`` and ``time_limit``, the run ends
    when the best relative gap has not halved in 20 iterations (after the
    first 50), which happens only when rounding stops the method: features
    of very different scales (``R^2 / (lam n)`` of 10^6 and more) leave the
    gap at 1e-4 to 1e-1; scaling the features is the remedy.

    Passes (``n_epochs``): one per iteration (forming ``M`` reads the data
    once, with ``min(n, d)`` times the flops of a matrix-vector product).

    Certificate: ``alpha_i = y_i g_i W / c_i`` (strictly inside the dual
    box, hence feasible) and ``w = w(alpha) = Z^T g / lam``; the gap
    ``P(w) - D(alpha)`` is exact for the ORIGINAL loss.

    Start: ``g = c u`` with ``c = min(1/2, lam n / R^2)`` (``R^2`` the mean
    squared row norm), which makes the margins ``Z Z^T g / lam`` about 1,
    and ``s = t = 1``.

    Warm start: a SolveResult or a dual point ``alpha`` of shape ``(n,)``,
    pulled 1% of the box inside it (an interior point is required).

    Options
    -------
    step_fraction : float, default 0.995
        The fraction of the step to the boundary that is taken.
    """

    name = "ipm"
    summary = ("interior-point (Mehrotra predictor-corrector) on the box dual, "
               "Woodbury linear algebra (Ferris & Munson 2002)")
    default_max_epochs = 1000
    options_class = IPMOptions
    supports_l1 = False
    requires = ("box_qp_dual",)

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
        gamma = prob.loss.param if prob.loss.name == "smooth_hinge" else 0.0
        self.dq = gamma * prob.W / prob.sample_weight
        self.use_kernel = prob.n < prob.d
        self._kernel = None
        # CSR data dense enough for BLAS to form M faster is densified once (a copy)
        self._dense = prob.rows.X.toarray() if densifies(prob) else None
        self._buf = None            # X / sqrt(D) on dense data, reused by every iteration
        # the products Z m and Z^T v (about ten per iteration) read the dense copy
        # when there is one; a CSR matrix's transpose view is made once, not per
        # product (on a few hundred rows building it cost more than the product)
        self._X = prob.rows.X if self._dense is None else self._dense
        self._XT = self._X.T

    # -------------------------------------------------------------- state
    def init_state(self, warm_start):
        prob = self.problem
        u = self.u
        alpha = self.warm_start_alpha() if warm_start is not None else None
        if alpha is None:
            # margins Z Z^T g / lam of about 1 at g = c u: c = 1 / (R^2 / (lam n)),
            # at most 1/2 (the centre of the box)
            ratio = float(prob.sample_weight @ prob.rows.sqnorm) / (prob.W * prob.lam * prob.n)
            self.g = min(0.5, 1.0 / max(ratio, 1e-300)) * u
        else:
            beta = np.clip(alpha * prob.y, 0.0, 1.0)
            self.g = u * (0.01 + 0.98 * beta)
        self.s = np.ones(prob.n)
        self.t = np.ones(prob.n)
        self.n_iter = 0
        self.finished = False
        self.gaps = []

    def get_state(self):
        return ({"n_iter": int(self.n_iter), "finished": bool(self.finished),
                 "gaps": list(self.gaps)},
                {"g": self.g.copy(), "s": self.s.copy(), "t": self.t.copy()})

    def set_state(self, meta, arrays):
        self.g = np.array(arrays["g"], dtype=np.float64)
        self.s = np.array(arrays["s"], dtype=np.float64)
        self.t = np.array(arrays["t"], dtype=np.float64)
        self.n_iter = int(meta["n_iter"])
        self.finished = bool(meta["finished"])
        self.gaps = [float(x) for x in meta["gaps"]]

    @property
    def epochs(self):
        if self.finished:
            return max(float(self.n_iter), float(self.max_epochs))
        return float(self.n_iter)

    # ---------------------------------------------------- linear algebra
    def _zt(self, v):
        """Z^T v = X^T (y v)."""
        return np.asarray(self._XT @ (self.problem.y * v), dtype=np.float64).ravel()

    def _z(self, m):
        """Z m = y (X m)."""
        return self.problem.y * np.asarray(self._X @ m, dtype=np.float64).ravel()

    def _factor(self, D):
        """A solver for (Z Z^T / lam + diag(D)) x = b."""
        prob = self.problem
        lam = prob.lam
        X = prob.rows.X if self._dense is None else self._dense
        if self.use_kernel:
            if self._kernel is None:
                K = X @ X.T
                K = K.toarray() if hasattr(K, "toarray") else np.asarray(K)
                self._kernel = (prob.y[:, None] * K * prob.y[None, :]) / lam
            A = self._kernel.copy()
            A.flat[::A.shape[0] + 1] += D
            cf = _cholesky(A)
            return lambda b: _cho_solve(cf, b)
        Dinv = 1.0 / D
        if self._dense is None and prob.rows.is_sparse:
            Xs = X.multiply(np.sqrt(Dinv)[:, None]).tocsr()
            M = (Xs.T @ Xs).toarray()
        else:
            if self._buf is None:
                self._buf = np.empty(X.shape)
            Xs = np.multiply(X, np.sqrt(Dinv)[:, None], out=self._buf)
            M = Xs.T @ Xs
        M.flat[::M.shape[0] + 1] += lam
        cf = _cholesky(M)

        def smw(b):
            t = b * Dinv
            return t - Dinv * self._z(_cho_solve(cf, self._zt(t)))

        def solve(b):
            # the Woodbury form cancels where D is small (free variables near the
            # end); steps of iterative refinement on the exact residual restore it
            x = smw(b)
            for _ in range(REFINE_STEPS):
                res = b - self._z(self._zt(x)) / lam - D * x
                x = x + smw(res)
            return x
        return solve

    # ------------------------------------------------------------ updates
    def _iterate(self):
        prob = self.problem
        g, s, t, u = self.g, self.s, self.t, self.u
        n = prob.n
        ug = u - g
        r = self._z(self._zt(g)) / prob.lam + self.dq * g - 1.0 - s + t
        mu = (s @ g + t @ ug) / (2 * n)
        D = self.dq + s / g + t / ug
        solve = self._factor(D)

        def direction(rs, rt):
            dg = solve(-r - rs / g + rt / ug)
            return dg, -(rs + s * dg) / g, -(rt - t * dg) / ug

        dg, ds, dt = direction(s * g, t * ug)
        a = min(_max_step(g, dg), _max_step(ug, -dg), _max_step(s, ds), _max_step(t, dt))
        mu_aff = ((s + a * ds) @ (g + a * dg) + (t + a * dt) @ (ug - a * dg)) / (2 * n)
        sigma = (mu_aff / mu) ** SIGMA_POWER if mu > 0 else 0.0
        dg, ds, dt = direction(s * g + ds * dg - sigma * mu, t * ug - dt * dg - sigma * mu)
        a = self.eta * min(_max_step(g, dg), _max_step(ug, -dg), _max_step(s, ds),
                           _max_step(t, dt))
        if not (a > 1e-14 and np.isfinite(dg).all() and np.isfinite(ds).all()
                and np.isfinite(dt).all()):
            self.finished = True        # no representable progress left
            return
        g_new = g + a * dg
        # rounding may put g on a bound when the step fraction is near 1: keep it interior
        g_new = np.clip(g_new, 1e-300, None)
        g_new = np.minimum(g_new, u * (1.0 - 1e-16))
        self.g, self.s, self.t = g_new, s + a * ds, t + a * dt
        self.n_iter += 1

    def advance(self, n_epochs, deadline):
        target = self.n_iter + max(1, int(math.ceil(n_epochs - 1e-9)))
        while self.n_iter < target and not self.finished \
                and self.n_iter < self.max_epochs - 1e-9:
            self._iterate()
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.steps = self.n_iter
        self.feature_accesses = int(self.n_iter) * self.problem.nnz

    def run(self):
        # BLAS (forming M, the Cholesky factorization) on one thread for the whole
        # run: a serial solver; several BLAS threads on a busy machine were measured
        # 10-100x slower on these sizes (primaldual.solvers.newton)
        _serial_blas_enter()
        try:
            return super().run()
        finally:
            _serial_blas_exit()

    # -------------------------------------------------------- certificate
    def dual_point(self):
        """alpha = y g W / c (inside the dual box)."""
        prob = self.problem
        return prob.y * self.g * prob.W / prob.sample_weight

    def certificate(self):
        prob = self.problem
        alpha = self.dual_point()
        w = self._zt(self.g) / prob.lam
        cert = prob.certificate(w, alpha)
        self._note_gap(cert.rel_gap)
        return cert

    def _note_gap(self, rel_gap):
        """Record the gap of the iterate; a stall (see STALL_WINDOW) ends the run."""
        if len(self.gaps) == self.n_iter:
            self.gaps.append(float(rel_gap))
        k = len(self.gaps)
        if k > STALL_START and min(self.gaps[-STALL_WINDOW:]) \
                > 0.5 * min(self.gaps[:-STALL_WINDOW]):
            self.finished = True

    def trace_extras(self):
        g, s, t = self.g, self.s, self.t
        mu = (s @ g + t @ (self.u - g)) / (2 * self.problem.n)
        return {"iterations": int(self.n_iter), "mu": float(mu)}


def densifies(problem) -> bool:
    """CSR data that the solver copies to a dense array (DENSIFY_MAX_ENTRIES)."""
    n, d = problem.n, problem.d
    return problem.rows.is_sparse and d <= n and n * d <= DENSIFY_MAX_ENTRIES \
        and problem.nnz >= DENSIFY_MIN_DENSITY * n * d


def _max_step(x, dx):
    """The largest a in (0, 1] with x + a dx >= 0 (x > 0)."""
    neg = dx < 0
    if not neg.any():
        return 1.0
    return min(1.0, float(np.min(-x[neg] / dx[neg])))


def _cho_solve(cf, b):
    """``scipy.linalg.cho_solve(cf, b)`` through LAPACK's ``potrs`` directly: the
    solves are the inner loop (about ten per iteration) and on small systems
    the checks of the public wrapper cost more than the solve."""
    c, lower = cf
    x, info = _POTRS(c, b, lower=int(lower))
    if info != 0:
        raise ValueError(f"LAPACK potrs failed (info={info})")
    return x


_POTRS = scipy.linalg.lapack.dpotrs


def _cholesky(A):
    """Cholesky factor of the symmetric positive definite A; a relative jitter
    of the diagonal when rounding makes it indefinite."""
    try:
        return scipy.linalg.cho_factor(A, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        jitter = 1e-12 * max(float(np.max(np.abs(np.diag(A)))), 1e-300)
        A = A.copy()
        A[np.diag_indices_from(A)] += jitter
        return scipy.linalg.cho_factor(A, lower=True, check_finite=False)
