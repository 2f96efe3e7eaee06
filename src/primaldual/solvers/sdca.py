"""SDCA: stochastic dual coordinate ascent (Shalev-Shwartz & Zhang, JMLR 14, 2013).

Problem (docs/conventions.md §1, weights ``c_i``, ``W = sum_i c_i``)::

    primal  P(w)     = (1/W) sum_i c_i phi_i(x_i . w) + lam/2 ||w||^2
    dual    D(alpha) = (1/W) sum_i c_i (-phi_i*(-alpha_i)) - lam/2 ||w(alpha)||^2
            w(alpha) = (1/(lam W)) sum_i c_i alpha_i x_i

Update (Procedure SDCA, eq. in Section 3; closed forms of Section 6): pick
``i``, then choose ``Delta alpha_i`` to maximize::

    -phi_i*(-(alpha_i + Delta)) - (lam W / (2 c_i)) ||w + (c_i/(lam W)) Delta x_i||^2

and set ``alpha_i += Delta``, ``w += (c_i/(lam W)) Delta x_i``.  With unit
weights this is exactly the paper's step with ``lam n``.  The maximizer is
closed form for every loss but logistic, which uses a safeguarded Newton
iteration to 1e-12 (:func:`primaldual.kernels.loss_kernels.dual_step`).

Options
-------
sampling : "uniform" | "permutation" | "cyclic", default "permutation"
    "uniform" is Procedure SDCA (i drawn with replacement); "permutation" is
    SDCA-Perm (a fresh random permutation every epoch, Section 6);
    "cyclic" draws one order at random and keeps it (Section 8.5, Fig. 5).
output : "last" | "average" | "random", default "last"
    The Procedure's output options: the last iterate, the average of
    ``alpha^{(t-1)}`` for ``t = T0+1..T`` (with ``w_bar = w(alpha_bar)``), or an
    iterate drawn uniformly from ``T0+1..T`` (kept by reservoir sampling, so
    the draw stays uniform whenever the run stops).  Before ``T0`` steps the
    output is the last iterate.
T0 : float or None
    Start of averaging / random output, in epochs.  None means
    ``max_epochs / 2`` (the paper's "a good choice of T0 is T/2").
init : "zero" | "sgd", default "zero"
    "sgd" runs Procedure Modified-SGD (Section 4) as the first epoch, over
    a random permutation, then continues SDCA from its alpha.
shrinking : "auto" | True | False, default "auto"
    LIBLINEAR-style active set for losses whose dual domain is a box (hinge,
    smooth_hinge, squared_hinge, absolute, epsilon_insensitive): a
    coordinate at a bound (or the kink at 0 of epsilon-insensitive) whose
    slopes push outward by more than the previous pass's largest violation
    *in the opposite direction* is removed from the passes (one-sided
    thresholds, LIBLINEAR's ``PGmax_old`` / ``PGmin_old``: a coordinate at its
    lower end is compared with the largest downward violation, one at its
    upper end with the largest upward violation).  With shrinking the passes
    themselves run inside the kernel (``sdca_passes``), drawn from
    uniforms of the solver's generator, because the active set can get so
    small that a Python round trip per pass would dominate.  At every check, shrunk coordinates
    whose share of the exact duality gap exceeds ``tol * |P| / n`` are
    re-activated; convergence is always declared on the exact gap over all
    ``n`` coordinates.  "auto" turns it on for box losses with
    ``output="last"``.  ``shrinking=False`` is the paper's SDCA exactly.

Elastic net (``l1 > 0``): Prox-SDCA (Shalev-Shwartz & Zhang, "Accelerated
proximal stochastic dual coordinate ascent", 2014/2016) with the exact
coordinate step: ``Delta`` maximizes
``-phi_i*(-(alpha_i + Delta)) - (W/c_i) g*(v + (c_i/W) Delta x_i)`` with
``g*(v) = sum_j max(|v_j| - l1, 0)^2/(2 lam)``, piecewise quadratic along the
line; the breakpoints are walked in order
(:mod:`primaldual.kernels.prox_sdca`).  The primal point is
``w(alpha) = soft_threshold(v, l1)/lam``.  ``init="sgd"`` is not available
with ``l1 > 0``.

Threads (``n_jobs = k > 1``): asynchronous dual coordinate ascent on the
passes of SDCA-Perm, in the manner of PASSCoDe (Hsieh, Yu & Dhillon, ICML
2015) with thread-local dual images, as in Snap ML's SySCD (Ioannou et al.,
NeurIPS 2019).  Each pass (a random order of the coordinates not shrunk,
drawn by the driver from ``random_state``) is cut into contiguous chunks of
about ``CHUNK_NNZ`` (200,000) stored entries (``k`` to ``16 k`` of them), and
``k`` threads take the chunks in turn and run the serial kernel
:func:`~primaldual.kernels.sdca.sdca_epoch` on each, so a thread slowed by
other work on its core takes fewer.
``alpha_i`` has one writer per pass.  Each thread steps on its own copy of
the dual image ``v`` (:class:`~primaldual.kernels.sdca.ThreadCopy`): every
``sync_every`` updates it adds its change since the last sync, ``v - base``,
to the shared image and refreshes its copy from it
(:func:`~primaldual.kernels.sdca.sync_copy`, one pass over the ``d``
entries), and once more at the end of the pass.  So a step's margin misses
at most the other threads' last ``sync_every`` updates (PASSCoDe's bounded
delay), and no two cores write the same cache lines between syncs.  Writing
one shared ``v`` entry by entry (``sync_every=0``: PASSCoDe's "wild" variant,
or its "atomic" one with ``atomic=True``) is kept as an option; per thread of two
it costs 9.6-15.8 ns per stored entry on the CCAT shape (39 with atomic
additions), against 8.2-8.9 for the copies and 7.5 for one thread (the cores
take turns owning the cache lines of ``v``; benchmarks/results/scaling.md).  ``sync_every="auto"`` (:func:`auto_sync_every`) syncs every
``8 d / mean row nnz`` updates, so that the syncs cost about 1/32 of the
steps (a step costs about 4 ns per entry of its row, a sync about 1 ns per
column), but at most ``(2.5 / c)^2`` updates, ``c`` the mean cosine between
rows (:func:`mean_row_cosine`): a step that misses ``S`` updates of the
other threads has a margin error of about ``sqrt(S) c``; clamped to
4..8,192.  The CCAT shape (``c`` = 0.02): 5,000 (the cost rule); covtype
(``c`` = 0.89): 8, where 37 (the cost rule alone) took 14-22 epochs to a
certified 1e-6 at lam 1e-6 against 11 with 8 and 8 on one thread.
With ``atomic="auto"`` (the default) a sync's additions to the shared image
are atomic: two threads syncing at once lose updates otherwise (measured on
the CCAT shape: a relative drift of 2e-4 at one check, which the certificate
caught and paid for with a second pass); on the CCAT shape an atomic sync
costs 2.8 ns per column against 0.4, about 6% of the steps between syncs.
With one shared ``v`` (``sync_every=0``) "auto" picks atomic additions when
concurrent writes to one entry are frequent, i.e. when the column overlap
(:func:`column_overlap`: the share of the rows holding the column of a
random stored entry) is at least ``ATOMIC_OVERLAP`` (0.3): covtype (0.86)
and a9a (0.45) get atomic additions, text (the CCAT shape 0.18, reuters
0.08) plain ones.  A lost plain addition is caught by the certificate
(below).

Shrinking works as in the serial solver, on the whole active set: the
threads report their pass's largest violations, and the driver sets the next
pass's thresholds.  A pass whose active rows hold fewer than
``MIN_NNZ_PER_THREAD * k`` stored entries is not worth a wake-up of the
threads: from then on the passes run in the serial in-kernel loop
(``sdca_passes``) until the next check.  ``n_jobs`` is an upper bound: each
thread gets at least ``MIN_NNZ_PER_THREAD`` (100,000) stored entries per
pass; ``res.extras["threads"]`` is the number used.

The certificate stays exact: at every check the fresh ``v(alpha)`` of the
certificate pass (itself run on the threads) replaces the shared ``v``; if
they differ by more than rounding (a lost plain addition, or
``sampling="uniform"`` drawing one coordinate in two slices at once), the
certificate is recomputed at ``w(alpha)`` from the fresh image.  What is
deterministic with ``n_jobs > 1``: the passes (the sample order depends on
``random_state`` only); not the iterates, since the threads' interleaving
decides which updates a step sees.  Runs agree on the optimum to the
tolerance, each certified.  For bitwise repeatable multi-core runs use
``solver="cocoa"`` (fixed partitions, a deterministic reduction).
``n_jobs=1`` is the serial solver exactly.  Not with ``output="average"`` or
``"random"``.

Options ``n_jobs`` (None or 1: one thread; -1 all cores), ``atomic``
("auto" | True | False, default "auto") and ``sync_every`` ("auto" | int >= 0,
default "auto"; 0 writes the one shared ``v`` directly).

The options are the fields of :class:`SDCAOptions` (checked when they are
built); ``solver.opts`` holds them as given, and the values derived from them
(the threads used, the sync period, shrinking on or off) live on the solver.

Warm start: ``warm_start`` is a feasible ``alpha`` (n,) or a SolveResult.
"""
from __future__ import annotations

