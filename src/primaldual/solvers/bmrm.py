"""BMRM: bundle method for regularized risk minimization (Teo, Vishwanathan,
Smola & Le, JMLR 11, 2010, Algorithm 1), with the L2 regularizer.

The problem, the updates, the certificate and the options are in
:class:`BMRMSolver`'s docstring.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ._base import Solver, register
from ._options import CommonOptions


def solve_simplex_qp(H, b, beta0=None, max_iter=10000):
    """argmin_{beta in simplex} 1/2 beta^T H beta - b^T beta (H symmetric PSD).

    Primal active-set method (Nocedal & Wright, Algorithm 16.3) on the
    constraints ``beta_k >= 0`` with ``sum beta = 1`` always active.  Each
    step solves the equality-constrained QP on the free set exactly (a KKT
    linear system).  ``H`` gets a ridge of ``1e-13 max(diag H)`` so that the
    reduced Hessian is positive definite (cutting planes are often linearly
    dependent); this moves the optimal value by at most that amount.  Finite
    termination; warm-started from ``beta0``.  Returns ``(beta, fw_gap)`` with
    the Frank-Wolfe gap of the unperturbed problem.
    """
    t = b.shape[0]
    if t == 1:
        return np.ones(1), 0.0
    scale = max(1.0, float(np.abs(b).max()), float(np.abs(np.diag(H)).max()))
    Hs = H / scale
    bs = b / scale
    Hr = Hs + 1e-13 * np.eye(t)
    if beta0 is None or beta0.sum() <= 0:
        beta = np.zeros(t)
        beta[int(np.argmax(bs - 0.5 * np.diag(Hs)))] = 1.0
    else:
        beta = np.clip(beta0, 0.0, None)
        beta /= beta.sum()
    free = beta > 0
    tol = 1e-14
    for _ in range(max_iter):
        S = np.flatnonzero(free)
        k = S.shape[0]
        K = np.empty((k + 1, k + 1))
        K[:k, :k] = Hr[np.ix_(S, S)]
        K[:k, k] = -1.0
        K[k, :k] = 1.0
        K[k, k] = 0.0
        rhs = np.concatenate([bs[S], [1.0]])
        if not (np.isfinite(K).all() and np.isfinite(rhs).all()):
            raise FloatingPointError(
                "BMRM's master problem has non-finite entries (the cutting planes "
                "overflowed double precision); scale the rows of X (e.g. --normalize) "
                "or use a dual method such as solver='sdca'")
        try:
            sol = np.linalg.solve(K, rhs)
        except np.linalg.LinAlgError:
            # linearly dependent active planes: the KKT system is singular but
            # consistent; the least-squares solution is an exact solution
            sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
        z = sol[:k]
        dvec = z - beta[S]
        if np.abs(dvec).max() <= 1e-15:
            g = Hr @ beta - bs
            mu = sol[k]
            lam_fixed = g[~free] - mu
            if lam_fixed.size == 0 or lam_fixed.min() >= -tol:
                break
            free[np.flatnonzero(~free)[int(np.argmin(lam_fixed))]] = True
            continue
        neg = dvec < 0
        tau = 1.0
        block = -1
        if neg.any():
            ratios = beta[S][neg] / -dvec[neg]
            m = int(np.argmin(ratios))
            if ratios[m] < 1.0:
                tau = float(ratios[m])
                block = int(S[np.flatnonzero(neg)[m]])
        beta[S] = beta[S] + tau * dvec
        if block >= 0:
            beta[block] = 0.0
            free[block] = False
        beta = np.clip(beta, 0.0, None)
        beta /= beta.sum()
    g = Hs @ beta - bs
    fw = float(g @ beta - g.min()) * scale
    return beta, max(fw, 0.0)


@dataclass(frozen=True)
class BMRMOptions(CommonOptions):
    """The options of :class:`BMRMSolver`: the common ones only."""

    solver_name = "bmrm"


@register
class BMRMSolver(Solver):
    """BMRM: bundle method for regularized risk minimization (Teo, Vishwanathan,
    Smola & Le, JMLR 11, 2010, Algorithm 1), with the L2 regularizer.

    Problem: ``J(w) = lam/2 ||w||^2 + R_emp(w)``, ``R_emp(w) = (1/W) sum_i c_i
    phi_i(x_i . w)`` (the primal of docs/conventions.md §1 with ``l1 = 0``); any loss with
    subgradients (hinge, logistic, ...).

    Iteration ``t`` (cutting planes of the empirical risk)::

        a_t = (1/W) sum_i c_i phi_i'(x_i . w_{t-1}) x_i       in  d R_emp(w_{t-1})
        b_t = R_emp(w_{t-1}) - <a_t, w_{t-1}>
        w_t = argmin_w lam/2 ||w||^2 + max_{k<=t} (<a_k, w> + b_k)       (master problem)

    The master problem is solved through its dual (Teo et al., eq. 19 with
    ``Omega = ||.||^2/2``), a QP over the simplex with a closed-form primal::

        beta_t = argmax_{beta in simplex} b^T beta - (1/(2 lam)) beta^T (A^T A) beta,
        w_t = -A beta_t / lam

    solved exactly by a primal active-set method warm-started from ``beta_{t-1}``
    (:func:`solve_simplex_qp`).  ``master_fw_gap`` in the trace is the Frank-Wolfe gap
    ``max_k (grad . (beta - e_k))``, an upper bound on the master's
    suboptimality.  The BMRM gap ``eps_t = min_{k<=t} J(w_{k-1}) - J_t(w_t)`` is
    reported as ``bmrm_gap``.

    Certificate: ``coef`` is the best evaluated iterate (``min_k J(w_k)``).  Each
    cutting plane comes from the dual point ``alpha^(k) = -phi'(X w_{k-1})`` (so
    ``a_k = -v(alpha^(k))`` and ``b_k = (1/W) sum_i c_i H_i(alpha^(k)_i)`` by
    Fenchel-Young); the master's dual solution gives the feasible combination
    ``alpha_bar = sum_k beta_k alpha^(k)`` with ``w_t = w(alpha_bar)`` and, by
    concavity of ``H``, ``D(alpha_bar) >= b^T beta - ||A beta||^2/(2 lam)``, the
    master lower bound.  ``dual_coef`` is whichever of ``alpha_bar`` and
    ``-phi'(X coef)`` has the larger exact ``D``.  Memory: the planes take
    ``O((n + d) t)`` after ``t`` iterations.  One iteration = one epoch (one pass
    computing the risk and its subgradient).

    Options: none beyond the common ones (:class:`BMRMOptions`).
    """
    name = "bmrm"
    summary = "bundle method for regularized risk, exact master QP (Teo et al. 2010)"
    options_class = BMRMOptions

    def init_state(self, warm_start):
        prob = self.problem
        self.w_cur = np.zeros(prob.d)
        if warm_start is not None:
            w = warm_start.coef if hasattr(warm_start, "coef") else warm_start
            w = np.array(w, dtype=np.float64).ravel()
            if w.shape != (prob.d,) or not np.isfinite(w).all():
                raise ValueError(f"warm_start for bmrm must be a finite coefficient vector "
                                 f"of shape ({prob.d},), got shape {w.shape}")
            self.w_cur = w
        self.w_best = self.w_cur.copy()
        self.J_best = np.inf
        self.A = np.zeros((prob.d, 0))
        self.b = np.zeros(0)
        self.Q = np.zeros((0, 0))
        self.alphas = np.zeros((prob.n, 0))
        self.beta = np.zeros(0)
        self.master_value = -np.inf
        self.fw_gap = 0.0

    def get_state(self):
        meta = {"J_best": float(self.J_best), "master_value": float(self.master_value),
                "fw_gap": float(self.fw_gap)}
        return meta, {k: np.array(getattr(self, k)) for k in
                      ("w_cur", "w_best", "A", "b", "Q", "alphas", "beta")}

    def set_state(self, meta, arrays):
        for k in ("w_cur", "w_best", "A", "b", "Q", "alphas", "beta"):
            setattr(self, k, np.array(arrays[k], dtype=np.float64))
        self.J_best = float(meta["J_best"])
        self.master_value = float(meta["master_value"])
        self.fw_gap = float(meta["fw_gap"])

    def iterate(self):
        """One BMRM iteration: a cutting plane at w_cur, then the master problem."""
        prob = self.problem
        w = self.w_cur
        margins = prob.rows.matvec(w)
        risk = float(prob.sample_weight @ prob.loss.value(margins, prob.y)) / prob.W
        J = risk + 0.5 * prob.lam * float(w @ w)
        if J < self.J_best:
            self.J_best = J
            self.w_best = w.copy()
        alpha = -prob.loss.derivative(margins, prob.y)
        a = -prob.dual_image(alpha)
        self.steps += prob.n
        self.feature_accesses += 2 * prob.nnz
        t = self.b.shape[0]
        self.A = np.column_stack([self.A, a])
        self.b = np.append(self.b, risk - float(a @ w))
        self.alphas = np.column_stack([self.alphas, alpha])
        col = self.A.T @ a
        Q = np.zeros((t + 1, t + 1))
        Q[:t, :t] = self.Q
        Q[t, :] = col
        Q[:, t] = col
        self.Q = Q
        beta0 = np.append(self.beta, 0.0) if t else None
        if beta0 is not None and beta0.sum() <= 0:
            beta0 = None
        self.beta, self.fw_gap = solve_simplex_qp(self.Q / prob.lam, self.b, beta0)
        Ab = self.A @ self.beta
        self.master_value = float(self.b @ self.beta) - float(Ab @ Ab) / (2.0 * prob.lam)
        self.w_cur = -Ab / prob.lam

    def advance(self, n_epochs, deadline):
        for _ in range(max(1, int(round(n_epochs)))):
            self.iterate()
            if deadline is not None and time.perf_counter() >= deadline:
                break

    def certificate(self):
        prob = self.problem
        w = self.w_best
        best = prob.primal_certificate(w)          # alpha = -phi'(X w)
        if self.beta.size:                          # the master's dual, same w and margins
            cert = prob.certificate(w, self.alphas @ self.beta, margins=best.margins)
            if cert.dual > best.dual:
                best = cert
        return best

    def trace_extras(self):
        return {"planes": int(self.b.shape[0]),
                "bmrm_gap": (float(self.J_best - self.master_value)
                             if np.isfinite(self.J_best) and np.isfinite(self.master_value)
                             else None),
                "master_fw_gap": float(self.fw_gap)}
