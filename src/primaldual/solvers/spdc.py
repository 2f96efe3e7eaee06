"""SPDC: stochastic primal-dual coordinate method (Zhang & Xiao, ICML 2015).

The problem, the updates, the certificate and the options are in
:class:`SPDCSolver`'s docstring.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ..kernels.spdc import (SPDCSampling, SPDCSpec, SPDCState, SPDCWork, build_alias,
                            catch_up_all, expm1_table, spdc_run)
from ..kernels.status import STATUS_NONFINITE
from ._base import Solver, SolveResult, register
from ._options import CommonOptions, choice, number


@dataclass(frozen=True)
class SPDCOptions(CommonOptions):
    """The options of :class:`SPDCSolver` (documented in its docstring)."""

    solver_name = "spdc"
    batch_size: int = number(1, integer=True, low=0.0, doc="the mini-batch size m")
    sampling: str = choice("uniform", "uniform", "weighted",
                           doc="rows drawn uniformly (Algorithm 1) or by norm (Algorithm "
                               "2, batch_size=1)")
    tau: float | None = number(None, low=0.0, also=(None,),
                              doc="primal step size; None: the theorem's value")
    sigma: float | None = number(None, low=0.0, also=(None,),
                                doc="dual step size; None: the theorem's value")
    theta: float | None = number(None, low=0.0, high=1.0, also=(None,),
                                doc="extrapolation parameter; None: the theorem's value")
    perturbation: str | float = number("auto", low=0.0, strict=False, also=("auto",),
                                       doc="delta of Section 3.1, added strong convexity; auto: 0 "
                                           "when none is needed")
    target_accuracy: float | None = number(None, low=0.0, also=(None,),
                                          doc="eps for perturbation=auto; None: tol * P(0)")

    def check(self):
        if self.sampling == "weighted" and self.batch_size != 1:
            raise ValueError("sampling='weighted' is Algorithm 2 of Zhang & Xiao, stated "
                             "for batch_size=1; use batch_size=1 or sampling='uniform'")


@register
class SPDCSolver(Solver):
    """SPDC: stochastic primal-dual coordinate method (Zhang & Xiao, ICML 2015).

    Problem (docs/conventions.md §1, weights ``c_i``, ``W = sum_i c_i``)::

        primal  P(w)     = (1/W) sum_i c_i phi_i(x_i . w) + lam/2 ||w||^2 + l1 ||w||_1
        dual    D(alpha) = (1/W) sum_i c_i (-phi_i*(-alpha_i)) - g*(v),
                v = (1/W) sum_i c_i alpha_i x_i

    solved through the saddle function (4) of the paper,
    ``f(w, y) = (1/n) sum_i (y_i <x_i, w> - psi_i*(y_i)) + g(w)`` with
    ``psi_i = (n c_i / W) phi_i`` and ``y_i = -(n c_i/W) alpha_i``.

    Updates (Algorithm 1, mini-batch ``m = batch_size``): draw ``K``, ``|K| = m``,
    ``P(i in K) = m/n``; for ``k in K``

        (5) ytilde_k <- argmax_b b <x_k, wbar> - phi_k*(b) - rho_k (b - ytilde_k)^2/(2 sigma)
        (6) w <- argmin_w g(w) + <u + (1/m) sum_K rho_k dytilde_k x_k, w> + ||w - w_old||^2/(2 tau)
        (7) u <- u + (1/n) sum_K rho_k dytilde_k x_k
        (8) wbar <- w + theta (w - w_old)

    with ``ytilde = -alpha``, ``u = -v`` and ``rho_k = n c_k / W`` (1 without
    weights).  Algorithm 2 (``sampling="weighted"``, m = 1) draws ``k`` with
    ``p_k = 1/(2n) + ||x_k|| / (2 sum_i ||x_i||)`` (alias table, O(1) per draw),
    uses ``p_k n rho_k / (2 sigma)`` in (12) and ``rho_k dytilde_k x_k/(p_k n)`` in
    (13).  Closed forms of (5) for every loss, the coordinate-wise primal step
    (14)/(16) and the O(1) lazy catch-up of Section 4 (L2: after (15); L1+L2:
    derived in :mod:`primaldual.kernels.spdc` and docs/reproducing-spdc.md) make
    each iteration cost O(nnz of the sampled rows).

    Parameters (defaults).  ``gamma = 1/smoothness`` of the loss divided by
    ``max_i rho_i``, ``lam`` the L2 strength, ``R = max_i ||x_i||``:
    Theorem 1 (10) ``tau = sqrt(m gamma/(n lam))/(2R)``,
    ``sigma = sqrt(n lam/(m gamma))/(2R)``,
    ``theta = 1 - 1/(n/m + R sqrt((n/m)/(lam gamma)))``; Theorem 2 with
    ``Rbar = mean ||x_i||``: ``tau = sqrt(gamma/(n lam))/(4 Rbar)``,
    ``sigma = sqrt(n lam/gamma)/(4 Rbar)``,
    ``theta = 1 - 1/(2n + 2 Rbar sqrt(n/(lam gamma)))``.

    Non-smooth or non-strongly-convex problems (Section 3.1, Table 1): hinge,
    absolute and epsilon-insensitive losses, and pure L1 (``lam = 0``,
    ``l1 > 0``), are solved on the perturbed saddle function ``f_delta``: ``delta
    y^2/2`` is added to ``psi*`` when the loss is not smooth and ``delta/2 ||w||^2``
    to ``g`` when ``lam = 0``; gamma and lam above become ``delta`` (plus
    ``gamma`` / ``lam`` when present).  ``perturbation="auto"`` chooses
    ``delta = eps / C1`` (Corollary 2) with ``eps = target_accuracy`` (default
    ``tol * P(0)``) and ``C1 = G_phi^2`` (non-smooth loss) ``+ (P(0)/l1)^2``
    (pure L1, a bound on ``||w*||^2``).  The certificate is exact for the
    ORIGINAL problem: ``w`` is SPDC's primal iterate, ``alpha`` its dual iterate;
    for pure L1 (``g*`` the indicator of ``||v||_inf <= l1``) alpha is scaled by
    ``min(1, l1/||v(alpha)||_inf)``, which keeps it in the dual domain.

    Options
    -------
    The fields of :class:`SPDCOptions`, checked when it is built (a bad value is a
    ValueError naming the option); ``solver.opts`` holds them as given.

    batch_size : int, default 1
        The mini-batch size m of Algorithm 1 (the paper's experiments use 1).
    sampling : "uniform" | "weighted", default "uniform"
        Algorithm 1 or Algorithm 2 (weighted needs batch_size=1).
    tau, sigma, theta : float or None
        Override the theorem's values.
    perturbation : "auto" or float >= 0, default "auto"
        delta of Section 3.1.  "auto" gives 0 when Assumption A holds (smooth
        loss and lam > 0) and ``eps/C1`` otherwise.  A positive delta on a
        problem that needs none is an error.
    target_accuracy : float or None
        eps for ``perturbation="auto"`` (default ``tol * P(0)``).

    Warm start: a SolveResult (``coef`` and ``dual_coef``) or a dual point alpha.
    """
    name = "spdc"
    summary = "stochastic primal-dual coordinate method (Zhang & Xiao 2015)"
    requires = ()
    options_class = SPDCOptions
    supports_l1 = True
    supports_pure_l1 = True

    # ------------------------------------------------------------ options
    def validate_options(self):
        o = self.opts
        prob = self.problem
        n = prob.n
        if o.batch_size > n:
            raise ValueError(f"batch_size={o.batch_size} exceeds the number of samples "
                             f"n={n}")
        loss = prob.loss
        needs_dual = not loss.smooth
        needs_primal = prob.lam == 0.0
        if needs_dual and loss.lipschitz is None:
            raise ValueError(f"solver='spdc' needs a smooth or Lipschitz loss; "
                             f"loss={loss.name!r} is neither")
        pert = o.perturbation
        if not isinstance(pert, str):
            delta = pert
            if delta > 0 and not (needs_dual or needs_primal):
                raise ValueError(
                    f"perturbation={pert!r} given but loss={loss.name!r} is smooth and "
                    f"lam={prob.lam} > 0 (Assumption A holds): nothing to perturb; leave "
                    f"perturbation='auto'")
            if delta == 0 and (needs_dual or needs_primal):
                what = (f"loss={loss.name!r} is not smooth" if needs_dual
                        else "lam=0 (pure L1) is not strongly convex")
                raise ValueError(f"perturbation=0 is not allowed: {what}; SPDC needs the "
                                 f"delta-perturbation of Section 3.1 (give delta > 0 or "
                                 f"'auto')")
        if float(prob.rows.sqnorm.max()) == 0.0:
            raise ValueError("every row of X is zero; SPDC needs at least one nonzero row")

    def setup(self):
        o = self.opts
        prob = self.problem
        n = prob.n
        loss = prob.loss
        needs_dual = not loss.smooth
        needs_primal = prob.lam == 0.0
        self.m = o.batch_size
        pert = o.perturbation
        if isinstance(pert, str):
            delta = self._auto_delta(needs_dual, needs_primal) \
                if (needs_dual or needs_primal) else 0.0
        else:
            delta = pert
        self.delta = float(delta)
        self.delta_dual = self.delta if needs_dual else 0.0
        self.l2 = prob.lam + (self.delta if needs_primal else 0.0)
        # ---- constants of Theorems 1 / 2
        r = prob.rows
        norms = np.sqrt(r.sqnorm)
        self.rho = n * prob.sample_weight / prob.W
        R = float(norms.max())
        gamma = (1.0 / loss.smoothness if loss.smooth else 0.0) / float(self.rho.max())
        gamma += self.delta_dual
        lam = self.l2
        m = self.m
        if o.sampling == "uniform":
            tau = math.sqrt(m * gamma / (n * lam)) / (2 * R)
            sigma = math.sqrt(n * lam / (m * gamma)) / (2 * R)
            theta = 1.0 - 1.0 / (n / m + R * math.sqrt((n / m) / (lam * gamma)))
            self.pn = np.ones(0)
        else:
            Rbar = float(norms.mean())
            tau = math.sqrt(gamma / (n * lam)) / (4 * Rbar)
            sigma = math.sqrt(n * lam / gamma) / (4 * Rbar)
            theta = 1.0 - 1.0 / (2 * n + 2 * Rbar * math.sqrt(n / (lam * gamma)))
            prob = 1.0 / (2 * n) + norms / (2 * norms.sum())
            self.pn = prob * n
        self.tau = float(o.tau) if o.tau is not None else tau
        self.sigma = float(o.sigma) if o.sigma is not None else sigma
        self.theta = float(o.theta) if o.theta is not None else theta
        if not all(math.isfinite(v) and v > 0 for v in (R, self.tau, self.sigma)):
            raise ValueError(f"SPDC's step sizes are not representable for this data "
                             f"(largest row norm R={R:.3g}, lam={prob.lam:g}: tau={self.tau:.3g}, "
                             f"sigma={self.sigma:.3g}); scale the rows (e.g. --normalize) "
                             f"or change lam")
        self.params = {"tau": self.tau, "sigma": self.sigma, "theta": self.theta,
                       "delta": self.delta, "R": R, "gamma": gamma, "lam_eff": lam}
        if o.sampling == "weighted":
            self.alias_prob = np.empty(n)
            self.alias_idx = np.empty(n, dtype=np.int64)
            build_alias(prob, self.alias_prob, self.alias_idx, np.empty(n, np.int64),
                        np.empty(n, np.int64))
        else:
            self.alias_prob = np.ones(0)
            self.alias_idx = np.zeros(0, dtype=np.int64)

    def _auto_delta(self, needs_dual, needs_primal):
        prob = self.problem
        P0 = float(prob.sample_weight @ prob.loss.value(np.zeros(prob.n), prob.y)) / prob.W
        eps = self.opts.target_accuracy
        if eps is None:
            eps = self.tol * max(P0, 1e-12)
            if eps <= 0:
                raise ValueError("perturbation='auto' chooses delta from the target "
                                 "accuracy tol * P(0), which is 0 here; pass "
                                 "target_accuracy or an explicit perturbation")
        C1 = 0.0
        if needs_dual:
            C1 += prob.loss.lipschitz ** 2
        if needs_primal:
            C1 += (P0 / prob.l1) ** 2
        return float(eps) / C1

    # ------------------------------------------------------------ state
    def init_state(self, warm_start):
        prob = self.problem
        n, d = prob.n, prob.d
        self.alpha = np.zeros(n)
        self.x = np.zeros(d)
        ws = warm_start
        if ws is not None:
            self.alpha = self.warm_start_alpha()
            if isinstance(ws, SolveResult):
                self.x = self.warm_start_coef()
            elif prob.lam > 0:
                self.x = prob.w_of(self.alpha)
        # per-coordinate state (d, 4): x^{(last)}, x^{(last-1)}, u = -v, last
        self.st = np.zeros((d, 4))
        self.st[:, 0] = self.x
        self.st[:, 1] = self.x
        self.st[:, 2] = -prob.dual_image(self.alpha)
        del self.x
        self.t = 0
        self._scratch()

    def _scratch(self):
        prob = self.problem
        self.du = np.zeros(prob.d)
        self.mark = np.zeros(prob.n, dtype=np.int64)
        self.batch = np.zeros(self.m, dtype=np.int64)
        # expm1(k log c) for gaps k < n/m + 1: most catch-ups read it from here
        self.em1 = np.empty(prob.n // self.m + 2)
        expm1_table(self.em1.shape[0], -math.log1p(self.tau * self.l2), self.em1)

    def get_state(self):
        meta = {"t": int(self.t), "params": self.params}
        arrays = {"alpha": self.alpha, "st": self.st}
        return meta, {k: np.array(a) for k, a in arrays.items()}

    def set_state(self, meta, arrays):
        self.alpha = np.array(arrays["alpha"], dtype=np.float64)
        self.st = np.ascontiguousarray(arrays["st"], dtype=np.float64)
        self.t = int(meta["t"])
        self._scratch()

    # ---------------------------------------------------------- advance
    def advance(self, n_epochs, deadline):
        prob = self.problem
        n, m = prob.n, self.m
        total = max(1, int(round(n_epochs * n / m)))
        chunk = max(1, n // m)
        weighted = self.opts.sampling == "weighted"
        rows = prob.rows_view()
        spec = SPDCSpec(int(prob.loss.code), float(prob.loss.param), float(self.tau),
                        float(self.sigma), float(self.theta), float(prob.l1), float(self.l2),
                        float(self.delta_dual))
        sampling = SPDCSampling(weighted, self.alias_prob, self.alias_idx, self.pn, self.rho)
        state = SPDCState(self.alpha, self.st)
        work = SPDCWork(self.du, self.mark, self.batch, self.em1)
        done = 0
        while done < total:
            k = min(chunk, total - done)
            U = self.rng.random((k, m))
            status, it, acc = spdc_run(rows, spec, sampling, state, work, U, self.t, k)
            self.feature_accesses += acc
            self.t += it
            self.steps += it * m
            done += it
            if status == STATUS_NONFINITE:
                raise FloatingPointError(
                    f"non-finite value in SPDC at iteration {self.t} (lam={prob.lam!r}, "
                    f"tau={self.tau:.3g}, sigma={self.sigma:.3g}); scale the rows "
                    f"(e.g. --normalize) or use the default step parameters")
            if deadline is not None and time.perf_counter() >= deadline:
                break

    # ------------------------------------------------------ certificate
    def current_w(self):
        """x^{(t)} for every coordinate (the lazy ones brought up to date)."""
        prob = self.problem
        out = np.empty(prob.d)
        c = 1.0 / (1.0 + self.tau * self.l2)
        catch_up_all(self.t, self.st, self.tau, prob.l1, self.l2, c,
                     -math.log1p(self.tau * self.l2), out)
        return out

    def certificate(self):
        prob = self.problem
        w = self.current_w()
        alpha = self.alpha
        if prob.lam == 0.0:
            vmax = float(np.abs(prob.dual_image(alpha)).max(initial=0.0))
            if vmax > prob.l1:
                alpha = alpha * (prob.l1 / vmax) * (1.0 - 1e-15)
        return prob.certificate(w, alpha)

    def trace_extras(self):
        return {"iterations": int(self.t)}
