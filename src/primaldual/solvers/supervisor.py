"""``solver="auto"``: a portfolio of certified methods run under supervision.

A small dense smooth problem is first given to the direct leg
(:mod:`primaldual.solvers._direct`: Newton's method in numpy, no solver
machinery), whose certified result ends the run; otherwise the portfolio
starts warm from its point.  The candidates come from
:func:`primaldual.solvers.auto.candidates` (the measured rule's pick
first).  Each runs as a *leg*: an ordinary run of that solver whose callback
sees every exact check and ends the leg when it

* is slow: once it has had the work its own method is predicted to need for
  the whole fit, neither its relative gap nor its absolute gap ``P - max(D,
  0)`` fell ``HANDOVER_FACTOR`` (10x) within the work the next candidate is
  predicted to need (:func:`~primaldual.solvers.auto.predicted_seconds`; both
  at most ``BUDGET_SHARE`` of the epochs left), or at its rate it would not
  reach ``tol`` in the epochs left; work is the cost model's seconds, not the
  clock's.  Only a later candidate with a cost model is a reason (``l1cd`` on
  an L2 problem runs after a stall or a failure); else a slow earlier leg
  gets the budget back when this one would not reach ``tol`` in it;
* is hopeless early: a leg whose own predicted fit is longer than the next
  candidate's, once it has had the next candidate's predicted fit, hands over
  when at its rate tol is more than ``EARLY_FACTOR`` (2) times its own
  predicted fit away (:meth:`_Watch.early_verdict`);
* is a cost probe that does not pay: a leg whose own predicted fit is its
  budget (SDCA on a Lipschitz loss) before a method predicted faster is judged
  after ``COST_PROBE_SHARE`` of that method's predicted fit, on one thread, and
  hands over when its work plus its work to ``tol`` at its rate exceeds it;
* stalls: neither gap shrank 0.1% over ``STALL_CHECKS`` checks and
  ``STALL_EPOCHS`` epochs (or 2 checks spanning its predicted fit);
* fails: a non-finite value, a failed factorization, or the method's own
  signal that it can make no more progress (``finished`` or
  ``stop_reason="stalled"``).

When a leg stalls with no later candidate with a cost model, the first method
that handed over without failing gets the rest of the budget back, once, with
no stall rule (an interior-point or Newton certificate may close late).  Under
the default budget a hand-over does not shorten the next leg's, and a leg with
no modelled method after it that is still making progress when the budget
runs short gets more (:meth:`_Supervisor.extend_for`, up to ``EXTEND_CAP``
times the default budget): by its rate, or, a Newton-type method, whose gap
falls in bursts, until it stalls.

A hand-over is warm: a primal method starts from the best primal point seen,
a dual method from ``alpha_i = -phi'(x_i . w)`` at that point, clipped to the
loss's dual box (or from the best dual point, when its dual value is higher);
the IPM starts cold while the best gap is above ``COLD_FROM["ipm"]``.
Every check of every leg offers its pair to one record, and the result is the
best primal point certified in any leg with the best dual bound seen
(:func:`primaldual.solvers._base.pick_pair`), never worse than ``w = 0``.

Threads (``n_jobs > 1``, a method that could run a pass on several threads on
this data): the first leg runs on one thread for ``PROBE_CHECKS`` checks (one
every ``PROBE_CHECK_EVERY`` epochs), then
the same method continues from its point on the threads (``threads="on"``:
the supervisor's measurement replaces the method's own prediction) for as many
checks or until a check comes ``PROBE_TIME_FACTOR`` times the serial probe's
seconds in; the two rates measured on the clock (decades of certified gap per
second) decide: the threaded leg goes on (its checks back on their own
schedule), or a new leg continues on one thread.  A wrong first choice costs at
most that threaded probe.  A fit predicted under ``PROBE_MIN_S`` runs on
one thread (no thread is spawned), and so does one whose method predicts its
threads under ``PROBE_PRIOR`` of one thread's speed (busy cores, costly syncs).
A method that times its threads on the data itself (``measures_threads``:
SDCA's first-pass trial, on large data) gets ``n_jobs`` and decides alone.

``res.extras["path"]`` lists the legs (method, threads, n_jobs, seconds,
epochs, gap at hand-over, best certified gap so far, reason).
"""
from __future__ import annotations