import itertools
import math
import time

import numpy as np

from ..kernels.prox_sdca import prox_work_arrays
from ..kernels.sdca import (ORDER_CYCLIC, ORDER_PERMUTATION, ORDER_UNIFORM,
                            STATUS_NONFINITE, STATUS_SNAPSHOT, Averaging, Passes,
                            ThreadCopy, sync_copy,
                            SDCAState, Shrinking, flush_average, modified_sgd_epoch,
                            sdca_epoch, sdca_passes)
from dataclasses import dataclass

from ._base import Solver, register
from ._options import CommonOptions, ThreadOptions, choice, number
from .._util.threads import resolve_n_jobs, run_threads

#: first tolerance on the active set's violation range below which every shrunk
#: coordinate comes back (LIBLINEAR's default eps of its dual solvers); divided
#: by 10 at each re-activation (see kernels.sdca.sdca_passes)
SHRINK_EPS0 = 0.1

#: n_jobs > 1: the fewest stored entries per thread and pass; with fewer, fewer
#: threads are used (a pass costs ~3 ns per entry, waking a thread ~20-50 us)
MIN_NNZ_PER_THREAD = 100_000
#: n_jobs > 1, atomic="auto": atomic additions when the column overlap (the
#: chance that another row has an entry in the column of a random entry) is at
#: least this (covtype 0.86, a9a 0.45, mushrooms 0.49: atomic; the CCAT shape
#: 0.18, reuters 0.08: plain)
ATOMIC_OVERLAP = 0.3
#: n_jobs > 1, sync_every="auto": a thread shares its changes of v and refreshes
#: its copy every clamp(min(SYNC_COST_RATIO d / mean row nnz,
#: (SYNC_STALENESS / mean row cosine)^2), SYNC_MIN, SYNC_MAX) updates (the CCAT
#: shape: ~5,000; covtype: 8; see the module docstring)
SYNC_COST_RATIO = 8.0
SYNC_STALENESS = 2.5
SYNC_MIN = 4
SYNC_MAX = 8192
#: n_jobs > 1: a pass is cut into chunks of about this many stored entries,
#: which the threads take in turn (at least one, at most MAX_CHUNKS_PER_THREAD
#: per thread)
CHUNK_NNZ = 200_000
MAX_CHUNKS_PER_THREAD = 16
#: n_jobs > 1: relative drift of the threads' dual image from v(alpha) above
#: which the certificate is recomputed at w(alpha) (rounding alone is ~1e-16
#: sqrt(steps))
RESYNC_DRIFT = 1e-11

