"""``l1_ipm``: interior-point methods for L1 and elastic-net models with a
smooth loss, on a working set of features (docs/sparse-models.md): a primal
log-barrier method, and for the squared hinge a primal-dual one on its QP
(:mod:`.barrier_qp`).

It is the method for the weakly penalized sparse models on which coordinate
descent crawls: where the loss is flat along a direction of X's null space
(one-hot groups summing to a constant) or the classes are separable, ``l1cd``
moves a little each pass and its Gap Safe dual point stays loose.  A Newton
step on the whole working set moves along such directions at once, and the
barrier keeps the step well defined where the loss has no curvature.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .._base import Solver, register
from .._options import CommonOptions, number
from ..ipm import WholeIterations
from .barrier_qp import QPPoint, qp_mu, qp_start, qp_step
from .barrier_system import CGNewtonSystem, NewtonSystem
from .screening import gap_safe_mask

__all__ = ["L1BarrierOptions", "L1BarrierSolver", "MAX_WS", "ITERATIONS"]

#: the default cap on the working set: the Newton matrix is dense, m x m
MAX_WS = 2000
#: the iterations a fit is predicted to take (the cost model of solver="auto";
#: measured 10-30 for the squared hinge's QP, 22-45 for the logistic barrier)
ITERATIONS = 40
#: a growing working set whose best gap has not halved in GROW_WINDOW
#: iterations, after GROW_START, is replaced by every feature screening keeps.
#: A working set whose matrix is predicted above FULL_FLOPS products (forming
#: and factoring, :class:`.barrier_system.NewtonSystem`) is solved by CG
#: (:class:`.barrier_system.CGNewtonSystem`).  Each time features join a
#: growing set the interior point leaves its central path: on standardized
#: reuters (squared hinge, C = 100) a growing set ended at a gap of 0.17; the whole one (7,770 rows x 8,157 features, by rows, about
#: 1.6e11 products, 5 s an iteration here) certifies 1e-6 in 22 iterations.  On
#: the same data as given the first set of 948 features certifies in 21
#: iterations (0.8 s), where the whole one takes 120 s: so the whole set waits
#: for the growing one to stall
FULL_FLOPS = 2e11
GROW_START = 20
GROW_WINDOW = 10
#: the working set holds the features a dense copy of whose columns has at
#: most this many entries (else the matrix is formed by the compiled pairs kernel)
DENSE_MAX_ENTRIES = 2e7
#: a working set whose columns are denser than this is copied dense (BLAS)
DENSE_MIN_DENSITY = 0.1
#: the first working set, when the features Gap Safe screening keeps are too
#: many (``min(|S|, n) > max_ws``): the start's nonzeros and the features of largest ``|v_j|``, twice the nonzeros and at
#: least this many
FIRST_WS = 256
#: the squared hinge's QP starts at ``u = |w| + QP_SLACK``, ``xi = max(a, 0) + QP_SLACK``
QP_SLACK = 1.0
#: the returned point is rounded (:meth:`L1BarrierSolver._rounded`) once the
#: relative gap is below this
ROUND_GAP = 1e-3
#: Koh, Kim & Boyd's update of t: by MU when a step of at least MIN_STEP_T was
#: taken (MU = 8 on a full step was measured 1.5x fewer iterations on a9a, but
#: collapsed on mushrooms at 4e-5)
MU = 2.0
#: a feature joins the working set at NEW_U times the barrier's minimizer
#: ``u_j = 2 / (t l1)`` and ``t`` is divided by BACK_T, so that the violating
#: features can move at once (measured with the barrier on the squared hinge,
#: before that loss became a QP: standardized reuters, C = 100, 250 iterations
#: end at a gap of 0.64 with 1 and 1, 0.05 with 100 and 16)
NEW_U = 100.0
BACK_T = 16.0
MIN_STEP_T = 0.5
#: rescalings of a pure-L1 dual point whose image rounding leaves outside the
#: ball ``||v||_inf <= l1`` (:meth:`L1BarrierSolver._feasible`)
FEASIBLE_TRIES = 4
#: the Armijo constant and the number of halvings of the line search
ARMIJO = 0.01
HALVINGS = 60
#: a step shorter than this ends the run, stalled
MIN_STEP = 1e-14


@dataclass(frozen=True)
class L1BarrierOptions(CommonOptions):
    """The options of :class:`L1BarrierSolver`."""

    solver_name = "l1_ipm"
    max_ws: int = number(MAX_WS, integer=True, low=1.0,
                         doc="largest growing working set (dense Newton matrix min(max_ws, n)^2)")


@register
class L1BarrierSolver(WholeIterations, Solver):
    """Interior-point method for L1 and elastic-net models on a working set.

    Problem (docs/conventions.md §1, ``cw_i = c_i / W``), with ``l1 > 0`` and
    ``lam >= 0`` (pure L1 allowed) and a smooth loss::

        min_w P(w) = sum_i cw_i phi(x_i . w; y_i) + lam/2 ||w||^2 + l1 ||w||_1,

    solved on a working set ``S`` of features (the others held at 0).

    The squared hinge: its problem is a QP (``max(0, a)^2 = min xi^2`` over
    ``xi >= a``), solved by Mehrotra's predictor-corrector with the Newton
    system reduced to ``m x m`` (:mod:`.barrier_qp`; Nocedal & Wright,
    Algorithm 16.4), a step for the primal and one for the dual variables.

    The other losses: the primal log-barrier problem in ``(w_S, u_S)``, ``|w_j|
    < u_j`` (Koh, Kim & Boyd, JMLR 8 (2007), "An interior-point method for
    large-scale l1-regularized logistic regression", eq. 5)::

        min  t (F(w) + lam/2 ||w||^2 + l1 sum_j u_j) - sum_j log(u_j^2 - w_j^2),

    ``F(w) = sum_i cw_i phi(x_i . w)``, one Newton step per iteration with
    ``du`` eliminated (``q = u^2 - w^2``)::

        (t (X_S^T diag(cw phi'') X_S + lam I) + diag(2 / (u^2 + w^2))) dw
                        = -g_w - 2 u w / (u^2 + w^2) g_u,
        du = -(q^2 g_u - 4 u w dw) / (2 (u^2 + w^2)),

    ``g_w = t (X_S^T (cw phi') + lam w) + 2 w / q``, ``g_u = t l1 - 2 u / q``
    (generalized second derivatives for the piecewise-quadratic losses).  A
    backtracking line search (Armijo) inside ``|w| < u`` takes the step; after
    a step of at least half of it ``t`` becomes ``MU max(2 m / eta, t)`` (Koh,
    Kim & Boyd, Section 3.3, ``eta`` the duality gap, ``m = |S|``).  Start:
    ``t = 2 m / eta`` and ``u`` the barrier's minimizer for the start's ``w``,
    so that a start near the optimum is near the central path.

    Both methods solve ``(X_S^T diag(h) X_S + diag(e)) dw = b`` once per
    iteration, by its ``m x m`` matrix or, where the rows cost less, the ``n x
    n`` one of the Sherman-Morrison-Woodbury identity with iterative refinement
    (:mod:`.barrier_system`).

    Certificate (every iteration, exact for the whole problem, not only ``S``):
    of the dual points ``alpha_i = -phi'(x_i . w) / s`` and, for the squared
    hinge, the QP's own ``alpha = y nu / (cw s)``, the one of larger ``D``;
    ``s = max(1, ||v||_inf / l1)`` for ``lam = 0`` (the dual point of Koh, Kim &
    Boyd, Section 2.3, and of Gap Safe screening), ``s = 1`` for ``lam > 0``.
    The point returned is the iterate rounded to exact zeros as far as that
    certificate allows (:meth:`_rounded`).  ``Problem.certificate``
    reproduces ``P`` and ``D``.

    Working set: at the start, every feature Gap Safe screening keeps
    (:mod:`.screening`) when the matrix's dimension ``min(|S|, n)`` is at most
    ``max_ws``; otherwise the start's nonzeros (its ``max_ws`` largest, if
    more) and the features of largest ``|v_j|``, twice the nonzeros and at
    least ``FIRST_WS``, up to ``max_ws``, and it grows: after an iteration the
    features outside ``S`` with ``|v_j|`` above both ``l1`` and the largest
    ``|v_j|`` on ``S`` join it at ``w_j = 0``; a full set (``max_ws``; no
    limit when ``n <= max_ws``) gives up its features with ``|v_j| < l1`` and
    the smallest ``|w_j|``.  A growing set whose best gap has not halved in
    ``GROW_WINDOW`` iterations (after ``GROW_START``) is replaced, once, by
    every feature screening keeps, on a new central path.  A working set whose
    matrix is predicted above ``FULL_FLOPS`` products solves its Newton systems
    by preconditioned CG (:class:`.barrier_system.CGNewtonSystem`); the result
    reports ``cg_iterations``.

    One iteration is one epoch.  Stops on ``tol``, ``max_epochs``,
    ``time_limit``, and ``stalled`` when a step collapses or the best gap has
    not halved in 20 iterations after the first 50 (counted again from the
    switch to the whole set).  Option ``max_ws``
    (default 2000).
    """

    name = "l1_ipm"
    summary = ("L1 / elastic net: interior-point methods on a working set (squared "
               "hinge: Mehrotra on its QP; others: primal log barrier, Koh, Kim & Boyd 2007)")
    requires = ("smooth", "generalized_hessian")
    options_class = L1BarrierOptions
    supports_l1 = True
    supports_pure_l1 = True
    #: it solves only problems with l1 > 0 (the barrier is on |w_j| < u_j)
    requires_l1 = True
    default_max_epochs = 500
    newton_type = True
    mixes_best_pair = False

    def setup(self):
        prob = self.problem
        if not prob.l1 > 0:
            raise ValueError(f"solver={self.name!r} solves L1 and elastic-net models and "
                             f"needs l1 > 0 (got l1={prob.l1}); for l1 = 0 use "
                             f"solver='newton' or 'auto'")
        X = prob.X
        self.sparse = sp.issparse(X)
        if self.sparse:
            self.Xr = sp.csr_matrix(X, dtype=np.float64)
            self.Xc = self.Xr.tocsc()
            self.Xc.sort_indices()
        else:
            self.Xr = np.ascontiguousarray(X, dtype=np.float64)
            self.Xc = np.asfortranarray(self.Xr)
        self.cw = prob.sample_weight / prob.W
        sq = self.Xc.multiply(self.Xc) if self.sparse else self.Xc * self.Xc
        self.colnorm = np.sqrt(np.asarray(sq.T @ self.cw).ravel())
        self.max_ws = int(self.opts.max_ws)
        # the squared hinge: its L1 problem is a QP, solved by primal-dual steps
        self.qp = prob.loss.name == "squared_hinge"
        self._cols = None            # (S, columns of S) as the matrix is formed from

    # ------------------------------------------------------------ state
    def init_state(self, warm_start):
        prob = self.problem
        w = self.warm_start_coef()
        w = np.zeros(prob.d) if w is None else w
        w[self.colnorm == 0.0] = 0.0
        self.start_loop()
        self.t = None
        cert = self._certify(w, Xw=self.Xr @ w)
        S = self._screened(cert, w)
        # the whole set when its matrix fits max_ws; else a growing one
        self.growing = not self._fits(S.size)
        self.grow_gaps = []
        self.cg_iterations = 0
        self.cap = prob.d if self._fits(prob.d) else self.max_ws
        if self.growing:
            nz = np.flatnonzero(w)
            if nz.size > self.max_ws:        # keep the start's max_ws largest
                nz = np.sort(nz[np.argsort(-np.abs(w[nz]), kind="stable")[:self.max_ws]])
                rest = np.ones(prob.d, dtype=bool)
                rest[nz] = False
                w[rest] = 0.0
                cert = self._certify(w, Xw=self.Xr @ w)
            size = min(self.max_ws, max(2 * nz.size, FIRST_WS))
            rest = np.setdiff1d(S, nz)
            top = rest[np.argsort(-np.abs(cert.v[rest]), kind="stable")]
            S = np.sort(np.concatenate([nz, top[:max(size - nz.size, 0)]]))
        self._restart(w, S, cert.primal - cert.dual, cert.margins)

    def _screened(self, cert, w):
        """The features Gap Safe screening keeps at ``cert`` (and ``w``'s nonzeros)."""
        prob = self.problem
        eta = max(cert.primal - cert.dual, 1e-300)
        keep = ~gap_safe_mask(cert.v, self.colnorm, eta,
                              prob.loss.smoothness, prob.l1) & (self.colnorm > 0)
        return np.flatnonzero(keep | (w != 0))

    def _restart(self, w_full, S, eta, z):
        """The working set ``S`` at ``w_full`` (margins ``z``, a duality gap
        ``eta``), on a new central path: the QP's interior start, or the
        barrier's ``t = 2 m / eta`` and its ``u``."""
        prob = self.problem
        self.S = S.astype(np.int64)
        self.t = self._barrier_terms(S.size) / max(eta, 1e-300)
        self.w = w_full[self.S].copy()
        self.z = np.array(z, dtype=np.float64)
        if self.qp:
            self._set_qp(qp_start(self.w, self.z, prob.y, self.cw, prob.l1, QP_SLACK))
        else:
            self.u = self._central_u(self.w)
        self._last = None

    def _go_whole(self, cert):
        """A growing working set whose best gap has not halved in the last
        ``GROW_WINDOW`` iterations (after ``GROW_START``) is replaced by every
        feature screening keeps at ``cert`` (the iterate's before :meth:`_grow`,
        a valid certificate for screening), on a new central path from the
        iterate (once: a set screening does not enlarge goes on growing)."""
        gaps = self.grow_gaps
        gaps.append(float(cert.rel_gap))
        if len(gaps) <= GROW_START or min(gaps[-GROW_WINDOW:]) <= 0.5 * min(gaps[:-GROW_WINDOW]):
            return
        self.growing = False
        w_full = self.full_w()
        S = self._screened(cert, w_full)
        if S.size <= self.S.size:
            return
        self.gaps_from = len(self.gaps)      # the stall rule starts again on the new path
        self.cap = max(self.cap, S.size)
        self._restart(w_full, S, cert.primal - cert.dual, self.z)

    def _fits(self, size) -> bool:
        """Whether a working set of ``size`` features keeps the Newton matrix
        within ``max_ws`` (its dimension is at most ``min(size, n)``)."""
        return min(size, self.problem.n) <= self.max_ws

    def _set_qp(self, p):
        self.w, self.u, self.l1m, self.l2m, self.xi, self.nu = p

    def _qp_point(self):
        return QPPoint(self.w, self.u, self.l1m, self.l2m, self.xi, self.nu)

    def _central_u(self, w):
        """The barrier's minimizer in ``u`` for ``w`` at the current ``t``."""
        a = 1.0 / (self.t * self.problem.l1)
        return a + np.sqrt(a * a + w * w)

    def get_state(self):
        meta, arrays = super().get_state()
        meta["t"] = float(self.t)
        meta.update(cap=int(self.cap), growing=bool(self.growing),
                    grow_gaps=list(self.grow_gaps), cg_iterations=int(self.cg_iterations))
        arrays.update(S=self.S.copy(), w=self.w.copy(), u=self.u.copy(), z=self.z.copy())
        if self.qp:
            arrays.update(l1m=self.l1m.copy(), l2m=self.l2m.copy(), xi=self.xi.copy(),
                          nu=self.nu.copy())
        return meta, arrays

    def set_state(self, meta, arrays):
        super().set_state(meta, arrays)
        self.t = float(meta["t"])
        self.cap = int(meta["cap"])
        self.growing = bool(meta["growing"])
        self.grow_gaps = [float(g) for g in meta["grow_gaps"]]
        self.cg_iterations = int(meta.get("cg_iterations", 0))
        self.scale = 1.0
        self.S = np.array(arrays["S"], dtype=np.int64)
        self.w = np.array(arrays["w"], dtype=np.float64)
        self.u = np.array(arrays["u"], dtype=np.float64)
        if self.qp:
            self.l1m, self.l2m, self.xi, self.nu = (
                np.array(arrays[k], dtype=np.float64) for k in ("l1m", "l2m", "xi", "nu"))
        self._cols = None
        self.z = np.array(arrays["z"], dtype=np.float64)     # as the run accumulated it
        self._last = None

    def full_w(self, w=None):
        out = np.zeros(self.problem.d)
        out[self.S] = self.w if w is None else w
        return out

    # ------------------------------------------------------ certificate
    def _certify(self, w_full, Xw):
        """The exact certificate of ``w_full`` (margins ``Xw``): of the dual points
        ``alpha = -phi'(Xw) / s`` and, for the squared hinge, the QP's own ``alpha
        = y nu / (cw s)`` (:mod:`.barrier_qp`), the one of larger dual objective.
        Sets ``self.scale = 1 / s`` and keeps it as ``_last``.  For pure L1, ``s``
        comes from the certificate's own image ``v`` (:meth:`_feasible`)."""
        prob = self.problem
        derivs = [prob.loss.derivative(Xw, prob.y)]
        if self.qp and getattr(self, "nu", None) is not None:
            on = self.cw > 0
            g = np.zeros(prob.n)
            g[on] = -prob.y[on] * self.nu[on] / self.cw[on]     # alpha = y nu / cw
            derivs.append(g)
        best = None
        for g in derivs:
            cert, s = prob.certificate(w_full, -g, margins=Xw), 1.0
            if prob.lam == 0:
                cert, s = self._feasible(w_full, -g, Xw, cert)
            if best is None or cert.dual > best.dual:
                best, self.scale = cert, 1.0 / s
        self._last = best
        return best

    def _feasible(self, w_full, alpha, Xw, cert):
        """``(certificate, s)`` of ``alpha / s`` with ``||v(alpha / s)||_inf <=
        l1`` as the certificate computes ``v``: ``s`` from ``cert`` (of
        ``alpha``), raised while rounding leaves the image outside the ball
        (twice the excess each time, at most ``FEASIBLE_TRIES`` times): on
        columns of 1e5 (default_cc as given) ``v_j`` carries an absolute error
        of 1e-11, where ``l1`` is 4e-7 and the ball's slack 1e-12."""
        l1, s = self.problem.l1, 1.0
        for _ in range(FEASIBLE_TRIES):
            vmax = float(np.abs(cert.v).max(initial=0.0))
            if np.isfinite(cert.dual) or not vmax > l1:
                break
            # onto the ball, then twice the excess rounding left
            s *= (vmax if s == 1.0 else 2.0 * vmax - l1) / l1
            cert = self.problem.certificate(w_full, alpha / s, margins=Xw)
        return cert, s

    def _certify_iterate(self):
        """The certificate of the iterate, its margins recomputed (``X w``, one
        pass) and kept: the accumulated ``z + s X_S dw`` drifts by rounding, and
        a certificate never rests on margins the iterate carried."""
        w_full = self.full_w()
        self.z = np.asarray(self.Xr @ w_full, dtype=np.float64).ravel()
        return self._certify(w_full, self.z)

    def certificate(self):
        """The certificate of the iterate (:meth:`_certify`), or of its rounding
        (:meth:`_rounded`) when that is as good."""
        last = self._last
        if last is None or not np.array_equal(last.w[self.S], self.w):
            last = self._certify_iterate()
        self._note_gap(last.rel_gap)
        return self._rounded(last)

    def _rounded(self, cert):
        """The iterate with its smallest coefficients set to exactly zero: an
        interior point has no zero coefficient, and this is what makes the
        model sparse.  On the central path ``|w_j| / u_j = |v_j| / l1``, so a
        coefficient zero at the optimum (``|v_j*| < l1``) is ``|w_j| = 2 rho /
        ((1 - rho^2) t l1)`` with ``rho = |v_j| / l1``, falling like ``1 / t``,
        while one that stays tends to ``w_j*``.  Of the coefficients with
        ``|v_j| < l1``, in increasing ``|w_j|``, the longest run whose rounding
        keeps the relative gap (same dual point) at most the iterate's or
        ``tol`` is rounded (a bisection: a few certificate passes).  Tried once
        the gap is below ``ROUND_GAP``."""
        if not cert.rel_gap <= ROUND_GAP:
            return cert
        prob = self.problem
        v = np.abs(cert.v[self.S]) / max(self.scale, 1e-300)
        held = np.flatnonzero((v < prob.l1) & (self.w != 0))
        held = held[np.argsort(np.abs(self.w[held]), kind="stable")]
        best, lo, hi = cert, 0, held.size       # the longest prefix that certifies
        while lo < hi:
            k = (lo + hi + 1) // 2
            w = self.w.copy()
            w[held[:k]] = 0.0
            w_full = self.full_w(w)
            rounded = prob.certificate(w_full, cert.alpha, margins=self.Xr @ w_full)
            if rounded.rel_gap <= max(cert.rel_gap, self.tol):
                best, lo = rounded, k
            else:
                hi = k - 1
        return best

    # ------------------------------------------------------ linear algebra
    def _system(self, S=None):
        """The Newton system (:class:`.barrier_system.NewtonSystem`, or
        :class:`.barrier_system.CGNewtonSystem` above ``FULL_FLOPS``) of the
        working set (or of ``S``) on its columns: dense (Fortran) when dense
        enough, else CSC; made once per working set."""
        S = self.S if S is None else S
        if self._cols is not None and np.array_equal(self._cols[0], S):
            return self._cols[1]
        cols = self.Xc[:, S]
        if self.sparse:
            n, m = cols.shape
            if cols.nnz >= DENSE_MIN_DENSITY * n * m and n * m <= DENSE_MAX_ENTRIES:
                cols = np.asfortranarray(cols.toarray())
        system = NewtonSystem(cols)
        if system.flops > FULL_FLOPS:
            system = CGNewtonSystem(cols)
        self._cols = (S.copy(), system)
        return system

    # ------------------------------------------------------------ updates
    def _iterate(self):
        if self.qp:
            return self._iterate_qp()
        prob = self.problem
        lam, l1, t = prob.lam, prob.l1, self.t
        system, w, u, z = self._system(), self.w, self.u, self.z
        cols = system.cols
        g, h = self._psi(z)
        q = u * u - w * w
        r = u * u + w * w
        g_w = np.asarray(cols.T @ g).ravel() + t * lam * w + 2.0 * w / q
        g_u = t * l1 - 2.0 * u / q
        solve = system.factor(h, t * lam + 2.0 / r)
        if solve is None:
            self.stall = "step_collapse"
            return
        before = system.cg_iterations
        dw = solve(-g_w - 2.0 * u * w / r * g_u)
        self.cg_iterations += system.cg_iterations - before
        du = -(q * q * g_u - 4.0 * u * w * dw) / (2.0 * r)
        slope = float(g_w @ dw + g_u @ du)
        if not (np.isfinite(dw).all() and np.isfinite(du).all()) or not slope < 0:
            self.stall = "step_collapse"
            return
        xd = np.asarray(cols @ dw).ravel()
        s = self._line_search(w, u, z, dw, du, xd, slope)
        self.last_step = s
        if s < MIN_STEP:
            self.stall = "step_collapse"
            return
        self.w, self.u, self.z = w + s * dw, u + s * du, z + s * xd
        self.n_iter += 1
        cert = self._certify_iterate()
        eta = cert.primal - cert.dual
        if s >= MIN_STEP_T:
            self._grow(cert)
            if self.growing:
                self._go_whole(cert)
            if eta > 0:
                self.t = MU * max(self._barrier_terms(self.S.size) / eta, self.t)

    def _iterate_qp(self):
        """One primal-dual step on the squared hinge's QP (:mod:`.barrier_qp`)."""
        prob = self.problem
        system = self._system()
        before = system.cg_iterations
        out = qp_step(self._qp_point(), self.z, system.cols, prob.y, self.cw, prob.lam,
                      prob.l1, system.factor)
        self.cg_iterations += system.cg_iterations - before
        if out is None or not out[2] > MIN_STEP:
            self.stall = "step_collapse"
            return
        p, self.z, self.last_step = out
        self._set_qp(p)
        self.n_iter += 1
        self.t = 1.0 / max(qp_mu(p, self.z, prob.y), 1e-300)
        cert = self._certify_iterate()
        self._grow(cert)
        if self.growing:
            self._go_whole(cert)

    def _barrier_terms(self, m):
        """The barrier's terms, the central path's gap times ``t``: ``2 m``."""
        return 2.0 * max(m, 1)

    def _psi(self, z):
        """``(psi_i', psi_i'') = t cw_i (phi', phi'')`` at the margins ``z``."""
        prob, T = self.problem, self.t * self.cw
        return T * prob.loss.derivative(z, prob.y), T * prob.loss.second_derivative(z, prob.y)

    def _line_search(self, w, u, z, dw, du, xd, slope):
        """The Armijo step inside ``|w| < u``: the barrier objective's decrease
        is summed term by term, so a decrease below the rounding of the whole
        sum is still seen; a rise within that rounding is taken as none."""
        prob = self.problem
        t = self.t
        lo, hi = u - w, u + w
        dlo, dhi = du - dw, du + dw
        with np.errstate(divide="ignore", invalid="ignore"):
            lim = np.concatenate([np.where(dlo < 0, -lo / dlo, np.inf),
                                  np.where(dhi < 0, -hi / dhi, np.inf)])
        s = min(1.0, 0.99 * float(lim.min(initial=np.inf)))
        T, loss, y = t * self.cw, prob.loss, prob.y       # psi's values only (_psi)
        f0 = T * loss.value(z, y)
        noise = 1e-15 * (float(np.abs(f0).sum()) + float(np.abs(np.log(lo * hi)).sum()))
        for _ in range(HALVINGS):
            fs = T * loss.value(z + s * xd, y)
            change = float((fs - f0).sum()) + t * (prob.lam * (s * float(w @ dw)
                                                              + 0.5 * s * s * float(dw @ dw))
                          + prob.l1 * s * float(du.sum()))
            change -= float(np.log1p(s * dlo / lo).sum() + np.log1p(s * dhi / hi).sum())
            if change <= ARMIJO * s * slope + noise:
                return s
            s *= 0.5
        return 0.0

    def _grow(self, cert):
        """Adds the features outside ``S`` that violate their optimality condition
        (``|v_j| > l1``, above every ``|v_j|`` on ``S``), the largest first; when
        ``S`` is full, the features of ``S`` with ``|v_j| < l1`` and the smallest
        ``|w_j|`` (the first :meth:`_rounded` would set to zero) leave it, set to
        zero, to make room."""
        prob = self.problem
        v = np.abs(cert.v) / max(self.scale, 1e-300)     # the unscaled correlations
        inside = float(v[self.S].max(initial=0.0))
        out = np.ones(prob.d, dtype=bool)
        out[self.S] = False
        out &= (v > max(prob.l1, inside)) & (self.colnorm > 0)
        new = np.flatnonzero(out)
        if new.size == 0:
            return
        new = new[np.argsort(-v[new], kind="stable")]
        room = self.cap - self.S.size
        mu = qp_mu(self._qp_point(), self.z, prob.y) if self.qp else 0.0
        if new.size > room:
            vs = v[self.S]
            idle = np.flatnonzero(vs < prob.l1)
            drop = idle[np.argsort(np.abs(self.w[idle]), kind="stable")][:new.size - room]
            if drop.size:
                keep = np.ones(self.S.size, dtype=bool)
                keep[drop] = False
                self.S, self.w, self.u = self.S[keep], self.w[keep], self.u[keep]
                room += drop.size
                self.z = np.asarray(self._system().cols @ self.w, dtype=np.float64).ravel()
                if self.qp:      # the rows' slacks r = xi - a kept positive (r nu = mu)
                    self.l1m, self.l2m = self.l1m[keep], self.l2m[keep]
                    a = 1.0 - prob.y * self.z
                    self.xi = np.maximum(self.xi, a + mu / self.nu)
                self._last = None
        new = new[:room]
        if new.size == 0:
            return
        S = np.concatenate([self.S, new])
        order = np.argsort(S, kind="stable")
        self.S = S[order]
        self.w = np.concatenate([self.w, np.zeros(new.size)])[order]
        if self.qp:     # products l1m s1 = l2m s2 = mu, with l1m = l2m = l1 / 2
            u_new, half = 2.0 * mu / prob.l1, np.full(new.size, 0.5 * prob.l1)
            self.l1m = np.concatenate([self.l1m, half])[order]
            self.l2m = np.concatenate([self.l2m, half])[order]
        else:
            u_new = NEW_U * 2.0 / (self.t * prob.l1)
            self.t /= BACK_T
        self.u = np.concatenate([self.u, np.full(new.size, u_new)])[order]

    def trace_extras(self):
        return {"iterations": int(self.n_iter), "t": float(self.t),
                "working_set": int(self.S.size), "step": float(self.last_step),
                "cg_iterations": int(self.cg_iterations)}

    def result_extras(self):
        out = super().result_extras()
        out.update(working_set=int(self.S.size), barrier_t=float(self.t),
                   cg_iterations=int(self.cg_iterations))
        return out
