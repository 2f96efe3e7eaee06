"""SVM-SIMBA: sublinear-time SVM training (Hazan, Koren & Srebro, "Beating SGD:
Learning SVMs in Sublinear Time", NIPS 2011).

The problem, the updates, the certificate and the options are in
:class:`SimbaSolver`'s docstring.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..kernels import simba as K
from ..kernels.sampling_trees import min_tree_build, sum_tree_build, tree_size
from ..problem import Problem
from ._base import Solver, register
from ._options import CommonOptions, choice, flag, number
from .sdca import SDCASolver

__all__ = ["SimbaSolver", "nu_from_lam_solution"]

_UNIFORM_CHUNK = 4096
_SCHEDULES = {"constant": K.SCHED_CONSTANT, "adaptive": K.SCHED_ADAPTIVE,
              "adaptive_sqrt": K.SCHED_ADAPTIVE_SQRT}


def nu_from_lam_solution(w, X, y, b=0.0):
    """Lemma 2.1's ``nu = R_hinge(w, b) / ||w||`` for a solution ``w`` (and bias ``b``).

    ``R_hinge(w, b) = (1/n) sum_i max(0, 1 - y_i (x_i . w + b))``.  Problem (3)
    with this ``nu`` has value at least ``1/||w||`` and, rescaled by its value,
    its solution is no worse than ``(w, b)`` in both norm and hinge loss.

    Parameters
    ----------
    w : array (d,)  a nonzero weight vector (e.g. the hinge-SVM solution for some lam)
    X : array (n, d) or sparse matrix
    y : array (n,)  labels in {-1, +1}
    b : float       the bias (0 without one)
    """
    w = np.asarray(w, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    norm = float(np.linalg.norm(w))
    if norm == 0.0:
        raise ValueError("nu_from_lam_solution needs w != 0 (Lemma 2.1); the lam "
                         "solution is zero, so lam is too large for any margin")
    if X.shape[1] != w.shape[0] or X.shape[0] != y.shape[0]:
        raise ValueError(f"shapes do not match: X {X.shape}, w {w.shape}, y {y.shape}")
    margins = y * (np.asarray(X @ w, dtype=np.float64).ravel() + b)
    r_hinge = float(np.mean(np.maximum(0.0, 1.0 - margins)))
    return r_hinge / norm


def _column_view(rows):
    """Columns in the same four-array layout as the rows (CSC copy built once)."""
    X = rows.X
    n, d = rows.n, rows.d
    if sp.issparse(X):
        Xc = X.tocsc()
        return K.ColumnsView(Xc.data, Xc.indices, Xc.indptr, Xc.indptr)
    XT = np.ascontiguousarray(X.T)
    cdata = XT.reshape(-1)
    cindices = np.arange(n, dtype=np.int64)
    cindptr = np.arange(0, n * d + 1, n, dtype=np.int64)
    return K.ColumnsView(cdata, cindices, cindptr, np.zeros(d + 1, dtype=np.int64))


@dataclass(frozen=True)
class SimbaOptions(CommonOptions):
    """The options of :class:`SimbaSolver` (documented in its docstring)."""

    solver_name = "simba"
    nu: float | None = number(None, low=0.0, strict=False, high=1.0, also=(None,),
                              doc="the slack budget of (3); None: derived from lam")
    epsilon: float | None = number(None, low=0.0, also=(None,),
                                   doc="Algorithm 1's accuracy")
    T: int | None = number(None, integer=True, low=0.0, also=(None,),
                           doc="the number of iterations (overrides epsilon)")
    schedule: str = choice("adaptive_sqrt", *_SCHEDULES,
                           doc="step schedule: any-time sqrt(log n / t), the paper's "
                               "constant, or Section 6's adaptive")
    bias: bool = flag(False, doc="also learn the offset b (the joint step of Section 4)")
    implementation: str = choice("auto", "auto", "dense", "sparse",
                                 doc="Algorithm 1 as written, or sampling trees and lazy "
                                     "updates; auto: sparse for CSR")
    rescale: bool = flag(True, doc="rescale the output by 1/gamma (Lemma 2.1)")
    record_draws: int = number(0, integer=True, low=0.0, strict=False,
                               doc="diagnostics: keep the first draws (i_t, j_t) in "
                                   "res.extras")


@register
class SimbaSolver(Solver):
    """SVM-SIMBA: sublinear-time SVM training (Hazan, Koren & Srebro, "Beating SGD:
    Learning SVMs in Sublinear Time", NIPS 2011).

    Problem solved: the nu-formulation (3) of the hinge-loss SVM, with rows
    ``||x_i|| <= 1`` and ``0 <= nu <= 1``::

        max_{w, b, xi}  min_i  y_i (x_i . w + b) + xi_i
        s.t.  ||w|| <= 1,   0 <= xi_i <= 2,   sum_i xi_i <= nu n,   (b in [-1, 1] with bias=True)

    written as the saddle point ``max_{w,b,xi} min_{p in simplex} p . (Y X w + xi + b y)``.
    By Lemma 2.1, a solution with value ``gamma`` rescaled to ``w~ = w / gamma``,
    ``b~ = b / gamma`` is a Pareto point of (||w||, R_hinge), i.e. the solution of
    the hinge SVM ``P(w) = (1/n) sum_i max(0, 1 - y_i x_i . w) + lam/2 ||w||^2``
    for the ``lam`` whose solution has ``R_hinge(w)/||w|| = nu``
    (:func:`nu_from_lam_solution`).

    Update (Algorithm 1, one iteration; labels folded into the rows)::

        i_t ~ p_t;                   u_t = u_{t-1} + c_t y_{i_t} x_{i_t}
        xi_t = argmax_{xi in Xi_nu} p_t . xi   (2 on the largest p_t(i) until mass nu n;
                                                O(n) selection, no sort)
        b_t = sign(p_t . y)          (bias=True; otherwise b_t = 0)
        w_t = u_t / max(1, ||u_t||); j_t ~ w_t(j)^2 / ||w_t||^2        (l2-sampling)
        v~_t(i) = y_i x_i(j_t) ||w_t||^2 / w_t(j_t) + xi_t(i) + y_i b_t
        q_{t+1}(i) = q_t(i) (1 - eta v_t(i) + eta^2 v_t(i)^2),  v_t = clip(v~_t, 1/eta),
        p_{t+1} = q_{t+1} / ||q_{t+1}||_1                        (Variance MW, Def. 4.1)

    and returns the averages ``w_bar = (1/T) sum_t w_t``, ``xi_bar``, ``b_bar``.
    ``T = 100^2 eps^-2 log n``, ``eta = sqrt(log(n)/T)``, ``c = 1/sqrt(2T)``
    (Algorithm 1, line 2) or the practical steps of Section 6.

    Output and certificate: with ``gamma = min_i y_i (x_i . w_bar + b_bar) + xi_bar_i``
    (the value of (3) at the average) and ``gamma > 0``, ``coef = w_bar / gamma``
    and the intercept ``b_bar / gamma`` (Lemma 2.1; with ``rescale=False`` or
    ``gamma <= 0`` the average itself).  SIMBA is a primal method for the
    ``lam`` problem: ``dual_coef = -phi'(x_i . coef)`` and primal, dual and gap
    are exact for ``coef`` in the objective of docs/conventions.md §1 with the ``lam`` given (which has
    no unregularized bias: with ``bias=True`` the intercept is reported in
    ``res.extras["intercept"]`` and used for ``test_error``, but not in the
    certificate).

    Cost: each iteration reads the row ``x_{i_t}`` and column ``j_t`` (``n + d``
    features on dense data); ``res.feature_accesses`` counts these single-feature
    reads and an epoch is ``feature_accesses / nnz``.

    Options
    -------
    The fields of :class:`SimbaOptions`, checked when it is built (a bad value is a
    ValueError naming the option); ``solver.opts`` holds them as given.

    nu : float in [0, 1] or None, default None
        The slack budget of (3).  None derives it from ``lam``: the ``lam`` problem
        is solved by SDCA (relative gap 1e-4) and ``nu = R_hinge(w)/||w||``
        (:func:`nu_from_lam_solution`); the feature accesses of that solve are
        not counted (``res.extras["nu_presolve_epochs"]`` reports them).
    epsilon : float or None
        Algorithm 1's accuracy: ``T = ceil(100^2 eps^-2 log n)``.
    T : int or None
        The number of iterations directly (overrides ``epsilon``).  With neither,
        the constant schedule takes ``T`` from the budget: ``max_epochs * nnz``
        feature accesses at ``nnz/n + nnz/d`` per iteration.  The run stops at
        ``T`` iterations (``stop_reason="max_iter"``) or at ``max_epochs``.
    schedule : "adaptive_sqrt" | "constant" | "adaptive", default "adaptive_sqrt"
        "adaptive_sqrt" (the default) uses ``eta_t = sqrt(log(n)/t)`` (the any-time
        form of ``eta = sqrt(log(n)/T)``) and the primal step ``1/sqrt(2t)``; it
        needs no ``T`` and was the best of the three schedules on every set tried
        (docs/reproducing-simba.md).  "constant" is the paper's Algorithm 1:
        ``eta = sqrt(log(n)/T)`` and ``c = 1/sqrt(2T)`` for the whole run; when the
        budget allows only a few iterations, its steps are tiny and the average
        learns little.  "adaptive" is Section 6 as printed: ``eta_t = sqrt(log n)/t``
        and the primal step ``1/sqrt(2t)``.

    Budget warning: Algorithm 1's guarantee (Theorem 3.1) needs
    ``T = 100^2 eps^-2 log n`` iterations for accuracy ``eps``.  The accuracy
    aimed at is ``epsilon`` when given (any schedule).  Without ``epsilon``, the
    constant schedule (whose steps come from ``T``) aims at the margin
    ``1/||w_lam||`` that Lemma 2.1 guarantees when ``nu`` is derived from
    ``lam``, and otherwise at ``1 + nu``, an upper bound on the value of (3)
    (below which the guarantee says nothing).  When the budget (``max_epochs * nnz``
    feature accesses at an expected ``nnz/n + nnz/d`` per iteration, at most
    ``T``) allows fewer iterations, a ``RuntimeWarning`` gives both
    numbers and the accuracy the budget does guarantee.  The any-time schedules
    without ``epsilon`` do not warn.

    Feature accesses, two accountings: ``res.feature_accesses`` counts the
    nonzeros actually read (``nnz(x_{i_t}) + nnz(column j_t)`` per iteration);
    ``res.extras["dense_feature_accesses"]`` is the paper's dense model, in which
    reading a row costs ``d`` and reading a column costs ``n`` (``T (n + d)``).
    bias : bool, default False
        The joint (xi_t, b_t) step with ``b_t = sign(p_t . y)`` (Section 4).
    implementation : "auto" | "dense" | "sparse", default "auto"
        "dense" is Algorithm 1 as written (O(n + d) per iteration); "sparse" uses
        sampling trees and lazy updates (O((nnz(x_i) + nnz(col_j)) log n) per
        iteration plus swaps of the slack set).  "auto": sparse for CSR input.
    rescale : bool, default True
        Lemma 2.1's rescaling of the output by ``1/gamma``.
    record_draws : int, default 0
        Diagnostics: keep the first ``record_draws`` pairs ``(i_t, j_t)`` in
        ``res.extras["draws_i"]`` / ``["draws_j"]`` (used by the tests).

    Only ``loss="hinge"`` is supported, without sample weights or ``l1``;
    warm starts are not supported (resume from a checkpoint instead).
    """
    name = "simba"
    summary = "SVM-SIMBA, sublinear-time SVM training (Hazan, Koren & Srebro 2011)"
    requires = ("classification",)
    options_class = SimbaOptions
    supports_l1 = False

    # ------------------------------------------------------------ options
    def validate_options(self):
        prob = self.problem
        if prob.loss.name != "hinge":
            raise ValueError(f"solver='simba' supports only loss='hinge' (the nu-formulation "
                             f"(3) of Hazan, Koren & Srebro is the hinge SVM); got "
                             f"loss={prob.loss.name!r}")
        if not np.all(prob.sample_weight == prob.sample_weight[0]):
            raise ValueError("solver='simba' does not support sample weights: formulation "
                             "(3) weighs every point alike; drop sample_weight or use sdca")
        if prob.n < 2:
            raise ValueError(f"solver='simba' needs at least 2 samples (eta uses log n), "
                             f"got n={prob.n}")
        if prob.nnz == 0:
            raise ValueError("X has no nonzero entries; SIMBA has nothing to learn from")
        rmax = float(prob.rows.sqnorm.max())
        if rmax > 1.0 + 1e-9:
            raise ValueError(f"solver='simba' needs rows with ||x_i|| <= 1 (Algorithm 1's "
                             f"input); the largest row norm is {math.sqrt(rmax):.6g}. "
                             f"Scale the rows (e.g. --normalize, or divide X by its "
                             f"largest row norm)")
        if self.warm_start is not None:
            raise ValueError("solver='simba' does not take warm_start (its state is the "
                             "dual distribution and running averages); use resume=")

    def setup(self):
        prob = self.problem
        o = self.opts
        self.record_n = o.record_draws
        eps, T = o.epsilon, o.T
        if T is None and eps is not None:
            T = int(math.ceil(100.0 ** 2 / eps ** 2 * math.log(prob.n)))
        if T is None and o.schedule == "constant":
            per_iter = prob.nnz / prob.n + prob.nnz / prob.d
            T = max(1, int(self.max_epochs * prob.nnz / per_iter))
        self.T_total = T          # None: adaptive steps without an iteration limit
        self.eps_target = eps
        impl = o.implementation
        if impl == "auto":
            impl = "sparse" if prob.rows.is_sparse else "dense"
        self.impl = impl
        self.schedule_code = _SCHEDULES[o.schedule]

    def budget_iterations(self):
        """Iterations the budget allows: ``max_epochs * nnz`` feature accesses at
        the expected ``nnz/n + nnz/d`` per iteration, at most ``T`` if set."""
        prob = self.problem
        it = max(1, int(min(self.max_epochs * prob.nnz / (prob.nnz / prob.n + prob.nnz / prob.d),
                            np.iinfo(np.int64).max // 2)))
        if self.T_total is not None:
            it = min(it, int(self.T_total))
        return it

    def _budget_warning(self):
        """Warn when the budget allows fewer iterations than Theorem 3.1's T."""
        import warnings
        prob = self.problem
        eps, what = self.eps_target, "epsilon"
        if eps is None:
            if self.opts.schedule != "constant":
                return       # the any-time schedules take no T from the theory
            if self.margin_lb is not None:
                eps, what = self.margin_lb, "the margin 1/||w_lam|| of Lemma 2.1"
            else:
                eps, what = 1.0 + self.nu, "1 + nu, the largest value of (3)"
        logn = math.log(prob.n)
        T_theory = int(math.ceil(100.0 ** 2 / eps ** 2 * logn))
        T_budget = self.budget_iterations()
        if T_budget < T_theory:
            eps_budget = 100.0 * math.sqrt(logn / T_budget)
            warnings.warn(
                f"SIMBA: the budget allows {T_budget:,} iterations, fewer than Algorithm "
                f"1's T = 100^2 eps^-2 log n = {T_theory:,} for eps = {eps:.4g} ({what}); "
                f"with {T_budget:,} iterations the theory guarantees only eps = "
                f"{eps_budget:.4g}. Raise max_epochs (or T) for the guarantee",
                RuntimeWarning, stacklevel=4)

    def _derive_nu(self):
        """nu from lam (Lemma 2.1) through an SDCA solution of the lam problem."""
        prob = self.problem
        lam_problem = Problem(prob.X, prob.y, loss="hinge", lam=prob.lam)
        res = SDCASolver(lam_problem, tol=1e-4, max_epochs=1000, random_state=0).run()
        nu = nu_from_lam_solution(res.coef, prob.X, prob.y)
        self.margin_lb = 1.0 / float(np.linalg.norm(res.coef))
        if nu > 1.0:
            raise ValueError(f"lam={prob.lam!r} gives nu = R_hinge(w)/||w|| = {nu:.4g} > 1 "
                             f"(||w|| = {np.linalg.norm(res.coef):.3g} is too small for "
                             f"formulation (3)); pass nu in [0, 1] or a smaller lam")
        return nu, float(res.n_epochs)

    # -------------------------------------------------------------- state
    @property
    def epochs(self) -> float:
        """Passes over the data in SIMBA's cost model: feature_accesses / nnz."""
        return self.feature_accesses / self.problem.nnz

    def init_state(self, warm_start):
        prob = self.problem
        n, d = prob.n, prob.d
        self.margin_lb = None
        if self.opts.nu is None:
            self.nu, self.nu_presolve_epochs = self._derive_nu()
        else:
            self.nu, self.nu_presolve_epochs = float(self.opts.nu), 0.0
        self._budget_warning()
        self._setup_views()
        self.t = 0
        self.swaps = 0
        self.uniforms = np.zeros((0, 2))
        self.upos = 0
        self.u = np.zeros(d)
        k = int(math.floor(self.nu * n / 2.0))
        if self.impl == "dense":
            self.logq = np.zeros(n)
            self.wsum = np.zeros(d)
            self.xisum = np.zeros(n)
            self.scal = np.zeros(1)           # sum_t b_t
        else:
            self.logbase = np.zeros(n)
            self.group = (2 * (np.arange(n) < k) + (prob.y > 0)).astype(np.int64)
            self.cnt = np.bincount(self.group, minlength=4).astype(np.int64)
            self.L = np.zeros(4)
            self.ref = np.zeros(4)
            self.acc = np.zeros(d)
            self.lastS = np.zeros(d)
            self.xi_acc = np.zeros(n)
            self.enter = np.where(np.arange(n) < k, 1, 0).astype(np.int64)
            self.scal = np.zeros(2)           # S = sum_t s_t, sum_t b_t
            self._build_trees()
        self.rec_i = np.full(self.record_n, -1, dtype=np.int64)
        self.rec_j = np.full(self.record_n, -1, dtype=np.int64)

    def _setup_views(self):
        self.cols = _column_view(self.problem.rows)
        n = self.problem.n
        if self.impl == "dense":
            self.idx = np.zeros(n, dtype=np.int64)
            self.xi_buf = np.zeros(n)
            self.buf = np.zeros(n)

    def _build_trees(self):
        """The sampling trees from (logbase, group, ref, u): exact, since every
        internal node is a deterministic function of the leaves."""
        n, d = self.problem.n, self.problem.d
        sn, sd = tree_size(n), tree_size(d)
        self.SUM = np.zeros((4, 2 * sn))
        self.KEY = np.zeros((4, 2 * sn))
        for g in range(4):
            member = self.group == g
            vals = np.where(member, np.exp(self.logbase - self.ref[g]), 0.0)
            sum_tree_build(self.SUM[g], vals)
            keys = self.logbase if g >= 2 else -self.logbase
            min_tree_build(self.KEY[g], np.ascontiguousarray(keys), member)
        self.CT = np.zeros(2 * sd)
        sum_tree_build(self.CT, self.u * self.u)

    _DENSE_ARRAYS = ("logq", "u", "wsum", "xisum", "scal")
    _SPARSE_ARRAYS = ("logbase", "group", "cnt", "L", "ref", "SUM", "KEY", "CT", "u",
                      "acc", "lastS", "xi_acc", "enter", "scal")

    def _state_names(self):
        return self._DENSE_ARRAYS if self.impl == "dense" else self._SPARSE_ARRAYS

    def get_state(self):
        meta = {"t": int(self.t), "upos": int(self.upos), "nu": float(self.nu),
                "T_total": self.T_total, "impl": self.impl, "swaps": int(self.swaps),
                "nu_presolve_epochs": float(self.nu_presolve_epochs)}
        arrays = {k: np.array(getattr(self, k)) for k in self._state_names()}
        arrays["uniforms"] = np.array(self.uniforms)
        arrays["rec_i"] = np.array(self.rec_i)
        arrays["rec_j"] = np.array(self.rec_j)
        return meta, arrays

    def set_state(self, meta, arrays):
        if meta["impl"] != self.impl:
            raise ValueError(f"the checkpoint used implementation={meta['impl']!r}; "
                             f"resume with the same implementation")
        self.t = int(meta["t"])
        self.upos = int(meta["upos"])
        self.nu = float(meta["nu"])
        self.T_total = meta["T_total"]
        self.swaps = int(meta["swaps"])
        self.nu_presolve_epochs = float(meta["nu_presolve_epochs"])
        self._setup_views()
        for k in self._state_names():
            setattr(self, k, np.array(arrays[k]))
        self.uniforms = np.array(arrays["uniforms"], dtype=np.float64).reshape(-1, 2)
        self.rec_i = np.array(arrays["rec_i"], dtype=np.int64)
        self.rec_j = np.array(arrays["rec_j"], dtype=np.int64)

    # --------------------------------------------------------------- loop
    def _stop_reason(self, rec, elapsed):
        stop = super()._stop_reason(rec, elapsed)
        if not stop and self.T_total is not None and self.t >= self.T_total:
            stop = "max_iter"
        return stop

    def advance(self, n_epochs, deadline):
        prob = self.problem
        ce = self.check_every
        # checks fall on a fixed grid of epochs, so that a resumed run makes
        # exactly the same kernel calls as an uninterrupted one
        grid = (math.floor(self.epochs / ce + 1e-9) + 1) * ce
        target = min(self.max_epochs, grid)
        target_acc = int(math.ceil(target * prob.nnz))
        max_t = self.T_total if self.T_total is not None else np.iinfo(np.int64).max
        T = float(self.T_total) if self.T_total is not None else 1.0
        logn = math.log(prob.n)
        nu_n = self.nu * prob.n
        rows = prob.rows_view()
        spec = K.SimbaSpec(T, int(self.schedule_code), logn, nu_n, bool(self.opts.bias))
        if self.impl == "dense":
            state = K.DenseState(self.logq, self.u, self.wsum, self.xisum, self.scal)
            work = K.DenseWork(self.idx, self.xi_buf, self.buf)
        else:
            state = K.SparseState(self.logbase, self.group, self.cnt, self.L, self.ref,
                                  self.SUM, self.KEY, self.CT, self.u, self.acc, self.lastS,
                                  self.xi_acc, self.enter, self.scal)
        while self.feature_accesses < target_acc and self.t < max_t:
            if self.upos >= self.uniforms.shape[0]:
                self.uniforms = self.rng.random((_UNIFORM_CHUNK, 2))
                self.upos = 0
            budget = target_acc - self.feature_accesses
            run = K.SimbaRun(self.uniforms, int(self.upos), int(self.t), int(budget),
                             int(max_t), self.rec_i, self.rec_j)
            if self.impl == "dense":
                res = K.simba_dense_run(rows, self.cols, spec, state, work, run)
            else:
                res = K.simba_sparse_run(rows, self.cols, spec, state, run)
                self.swaps += res.swaps
            status, self.upos, self.t, acc = res.status, res.upos, res.t, res.accesses
            self.feature_accesses += acc
            self.steps = self.t
            if status == K.STATUS_NONFINITE:
                raise FloatingPointError(f"SIMBA produced a non-finite value at iteration "
                                         f"{self.t}; check the data for extreme values")
            if deadline is not None and time.perf_counter() >= deadline:
                break

    # -------------------------------------------------------- the output
    def averages(self):
        """(w_bar, xi_bar, b_bar): the averaged output of Algorithm 1 (line 15)."""
        t = max(self.t, 1)
        if self.impl == "dense":
            return self.wsum / t, self.xisum / t, float(self.scal[0]) / t
        S = self.scal[0]
        wsum = self.acc + self.u * (S - self.lastS)
        xisum = self.xi_acc.copy()
        slack = self.group >= 2
        xisum[slack] += 2.0 * (self.t + 1 - self.enter[slack])
        if self.t == 0:
            xisum[:] = 0.0
        return wsum / t, xisum / t, float(self.scal[1]) / t

    def certificate(self):
        prob = self.problem
        wbar, xibar, bbar = self.averages()
        gamma = float(np.min(prob.y * (prob.rows.matvec(wbar) + bbar) + xibar))
        rescaled = bool(self.opts.rescale) and gamma > 0.0 and self.t > 0
        scale = 1.0 / gamma if rescaled else 1.0
        w = wbar * scale
        self._out = {"gamma": gamma, "intercept": bbar * scale, "rescaled": rescaled}
        return prob.primal_certificate(w)

    def trace_extras(self):
        return {"iterations": int(self.t), "gamma": self._out["gamma"],
                "intercept": self._out["intercept"], "nu": float(self.nu),
                "swaps": int(self.swaps)}

    def _evaluate(self, w):
        if self.eval_set is None:
            return {}
        Xt, yt = self.eval_set
        score = np.asarray(Xt @ w, dtype=np.float64).ravel() + self._out["intercept"]
        pred = np.where(score > 0, 1.0, -1.0)
        return {"test_error": float(np.mean(pred != yt))}

    def run(self):
        prob = self.problem
        res = super().run()
        res.extras.update({"nu": float(self.nu), "intercept": self._out["intercept"],
                           "gamma": self._out["gamma"], "rescaled": self._out["rescaled"],
                           "iterations": int(self.t), "T": self.T_total,
                           "dense_feature_accesses": int(self.t) * (prob.n + prob.d),
                           "implementation": self.impl, "swaps": int(self.swaps),
                           "nu_presolve_epochs": float(self.nu_presolve_epochs)})
        if self.record_n:
            res.extras["draws_i"] = self.rec_i.copy()
            res.extras["draws_j"] = self.rec_j.copy()
        return res