_ORDER_CODES = {"uniform": ORDER_UNIFORM, "permutation": ORDER_PERMUTATION,
                "cyclic": ORDER_CYCLIC}


def column_overlap(rows) -> float:
    """``sum_j omega_j^2 / (n nnz)``, ``omega_j`` the rows with an entry in column
    j: the share of the rows that hold the column of a random stored entry.
    Concurrent steps write the same entry of ``v`` at about this rate."""
    omega = rows.column_counts()
    nnz = float(omega.sum())
    return float(omega @ omega) / (rows.n * nnz) if nnz > 0 else 0.0


#: mean_row_cosine reads at most this many rows (evenly spaced)
COSINE_SAMPLE = 20_000


def mean_row_cosine(rows, sample=COSINE_SAMPLE) -> float:
    """The mean cosine ``x_i . x_j / (||x_i|| ||x_j||)`` over pairs ``i != j`` of
    non-zero rows: ``(||s||^2 - m) / (m (m - 1))`` with ``s`` the sum of the
    ``m`` normalized rows, over at most ``sample`` evenly spaced rows (exact
    when ``n <= sample``).  A step that misses ``S`` updates of other threads
    has a margin error of about ``sqrt(S)`` times this (random signs)."""
    idx = np.unique(np.linspace(0, rows.n - 1, min(rows.n, sample)).astype(np.int64))
    norms = np.sqrt(rows.sqnorm[idx])
    keep = idx[norms > 0]
    m = int(keep.shape[0])
    if m < 2:
        return 0.0
    inv = 1.0 / np.sqrt(rows.sqnorm[keep])
    s = np.asarray(rows.X[keep].T @ inv, dtype=np.float64).ravel()
    return max(float(s @ s) - m, 0.0) / (m * (m - 1.0))