import math
import time

import numpy as np

from .._util.interrupts import sigint_as_flag
from .._util.threads import resolve_n_jobs
from ..problem import Certificate
from ._base import COMMON_OPTIONS, SOLVERS, SolveResult, pick_pair
from ._results import state_of
from ._base import BestIterate as BestPair
from ._direct import direct_applies, run_direct
from ._watch import HANDOVER_FACTOR, PROBE_CHECKS, STALL_CHECKS, _decades_per_second
from ._watch import _Watch  # noqa: F401  (tests build a watch through this module)
from .auto import (candidates, epoch_seconds, predicted_epochs, predicted_seconds,
                   resolve_solver)

__all__ = ["supervise", "solver_path", "HANDOVER_FACTOR", "STALL_CHECKS"]

#: under the default budget, a leg that no modelled method can take over from
#: and whose rate predicts tol past the budget gets the epochs it needs, up to
#: this multiple of the default budget in all (news20 as given, logistic,
#: C = 100: Newton certifies in about 1,550 passes from SDCA's point, 3,800
#: cold, against a budget of 1,000; LIBLINEAR's -s 0 takes 3,090 CG steps,
#: and its -s 7 gives up and switches)
EXTEND_CAP = 10.0
#: such an extension covers this multiple of the epochs the rate predicts
EXTEND_MARGIN = 2.0
#: the stall window is at least this long (the cost model's seconds)
MIN_WINDOW_S = 0.01
#: and at most this share of the epochs left, as is a leg's grace before it
#: is judged: a leg predicted to need its whole budget (SDCA on the hinge,
#: r / tol epochs) must still cut its gap tenfold every 15% of the budget
BUDGET_SHARE = 0.15
#: the last candidate stops as stalled after this many checks without progress
LAST_STALL_CHECKS = 15
#: epochs between the checks of a probe (unless the caller sets ``check_every``)
PROBE_CHECK_EVERY = 1.0
#: the threaded probe stops after this multiple of the serial probe's seconds
PROBE_TIME_FACTOR = 1.5
#: threads are measured only where the method's cost model predicts at least
#: this speed-up (a probe that loses costs about two threaded epochs)
PROBE_PRIOR = 0.7
#: a cost probe (a leg whose own prediction is its whole budget, before a
#: method predicted faster) is judged after this share of the next method's
#: predicted fit, and goes on while its rate predicts tol within that fit
COST_PROBE_SHARE = 0.1
#: the methods before which a leg is a cost probe (their cost models are
#: calibrated on the real sets: benchmarks/results/auto-real-cells.md)
PROBED_BEFORE = ("ipm", "newton")
#: a method that starts from the caller's warm start (cold), not the run's best
#: point, while the best relative gap is above this: the interior-point
#: iterates must stay central, and a far point costs iterations (after an SDCA
#: probe at gap 0.17-1: 58 iterations for 46 cold on letter, 43 for 25 on a9a;
#: at gap 5e-4 on dna.scale, 12 for 14)
COLD_FROM = {"ipm": 1e-2}
#: a fit the cost model predicts under this many seconds runs on one thread
PROBE_MIN_S = 0.05
#: the options every solver takes (they do not narrow the candidates)
COMMON_NAMES = frozenset(COMMON_OPTIONS)
#: exceptions that mean the method failed numerically (a hand-over, not an error)
FAILURES = (FloatingPointError, np.linalg.LinAlgError, ZeroDivisionError, OverflowError)


