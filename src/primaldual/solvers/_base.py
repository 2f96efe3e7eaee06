"""What every solver shares: the registry, options, the check loop, the
result, the explicit solver state, checkpoints and callbacks.

A solver subclasses :class:`Solver`, names its options class (a frozen
dataclass from :mod:`primaldual.solvers._options`, validated when it is
built) and implements these hooks:

``validate_options()``       checks of the options against the problem (pure:
                             it raises or returns, and changes nothing)
``setup()``                  the work the options imply (derived values,
                             layouts, step sizes), kept on the solver
``init_state(warm_start)``   allocate its iterates (from zero or a warm start)
``advance(n_epochs, deadline)``   run about ``n_epochs`` passes of updates
``certificate()``            an exact :class:`~primaldual.problem.Certificate`
``get_state()/set_state()``  the arrays and scalars that make resuming exact

The loop in :meth:`Solver.run` alternates ``advance`` and ``certificate``
every ``check_every`` epochs, records the trace, calls the callback, writes
checkpoints and stops on the exact relative duality gap, ``max_epochs`` or
``time_limit``.
"""
from __future__ import annotations

import abc
import json
import math
import os
import sys
import time
from dataclasses import fields

import numpy as np

from .._extras import require
from .._util import make_rng  # noqa: F401  (make_rng: re-exported)
from .._util.interrupts import Deadline, sigint_as_flag
from ..losses import check_capabilities
from ..problem import Certificate, Problem
from ..validation import check_Xy
from ._options import CommonOptions

from ._results import (STATE_FORMAT_VERSION, BestIterate, SolveResult,  # noqa: F401
                       SolverState, _json_default, deferred_export, load_state, save_state)
from ._schedule import (CHECK_ANCHOR, CHECK_FIRST, CHECK_MIN, CHECK_PASS_COST,  # noqa: F401
                        CHECK_SHARE, CHECK_SLACK, check_budget_interval,
                        check_pass_cost, next_check_interval)

__all__ = ["Solver", "SolveResult", "SolverState", "register", "SOLVERS",
           "save_state", "load_state", "COMMON_OPTIONS", "next_check_interval",
           "check_budget_interval", "pick_pair"]

SOLVERS: dict = {}


def register(cls):
    """Class decorator adding a solver to the registry under ``cls.name``."""
    SOLVERS[cls.name] = cls
    return cls


#: the options every solver accepts (handled by the shared loop) and their
#: defaults; the fields of :class:`~primaldual.solvers._options.CommonOptions`
COMMON_OPTIONS = {f.name: f.default for f in fields(CommonOptions)}


# ---------------------------------------------------------------- helpers
def _seed_of(random_state):
    """The integer seed a run was given (None for a Generator, a RandomState or
    no seed: those carry no number to compare)."""
    if isinstance(random_state, (bool, np.bool_)):
        return None
    if isinstance(random_state, (int, np.integer)):
        return int(random_state)
    return None


def _positive(name, value, *, allow_none=False, integer=False, allow_zero=False):
    if value is None and allow_none:
        return None
    try:
        fv = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(fv) or fv < 0 or (fv == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'} and finite, "
                         f"got {value!r}")
    if integer:
        if fv != int(fv):
            raise ValueError(f"{name} must be an integer, got {value!r}")
        return int(fv)
    return fv