def auto_sync_every(rows) -> int:
    """``sync_every="auto"``: syncs cost about 1/32 of the steps between them
    (``SYNC_COST_RATIO d / mean row nnz``), but no more stale updates than keep
    ``sqrt(S) * mean_row_cosine`` under ``SYNC_STALENESS``."""
    cost = SYNC_COST_RATIO * rows.d / max(rows.nnz / max(rows.n, 1), 1.0)
    cos = mean_row_cosine(rows)
    stale = (SYNC_STALENESS / cos) ** 2 if cos > 0 else math.inf
    return int(min(SYNC_MAX, max(SYNC_MIN, math.ceil(min(cost, stale)))))


def threaded_pass(rows, spec, state, order, start, stop, n_threads, entries, shrink,
                  prox, atomic, sync_every):
    """Run ``order[start:stop]`` (no coordinate twice) on ``n_threads`` threads.

    The range is cut into contiguous chunks of about ``CHUNK_NNZ`` stored
    entries (``entries``: the range's estimated total; ``n_threads`` to
    ``MAX_CHUNKS_PER_THREAD * n_threads`` chunks) that the threads take in
    turn, each running :func:`sdca_epoch` on ``state`` (``prox[k]``: thread
    ``k``'s prox work arrays).  With ``sync_every > 0`` each thread steps on its
    own copy of ``state.v`` and shares it every ``sync_every`` updates and at
    the end (:class:`ThreadCopy`, atomically when ``atomic``); with 0 every
    step writes ``state.v`` (atomically when ``atomic``).  Shared by the
    threaded solver and CoCoA+'s local solver
    (:mod:`primaldual.distributed.local_sdca`).

    Returns ``(results, interrupted)`` as :func:`run_threads` does, one
    ``(status, pos, steps, accesses, max_up, max_down)`` per thread.
    """
    K = n_threads
    n_chunks = int(min(MAX_CHUNKS_PER_THREAD * K, max(K, entries // CHUNK_NNZ)))
    chunks = np.linspace(start, stop, n_chunks + 1).round().astype(np.int64)
    next_chunk = itertools.count().__next__          # atomic under the GIL
    no_avg = Averaging(False, state.v[:0], np.zeros(0, np.int64), 0)

    def task(k, stop_flag):
        copy, local = None, state
        if sync_every:
            # this thread's copy of v and its base: one snapshot (the other
            # threads may already be adding to state.v)
            mine = state.v.copy()
            local = state._replace(v=mine)
            copy = ThreadCopy(mine.copy(), state.v, np.zeros(1, np.int64), sync_every,
                              atomic)
        status, pos, steps, acc, up, down = 0, 0, 0, 0, 0.0, 0.0
        while not stop_flag.is_set():
            c = next_chunk()
            if c >= n_chunks:
                break
            res = sdca_epoch(rows, spec, local, order, chunks[c], chunks[c + 1], 0, -1,
                             shrink, no_avg, prox[k], atomic, copy)
            steps += res.steps
            acc += res.accesses
            up, down = max(up, res.max_up), max(down, res.max_down)
            if res.status != 0:
                status, pos = res.status, res.pos
                break
        if copy is not None:
            sync_copy(local.v, copy)
        return status, pos, steps, acc, up, down

    return run_threads(task, K)


def _raise_nonfinite(problem, i):
    raise FloatingPointError(
        f"non-finite value in the dual step at sample {int(i)} (lam={problem.lam!r}); "
        f"the data or lam is too extreme for double precision: scale the rows "
        f"(e.g. --normalize) or increase lam")


@dataclass(frozen=True)
class SDCAOptions(ThreadOptions, CommonOptions):
    """The options of :class:`SDCASolver` (see the module docstring)."""

    solver_name = "sdca"
    sampling: str = choice("permutation", "uniform", "permutation", "cyclic")
    output: str = choice("last", "last", "average", "random")
    T0: float | None = number(None, low=0.0, strict=False, also=(None,),
                              doc="start of averaging, in epochs; None: max_epochs / 2")
    init: str = choice("zero", "zero", "sgd")
    shrinking: str | bool = choice("auto", "auto", True, False)
    atomic: str | bool = choice("auto", "auto", True, False)
    sync_every: str | bool | int = number("auto", integer=True, low=0.0, strict=False,
                                          also=("auto", False))

    def check(self):
        if self.shrinking is True and self.output != "last":
            raise ValueError("shrinking=True works with output='last' only")


@register
class SDCASolver(Solver):
    __doc__ = __doc__
    name = "sdca"
    summary = "stochastic dual coordinate ascent, closed-form steps (Shalev-Shwartz & Zhang 2013); prox-SDCA for l1 > 0"
    requires = ()
    options_class = SDCAOptions
    supports_l1 = True
    adaptive_checks = True
    # a certified 1e-6 at lam 1e-6 takes SDCA a few hundred epochs (hinge on a9a:
    # ~220); 100 left users with "not converged" where every epoch is cheap
    default_max_epochs = 1000
    # an interrupt lands between kernel calls (Numba defers it), where alpha and
    # v agree; the threads are stopped and waited for (solvers._threads)
    interruptible = True

    def validate_options(self):
        o = self.opts
        if o.shrinking is True and not self.problem.loss.box_dual:
            raise ValueError(f"shrinking=True needs a loss with a box dual domain "
                             f"(hinge, smooth_hinge, squared_hinge, absolute, "
                             f"epsilon_insensitive); loss={self.problem.loss.name!r} has none")
        if o.init == "sgd" and self.warm_start is not None:
            raise ValueError("init='sgd' and warm_start both set the starting alpha; "
                             "choose one")
        if o.init == "sgd" and self.problem.l1 > 0:
            raise ValueError("init='sgd' (Modified-SGD) is defined for the L2 penalty "
                             "only; with l1 > 0 use init='zero'")
        if self._threads_for() > 1 and o.output != "last":
            raise ValueError(f"n_jobs > 1 runs output='last' only (got "
                             f"output={o.output!r}); averaging and random output "
                             f"follow one sequence of iterates, which threads do not have")

    def _threads_for(self):
        """The threads a pass runs on: ``n_jobs`` is an upper bound, a thread
        gets at least MIN_NNZ_PER_THREAD stored entries per pass, else its
        share would not pay for waking it."""
        prob = self.problem
        return max(1, min(resolve_n_jobs(self.opts.n_jobs), prob.n,
                          prob.nnz // max(MIN_NNZ_PER_THREAD, 1)))

    def setup(self):
        o = self.opts
        self.shrinking = (o.shrinking is True
                          or (o.shrinking == "auto" and self.problem.loss.box_dual
                              and o.output == "last"))
        T0 = o.T0 if o.T0 is not None else self.max_epochs / 2.0
        self.T0_steps = int(round(T0 * self.problem.n))
        self._setup_threads()

    def _setup_threads(self):
        o = self.opts
        prob = self.problem
        self.n_threads = self._threads_for()
        if self.n_threads == 1:
            return
        se = o.sync_every
        if se == "auto":
            se = auto_sync_every(prob.rows)
        self.sync_every = int(se or 0)
        a = o.atomic
        if a == "auto":
            # thread copies: a sync's additions are atomic (two threads syncing at
            # once lose updates otherwise; measured: a drift of 2e-4 on the CCAT
            # shape, and the certificate pass then runs twice); one shared v:
            # atomic where concurrent writes to an entry are frequent
            a = (True if self.sync_every
                 else column_overlap(prob.rows) >= ATOMIC_OVERLAP)
        self.atomic = bool(a)

    # ------------------------------------------------------------ state
    def init_state(self, warm_start):
        prob = self.problem
        n, d = prob.n, prob.d
        alpha = self.warm_start_alpha()
        self.alpha = np.zeros(n) if alpha is None else alpha
        self.v = prob.dual_image(self.alpha) if alpha is not None else np.zeros(d)
        self.pending_sgd_init = self.opts.init == "sgd"
        self.cyclic_order = (self.rng.permutation(n).astype(np.int64)
                             if self.opts.sampling == "cyclic" else np.zeros(0, np.int64))
        self.order = np.zeros(0, dtype=np.int64)
        self.pos = 0
        self.shrunk = np.zeros(n, dtype=np.uint8)
        # shrinking: [shrink_up, shrink_down, pass_up, pass_down] (see
        # kernels.sdca.sdca_passes) and the active list of the pass
        self.thr = np.array([np.inf, np.inf, 0.0, 0.0, SHRINK_EPS0])
        self.active = (self._all_active() if self.shrinking else np.zeros(0, np.int64))
        out = self.opts.output
        self.avg_sum = np.zeros(n if out == "average" else 0)
        self.avg_last = np.zeros(n if out == "average" else 0, dtype=np.int64)
        self.snapshot = np.zeros(n if out == "random" else 0)
        self.snap_k = 0          # reservoir: index of the kept candidate
        self.snap_step = -1      # next step whose iterate is a candidate to keep
        self._logit_cache()
        self._prox_scratch()
        self._init_threads()

    def run(self):
        res = super().run()
        res.extras["threads"] = self.n_threads
        return res

    # ---------------------------------------------------------- threads
    def _init_threads(self):
        """n_jobs > 1: the passes are drawn by the driver (every coordinate not
        shrunk, in one random order, cut into one slice per thread)."""
        self.interrupted = False
        if self.n_threads > 1:
            self.active = self._all_active()
            self.thread_prox = [prox_work_arrays(self.problem.rows, self.problem.l1)
                                for _ in range(self.n_threads)]

    def _threaded_pass(self):
        """Draw the next pass for the threads; False when everything is shrunk.

        The same pass logic as the serial kernel :func:`sdca_passes`, over the
        whole active set: LIBLINEAR's re-activation when the active set is
        solved to within ``eps``, the thresholds from the previous pass's
        largest one-sided violations, the coordinates shrunk during it left
        out."""
        thr = self.thr
        if self.shrinking and self.order.shape[0] > 0 and thr[2] + thr[3] <= thr[4]:
            thr[4] *= 0.1
            if self.shrunk.any():
                self.shrunk[:] = 0
                self.active = self._all_active()
                thr[2] = thr[3] = 0.0
        active = self.active[self.shrunk[self.active] == 0]
        if active.shape[0] == 0:
            return False
        thr[0] = thr[2] if thr[2] > 0.0 else np.inf
        thr[1] = thr[3] if thr[3] > 0.0 else np.inf
        thr[2] = thr[3] = 0.0
        s = self.opts.sampling
        if s == "permutation":
            self.order = self.rng.permutation(active)
        elif s == "uniform":
            self.order = active[self.rng.integers(0, active.shape[0], active.shape[0])]
        else:
            self.order = active
        self.active = active
        self.pos = 0
        return True

    def _advance_threads(self, target, deadline):
        """Steps up to ``target`` on ``n_threads`` threads: each pass is cut into
        chunks that the threads take in turn and run with :func:`sdca_epoch`,
        each on its copy of ``v`` (see the module docstring, "Threads")."""
        prob = self.problem
        K = self.n_threads
        rows, spec, state = prob.rows_view(), prob.step_spec(), self._state_view()
        row_nnz = prob.rows.row_nnz
        while self.steps < target:
            if self.pos >= self.order.shape[0]:
                if not self._threaded_pass():
                    self.steps = target                  # everything shrunk
                    break
                if self.shrinking and (int(row_nnz[self.order].sum())
                                       < MIN_NNZ_PER_THREAD * K):
                    # the active set is too small to share out: its passes run
                    # in the serial kernel (each pass would cost a wake-up)
                    return self._advance_shrinking(target, deadline)
            order, thr = self.order, self.thr
            stop = min(order.shape[0], self.pos + (target - self.steps))
            results, interrupted = threaded_pass(
                rows, spec, state, order, self.pos, stop, K,
                (stop - self.pos) * prob.nnz / max(prob.n, 1),
                Shrinking(bool(self.shrinking), thr[0], thr[1]), self.thread_prox,
                self.atomic, self.sync_every)
            for k, (status, pos, t, acc, up, down) in enumerate(results):
                self.steps += t
                self.feature_accesses += acc
                thr[2] = max(thr[2], up)
                thr[3] = max(thr[3], down)
                if status == STATUS_NONFINITE:
                    _raise_nonfinite(prob, order[pos])
            self.pos = stop
            if interrupted:
                self.interrupted = True
                break
            if deadline is not None and time.perf_counter() >= deadline:
                break

    def _logit_cache(self):
        """Logistic loss with L2: the logit of each alpha_i y_i, where the Newton
        iteration of the next step on row i starts (NaN: computed from alpha_i)."""
        prob = self.problem
        use = prob.loss.name == "logistic" and prob.l1 == 0
        self.logit = np.full(prob.n if use else 0, np.nan)

    def _prox_scratch(self):
        """Work arrays of the elastic-net step (2 breakpoints per nonzero)."""
        self.prox_work = prox_work_arrays(self.problem.rows, self.problem.l1)

    def get_state(self):
        meta = {"pos": int(self.pos), "pending_sgd_init": bool(self.pending_sgd_init),
                "snap_k": int(self.snap_k), "snap_step": int(self.snap_step)}
        arrays = {"alpha": self.alpha, "v": self.v, "order": self.order,
                  "active": self.active, "thr": self.thr,
                  "cyclic_order": self.cyclic_order, "shrunk": self.shrunk,
                  "avg_sum": self.avg_sum, "avg_last": self.avg_last,
                  "snapshot": self.snapshot, "logit": self.logit}
        return meta, {k: np.array(a) for k, a in arrays.items()}

    def set_state(self, meta, arrays):
        for k in ("alpha", "v", "order", "active", "thr", "cyclic_order", "shrunk",
                  "avg_sum", "avg_last", "snapshot"):
            setattr(self, k, np.array(arrays[k]))
        if self.thr.shape[0] == 4:        # a state written before eps was kept
            self.thr = np.append(self.thr, SHRINK_EPS0)
        self.pos = int(meta["pos"])
        self.pending_sgd_init = bool(meta["pending_sgd_init"])
        self.snap_k = int(meta["snap_k"])
        self.snap_step = int(meta["snap_step"])
        self._logit_cache()
        if "logit" in arrays and arrays["logit"].shape == self.logit.shape:
            self.logit = np.array(arrays["logit"], dtype=np.float64)
        self._prox_scratch()
        self._init_threads()

    def _state_view(self):
        """The iterates the kernels update in place."""
        return SDCAState(self.alpha, self.v, self.logit, self.shrunk)

    # -------------------------------------------------------- sampling
    def _all_active(self):
        """The coordinates not shrunk, in the order passes are built from."""
        if self.opts.sampling == "cyclic":
            return self.cyclic_order[self.shrunk[self.cyclic_order] == 0].astype(np.int64)
        return np.flatnonzero(self.shrunk == 0).astype(np.int64)

    def _new_pass(self):
        """Draw the order of the next pass (without shrinking; with shrinking
        the kernel draws its passes itself, see :meth:`_advance_shrinking`)."""
        n = self.problem.n
        s = self.opts.sampling
        if s == "uniform":
            self.order = self.rng.integers(0, n, size=n, dtype=np.int64)
        elif s == "permutation":
            self.order = self.rng.permutation(n).astype(np.int64)
        else:
            self.order = self.cyclic_order
        self.pos = 0

    def _next_snapshot(self):
        """Reservoir sampling with skips: keep candidate k with probability 1/k."""
        if self.snap_k == 0:
            k_next = 1
        else:
            u = 1.0 - self.rng.random()            # in (0, 1]
            k_next = int(np.floor(self.snap_k / u)) + 1
        self.snap_step = self.T0_steps + k_next

    # ---------------------------------------------------------- advance
    def advance(self, n_epochs, deadline):
        prob = self.problem
        n = prob.n
        target = self.steps + max(1, int(round(n_epochs * n)))
        if self.pending_sgd_init:
            perm = self.rng.permutation(n).astype(np.int64)
            u = np.zeros(prob.d)
            status, pos, acc = modified_sgd_epoch(prob.rows_view(), prob.step_spec(), perm,
                                                  self.alpha, u)
            self.feature_accesses += acc
            if status == STATUS_NONFINITE:
                _raise_nonfinite(prob, perm[pos])
            self.v = u / prob.W
            self.steps += n
            self.pending_sgd_init = False
        out = self.opts.output
        if out == "random" and self.snap_step < 0:
            self._next_snapshot()
        if self.n_threads > 1:
            return self._advance_threads(target, deadline)
        if self.shrinking:
            return self._advance_shrinking(target, deadline)
        rows, spec, state = prob.rows_view(), prob.step_spec(), self._state_view()
        no_shrink = Shrinking(False, np.inf, np.inf)
        avg = Averaging(out == "average", self.avg_sum, self.avg_last, self.T0_steps)
        while self.steps < target:
            if self.pos >= self.order.shape[0]:
                self._new_pass()
            stop = min(self.order.shape[0], self.pos + (target - self.steps))
            snap = self.snap_step if out == "random" else -1
            status, pos, t, acc, _, _ = sdca_epoch(
                rows, spec, state, self.order, self.pos, stop, self.steps, snap,
                no_shrink, avg, self.prox_work)
            self.feature_accesses += acc
            if status == STATUS_NONFINITE:
                _raise_nonfinite(prob, self.order[pos])
            self.pos = pos
            self.steps = t
            if status == STATUS_SNAPSHOT:
                self.snapshot[:] = self.alpha
                self.snap_k = self.snap_step - self.T0_steps
                self._next_snapshot()
            if deadline is not None and time.perf_counter() >= deadline:
                break

    def _advance_shrinking(self, target, deadline):
        """Steps up to ``target`` with shrinking; the kernel runs the passes.

        The driver hands it a block of uniforms for drawing passes (one per
        step still to make plus one full pass; more on request) and the
        buffers of the active list and the current pass."""
        prob = self.problem
        n = prob.n
        passes = self._passes_buffers(self._base_order(), self.active, self.order,
                                      self.pos, self.thr)
        rows, spec, state = prob.rows_view(), prob.step_spec(), self._state_view()
        code = _ORDER_CODES[self.opts.sampling]
        # at most one epoch per kernel call, so a deadline is honoured between epochs
        while self.steps < target:
            stop = min(target, self.steps + n)
            u = self.rng.random(stop - self.steps + n)
            status, t, _, acc = sdca_passes(rows, spec, state, passes, code, u, self.steps,
                                            stop, True, self.prox_work)
            self.feature_accesses += acc
            self.steps = t
            if status == STATUS_NONFINITE:
                self._keep_passes(passes)
                _raise_nonfinite(prob, passes.order[passes.cursor[2]])
            if passes.cursor[0] == 0:                  # everything shrunk
                self.steps = target
                break
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self._keep_passes(passes)

    def _base_order(self):
        """The coordinates in the order passes are built from."""
        n = self.problem.n
        return (self.cyclic_order if self.opts.sampling == "cyclic"
                else np.arange(n, dtype=np.int64))

    @staticmethod
    def _passes_buffers(base, active, order, pos, thr):
        """:class:`Passes` with room for every coordinate of ``base``."""
        m = base.shape[0]
        act = np.empty(m, dtype=np.int64)
        act[:active.shape[0]] = active
        ordr = np.empty(m, dtype=np.int64)
        ordr[:order.shape[0]] = order
        cursor = np.array([active.shape[0], order.shape[0], pos], dtype=np.int64)
        return Passes(base, act, ordr, cursor, thr)

    def _keep_passes(self, passes):
        n_active, n_order, pos = (int(c) for c in passes.cursor)
        self.active = passes.active[:n_active].copy()
        self.order = passes.order[:n_order].copy()
        self.pos = pos

    # ------------------------------------------------------ certificate
    def _output_alpha(self):
        out = self.opts.output
        if out == "last" or self.steps <= self.T0_steps:
            return None
        if out == "average":
            flush_average(self.alpha, self.avg_sum, self.avg_last, self.T0_steps,
                          self.steps)
            return self.avg_sum / (self.steps - self.T0_steps)
        return self.snapshot.copy()

    def certificate(self):
        prob = self.problem
        nt = self.n_threads          # the certificate pass runs on the threads too
        alpha_out = self._output_alpha()
        if prob.l1 > 0:
            # elastic net: w(alpha) = soft_threshold(v, l1) / lam
            if alpha_out is None:
                cert = prob.certificate(prob.penalty.grad_conjugate(self.v), self.alpha, nt)
            else:
                w = prob.penalty.grad_conjugate(prob.dual_image(alpha_out))
                cert = prob.certificate(w, alpha_out, nt)
        elif alpha_out is None:
            # the incremental v is not replaced by the fresh v(alpha) of the check,
            # so the iterates do not depend on when checks happen (the adaptive
            # schedule moves them); the certificate is exact for the returned pair
            # (P at w = v/lam, D at alpha with v(alpha) recomputed), and the rounding
            # drift of v is ~1e-16 sqrt(steps) relative
            cert = prob.certificate(self.v / prob.lam, self.alpha, nt)
        else:
            cert = prob.certificate(prob.dual_image(alpha_out) / prob.lam, alpha_out, nt)
        if self.n_threads > 1:
            cert = self._resync(cert)
        if self.shrinking and cert.rel_gap > self.tol:
            self._reactivate(cert)
        return cert

    def _resync(self, cert):
        """n_jobs > 1: the threads' ``v`` is the fresh ``v(alpha)`` of the check up
        to rounding when every update was kept (atomic additions, and no
        coordinate drawn twice at once).  Otherwise -- plain additions that lost
        a concurrent update, or ``sampling="uniform"`` drawing a coordinate in
        two slices -- ``v`` has drifted: the certificate is then recomputed at
        ``w(alpha)`` from the fresh image.  Either way the threads go on from
        the fresh image."""
        prob = self.problem
        fresh = cert.v
        scale = max(float(np.abs(fresh).max(initial=0.0)), 1e-300)
        drift = float(np.abs(fresh - self.v).max(initial=0.0)) / scale
        self.v = fresh
        if drift > RESYNC_DRIFT:
            w = (prob.penalty.grad_conjugate(fresh) if prob.l1 > 0 else fresh / prob.lam)
            cert = prob.certificate(w, self.alpha, self.n_threads)
        return cert

    def _reactivate(self, cert):
        """Bring back shrunk coordinates whose share of the exact gap is too big."""
        shrunk = np.flatnonzero(self.shrunk)
        if shrunk.size == 0:
            return
        prob = self.problem
        gi = prob.coordinate_gaps(cert.margins, cert.alpha, idx=shrunk)
        allowed = self.tol * max(abs(cert.primal), 1e-12) / prob.n
        back = shrunk[gi > allowed]
        if back.size:
            self.shrunk[back] = 0
            self.active = self._all_active()
            # a fresh pass with them, shrinking nothing (LIBLINEAR: PGmax_old = INF)
            self.thr[:4] = np.inf     # no shrinking in that pass; inf: not a solved pass
            self.pos = self.order.shape[0]

    def trace_extras(self):
        if self.shrinking:
            return {"active": int(self.problem.n - int(self.shrunk.sum()))}
        return {}
