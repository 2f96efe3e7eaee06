"""The Crammer-Singer multiclass SVM by the sequential dual method (LIBLINEAR
``-s 4``), certified by its own dual iterate (docs/multiclass-models.md).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..kernels.multiclass import (CSActive, CSAverage, CSRows, CSWork, cs_certificate,
                                  cs_epochs)
from ..kernels.status import STATUS_OK
from ..multiclass import FEAS_TOL
from ..problem import Certificate
from ._multiclass_base import MulticlassDualSolver
from ._options import CommonOptions, flag, number
from ._schedule import CHECK_PASS_COST
from .multinomial import _multiclass_eval

__all__ = ["CrammerSingerOptions", "CrammerSingerDual"]


@dataclass(frozen=True)
class CrammerSingerOptions(CommonOptions):
    """The options of :class:`CrammerSingerDual` (the common ones)."""

    solver_name = "crammer_singer_dual"
    shrinking: bool = flag(True, doc="LIBLINEAR's shrinking of rows and classes at "
                                     "their bounds")
    averaging: bool = flag(True, doc="check (and return) the mean of the iterates at "
                                     "the ends of the last epochs before each check")
    revisit: float = number(0.25, low=0.0, strict=False, high=1.0,
                            doc="after each pass, visit again the rows whose violation "
                                "exceeded this share of the pass's largest (0: never)")


#: the first shrinking threshold on the violation (LIBLINEAR's max(10 eps, 1)),
#: halved each time the shrunk problem is solved to it
EPS_SHRINK0 = 1.0
#: epochs per kernel call (the deadline is checked between calls)
EPOCHS_PER_CALL = 16
#: dense input with at most this share of nonzero entries is read by the kernel
#: as CSR (a row step costs its stored entries; the zeros are skipped)
SPARSE_VIEW_DENSITY = 0.75
#: a pass over every row goes in index order when beta and the active classes
#: (16 n K bytes) exceed this: streamed, not random, reads (letter.scale, 6 MB:
#: 8-10% less time; dna.scale, 96 kB, kept random: +7% epochs in index order)
SEQUENTIAL_FULL_BYTES = 1 << 20
#: the averaged window: about AVG_SHARE of the epochs run by the check, at most
#: AVG_MAX epochs (and never more than the epochs since the last check)
AVG_SHARE = 1.0 / 16.0
AVG_MAX = 32


class CrammerSingerDual(MulticlassDualSolver):
    """Sequential dual method for the Crammer-Singer multiclass SVM; a dual method.

    Problem (Crammer & Singer, JMLR 2 (2001); docs/multiclass-models.md):
    with labels ``y_i`` in ``0..K-1`` and ``coef`` (d x K), minimize::

        P(coef) = (1/W) sum_i c_i max_k (1[k != y_i] + x_i coef_k - x_i coef_{y_i})
                  + lam/2 ||coef||_F^2

    through its dual, in LIBLINEAR's scaling ``beta_i = C_i alpha_i``,
    ``C_i = c_i / (W lam)`` (``C_i = C`` of ``-s 4`` for unit weights)::

        min_beta 1/2 ||sum_i x_i^T beta_i||_F^2 - sum_i beta_{i, y_i}
        s.t.     sum_m beta_im = 0,  beta_im <= C_i 1[m = y_i]

    Each epoch visits the rows in a random order (SplitMix64 seeded from
    ``random_state`` at each kernel call) and
    minimizes exactly over one row's K variables (Keerthi et al., KDD 2008,
    Sec. 3; the subproblem of LIBLINEAR's ``Solver_MCSVM_CS``), keeping
    ``coef = sum_i x_i^T beta_i`` up to date; then (``revisit``, default
    0.25) it visits once more, in a new random order, the rows whose
    violation in that pass exceeded 0.25 of the pass's largest: the few rows
    that carry most of the gap get two steps per epoch (usps.t 10-29%, digits
    15-22% less CPU to the same certified gap).  With ``shrinking`` (as LIBLINEAR)
    a class at its bound whose dual gradient is below those of the free
    classes leaves the row's block, a row with one class left leaves the
    pass, and everything returns when the shrunk problem's largest violation
    falls below a threshold (1, then halved each time).  Each check computes
    every row's scores anyway; a shrunk row (or a row with shrunk classes)
    whose violation over all K classes exceeds the threshold then returns to
    the active set with every class.  Where ``beta`` and the active classes
    outgrow ``SEQUENTIAL_FULL_BYTES``, a pass over every row goes in index
    order (its reads stream).

    The certificate is a dual point of the method and its own ``coef(alpha)``:
    with ``averaging`` (default) the mean of the iterates at the ends of the
    last ``M`` epochs before the check (``M`` about 1/16 of the epochs run, at
    most 32; the kernel adds each change of ``beta`` to a running mean, so
    the mean costs one add per changed entry), else the last iterate;
    ``alpha_i = beta_i / C_i`` (``e_y - alpha_i`` on the simplex) and
    ``coef(alpha)`` recomputed from it at each check.  The mean's primal
    ``P(coef(alpha))`` is 15-30% closer to the optimum than the last
    iterate's, whose primal fluctuates from epoch to epoch.  The check's
    products go to BLAS on dense rows (more than 75% nonzero entries).

    Dense input with at most 75% nonzero entries is read as CSR (a copy of its
    nonzeros), as LIBLINEAR reads every input.

    Options: ``shrinking`` (default True), ``averaging`` (default True),
    ``revisit`` (default 0.25; 0 for LIBLINEAR's passes).  ``warm_start``: a
    SolveResult or a dual point alpha (n, K) (feasible for any ``lam``: warm
    starts along a path).
    """

    name = "crammer_singer_dual"
    summary = ("Crammer-Singer multiclass SVM: sequential dual method (Keerthi et al. "
               "2008, LIBLINEAR -s 4)")
    options_class = CrammerSingerOptions
    # epochs over the shrunk active set are cheap; LIBLINEAR allows 100,000
    default_max_epochs = 10000
    loss_names = ("crammer_singer",)
    # the iterates are not touched after run(): the state is exported when read
    state_after_run = True

    def setup(self):
        prob = self.problem
        r = prob.rows
        self.C = self.row_bounds()
        data, indices, indptr, iptr = r.data, r.indices, r.indptr, r.iptr
        dense = r.n * r.d > 0 and \
            np.count_nonzero(r.data) > SPARSE_VIEW_DENSITY * r.n * r.d
        if not r.is_sparse and not dense:
            csr = sp.csr_matrix(r.X)
            data, indices, indptr, iptr = csr.data, csr.indices, csr.indptr, csr.indptr
        # dense rows: the checks' three products go to BLAS on a float64 copy
        self.Xd = None
        if dense:
            self.Xd = np.ascontiguousarray(r.X.toarray() if r.is_sparse else r.X,
                                           dtype=np.float64)
        self.view = CSRows(data, indices, indptr, iptr, r.sqnorm, prob.y, self.C)
        K = prob.K
        self.work = CSWork(*(np.empty(K) for _ in range(5)), np.zeros(prob.n),
                           np.zeros(prob.n, dtype=np.int64))
        self.shrinking = bool(self.opts.shrinking)
        self.back = np.zeros(prob.n, dtype=np.bool_)
        self.averaging = bool(self.opts.averaging)
        self.avg = np.empty((prob.n, K) if self.averaging else (0, K))
        self.cavg = np.empty((prob.d, K) if self.averaging else (0, K))
        self.Z = np.empty((prob.n if self.Xd is not None else 0, K))
        self._no_weights = np.zeros(EPOCHS_PER_CALL)
        self.avg_ok = False

    # -------------------------------------------------------------- state
    def init_state(self, warm_start):
        prob = self.problem
        alpha = self._warm_alpha(warm_start)
        if alpha is None:
            alpha = np.zeros((prob.n, prob.K))
            # a zero row's block is solved once: alpha_y = 1, alpha_m = -1 (m != y)
            zero = np.flatnonzero(prob.rows.sqnorm == 0.0)
            alpha[zero, prob.y[zero]] = 1.0
            alpha[zero, (prob.y[zero] + 1) % prob.K] = -1.0
        self.beta = np.ascontiguousarray(alpha * self.C[:, None])
        # a cold start: beta is 0 but on rows of zeros, so coef = 0
        self.coef = (np.zeros((prob.d, prob.K)) if warm_start is None
                     else self._coef_of(self.beta))
        self.n_epochs_done = 0
        self.avg_ok = False
        self.active = CSActive(np.arange(prob.n, dtype=np.int64),
                               np.full(prob.n, prob.K, dtype=np.int64),
                               np.tile(np.arange(prob.K, dtype=np.int64), (prob.n, 1)))
        # active rows, threshold, index-order full passes, revisited share
        self.sched = np.array([prob.n, EPS_SHRINK0, self._sequential_full(),
                               float(self.opts.revisit)])

    def _coef_of(self, beta):
        return np.ascontiguousarray(self.problem.rmat(beta))

    def get_state(self):
        meta = {"n_epochs_done": int(self.n_epochs_done), "m_act": int(self.sched[0]),
                "eps_shrink": float(self.sched[1])}
        arrays = {"beta": self.beta.copy(), "coef": self.coef.copy(),
                  "act_rows": self.active.rows.copy(), "act_n_cls": self.active.n_cls.copy(),
                  "act_cls": self.active.cls.copy()}
        if self.avg_ok:                     # the point the last check certified
            arrays["avg_beta"] = self.avg.copy()
        return meta, arrays

    def set_state(self, meta, arrays):
        self.beta = np.ascontiguousarray(arrays["beta"], dtype=np.float64)
        self.coef = np.ascontiguousarray(arrays["coef"], dtype=np.float64)
        self.active = CSActive(*(np.ascontiguousarray(arrays[k], dtype=np.int64)
                                 for k in ("act_rows", "act_n_cls", "act_cls")))
        self.n_epochs_done = int(meta["n_epochs_done"])
        self.avg_ok = self.averaging and "avg_beta" in arrays
        if self.avg_ok:
            np.copyto(self.avg, arrays["avg_beta"])
        self.sched = np.array([float(meta["m_act"]), float(meta["eps_shrink"]),
                               self._sequential_full(), float(self.opts.revisit)])

    def _sequential_full(self):
        """1.0 when the passes over every row go in index order (SEQUENTIAL_FULL_BYTES)."""
        return float(16 * self.problem.n * self.problem.K > SEQUENTIAL_FULL_BYTES)

    @property
    def check_passes(self):
        """A check is two passes over the rows with K-wide work per entry, as a
        row step's reads (counted once per entry): 2 / CHECK_PASS_COST passes
        in the schedule's units."""
        return 2.0 / CHECK_PASS_COST

    @property
    def epochs(self):
        return float(self.n_epochs_done)

    # ------------------------------------------------------------- epochs
    def _window(self, planned):
        """The number of last epochs of a call of ``planned`` epochs whose
        iterates the next check averages (0 without ``averaging``)."""
        if not self.averaging or planned < 1:
            return 0
        share = round(AVG_SHARE * (self.n_epochs_done + planned))
        return int(min(planned, AVG_MAX, max(1, share)))

    def advance(self, n_epochs, deadline):
        n = self.problem.n
        planned = min(max(1, int(round(n_epochs))), int(self.max_epochs - self.n_epochs_done))
        M = self._window(planned)
        self.avg_ok = False
        left = planned
        while left > 0:
            k = min(left, EPOCHS_PER_CALL)
            if left > M:                            # the window starts a call
                k = min(k, left - M)
            elif left == M:
                np.copyto(self.avg, self.beta)
            wt = self._no_weights
            if left <= M:                           # the epochs' places t in the window
                t = np.arange(k) + (M - left + 1)
                wt = (M - t + 1.0) / M
            state = np.array([self.rng.integers(0, 2**63)], dtype=np.uint64)
            status, done, reads = cs_epochs(self.view, self.active, self.sched, self.beta,
                                            self.coef, self.work, k, state, self.shrinking,
                                            CSAverage(self.avg, wt))
            self.n_epochs_done += int(done)
            self.feature_accesses += int(reads)
            if status != STATUS_OK:
                raise FloatingPointError(f"{self.name}: a non-finite step at epoch "
                                         f"{self.n_epochs_done}; scale the features")
            left -= k
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.avg_ok = M > 0 and left == 0
        self.steps = self.n_epochs_done * n

    # -------------------------------------------------------- certificate
    def certificate(self):
        """The checked point ``b`` (the window's mean of ``beta`` after a
        complete window, else ``beta``): ``alpha = b / C`` and ``coef(alpha) =
        X^T b`` recomputed from it (the iterate's incremental ``coef`` is
        refreshed too, dropping its rounding drift), then ``P(coef(alpha))``
        and ``D(alpha)`` (``V = lam coef(alpha)``): two passes over the rows in
        one kernel (:func:`~primaldual.kernels.multiclass.cs_certificate`; on
        dense rows its products are three BLAS calls here), which also returns
        the violated shrunk rows to the active set (class docstring)."""
        prob = self.problem
        alpha = np.empty_like(self.beta)
        back = self.back if self.shrinking else self.back[:0]
        avg = self.avg if self.avg_ok else self.avg[:0]
        if self.Xd is not None:
            np.matmul(self.Xd.T, self.beta, out=self.coef)
            if self.avg_ok:
                np.matmul(self.Xd.T, avg, out=self.cavg)
            np.matmul(self.Xd, self.cavg if self.avg_ok else self.coef, out=self.Z)
        loss, conj, bad = cs_certificate(self.view, self.beta, prob.sample_weight,
                                         self.coef, self.work.z, alpha, FEAS_TOL,
                                         self.active, self.sched, back, avg, self.cavg,
                                         self.Z)
        w = self.cavg if self.avg_ok else self.coef
        sq = float(np.einsum("i,i->", w.ravel(), w.ravel()))
        primal = loss / prob.W + 0.5 * prob.lam * sq
        dual = conj / prob.W - 0.5 * prob.lam * sq if bad == 0 else -np.inf
        return Certificate(w=w.copy(), alpha=alpha, primal=float(primal), dual=float(dual),
                           v=prob.lam * w, margins=None)

    def _evaluate(self, w):
        return _multiclass_eval(self, w)
