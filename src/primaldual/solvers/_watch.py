"""How the supervisor of ``solver="auto"`` judges one leg
(:mod:`primaldual.solvers.supervisor`, whose docstring states the rules): the
callback :class:`_Watch` sees every exact check, offers its pair to the run's
record, and says when the leg should hand over (slow, stalled, a lost thread
probe, a cost probe that does not pay)."""
from __future__ import annotations

import math

__all__ = ["HANDOVER_FACTOR", "STALL_CHECKS", "STALL_EPOCHS", "PROBE_CHECKS"]

#: a leg must cut its best gap by this factor within the stall window
HANDOVER_FACTOR = 10.0
#: a leg with no smaller gap over this many checks and ``STALL_EPOCHS`` hands over
STALL_CHECKS = 5
STALL_EPOCHS = 50.0
#: a thread probe lasts this many checks
PROBE_CHECKS = 3
#: a leg whose own predicted fit is longer than the next method's is judged
#: early, once it has had the next method's predicted fit: it hands over when
#: at its rate tol is more than EARLY_FACTOR times its own predicted fit away
#: (l1cd on covtype, L1 logistic C = 1: 1,354 passes, 14.4 s, from a gap of
#: 0.77 to 0.43 before the hand-over at its 1,000 predicted passes; l1_ipm then
#: certified in 11 iterations, 4.4 s)
EARLY_FACTOR = 2.0


def _decades_per_second(points):
    """Certified progress of ``points`` [(seconds, rel_gap), ...]: decades of the
    best gap per second from the first to the last (0 with fewer than two)."""
    if len(points) < 2:
        return 0.0
    (t0, g0), (t1, _) = points[0], points[-1]
    best = min(g for _, g in points)
    if t1 <= t0 or not (g0 > 0 and best > 0):
        return math.inf if best <= 0 else 0.0
    return math.log10(g0 / best) / (t1 - t0)


