"""Truncated Newton method with conjugate gradient, globalized by a line
search or a trust region (the method of LIBLINEAR ``-s 0`` and ``-s 2``).

Lin, Weng & Keerthi, "Trust region Newton method for large-scale logistic
regression", JMLR 9 (2008) 627-650.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from .._util.cg import steihaug
from ..distributed.newton_block import (EXPLICIT_MAX_COST, EXPLICIT_MAX_D, BlockNewtonData,
                                       contiguous_partitions, dot, explicit_hessian_pays,
                                       normal_equations)
from ..distributed.newton_rounds import newton_engine
from ..kernels.objective import sum_squares
from ..problem import Certificate
from ._base import Solver, register
from ._blas import serial_blas_enter, serial_blas_exit
from ._options import CommonOptions, PartitionOptions, choice, number
from ._partitions import PartitionCount
from ._rounds import is_partitioned

#: acceptance and radius constants of rule (10), Lin, Weng & Keerthi (2008):
#: eta0 < eta1 < eta2 < 1 and sigma1 < sigma2 < 1 < sigma3
ETA0, ETA1, ETA2 = 1e-4, 0.25, 0.75
SIGMA1, SIGMA2, SIGMA3 = 0.25, 0.5, 4.0
#: slope evaluations of the 1-D line minimization (t can shrink to 1e-100); the
#: approximate Wolfe conditions' delta and sigma (Hager & Zhang 2005); the least
#: relative resolution of f assumed; the unit roundoff
LINE_MIN_STEPS = 60
WOLFE_DELTA, WOLFE_SIGMA = 0.1, 0.9
F_RESOLUTION, EPS = 1e-14, 2.0 ** -53


def f_resolution(f, n):
    """How far rounding blurs an objective ``f`` summed over ``n`` rows: its
    sums carry about ``eps sqrt(n)`` relative error (at least ``F_RESOLUTION``),
    so a smaller difference or predicted decrease is noise."""
    return max(F_RESOLUTION, 4.0 * EPS * math.sqrt(n)) * max(abs(f), 1e-300)


@dataclass(frozen=True)
class NewtonOptions(PartitionOptions, CommonOptions):
    """The options of :class:`NewtonSolver` (see its docstring)."""

    solver_name = "newton"
    cg_tol: float = number(0.1, low=0.0, high=1.0, high_strict=True,
                           doc="xi of Algorithm 2 (LIBLINEAR's value)")
    hessian: str = choice("auto", "auto", "explicit", "matvec",
                          doc="form the d x d Hessian (explicit) or multiply by it in one "
                              "pass (matvec); auto: explicit for small d")
    max_cg_iter: int | None = number(None, integer=True, low=0.0, also=(None,),
                                     doc="cap on CG iterations per Newton step")
    globalization: str = choice("line_search", "line_search", "trust_region",
                                doc="step control: LIBLINEAR's line search, or the "
                                    "paper's trust region (Algorithm 1)")


@register
class NewtonSolver(PartitionCount, Solver):
    """Truncated Newton-CG with a line search or a trust region; a primal method.

    Problem: ``min_w P(w) = f(w) = (1/W) sum_i c_i phi(x_i . w; y_i) +
    lam/2 ||w||^2`` (docs/conventions.md §1) with ``l1 = 0`` and a loss with a (generalized)
    Hessian: ``logistic``, ``squared_hinge``, ``squared``, ``smooth_hinge``,
    ``squared_epsilon_insensitive``.  Its gradient and Hessian are::

        grad f(w) = (1/W) X^T (c * phi'(X w)) + lam w
        H(w)      = (1/W) X^T diag(c * phi''(X w)) X + lam I

    Where ``phi'`` has a kink (``squared_hinge``, ``smooth_hinge``,
    ``squared_epsilon_insensitive``), ``phi''`` is the generalized Hessian
    (Mangasarian 2002) as in LIBLINEAR ``-s 2`` and ``-s 11``: rows on the flat
    side (or inside the tube) have curvature 0 and are skipped by the products.

    Step (Lin, Weng & Keerthi, JMLR 2008): at ``w_k`` the Newton system
    ``H(w_k) s = -grad f(w_k)`` is solved approximately by conjugate gradient
    (Algorithm 2, Steihaug) until the residual ``||r|| <= xi ||grad f(w_k)||``
    (``xi = cg_tol``), or exactly by Cholesky when H is formed explicitly.
    The step is globalized in one of two ways (``globalization``):

    * ``"trust_region"`` -- the paper's Algorithm 1: CG solves the
      trust-region subproblem (11) ``min_s q_k(s) = grad f(w_k)^T s +
      s^T H(w_k) s / 2`` s.t. ``||s|| <= Delta_k`` (``Delta_0 =
      ||grad f(w_0)||``), stopping on the boundary; the ratio
      ``rho_k = (f(w_k + s_k) - f(w_k)) / q_k(s_k)`` (8) accepts the step
      when ``rho_k > eta0`` (9) and ``Delta`` follows rule (10) with
      ``eta = (1e-4, 0.25, 0.75)``, ``sigma = (0.25, 0.5, 4)``:
      ``rho <= eta0``: ``sigma1 min(||s||, Delta)``; ``rho <= eta1``:
      ``sigma2 min(||s||, Delta)``; ``eta1 < rho < eta2``: unchanged;
      ``rho >= eta2``: ``max(Delta, min(sigma3 Delta, 4 ||s||))``.
    * ``"line_search"`` (default) -- the truncated Newton step without a
      radius, as LIBLINEAR 2.40 and later run ``-s 0`` and ``-s 2`` (Galli &
      Lin, "A study on truncated Newton methods for linear classification",
      IEEE TNNLS 2022): the full step is taken when ``rho_k > eta1``
      (the quadratic model predicts the decrease); otherwise ``t`` in
      ``(0, 1]`` minimizes ``f(w_k + t s_k)`` by safeguarded 1-D Newton,
      each evaluation ``O(n)`` from the margins and ``X s_k`` (the
      difference of the two passes' margins), and ``w_k + t s_k`` is
      accepted under Armijo's condition ``f <= f(w_k) + eta0 t grad^T s``
      (halving t otherwise, at most 5 times).  On the squared and smoothed
      hinge, whose generalized Hessian changes with the active set, this
      needs several times fewer passes than the trust region (measured on
      standardized digits: 35 against 350 passes per problem at lam = 1e-4).

    Near the optimum: the certificate's gap is ``||grad f||^2 / (2 lam)``
    while ``f - f*`` is about ``grad^T H^{-1} grad / 2``, smaller by up to
    ``lam / ||H||`` (1e-9 on 0-255 features at lam = 1e-5): the gap is still
    far from tol when the decrease ``f(w_k) - f(w_k + s)`` is below the
    rounding of ``f``'s n-term sums (``max(1e-14, 4 eps sqrt(n)) |f|``).
    There a step is judged by whether it reduces ``||grad f||``, and the
    line search accepts ``t`` under the approximate Wolfe conditions (Hager
    & Zhang 2005), whose slopes come from the margins without cancellation.
    A line search that still finds no decrease ends the run with stop_reason
    ``"stalled"`` and ``extras["stall"] = "line_search"``.

    Squared loss (dense rows, explicit Hessian, in process): the first step
    solves the normal equations ``(X^T C X / W + lam I) w = X^T C y / W`` by
    BLAS and a Cholesky factorization scaled to unit diagonal (one pass);
    its certificate is exact (``alpha_i = y_i - x_i . w``), and Newton
    iterations follow only if rounding left the gap above ``tol``.

    Hessian: ``hessian="matvec"`` evaluates ``H v`` as one pass over the data
    (``sum_i D_i (x_i . v) x_i``, a compiled kernel reading each row once),
    the paper's Section 3 way.  ``hessian="explicit"`` forms the ``d x d``
    matrix once per Newton iteration (dense input: BLAS ``gemm`` on
    ``sqrt(D) X``, one thread; sparse: ``sum_i nnz_i^2`` work) and solves the subproblem
    with it: the Newton step by Cholesky when it lies inside the region,
    otherwise Steihaug CG on the explicit matrix.  ``"auto"`` (default)
    chooses explicit when ``d <= 2000`` and forming the matrix costs at most
    300 passes' worth of flops (dense: ``d <= 300``; sparse:
    ``sum_i nnz_i^2 <= 300 nnz``).

    Passes (``n_epochs``): each evaluation of ``f`` and ``grad f`` (one per
    trial point, computed together in one sweep) is one pass; each ``H v`` is
    one pass; forming the explicit Hessian is one pass (it reads the data
    once, with ``d`` times the flops of a matrix-vector product).

    Certificate: a primal method; ``alpha_i = -phi'(x_i . w)`` (docs/conventions.md §1),
    evaluated from the margins and the gradient of the last accepted point,
    so a gap check costs ``O(n + d)``, not a pass.

    Distributed (MPI-LIBLINEAR: Zhuang, Chin, Juan & Lin, "Distributed Newton
    methods for regularized logistic regression", PAKDD 2015): with
    ``n_partitions=K`` the rows are split into ``K`` contiguous partitions and
    every pass above is a sum of the partitions' parts
    (:class:`~primaldual.distributed.newton_block.NewtonBlock`), added in partition order;
    the driver's logic is unchanged.  In process (no client) the partitions run
    one after another; with ``client=`` (or partitioned input,
    :class:`~primaldual.distributed.PartitionedProblem`) each is a Dask actor on
    a worker (:mod:`primaldual.distributed.newton_rounds`): an evaluation of
    ``f`` and ``grad f`` and each CG step are one reduction of a ``d``-vector,
    a line-search evaluation one of two scalars, a certificate gathers
    ``alpha``.  The iterates are the same in process and on Dask for the same
    partitions; a lost worker is replaced (docs/distributed.md).

    Warm start: a SolveResult or a coefficient vector of shape ``(d,)``; a
    vector of shape ``(n,)`` (when ``n != d``) is read as a dual point and the
    run starts from ``w(alpha)``.

    Options
    -------
    cg_tol : float, default 0.1
        ``xi`` of Algorithm 2 (LIBLINEAR's value).
    hessian : {"auto", "explicit", "matvec"}, default "auto"
    globalization : {"line_search", "trust_region"}, default "line_search"
    n_partitions : int or None
        ``K`` row partitions (distributed Newton); None: serial in process, the
        parts of partitioned input, or one per Dask worker with ``client``.
    client, round_timeout, max_recoveries
        The Dask engine's options (docs/distributed.md).  With partitioned
        input and ``hessian="auto"``, H is formed explicitly when ``d <= 300``.
    max_cg_iter : int or None
        Cap on CG iterations per Newton step (default ``max(50, 2 d)``).
        A Newton iteration is never cut short by ``max_epochs`` (so that a
        resumed run equals an uninterrupted one); the run stops at the first
        check past ``max_epochs`` and reports the passes it made.
    """

    name = "newton"
    summary = "truncated Newton-CG, line search as LIBLINEAR or trust region (Lin, Weng & Keerthi 2008)"
    # each Hessian-vector product is a pass: CG on large sparse data at small lam
    # takes hundreds (reuters, squared hinge, lam 1e-6: ~230-1000)
    default_max_epochs = 1000
    newton_type = True
    requires = ("generalized_hessian",)
    options_class = NewtonOptions
    supports_l1 = False
    supports_client = True
    external_losses = True

    # ------------------------------------------------------------ options
    def validate_options(self):
        o = self.opts
        if self.check_partitions() is None:
            return
        if not self.problem.loss.builtin:
            raise ValueError(f"an unregistered loss ({self.problem.loss.name!r}) runs in process only")
        if is_partitioned(self.problem) and o.hessian == "explicit" \
                and self.problem.d > EXPLICIT_MAX_D:
            raise ValueError(f"hessian='explicit' forms a d x d matrix; d={self.problem.d} "
                             f"is more than {EXPLICIT_MAX_D}: use hessian='matvec'")

    def setup(self):
        o = self.opts
        self.cg_tol = float(o.cg_tol)
        self.max_cg_iter = o.max_cg_iter
        self.n_partitions = self._partitions()
        self.distributed_input = is_partitioned(self.problem)
        self.client = o.client if o.client is not None or not self.distributed_input \
            else self.problem.client
        self.explicit = self._choose_explicit(o.hessian)
        self.trust_region = o.globalization == "trust_region"
        self.data = None
        if self.n_partitions is not None:
            self.resolved_opts = self.resolved_opts.replace(n_partitions=self.n_partitions)

    def _choose_explicit(self, mode):
        if mode != "auto":
            return mode == "explicit"
        if self.distributed_input:
            # no rows on the client: forming H costs at most d passes' worth of
            # flops (sum_i nnz_i^2 / nnz <= max_i nnz_i <= d), so d <= 300 suffices
            return self.problem.d <= EXPLICIT_MAX_COST
        return explicit_hessian_pays(self.problem)

    def _make_data(self):
        """Where the passes run: the rows in this process (one partition, or
        ``n_partitions``), or the partitions on Dask workers."""
        prob = self.problem
        if self.client is None and not self.distributed_input:
            K = 1 if self.n_partitions is None else self.n_partitions
            part_ptr = contiguous_partitions(prob.n, K)
            return BlockNewtonData(prob, part_ptr)
        return newton_engine(prob, self.resolved_opts, self.distributed_input)

    # -------------------------------------------------------------- state
    def init_state(self, warm_start):
        prob = self.problem
        w0 = self._warm_point()
        self.w = np.zeros(prob.d) if w0 is None else w0
        self.passes = 0
        self.n_iter = 0
        self.cg_iter = 0
        self.stall = ""
        self._alloc()
        if self._direct():
            self.w = normal_equations(self.problem)
            self.passes += 1
            self.n_iter = 1
        self._eval_current()
        self.passes += 1
        self.delta = math.sqrt(sum_squares(self.g)) if self.trust_region else math.inf

    def _direct(self):
        """The squared loss on dense rows in this process with an explicit
        Hessian: the Newton step is the solution of the normal equations."""
        prob = self.problem
        return (prob.loss.name == "squared" and self.explicit and self.client is None
                and not self.distributed_input and self.n_partitions is None
                and not prob.rows.is_sparse)

    def _warm_point(self):
        ws = self.warm_start
        if ws is None:
            return None
        if self.warm_start_is_alpha():
            return self.problem.w_of(self.warm_start_alpha())
        return self.warm_start_coef()

    def _alloc(self):
        if self.data is None:
            self.data = self._make_data()
        # the current point is slot self.cur of the data, a trial point the other
        self.cur = 0
        self._H = None

    def _pass_fg(self, w, slot):
        """f(w) and the data gradient (times W) at w into ``slot``: one pass."""
        prob = self.problem
        loss_sum, gdata = self.data.evaluate(w, slot)
        return loss_sum / prob.W + 0.5 * prob.lam * sum_squares(w), gdata

    def _eval_current(self):
        prob = self.problem
        self.data.use(self.cur)
        self.f, self.gdata = self._pass_fg(self.w, self.cur)
        self.g = self.gdata / prob.W + prob.lam * self.w

    def get_state(self):
        meta = {"passes": int(self.passes), "n_iter": int(self.n_iter),
                "cg_iter": int(self.cg_iter),
                "delta": float(self.delta) if math.isfinite(self.delta) else None,
                "stall": self.stall}
        return meta, {"w": self.w.copy()}

    def set_state(self, meta, arrays):
        self.w = np.array(arrays["w"], dtype=np.float64)
        self.passes = int(meta["passes"])
        self.n_iter = int(meta["n_iter"])
        self.cg_iter = int(meta["cg_iter"])
        self.delta = math.inf if meta["delta"] is None else float(meta["delta"])
        self.stall = str(meta.get("stall", "line_search" if meta.get("finished") else ""))
        self._alloc()
        self._eval_current()       # deterministic: the same f, g as before the stop

    @property
    def epochs(self):
        return float(self.passes)

    @property
    def stalled(self):
        return bool(self.stall)

    def _form_hessian(self):
        """H = X^T diag(curv) X / W + lam I into self._H (one pass)."""
        H = self.data.hessian()
        H[np.diag_indices_from(H)] += self.problem.lam
        self._H = H

    def _hv(self, v):
        """H v; a pass over the data in matvec mode."""
        prob = self.problem
        if self.explicit:
            return self._H @ v
        hv = self.data.hess_vec(v)
        self.passes += 1
        return hv / prob.W + prob.lam * v
    def _steihaug(self, g, delta, max_iter):
        """Algorithm 2: CG on H s = -g inside ||s|| <= delta, to ``cg_tol ||g||``
        (:func:`primaldual._util.cg.steihaug`, unpreconditioned, Euclidean).

        Returns (s, r, iterations) with the residual ``r = -g - H s``."""
        stop = self.cg_tol * math.sqrt(dot(g, g))
        s, r, it, _ = steihaug(self._hv, g, lambda v: v, 1.0, delta, stop, max_iter, dot)
        return s, r, it

    def _subproblem(self):
        """A step s and its model value q(s) = g^T s + s^T H s / 2."""
        g = self.g
        if self.explicit:
            self._form_hessian()
            self.passes += 1
            try:
                cf = scipy.linalg.cho_factor(self._H, lower=False, check_finite=False)
                s = scipy.linalg.cho_solve(cf, -g, check_finite=False)
                ok = bool(np.isfinite(s).all())
            except (np.linalg.LinAlgError, ValueError):
                ok = False
            if ok and math.sqrt(dot(s, s)) <= self.delta:
                q = dot(g, s) + 0.5 * dot(s, self._H @ s)
                return s, q, 0
        max_it = self.max_cg_iter or max(50, 2 * self.problem.d)
        s, r, it = self._steihaug(g, self.delta, max_it)
        # H s = -g - r, so q(s) = g^T s - s^T (g + r) / 2
        q = 0.5 * (dot(g, s) - dot(s, r))
        return s, q, it

    # ----------------------------------------------------------- iterate
    def _f_resolution(self):
        """How far rounding blurs f (:func:`f_resolution`)."""
        return f_resolution(self.f, self.problem.n)

    def _iterate(self):
        """One Newton iteration (Algorithm 1 with globalization="trust_region")."""
        prob = self.problem
        gnorm = math.sqrt(sum_squares(self.g))
        wnorm = math.sqrt(sum_squares(self.w))
        if gnorm == 0.0 or self.delta <= 1e-15 * max(wnorm, 1e-300):
            self.stall = "no_step"          # no representable progress left
            return
        s, q, it = self._subproblem()
        self.cg_iter += it
        w_new = self.w + s
        f_new, gdata_new = self._pass_fg(w_new, 1 - self.cur)
        self.passes += 1
        self.n_iter += 1
        pred = -q
        if not math.isfinite(f_new):
            rho = -math.inf
        elif pred <= self._f_resolution():
            # f no longer resolves the decrease: judge the step by ||grad f||
            g_new = gdata_new / prob.W + prob.lam * w_new
            rho = 1.0 if sum_squares(g_new) < gnorm * gnorm else -math.inf
        else:
            rho = (self.f - f_new) / pred
        if self.trust_region:
            snorm = math.sqrt(dot(s, s))
            # rule (10)
            if rho <= ETA0:
                self.delta = SIGMA1 * min(snorm, self.delta)
            elif rho <= ETA1:
                self.delta = SIGMA2 * min(snorm, self.delta)
            elif rho >= ETA2:
                self.delta = max(self.delta, min(SIGMA3 * self.delta, 4.0 * snorm))
            if rho > ETA0:                  # rule (9): accept
                self._accept(w_new, f_new, gdata_new)
        elif rho > ETA1:
            # the full step when the model predicts it well
            self._accept(w_new, f_new, gdata_new)
        else:
            self._line_search(s, w_new, f_new, gdata_new)

    def _line_search(self, s, w_new, f_new, gdata_new):
        """The minimizer of f along s (piecewise-quadratic losses whose active
        set changed), found in O(n) per evaluation from X s; accepted under
        Armijo's condition, or, where f cannot resolve the decrease, under the
        approximate Wolfe conditions (Hager & Zhang, SIAM J. Optim. 16 (2005)
        170-192, eq. 4.1: f within its rounding and the slope along s reduced
        to within [0.9 g^T s, -0.8 g^T s]), whose slopes come from the margins
        without cancellation."""
        gs = dot(self.g, s)
        if not gs < 0.0:                    # not a descent direction: nothing to search
            self.stall = "line_search"
            return
        if math.isfinite(f_new):
            t, slope = self._line_min(s)    # X s: the difference of the two slots' margins
        else:
            t, slope = 0.5, math.nan
        if t == 1.0 and f_new <= self.f + ETA0 * gs:
            self._accept(w_new, f_new, gdata_new)
            return
        for k in range(6):
            w_ls = self.w + t * s
            if np.array_equal(w_ls, self.w):
                break                       # the step no longer moves w
            f_ls, gdata_ls = self._pass_fg(w_ls, 1 - self.cur)
            self.passes += 1
            if f_ls <= self.f + ETA0 * t * gs or (
                    k == 0 and f_ls <= self.f + self._f_resolution()
                    and WOLFE_SIGMA * gs <= slope <= (2 * WOLFE_DELTA - 1) * gs):
                self._accept(w_ls, f_ls, gdata_ls)
                return
            t *= 0.5
        self.stall = "line_search"          # no decrease representable along s

    def _accept(self, w_new, f_new, gdata_new):
        """The trial point (the data's other slot) becomes the current one."""
        prob = self.problem
        self.cur = 1 - self.cur
        self.data.use(self.cur)
        self.w = w_new
        self.f = f_new
        self.gdata = gdata_new
        self.g = self.gdata / prob.W + prob.lam * self.w

    def _line_min(self, s):
        """``(t, slope at t)``: argmin over t in [0, 1] of f(w + t s) by safeguarded
        Newton on the slope, shrinking ``t`` 100-fold while no negative slope is
        known (a step from a generalized Hessian of ``lam I`` at a kink of
        unscaled data overshoots by 1e12); each slope is O(n), from the margins."""
        prob = self.problem
        W, lam = prob.W, prob.lam
        ws, ss = dot(self.w, s), dot(s, s)
        lo, hi = 0.0, 1.0
        t = 1.0
        for _ in range(LINE_MIN_STEPS):
            s1, s2 = self.data.line_derivatives(t)
            d1 = s1 / W + lam * (ws + t * ss)
            if d1 > 0.0:
                hi = t
            else:
                lo = t
                if t == 1.0:
                    return 1.0, d1
            d2 = s2 / W + lam * ss
            tn = t - d1 / d2 if d2 > 0.0 else 0.5 * (lo + hi)
            if not (lo < tn < hi):
                tn = 0.5 * (lo + hi) if lo > 0.0 else 0.01 * hi
            if abs(tn - t) <= 1e-10 * max(t, 1e-300) or hi - lo <= 1e-12 * hi:
                t = tn
                break
            t = tn
        s1, _ = self.data.line_derivatives(t)
        return t, s1 / W + lam * (ws + t * ss)

    def advance(self, n_epochs, deadline):
        if math.isnan(self.delta):
            raise FloatingPointError("newton: the trust region radius is NaN")
        target = self.passes + max(1.0, n_epochs)
        while self.passes < target - 1e-9 and not self.stall \
                and self.passes < self.max_epochs - 1e-9:
            self._iterate()
            if not np.isfinite(self.f):
                raise FloatingPointError(
                    f"newton produced a non-finite objective after {self.passes} passes; "
                    f"the data is too extreme for double precision: scale the features")
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.steps = self.n_iter
        self.feature_accesses = int(self.passes) * self.problem.nnz

    def certificate(self):
        """alpha_i = -phi'(x_i . w) at the current point, from its cached pass.

        ``P = f(w)``; ``v = (1/W) sum_i c_i alpha_i x_i = -(1/W) X^T (c phi')``
        is the data gradient of the same pass, so ``D(alpha) =
        (1/W) sum_i c_i (-phi*(-alpha_i)) - ||v||^2 / (2 lam)`` needs no pass."""
        prob = self.problem
        conj, alpha = self.data.dual()
        v = -self.gdata / prob.W
        dual = conj / prob.W - prob.penalty.conjugate(v) if math.isfinite(conj) else -np.inf
        return Certificate(w=self.w.copy(), alpha=alpha, primal=float(self.f),
                           dual=float(dual), v=v, margins=self.data.margins())

    def run(self):
        # the explicit Hessian's Cholesky (dense or sparse rows) on one BLAS thread:
        # a d = 180 factorization took 90 ms of CPU on OpenBLAS's threads, 0.2 ms on one
        if not (self.explicit and self.client is None and not self.distributed_input):
            return super().run()
        serial_blas_enter()
        try:
            return super().run()
        finally:
            serial_blas_exit()

    def result_extras(self):
        if not self.stall:
            return {}
        why = {"line_search": "the line search found no decrease along the Newton step",
               "no_step": "the gradient or the trust region vanished"}[self.stall]
        return {"stall": self.stall,
                "stall_detail": f"{why} after {self.n_iter} Newton iterations"}

    def trace_extras(self):
        out = {"newton_iter": int(self.n_iter), "cg_iter": int(self.cg_iter)}
        if self.trust_region:
            out["delta"] = float(self.delta)
        if self.n_partitions is not None:
            out["partitions"] = int(self.n_partitions)
            out["reductions"] = int(self.data.reductions)
            out.update(self.data.info())
        return out
