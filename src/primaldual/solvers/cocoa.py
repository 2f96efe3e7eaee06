"""CoCoA+ with local SDCA: Ma, Smith, Jaggi, Jordan, Richtarik & Takac, "Adding
vs. Averaging in Distributed Primal-Dual Optimization" (ICML 2015),
Algorithm 1 with LocalSDCA (their Algorithm 2), and by default the exact step
on the summed update of Lee & Roth, "Distributed Box-Constrained Quadratic
Optimization for Dual Linear SVM" (ICML 2015), with the line search of Lee &
Chang, "Distributed block-diagonal approximation methods for regularized
empirical risk minimization" (Machine Learning 2020).

The problem, the updates, the certificate and the options are in
:class:`CoCoASolver`'s docstring.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..kernels.minibatch import MODE_COCOA
from ._base import Solver, register
from ._options import CommonOptions, EngineOptions, ThreadOptions, choice, number
from .._util.threads import resolve_n_jobs
from ..distributed.block import LINE_SEARCH, MODE_COCOA_SDCA, SUBSPACE
from ..distributed.deflation import SVD_PASSES, shared_directions
from ._rounds import RoundsMixin, is_partitioned
from .minibatch import _default_partitions

__all__ = ["CoCoASolver"]


@dataclass(frozen=True)
class CoCoAOptions(EngineOptions, ThreadOptions, CommonOptions):
    """The options of :class:`CoCoASolver` (documented in its docstring)."""

    solver_name = "cocoa"
    n_partitions: int | None = number(None, integer=True, low=0.0, also=(None,),
                                      doc="K, the parts; None: one per thread in process, else "
                                          "the parts or the Dask workers")
    local_iters: int | None = number(None, integer=True, low=0.0, also=(None,),
                                     doc="H, local steps per part and round; None: ceil(n / K)")
    aggregation: str = choice("line_search", "line_search", "adding", "averaging",
                              "subspace",
                              doc="how the parts' updates combine: an exact line search, "
                                  "CoCoA+ adding, CoCoA averaging, or a search on the span")
    memory: int = number(8, integer=True, low=0.0, strict=False,
                         doc="aggregation='subspace': the last steps searched over with "
                             "the parts' updates")
    local_solver: str = choice("sdca", "sdca", "uniform",
                               doc="local steps: SDCA passes over permutations, or rows "
                                   "drawn with replacement")
    coupling: str = choice("isotropic", "isotropic", "deflated",
                           doc="sigma' on every direction, or K on the shared directions "
                               "and an adapted factor on the rest")
    shared_directions: int = number(8, integer=True, low=1.0,
                                    doc="r, the shared directions of coupling='deflated': "
                                        "the mean row and r - 1 singular vectors")


@register
class CoCoASolver(RoundsMixin, Solver):
    """CoCoA+ with local SDCA: Ma, Smith, Jaggi, Jordan, Richtarik & Takac, "Adding
    vs. Averaging in Distributed Primal-Dual Optimization" (ICML 2015),
    Algorithm 1 with LocalSDCA (their Algorithm 2), and by default the exact step
    on the summed update of Lee & Roth, "Distributed Box-Constrained Quadratic
    Optimization for Dual Linear SVM" (ICML 2015), with the line search of Lee &
    Chang, "Distributed block-diagonal approximation methods for regularized
    empirical risk minimization" (Machine Learning 2020).

    Problem (docs/conventions.md §1, weights ``c_i``, ``W = sum_i c_i``)::

        primal  P(w)     = (1/W) sum_i c_i phi_i(x_i . w) + lam/2 ||w||^2
        dual    D(alpha) = (1/W) sum_i c_i (-phi_i*(-alpha_i)) - lam/2 ||w(alpha)||^2
                w(alpha) = (1/(lam W)) sum_i c_i alpha_i x_i

    The rows are split into ``K = n_partitions`` contiguous blocks ``P_k``.
    Round t: every block k, independently and against the same ``w``, runs
    ``H = local_iters`` SDCA steps on its local subproblem (Ma et al., eq. (10))::

        G_k^{sigma'}(Dalpha_[k]) = -(1/W) sum_{i in P_k} c_i phi_i*(-(alpha_i + Dalpha_i))
                                   - (1/K) lam/2 ||w||^2 - (1/W) w . sum_{i in P_k} c_i Dalpha_i x_i
                                   - (lam/2) sigma' ||(1/(lam W)) sum_{i in P_k} c_i Dalpha_i x_i||^2

    A LocalSDCA step picks ``i`` uniformly in ``P_k`` and maximizes ``G_k`` over
    ``Dalpha_i``: with ``u = w + (sigma'/(lam W)) sum_{P_k} c_j Dalpha_j x_j`` it is the
    shared :func:`dual_step` with margin ``x_i . u`` and curvature
    ``s = sigma' c_i ||x_i||^2 / (lam W)``.  Then (Algorithm 1, lines 6-8)::

        alpha_[k] += gamma Dalpha_[k],     w += gamma sum_k (1/(lam W)) sum_{P_k} c_i Dalpha_i x_i

    ``aggregation="line_search"`` (the default): ``sigma' = 1`` (each block
    solves its subproblem as if alone) and one step ``theta`` for all blocks,
    ``alpha += theta Dalpha``, ``w += theta sum_k Dw_k``, with::

        theta = argmax_{0 <= theta <= theta_max} D(alpha + theta Dalpha)

    (Lee & Roth 2015; ``theta_max`` keeps every ``alpha_i`` in its dual
    domain, so every iterate is dual feasible).  For hinge, squared hinge,
    smoothed hinge, squared and absolute loss ``D`` is a concave quadratic in
    ``theta`` on ``[0, theta_max]`` and ``theta`` is in closed form; for logistic
    and epsilon-insensitive loss a 1-D search (Lee & Chang 2020 backtrack; here a
    bracketing search with Newton steps finds the maximizer).  The
    blocks send only scalars for it (:mod:`primaldual.distributed.line_step`).
    ``aggregation="adding"``: ``gamma = 1``, ``sigma' = K`` (CoCoA+, the safe
    ``sigma' = gamma K``); ``aggregation="averaging"``: ``gamma = 1/K``, ``sigma' = 1``
    (CoCoA).  ``aggregation="subspace"`` (in process and on Dask,
    :mod:`primaldual.distributed.subspace_rounds`): ``sigma' = K`` as adding,
    then the step maximizes ``D`` over the span of the ``K`` blocks' changes,
    each with its own coefficient, and of the last ``memory`` steps::

        theta = argmax D(alpha + sum_k theta_k Dalpha_[k] + sum_j theta_{K+j} S_j)

    by Newton steps on the ``K + memory`` coefficients from adding's
    ``(1, ..., 1, 0, ..., 0)``, each halved until ``D`` rises and ``alpha``
    stays dual feasible (:mod:`primaldual.distributed.subspace_step`), so a
    round gains at least what adding gains.  Every block draws from its own stream ``SeedSequence(seed).spawn(K)``.

    Reduction to mini-batch SDCA (``local_solver="uniform"``; Takac, Richtarik & Srebro, Section 7: "Setting
    b = C and H = 1 we exactly recover mini-batch SDCA").  With ``H = 1`` each
    block makes one step on a uniform ``i in P_k`` with ``Dalpha = 0``, i.e. the
    margin ``x_i . w``; this is one iteration of mSDCA with ``(C, b = C)``-distributed
    sampling, and the iterates coincide (bit for bit, same seed and blocks) with

    * ``aggregation="adding"``  <->  ``minibatch_sdca(sampling="distributed",
      batch_size=K, step="safe", eso="cauchy_schwarz")`` (ESO ``v_i = K ||x_i||^2``);
    * ``aggregation="averaging"``  <->  ``minibatch_sdca(sampling="distributed",
      batch_size=K, step="average")``.

    ``coupling="deflated"`` (in process, with ``line_search``): the coupling
    term ``sigma' ||Dv_k||^2`` of ``G_k`` becomes ``Dv_k^T M Dv_k`` with
    ``M = sig_rest I + (K - sig_rest) U U^T``, ``U`` (d, r) orthonormal: the
    mean row and the top ``r - 1`` right singular vectors of ``X``
    (``r = shared_directions``, a randomized SVD of a few passes,
    :mod:`primaldual.distributed.deflation`).  On ``span U``, where every
    partition's rows overlap, the factor is the safe ``K``
    (``||P sum_k z_k||^2 <= K sum_k ||P z_k||^2``); on the rest it starts at 1
    and follows the step: a round whose ``theta < 0.9`` divides it by
    ``theta``, ``theta > 1.1`` multiplies it by 0.9, within ``[1, K]``
    (:mod:`primaldual.kernels.deflated`).  The step on the summed update
    keeps every round an ascent of ``D``, so the certificate is the same.

    With the paper's ESO for ``b = C``, ``v_i = (1 + b sigma^2) ||x_i||^2``, the two
    methods differ: CoCoA+'s ``sigma' = K`` is the data-independent ESO.

    Options
    -------
    The fields of :class:`CoCoAOptions`, checked when it is built (a bad value is a
    ValueError naming the option); ``solver.opts`` holds them as given.

    n_partitions : int or None    ``K`` (default: the number of Dask workers with a client;
                                  in process, ``n_jobs`` -- one partition per thread)
    local_iters : int or None     ``H`` (default: the size of the largest block, one
                                  local pass per round)
    aggregation : "line_search" | "adding" | "averaging" | "subspace", default "line_search"
    memory : int, default 8
        ``aggregation="subspace"``: the remembered steps ``S_j`` (0: the
        blocks' changes only).
    coupling : "isotropic" | "deflated", default "isotropic"
    shared_directions : int, default 8
        ``r`` of ``coupling="deflated"`` (see above).
    local_solver : "sdca" | "uniform", default "sdca"
        "sdca": the local solver is the serial SDCA kernel (prefetching, the
        logistic logit cache) over random permutations of the partition's rows
        (:mod:`primaldual.distributed.local_sdca`): ``H`` steps on
        ``G_k^{sigma'}`` as above, ``i`` taken pass by pass instead of with
        replacement -- fewer steps to the same accuracy, as for serial SDCA.
        "uniform": the paper's LocalSDCA (Algorithm 2), ``i`` uniform with
        replacement (the reduction to mini-batch SDCA below holds for it).
    n_jobs : int or None
        In-process runs with several partitions: the partitions of a round (and
        of a check) run at once on up to ``n_jobs`` threads (-1: all cores), as
        many as give each a million stored entries.  A partition's round
        does not depend on the others', so the iterates are the same for every
        ``n_jobs`` (bitwise).  With ``client`` (one partition per Dask actor), or
        in process with one partition: the threads run *inside* each
        partition's local SDCA (``local_solver="sdca"``), asynchronously as the
        threaded serial SDCA does (:mod:`primaldual.distributed.local_sdca`);
        the local solver's result then depends on how the threads interleave, so
        such runs are not bitwise repeatable, and Dask runs equal local runs only
        with ``n_jobs`` 1.  On Dask, ``-1`` means the cores of the client's
        machine: give a number when the workers' machines differ.
    client, round_timeout, recovery_every, recovery_dir, max_recoveries :
        Dask engine options, see ``docs/distributed.md``.

    Warm start: a feasible ``alpha`` (n,) or a SolveResult.
    """

    #: a dual method returns its own iterate, coef = w(dual_coef) (GUIDE §1)
    mixes_best_pair = False
    #: coupling="deflated": the seed of the randomized SVD (None otherwise)
    svd_seed = None
    name = "cocoa"
    summary = ("CoCoA+ with local SDCA (Ma et al. 2015) and the exact step on the "
               "summed update (Lee & Roth 2015), in process or on Dask")
    options_class = CoCoAOptions
    supports_l1 = False
    supports_client = True

    def _partitions(self):
        """K: the option, else one partition per thread in process (more
        partitions than threads only cost epochs: the blocks' changes overlap
        and the step on their sum, or sigma' = K, shrinks them), else the parts
        of partitioned input or the Dask workers."""
        o = self.opts
        if o.n_partitions is not None:
            return o.n_partitions
        if o.client is None and not is_partitioned(self.problem):
            return min(resolve_n_jobs(o.n_jobs), self.problem.n)
        return _default_partitions(o.client, self.problem)

    def validate_options(self):
        o = self.opts
        if resolve_n_jobs(o.n_jobs) > 1 and o.local_solver != "sdca" \
                and o.client is not None:
            raise ValueError("n_jobs with a client runs threads inside each worker's "
                             "local SDCA (local_solver='sdca'); the uniform local "
                             "solver runs on one thread per partition")
        if o.coupling == "deflated":
            if o.client is not None or is_partitioned(self.problem):
                raise ValueError("coupling='deflated' runs in process (no client, no "
                                 "partitioned input)")
            if o.aggregation != "line_search" or o.local_solver != "sdca":
                raise ValueError("coupling='deflated' needs aggregation='line_search' and "
                                 "local_solver='sdca' (the step on the summed update "
                                 "adapts the factor on the rest)")
        K = self._partitions()
        self._check_engine_options(K)
        if K > self.problem.n:
            raise ValueError(f"n_partitions={K} is larger than n={self.problem.n}")

    def setup(self):
        o = self.opts
        self.n_jobs = resolve_n_jobs(o.n_jobs)
        K = self._partitions()
        self._setup_engine_options(K)
        self.H = int(-(-self.problem.n // K)) if o.local_iters is None else o.local_iters
        self.K = K
        if o.aggregation in ("adding", "subspace"):
            self.gamma, self.sigma_prime = 1.0, float(K)
        elif o.aggregation == "averaging":
            self.gamma, self.sigma_prime = 1.0 / K, 1.0
        else:       # line_search: each partition as if alone, the driver picks the step
            self.gamma, self.sigma_prime = 1.0, 1.0

    @property
    def steps_per_round(self):
        return self.K * self.H

    def round_spec(self):
        mode = MODE_COCOA_SDCA if self.opts.local_solver == "sdca" else MODE_COCOA
        if self.opts.aggregation == "line_search":
            mode |= LINE_SEARCH
        elif self.opts.aggregation == "subspace":
            mode |= SUBSPACE
        return mode, self.H, self.sigma_prime, self.gamma

    def eso_beta(self):
        return self.sigma_prime

    def init_state(self, warm_start):
        self.svd_seed = int(self.rng.integers(2**32)) if self.opts.coupling == "deflated" \
            else None
        self.engine_init_state(self.warm_start_alpha())
        self._set_shared()
        self._set_threads()
        self._set_memory()

    def _set_memory(self, arrays=None):
        """aggregation="subspace": the engine's memory of steps (empty, or a
        checkpoint's)."""
        if self.opts.aggregation != "subspace":
            return
        self.engine.set_subspace_memory(self.opts.memory)
        if arrays is not None and "subspace_dalpha" in arrays:
            self.engine.set_subspace_memory_rows(arrays["subspace_dalpha"],
                                                 arrays["subspace_dv"])

    def _set_shared(self, sig_rest=1.0):
        """coupling="deflated": the shared directions onto the block (their
        randomized SVD counted as ``SVD_PASSES`` passes over the data)."""
        if self.svd_seed is None:
            return
        rows = self.problem.rows
        U = shared_directions(rows.X, self.opts.shared_directions, self.svd_seed)
        self.engine.block.set_shared_directions(U, self.K, sig_rest)
        self.feature_accesses += SVD_PASSES * rows.nnz

    def _set_threads(self):
        self.engine.set_threads(self.n_jobs)

    def advance(self, n_epochs, deadline):
        self.engine_advance(n_epochs, deadline)

    def certificate(self):
        return self.engine_certificate()

    def get_state(self):
        meta, arrays = self.engine_get_state()
        if self.opts.aggregation == "subspace":
            dalpha, dv = self.engine.subspace_memory()
            arrays = dict(arrays, subspace_dalpha=dalpha, subspace_dv=dv)
        if self.svd_seed is not None:
            meta.update(svd_seed=self.svd_seed, sigma_rest=float(self.engine.block.sig_rest))
        return meta, arrays

    def set_state(self, meta, arrays):
        self.engine_set_state(meta, arrays)
        self.svd_seed = meta.get("svd_seed") if self.opts.coupling == "deflated" else None
        if self.opts.coupling == "deflated" and self.svd_seed is None:
            raise ValueError("the checkpoint is not of a coupling='deflated' run")
        if self.svd_seed is not None:
            accesses = self.feature_accesses
            self._set_shared(float(meta["sigma_rest"]))
            self.feature_accesses = accesses
        self._set_threads()
        self._set_memory(arrays)

    def trace_extras(self):
        out = self.engine_trace_extras()
        if self.svd_seed is not None:
            out["sigma_rest"] = float(self.engine.block.sig_rest)
        return out

