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

A screened column is not read at every check: its correlation is bounded from
the last one computed, ``v_j^ref`` at derivatives ``gu^ref`` (one of the last
``REFS`` checks' ``gu``, kept), by Cauchy-Schwarz in the weighted norm:

    |v_j(gu)| <= |v_j^ref| + ||x_j||_cw * dist,   dist^2 = sum_i (gu_i - gu_i^ref)^2 / cw_i.

The certificate needs the screened columns only through ``max_j |v_j|`` (the
scaling ``s`` of pure L1) or ``(|v_j| - l1)_+`` (elastic net): a column whose
bound is below the largest exact ``|v_j|`` (or ``l1``) changes neither, and
the others are read.  So every check is the exact certificate of the whole
problem, as if every column had been read (``Problem.certificate`` reproduces
it); the screened entries of ``Certificate.v`` hold the reference values,
within the bound.  When a reference slot is reused, the columns that referred
to it move their bound onto the new ``gu`` by the triangle inequality.  The
loops over the columns (bounds, reads, Gap Safe tests) are the compiled ones
of :mod:`primaldual.kernels.l1bounds`.
"""
from __future__ import annotations

import copy

import numpy as np

from ..._util import make_rng
from ...kernels.l1bounds import (ColBounds, new_reference, read_bounded, read_unscreened,
                                 screen_columns)
from ...kernels.l1cd import dual_sum, loss_terms, margins_of
from ...penalties import make_penalty
from ...problem import Certificate
from .screening import _SLACK, gap_safe_radius, l1_dual_scale
from .solver import SparseCDSolver, _DualPoint

__all__ = ["PathSparseCD", "sparse_path"]


class PathSparseCD(SparseCDSolver):
    """:class:`SparseCDSolver` re-targeted from one ``l1`` to the next (module docstring).

    :meth:`next_point` swaps the problem's ``l1`` and the warm start and keeps
    the columns, their norms, the work arrays and the reference correlations;
    :meth:`run` then solves that point.  With ``screening=False`` the same
    shared set-up and carried first certificate are used, every column read
    at every check."""

    #: the derivatives ``gu`` of the last REFS checks kept as references
    REFS = 8
    #: each point's state is exported only when read (:func:`sparse_path` drops it
    #: before the next point moves the solver on)
    state_after_run = True

    def setup(self):
        super().setup()
        cw, n, d = self.cols.cw, self.problem.n, self.problem.d
        self._inv_cw = np.where(cw > 0, 1.0 / np.where(cw > 0, cw, 1.0), 0.0)
        # reference correlations at w = 0 (one pass): l1_max is their largest |v_j|
        loss_terms(self.spec, self.cols, np.zeros(n), self.gu, self.hu)
        self._ring = np.zeros((self.REFS, n))
        self._ring[0] = self.gu
        self._slot, self._filled = 0, 1
        self.screened = self.colnorm == 0.0
        self._b = ColBounds(self.colnorm, np.zeros(d), np.zeros(d), np.zeros(d, np.int64),
                            np.zeros(d, dtype=bool), self.screened, np.zeros(self.REFS))
        read_unscreened(self.cols, self.gu, self._b, 0)
        self.l1_max = float(self._b.vabs.max(initial=0.0))
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

    def _bounds(self):
        """The kernels' arrays, ``screened`` being the solver's (the kernels update
        it in place; :meth:`init_state` and :meth:`set_state` assign a new one)."""
        b = self._b
        if self.screened is not b.screened:
            b.screened[:] = self.screened
            self.screened = b.screened
        return b

    def result_extras(self):
        """``screened``: the features Gap Safe screening removed at this point."""
        return {**super().result_extras(), "screened": np.flatnonzero(self.screened)}

    # ------------------------------------------------------ certificate
    def _check(self, full=True) -> Certificate:
        """The exact certificate of ``w`` on the whole problem (module docstring),
        reading the unscreened columns and the screened ones whose bound matters
        (``full`` changes nothing: every check is full)."""
        prob, cols, b = self.problem, self.cols, self._bounds()
        if self._use_carry:                      # the previous point's last check
            self._use_carry = False
            _, margins, gu, f_loss, exact = self._carry
            self.margins[:] = margins
            self.gu[:] = gu
            b.exact[:] = exact
        else:
            self.feature_accesses += margins_of(cols, self.w, self.margins)
            f_loss = loss_terms(self.spec, cols, self.margins, self.gu, self.hu)
            if self.opts.screening:
                self._new_reference()
            acc, _ = read_unscreened(cols, self.gu, b, self._slot)
            self.feature_accesses += acc
        # the inexact columns: read where the bound exceeds what the certificate uses
        acc, vmax = read_bounded(cols, self.gu, b, self._slot, prob.l1, prob.lam == 0.0)
        self.feature_accesses += acc
        s = l1_dual_scale(vmax, prob.l1) if prob.lam == 0.0 else 1.0
        self._scale = s
        gu = self.gu
        vs = b.vref / s
        primal = f_loss + prob.penalty.value(self.w)
        dual = dual_sum(self.spec, cols, gu, s) - prob.penalty.conjugate(vs)
        cert = Certificate(w=self.w.copy(), alpha=-gu / (cols.cw * s), primal=float(primal),
                           dual=float(dual), v=vs, margins=self.margins.copy())
        self._last = self._cert = cert
        self._plain = _DualPoint(gu, b.vref, s, cert.dual)     # read by _working_set
        self._carry = (cert.w, cert.margins, gu.copy(), f_loss, b.exact.copy())
        return cert

    def _new_reference(self):
        """This check's ``gu`` takes the oldest reference slot
        (:func:`~primaldual.kernels.l1bounds.new_reference`)."""
        held = self._filled == self.REFS
        self._slot, self._filled = (self._slot + 1) % self.REFS, min(self._filled + 1,
                                                                      self.REFS)
        new_reference(self._ring, self._filled, self._slot, held, self.gu, self._inv_cw,
                      self._b)

    def _screen(self, cert):
        """Gap Safe screening (:mod:`.screening`) of every unscreened column: by its
        bound where it was not read (the first check of a point), exactly where it
        was or where the bound does not decide (:func:`screen_columns`)."""
        prob = self.problem
        if not prob.l1 > 0:
            return
        r = gap_safe_radius(cert.gap, prob.loss.smoothness) * (1.0 + _SLACK)
        acc, _ = screen_columns(self.cols, self.gu, self._bounds(), self._slot, self._scale, r,
                                prob.l1, cert.v, self.w)
        self.feature_accesses += acc
        self._carry = self._carry[:4] + (self._b.exact.copy(),)


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
