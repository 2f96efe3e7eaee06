"""SDCA: stochastic dual coordinate ascent (Shalev-Shwartz & Zhang, JMLR 14, 2013).

Solves (docs/conventions.md §1, weights ``c_i``, ``W = sum_i c_i``)::

    min_w  P(w) = (1/W) sum_i c_i phi_i(x_i . w) + lam/2 ||w||^2 + l1 ||w||_1

through its dual ``D(alpha) = (1/W) sum_i c_i (-phi_i*(-alpha_i)) - g*(v)``,
``v = (1/W) sum_i c_i alpha_i x_i``.  A step picks ``i`` and sets ``alpha_i`` to
the exact maximizer of ``-phi_i*(-beta) - a (beta - alpha_i) - (s/2)(beta -
alpha_i)^2``, ``a = x_i . w``, ``s = c_i ||x_i||^2 / (lam W)`` (Procedure SDCA;
Section 6's closed forms, the loss's ``dual_step``), then ``v += (c_i/W) Delta
x_i``; ``w = v / lam``.  With ``l1 > 0`` it is Prox-SDCA (Shalev-Shwartz &
Zhang 2014) with the exact step over the breakpoints of ``g*``
(:mod:`primaldual.kernels.sdca.prox`), ``w = soft_threshold(v, l1) / lam``.

Options (the fields of :class:`SDCAOptions`): ``sampling`` (uniform:
Procedure SDCA; permutation: SDCA-Perm; cyclic: one fixed random order),
``output`` (last, the average after ``T0`` epochs, or a random iterate after
``T0``, kept by reservoir sampling), ``T0``, ``init`` ("sgd": Procedure
Modified-SGD as the first epoch), ``shrinking`` (LIBLINEAR's active set with
one-sided thresholds, for losses with a box dual; the passes are then planned
in the kernel, :mod:`primaldual.kernels.sdca.passes`; shrunk coordinates whose
share of the exact gap exceeds ``tol |P| / n`` come back at every check), and
the threads' ``n_jobs``, ``threads``, ``sync_every``, ``atomic``.

Threads (``n_jobs > 1``): asynchronous passes in the manner of PASSCoDe with
thread-local copies of ``v`` (SySCD), run where the cost model of
:mod:`primaldual.blocks.sdca_threads`, checked on the data's first pass, predicts
a win (``threads="on"``: always; ``solver="auto"`` then times them against one
thread); docs/solvers.md ("Threads").  ``n_jobs=1`` is the serial solver.  The
certificate is exact either way.  Warm start: a feasible ``alpha`` or a SolveResult.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..blocks import sdca_threads
from ..blocks.sdca_resync import resync_at_check
from ..blocks.sdca_staleness import guard_staleness, restore_staleness, staleness_meta
from ..blocks.sdca_threads import (ThreadWork, auto_atomic, thread_plan, threaded_pass,
                                   warm_threads)
from ..blocks.sdca_trial import trial_outcome
from ..kernels.sdca import (ORDER_CYCLIC, ORDER_PERMUTATION, ORDER_UNIFORM, STATUS_NONFINITE,
                            STATUS_SNAPSHOT, Averaging, Passes, SDCAState, Shrinking,
                            flush_average, modified_sgd_epoch, new_plan, next_pass,
                            plan_from_floats, prox_work_arrays,
                            record_violations, sdca_epoch, sdca_passes)
from ..validation import raise_nonfinite
from ._base import Solver, register
from ._options import CommonOptions, ThreadOptions, choice, number

#: first tolerance on the active set's violation range below which every shrunk
#: coordinate comes back (LIBLINEAR's default eps of its dual solvers); divided
#: by 10 at each re-activation (see kernels.sdca.passes)
SHRINK_EPS0 = 0.1

#: n_jobs > 1 (threads="auto") on at least this many stored entries: the first
#: pass checks the cost model, its first quarter on one thread and its second
#: on the threads (:meth:`SDCASolver._trial_decision`); below, the model decides
TRIAL_MIN_NNZ = 4_000_000
#: a trial only where the cost model predicts at least this speed-up, or where
#: its best plan is one shared v, which its copy-based speed-up does not measure
TRIAL_FLOOR = 1.0
#: n_jobs > 1: a check whose relative gap is within this factor of the
#: tolerance may end the run, and its pair is moved to w(alpha) (resync_at_check)
RESYNC_GAP = 100.0

_ORDER_CODES = {"uniform": ORDER_UNIFORM, "permutation": ORDER_PERMUTATION, "cyclic": ORDER_CYCLIC}


@dataclass(frozen=True)
class SDCAOptions(ThreadOptions, CommonOptions):
    """The options of :class:`SDCASolver` (see the module docstring)."""

    solver_name = "sdca"
    sampling: str = choice("permutation", "uniform", "permutation", "cyclic",
                           doc="coordinate order: with replacement, a fresh permutation "
                               "per epoch, or one fixed random order")
    output: str = choice("last", "last", "average", "random",
                         doc="the iterate returned: the last, the average after T0, or "
                             "one drawn after T0")
    T0: float | None = number(None, low=0.0, strict=False, also=(None,),
                              doc="start of averaging, in epochs; None: max_epochs / 2")
    init: str = choice("zero", "zero", "sgd",
                       doc="start from alpha = 0, or run one epoch of modified SGD first")
    shrinking: str | bool = choice("auto", "auto", True, False,
                                   doc="LIBLINEAR-style active set for box-dual losses; "
                                       "auto: on for them with output=last")
    atomic: str | bool = choice("auto", "auto", True, False,
                                doc="threads, sync_every=0: atomic additions to the shared "
                                    "v; auto: where columns overlap, or hot ones (box duals)")
    threads: str = choice("auto", "auto", "on", doc="n_jobs > 1: threads where the cost "
                          "model and a first-pass trial predict a win, or always (on)")
    sync_every: str | bool | int = number("auto", integer=True, low=0.0, strict=False,
                                          also=("auto", False),
                                          doc="threads: updates between merges into the "
                                              "shared v (0: write it directly); auto: "
                                              "the fastest predicted")

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
    external_losses = state_after_run = True
    adaptive_checks = True
    mixes_best_pair = False     # a dual method returns its own iterate (GUIDE §1)
    default_max_epochs = 1000   # 1e-6 at lam 1e-6: a few hundred epochs (a9a hinge ~220)
    # an interrupt lands between kernel calls (Numba defers it), where alpha and
    # v agree; the threads are stopped and waited for (solvers._threads)
    interruptible = True

    def validate_options(self):
        o = self.opts
        if o.shrinking is True and not self.problem.loss.box_dual:
            raise ValueError(f"shrinking=True needs a loss with a box dual domain or a "
                             f"kink to hold alpha at (all but logistic and squared); "
                             f"loss={self.problem.loss.name!r} has none")
        if o.init == "sgd" and self.warm_start is not None:
            raise ValueError("init='sgd' and warm_start both set the starting alpha; "
                             "choose one")
        if o.init == "sgd" and self.problem.l1 > 0:
            raise ValueError("init='sgd' (Modified-SGD) is defined for the L2 penalty "
                             "only; with l1 > 0 use init='zero'")
        if self.max_threads(self.problem, o.n_jobs) > 1 and o.output != "last":
            raise ValueError(f"n_jobs > 1 runs output='last' only (got "
                             f"output={o.output!r}); averaging and random output "
                             f"follow one sequence of iterates, which threads do not have")

    @staticmethod
    def thread_prior(problem, n_jobs) -> float:
        """The cost model's predicted speed-up on threads (the supervisor's prior)."""
        return thread_plan(problem.rows, n_jobs).speedup

    @staticmethod
    def measures_threads(problem, n_jobs) -> bool:
        """Whether ``threads="auto"`` times the threads on this data (the
        first-pass trial, where the cost model does not rule them out)."""
        return problem.loss.builtin and problem.nnz >= TRIAL_MIN_NNZ

    @staticmethod
    def max_threads(problem, n_jobs) -> int:
        """The most threads a pass could use
        (:func:`~primaldual.blocks.sdca_threads.pass_threads`)."""
        return sdca_threads.pass_threads(problem.n, problem.nnz, n_jobs)

    def setup(self):
        o = self.opts
        self.shrinking = (o.shrinking is True
                          or (o.shrinking == "auto" and self.problem.loss.box_dual
                              and o.output == "last"))
        T0 = o.T0 if o.T0 is not None else self.max_epochs / 2.0
        self.T0_steps = int(round(T0 * self.problem.n))
        self._setup_threads()

    def _setup_threads(self):
        o, prob = self.opts, self.problem
        self.plan = thread_plan(prob.rows, o.n_jobs if prob.loss.builtin else 1,
                                o.sync_every, hot_ok=prob.l1 == 0)
        self.threads_reason = self.plan.reason
        # a check's certificate pass reads alpha and w only: on every thread asked
        self.cert_threads = self.max_threads(prob, o.n_jobs) if prob.loss.builtin else 1
        # the first pass checks the prediction (docs/solvers.md, "Threads")
        if forced := o.threads == "on" and self.plan.best_threads > 1:
            self.threads_reason = f"threads on: {self.plan.reason}"
        self.trial = (not forced and self.plan.best_threads > 1 and prob.nnz >= TRIAL_MIN_NNZ
                      and (self.plan.speedup >= TRIAL_FLOOR or self.plan.sync_every == 0))
        # wall s and entries, serial then threads; CPU s, serial and threads' sum
        self.trial_times, self.trial_cpu = np.zeros(4), np.zeros(2)
        self.trial_mid, self.trial_end, self.trial_passes = -1, -1, 0
        self.n_threads = (self.plan.best_threads if self.trial or forced
                          else self.plan.threads)
        self.sparse_sync = self.plan.sparse
        self.sync_every = self.plan.sync_every
        if self.n_threads == 1:
            return
        self.atomic = (o.atomic if o.atomic != "auto" else
                       auto_atomic(prob.rows, self.sync_every, prob.loss.box_dual))

    # ------------------------------------------------------------ state
    def init_state(self, warm_start):
        prob = self.problem
        n, d = prob.n, prob.d
        alpha = self.warm_start_alpha()
        self.alpha = np.zeros(n) if alpha is None else alpha
        self.v = prob.dual_image(self.alpha) if alpha is not None else np.zeros(d)
        self.pending_sgd_init = self.opts.init == "sgd"
        self.cyclic_order = (self.rng.permutation(n).astype(np.int64, copy=False)
                             if self.opts.sampling == "cyclic" else np.zeros(0, np.int64))
        self.order = np.zeros(0, dtype=np.int64)
        self.pos = 0
        self.shrunk = np.zeros(n, dtype=np.uint8)
        # the pass planner's state (kernels.sdca.passes) and the active list
        self.pass_plan = new_plan(SHRINK_EPS0)
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
        res.extras["threads_reason"] = self.threads_reason
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
            rows = self.problem.rows
            self.thread_work = ThreadWork(self.problem.d, self.n_threads, self.sync_every,
                                          self.atomic, int(rows.row_nnz.max(initial=1)),
                                          self.sparse_sync is True, self.plan.hot)
            if self.trial:       # the trial times steps only
                warm_threads(self.problem.rows_view(), self.problem.step_spec(),
                             self._state_view(), self.thread_work, self.thread_prox)

    def _threaded_pass(self):
        """The next pass for the threads: the kernel's planner (:func:`next_pass`:
        re-activation, thresholds, active set), then the generator's draw from the
        active set, as ``_new_pass``'s; False when everything is shrunk."""
        passes = self._passes_buffers(self._base_order(), self.active, self.order,
                                      self.order.shape[0])
        _, _, self.pass_plan = next_pass(passes, self.pass_plan, self.shrunk, ORDER_CYCLIC,
                                         np.zeros(0), bool(self.shrinking))
        self._keep_passes(passes)
        active, s = self.active, self.opts.sampling
        if active.shape[0] == 0:
            return False
        if s == "permutation":
            self.order = self.rng.permutation(active)
        elif s == "uniform":
            self.order = active[self.rng.integers(0, active.shape[0], active.shape[0])]
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
                if self.n_threads == 1:
                    return              # the trial chose one thread: advance() goes on
                if not self._threaded_pass():
                    self.steps = target                  # everything shrunk
                    break
                if self.shrinking and (int(row_nnz[self.order].sum())
                                       < sdca_threads.MIN_NNZ_PER_THREAD * K):
                    # the active set is too small to share out: its passes run
                    # in the serial kernel (each pass would cost a wake-up)
                    return self._advance_shrinking(target, deadline)
                if self.trial:
                    # the trial: the pass's first quarter on one thread, its
                    # second on the threads, then the decision
                    L = self.order.shape[0]
                    self.trial_mid, self.trial_end = L // 4, L // 2
            order, p = self.order, self.pass_plan
            stop = min(order.shape[0], self.pos + (target - self.steps))
            shrink = Shrinking(bool(self.shrinking), p.shrink_up, p.shrink_down)
            trial = self.trial and self.trial_mid >= 0
            if self.n_threads == 1 or (trial and self.pos < self.trial_mid):
                # one thread: the trial's first quarter, or the rest of the
                # trial pass once the trial chose one thread
                if trial:
                    stop = min(stop, self.trial_mid)
                t0, c0 = time.perf_counter(), time.thread_time()
                res = sdca_epoch(rows, spec, state, order, self.pos, stop, 0, -1, shrink,
                                 self._no_averaging, self.prox_work)
                if trial:
                    self.trial_times[0] += time.perf_counter() - t0
                    self.trial_cpu[0] += time.thread_time() - c0
                    self.trial_times[1] += row_nnz[order[self.pos:res.pos]].sum()
                self.steps += res.steps
                self.feature_accesses += res.accesses
                self.pass_plan = record_violations(self.pass_plan, res.max_up, res.max_down)
                if res.status == STATUS_NONFINITE:
                    raise_nonfinite(prob.lam, order[res.pos])
                self.pos = stop
                if deadline is not None and time.perf_counter() >= deadline:
                    break
                continue
            if trial:
                stop = min(stop, self.trial_end)
            t0, c0 = time.perf_counter(), self.thread_work.cpu.sum()
            results, interrupted = threaded_pass(
                rows, spec, state, order, self.pos, stop, self.thread_work,
                (stop - self.pos) * prob.nnz / max(prob.n, 1), shrink, self.thread_prox)
            if trial:
                self.trial_times[2] += time.perf_counter() - t0
                self.trial_cpu[1] += self.thread_work.cpu.sum() - c0
                self.trial_times[3] += row_nnz[order[self.pos:stop]].sum()
            for k, (status, pos, t, acc, up, down) in enumerate(results):
                self.steps += t
                self.feature_accesses += acc
                self.pass_plan = record_violations(self.pass_plan, up, down)
                if status == STATUS_NONFINITE:
                    raise_nonfinite(prob.lam, order[pos])
            self.pos = stop
            if trial and self.pos >= self.trial_end:
                self._trial_decision()
            if interrupted:
                self.interrupted = True
                break
            if deadline is not None and time.perf_counter() >= deadline:
                break

    @property
    def _no_averaging(self):
        return Averaging(False, self.alpha[:0], np.zeros(0, np.int64), 0)

    def _trial_decision(self):
        """After a trial pass, :func:`trial_outcome`'s decision: keep the threads,
        go on serially from ``v(alpha)`` recomputed in place (a shared ``v`` may
        have lost updates, which serial checks do not mend), or, ``"again"``, run
        the rest of the pass on the threads and add the next pass's trial to
        this one.  ``threads_reason`` says what was measured."""
        self.trial_mid, self.trial_end = -1, -1
        self.trial_passes += 1
        decision, reason = trial_outcome(self.trial_times, self.trial_cpu, self.plan,
                                         self.n_threads, self.trial_passes)
        self.trial = decision == "again"
        if decision is None:
            return                                   # nothing measured: keep the plan
        self.threads_reason = reason
        if decision == "serial":
            self.n_threads = 1
            self.thread_work = self.thread_prox = None
            self.v[:] = self.problem.dual_image(self.alpha)

    def _logit_cache(self):
        """The per-sample cache of the loss's SDCA step (``Loss.step_cache``, with L2
        only): for logistic the logit of each alpha_i y_i, where the Newton
        iteration of the next step on row i starts (NaN: computed from alpha_i)."""
        prob = self.problem
        use = prob.loss.step_cache and prob.l1 == 0
        self.logit = np.full(prob.n if use else 0, np.nan)

    def _prox_scratch(self):
        """Work arrays of the elastic-net step (2 breakpoints per nonzero)."""
        self.prox_work = prox_work_arrays(self.problem.rows, self.problem.l1)

    def get_state(self):
        meta = {"pos": int(self.pos), "pending_sgd_init": bool(self.pending_sgd_init),
                "snap_k": int(self.snap_k), "snap_step": int(self.snap_step),
                **staleness_meta(self)}
        arrays = {"alpha": self.alpha, "v": self.v, "order": self.order,
                  "active": self.active, "thr": np.array(self.pass_plan, dtype=np.float64),
                  "cyclic_order": self.cyclic_order, "shrunk": self.shrunk,
                  "avg_sum": self.avg_sum, "avg_last": self.avg_last,
                  "snapshot": self.snapshot, "logit": self.logit}
        return meta, {k: np.array(a) for k, a in arrays.items()}

    def set_state(self, meta, arrays):
        for k in ("alpha", "v", "order", "active", "cyclic_order", "shrunk",
                  "avg_sum", "avg_last", "snapshot"):
            setattr(self, k, np.array(arrays[k]))
        self.pass_plan = plan_from_floats(arrays["thr"], SHRINK_EPS0)   # 4 floats: no eps
        self.pos = int(meta["pos"])
        self.pending_sgd_init = bool(meta["pending_sgd_init"])
        self.snap_k = int(meta["snap_k"])
        self.snap_step = int(meta["snap_step"])
        self._logit_cache()
        if "logit" in arrays and arrays["logit"].shape == self.logit.shape:
            self.logit = np.array(arrays["logit"], dtype=np.float64)
        self._prox_scratch()
        restore_staleness(self, meta)
        self._init_threads()

    def _state_view(self):
        """The iterates the kernels update in place."""
        return SDCAState(self.alpha, self.v, self.logit, self.shrunk)

    # -------------------------------------------------------- sampling
    def _all_active(self):
        """The coordinates not shrunk, in the order passes are built from."""
        base = self._base_order()
        return base[self.shrunk[base] == 0].astype(np.int64)

    def _new_pass(self):
        """The next pass without shrinking, drawn by the generator (with shrinking
        the kernel's planner draws it, :meth:`_advance_shrinking`)."""
        n, s = self.problem.n, self.opts.sampling
        if s == "uniform":
            self.order = self.rng.integers(0, n, size=n, dtype=np.int64)
        elif s == "permutation":
            self.order = self.rng.permutation(n).astype(np.int64, copy=False)
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
            perm = self.rng.permutation(n).astype(np.int64, copy=False)
            u = np.zeros(prob.d)
            status, pos, acc = prob.loss.kernel(modified_sgd_epoch)(prob.rows_view(), prob.step_spec(), perm,
                                                  self.alpha, u)
            self.feature_accesses += acc
            if status == STATUS_NONFINITE:
                raise_nonfinite(prob.lam, perm[pos])
            self.v = u / prob.W
            self.steps += n
            self.pending_sgd_init = False
        out = self.opts.output
        if out == "random" and self.snap_step < 0:
            self._next_snapshot()
        if self.n_threads > 1:
            self._advance_threads(target, deadline)
            if (self.n_threads > 1 or self.steps >= target or self.interrupted
                    or (deadline is not None and time.perf_counter() >= deadline)):
                return
            # the trial pass chose one thread: the rest runs serially
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
            status, pos, t, acc, _, _ = prob.loss.kernel(sdca_epoch)(
                rows, spec, state, self.order, self.pos, stop, self.steps, snap,
                no_shrink, avg, self.prox_work)
            self.feature_accesses += acc
            if status == STATUS_NONFINITE:
                raise_nonfinite(prob.lam, self.order[pos])
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
                                      self.pos)
        rows, spec, state = prob.rows_view(), prob.step_spec(), self._state_view()
        code = _ORDER_CODES[self.opts.sampling]
        # at most one epoch per kernel call, so a deadline is honoured between epochs
        while self.steps < target:
            stop = min(target, self.steps + n)
            u = self.rng.random(stop - self.steps + n)
            status, t, _, acc, self.pass_plan = prob.loss.kernel(sdca_passes)(
                rows, spec, state, passes, self.pass_plan, code, u, self.steps, stop, True,
                self.prox_work)
            self.feature_accesses += acc
            self.steps = t
            if status == STATUS_NONFINITE:
                self._keep_passes(passes)
                raise_nonfinite(prob.lam, passes.order[passes.cursor[2]])
            if passes.cursor[0] == 0:                  # everything shrunk
                self.steps = target
                break
            if deadline is not None and time.perf_counter() >= deadline:
                break
        self._keep_passes(passes)

    def _base_order(self):
        """The coordinates in the order passes are built from."""
        return (self.cyclic_order if self.opts.sampling == "cyclic"
                else np.arange(self.problem.n, dtype=np.int64))

    @staticmethod
    def _passes_buffers(base, active, order, pos):
        """:class:`Passes` with room for every coordinate of ``base``."""
        m = base.shape[0]
        act = np.empty(m, dtype=np.int64)
        act[:active.shape[0]] = active
        ordr = np.empty(m, dtype=np.int64)
        ordr[:order.shape[0]] = order
        cursor = np.array([active.shape[0], order.shape[0], pos], dtype=np.int64)
        return Passes(base, act, ordr, cursor)

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
        nt = max(self.n_threads, self.cert_threads)     # the stepping may be serial
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
            guard_staleness(self, cert)       # a shorter sync period if the gap stalled
        if self.shrinking and cert.rel_gap > self.tol:
            self._reactivate(cert)
        return cert

    def _resync(self, cert):
        """n_jobs > 1: the check's pair (:func:`resync_at_check`); the threads go
        on from ``v(alpha)``."""
        may_end = (cert.rel_gap <= RESYNC_GAP * self.tol
                   or self.epochs >= self.max_epochs - 1e-9)      # as _stop_reason
        cert = resync_at_check(self.problem, cert, self.v, may_end, self.n_threads)
        self.v = cert.v
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
            # no shrinking in that pass; inf: not a solved pass
            self.pass_plan = self.pass_plan._replace(shrink_up=np.inf, shrink_down=np.inf,
                                                     pass_up=np.inf, pass_down=np.inf)
            self.pos = self.order.shape[0]

    def trace_extras(self):
        if self.shrinking:
            return {"active": int(self.problem.n - int(self.shrunk.sum()))}
        return {}
