"""The L1 / elastic-net proximal Newton method whose sums over rows run on row
partitions, in this process or on Dask workers (docs/sparse-models.md,
"Partitions and Dask")."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ...distributed.partition_set import place_problem
from ...distributed.l1_block import BlockL1Data
from ...distributed.l1_rounds import DaskL1Data
from ...distributed.newton_block import contiguous_partitions
from ...kernels.l1cd import (ARMIJO_SIGMA, CURVATURE_FLOOR, FLOORED_CODES, SUM_ROUNDING,
                              ColsView, L1Spec, NewtonWork, WsGram, gram_direction)
from ...problem import Certificate
from .._base import Solver, register
from ..._util.threads import resolve_n_jobs
from .._options import CommonOptions, PartitionOptions, ThreadOptions, flag, number
from .._partitions import PartitionCount
from .screening import gap_safe_mask, l1_dual_scale

__all__ = ["L1NewtonOptions", "L1NewtonSolver"]

#: trial steps per line-search call (1, 1/2, ..., 2^-7) and calls at most
TRIALS = 8
SEARCH_CALLS = 4
#: coordinate descent on the model stops when a pass's largest step is this
#: share of the first
CD_ETA = 1e-3
#: the working set doubles when a step leaves more than this share of the gap
GROW = 0.9


@dataclass(frozen=True)
class L1NewtonOptions(PartitionOptions, ThreadOptions, CommonOptions):
    """The options of :class:`L1NewtonSolver` (see its docstring)."""

    solver_name = "l1_newton"
    screening: bool = flag(True, doc="Gap Safe screening of features at every step")
    p0: int = number(10, integer=True, low=1.0, strict=False,
                     doc="size of the first working set")
    max_ws: int = number(2000, integer=True, low=1.0, strict=False,
                         doc="largest working set (its Gram matrix is max_ws^2 numbers "
                             "per partition)")
    max_cd_passes: int = number(100, integer=True, low=1.0, strict=False,
                                doc="coordinate-descent passes over the working set's "
                                    "model per Newton step")


@register
class L1NewtonSolver(PartitionCount, Solver):
    """Proximal Newton with working sets for L1 and elastic net, its sums over
    rows on row partitions (in process or on Dask workers).

    Problem: ``min_w P(w) = (1/W) sum_i c_i phi(x_i . w; y_i) + lam/2 ||w||^2
    + l1 ||w||_1`` with ``lam >= 0`` (pure L1 allowed) and a smooth loss,
    docs/sparse-models.md; the serial method is ``l1cd``.

    Method: newGLMNET's proximal Newton step (Yuan, Ho & Lin 2012, Algorithm
    3) on a working set, one step per round of the partitions.  The client
    holds ``w``, the screening state and the working set; the partitions
    return sums over their rows (:mod:`primaldual.distributed.l1_block`).  A
    step: (1) at ``w`` the partitions return the loss sum and ``v = -X^T gu``
    (``gu_i = cw_i phi'(x_i . w)``), the client sets ``s = max(1,
    ||v||_inf / l1)`` for ``lam = 0`` (Fercoq, Gramfort & Salmon 2015,
    eq. 9; ``s = 1`` for ``lam > 0``), and they return the conjugate sum at
    ``alpha_i = -phi'(x_i . w) / s``: the exact certificate; (2) Gap Safe
    screening (Ndiaye et al. 2017, Theorem 6) removes zero features proved
    zero at the optimum; (3) the working set: the nonzero features, those
    violating ``|v_j| <= l1`` and those nearest it, ``(l1 - |v_j|) /
    ||x_j||`` smallest (celer's rule, Massias et al. 2018, eq. 8), at least
    ``p0`` more than the support and one and a half times it, doubled when
    a step does not lower the gap by 10%, at most ``max_ws``
    features: the worst violators first, and when more are nonzero, the
    nonzeros farthest from their optimality condition; (4) the partitions return the working
    set's Gram matrix ``X_ws^T diag(hu) X_ws`` (``hu_i = cw_i phi''``; its
    diagonal floored at ``0.002 sum_i cw_i x_ij^2`` for the squared and the
    smoothed hinge and the squared epsilon-insensitive loss, whose curvature
    vanishes on some rows), the
    client minimizes the quadratic model plus the penalty by coordinate
    descent on that explicit matrix
    (:func:`~primaldual.kernels.l1cd.gram_direction`, random order each
    pass, at most ``max_cd_passes`` passes); (5) an Armijo line search whose
    trial losses (eight halvings a call) the partitions return at once.

    The parts are added in partition order, so a Dask run equals the run in
    this process with the same ``n_partitions``.  In process, ``n_jobs``
    runs the partitions' calls on up to ``n_jobs`` threads (as many as give
    each a million stored entries); without ``n_partitions`` it also splits
    the rows into ``n_jobs`` partitions, so ``n_jobs=k`` is the run of
    ``n_partitions=k`` on one thread, number for number.  With a ``client``
    each partition is a Dask actor, and ``n_jobs > 1`` is refused.  A lost Dask worker's
    partition is re-created and its margins recomputed from ``w``
    (:mod:`primaldual.distributed.l1_rounds`).  Per step the partitions
    return ``d_k + 2`` numbers (``d_k`` the columns their rows use), ``n_k``
    (``alpha``), ``m (m + 1) / 2`` (the upper triangle of the Gram matrix on
    the ``m`` working-set columns it holds) and eight; the client sends ``w``'s
    nonzeros, the working set and its direction.

    Certificate: ``alpha`` above with ``w``; ``primal``, ``dual`` and ``gap``
    are exact for that pair.  A pass is one evaluation at a point; the Gram
    matrix and the line search count their share of the entries.

    Options: ``screening`` (True), ``p0`` (10), ``max_ws`` (2000),
    ``max_cd_passes`` (100), ``n_partitions`` (None: ``n_jobs`` partitions in
    process, else the part files, chunks or Dask workers), ``n_jobs``, ``client``,
    ``round_timeout``, ``max_recoveries`` (:class:`L1NewtonOptions`).
    ``warm_start``: a SolveResult or a coefficient vector (d,).
    """

    name = "l1_newton"
    summary = ("proximal Newton with working sets and Gap Safe screening for L1 and "
               "elastic-net models on row partitions or Dask (newGLMNET's step)")
    requires = ("smooth",)
    options_class = L1NewtonOptions
    supports_l1 = True
    supports_pure_l1 = True
    supports_client = True
    newton_type = True
    default_max_epochs = 1000
    threads_in_process_only = True

    # ------------------------------------------------------------ options
    def validate_options(self):
        if not self.problem.loss.builtin:
            raise ValueError(f"solver='l1_newton' runs the registered losses only, not "
                             f"{self.problem.loss.name!r}")
        self.check_partitions()
        self.check_threads_in_process()

    def setup(self):
        prob, o = self.problem, self.opts
        self.n_partitions = self._partitions()
        self.n_threads, self.threads_reason = 1, "one thread: each partition is a Dask actor"
        if self.n_partitions is None and resolve_n_jobs(o.n_jobs) > 1:
            self.n_partitions = min(resolve_n_jobs(o.n_jobs), prob.n)
        if self.n_partitions is not None:
            self.resolved_opts = self.resolved_opts.replace(n_partitions=self.n_partitions)
        K = self.n_partitions or 1
        if self.partitioned:
            prob.pset.timeout = float(o.round_timeout)
            self.data = DaskL1Data(prob.pset, prob.part_ptr, prob.d, o.max_recoveries)
        elif o.client is None:
            self.data = BlockL1Data(prob, contiguous_partitions(prob.n, K))
            self.n_threads, self.threads_reason = self.data.set_threads(o.n_jobs)
        else:
            part_ptr = contiguous_partitions(prob.n, K)
            pset = place_problem(prob, part_ptr, o.client, o.round_timeout)
            self.data = DaskL1Data(pset, part_ptr, prob.d, o.max_recoveries)
        counts, sq = self.data.column_stats()
        self.col_nnz = counts
        self.colsq = sq
        self.colnorm = np.sqrt(sq)
        self.spec = L1Spec(int(prob.loss.code), float(prob.loss.param), float(prob.lam),
                           float(prob.l1))
        self.floored = int(prob.loss.code) in FLOORED_CODES

    # -------------------------------------------------------------- state
    def init_state(self, warm_start):
        prob = self.problem
        w = self.warm_start_coef()
        self.w = np.zeros(prob.d) if w is None else w.copy()
        self.screened = self.colnorm == 0.0      # empty columns: w_j = 0 at the optimum
        self.w[self.screened] = 0.0
        self.ws_size = int(self.opts.p0)
        self.passes = 0.0
        self.n_iter = 0
        self.last_ws = 0
        self.stalled = False
        self._evaluate_point()

    def get_state(self):
        return ({"ws_size": int(self.ws_size), "passes": float(self.passes),
                 "n_iter": int(self.n_iter)},
                {"w": self.w.copy(), "screened": self.screened.copy()})

    def set_state(self, meta, arrays):
        self.w = np.array(arrays["w"], dtype=np.float64)
        self.screened = np.array(arrays["screened"], dtype=bool)
        self.ws_size = int(meta["ws_size"])
        self.n_iter = int(meta["n_iter"])
        self.last_ws = 0
        self.stalled = False
        self.passes = 0.0
        self._evaluate_point()
        self.passes = float(meta["passes"])

    @property
    def epochs(self):
        return self.passes

    # -------------------------------------------------------- certificate
    def _evaluate_point(self):
        """Loss sum and ``v`` at ``w`` (one pass, slot 0), and its certificate."""
        nz = np.flatnonzero(self.w)
        self.slot = 0
        self.loss_sum, self.v = self.data.evaluate(nz, self.w[nz], 0)
        self.passes += 1.0
        self._certify()

    def _certify(self):
        """The certificate at ``w`` from the current loss sum and ``v``: the
        scale ``s``, one call for the conjugate sum and ``alpha``."""
        prob = self.problem
        s = l1_dual_scale(np.abs(self.v).max(initial=0.0), prob.l1) \
            if prob.lam == 0.0 else 1.0
        conj, alpha = self.data.dual(s, self.slot)     # self.slot: now the current point
        v_s = self.v / s
        primal = self.loss_sum + prob.penalty.value(self.w)
        dual = conj - prob.penalty.conjugate(v_s)
        self.cert = Certificate(w=self.w.copy(), alpha=alpha, primal=float(primal),
                                dual=float(dual), v=v_s, margins=self.data.margins())

    def certificate(self):
        return self.cert

    # ---------------------------------------------------------- the step
    def _screen(self):
        prob, cert = self.problem, self.cert
        new = gap_safe_mask(cert.v, self.colnorm, cert.gap, prob.loss.smoothness, prob.l1)
        self.screened |= new & (self.w == 0.0)

    def _working_set(self):
        """The working set (sorted): class docstring, step (3)."""
        prob = self.problem
        free = np.flatnonzero(~self.screened)
        nonzero = self.w[free] != 0.0
        vf = np.abs(self.v[free])
        support = int(nonzero.sum())
        # each working set costs its Gram matrix here: not l1cd's support plus
        # every violator (reuters, l1_max/100: the 1,443 violators at w = 0 took
        # 0.22 s against 0.05 s, in as many steps) nor skglm's twice the
        # support (news20 /100 on Dask: 1.2 s against 1.7-2.4 s, 13 steps
        # against 10, 34 MB returned against 45)
        size = min(free.size, int(self.opts.max_ws),
                   max(self.ws_size, support + max(int(self.opts.p0), support // 2)))
        if size >= free.size:
            return free
        if support >= size:            # more nonzeros than room: the worst violators
            wf = self.w[free]
            sub = np.abs(self.v[free] - prob.lam * wf - prob.l1 * np.sign(wf))
            score = np.where(nonzero, -sub / self.colnorm[free], np.inf)
        else:
            score = (prob.l1 - vf) / self.colnorm[free]
            score[nonzero] = -np.inf
        pick = np.argpartition(score, size - 1)[:size]
        return np.sort(free[pick])

    def _direction(self, ws):
        """Coordinate descent on the working set's quadratic model from its
        Gram matrix (one call): the direction ``delta`` on ``ws``."""
        k = ws.shape[0]
        H = self.data.gram(ws)
        self.passes += 2.0 * float(self.col_nnz[ws].sum()) / max(self.problem.nnz, 1)
        extra = np.zeros(k)
        if self.floored:
            extra = np.maximum(0.0, 2.0 * CURVATURE_FLOOR * self.colsq[ws] - np.diag(H))
        seed = np.array([self.rng.integers(1, 2**63)], dtype=np.uint64)
        work = NewtonWork(np.empty(0), np.empty(0), np.empty(0), -self.v[ws], np.empty(k),
                          np.empty(k), np.zeros(k, dtype=np.bool_), extra,
                          np.arange(k, dtype=np.int64), seed)
        # the model on local columns 0..k-1 (no rows: the direction's X d is the workers')
        cols = ColsView(np.empty(0), np.empty(0, np.int32), np.zeros(k + 1, np.int64),
                        np.empty(0), np.empty(0))
        rows = WsGram(np.empty(0), np.empty(0, np.int32), np.zeros(1, np.int64), H,
                      np.empty(k))
        gram_direction(self.spec, cols, np.arange(k, dtype=np.int64), self.w[ws].copy(),
                       work, rows, int(self.opts.max_cd_passes), CD_ETA)
        return work.delta.copy()

    def _line_search(self, ws, delta):
        """Armijo backtracking along ``delta``: ``(step, polish)``, the step 0
        when none descends.  Near the optimum the decrease falls below the
        rounding of ``F`` (and the slope ``gd`` may round to ``>= 0``) while the
        certificate, which falls like ``||w - w*||``, still improves: the unit
        step is then taken when it does not raise ``F`` beyond its rounding
        (``polish``; the caller stops when it does not lower the gap)."""
        prob = self.problem
        lam, l1 = prob.lam, prob.l1
        wk = self.w[ws]
        gd = float(-self.v[ws] @ delta + lam * wk @ delta
                   + l1 * (np.abs(wk + delta).sum() - np.abs(wk).sum()))
        f0 = self.cert.primal
        rest = f0 - self.loss_sum - (0.5 * lam * wk @ wk + l1 * np.abs(wk).sum())
        share = float(self.col_nnz[ws].sum()) / max(prob.nnz, 1)
        unit = math.inf
        for call in range(SEARCH_CALLS if gd < 0.0 else 1):
            ts = 0.5 ** np.arange(call * TRIALS, (call + 1) * TRIALS, dtype=np.float64)
            losses = self.data.line_losses(ws, delta, ts)
            self.passes += share
            for t, f in zip(ts.tolist(), losses.tolist()):
                z = wk + t * delta
                F = f + rest + 0.5 * lam * z @ z + l1 * np.abs(z).sum()
                if t == 1.0:
                    unit = F - f0
                if gd < 0.0 and F - f0 <= ARMIJO_SIGMA * t * gd + SUM_ROUNDING * abs(f0):
                    return t, False
        if unit <= SUM_ROUNDING * abs(f0):
            return 1.0, True
        return 0.0, False

    def _iterate(self):
        """One proximal Newton step on a working set (class docstring)."""
        prob = self.problem
        if self.opts.screening and prob.l1 > 0:
            self._screen()
        ws = self._working_set()
        self.last_ws = int(ws.size)
        gap0 = self.cert.gap
        delta = self._direction(ws) if ws.size else np.zeros(0)
        t, polish = self._line_search(ws, delta) if ws.size else (0.0, False)
        if t == 0.0:
            if ws.size >= int((~self.screened).sum()) or ws.size >= int(self.opts.max_ws):
                self.stalled = True          # every feature in, and no step descends
            self.ws_size = min(2 * max(self.ws_size, ws.size), prob.d)
            return
        self.w[ws] += t * delta
        trial = 1 - self.slot
        nz = np.flatnonzero(self.w)
        self.loss_sum, self.v = self.data.step(t, trial, (nz, self.w[nz]))
        self.slot = trial
        self.passes += 1.0
        self.n_iter += 1
        self.steps = self.n_iter
        self._certify()
        if polish and self.cert.gap >= gap0:
            self.stalled = True          # at the rounding of F and of the certificate
        if self.cert.gap > GROW * gap0:
            self.ws_size = min(2 * max(self.ws_size, ws.size), prob.d)

    def advance(self, n_epochs, deadline):
        target = self.passes + max(n_epochs, 1e-9)
        while self.passes < target and not self.stalled:
            if self.cert.rel_gap <= self.tol:
                break
            self._iterate()
            if not (math.isfinite(self.cert.primal) and math.isfinite(self.loss_sum)):
                raise FloatingPointError(
                    f"non-finite objective in solver='l1_newton' after {self.n_iter} "
                    f"steps: scale the columns or rows")
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.feature_accesses = int(self.passes * self.problem.nnz)

    def run(self):
        res = super().run()
        res.extras["threads"] = self.n_threads
        res.extras["threads_reason"] = self.threads_reason
        return res

    def trace_extras(self):
        out = {"newton_iter": int(self.n_iter), "screened": int(self.screened.sum()),
               "ws_size": int(self.last_ws), "support": int(np.count_nonzero(self.w))}
        if self.n_partitions is not None:
            out["partitions"] = int(self.n_partitions)
            out["threads"] = int(self.n_threads)
            out.update(self.data.info())
        return out
