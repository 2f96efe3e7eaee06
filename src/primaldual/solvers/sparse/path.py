"""An L1 path solved by one :class:`SparseCDSolver` whose set-up all points share.

Problem, for each ``l1`` of a decreasing sequence: ``min_w (1/W) sum_i c_i
phi(x_i . w; y_i) + lam/2 ||w||^2 + l1 ||w||_1`` (docs/sparse-models.md).

The data are validated, laid out by columns and their weighted norms
``||x_j||_cw`` computed once; each point starts from the previous ``w``, and
its first certificate is the previous point's last one re-read at the new
``l1`` (the same margins, loss derivatives ``gu`` and correlations
``v_j = -x_j . gu``: only the scaling ``s`` and the dual sum change), with
which Gap Safe screening removes features before any work (the sequential
rule, Ndiaye et al. 2017, Section 4; :mod:`.screening`).

A screened column is never read again while it stays screened.  Every check
bounds its correlation from a reference: with ``v_j^ref`` computed exactly
at derivatives ``gu^ref``, Cauchy-Schwarz in the weighted norm gives

    |v_j(gu)| <= |v_j^ref| + ||x_j||_cw * dist,   dist^2 = sum_i (gu_i - gu_i^ref)^2 / cw_i.

The certificate needs the screened columns only through ``max_j |v_j|`` (the
scaling ``s`` of pure L1) or ``(|v_j| - l1)_+`` (elastic net): a column whose
bound is below the largest exact ``|v_j|`` (or ``l1``) changes neither, and
the others are computed exactly.  So every check is the exact certificate of
the whole problem, as if every column had been read (``Problem.certificate``
reproduces it); the screened entries of ``Certificate.v`` hold the
reference values, within the bound.  The reference is refreshed by one pass
over all columns when the bounds would make a check read more than half of
them.
"""
from __future__ import annotations

import copy

import numpy as np

from ..._util import make_rng
from ...kernels.l1cd import correlations, dual_sum, loss_terms, margins_of
from ...penalties import make_penalty
from ...problem import Certificate
from .screening import _SLACK, gap_safe_radius, l1_dual_scale
from .solver import SparseCDSolver

__all__ = ["PathSparseCD", "sparse_path"]