# ------------------------------------------------------------------ solver
class Solver(abc.ABC):
    """Base class: see the module docstring for the hooks."""

    name = "base"
    #: one line for ``primaldual solvers``: the method and its source
    summary = ""
    #: capability flags the loss must have (see losses.check_capabilities)
    requires: tuple = ()
    #: runs a loss module outside the registry (its kernels compiled for it)
    external_losses = False
    #: its state stays readable after run() returns (nothing shut down), so the
    #: result exports it on first read; else the state is exported when the run ends
    state_after_run = False
    #: the options (a frozen dataclass; see primaldual.solvers._options)
    options_class: type = CommonOptions
    #: accepts l1 > 0
    supports_l1 = False
    #: what to use instead, for the refusal of l1 > 0 (default: a generic hint)
    why_no_l1 = ""
    #: accepts lam == 0 with l1 > 0
    supports_pure_l1 = False
    #: solves only problems with l1 > 0 (refuses l1 = 0 when it is built)
    requires_l1 = False
    #: check_every="auto" schedules the checks from the observed convergence
    #: rate (:func:`next_check_interval`); False: "auto" means every epoch
    adaptive_checks = False
    #: the epoch budget when the caller gives none (max_epochs=None; a subclass
    #: may make it depend on the problem: :meth:`default_epochs`)
    default_max_epochs = 100
    #: a Newton-type method (superlinear near the optimum): its certified gap
    #: falls in bursts, so no rate measured on it predicts when it reaches tol
    #: (solver="auto" extends the default budget of such a leg: supervisor.py)
    newton_type = False
    #: passes over the entries one check makes (the check budget)
    check_passes = 1.0
    #: an unconverged run returns the smallest-primal w and the largest-dual alpha
    #: of its checks, from whichever checks they came (:func:`pick_pair`); False:
    #: the pair of the check with the smallest relative gap
    mixes_best_pair = True
    #: a KeyboardInterrupt raised inside ``advance`` (by a SIGINT handler other
    #: than the one :meth:`run` installs, or by a test) stops the run cleanly:
    #: the iterates stay consistent, and the result is certified at the point
    #: reached, with stop_reason "interrupted" (False: the interrupt propagates).
    #: Ctrl-C itself never raises during a fit: :meth:`run` turns SIGINT into a
    #: flag that every solver sees at its next deadline check
    #: (:mod:`primaldual._util.interrupts`)
    interruptible = False
    #: set when an interrupt arrived; the next check stops the run
    interrupted = False

    @classmethod
    def create(cls, problem: Problem, **kwargs) -> "Solver":
        """The solver of this method for ``problem`` (``kwargs``: ``tol``,
        ``max_epochs``, ``random_state``, the options...): how :func:`solve`,
        the command line and the Dask estimators build a registered solver,
        ``SOLVERS[name].create(problem, ...)``.  ``cls(problem, ...)`` here; a
        method whose options pick one of several classes (``minibatch_sdca``)
        overrides it."""
        return cls(problem, **kwargs)

    @classmethod
    def default_epochs(cls, problem) -> float:
        """The epoch budget on ``problem`` when the caller gives none."""
        return cls.default_max_epochs

    def __init__(self, problem: Problem, *, tol, max_epochs, random_state, callback=None,
                 eval_set=None, **opts):
        self.problem = problem
        check_capabilities(problem.loss, self.name,
                           self.requires + (() if self.external_losses else ("builtin",)))
        if problem.l1 > 0 and not self.supports_l1:
            raise ValueError(f"solver={self.name!r} does not support l1 > 0 (got "
                             f"l1={problem.l1}); "
                             + (self.why_no_l1 or "use a solver with elastic-net "
                                                  "support (l1cd; on row partitions or "
                                                  "Dask l1_newton) or set l1=0"))
        if problem.lam == 0 and not self.supports_pure_l1:
            raise ValueError(f"lam must be > 0 for solver={self.name!r}, got lam=0; pure "
                             f"L1 is supported by solver='auto' and the solvers that document it (l1cd, spdc, dso)")
        o = self.opts = self.options_class.create(**opts)
        #: the options with the values the solver resolved (``None``/``"auto"``
        #: made concrete by :meth:`setup`); what the result and checkpoints record
        self.resolved_opts = o
        self.tol = _positive("tol", tol, allow_zero=True)
        self.max_epochs = _positive("max_epochs", self.default_epochs(problem)
                                    if max_epochs is None else max_epochs)
        self.time_limit = o.time_limit
        self.check_auto = o.check_every == "auto"
        self.check_every = 1.0 if self.check_auto else float(o.check_every)
        self.checkpoint = o.checkpoint
        self.checkpoint_every = o.checkpoint_every
        self.progress = o.progress
        self.warm_start = o.warm_start
        self.resume_from = o.resume
        self.callback = callback
        if callback is not None and not callable(callback):
            raise ValueError(f"callback must be callable, got {callback!r}")
        self.random_state = random_state
        self.rng = make_rng(random_state)
        self.eval_set = self._check_eval_set(eval_set)
        # counters shared by every solver
        self.steps = 0                 # elementary updates done
        self.feature_accesses = 0
        # setup may compile and run kernels (step sizes, layouts): Ctrl-C there
        # must not raise inside them either; it is raised after, at a safe point
        with sigint_as_flag() as flag:
            before = flag.count          # an outer block's flag may be set already
            self.validate_options()
            self.setup()
        if flag.count > before:
            raise KeyboardInterrupt

    # ------------------------------------------------------------- hooks
    def validate_options(self):
        """Check ``self.opts`` against the problem; raise ValueError naming the
        bad option.  Pure: it changes neither the options nor the solver (the
        options object checked its own values when it was built)."""

    def setup(self):
        """The work the options imply (derived values, layouts, step sizes),
        stored on the solver; the options stay as given (resolved values go to
        ``self.resolved_opts``, a new options object)."""

    @abc.abstractmethod
    def init_state(self, warm_start):
        """Allocate the iterates, from zero or from ``warm_start``."""

    @abc.abstractmethod
    def advance(self, n_epochs, deadline):
        """Run about ``n_epochs`` passes of updates (stop early at ``deadline``)."""

    @abc.abstractmethod
    def certificate(self) -> Certificate:
        """An exact (primal, dual) pair for the current output point."""

    @abc.abstractmethod
    def get_state(self) -> tuple[dict, dict]:
        """(meta, arrays) beyond the shared counters."""

    @abc.abstractmethod
    def set_state(self, meta, arrays):
        """Restore what :meth:`get_state` returned."""

    def result_extras(self) -> dict:
        """Solver-specific entries of ``SolveResult.extras`` (e.g. ``stall``: why
        a run stopped with stop_reason ``"stalled"``)."""
        return {}

    def trace_extras(self) -> dict:
        return {}

    # ----------------------------------------------------------- helpers
    @property
    def epochs(self) -> float:
        """Passes over the data: updates / n for row methods."""
        return self.steps / self.problem.n

    def _check_eval_set(self, eval_set):
        if eval_set is None:
            return None
        try:
            Xt, yt = eval_set
        except (TypeError, ValueError):
            raise ValueError("eval_set must be a pair (X_test, y_test)") from None
        Xt, yt = check_Xy(Xt, yt, name_X="eval_set X", name_y="eval_set y")
        if Xt.shape[1] != self.problem.d:
            raise ValueError(f"eval_set X has {Xt.shape[1]} features but the training "
                             f"data has {self.problem.d}; load both with the same "
                             f"n_features")
        return Xt, yt

    def _evaluate(self, w) -> dict:
        if self.eval_set is None:
            return {}
        Xt, yt = self.eval_set
        score = np.asarray(Xt @ w, dtype=np.float64).ravel()
        if self.problem.loss.classification:
            pred = np.where(score > 0, 1.0, -1.0)
            return {"test_error": float(np.mean(pred != yt))}
        return {"test_rmse": float(np.sqrt(np.mean((score - yt) ** 2)))}

    def warm_start_alpha(self):
        """The alpha to start from, validated (dual methods)."""
        ws = self.warm_start
        if ws is None:
            return None
        alpha = ws.dual_coef if isinstance(ws, SolveResult) else ws
        alpha = np.array(alpha, dtype=np.float64).ravel()
        n = self.problem.n
        if alpha.shape != (n,):
            raise ValueError(f"warm_start alpha has shape {alpha.shape}, expected ({n},)")
        if not np.isfinite(alpha).all():
            raise ValueError("warm_start alpha contains NaN or inf")
        feas = self.problem.loss.in_dual_domain(alpha, self.problem.y)
        if not feas.all():
            i = int(np.flatnonzero(~feas)[0])
            raise ValueError(
                f"warm_start alpha is not dual feasible for loss="
                f"{self.problem.loss.name!r}: alpha[{i}]={alpha[i]!r} with y={self.problem.y[i]!r} "
                f"({int((~feas).sum())} infeasible entries); nothing was changed, fix the "
                f"starting point (e.g. rescale it into the domain)")
        return alpha

    def warm_start_is_alpha(self) -> bool:
        """Whether ``warm_start`` is a dual vector ``(n,)`` rather than a SolveResult
        or a coefficient vector ``(d,)`` (a vector of length ``n == d`` is read as
        coefficients)."""
        ws = self.warm_start
        if ws is None or isinstance(ws, SolveResult):
            return False
        arr = np.asarray(ws)
        prob = self.problem
        return arr.ndim == 1 and arr.shape[0] == prob.n and prob.n != prob.d

    def warm_start_coef(self):
        """The coefficient vector to start from, validated (primal methods);
        None for a cold start.  ``warm_start`` is a SolveResult or a vector (d,)."""
        ws = self.warm_start
        if ws is None:
            return None
        w = np.array(ws.coef if isinstance(ws, SolveResult) else ws,
                     dtype=np.float64).ravel()
        d = self.problem.d
        if w.shape != (d,) or not np.isfinite(w).all():
            raise ValueError(f"warm_start for {self.name} must be a finite coefficient "
                             f"vector of shape ({d},) or a SolveResult, got shape {w.shape}")
        return w

    # ------------------------------------------------------------- state
    def export_state(self, trace, elapsed) -> SolverState:
        meta, arrays = self.get_state()
        meta = dict(meta)
        best = getattr(self, "_best", None)
        if best is not None and best.cert is not None:
            meta.update(best.to_meta())
            arrays = dict(arrays, **best.to_arrays())
        meta.update({
            "steps": int(self.steps), "epochs": self.epochs,
            "feature_accesses": int(self.feature_accesses),
            "rng_state": self.rng.bit_generator.state, "elapsed": float(elapsed),
            "trace": trace, "options": self.resolved_opts.to_dict(),
            "problem": self.problem.fingerprint(), "seed": _seed_of(self.random_state),
        })
        return SolverState(solver=self.name, meta=meta, arrays=dict(arrays))

    #: options that say where and how a run executes, not which iterates it
    #: makes: a checkpoint resumes under other values of these
    EXECUTION_OPTIONS = frozenset({"client", "round_timeout", "recovery_every",
                                   "recovery_dir", "max_recoveries"})

    def _check_same_run(self, state: SolverState):
        """Refuse to resume a checkpoint under another seed or other solver
        options: the checkpoint's random state and iterates would silently
        continue a different run than the one asked for."""
        diff = []
        old_seed, new_seed = state.meta.get("seed"), _seed_of(self.random_state)
        if old_seed is not None and new_seed is not None and old_seed != new_seed:
            diff.append(f"seed (checkpoint: {old_seed}, now: {new_seed})")
        old = state.meta.get("options")
        if isinstance(old, dict):
            now = {k: v for k, v in self.resolved_opts.to_dict().items()
                   if k not in self.EXECUTION_OPTIONS}
            now = json.loads(json.dumps(now, default=_json_default))
            for k in sorted(set(now) | set(old)):
                if k in self.EXECUTION_OPTIONS or now.get(k) == old.get(k):
                    continue
                diff.append(f"{k} (checkpoint: {old.get(k)!r}, now: {now.get(k)!r})")
        if diff:
            raise ValueError(f"cannot resume: the checkpoint was written by a run with "
                             f"another {'; '.join(diff)}. Resume with the checkpoint's "
                             f"values, or start a new run without resume")

    def import_state(self, state: SolverState):
        if state.solver != self.name:
            raise ValueError(f"cannot resume solver={self.name!r} from a state of "
                             f"solver={state.solver!r}")
        fp = self.problem.fingerprint()
        old = state.meta.get("problem", {})
        diff = [k for k in ("n", "d", "nnz", "sha256", "loss", "lam", "l1")
                if old.get(k) != fp[k]]
        if diff:
            raise ValueError(f"the checkpoint was written for a different problem "
                             f"(differs in {', '.join(diff)}); resume with the same data, "
                             f"loss, lam and l1")
        self._check_same_run(state)
        self.steps = int(state.meta["steps"])
        self.feature_accesses = int(state.meta["feature_accesses"])
        self.rng.bit_generator.state = state.meta["rng_state"]
        self.set_state(state.meta, state.arrays)
        self._best = BestIterate.from_state(state.meta, state.arrays, self.mixes_best_pair)
        return list(state.meta.get("trace", [])), float(state.meta.get("elapsed", 0.0))

    # -------------------------------------------------------------- loop
    def _stop_reason(self, rec, elapsed):
        if rec["rel_gap"] <= self.tol:
            return "converged"
        if self._sigint is not None and self._sigint.is_set():
            self.interrupted = True
        if getattr(self, "interrupted", False):
            return "interrupted"
        if getattr(self, "stalled", False):      # the method can make no more progress
            return "stalled"
        if self.epochs >= self.max_epochs - 1e-9:
            return "max_epochs"
        if self.time_limit is not None and elapsed >= self.time_limit:
            return "time_limit"
        return ""

    def _next_interval(self, trace, last_ckpt):
        """Epochs to run before the next exact check."""
        remaining = self.max_epochs - self.epochs
        if not (self.check_auto and self.adaptive_checks):
            return min(self.check_every, remaining)
        points = [(r["epoch"], r["rel_gap"]) for r in trace]
        acc_rate = 0.0
        if len(trace) >= 2 and trace[-1]["epoch"] > trace[-2]["epoch"]:
            acc_rate = ((trace[-1]["feature_accesses"] - trace[-2]["feature_accesses"])
                        / (trace[-1]["epoch"] - trace[-2]["epoch"]))
        # a check's cost in epochs from the data's width (counts, not clocks)
        cost = check_pass_cost(getattr(self.problem, "d", 0))
        budget = check_budget_interval(self.problem.nnz * self.check_passes, acc_rate, cost)
        interval = next_check_interval(points, self.tol, budget, floor=cost)
        if self.checkpoint is not None:
            # checkpoints are written at checks: a check lands on every multiple of
            # checkpoint_every, so a run stopped at a checkpoint and resumed makes the
            # same checks (hence the same iterates) as the uninterrupted run
            ce = self.checkpoint_every
            grid = (math.floor(self.epochs / ce + 1e-9) + 1) * ce
            interval = min(interval, max(grid - self.epochs, 1e-9))
        return min(interval, remaining)

    #: stops that come at a point an identical run does not reach by itself
    #: (Ctrl-C, the clock): no checkpoint is written there, so the last one stays
    #: on the schedule that an uninterrupted run follows
    UNSCHEDULED_STOPS = ("interrupted", "time_limit")

    def _checkpoint_due(self, stop, trace, last_ckpt, fresh):
        """Whether the check just made writes the checkpoint.

        Checkpoints are written at the first check of a fresh run, at every check
        ``checkpoint_every`` epochs after the last one (the schedule puts a check
        there, :meth:`_next_interval`), and when the run stops by itself
        (converged, max_epochs, callback).  A stop by Ctrl-C or the time limit
        lands between two scheduled checks, where the uninterrupted run makes no
        check; writing the state there would make the resumed run check (and,
        for solvers whose checks steer the iterates, step) differently.  So the
        last scheduled checkpoint stays, and resuming from it reproduces the
        uninterrupted run bit for bit.
        """
        if stop:
            return stop not in self.UNSCHEDULED_STOPS
        if fresh and len(trace) == 1:
            return True
        return self.epochs - last_ckpt >= self.checkpoint_every - 1e-9

    def _advance_guarded(self, n_epochs, deadline):
        """:meth:`advance`; for an ``interruptible`` solver a KeyboardInterrupt
        ends the run at a certified point instead of propagating."""
        if not self.interruptible:
            return self.advance(n_epochs, deadline)
        try:
            self.advance(n_epochs, deadline)
        except KeyboardInterrupt:
            self.interrupted = True

    _sigint = None

    def run(self) -> SolveResult:
        """The check loop (module docstring).  While it runs, Ctrl-C (SIGINT)
        sets a flag instead of raising: the epochs stop at the next kernel
        boundary, and the run ends with a certificate and stop_reason
        ``"interrupted"``."""
        with sigint_as_flag() as flag:
            self._sigint = flag
            try:
                return self._run()
            finally:
                self._sigint = None

    def _begin_run(self):
        """The iterates from the resume state or the warm start: ``(resume state or
        None, trace so far, elapsed seconds so far)``."""
        resume = self.resume_from
        if resume is None:
            self.init_state(self.warm_start)
            self._best = BestIterate(self.mixes_best_pair)
            return None, [], 0.0
        if isinstance(resume, SolveResult):
            resume = resume.state
        elif isinstance(resume, (str, os.PathLike)):
            resume = load_state(resume)
        if not isinstance(resume, SolverState):
            raise ValueError("resume must be a SolverState, a SolveResult or a "
                             "checkpoint path")
        trace, elapsed0 = self.import_state(resume)
        return resume, trace, elapsed0

    def _run(self) -> SolveResult:
        resume, trace, elapsed0 = self._begin_run()
        t_start = time.perf_counter() - elapsed0
        # a time that also passes on Ctrl-C: the solvers' deadline checks stop on both
        deadline = Deadline(None if self.time_limit is None else t_start + self.time_limit,
                            self._sigint)
        last_ckpt = self.epochs
        bar = _progress_bar(self.progress, self.max_epochs, self.name)
        skip_check = resume is not None and len(trace) > 0
        stop = ""
        cert = None
        best = self._best
        while True:
            if skip_check:
                rec = trace[-1]
                stop = self._stop_reason(rec, time.perf_counter() - t_start)
                skip_check = False
                if not stop:
                    self._advance_guarded(self._next_interval(trace, last_ckpt), deadline)
                    continue
                cert = self.certificate()
                break
            cert = self.certificate()
            if not (math.isfinite(cert.primal) and math.isfinite(cert.dual)):
                raise FloatingPointError(
                    f"solver={self.name!r} produced a non-finite certificate at epoch "
                    f"{self.epochs:g} (primal={cert.primal!r}, dual={cert.dual!r}): the "
                    f"data, labels or lam are too extreme for double precision; scale "
                    f"the rows (--normalize) and labels, or increase lam")
            elapsed = time.perf_counter() - t_start
            rec = {"epoch": self.epochs, "time": elapsed, "primal": cert.primal,
                   "dual": cert.dual, "gap": cert.gap, "rel_gap": cert.rel_gap,
                   "feature_accesses": int(self.feature_accesses)}
            rec.update(self.trace_extras())
            rec.update(self._evaluate(cert.w))
            trace.append(rec)
            best.offer(cert, rec)
            if bar is not None:
                bar.update(self.epochs - bar.n)
                bar.set_postfix(gap=f"{cert.rel_gap:.2e}")
            stop = self._stop_reason(rec, elapsed)
            if not stop and self.callback is not None:
                snap = dict(rec)
                snap["coef"] = cert.w
                snap["dual_coef"] = cert.alpha
                if self.callback(snap):
                    stop = "callback"
            if self.checkpoint is not None and self._checkpoint_due(stop, trace, last_ckpt,
                                                                    resume is None):
                save_state(self.export_state(trace, elapsed), self.checkpoint)
                last_ckpt = self.epochs
            if stop:
                break
            self._advance_guarded(self._next_interval(trace, last_ckpt), deadline)
        if bar is not None:
            bar.close()
        elapsed = time.perf_counter() - t_start
        state = (deferred_export(self, trace, elapsed) if self.state_after_run
                 else self.export_state(trace, elapsed))
        cert, extras = pick_pair(prob := self.problem, best, cert, self.tol)
        extras = {**self.result_extras(), **extras}
        return SolveResult(
            coef=np.array(cert.w), dual_coef=np.array(cert.alpha), primal=cert.primal,
            dual=cert.dual, gap=cert.gap, solver=self.name,
            options=self.resolved_opts.to_dict(), converged=cert.rel_gap <= self.tol,
            n_epochs=self.epochs, time=elapsed, trace=trace, loss=prob.loss.name,
            lam=prob.lam, l1=prob.l1, tol=self.tol,
            feature_accesses=int(self.feature_accesses),
            stop_reason=stop, state=state, extras=extras)


