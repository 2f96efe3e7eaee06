"""ASDCA: accelerated proximal SDCA (Shalev-Shwartz & Zhang, "Accelerated
proximal stochastic dual coordinate ascent for regularized loss minimization",
ICML 2014 / Math. Programming 155, 2016, Procedure Accelerated Prox-SDCA).

The problem, the updates, the certificate and the options are in
:class:`ASDCASolver`'s docstring.
"""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np

from ..kernels.objective import certificate_pass
from ..kernels.sdca import prox_work_arrays
from ..kernels.sdca import (STATUS_NONFINITE, Averaging, SDCAState, Shrinking,
                            sdca_epoch)
from ._base import Solver, register
from ._options import CommonOptions


@dataclass(frozen=True)
class ASDCAOptions(CommonOptions):
    """The options of :class:`ASDCASolver`: the common ones only."""

    solver_name = "asdca"


@register
class ASDCASolver(Solver):
    """ASDCA: accelerated proximal SDCA (Shalev-Shwartz & Zhang, "Accelerated
    proximal stochastic dual coordinate ascent for regularized loss minimization",
    ICML 2014 / Math. Programming 155, 2016, Procedure Accelerated Prox-SDCA).

    Problem (docs/conventions.md §1)::

        P(w) = (1/W) sum_i c_i phi_i(x_i . w) + lam/2 ||w||^2 + l1 ||w||_1

    Outer loop (accelerated proximal point), with ``gamma = 1/smoothness``,
    ``R^2 = max_i (n c_i/W) ||x_i||^2``::

        kappa = R^2/(gamma n) - lam,  mu = lam/2,  rho = mu + kappa,
        eta = sqrt(mu/rho),  beta = (1 - eta)/(1 + eta),
        y^(1) = w^(1) = 0,  alpha^(1) = 0,  xi_1 = (1 + eta^-2)(P(0) - D(0))
        for t = 2, 3, ...
            P_t(w) = P(w) + kappa/2 ||w - y^(t-1)||^2
            (w^(t), alpha^(t)) = Prox-SDCA(P_t, eps_t = eta/(2(1 + eta^-2)) xi_{t-1},
                                           warm start alpha^(t-1))
            y^(t) = w^(t) + beta (w^(t) - w^(t-1)),   xi_t = (1 - eta/2) xi_{t-1}

    The inner problem has the penalty ``(lam + kappa)/2 ||w||^2 + l1 ||w||_1 -
    kappa <y, w>`` (+ const), whose conjugate is ``g'*(v + kappa y) - kappa/2
    ||y||^2`` with ``g'`` the elastic net of strength ``lam + kappa``; its
    primal point is ``w(alpha) = S(v + kappa y, l1)/(lam + kappa)``.  The inner
    solver is SDCA (``l1 = 0``, :func:`kernels.sdca.sdca_epoch`) or the exact
    elastic-net Prox-SDCA step (:mod:`kernels.sdca.prox`) run on the shifted
    image ``v + kappa y``, in passes over random permutations; after each inner
    pass the exact inner duality gap is computed and compared with ``eps_t``.

    The acceleration needs ``lam <= R^2/(10 gamma n)`` (the paper's condition,
    quoted by Zhang & Xiao as ``lam <= R^2/(10 n)``); when it fails a
    ``UserWarning`` says so and the method runs with
    ``kappa = max(R^2/(gamma n) - lam, 0)`` (``kappa = 0`` is plain Prox-SDCA).

    Passes: inner coordinate updates / n (the inner gap checks are counted in
    ``feature_accesses`` only).  Certificate: the current inner primal point
    ``w`` with ``alpha_i = -phi'(x_i . w)`` (exact for the original problem); the
    objective may rise at the start of an outer iteration, as the paper notes.

    Options: none beyond the common ones (:class:`ASDCAOptions`).
    """

    #: a dual method returns its own iterate, coef = w(dual_coef) (GUIDE §1)
    mixes_best_pair = False
    name = "asdca"
    summary = "accelerated prox-SDCA (Shalev-Shwartz & Zhang 2014)"
    requires = ("smooth",)
    options_class = ASDCAOptions
    supports_l1 = True

    def _R2(self):
        prob = self.problem
        return float((prob.n * prob.sample_weight / prob.W * prob.rows.sqnorm).max())

    def validate_options(self):
        R2 = self._R2()
        if not math.isfinite(R2):
            raise ValueError(f"the largest (weighted) squared row norm is {R2}; ASDCA's "
                             f"kappa is not representable: scale the rows (e.g. --normalize)")

    def setup(self):
        prob = self.problem
        gamma = 1.0 / prob.loss.smoothness
        R2 = self._R2()
        bound = R2 / (10.0 * gamma * prob.n)
        self.condition_holds = prob.lam <= bound
        if not self.condition_holds:
            warnings.warn(
                f"ASDCA's acceleration condition lam <= R^2/(10 gamma n) = {bound:.3g} "
                f"fails for lam={prob.lam:.3g} (Shalev-Shwartz & Zhang 2014); the problem "
                f"is well conditioned and plain Prox-SDCA is already fast. Running with "
                f"kappa = max(R^2/(gamma n) - lam, 0) = "
                f"{max(R2 / (gamma * prob.n) - prob.lam, 0.0):.3g}", UserWarning, stacklevel=2)
        self.kappa = max(R2 / (gamma * prob.n) - prob.lam, 0.0)
        mu = prob.lam / 2.0
        self.eta = math.sqrt(mu / (mu + self.kappa))
        self.beta = (1.0 - self.eta) / (1.0 + self.eta)
        self.lam_in = prob.lam + self.kappa

    def init_state(self, warm_start):
        prob = self.problem
        if warm_start is not None:
            raise ValueError("solver='asdca' starts from 0 as the paper's procedure does; "
                             "warm_start is not supported")
        P0 = float(prob.sample_weight @ prob.loss.value(np.zeros(prob.n), prob.y)) / prob.W
        self.alpha = np.zeros(prob.n)
        self.vs = np.zeros(prob.d)           # v + kappa y
        self.y = np.zeros(prob.d)
        self.w_prev = np.zeros(prob.d)       # w^(t-1)
        self.xi = (1.0 + self.eta ** -2) * P0       # D(0) = 0
        self.eps = self.eta / (2.0 * (1.0 + self.eta ** -2)) * self.xi
        self.outer = 1
        self.inner_gap = np.inf
        self._scratch()

    def _scratch(self):
        prob = self.problem
        self.work = prox_work_arrays(prob.rows, prob.l1)

    def get_state(self):
        meta = {"xi": self.xi, "eps": self.eps, "outer": int(self.outer),
                "inner_gap": None if not np.isfinite(self.inner_gap) else self.inner_gap}
        return meta, {"alpha": self.alpha.copy(), "vs": self.vs.copy(),
                      "y": self.y.copy(), "w_prev": self.w_prev.copy()}

    def set_state(self, meta, arrays):
        for k in ("alpha", "vs", "y", "w_prev"):
            setattr(self, k, np.array(arrays[k], dtype=np.float64))
        self.xi = float(meta["xi"])
        self.eps = float(meta["eps"])
        self.outer = int(meta["outer"])
        ig = meta["inner_gap"]
        self.inner_gap = np.inf if ig is None else float(ig)
        self._scratch()

    # ------------------------------------------------------------ helpers
    def inner_w(self):
        prob = self.problem
        if prob.l1 > 0:
            return np.sign(self.vs) * np.maximum(np.abs(self.vs) - prob.l1, 0.0) / self.lam_in
        return self.vs / self.lam_in

    def _inner_gap(self):
        """Exact duality gap of P_t at (w(alpha), alpha); re-syncs vs."""
        prob = self.problem
        r = prob.rows
        w = self.inner_w()
        v = np.empty(prob.d)
        margins = np.empty(prob.n)
        loss_sum, conj_sum = certificate_pass(
            r.data, r.indices, r.indptr, r.iptr, prob.y, prob.sample_weight, self.alpha, w,
            prob.loss.code, prob.loss.param, v, margins)
        self.feature_accesses += 2 * prob.nnz
        v /= prob.W
        self.vs = v + self.kappa * self.y
        w = self.inner_w()
        primal = (loss_sum / prob.W + prob.penalty.value(w)
                  + 0.5 * self.kappa * float((w - self.y) @ (w - self.y)))
        rr = np.maximum(np.abs(self.vs) - prob.l1, 0.0)
        hstar = float(rr @ rr) / (2.0 * self.lam_in) - 0.5 * self.kappa * float(self.y @ self.y)
        return primal - (conj_sum / prob.W - hstar)

    def advance(self, n_epochs, deadline):
        prob = self.problem
        passes = max(1, int(round(n_epochs)))
        rows, spec = prob.rows_view(), prob.step_spec(lam=self.lam_in)
        no_shrink = Shrinking(False, np.inf, np.inf)
        no_avg = Averaging(False, np.zeros(0), np.zeros(0, dtype=np.int64), 0)
        no_logit, no_shrunk = np.zeros(0), np.zeros(0, dtype=np.uint8)
        for _ in range(passes):
            # the inner problem's iterates (vs is replaced by each inner-gap check)
            state = SDCAState(self.alpha, self.vs, no_logit, no_shrunk)
            order = self.rng.permutation(prob.n).astype(np.int64, copy=False)
            status, pos, t, acc, _, _ = sdca_epoch(
                rows, spec, state, order, 0, prob.n, self.steps, -1, no_shrink, no_avg,
                self.work)
            self.feature_accesses += acc
            self.steps += prob.n
            if status == STATUS_NONFINITE:
                raise FloatingPointError(f"non-finite value in ASDCA's inner SDCA at "
                                         f"sample {int(order[pos])}")
            self.inner_gap = self._inner_gap()
            if self.inner_gap <= self.eps:
                # outer step: y^(t) = w^(t) + beta (w^(t) - w^(t-1))
                w = self.inner_w()
                y_new = w + self.beta * (w - self.w_prev)
                self.vs += self.kappa * (y_new - self.y)
                self.y = y_new
                self.w_prev = w
                self.xi *= (1.0 - self.eta / 2.0)
                self.eps = self.eta / (2.0 * (1.0 + self.eta ** -2)) * self.xi
                self.outer += 1
            if deadline is not None and time.perf_counter() >= deadline:
                break

    def certificate(self):
        prob = self.problem
        w = self.inner_w()
        return prob.primal_certificate(w)

    def trace_extras(self):
        return {"outer": int(self.outer), "inner_gap": float(self.inner_gap)}
