"""Mini-batch SDCA (mSDCA): Takac, Richtarik & Srebro, "Distributed Mini-Batch
SDCA" (2015), Algorithm 1 with the ESO weights of Section 4.3: the registry's
:class:`MinibatchSDCASolver` (the problem, the samplings, the ESO weights, the
step rules, the threads and the options are in its docstring), run in memory
(:class:`MinibatchSDCALocal`) or on partitions (:class:`MinibatchSDCAEngine`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait

import numpy as np

from ..blocks.sdca_threads import pass_threads
from ..kernels.minibatch import (MODE_MSDCA, STATUS_ABORTED, STATUS_NONFINITE, DualState,
                                 MiniBatch, SerialWork, ThreadTeam, ThreadWork, msdca_serial,
                                 msdca_thread, row_splits, sparse_eso_weights)
from ..kernels.threadsync import make_flags, signal_abort
from ._base import Solver, register
from ._options import CommonOptions, EngineOptions, ThreadOptions, choice, number
from .._util.threads import resolve_n_jobs
from .._util.clients import check_client, client_workers
from ..validation import raise_nonfinite
from ._rounds import RoundsMixin, is_partitioned, next_check_target

__all__ = ["MinibatchSDCASolver", "MinibatchSDCALocal", "MinibatchSDCAEngine",
           "MinibatchSDCAOptions", "minibatch_class", "eso_factor", "sparse_eso", "sigma_squared"]

_POWER_RTOL = 1e-4
_POWER_MAXITER = 500


# ------------------------------------------------------------------ ESO
def sigma_squared(ops, n, method="power"):
    """``sigma^2 = lambda_max(D^-1/2 X X^T D^-1/2) / n`` (Section 4.3).

    ``ops`` provides ``gram_matvec(z) = X^T D^-1 X z``, ``column_counts()`` and
    ``omega_ratio(omega)`` (in memory: :class:`primaldual.rows.Rows`;
    distributed: an engine).  Returns ``(sigma2, info)``.
    """
    omega = ops.column_counts()
    bound = ops.omega_ratio(omega)           # >= lambda_max (Lemma 5.4, omega_j form)
    if method == "bound":
        return bound / n, {"sigma_method": "bound", "omega_bound": bound / n}
    d = omega.shape[0]
    z = np.random.Generator(np.random.PCG64(0)).standard_normal(d)
    z /= np.linalg.norm(z)
    rho, res, it = 0.0, np.inf, 0
    for it in range(1, _POWER_MAXITER + 1):
        mz = ops.gram_matvec(z)
        rho = float(z @ mz)
        res = float(np.linalg.norm(mz - rho * z))
        nm = float(np.linalg.norm(mz))
        if nm == 0.0:                        # X == 0
            rho, res = 0.0, 0.0
            break
        if res <= _POWER_RTOL * rho:
            break
        z = mz / nm
    lam_max = min(rho + res, bound)
    return lam_max / n, {"sigma_method": "power", "power_iters": it,
                         "power_rayleigh": rho / n, "omega_bound": bound / n}


def eso_factor(sampling, eso, b, n, C, sigma2):
    """The factor ``beta`` of ``v_i = beta ||x_i||^2`` (every dense formula)."""
    ns2 = n * sigma2
    if sampling == "serial":
        return 1.0
    if eso == "cauchy_schwarz":
        return float(b)
    if sampling == "standard":
        return 1.0 + (b - 1.0) * (ns2 - 1.0) / max(1.0, n - 1.0)
    if eso == "safe":
        return 2.0 * (1.0 + b * sigma2)
    if b == C:
        return 1.0 + b * sigma2
    if b >= 2 * C:
        return b / (b - C) * (1.0 + (b - C) * (ns2 - 1.0) / max(C, n - C))
    raise ValueError(f"eso='dense' with distributed sampling needs batch_size == "
                     f"n_partitions or batch_size >= 2 n_partitions (Section 4.3), got "
                     f"b={b}, C={C}; use eso='safe'")


def sparse_eso(rows, b, omega=None):
    """``v_i = sum_j x_ij^2 (1 + (b-1)(omega_j - 1)/max(1, n-1))`` (standard sampling)."""
    if omega is None:
        omega = rows.column_counts()
    out = np.empty(rows.n)
    sparse_eso_weights(rows.data, rows.indices, rows.indptr, rows.iptr, omega,
                       float(b), rows.n, out)
    return out


def _column_bounds(rows, n_chunks):
    """``n_chunks + 1`` column bounds splitting the stored entries about evenly
    (one range per thread; a range may be empty when d is tiny)."""
    counts = rows.column_counts()
    cum = np.cumsum(counts)
    total = cum[-1] if cum.size else 0.0
    if total == 0 or n_chunks <= 1:
        inner = np.full(max(n_chunks - 1, 0), rows.d)
    else:
        targets = total * np.arange(1, n_chunks) / n_chunks
        inner = np.minimum(np.searchsorted(cum, targets, side="right"), rows.d)
    return np.concatenate([[0], inner, [rows.d]]).astype(np.int64)


# -------------------------------------------------------------- options
@dataclass(frozen=True)
class MinibatchSDCAOptions(ThreadOptions, EngineOptions, CommonOptions):
    """The options of :class:`MinibatchSDCASolver` (documented in its docstring)."""

    solver_name = "minibatch_sdca"
    n_partitions: int | None = number(None, integer=True, low=0.0, also=(None,),
                                      doc="C for sampling='distributed' (None: the "
                                          "number of Dask workers with a client, else 4)")
    batch_size: int = number(64, integer=True, low=0.0,
                             doc="b, the rows updated together in one step")
    sampling: str = choice("standard", "serial", "standard", "distributed",
                           doc="one coordinate per step, a uniform batch of b, or b/C "
                               "from each of C blocks")
    step: str = choice("safe", "safe", "naive", "average",
                       doc="batch update: ESO-weighted (safe), summed serial steps "
                           "(naive), or their average")
    eso: str = choice("auto", "auto", "dense", "sparse", "safe", "cauchy_schwarz",
                      doc="which expected separable over-approximation weights the "
                          "safe step (Section 4.3)")
    sigma: str | float = number("power", low=0.0, strict=False, high=1.0,
                                also=("power", "bound"),
                                doc="sigma^2 of the ESO, or how to get it: power "
                                    "iteration or a bound")

    def check(self):
        s, eso, b = self.sampling, self.eso, self.batch_size
        if s == "serial" and b != 1:
            raise ValueError(f"sampling='serial' updates one coordinate per iteration; "
                             f"batch_size must be 1, got {b}")
        if self.step != "safe" and eso != "auto":
            raise ValueError(f"eso={eso!r} sets the weights of step='safe'; "
                             f"step={self.step!r} uses ||x_i||^2, leave eso='auto'")
        if s == "serial" and eso not in ("auto",):
            raise ValueError("sampling='serial' has the single ESO v_i = ||x_i||^2; "
                             "leave eso='auto'")
        if s == "standard" and eso == "safe":
            raise ValueError("eso='safe' is the distributed-sampling bound; with "
                             "sampling='standard' use 'dense', 'sparse' or "
                             "'cauchy_schwarz'")
        if s == "distributed" and eso == "sparse":
            raise ValueError("eso='sparse' is the standard-sampling formula; with "
                             "sampling='distributed' use 'dense', 'safe' or "
                             "'cauchy_schwarz'")
        if s != "distributed":
            for key in ("n_partitions", "client", "recovery_dir", "recovery_every"):
                if getattr(self, key) is not None:
                    raise ValueError(f"{key} applies to sampling='distributed' only "
                                     f"(got sampling={s!r})")
        elif self.n_partitions is not None and b % self.n_partitions:
            raise ValueError(f"(C,b)-distributed sampling draws b/C rows per "
                             f"partition; batch_size={b} is not a multiple of "
                             f"n_partitions={self.n_partitions}")


def minibatch_class(sampling):
    """The class that runs mini-batch SDCA with ``sampling``: the engine class
    for ``"distributed"``, the in-memory one otherwise (what
    :meth:`MinibatchSDCASolver.create` builds)."""
    return MinibatchSDCAEngine if sampling == "distributed" else MinibatchSDCALocal


# --------------------------------------------------------------- solver
@register
class MinibatchSDCASolver(Solver):
    """Mini-batch SDCA (mSDCA): Takac, Richtarik & Srebro, "Distributed Mini-Batch
    SDCA" (2015), Algorithm 1 with the ESO weights of Section 4.3.

    Problem (docs/conventions.md §1, weights ``c_i``, ``W = sum_i c_i``; the paper has ``c_i = 1``,
    ``W = n``)::

        primal  P(w)     = (1/W) sum_i c_i phi_i(x_i . w) + lam/2 ||w||^2
        dual    D(alpha) = (1/W) sum_i c_i (-phi_i*(-alpha_i)) - lam/2 ||w(alpha)||^2
                w(alpha) = (1/(lam W)) sum_i c_i alpha_i x_i

    Update (Algorithm 1, update (2)): at iteration t draw a set ``S_t`` from the
    sampling, hold ``w = w(alpha^(t))`` fixed and, for every ``i in S_t`` in
    parallel,

        Delta_i = argmax_delta  -phi_i*(-(alpha_i + delta)) - delta x_i . w
                                - (c_i v_i / (2 lam W)) delta^2

    then ``alpha_i += Delta_i`` and ``w += (1/(lam W)) sum_{i in S_t} c_i Delta_i x_i``.
    The coordinate maximizer is the shared :func:`dual_step` with
    ``s = c_i v_i / (lam W)``; ``v_i`` are the ESO weights (Definition 1): for
    row-weighted data the ESO of ``f(alpha) = ||sum_i c_i alpha_i x_i||^2`` is
    ``c_i^2`` times the unweighted one, because ``D^-1/2 X X^T D^-1/2`` does not
    change when rows are rescaled.

    Samplings (Section 3)
    ---------------------
    ``sampling="serial"``       one coordinate per iteration (``batch_size=1``): SDCA.
    ``sampling="standard"``     a uniform subset of size ``b`` (the whole data set).
    ``sampling="distributed"``  ``(C, b)``-distributed: the rows are split into
                                ``C = n_partitions`` contiguous blocks and each block
                                contributes a uniform subset of size ``b / C``; each
                                block draws from its own stream
                                ``SeedSequence(seed).spawn(C)``.  Runs on a Dask
                                ``client`` when one is given.

    ESO weights ``v_i`` (Section 4.3), with ``sigma^2 = lambda_max(D^-1/2 X X^T D^-1/2) / n``
    --------------------------------------------------------------------------------------
    ``eso="dense"`` standard:   ``(1 + (b-1)(n sigma^2 - 1) / max(1, n-1)) ||x_i||^2``
    ``eso="sparse"`` standard:  ``sum_j x_ij^2 (1 + (b-1)(omega_j - 1) / max(1, n-1))``
    ``eso="dense"`` distributed, ``b >= 2C``:
        ``b/(b-C) (1 + (b-C)(n sigma^2 - 1) / max(C, n-C)) ||x_i||^2``
    ``eso="dense"`` distributed, ``b = C``:  ``(1 + b sigma^2) ||x_i||^2``
    ``eso="safe"`` distributed, any ``b``:  ``2 (1 + b sigma^2) ||x_i||^2``
    ``eso="cauchy_schwarz"`` any sampling:  ``b ||x_i||^2`` (from
        ``||sum_{i in S} t_i x_i||^2 <= |S| sum ||t_i x_i||^2``; CoCoA+'s
        ``sigma' = K`` choice, see :mod:`primaldual.solvers.cocoa`)
    ``eso="auto"``: serial ``||x_i||^2``; standard and distributed ``dense`` (``b``
        must be a multiple of ``C``, so ``b = C`` or ``b >= 2C`` always holds).

    The paper prints the sparse formula and the ``omega`` bound with ``||x_i||_0``
    (non-zeros of example i) where its sources (Richtarik & Takac 2012, Thm. on
    partially separable functions; Fercoq et al. 2014, Lemma 5.4) have
    ``omega_j``, the number of examples that use feature ``j``.  The printed
    version is not an ESO: two identical one-feature examples with ``b = 2`` get
    ``v_i = ||x_i||^2``, the naive step of Section 3, which never converges.  We
    implement ``omega_j`` (tests check both facts).

    ``sigma="power"``: power iteration on ``X^T D^-1 X`` (same non-zero spectrum as
    ``D^-1/2 X X^T D^-1/2``, never densified), stopped when the residual
    ``||M z - rho z|| <= 1e-4 rho``; the estimate is ``rho + ||M z - rho z||``
    (an upper estimate of the top eigenvalue) capped by the ``omega`` bound.  The
    start vector is a fixed pseudo-random vector (seed 0), so ``sigma^2`` does not
    depend on ``random_state``.  ``sigma="bound"``:
    ``sigma^2 <= omega = (1/n) max_i sum_j omega_j x_ij^2 / ||x_i||^2``.
    A float is taken as ``sigma^2`` itself.

    Step rules (Section 3)
    ----------------------
    ``step="safe"``     update (2) with the ESO weights above.
    ``step="naive"``    ``v_i = ||x_i||^2`` and the summed update: each ``Delta_i``
                        is the serial SDCA step (1); may diverge or oscillate.
    ``step="average"``  the serial steps averaged, ``alpha += (1/|S|) sum Delta_i``:
                        safe but no faster than one coordinate per iteration.

    Multi-core (``n_jobs``): one OS thread per worker runs the ``nogil`` kernel
    :func:`~primaldual.kernels.minibatch.msdca_thread`.  Each thread owns a column
    range of ``w`` (ranges balanced by stored entries): it computes its part of
    every inner product of the batch, then the update (2) of its share of the
    batch from the summed parts, then adds the changes to its own columns.  So
    ``w`` never moves between cores' caches, and the threads meet at two spin
    barriers per iteration (:mod:`primaldual.kernels.threadsync`) instead of
    paying a thread pool's fork/join per parallel region.  Results are
    deterministic for a given ``random_state`` and ``n_jobs``; against one
    thread only the association of each inner product's sum differs (the tests
    check agreement to 1e-12 after several epochs).  Used when ``n_jobs > 1`` and
    ``batch_size >= 16``.

    Options
    -------
    The fields of :class:`MinibatchSDCAOptions`, checked when it is built (a bad value is a
    ValueError naming the option); ``solver.opts`` holds them as given.

    batch_size : int, default 64          ``b``
    sampling : "serial" | "standard" | "distributed", default "standard"
    step : "safe" | "naive" | "average", default "safe"
    eso : "auto" | "dense" | "sparse" | "safe" | "cauchy_schwarz", default "auto"
    sigma : "power" | "bound" | float, default "power"
    n_jobs : int or None, default None     threads: None or 1 one, -1 all cores (joblib's
        convention, :func:`primaldual.solvers._threads.resolve_n_jobs`)
    n_partitions : int or None        ``C`` for ``sampling="distributed"`` (default
        the number of Dask workers with a client, else 4)
    client, round_timeout, recovery_every, recovery_dir, max_recoveries :
        Dask engine options, see ``docs/distributed.md``.

    Warm start: a feasible ``alpha`` (n,) or a SolveResult.  Unequal partition
    sizes (``n`` not a multiple of ``C``) are accepted; the paper's formulas assume
    equal sizes, so ``C`` should divide ``n`` for the guarantees to apply exactly.

    The registry's entry ``"minibatch_sdca"``.  :meth:`create` (what
    ``solve`` and the registry's users call) builds a
    :class:`MinibatchSDCALocal` (samplings "serial" and "standard", in memory,
    on threads) or a :class:`MinibatchSDCAEngine` (sampling "distributed",
    partitions on an engine), chosen by :func:`minibatch_class`; this class
    holds what both share: the options, the ESO and the step rule, and is
    abstract (``init_state``, ``advance``, ``certificate`` are the two
    classes'), so it is not built itself.
    """

    #: a dual method returns its own iterate, coef = w(dual_coef) (GUIDE §1)
    mixes_best_pair = False

    name = "minibatch_sdca"
    summary = "mini-batch SDCA with ESO steps (Takac, Richtarik & Srebro 2015)"
    options_class = MinibatchSDCAOptions
    supports_l1 = False
    supports_client = True

    @classmethod
    def create(cls, problem, **kwargs):
        """The solver for ``kwargs["sampling"]`` (default "standard"): a
        :class:`MinibatchSDCALocal` or a :class:`MinibatchSDCAEngine`."""
        sampling = kwargs.get("sampling", MinibatchSDCAOptions.sampling)
        return minibatch_class(sampling)(problem, **kwargs)

    def validate_options(self):
        want = minibatch_class(self.opts.sampling)
        if not isinstance(self, want):
            raise ValueError(f"sampling={self.opts.sampling!r} runs on {want.__name__}, "
                             f"not {type(self).__name__}; build it with "
                             f"MinibatchSDCASolver.create(...), which picks the class")
        b, n = self.opts.batch_size, self.problem.n
        if b > n:
            raise ValueError(f"batch_size={b} is larger than n={n}")

    def setup(self):
        self.b = self.opts.batch_size
        self.n_threads = resolve_n_jobs(self.opts.n_jobs)
        prob = self.problem
        # a check's certificate pass reads alpha and w only: on the threads asked
        # for wherever each gets its share of entries, whatever runs the steps
        self.cert_threads = pass_threads(prob.n, prob.nnz, self.opts.n_jobs) \
            if prob.loss.builtin else 1
        self.eso = self._resolve_eso()

    def _resolve_eso(self):
        o = self.opts
        if o.step != "safe":
            return "none"
        if o.sampling == "serial":
            return "serial"
        if o.eso != "auto":
            return o.eso
        return "dense"   # standard; distributed: b is a multiple of C, so b == C or b >= 2C

    def _sigma2(self, ops):
        sig = self.opts.sigma
        if not isinstance(sig, str):
            self.eso_info = {"sigma_method": "given"}
            return float(sig)
        s2, self.eso_info = sigma_squared(ops, self.problem.n, sig)
        return s2

    @property
    def step_scale(self):
        """The factor of the summed steps: ``1/b`` for step='average'."""
        return 1.0 / self.b if self.opts.step == "average" else 1.0

    def _check_finite(self, cert):
        if not (np.isfinite(cert.primal) and np.isfinite(cert.v).all()):
            raise FloatingPointError(
                f"mini-batch SDCA diverged after {self.epochs:g} epochs (the primal "
                f"objective is no longer finite) with step={self.opts.step!r}, "
                f"batch_size={self.b}: the summed serial steps overshoot on correlated "
                f"rows (Section 3); use step='safe' (ESO weights) or a smaller batch_size")
        return cert

    def trace_extras(self):
        return {"iterations": int(self.steps // self.b)}


class MinibatchSDCALocal(MinibatchSDCASolver):
    """Samplings "serial" and "standard": the rows in memory, one or several
    threads (``n_jobs``)."""

    def validate_options(self):
        super().validate_options()
        if is_partitioned(self.problem):
            raise ValueError("partitioned input needs sampling='distributed'")

    def _local_curvature(self):
        """ESO weights v_i for serial/standard sampling (in memory)."""
        prob = self.problem
        r = prob.rows
        self.eso_info = {}
        if self.eso in ("none", "serial"):
            return r.sqnorm.copy()
        if self.eso == "cauchy_schwarz":
            return self.b * r.sqnorm
        if self.eso == "sparse":
            return sparse_eso(r, self.b)
        self.sigma2 = self._sigma2(r)
        return eso_factor("standard", "dense", self.b, prob.n, 1, self.sigma2) * r.sqnorm

    # ------------------------------------------------------------- state
    def init_state(self, warm_start):
        alpha0 = self.warm_start_alpha()
        prob = self.problem
        self.alpha = np.zeros(prob.n) if alpha0 is None else alpha0
        self.v = np.zeros(prob.d) if alpha0 is None else prob.dual_image(self.alpha)
        self._setup_local()

    def _setup_local(self):
        prob = self.problem
        self.curv = self._local_curvature()
        b = self.b
        self.perm = np.arange(prob.n, dtype=np.int64)
        self.swaps = np.zeros(b, dtype=np.int64)
        self.batch = np.zeros(b, dtype=np.int64)
        self.deltas = np.zeros(b)
        self.coefs = np.zeros(b)
        self.parallel = self.n_threads > 1 and b >= 16
        T = self.n_threads_used = min(self.n_threads, b) if self.parallel else 1
        self.col_bounds = _column_bounds(prob.rows, T)
        if self.parallel:
            # shared: partial products, new and old dual values (double
            # buffered); private: the batch-drawing scratch (every thread draws
            # the same S_t) and the scatter coefficients, thread 0 using the
            # serial path's arrays
            self.pdot = np.zeros((2, T, b))
            self.news2 = np.zeros((2, b))
            self.olds2 = np.zeros((2, b))
            self.t_perm = [self.perm] + [self.perm.copy() for _ in range(T - 1)]
            self.t_swaps = [self.swaps] + [np.zeros(b, dtype=np.int64) for _ in range(T - 1)]
            self.t_batch = [self.batch] + [np.zeros(b, dtype=np.int64) for _ in range(T - 1)]
            self.t_coefs = [self.coefs] + [np.zeros(b) for _ in range(T - 1)]
            self.splits = np.zeros((prob.n, T - 1), dtype=np.int32)
            row_splits(prob.rows.indices, prob.rows.indptr, prob.rows.iptr, self.col_bounds,
                       self.splits)

    def get_state(self):
        return {}, {"alpha": self.alpha.copy(), "v": self.v.copy()}

    def set_state(self, meta, arrays):
        self.alpha = np.array(arrays["alpha"], dtype=np.float64)
        self.v = np.array(arrays["v"], dtype=np.float64)
        self._setup_local()

    # ----------------------------------------------------------- advance
    def advance(self, n_epochs, deadline):
        prob = self.problem
        b = self.b
        total = (next_check_target(self.steps // b, b, prob.n, self.check_every,
                                   self.max_epochs) - self.steps // b)
        chunk = total if deadline is None else max(1, -(-total // 10))
        scale = self.step_scale
        rows, spec = prob.rows_view(), prob.step_spec()
        mb = MiniBatch(self.curv, int(b), float(scale))
        state = DualState(self.alpha, self.v)
        done = 0
        while done < total:
            it = min(chunk, total - done)
            u = self.rng.random(it * b)
            args = (rows, spec, mb, state, u, int(it))
            if self.parallel:
                st, k, acc, bad = self._run_threads(args)
            else:
                st, k, acc, bad = msdca_serial(*args, SerialWork(self.perm, self.swaps,
                                                                 self.batch, self.deltas,
                                                                 self.coefs))
            self.feature_accesses += acc
            self.steps += k * b
            if st == STATUS_NONFINITE:
                raise_nonfinite(prob.lam, bad)
            done += it
            if deadline is not None and time.perf_counter() >= deadline:
                break

    def _run_threads(self, args):
        """Run :func:`msdca_thread` on ``n_jobs`` OS threads (the kernel
        releases the GIL); any failure or interrupt aborts the others'
        barriers so nothing is left spinning."""
        T = self.n_threads_used
        flags = make_flags(T)

        def work(tid):
            team = ThreadTeam(tid, T, flags, self.pdot, self.news2, self.olds2, self.splits)
            return msdca_thread(team, *args, ThreadWork(self.t_perm[tid], self.t_swaps[tid],
                                                        self.t_batch[tid], self.t_coefs[tid]))

        with ThreadPoolExecutor(max_workers=T, thread_name_prefix="msdca") as pool:
            futures = [pool.submit(work, tid) for tid in range(T)]
            try:
                done, _ = wait(futures, return_when=FIRST_EXCEPTION)
                for f in done:
                    if f.exception() is not None:
                        raise f.exception()
                results = [f.result() for f in futures]
            except BaseException:
                signal_abort(flags, T)
                wait(futures)
                raise
        statuses = {res[0] for res in results}
        if STATUS_ABORTED in statuses:     # only reachable through signal_abort
            raise RuntimeError("mini-batch SDCA threads were aborted")
        st, k, _, bad = results[0]
        assert all(res[0] == st and res[1] == k for res in results)
        return st, k, sum(res[2] for res in results), bad

    # ------------------------------------------------------- certificate
    def certificate(self):
        prob = self.problem
        with np.errstate(over="ignore", invalid="ignore"):
            cert = prob.certificate(self.v / prob.lam, self.alpha, self.cert_threads)
        self.v = cert.v
        return self._check_finite(cert)


class MinibatchSDCAEngine(RoundsMixin, MinibatchSDCASolver):
    """Sampling "distributed": ``C = n_partitions`` partitions on an engine
    (in process, or on a Dask client), each drawing ``b / C`` rows a round."""

    def _partitions(self):
        """``C``: as given, else the parts of partitioned input, the client's
        workers, or 4."""
        o = self.opts
        if o.n_partitions is not None:
            return o.n_partitions
        return _default_partitions(o.client, self.problem)

    def validate_options(self):
        super().validate_options()
        C = self._partitions()
        self._check_engine_options(C)
        if self.opts.batch_size % C:
            raise ValueError(f"(C,b)-distributed sampling draws b/C rows per "
                             f"partition; batch_size={self.opts.batch_size} is not a "
                             f"multiple of n_partitions={C}")

    def setup(self):
        super().setup()
        self._setup_engine_options(self._partitions())

    def eso_beta(self):
        """ESO factor of the engine's partitions (distributed sampling)."""
        self.eso_info = {}
        if self.eso == "none":
            return 1.0
        if self.eso == "cauchy_schwarz":
            return float(self.b)
        self.sigma2 = self._sigma2(self.engine)
        return eso_factor("distributed", self.eso, self.b, self.problem.n,
                          self.n_partitions, self.sigma2)

    @property
    def steps_per_round(self):
        return self.b

    def round_spec(self):
        return MODE_MSDCA, self.b // self.n_partitions, 0.0, self.step_scale

    def init_state(self, warm_start):
        self.engine_init_state(self.warm_start_alpha())

    def get_state(self):
        return self.engine_get_state()

    def set_state(self, meta, arrays):
        self.engine_set_state(meta, arrays)

    def advance(self, n_epochs, deadline):
        return self.engine_advance(n_epochs, deadline)

    def certificate(self):
        return self._check_finite(self.engine_certificate())

    def trace_extras(self):
        out = super().trace_extras()
        out.update(self.engine_trace_extras())
        return out


def _default_partitions(client, problem):
    if is_partitioned(problem):
        return problem.n_parts
    if client is not None:
        check_client(client)
        return max(1, len(client_workers(client)))
    return 4
