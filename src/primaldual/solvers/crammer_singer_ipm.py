"""The Crammer-Singer multiclass SVM by a primal-dual interior-point method on
its primal QP, for few primal weights (``d K`` up to 3,200): its iterations
do not depend on the scale of the features (docs/multiclass-models.md).

Mehrotra's predictor-corrector (Mehrotra, SIAM J. Optim. 2(4) 1992; Nocedal &
Wright, Numerical Optimization, 2nd ed., Algorithm 16.4), with the Newton
system reduced to ``d K x d K`` as Ferris & Munson (SIAM J. Optim. 13(3) 2002)
reduce the binary SVM's to ``d x d`` (:mod:`primaldual.solvers.ipm`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels.cs_ipm import (CSIPoint, CSIStep, cs_ipm_back, cs_ipm_blocks, cs_ipm_center,
                              cs_ipm_point, cs_ipm_qapply, cs_ipm_rhs, longest_pair)
from ..multiclass import crammer_singer_value
from ..problem import Certificate
from ._multiclass_base import MulticlassSolver
from ._options import CommonOptions, number
from .ipm import WholeIterations, equilibrate, scaled_solve, spd_factor
from .multinomial import _multiclass_eval

__all__ = ["CrammerSingerIPMOptions", "CrammerSingerIPM", "ipm_fits", "ipm_iteration_flops"]

#: the largest number of primal weights d K whose dense Newton matrix is formed
#: (82 MB; usps.t's 256 x 10 = 2,560: 28-60 iterations of 1-2 s where the dual
#: method does not reach 1e-6 in 10,000 epochs)
MAX_DK = 3200
#: and the largest n max(d, K): the dense copy of X and each of the dozen
#: (n, K) arrays of an iteration (160 MB each at most)
MAX_DENSE_ENTRIES = 2e7
#: the rows' outer products (n d^2 values) are kept when at most this many
OUTER_MAX_ENTRIES = 1e7
#: a step shorter than this (or a non-finite direction) ends the run, stalled
MIN_STEP = 1e-14
#: stalled when the best relative gap has not halved in STALL_WINDOW
#: iterations after the first STALL_START (shuttle takes 110-140 iterations)
STALL_WINDOW = 20
STALL_START = 200
#: Mehrotra's centering sigma = (mu_aff / mu)^SIGMA_POWER
SIGMA_POWER = 3.0
#: the start: xi = 1 + START_SLACK, coef = 0 and mu centred on each row
#: (s_ik mu_ik equal within the row); measured 0.1 to 1e4 on shuttle: the
#: same iteration counts within their scatter
START_SLACK = 1.0
#: at most this many of Gondzio's centrality correctors per iteration (each
#: one solve with the factor at hand), kept while they lengthen the step by 1%
#: (shuttle: 169 -> 114-141 iterations; a 3,000-row sample 65 -> 39)
CORRECTORS = 4


def ipm_fits(problem) -> bool:
    """Whether :class:`CrammerSingerIPM` takes ``problem`` (``d K`` and ``n
    max(d, K)`` small)."""
    return problem.d * problem.K <= MAX_DK and \
        problem.n * max(problem.d, problem.K) <= MAX_DENSE_ENTRIES


def ipm_iteration_flops(problem) -> float:
    """The cost of one iteration in flops, as ``solver="auto"``'s time model
    counts it (calibrated on digits, dna.scale, letter.scale and shuttle): the
    matrix ``n (dK)^2 + 2 n d^2 K`` and the factorization ``(dK)^3 / 3``.
    Formed block by block (``n d^2 > OUTER_MAX_ENTRIES``) the matrix takes
    fewer, ``n d^2 K (K + 1) / 2``; the model keeps the calibrated count (with
    the smaller one, dna.scale's dual method was cut short at load 5)."""
    n, d, K = problem.n, problem.d, problem.K
    return n * (d * K) ** 2 + 2.0 * n * d * d * K + (d * K) ** 3 / 3.0


@dataclass(frozen=True)
class CrammerSingerIPMOptions(CommonOptions):
    """The options of :class:`CrammerSingerIPM`."""

    solver_name = "crammer_singer_ipm"
    step_fraction: float = number(0.995, low=0.0, high=1.0, high_strict=True,
                                  doc="fraction of the step to the boundary taken")


class CrammerSingerIPM(WholeIterations, MulticlassSolver):
    """Primal-dual interior-point method for the Crammer-Singer multiclass SVM.

    Problem (Crammer & Singer, JMLR 2 (2001); docs/multiclass-models.md), as
    the QP in ``coef`` (d x K) and one slack ``xi_i`` per row, ``u_i = c_i / W``,
    ``e_ik = 1[k != y_i]``, ``z_i = x_i coef``::

        min  sum_i u_i xi_i + lam/2 ||coef||_F^2
        s.t. xi_i >= e_ik + z_ik - z_{i y_i}      for every i and k,

    whose multipliers ``mu_ik >= 0``, ``sum_k mu_ik = u_i``, are the dual's
    ``u_i (e_{y_i} - alpha_i)``.  With slacks ``s_ik`` and the residuals
    ``r_w = lam coef + X^T (mu_i - (1^T mu_i) e_{y_i})_i``, ``r_xi = 1^T mu_i -
    u_i``, ``r_s = s - xi 1 + e + z - z_y 1`` and ``r_c = s mu - sigma m``,
    the Newton step eliminates ``ds``, ``dmu`` and ``dxi`` row by row
    (``D = mu / s``, ``delta_i = 1^T D_i``, ``Q_i = D_i - D_i D_i^T / delta_i``)::

        (lam I + sum_i x_i^T x_i (x) Q_i) dcoef = -r_w - X^T (Q_i h_i
                                   - (D_i - delta_i e_{y_i}) r_xi_i / delta_i)_i,
        h = r_s - r_c / mu,

    a ``d K x d K`` system (Ferris & Munson's reduction for the binary SVM),
    formed with BLAS in ``O(n d^2 K^2)``, scaled to unit diagonal and factored
    once per iteration; Mehrotra's predictor-corrector (Nocedal & Wright Alg.
    16.4) solves it twice.  ``Q_i`` is formed and applied relative to each
    row's largest ``D_ik``: ``Q_i v = Q_i (v - v_j 1)``, so that the large
    ``D`` of the active constraints never meets a cancellation.

    Certificate: ``alpha_i = e_{y_i} - mu_i / 1^T mu_i`` (on the simplex) and
    the iterate ``coef`` or ``coef(alpha)``, whichever has the lower primal;
    ``P - D`` is exact for the returned pair.  One pass (``n_epochs``) per
    iteration.  Stops on ``tol``, ``max_epochs``, ``time_limit``, and
    ``stalled`` when a step collapses or the best gap has not halved in 20
    iterations after the first 200.  Start: ``coef = 0``, ``xi = 2``, ``mu``
    centred on each row (``s_ik mu_ik`` equal, ``1^T mu_i = u_i``);
    ``warm_start`` (a SolveResult or a dual point alpha (n, K)) starts from
    its ``coef(alpha)`` and ``mu`` 1% inside the simplex.  After the
    corrector, up to four of Gondzio's centrality correctors (Gondzio, Comput.
    Optim. Appl. 6 (1996)) push the trial complementarity products into
    ``[0.1, 10] sigma m``, each kept while it lengthens the step by 1%.

    The number of iterations (12-40 on small sets, 110-140 on shuttle) is
    that of the QP, not of the features' scale, which is why the method is
    for unscaled features with few weights (shuttle: 9 x 7), where dual
    coordinate ascent stalls.  Options: ``step_fraction`` (default 0.995).
    """

    stall_start = STALL_START
    stall_window = STALL_WINDOW
    name = "crammer_singer_ipm"
    summary = ("Crammer-Singer multiclass SVM: primal-dual interior-point method on "
               "the primal QP (d K <= 3200)")
    options_class = CrammerSingerIPMOptions
    default_max_epochs = 500
    loss_names = ("crammer_singer",)
    newton_type = True
    mixes_best_pair = False

    def setup(self):
        prob = self.problem
        if not ipm_fits(prob):
            raise ValueError(
                f"solver={self.name!r} forms a dense (d K) x (d K) = {prob.d * prob.K:,} "
                f"square matrix and a dense copy of X; it takes d K <= {MAX_DK:,} and "
                f"n max(d, K) <= {MAX_DENSE_ENTRIES:.0e}. Use solver='crammer_singer_dual'")
        X = prob.rows.X
        self.X = np.ascontiguousarray(X.toarray() if hasattr(X, "toarray") else X,
                                      dtype=np.float64)
        if not np.isfinite(self.X).all():
            raise FloatingPointError(f"solver={self.name!r}: X has non-finite entries")
        self.u = prob.sample_weight / prob.W
        n, K = prob.n, prob.K
        self.idx = np.arange(n)
        self.E = np.ones((n, K))
        self.E[self.idx, prob.y] = 0.0
        self.eta = float(self.opts.step_fraction)
        # the rows' outer products x_i x_i^T (n, d^2), where small: the matrix is
        # then one product with the rows' Schur blocks (shuttle: 0.12 -> 0.03 s)
        d = self.X.shape[1]
        self.X2 = None
        if n * d * d <= OUTER_MAX_ENTRIES:
            self.X2 = (self.X[:, :, None] * self.X[:, None, :]).reshape(n, d * d)

    # -------------------------------------------------------------- state
    def init_state(self, warm_start):
        prob = self.problem
        n, K = prob.n, prob.K
        self.coef = np.zeros((prob.d, K))
        self.xi = np.full(n, 1.0 + START_SLACK)
        inv = 1.0 / (self.xi[:, None] - self.E)
        self.mu = self.u[:, None] * inv / inv.sum(1, keepdims=True)
        if warm_start is not None:
            alpha = self._warm_alpha(warm_start)
            p = np.zeros((n, K))
            p[self.idx, prob.y] = 1.0
            p = np.clip(p - alpha, 0.0, None)
            p = 0.99 * p / p.sum(1, keepdims=True) + 0.01 / K
            self.mu = self.u[:, None] * p
            self.coef = np.asarray(prob.w_of(alpha), dtype=np.float64)
            loss, _ = crammer_singer_value(self.X @ self.coef, prob.y)
            self.xi = loss + 1.0
        self.s = self.xi[:, None] - self.E - self._diff(self.X @ self.coef)
        self.start_loop()

    #: the iterate's arrays, saved in checkpoints
    state_arrays = ("coef", "xi", "s", "mu")

    # ------------------------------------------------------ linear algebra
    def _diff(self, Z):
        """``z_ik - z_{i y_i}`` (n, K)."""
        return Z - Z[self.idx, self.problem.y][:, None]

    def _matrix(self, p):
        """``S (lam I + sum_i x_i^T x_i (x) Q_i) S`` and ``S`` (unit diagonal;
        :func:`~primaldual.solvers.ipm.equilibrate`), from the rows' Schur
        blocks ``Q_i`` of :func:`~primaldual.kernels.cs_ipm.cs_ipm_blocks`
        (formed without cancellation).  With the outer products ``X2``: one
        product ``X2^T [Q_i]``; else the ``K (K + 1) / 2`` blocks ``X^T diag(Q_kl)
        X``, ``n d^2`` each (usps.t: 55 products, half the flops of ``n (dK)^2``)."""
        prob = self.problem
        X, (n, d), K = self.X, self.X.shape, prob.K
        Qf = np.empty((n, K * K))
        cs_ipm_blocks(p, Qf)
        if self.X2 is not None:
            return equilibrate(np.ascontiguousarray(
                (self.X2.T @ Qf).reshape(d, d, K, K).transpose(0, 2, 1, 3)
            ).reshape(d * K, d * K), prob.lam)
        H = np.empty((d, K, d, K))
        for k in range(K):
            for m in range(k, K):
                B = X.T @ (Qf[:, k * K + m:k * K + m + 1] * X)
                H[:, k, :, m] = B
                if m != k:
                    H[:, m, :, k] = B.T
        return equilibrate(H.reshape(d * K, d * K), prob.lam)

    # ------------------------------------------------------------ updates
    def _iterate(self):
        prob = self.problem
        X, lam = self.X, prob.lam
        coef, xi, s, mu = self.coef, self.xi, self.s, self.mu
        n, K = mu.shape
        p = CSIPoint(prob.y, s, mu, self.u, np.empty((n, K)), np.empty(n),
                     np.empty(n, dtype=np.int64))
        r_s, r_xi, M = np.empty((n, K)), np.empty(n), np.empty((n, K))
        m = cs_ipm_point(p, X @ coef, xi, r_s, r_xi, M) / (n * K)
        r_w = lam * coef + X.T @ M
        H, scale = self._matrix(p)
        cf = spd_factor(H)
        R, Qz = np.empty((n, K)), np.empty((n, K))

        def solve(rhs):
            x = scaled_solve(cf, scale, rhs)
            # one step of iterative refinement on the exact (row-wise) product
            xm = x.reshape(coef.shape)
            cs_ipm_qapply(p, X @ xm, Qz)
            r = rhs - (lam * xm + X.T @ Qz).ravel()
            return x + scaled_solve(cf, scale, r)

        def direction(r_c, rs, rx, rw):
            cs_ipm_rhs(p, rs, r_c, rx, R)
            dcoef = solve((-rw - X.T @ R).ravel()).reshape(coef.shape)
            out = CSIStep(np.empty(n), np.empty((n, K)), np.empty((n, K)))
            a = cs_ipm_back(p, X @ dcoef, rs, r_c, rx, out)
            return dcoef, out, a

        dc, st, a = direction(s * mu, r_s, r_xi, r_w)
        m_aff = float(np.sum((s + a * st.ds) * (mu + a * st.dmu))) / (n * K)
        sigma = (m_aff / m) ** SIGMA_POWER if m > 0 else 0.0
        dc, st, a = direction(s * mu + st.ds * st.dmu - sigma * m, r_s, r_xi, r_w)
        zs, zx, zw, r_c = np.zeros((n, K)), np.zeros(n), np.zeros_like(r_w), np.empty((n, K))
        for _ in range(CORRECTORS):
            # Gondzio's centrality corrector: the trial products pushed into a box
            cs_ipm_center(p, st, min(1.0, 1.5 * a + 0.1), 0.1 * sigma * m,
                          10.0 * sigma * m, r_c)
            cc, cst, _ = direction(r_c, zs, zx, zw)
            nst = CSIStep(st.dxi + cst.dxi, st.dmu + cst.dmu, st.ds + cst.ds)
            a2 = longest_pair(s, nst.ds, mu, nst.dmu)
            if a2 < 1.01 * a:
                break
            dc, st, a = dc + cc, nst, a2
        a *= self.eta
        self.last_step = float(a)
        if not (a > MIN_STEP and np.isfinite(dc).all() and
                all(np.isfinite(v).all() for v in st)):
            self.stall = "step_collapse"
            return
        self.coef = coef + a * dc
        self.xi = xi + a * st.dxi
        self.s = np.maximum(s + a * st.ds, 1e-300)
        self.mu = np.maximum(mu + a * st.dmu, 1e-300)
        self.n_iter += 1

    # -------------------------------------------------------- certificate
    def certificate(self):
        """``alpha = e_y - mu / 1^T mu`` and the iterate ``coef`` or
        ``coef(alpha)``, whichever has the lower primal (both exact pairs)."""
        prob = self.problem
        p = self.mu / self.mu.sum(1, keepdims=True)
        alpha = -p
        alpha[self.idx, prob.y] += 1.0
        c = prob.sample_weight
        V = self.X.T @ (c[:, None] * alpha) / prob.W
        cert = prob.certificate(self.coef, alpha, Z=self.X @ self.coef, V=V)
        w_alpha = V / prob.lam
        other = prob.certificate(w_alpha, alpha, Z=self.X @ w_alpha, V=V)
        if other.primal < cert.primal:
            cert = other
        self._note_gap(cert.rel_gap)
        return cert

    def trace_extras(self):
        m = float(np.sum(self.s * self.mu)) / self.mu.size
        return {"iterations": int(self.n_iter), "mu": m, "step": self.last_step}

    def _evaluate(self, w):
        return _multiclass_eval(self, w)
