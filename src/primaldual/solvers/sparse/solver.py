"""The working-set proximal Newton solver for sparse (L1 and elastic-net) models."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ...kernels.l1cd import (CgWork, ColsView, L1Spec, NewtonWork, WsGram, clip_to_domain,
                             column_norms, correlations, csr_columns, dual_sum, loss_terms,
                             margins_of, ws_solve)
from ...kernels.status import STATUS_NONFINITE, STATUS_OK
from ...problem import Certificate
from .._base import Solver, register
from .._options import CommonOptions, flag, number
from ...kernels.l1bounds import (SLACK, cols_to_rows, filter_rows, row_counts,
                                 screen_features, unsure_screened)
from .screening import gap_safe_radius, l1_dual_scale

__all__ = ["SparseCDOptions", "SparseCDSolver", "csc_columns"]


class _DualPoint(NamedTuple):
    """A dual point ``alpha = -g / (cw s)`` of :class:`SparseCDSolver`'s checks:
    ``v`` its correlations ``-X' g`` (unscaled; read on the features unscreened
    when it was made, and those :meth:`~SparseCDSolver._complete` read), ``s``
    its scaling, ``dual`` its exact dual objective."""
    g: np.ndarray
    v: np.ndarray
    s: float
    dual: float


def csc_columns(problem):
    """The problem's data by columns, float64 CSC (sorted indices), as the
    kernels of :mod:`primaldual.kernels.l1cd` read it."""
    return columns_and_norms(problem)[0]


def columns_and_norms(problem):
    """:func:`csc_columns` and the weighted column norms
    (:func:`~primaldual.kernels.l1cd.column_norms`).  A float64 CSR matrix in
    canonical form is transposed by :func:`~primaldual.kernels.l1cd.csr_columns`
    (the norms summed on the way); anything else by ``scipy.sparse``."""
    X, d = problem.X, problem.d
    cw = problem.sample_weight / problem.W
    if (sp.issparse(X) and X.format == "csr" and X.dtype == np.float64
            and X.has_canonical_format):
        it = np.int32 if max(X.nnz, problem.n) < 2**31 - 1 else np.int64
        data, idx = np.empty(X.nnz), np.empty(X.nnz, it)
        ptr, norm = np.empty(d + 1, it), np.empty(d)
        csr_columns(X.data, X.indices, X.indptr, cw, data, idx, ptr, norm)
        return ColsView(data, idx, ptr, problem.y, cw), norm
    C = X.tocsc() if sp.issparse(X) else sp.csc_matrix(np.asarray(X))
    C = C.astype(np.float64, copy=False)
    C.sort_indices()
    cols = ColsView(C.data, C.indices, C.indptr, problem.y, cw)
    norm = np.empty(d)
    column_norms(cols, norm)
    return cols, norm


@dataclass(frozen=True)
class SparseCDOptions(CommonOptions):
    """The options of :class:`SparseCDSolver` (see its docstring)."""

    solver_name = "l1cd"
    screening: bool = flag(True, doc="Gap Safe screening of features at every check")
    working_set: bool = flag(True, doc="solve on a working set of features "
                                       "(False: on every unscreened feature)")
    p0: int = number(10, integer=True, low=0.0, doc="size of the first working set")
    inner_ratio: float = number(0.01, low=0.0, high=1.0, high_strict=True,
                                doc="a working set is solved to this fraction of the "
                                    "full duality gap")
    max_newton: int = number(50, integer=True, low=0.0,
                             doc="proximal Newton steps per working set")
    max_cd_passes: int = number(10, integer=True, low=0.0,
                                doc="coordinate-descent passes per Newton direction")


@register
class SparseCDSolver(Solver):
    """Working-set proximal Newton with Gap Safe screening, for L1 and elastic net.

    Problem: ``min_w P(w) = (1/W) sum_i c_i phi(x_i . w; y_i) + lam/2 ||w||^2
    + l1 ||w||_1`` with ``lam >= 0`` (pure L1 allowed) and a smooth loss
    (logistic, squared_hinge, squared, smooth_hinge, squared_epsilon_insensitive),
    docs/sparse-models.md.

    Method: an outer loop of checks.  Each check computes, from ``w``, the
    dual point ``alpha_i = -phi'(x_i . w) / s`` with ``s = max(1, ||v||_inf /
    l1)`` for ``lam = 0`` (the rescaling of Fercoq, Gramfort & Salmon 2015,
    eq. 9; ``s = 1`` for ``lam > 0``), the best point of the earlier checks
    and, for ``lam = 0``, celer's extrapolated dual point, keeps the one of
    largest dual objective (:meth:`_check`) and its exact duality gap,
    removes the features that Gap Safe screening proves zero at the optimum
    (:mod:`.screening`; Ndiaye et al. 2017, Theorem 6), and builds a working
    set: the nonzero features, those violating their optimality condition
    ``|v_j| <= l1``, and those nearest their dual constraint,
    ``(l1 - |v_j|) / ||x_j||`` smallest (Massias, Gramfort & Salmon 2018,
    celer, eq. 8), at least ``p0`` and twice the support (skglm's rule), doubled
    when a check does not lower the gap by 10%.  On the working set, proximal Newton steps
    (newGLMNET, Yuan, Ho & Lin 2012, Algorithm 3: coordinate descent on the
    quadratic model in a random order each pass, Armijo line search) run until the restricted duality gap
    is ``inner_ratio`` times the full one.  For the squared loss the model is
    exact and this is coordinate descent (glmnet).

    Certificate: the kept dual point with ``w``; ``primal``, ``dual`` and
    ``gap`` are exact for that pair (``Problem.certificate`` reproduces them).
    A pass is ``feature_accesses / nnz``.

    Options
    -------
    The fields of :class:`SparseCDOptions`: ``screening`` (default True),
    ``working_set`` (True), ``p0`` (10), ``inner_ratio`` (0.01),
    ``max_newton`` (50), ``max_cd_passes`` (10).
    ``warm_start`` is a SolveResult or a coefficient vector (d,).  ``max_epochs``
    defaults to 20000 when ``l1 > 0`` (:meth:`default_epochs`).
    """

    name = "l1cd"
    summary = ("working-set proximal Newton / coordinate descent with Gap Safe screening "
               "for L1 and elastic-net models, lam >= 0 (newGLMNET, celer)")
    requires = ("smooth",)
    options_class = SparseCDOptions
    supports_l1 = True
    supports_pure_l1 = True
    default_max_epochs = 1000
    #: the state is exported only when read (nothing moves the solver after its run)
    state_after_run = True

    @classmethod
    def default_epochs(cls, problem):
        """20000 passes for a problem with ``l1 > 0`` (nearly degenerate sparse
        models need thousands to certify 1e-6); ``default_max_epochs`` as a
        leg of ``solver="auto"`` on an ``l1 = 0`` problem."""
        return 20000 if problem.l1 > 0 else cls.default_max_epochs

    def setup(self):
        prob = self.problem
        self.cols, self.colnorm = columns_and_norms(prob)
        self.spec = L1Spec(int(prob.loss.code), float(prob.loss.param), float(prob.lam),
                           float(prob.l1))
        self.all_feats = np.arange(prob.d, dtype=np.int64)
        self.gu = np.empty(prob.n)
        self.hu = np.empty(prob.n)
        self.xdelta = np.empty(prob.n)
        self._xp = np.empty(prob.n)
        self._xd0 = np.empty(prob.n)
        self._no_gram = WsGram(np.empty(0), np.empty(0, np.int32),
                               np.zeros(prob.n + 1, np.int64), np.empty((0, 0)), np.empty(0))
        self._no_rows = np.zeros(1, np.int64)     # WsGram.indptr: rows not built
        self._rows_buf = None
        self._rows_of = None      # [working set, cost of its Hessian, rows built]

    # ------------------------------------------------------------ state
    def init_state(self, warm_start):
        prob = self.problem
        w = self.warm_start_coef()
        self.screened = self.colnorm == 0.0      # empty columns: w_j = 0 at the optimum
        if w is None:
            self.w = np.zeros(prob.d)
        else:
            self.w = w.copy()
            self.w[self.screened] = 0.0
        # a bound on |v_j(alpha*)| for each screened feature (0: an empty column)
        self.bound = np.zeros(prob.d)
        self.ws_size = int(self.opts.p0)
        self.outer = 0
        self.done = False
        self.stalled = False
        self.margins = np.empty(prob.n)
        self._gram_first = False   # the last working set ended on the dense Hessian
        self._cert = self._last = None
        self._terms = np.nan       # the loss sum whose terms gu, hu hold (_check)
        self._reset_duals()

    def get_state(self):
        meta = {"ws_size": int(self.ws_size), "outer": int(self.outer),
                "done": bool(self.done)}
        arrays = {"w": self.w.copy(), "screened": self.screened.copy(),
                  "bound": self.bound.copy(),
                  "dual_ring": np.array(self._gring).reshape(-1, self.problem.n)}
        if self._top is not None:      # the best dual point so far (_check)
            arrays.update(dual_top_g=self._top.g.copy(), dual_top_v=self._top.v.copy(),
                          dual_top_sd=np.array([self._top.s, self._top.dual]))
        return meta, arrays

    def set_state(self, meta, arrays):
        self.w = np.array(arrays["w"], dtype=np.float64)
        self.screened = np.array(arrays["screened"], dtype=bool)
        self.bound = np.array(arrays["bound"], dtype=np.float64) if "bound" in arrays \
            else np.where(self.colnorm == 0.0, 0.0, np.inf)
        self.ws_size = int(meta["ws_size"])
        self.outer = int(meta["outer"])
        self.done = bool(meta["done"])
        self.stalled = False
        self.margins = np.empty(self.problem.n)
        self._gram_first = False
        self._cert = self._last = None
        self._terms = np.nan
        self._reset_duals()
        ring = [np.array(g, dtype=np.float64) for g in arrays.get("dual_ring", ())]
        self._gring = ring[:-1]        # the check below gives back the last one
        if "dual_top_g" in arrays:
            s, dual = (float(x) for x in arrays["dual_top_sd"])
            self._top = _DualPoint(np.array(arrays["dual_top_g"], dtype=np.float64),
                                   np.array(arrays["dual_top_v"], dtype=np.float64), s, dual)
        # the cached certificate of w, as the uninterrupted run holds it (not counted
        # again: that run counted it when it made it).  A state taken at a check
        # (a checkpoint) ends its ring with this w's derivatives, which the check
        # appends again: the ring and the kept point are then that run's
        counted = self.feature_accesses
        self._check(full=True)
        self.feature_accesses = counted
        if ring and not np.array_equal(self._gring[-1], ring[-1]):
            self._gring.insert(len(self._gring) - 1, ring[-1])   # taken between checks
            del self._gring[:-self.EXTRAPOLATE]

    def _reset_duals(self):
        # the dual point of the last fresh check's w, the best point so far, and
        # the last checks' loss derivatives (for :meth:`_extrapolated`)
        self._plain = self._top = None
        self._gring = []

    @property
    def epochs(self):
        return self.feature_accesses / max(self.problem.nnz, 1)

    # ------------------------------------------------------ certificate
    def _check(self, full=True) -> Certificate:
        """The certificate of ``w`` (class docstring): fresh margins from the nonzero
        columns, the dual point of ``w`` (:meth:`_point`; its correlations ``v``
        over the unscreened features), for pure L1 also the extrapolated point
        (:meth:`_extrapolated`) and the best point so far; the one of largest
        dual objective is kept (any feasible point bounds the optimum: weak
        duality).  That is the certificate of the problem restricted to the
        unscreened features (whose optimum is the same).  ``full``: made that
        of the whole problem (:meth:`_complete`).  Kept as ``_last`` (and
        ``_cert`` when full)."""
        prob, cols = self.problem, self.cols
        last = self._last
        if self._plain is not None and last is not None and np.array_equal(last.w, self.w):
            primal, cands = last.primal, [self._plain]     # w unchanged: reused
        else:
            screened = bool(self.screened.any())
            feats = np.flatnonzero(~self.screened) if screened else self.all_feats
            self.feature_accesses += margins_of(cols, self.w, self.margins)
            f_loss = loss_terms(self.spec, cols, self.margins, self.gu, self.hu)
            self._terms = f_loss        # gu, hu and f_loss of these margins
            primal = float(f_loss + prob.penalty.value(self.w))
            self._plain = self._point(self.gu.copy(), feats)
            cands = [self._plain]
            if prob.lam == 0.0:
                self._gring.append(self._plain.g)
                del self._gring[:-self.EXTRAPOLATE]
                acc = self._extrapolated(feats)
                if acc is not None:
                    cands.append(acc)
        if self._top is not None:
            cands.append(self._top)
        cands.sort(key=lambda p: -p.dual)
        if full and self.screened.any():
            best = None
            for p in cands:          # completing lowers a dual: the best completed one
                if best is not None and best.dual >= p.dual:
                    break
                p = self._complete(p, primal)
                if best is None or p.dual > best.dual:
                    best = p
        else:
            best = cands[0]
        self._top = best
        cert = Certificate(w=self.w.copy(), alpha=-best.g / (cols.cw * best.s),
                           primal=primal, dual=best.dual, v=best.v / best.s,
                           margins=self.margins.copy())
        self._last = cert
        if full or not self.screened.any():
            self._cert = cert
        return cert

    def _point(self, g, feats, v=None):
        """The dual point ``alpha = -g / (cw s)`` (``s = max(1, ||v||_inf / l1)``
        for ``lam = 0``, else 1) from its correlations ``v_j = -x_j . g`` read
        on ``feats`` (added to ``v`` when given)."""
        prob = self.problem
        if v is None:
            v = np.zeros(prob.d)
        self.feature_accesses += correlations(self.cols, g, feats, v)
        s = 1.0
        if prob.lam == 0.0:
            s = l1_dual_scale(np.abs(v).max(initial=0.0), prob.l1)
        dual = dual_sum(self.spec, self.cols, g, s) - prob.penalty.conjugate(v / s)
        return _DualPoint(g, v, s, float(dual))

    def _complete(self, p, primal):
        """The point ``p`` made a certificate of the whole problem: the screened
        columns that :meth:`_confirm` cannot keep inside the box at its gap are
        read (``p`` is unchanged when none is)."""
        read = self._confirm(primal - p.dual)
        if not read.size:
            return p
        return self._point(p.g, read, p.v.copy())

    def _extrapolated(self, feats):
        """Celer's dual extrapolation (Massias, Gramfort & Salmon 2018, Sec. 3;
        JMLR 2020, eq. 12) from the last ``EXTRAPOLATE`` checks' ``g = cw
        phi'(X w)``: ``U`` their successive differences, ``z = (U U')^{-1} 1``,
        ``c = z / sum z``, ``g_acc = sum_k c_k g_k`` over all but the newest,
        clipped into the loss's dual domain (:func:`clip_to_domain`), as a
        :meth:`_point`; None until the ring is full or when ``U U'`` is
        singular."""
        if len(self._gring) < self.EXTRAPOLATE:
            return None
        R = np.stack(self._gring)
        U = np.diff(R, axis=0)
        try:
            z = np.linalg.solve(U @ U.T, np.ones(U.shape[0]))
        except np.linalg.LinAlgError:
            return None
        if not (np.all(np.isfinite(z)) and z.sum() != 0.0):
            return None
        g = (z / z.sum()) @ R[:-1]
        clip_to_domain(self.spec, self.cols, g)
        return self._point(g, feats)

    def _confirm(self, gap):
        """The screened features whose correlation at the dual point of a
        certificate of the restricted problem with gap ``gap`` may leave the box
        ``|v_j| <= l1``.  The restricted and the whole problem share their dual
        optimum ``alpha*`` (screening removes only features zero at the
        optimum), both duals are ``1/L``-strongly concave, so the dual point is
        within ``r = sqrt(2 L gap)`` of ``alpha*`` (:mod:`.screening`), and
        ``|v_j(alpha)| <= |v_j(alpha*)| + r ||x_j||_cw <= bound_j + r
        ||x_j||_cw``, ``bound_j`` the bound on ``|v_j(alpha*)|`` recorded when
        ``j`` was screened (:meth:`_screen`)."""
        prob = self.problem
        r = gap_safe_radius(gap, prob.loss.smoothness) * (1.0 + SLACK)
        out = np.empty(prob.d, dtype=np.int64)
        k = unsure_screened(self.screened, self.bound, self.colnorm, r,
                            prob.l1 * (1.0 - SLACK), out)
        return out[:k]

    def certificate(self):
        if self._cert is None or self._last is not self._cert:
            return self._check(full=True)
        return self._cert

    # ------------------------------------------------------------ steps
    def _screen(self, cert):
        """Remove the features Gap Safe screening proves zero (w_j set to 0;
        :func:`~primaldual.solvers.sparse.screening.gap_safe_mask`'s test, in one
        compiled loop), recording ``|v_j(alpha*)| <= |v_j(alpha)| + r ||x_j||_cw``
        (< l1) for :meth:`_confirm`."""
        prob = self.problem
        if not prob.l1 > 0:
            return
        r = gap_safe_radius(cert.gap, prob.loss.smoothness) * (1.0 + SLACK)
        screen_features(cert.v, self.colnorm, r, prob.l1 * (1.0 - SLACK), self.screened,
                        self.w, self.bound)

    def _working_set(self, cert):
        free = np.flatnonzero(~self.screened)
        if not self.opts.working_set or free.size <= self.ws_size:
            return free
        nonzero = self.w[free] != 0.0
        plain = self._plain              # the dual point of w (the gradient's)
        vf = np.abs(plain.v[free])
        # zero features whose optimality condition |v_j| <= l1 fails (v before scaling)
        violators = int(np.count_nonzero(~nonzero & (vf > self.problem.l1)))
        vf /= plain.s
        support = int(nonzero.sum())
        size = min(free.size, max(self.ws_size, 2 * support, support + violators))
        score = (self.problem.l1 - vf) / self.colnorm[free]
        score[nonzero] = -np.inf
        pick = np.argpartition(score, size - 1)[:size]
        return np.sort(free[pick])

    def _gram(self, ws):
        """Room for the working set's dense Hessian when forming and using it
        costs less than ~10 passes of column coordinate descent over the
        working set (``sum_i nnz_i(ws)^2 / 2 + 50 |ws|^2 <= 20 nnz(ws)``, at most
        ``MAX_GRAM`` features; the row counts from the columns,
        :func:`~primaldual.kernels.l1bounds.row_counts`), else an empty
        :class:`WsGram`.  Sets ``_gram_cheap`` when that cost is at most
        ``GRAM_FIRST nnz(ws)``: the directions then come from the dense Hessian
        from the first Newton step, and the working set's rows
        (:meth:`_ws_rows`, kept while the working set does not change) are
        built now; otherwise only when :func:`ws_solve` asks for them."""
        self._gram_cheap = False
        k = ws.shape[0]
        cols, prob = self.cols, self.problem
        nnz_ws = int(np.sum(cols.indptr[ws + 1] - cols.indptr[ws]))
        if k <= self.MAX_GRAM and 50 * k * k <= self.GRAM_COST * nnz_ws:
            if self._rows_of is None or not np.array_equal(self._rows_of[0], ws):
                if self._rows_buf is None:
                    self._rows_buf = (np.empty(prob.nnz), np.empty(prob.nnz, np.int32),
                                      np.empty(prob.n + 1, np.int64))
                sq, acc = row_counts(cols, ws, self._rows_buf[2][:prob.n])
                self.feature_accesses += acc
                self._rows_of = [ws.copy(), sq / 2, False]     # ws, cost, rows built
            cost = self._rows_of[1] + 50 * k * k
            if cost <= self.GRAM_COST * nnz_ws:
                self._gram_cheap = cost <= self.GRAM_FIRST * nnz_ws
                if self._gram_cheap or self._gram_first:
                    return self._built_gram(ws, nnz_ws)
                data, idx, _ = self._rows_buf
                return WsGram(data, idx, self._no_rows, np.empty((k, k)), np.empty(k))
        return self._no_gram

    def _built_gram(self, ws, nnz_ws):
        """:meth:`_gram`'s room with the working set's rows built."""
        data, idx, ptr = self._rows_buf
        if not self._rows_of[2]:
            self.feature_accesses += self._ws_rows(ws, nnz_ws, data, idx, ptr)
            self._rows_of[2] = True
        k = ws.shape[0]
        return WsGram(data, idx, ptr, np.empty((k, k)), np.empty(k))

    def _ws_rows(self, ws, nnz_ws, data, idx, ptr):
        """Fills ``data, idx, ptr`` with the working set by rows (local column
        indices increasing along each row); returns the entries read.  From the
        rows of ``X`` (:func:`~primaldual.kernels.l1bounds.filter_rows`: every
        entry read in order) when ``X`` is CSR in canonical form and the working
        set holds at least ``1 / ROWS_SHARE`` of its entries; else transposed
        from the working set's columns (only its entries read, but written
        scattered: measured 5-30 ns an entry on a9a against about 1 ns)."""
        prob = self.problem
        X = prob.X
        if (sp.issparse(X) and X.has_canonical_format
                and self.ROWS_SHARE * nnz_ws >= prob.nnz):
            local = np.full(prob.d, -1, dtype=np.int64)
            local[ws] = np.arange(ws.shape[0])
            return filter_rows(X.data, X.indices, X.indptr, local, data, idx, ptr)
        return cols_to_rows(self.cols, ws, prob.n, data, idx, ptr)

    #: the checks whose loss derivatives make the extrapolated dual point (celer's K)
    EXTRAPOLATE = 5
    #: the working set's rows are filtered from X's rows when it holds at least
    #: 1 / ROWS_SHARE of the entries
    ROWS_SHARE = 4
    #: conjugate-gradient products refining a direction (0: none) and their
    #: relative residual
    CG_ITERS = 100
    CG_RTOL = 1e-3
    #: ... loosened to ``CG_ADAPT sqrt(stop / gap)`` on the last working set when
    #: its gap needs less (:func:`~primaldual.kernels.l1cd.ws_solve`; measured:
    #: fewer passes on 6 of the 54 benchmark cells, more on none, where loosening
    #: every working set took more on news20's squared hinge; 0: never)
    CG_ADAPT = 0.3
    #: inner coordinate descent stops when a pass's largest step is this share of the first
    ETA = 0.5
    #: a working set is solved to at most this share of the tolerance's gap
    FINISH = 0.25
    #: the working set doubles when a check leaves more than this share of the gap
    GROW = 0.9
    #: the largest working set given a dense Hessian (8 * 2000^2 bytes = 32 MB)
    MAX_GRAM = 2000
    #: the dense Hessian is used when forming it and 50 passes over it cost at most
    #: this many reads of the working set's columns
    GRAM_COST = 20
    #: ... and from a working set's first Newton step when that cost is at most this
    #: many reads (else from the step after a direction by columns that took
    #: ``_GRAM_PASSES`` passes: measured faster on mushrooms and agaricus)
    GRAM_FIRST = 10
    #: Newton steps of a working set that form the dense Hessian afresh (all of
    #: them: a stale Hessian measured slower on a9a and reuters)
    GRAM_REFRESH = 1000

    def _solve_ws(self, ws, stop_gap, budget, gap0=np.inf, final=False):
        """Proximal Newton on the working set ``ws`` to the restricted gap
        ``stop_gap`` (:func:`~primaldual.kernels.l1cd.ws_solve`), ``gap0`` the
        full gap at the start; ``final``: the last working set (``stop_gap`` the
        finish), whose conjugate gradients are loosened to what the gap still
        needs (``CG_ADAPT``).  Returns the Newton steps taken."""
        k = ws.shape[0]
        seed = np.array([self.rng.integers(1, 2**63)], dtype=np.uint64)
        work = NewtonWork(self.gu, self.hu, self.xdelta, np.empty(k), np.empty(k),
                          np.empty(k), np.zeros(k, dtype=np.bool_), np.zeros(k),
                          np.arange(k, dtype=np.int64), seed)
        # margins of the current w: the last check's, unless screening zeroed some
        # coefficients since; so are the loss terms gu, hu and their sum, unless a
        # working set ran since (its line search may leave a rejected trial's)
        last = self._last
        f_loss = self._terms
        if last is None or not np.array_equal(last.w, self.w):
            self.feature_accesses += margins_of(self.cols, self.w, self.margins)
            f_loss = np.nan
        self._terms = np.nan
        ws = ws.astype(np.int64)
        cg = CgWork(np.empty(k, np.int64), np.empty(k), np.empty(k), np.empty(k),
                    np.empty(k), np.empty(k), self._xp, self._xd0)
        gram = self._gram(ws)
        first = bool(self._gram_first or self._gram_cheap)
        steps = 0
        while True:
            status, s, acc, _, used = ws_solve(
                self.spec, self.cols, ws, self.w, self.margins, work, gram, cg,
                int(self.opts.max_newton) - steps, float(stop_gap),
                int(self.opts.max_cd_passes), self.ETA, self.GRAM_REFRESH,
                max(int(budget), 1), self.CG_ITERS, self.CG_RTOL, first,
                self.CG_ADAPT if final else 0.0,
                float(gap0) if steps == 0 else np.inf, f_loss)
            f_loss = np.nan
            steps += s
            budget -= acc
            self.feature_accesses += acc
            if used != 2 or status != STATUS_OK or steps >= int(self.opts.max_newton):
                break
            nnz_ws = int(np.sum(self.cols.indptr[ws + 1] - self.cols.indptr[ws]))
            gram, first = self._built_gram(ws, nnz_ws), True
        if gram.H.shape[0] > 0:    # the next working set starts where this one ended
            self._gram_first = used >= 1
        self.steps += steps
        if status == STATUS_NONFINITE:
            raise FloatingPointError(
                f"non-finite objective in solver='l1cd' after {self.outer} checks: the "
                f"data are too extreme for double precision; scale the columns or rows")
        return steps

    def advance(self, n_epochs, deadline):
        prob = self.problem
        target = self.feature_accesses + max(n_epochs, 0.0) * max(prob.nnz, 1)
        while self.feature_accesses < target and not self.done:
            cert = self._last if self._last is not None else self.certificate()
            if cert.rel_gap <= self.tol and cert is not self._cert:
                cert = self._check(full=True)          # confirm on the whole problem
            if cert.rel_gap <= self.tol:
                self.done = True
                break
            if self.opts.screening:
                self._screen(cert)
            ws = self._working_set(cert)
            budget = self.max_epochs * max(prob.nnz, 1) - self.feature_accesses
            # no finer than the tolerance needs (a working set holding the support
            # leaves a full gap close to its restricted one)
            finish = self.FINISH * self.tol * abs(cert.primal)
            stop = max(self.opts.inner_ratio * cert.gap, finish)
            moved = self._solve_ws(ws, stop, budget, cert.gap, stop == finish)
            self.outer += 1
            new = self._check(full=not self.opts.screening)
            if new.gap > self.GROW * cert.gap:
                if ws.size >= int((~self.screened).sum()) and not moved:
                    self.stalled = True          # every feature in, and no step descends
                    break
                self.ws_size = min(2 * max(self.ws_size, ws.size), prob.d)
            if deadline is not None and time.perf_counter() >= deadline:
                break

    def trace_extras(self):
        return {"checks": int(self.outer), "screened": int(np.count_nonzero(self.screened)),
                "ws_size": int(self.ws_size), "support": int(np.count_nonzero(self.w))}