class _Watch:
    """The callback of one leg: offers each check to the run's best pair and
    says when the leg should hand over (``reason``)."""

    def __init__(self, sup, window, stall_checks, probe, epoch_s, grace):
        self.sup, self.window, self.stall_checks, self.probe = sup, window, stall_checks, probe
        self.epoch_s = epoch_s        # the cost model's seconds per epoch of this method
        self.grace = grace            # its own predicted work for the whole fit
        self.points = []              # (leg wall seconds, rel_gap): the thread probes
        self.abs_gaps = []            # best P - max(best D, floor) at each check
        self.epochs = []
        self.records = []             # the checks seen (the trace of a leg that fails)
        self.last_best = [0, 0]       # the checks of the last new best gaps (rel, abs)
        self.best_p, self.best_d = math.inf, -math.inf
        self.reason = ""
        self.budget_only = False      # judged slow only by the budget left
        self.progress_rtol = 1e-3     # a new best gap is this much smaller
        self.user_stop = False
        self.runner = None
        self.probe_next = None        # a cost probe: the next method's predicted fit
        self.probe_grace = 0.0        # and the work before the probe is judged
        self.probe_passed = False

    def __call__(self, snap):
        sup = self.sup
        sup.offer(snap)
        if sup.callback is not None and sup.callback(sup.shifted(snap)):
            self.user_stop = True
            return True
        # the leg's certified gap: its best primal value against its best dual
        # value (non-increasing; a primal method's P falls while the gap of its
        # own alpha(w) may not)
        self.best_p = min(self.best_p, float(snap["primal"]))
        self.best_d = max(self.best_d, float(snap["dual"]))
        gap = (self.best_p - self.best_d) / max(abs(self.best_p), 1e-12)
        # the stall rule's measure: the absolute gap against the best lower
        # bound known (0 for a nonnegative objective), non-increasing in a leg
        self.abs_gaps.append(self.best_p - max(self.best_d, self.sup.floor))
        self.points.append((float(snap["time"]), gap))
        self.epochs.append(float(snap["epoch"]))
        self.records.append({k: v for k, v in snap.items()
                             if k not in ("coef", "dual_coef")})
        self.reason = self.verdict()
        return bool(self.reason)

    def stalled(self, k) -> bool:
        """Neither measure of the leg's gap made a new best (0.1% below the one
        before) in the last ``k`` checks and ``STALL_EPOCHS`` epochs: the
        relative gap ``(P - D) / |P|`` of its best values, nor the absolute gap
        ``P - max(D, floor)``, which still falls when a primal method's ``P``
        falls while its dual point ``alpha(w)`` is far off (the relative gap
        may then rise: Newton on standardized dna, squared hinge, C = 100)."""
        rel = [g for _, g in self.points]
        for m, gaps in enumerate((rel, self.abs_gaps)):
            if gaps[-1] < gaps[self.last_best[m]] * (1 - self.progress_rtol):
                self.last_best[m] = len(gaps) - 1
        last = max(self.last_best)
        checks, epochs = len(rel) - 1 - last, self.epochs[-1] - self.epochs[last]
        # checks far apart (Newton, 100 CG passes each): 2 spanning its whole fit
        return epochs >= STALL_EPOCHS and (
            checks >= k or (checks >= 2 and epochs * self.epoch_s >= self.grace))

    def verdict(self) -> str:
        pts, k = self.points, self.stall_checks
        gaps = [g for _, g in pts]
        if self.probe == "serial" and len(pts) >= PROBE_CHECKS:
            return "thread probe"
        if self.probe == "threaded":
            if getattr(self.runner, "n_threads", 1) <= 1:
                self.probe = None           # the method runs one thread on this data
            elif len(pts) >= PROBE_CHECKS or pts[-1][0] >= self.sup.probe_cap:
                self.probe = None
                reason = self.sup.thread_verdict(pts)
                if reason.startswith("threads faster"):
                    self.sup.keep_going(self.runner)      # this leg goes on, threaded
                    return ""
                return reason
        if k and self.stalled(k):
            last = max(self.last_best)
            return (f"stalled: no smaller gap in {len(gaps) - 1 - last} checks "
                    f"and {self.epochs[-1] - self.epochs[last]:g} epochs")
        # work in the cost model's seconds (epochs x seconds per epoch), the units
        # of the window: reproducible, and independent of the machine's load
        work = [e * self.epoch_s for e in self.epochs]
        if self.probe_next is not None:
            reason = self.cost_verdict(work)
            if reason:
                return reason
        if self.window is None or work[-1] - work[0] < self.window:
            return ""
        if work[-1] - work[0] < self.grace:
            return self.early_verdict(work[-1] - work[0])
        # no check a window back (a cost model that predicts no finite time for
        # the next method): no rate to judge, the leg goes on
        past = [j for j, w in enumerate(work) if w <= work[-1] - self.window]
        if not past:
            return ""
        # judged by the better of the relative gap and the absolute gap P -
        # max(D, floor), target tol |P| (SDCA on standardized gisette, squared
        # hinge: D is optimal within 20 epochs, P falls 10x every 45, the
        # relative gap stays near 1 for 200)
        rel = [g for _, g in self.points]
        judged = [self.progress(rel, past, self.sup.tol),
                  self.progress(self.abs_gaps, past, self.sup.tol * abs(self.best_p))]
        if self.budget_only:
            judged = [(True, r, n) for _, r, n in judged]
        if not any(ok for ok, _, _ in judged):
            then, now = min(rel[j] for j in past), min(rel)
            return (f"slow: gap {then:.2e} -> {now:.2e} in the work the next method is "
                    f"predicted to need for the whole fit ({self.window:.3g} model s)")
        left = (self.sup.max_epochs - self.sup.epochs - self.epochs[-1]) * self.epoch_s
        rate, need = min(((r, n) for ok, r, n in judged if ok), key=lambda rn: rn[1])
        if need <= left or (self.budget_only and self.sup.extend_for(self, need)):
            return ""
        return (f"slow: at {rate:.3g} decades of gap per model s, tol is {need:.3g} model s "
                f"away, more than the {left:.3g} left in the budget")

    def progress(self, gaps, past, target, window=None):
        """``(cut tenfold in the window, decades per model s, model s to target)``
        of ``gaps`` (``past``: the checks at least ``window`` back, default the
        stall window)."""
        window = self.window if window is None else window
        then, now = min(gaps[j] for j in past), min(gaps)
        ok = now <= then / HANDOVER_FACTOR
        if not (target > 0 and now > target):
            return ok, math.inf, 0.0
        if not then > now > 0:
            return ok, 0.0, math.inf
        rate = math.log10(then / now) / window                # decades per model s
        return ok, rate, math.log10(now / target) / rate

    def early_verdict(self, spent) -> str:
        """A leg between the next method's predicted fit and its own
        (``grace``): hands over when at its rate over the leg (:meth:`leg_need`)
        tol is more than ``EARLY_FACTOR`` times its own predicted fit away."""
        need = self.leg_need()
        if spent + need <= EARLY_FACTOR * self.grace:
            return ""
        return (f"slow: {spent:.3g} model s spent and at its rate tol is {need:.3g} away, "
                f"more than {EARLY_FACTOR:g}x its own predicted fit ({self.grace:.3g}); "
                f"the next method is predicted {self.window:.3g} for the whole fit")

    def leg_need(self) -> float:
        """Model seconds to tol at the leg's rate from its first check to now
        (:meth:`progress` over the whole leg; the better of the relative and
        the absolute gap)."""
        work = (self.epochs[-1] - self.epochs[0]) * self.epoch_s if self.epochs else 0.0
        if not work > 0:
            return math.inf
        rel = [g for _, g in self.points]
        return min(self.progress(gaps, [0], target, work)[2] for gaps, target in (
            (rel, self.sup.tol), (self.abs_gaps, self.sup.tol * abs(self.best_p))))

    def cost_verdict(self, work) -> str:
        """A leg run as a cost probe (its own prediction is its whole budget,
        the next method's is shorter): once it has had ``probe_grace`` of work,
        it hands over when its work so far plus the work to tol at its rate
        over the last ``probe_grace`` exceeds the next method's predicted
        whole fit (``probe_next``): a wrong first choice costs at most about
        that fit."""
        grace = self.probe_grace
        past = [j for j, w in enumerate(work) if w <= work[-1] - grace]
        if not past:
            return ""
        rel = [g for _, g in self.points]
        need = min(n for _, _, n in (
            self.progress(rel, past, self.sup.tol, grace),
            self.progress(self.abs_gaps, past, self.sup.tol * abs(self.best_p), grace)))
        if work[-1] + need <= self.probe_next:
            if not self.probe_passed and "check_every" not in self.sup.options:
                self.sup.keep_going(self.runner)   # its own check schedule again
            self.probe_passed = True
            return ""
        return (f"slow: {work[-1]:.3g} model s spent and at its rate tol is {need:.3g} "
                f"away, more than the {self.probe_next:.3g} the next method is "
                f"predicted to need for the whole fit")
