"""The Crammer-Singer multiclass SVM by CoCoA+ over its dual, on row partitions
in this process or on Dask workers (docs/multiclass-models.md).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..distributed.cs_block import BlockCSData
from ..distributed.cs_rounds import DaskCSData, place_crammer_singer
from ..distributed.newton_block import contiguous_partitions
from ..kernels.status import STATUS_OK
from ..problem import Certificate
from ._multiclass_base import MulticlassDualSolver
from ._options import CommonOptions, PartitionOptions, ThreadOptions, flag, number
from ._partitions import PartitionCount
from ._schedule import CHECK_PASS_COST
from .crammer_singer import SEQUENTIAL_FULL_BYTES
from .multinomial import _multiclass_eval

__all__ = ["CrammerSingerCoCoAOptions", "CrammerSingerCoCoA"]


@dataclass(frozen=True)
class CrammerSingerCoCoAOptions(PartitionOptions, ThreadOptions, CommonOptions):
    """The options of :class:`CrammerSingerCoCoA`."""

    solver_name = "crammer_singer_cocoa"
    local_epochs: int = number(1, integer=True, low=1.0, strict=False,
                               doc="epochs of the sequential dual method per partition "
                                   "and round")
    shrinking: bool = flag(True, doc="LIBLINEAR's shrinking on each partition's local "
                                     "subproblem; every row and class returns at each check")
    revisit: float = number(0.25, low=0.0, strict=False, high=1.0,
                            doc="after each local pass, visit again the rows whose "
                                "violation exceeded this share of the pass's largest "
                                "(0: never)")


class CrammerSingerCoCoA(PartitionCount, MulticlassDualSolver):
    """CoCoA+ (adding, ``sigma' = K``) over the Crammer-Singer dual; a dual method.

    Problem (Crammer & Singer, JMLR 2 (2001); docs/multiclass-models.md):
    with labels ``y_i`` in ``0..K-1`` and ``coef`` (d x K), minimize::

        P(coef) = (1/W) sum_i c_i max_k (1[k != y_i] + x_i coef_k - x_i coef_{y_i})
                  + lam/2 ||coef||_F^2

    through its dual over ``alpha`` (n x K, ``e_{y_i} - alpha_i`` on the
    simplex), ``coef(alpha) = (1/(W lam)) sum_i c_i x_i^T alpha_i``, split in
    ``K`` contiguous row partitions.  Each round every partition solves the
    CoCoA+ local subproblem (Ma et al., ICML 2015, eq. (10); Smith et al.,
    JMLR 18 (2018); with ``sigma' = K``) from the global ``coef`` by
    ``local_epochs`` epochs of the sequential dual method (Keerthi et al.,
    KDD 2008; the serial ``crammer_singer_dual`` kernel, without averaging)
    run with ``lam / sigma'``: its ``coef_local = coef +
    sigma' dcoef_k`` and its row step's quadratic term ``sigma' ||x_i||^2 /
    (W lam)`` (:mod:`primaldual.distributed.cs_block`).  The client adds
    the partitions' changes ``dcoef_k`` in partition order; the dual rises
    every round.  Each partition's ``alpha`` block stays where its rows are.

    The certificate is the iterate: at each check the partitions return
    their parts of ``coef(alpha)`` (added in order: ``coef`` is recomputed,
    its drift dropped) and of ``sum_i c_i alpha_{i, y_i}``, then their loss
    sums at that ``coef``: ``P(coef(alpha))`` and ``D(alpha)`` exact.

    ``n_partitions``: the partitions (None: one per Dask worker with a
    ``client``, one in process without; one partition is the serial method
    without averaging).  With a ``client`` the partitions live on the
    workers (:mod:`primaldual.distributed.cs_rounds`) and the run equals
    the in-process run with the same ``n_partitions`` and seed; a lost
    worker's partition is re-created from the last check's ``alpha``.

    With ``shrinking`` (default) each partition shrinks its local
    subproblem as LIBLINEAR does (rows and classes at their bounds leave
    its passes; letter.scale, usps.t: a round 2.6-3.3x cheaper), its
    active set carried from round to round; every check returns every row
    and class, so that after a check a round depends only on ``alpha``,
    ``W`` and its seed.

    In process, ``n_jobs`` runs the partitions' rounds and checks on up to
    ``n_jobs`` threads (one partition per thread, as many as give each a
    million values of ``nnz K``): each partition computes its own part and
    the parts are added in partition order, so the fit is the same numbers
    on any number of threads.  With a ``client`` each partition is a Dask
    actor, and ``n_jobs > 1`` is refused.

    Options: ``local_epochs`` (1), ``shrinking`` (True), ``revisit``
    (0.25, as the serial method), ``n_partitions``, ``n_jobs``, ``client``,
    ``round_timeout``, ``max_recoveries``.  ``max_epochs`` counts epochs: rounds times
    ``local_epochs``.  ``warm_start``: a SolveResult or a dual point alpha
    (n, K) (rows in this process only).
    """

    name = "crammer_singer_cocoa"
    summary = ("Crammer-Singer multiclass SVM: CoCoA+ over the sequential dual method "
               "on row partitions or Dask workers")
    options_class = CrammerSingerCoCoAOptions
    default_max_epochs = 10000
    loss_names = ("crammer_singer",)
    supports_client = True
    supports_partitioned = True
    default_partitions = 1
    threads_in_process_only = True

    def validate_options(self):
        self.check_partitions(warm_start_on_workers=False)
        self.check_threads_in_process()

    def setup(self):
        prob = self.problem
        o = self.opts
        K = self.n_partitions = self._partitions()
        self.n_threads, self.threads_reason = 1, "one thread: each partition is a Dask actor"
        self.resolved_opts = self.resolved_opts.replace(n_partitions=K)
        if self.partitioned:
            prob.pset.timeout = float(o.round_timeout)
            part_ptr = prob.part_ptr
            self.data = DaskCSData(prob.pset, part_ptr, prob.d, prob.K, o.max_recoveries)
        else:
            part_ptr = contiguous_partitions(prob.n, K)
            self.data = (BlockCSData(prob, part_ptr) if o.client is None else DaskCSData(
                place_crammer_singer(prob, part_ptr, o.client, o.round_timeout),
                part_ptr, prob.d, prob.K, o.max_recoveries))
            if o.client is None:
                self.n_threads, self.threads_reason = self.data.set_threads(o.n_jobs)
        self.sigma = float(K)
        # the serial rule, per partition: passes in index order where the
        # partition's alpha outgrows the cache
        self.sequential = 16 * int(np.diff(part_ptr).max()) * prob.K > SEQUENTIAL_FULL_BYTES
        self.epochs_per_round = int(o.local_epochs)

    # -------------------------------------------------------------- state
    def init_state(self, warm_start):
        prob = self.problem
        self.rounds = 0
        self.alpha = None
        alpha = None if self.partitioned else self._warm_alpha(warm_start)
        if alpha is not None:
            self.data.set_alpha(alpha, prob.lam, prob.W)

    def get_state(self):
        if self.alpha is None:                  # no check yet: gather the blocks
            self.alpha, _ = self.data.dual(self.problem.lam, self.problem.W)
        return {"rounds": int(self.rounds)}, {"alpha": self.alpha.copy()}

    def set_state(self, meta, arrays):
        prob = self.problem
        self.data.set_alpha(self._warm_alpha(arrays["alpha"]), prob.lam, prob.W)
        self.rounds = int(meta["rounds"])
        self.alpha = None

    @property
    def check_passes(self):
        """A check is a product with X^T and one with X, K columns wide, as
        the serial method's."""
        return 2.0 / CHECK_PASS_COST

    @property
    def epochs(self):
        return float(self.rounds * self.epochs_per_round)

    # ------------------------------------------------------------- rounds
    def advance(self, n_epochs, deadline):
        prob = self.problem
        E = self.epochs_per_round
        left = int(max(1, round(n_epochs / E)))
        left = min(left, int((self.max_epochs - self.epochs) // E) or 1)
        for _ in range(left):
            status, reads = self.data.round(prob.lam, prob.W, self.sigma, E,
                                            int(self.rng.integers(2 ** 62)),
                                            self.sequential, float(self.opts.revisit),
                                            bool(self.opts.shrinking))
            if status != STATUS_OK:
                raise FloatingPointError(f"{self.name}: a non-finite step in round "
                                         f"{self.rounds + 1}; scale the features")
            self.rounds += 1
            self.feature_accesses += int(reads)
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self.alpha = None
        self.steps = self.rounds * E * prob.n

    # -------------------------------------------------------- certificate
    def certificate(self):
        """``alpha`` gathered, ``coef = coef(alpha)`` joined from the
        partitions' parts, ``P(coef)`` from their loss sums at it and
        ``D(alpha) = (1/W) sum_i c_i alpha_{i, y_i} - lam/2 ||coef||^2``."""
        prob = self.problem
        alpha, conj = self.data.dual(prob.lam, prob.W)
        loss = self.data.loss()
        coef = self.data.coef
        a = coef.ravel()
        sq = float(np.einsum("i,i->", a, a))
        primal = loss / prob.W + 0.5 * prob.lam * sq
        dual = conj / prob.W - 0.5 * prob.lam * sq if np.isfinite(conj) else -np.inf
        self.alpha = alpha
        return Certificate(w=coef.copy(), alpha=alpha, primal=float(primal),
                           dual=float(dual), v=prob.lam * coef, margins=None)

    def _evaluate(self, w):
        return _multiclass_eval(self, w)

    def run(self):
        res = super().run()
        res.extras["threads"] = self.n_threads
        reason = self.threads_reason
        if self.n_threads > 1:
            on, rounds = self.data.threaded_rounds()
            reason += (f"; {on} of {rounds} rounds on the threads (each on the faster "
                       f"measured mode)")
        res.extras["threads_reason"] = reason
        return res

    def trace_extras(self):
        return {"rounds": int(self.rounds), "partitions": int(self.n_partitions),
                "threads": int(self.n_threads), **self.data.info()}