class PathSparseCD(SparseCDSolver):
    """:class:`SparseCDSolver` re-targeted from one ``l1`` to the next (module docstring).

    :meth:`next_point` swaps the problem's ``l1`` and the warm start and keeps
    the columns, their norms, the work arrays and the reference correlations;
    :meth:`run` then solves that point.  With ``screening=False`` the same
    shared set-up and carried first certificate are used, every column read
    at every check."""

    def setup(self):
        super().setup()
        cw = self.cols.cw
        self._inv_cw = np.where(cw > 0, 1.0 / np.where(cw > 0, cw, 1.0), 0.0)
        self._ptr_len = np.diff(self.cols.indptr).astype(np.int64)
        self._nnz_all = max(int(self._ptr_len.sum()), 1)
        # reference correlations at w = 0 (one pass): l1_max is their largest |v_j|
        zeros = np.zeros(self.problem.n)
        self._f0 = loss_terms(self.spec, self.cols, zeros, self.gu, self.hu)
        self._gref = self.gu.copy()
        self._vref = np.zeros(self.problem.d)
        correlations(self.cols, self._gref, self.all_feats, self._vref)
        self.l1_max = float(np.abs(self._vref).max(initial=0.0))
        self._carry = None

    def next_point(self, l1, warm_start):
        """Point the solver at ``l1`` (from ``warm_start``, a coefficient vector
        or None); counters and the random generator start afresh, as in a
        separate :func:`~primaldual.solve`."""
        prob = copy.copy(self.problem)
        prob.penalty = make_penalty(prob.lam, float(l1), allow_pure_l1=True)
        self.problem = prob
        self.spec = self.spec._replace(l1=float(l1))
        self.warm_start = warm_start
        self.steps = 0
        self.feature_accesses = 0
        self.rng = make_rng(self.random_state)
        self.interrupted = False

    def init_state(self, warm_start):
        super().init_state(warm_start)
        c = self._carry
        self._use_carry = c is not None and np.array_equal(c[0], self.w)

    # ------------------------------------------------------ certificate
    def _check(self, full=True) -> Certificate:
        """The exact certificate of ``w`` on the whole problem (module docstring),
        reading the unscreened columns and the screened ones whose bound matters
        (``full`` changes nothing: every check is full)."""
        prob, cols = self.problem, self.cols
        if self._use_carry:                      # the previous point's last check
            self._use_carry = False
            _, margins, gu, f_loss, v, exact = self._carry
            self.margins[:] = margins
            self.gu[:] = gu
            v, exact = v.copy(), exact.copy()
        else:
            self.feature_accesses += margins_of(cols, self.w, self.margins)
            f_loss = loss_terms(self.spec, cols, self.margins, self.gu, self.hu)
            v = np.zeros(prob.d)
            exact = ~self.screened
            self.feature_accesses += correlations(cols, self.gu, np.flatnonzero(exact), v)
        if not exact.all():
            thr = prob.l1
            if prob.lam == 0.0:
                thr = max(thr, float(np.abs(v[exact]).max(initial=0.0)))
            exact = self._settle(v, exact, self._upper() > thr)
        s = 1.0
        if prob.lam == 0.0:
            s = l1_dual_scale(np.abs(v[exact]).max(initial=0.0), prob.l1)
        self._scale = s
        gu = self.gu
        vs = np.where(exact, v, self._vref) / s
        primal = f_loss + prob.penalty.value(self.w)
        dual = dual_sum(self.spec, cols, gu, s) - prob.penalty.conjugate(vs)
        cert = Certificate(w=self.w.copy(), alpha=-gu / (cols.cw * s), primal=float(primal),
                           dual=float(dual), v=vs, margins=self.margins.copy())
        self._last = self._cert = cert
        self._part = None
        self._exact = exact
        self._carry = (self.w.copy(), self.margins.copy(), gu.copy(), f_loss, v, exact)
        return cert

    def _upper(self):
        """``|v_j^ref| + ||x_j||_cw dist`` at the current ``gu`` for every column
        (module docstring), with the rounding slack of :mod:`.screening`."""
        diff = self.gu - self._gref
        dist = float(np.sqrt(np.dot(diff * diff, self._inv_cw)))
        return (np.abs(self._vref) + self.colnorm * dist) * (1.0 + _SLACK)

    def _settle(self, v, exact, want):
        """Compute exactly the columns ``want & ~exact`` (into ``v``), or all of them
        with a new reference when those hold more than half the entries.  Returns
        the mask of exact columns."""
        need = want & ~exact
        if not need.any():
            return exact
        if 2 * int(self._ptr_len[need].sum()) > self._nnz_all:
            self.feature_accesses += correlations(self.cols, self.gu, self.all_feats, v)
            self._gref = self.gu.copy()
            self._vref = v.copy()
            return np.ones(self.problem.d, dtype=bool)
        self.feature_accesses += correlations(self.cols, self.gu, np.flatnonzero(need), v)
        return exact | need

    def _screen(self, cert):
        """Gap Safe screening (:mod:`.screening`) of every unscreened column: by its
        bound where it was not read (the first check of a point), exactly where it
        was or where the bound does not decide."""
        prob = self.problem
        open_ = ~self._exact & ~self.screened
        if open_.any():
            r = gap_safe_radius(cert.gap, prob.loss.smoothness) * (1.0 + _SLACK)
            s = self._scale
            bound_ok = self._upper() / s + r * self.colnorm < prob.l1 * (1.0 - _SLACK)
            new = open_ & bound_ok
            self.screened |= new
            self.w[new] = 0.0
            w, margins, gu, f_loss, v, _ = self._carry        # v: the raw correlations
            exact = self._settle(v, self._exact, open_ & ~bound_ok)
            read = exact & ~self._exact
            cert.v[read] = v[read] / s
            self._exact = exact
            self._carry = (w, margins, gu, f_loss, v, exact)
        super()._screen(cert)


def sparse_path(problem, l1s=None, n_l1s=100, eps=1e-3, *, tol=1e-6, max_epochs=1000,
                random_state=0, warm_start=True, **options):
    """Solve ``problem`` (its ``l1`` is ignored) for each ``l1`` of ``l1s``, in order,
    with one :class:`PathSparseCD` (module docstring).

    ``l1s`` defaults to ``l1_max * eps**(k/(n_l1s-1))``, ``k = 0..n_l1s-1``, with
    ``l1_max = max_j |v_j|`` at ``w = 0`` (the exact breakpoint above which
    ``w = 0``).  ``warm_start``: each point starts from the previous ``coef``
    (else from 0).  ``options``: those of :class:`SparseCDSolver`.  Returns
    ``(l1s, results)``, one :class:`~primaldual.SolveResult` a point (its
    ``state`` dropped)."""
    solver = PathSparseCD(problem, tol=tol, max_epochs=max_epochs,
                          random_state=random_state, **options)
    if l1s is None:
        if not solver.l1_max > 0:
            raise ValueError("l1_max is 0 for this data and loss: w = 0 is already "
                             "optimal for every l1; there is no path to compute")
        l1s = solver.l1_max * np.geomspace(1.0, float(eps), int(n_l1s)) if n_l1s > 1 \
            else np.array([solver.l1_max])
    results, prev = [], None
    for l1 in l1s:
        solver.next_point(l1, prev if warm_start else None)
        res = solver.run()
        res.state = None
        results.append(res)
        prev = res.coef
    return np.asarray(l1s, dtype=np.float64), results