class _Supervisor:
    def __init__(self, problem, names, *, tol, max_epochs, random_state, callback,
                 eval_set, n_jobs, options):
        self.problem, self.names = problem, list(names)
        self.tol, self.random_state, self.callback = tol, random_state, callback
        self.eval_set, self.options = eval_set, dict(options)
        self.base_epochs = None             # the default budget (extend_budget)
        if max_epochs is None:
            max_epochs = max(SOLVERS[k].default_epochs(problem) for k in names)
            self.base_epochs = float(max_epochs)
        self.max_epochs = float(max_epochs)
        self.handed_epochs = 0.0       # the epochs of the legs that handed over
        self.extensions = []           # the budget given to steady legs (extend_for)
        self.extended = False          # the current leg has such an extension
        self.time_limit = self.options.pop("time_limit", None)
        self.warm = self.options.pop("warm_start", None)
        self.n_jobs = n_jobs
        self.threads = resolve_n_jobs(n_jobs) if n_jobs is not None else 1
        self.thread_choice = None      # n_jobs chosen by the thread probes
        self.given = None              # the index of the leg given the budget back
        self.serial_rate = None
        self.probe_cap = math.inf      # seconds the threaded probe may take
        self.best = BestPair(mix=True)
        # a lower bound on P*: every registered loss and penalty is nonnegative
        self.floor = 0.0 if getattr(problem.loss, "builtin", False) else -math.inf
        self.trace, self.path = [], []
        self.epochs = 0.0
        self.accesses = 0
        self.t0 = time.perf_counter()
        self.leg_t0 = self.t0

    # ----------------------------------------------------------- pairs
    def offer(self, snap):
        """A check of the current leg (its arrays are views: copied when kept)."""
        cert = Certificate(w=snap["coef"], alpha=snap["dual_coef"],
                           primal=float(snap["primal"]), dual=float(snap["dual"]),
                           v=None, margins=None)
        self.best.offer(cert, {"epoch": self.epochs + float(snap["epoch"])})

    def shifted(self, rec):
        """A leg's record in the whole run's epochs and seconds."""
        out = dict(rec)
        out["epoch"] = self.epochs + float(rec["epoch"])
        out["time"] = self.leg_t0 - self.t0 + float(rec["time"])
        return out

    def seed(self, name=None):
        """The warm start of the next leg (method ``name``): the best primal
        point, with the dual point built from it (clipped to the box) or the
        best dual point seen; the caller's own warm start for a method in
        :data:`COLD_FROM` while the best relative gap is above its limit."""
        prob, best = self.problem, self.best
        if best.w is None or self.best_gap() > COLD_FROM.get(name, math.inf):
            return self.warm
        lo, hi = prob.loss.dual_bounds(prob.y)
        alpha = np.clip(prob.dual_from_primal(best.w), lo, hi)
        if not (prob.dual(alpha) >= best.dual):
            alpha = best.alpha
        return SolveResult(coef=best.w.copy(), dual_coef=np.array(alpha),
                           primal=best.primal, dual=best.dual,
                           gap=best.primal - best.dual, solver="auto", options={},
                           converged=False, n_epochs=0.0, time=0.0, trace=[])

    # --------------------------------------------------------- threads
    def takes_threads(self, name):
        cls = SOLVERS[name]
        if not (self.threads > 1 and "n_jobs" in cls.options_class.names()):
            return False
        most, prior = getattr(cls, "max_threads", None), getattr(cls, "thread_prior", None)
        if most is not None and most(self.problem, self.threads) <= 1:
            return False
        own = getattr(cls, "measures_threads", None)
        if own is not None and own(self.problem, self.threads):
            return False        # the method times its threads on this data itself
        return prior is None or prior(self.problem, self.threads) >= PROBE_PRIOR

    def thread_verdict(self, pts):
        """End of the threaded probe (its checks ``pts``): the run continues on
        the faster of the two, in a new leg."""
        rate = _decades_per_second(pts[1:] if len(pts) > 2 else pts)
        serial = self.serial_rate
        if rate > serial:
            self.thread_choice = self.n_jobs
            return (f"threads faster: {rate:.3g} against {serial:.3g} decades of gap "
                    f"per second on one thread")
        self.thread_choice = 1
        return (f"threads slower: {rate:.3g} against {serial:.3g} decades of gap per "
                f"second on one thread")

    # ------------------------------------------------------------ legs
    def leg_options(self, name, n_jobs, probe=None, grace=0.0, epoch_s=1.0):
        # every candidate takes every option given (auto.candidates); when none
        # does, the one that runs names the unknown option
        opts = dict(self.options)
        names = SOLVERS[name].options_class.names()
        if n_jobs is not None and "n_jobs" in names:
            opts["n_jobs"] = n_jobs
            if "threads" in names and resolve_n_jobs(n_jobs) > 1 and (
                    probe == "threaded" or (self.thread_choice or 1) > 1):
                # the supervisor measures the threads: the method does not veto them
                opts.setdefault("threads", "on")
        if self.time_limit is not None:
            opts["time_limit"] = max(self.time_limit - (time.perf_counter() - self.t0), 0.0)
        if probe is not None and "check_every" not in self.options:
            opts["check_every"] = PROBE_CHECK_EVERY     # a short probe, a bounded cost
            if probe == "cost":                         # about 3 checks in its grace
                opts["check_every"] = max(PROBE_CHECK_EVERY, grace / (3 * epoch_s))
        return opts

    def keep_going(self, runner):
        """The threads won their probe: the leg goes on, with the checks on the
        solver's own schedule again (unless the caller set ``check_every``)."""
        if "check_every" not in self.options:
            runner.check_auto, runner.check_every = True, 1.0

    def run_leg(self, name, n_jobs, warm, watch):
        """One leg: ``(result or None, failure text, runner)``."""
        self.leg_t0 = time.perf_counter()
        runner = None
        try:
            runner = SOLVERS[name].create(
                self.problem, tol=self.tol, max_epochs=self.max_epochs - self.epochs,
                random_state=self.random_state, callback=watch, eval_set=self.eval_set,
                warm_start=warm, **self.leg_options(name, n_jobs, watch.probe,
                                                    watch.probe_grace, watch.epoch_s))
            watch.runner = runner
            return runner.run(), "", runner
        except FAILURES as e:
            return None, f"failed: {type(e).__name__}: {e}", runner

    def record(self, name, n_jobs, res, runner, watch, reason):
        seconds = time.perf_counter() - self.leg_t0
        finished = getattr(runner, "finished", False)
        if res is not None:
            epochs = float(res.n_epochs)
            if finished and self.problem.nnz:
                epochs = min(epochs, res.feature_accesses / self.problem.nnz)
            records = res.trace
            self.accesses += int(res.feature_accesses)
            # the leg's own pair (its stopping check never reached the callback)
            self.offer({"coef": res.coef, "dual_coef": res.dual_coef, "primal": res.primal,
                        "dual": res.dual, "epoch": epochs})
        else:
            epochs = float(getattr(runner, "epochs", 0.0)) if runner is not None else 0.0
            epochs = min(epochs, self.max_epochs - self.epochs)
            records = watch.records
            self.accesses += int(getattr(runner, "feature_accesses", 0))
        for rec in records:
            out = self.shifted(dict(rec, epoch=min(float(rec["epoch"]), epochs)))
            out["solver"] = name
            self.trace.append(out)
        gap = watch.points[-1][1] if watch.points else math.nan
        if res is not None:
            gap = res.trace[-1]["rel_gap"] if res.trace else res.rel_gap
        threads = int(res.extras.get("threads", 1)) if res is not None else 1
        self.path.append({"method": name, "threads": threads,
                          "n_jobs": 1 if n_jobs is None else n_jobs,
                          "seconds": seconds, "epochs": epochs, "gap": float(gap),
                          "best_gap": self.best_gap(), "reason": reason})
        self.epochs += epochs

    def best_gap(self):
        b = self.best
        return math.inf if b.w is None else b.cert.rel_gap

    # ------------------------------------------------------------- run
    def outcome(self, name, res, failure, runner, watch, last):
        """``(hand-over reason, stop reason)`` of a finished leg (one is empty)."""
        if failure:
            return failure, ("stalled" if last else "")
        if res.converged:
            return "", "converged"
        if watch.user_stop:
            return "", "callback"
        if res.stop_reason in ("interrupted", "time_limit"):
            return "", res.stop_reason
        if watch.reason:
            if last and watch.reason.startswith("stalled"):
                return "", "stalled"
            return watch.reason, ""
        if getattr(runner, "finished", False) or res.stop_reason == "stalled":
            return (f"failed: {name} can make no more progress "
                    f"(stop_reason {res.stop_reason!r})"), ("stalled" if last else "")
        return "", res.stop_reason or "max_epochs"

    def leg_plan(self, i, probe):
        """``(n_jobs, stall window, stall checks, budget only)`` of the leg of
        candidate ``i``; ``budget only``: the leg is judged slow only when at
        its rate it would not reach tol in the budget left."""
        name = self.names[i]
        if self.takes_threads(name):
            n_jobs = 1 if probe == "serial" else (self.thread_choice or self.n_jobs)
        else:
            n_jobs = self.n_jobs if "n_jobs" in SOLVERS[name].options_class.names() else None
        if i == self.given:
            return n_jobs, None, 0, False   # the budget given back: no stall rule
        later = self.later(i)
        # slow against a later method with a cost model, or by the budget when a
        # slow leg may get it back; l1cd (no cost model) runs after a stall
        modelled = bool(later) and any(map(self.modelled, later))
        judged = modelled or (bool(later) and self.can_give_back(kinds=("slow",)) is not None)
        window = None if not judged else max(
            MIN_WINDOW_S, min(predicted_seconds(later[0], self.problem, self.tol,
                                                self.max_epochs - self.epochs),
                              BUDGET_SHARE * self.budget_work(name)))
        return n_jobs, window, STALL_CHECKS if later else LAST_STALL_CHECKS, not modelled

    def cost_probe(self, i):
        """The next candidate's predicted seconds when leg ``i`` runs as a cost
        probe (else None): its own predicted fit is its whole budget (SDCA on a
        Lipschitz loss, ``r / tol`` epochs: a bound that says nothing of this
        data) and the next candidate's is shorter."""
        later = self.later(i)
        if not later or i == self.given:
            return None
        name, nxt, left = self.names[i], later[0], self.max_epochs - self.epochs
        if nxt not in PROBED_BEFORE or not self.modelled(nxt) \
                or predicted_epochs(name, self.problem, self.tol, math.inf) < left:
            return None
        nxt_s = predicted_seconds(nxt, self.problem, self.tol, left)
        return nxt_s if nxt_s < predicted_seconds(name, self.problem, self.tol, left) else None

    def later(self, i) -> list:       # the candidates after leg i (not a given-back one)
        return [k for j, k in enumerate(self.names[i + 1:], i + 1) if j != self.given]

    def modelled(self, name) -> bool:     # the cost model predicts name's whole fit
        return math.isfinite(predicted_epochs(name, self.problem, self.tol, math.inf))

    def budget_work(self, name):
        """The work (the cost model's seconds) of the epochs left, by ``name``."""
        return max(self.max_epochs - self.epochs, 0.0) * epoch_seconds(name, self.problem)

    def run(self) -> SolveResult:
        """The legs, under one Ctrl-C flag: an interrupt during a leg ends that
        leg at a certified point, and between legs ends the run."""
        with sigint_as_flag() as flag:
            before = flag.count
            return self.run_legs(lambda: flag.count > before)

    def run_legs(self, interrupted) -> SolveResult:
        i, probe, warm, stop, last_res = 0, None, self.warm, "", None
        while not stop:
            name = self.names[i]
            last = i == len(self.names) - 1
            cost_probe = self.cost_probe(i) if probe is None else None
            if cost_probe is None and probe is None and self.thread_choice is None \
                    and self.takes_threads(name):
                probe = "serial"
                if predicted_seconds(name, self.problem, self.tol,
                                     self.max_epochs - self.epochs) < PROBE_MIN_S:
                    probe, self.thread_choice = None, 1      # tiny: no thread
            n_jobs, window, checks, budget_only = self.leg_plan(i, probe)
            if cost_probe is not None and self.takes_threads(name):
                n_jobs = 1                  # a probe is short: one thread
            watch = _Watch(self, window, checks, probe, epoch_seconds(name, self.problem),
                           min(predicted_seconds(name, self.problem, self.tol,
                                                 self.max_epochs - self.epochs),
                               BUDGET_SHARE * self.budget_work(name)))
            watch.budget_only = budget_only
            if cost_probe is not None:
                watch.probe = "cost"        # checks every PROBE_CHECK_EVERY epochs
                watch.probe_next = cost_probe
                watch.probe_grace = COST_PROBE_SHARE * cost_probe
            if last and self.can_give_back() is None:   # the last one stalls only at a
                watch.progress_rtol = 0.0   # fixed point (SDCA on the hinge certifies)
            res, failure, runner = self.run_leg(name, n_jobs, warm, watch)
            last_res = res if res is not None else last_res
            reason, stop = self.outcome(name, res, failure, runner, watch, last)
            if stop == "max_epochs" and res is not None and self.extend_for(watch, None):
                # a leg never judged (no later method to judge it against)
                # that was still making progress: the same method goes on
                reason, stop = "budget extended", ""
            self.record(name, n_jobs, res, runner, watch, reason or stop)
            if (stop == "stalled" or reason.startswith(("stalled", "slow")) and not any(
                    map(self.modelled, self.later(i)))) and self.give_back(i, reason):
                stop, reason = "", "stalled"
            if stop:
                break
            self.extend_budget(reason)
            if reason == "thread probe":
                pts = watch.points
                self.serial_rate = _decades_per_second(pts[1:] if len(pts) > 2 else pts)
                self.probe_cap = PROBE_TIME_FACTOR * self.path[-1]["seconds"]
                probe = "threaded"
            else:
                probe = None
                if not reason.startswith(("threads faster", "threads slower",
                                          "budget extended")):
                    i += 1
            warm = self.seed(self.names[i])
            if interrupted():
                stop = "interrupted"
            elif self.epochs >= self.max_epochs - 1e-9:
                stop = "max_epochs"
            elif self.time_limit is not None and \
                    time.perf_counter() - self.t0 >= self.time_limit:
                stop = "time_limit"
        return self.result(last_res, stop)

    def extend_for(self, watch, need) -> bool:
        """A leg judged by the budget alone (no later method with a cost model)
        whose rate puts tol ``need`` model seconds away, past the budget (None:
        a leg never judged, at the end of its budget): under
        the default budget it gets ``EXTEND_MARGIN`` times the epochs that rate
        (or its rate over the whole leg, if slower) predicts, if the run then
        stays within ``EXTEND_CAP`` times the default budget.  A Newton-type
        leg (``newton_type``: its gap falls in bursts, one step after a long CG
        solve, so no rate predicts it) gets the budget up to that cap, and its
        stall rule ends it if it stops making progress.  The extension is the
        leg's own: when it hands over, the next leg gets a default budget
        (:meth:`extend_budget`).  A budget the caller sets is never extended."""
        runner = watch.runner
        if self.base_epochs is None or runner is None or not watch.epoch_s > 0:
            return False
        cap = EXTEND_CAP * self.base_epochs
        done = self.epochs + watch.epochs[-1]
        if getattr(runner, "newton_type", False):
            if watch.stalled(STALL_CHECKS):
                return False
            new = cap                       # no rate predicts it: the stall rule rules
        else:
            # both its rate over the last window and over the whole leg: a
            # first-order method slows down (SDCA on the hinge, standardized
            # news20: 1,000 epochs from 0.75 to 0.53 after a fast window)
            leg = watch.leg_need()
            needed = (max(need, leg) if need is not None else leg) / watch.epoch_s
            if not done + needed <= cap:
                return False
            new = min(cap, done + EXTEND_MARGIN * needed)
        if new > self.max_epochs:
            self.extended = True
            self.max_epochs = new
            runner.max_epochs = new - self.epochs
            self.extensions.append({"method": type(runner).name, "at_epoch": done,
                                    "max_epochs": new})
        return True

    def extend_budget(self, reason):
        """Under the default budget (a method's own), a leg that handed over
        (slow, stalled or failed) does not shorten the next leg's, up to twice
        the budget in all (SDCA certifies standardized gisette, squared hinge,
        C = 100, in 1,000 epochs; after Newton's 133 it ended at 3.3e-6)."""
        if self.base_epochs is None or not reason.startswith(("slow", "stalled", "failed")):
            return
        self.handed_epochs += self.path[-1]["epochs"]
        budget = self.base_epochs + min(self.handed_epochs, self.base_epochs)
        if self.extended:
            # the leg that handed over had more than the budget: the next one
            # (a given-back leg) still gets a default budget of its own
            budget = max(budget, min(self.epochs + self.base_epochs,
                                     (EXTEND_CAP + 1) * self.base_epochs))
            self.extended = False
        self.max_epochs = budget

    def give_back(self, i, reason) -> bool:
        """Leg ``i`` stalled (or was slow) with no later candidate with a cost
        model: the first leg that handed over as slow or stalled (only a slow
        one after a slow leg) runs next with the rest of the budget, once, with
        no stall rule (Newton on standardized dna, squared hinge, C = 100,
        takes 180 iterations where 20 are predicted)."""
        kinds = ("slow",) if reason.startswith("slow") else ("slow", "stalled")
        leg = self.can_give_back(self.path[:-1], kinds)
        if leg is None:
            return False
        self.names.insert(i + 1, leg["method"])
        self.given = i + 1
        return True

    def can_give_back(self, legs=None, kinds=("slow", "stalled")):
        """The first of ``legs`` (default all) that handed over for ``kinds``."""
        if self.given is not None:
            return None
        for leg in self.path if legs is None else legs:
            if leg["reason"].startswith(kinds):
                return leg
        return None

    def result(self, last, stop) -> SolveResult:
        prob = self.problem
        if self.best.w is None:
            raise FloatingPointError(
                "solver='auto': no candidate certified a point: "
                + "; ".join(f"{p['method']}: {p['reason']}" for p in self.path))
        if last is not None and last.converged:
            cert = Certificate(w=last.coef, alpha=last.dual_coef, primal=last.primal,
                               dual=last.dual, v=None, margins=None)
            picked = {}
        else:
            cert, picked = pick_pair(prob, self.best, None, self.tol)
        extras = dict(last.extras) if last is not None else {}
        for key in ("best_epoch", "best_dual_epoch", "zero_model"):
            extras.pop(key, None)
        extras.update(picked)
        extras["path"] = self.path
        if self.extensions:
            extras["budget_extensions"] = self.extensions
        return SolveResult(
            coef=np.array(cert.w), dual_coef=np.array(cert.alpha), primal=cert.primal,
            dual=cert.dual, gap=cert.primal - cert.dual, solver=self.path[-1]["method"],
            options=dict(last.options) if last is not None else {},
            converged=cert.rel_gap <= self.tol, n_epochs=self.epochs,
            time=time.perf_counter() - self.t0, trace=self.trace, loss=prob.loss.name,
            lam=prob.lam, l1=prob.l1, tol=self.tol, feature_accesses=self.accesses,
            stop_reason=stop, state=state_of(last) if last is not None else None,
            extras=extras)