def pick_pair(problem, best, cert, tol):
    """``(certificate, extras)`` that a run returns, from its last check ``cert``
    and its record ``best`` of every check (:class:`BestIterate`).

    A last pair that meets ``tol`` is returned as it is.  Otherwise the run
    returns the best primal point among its certified checks with the best
    dual bound it saw (every check's ``P(w)`` and ``D(alpha)`` are exact, so
    their difference is a certified gap, at most that of any single check),
    and ``w = 0`` when ``P(0)``, the mean loss at margin 0, is lower still: a
    fit never returns a model worse than the zero model.  ``extras`` names the
    checks the pair came from (``best_epoch``, ``best_dual_epoch``) and says
    ``zero_model`` when ``w = 0`` was returned."""
    if cert is not None and cert.rel_gap <= tol:
        return cert, {}
    extras = {}
    if cert is None or best.better_than(cert):
        cert = best.cert
        extras.update(best.where())
    if not hasattr(problem, "primal"):    # partitioned data: P(0) lives on the workers
        return cert, extras
    zero = np.zeros_like(cert.w)          # (d,), or (d, K) for a multiclass model
    p0 = problem.primal(zero)
    if p0 < cert.primal - 1e-12 * abs(p0):       # rounding: a check at w = 0 stays
        cert = Certificate(w=zero, alpha=cert.alpha, primal=float(p0), dual=cert.dual,
                           v=None, margins=None)
        extras["zero_model"] = True
    return cert, extras


def _progress_bar(enabled, total, name):
    if not enabled:
        return None
    tqdm = require("tqdm.auto", "progress=True").tqdm
    return tqdm(total=float(total), desc=name, unit="epoch", file=sys.stderr,
                bar_format="{desc}: {n:.1f}/{total:.0f} epochs {postfix} [{elapsed}]",
                leave=False)