def supervise(problem, *, tol, max_epochs, random_state, callback=None, eval_set=None,
              n_jobs=None, **options) -> SolveResult:
    """Fit ``problem`` with ``solver="auto"``: the candidates of
    :func:`primaldual.solvers.auto.candidates` under the supervision of the
    module docstring; a :class:`SolveResult` whose ``extras["path"]`` lists the
    legs and whose ``solver`` is the method of the last."""
    threads = resolve_n_jobs(n_jobs) if n_jobs is not None else 1
    own = {k: v for k, v in options.items() if k not in COMMON_NAMES}
    direct = None
    if not own and direct_applies(problem, options, first=resolve_solver(
            "auto", problem, own, threads, tol), callback=callback, eval_set=eval_set,
            max_epochs=max_epochs):
        direct = run_direct(problem, tol, options.get("warm_start"), random_state, n_jobs)
        if direct.converged:
            return direct
        options = dict(options, warm_start=direct)
    names = candidates(problem, own, threads, tol)
    sup = _Supervisor(problem, names, tol=tol, max_epochs=max_epochs,
                      random_state=random_state, callback=callback, eval_set=eval_set,
                      n_jobs=n_jobs, options=options)
    if direct is not None:          # the direct leg's work and pair stay in the run
        sup.path.extend(direct.extras["path"])
        sup.offer({"coef": direct.coef, "dual_coef": direct.dual_coef, "epoch": 0.0,
                   "primal": direct.primal, "dual": direct.dual})
        sup.epochs = direct.n_epochs
    return sup.run()


def solver_path(res) -> list:
    """The legs of a fit: ``res.extras["path"]`` for ``solver="auto"``, else the
    one leg of the solver that ran, in the same form."""
    path = res.extras.get("path")
    if path is not None:
        return path
    return [{"method": res.solver, "threads": int(res.extras.get("threads", 1)),
             "n_jobs": res.options.get("n_jobs") or 1, "seconds": res.time,
             "epochs": res.n_epochs, "gap": res.rel_gap, "best_gap": res.rel_gap,
             "reason": res.stop_reason}]
