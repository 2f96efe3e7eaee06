"""The threaded SDCA's first-pass trial: threads kept only where measured faster.

The planner's cost model (:func:`primaldual.blocks.sdca_threads.thread_plan`)
predicts; the trial measures on the data: a pass's first quarter runs on one
thread and its second on the threads, each timed on the clock and in CPU time
(docs/solvers.md, "Threads").  :func:`trial_outcome` turns the times into a
decision: keep the threads, go on serially, or, where one trial lands within
``TRIAL_RETRY_BAND`` of the bar, time the next pass's quarters too and decide
on both (one trial's two quarter passes, timed once, vary by about 0.15 either
way between runs on this 2-core machine; two trials halve the chance that
noise decides).

Imports nothing of the package: the solver hands in the times and its plan.
"""
from __future__ import annotations

__all__ = ["TRIAL_MIN_SPEEDUP", "TRIAL_RETRY_BAND", "trial_outcome", "trial_verdict"]

#: the trial keeps threads measured at least this much faster than one thread
TRIAL_MIN_SPEEDUP = 1.1
#: a first trial within this of TRIAL_MIN_SPEEDUP decides nothing: the next
#: pass's trial is added to it and the two decide
TRIAL_RETRY_BAND = 0.1


def trial_verdict(times, cpu, plan, k, min_speedup, passes=1):
    """A trial's decision: ``(keep the threads, reason, measured speed-up)``, or
    None when nothing was measured.  ``times = (serial s, its stored entries, the
    threads' s, their entries)``, ``cpu = (serial CPU s, the threads' CPU s
    summed)``, summed over ``passes`` trial passes; the threads stay where one
    thread's time per stored entry (its CPU time where less: a serial quarter
    descheduled by other work does not pass for slow) over the threads' wall
    time, divided by the plan's epoch penalty of asynchrony, is at least
    ``min_speedup`` (on idle cores, ``k`` threads run about ``k`` times one
    thread's CPU time per entry over theirs)."""
    serial_s, serial_nnz, thread_s, thread_nnz = (float(t) for t in times)
    if serial_nnz <= 0 or thread_nnz <= 0 or serial_s <= 0 or thread_s <= 0:
        return None
    one = min(serial_s, cpu[0]) if cpu[0] > 0 else serial_s
    measured = (one / serial_nnz) / (thread_s / thread_nnz) / plan.penalty
    work = (f"; CPU {1e9 * cpu[0] / serial_nnz:.2f} ns per entry on one, "
            f"{1e9 * cpu[1] / thread_nnz:.2f} summed over {k}"
            if cpu[0] > 0 and cpu[1] > 0 else "")
    where = "first pass" if passes == 1 else f"first {passes} passes"
    detail = (f"measured on this data's {where}, {k} threads {measured:.2f}x one "
              f"thread ({1e9 * serial_s / serial_nnz:.2f} ns per stored entry on one, "
              f"{1e9 * thread_s / thread_nnz:.2f} ns on {k}, {plan.penalty:.2f}x the "
              f"epochs predicted{work}; the cost model predicted {plan.speedup:.2f}x)")
    if measured >= min_speedup:
        return True, f"threads: {detail}", measured
    return False, f"serial: {detail}, below {min_speedup}x", measured


def trial_outcome(times, cpu, plan, k, passes, min_speedup=None, band=None):
    """``(decision, reason)`` after ``passes`` trial passes (times summed over
    them, as :func:`trial_verdict` takes them): ``"threads"``, ``"serial"``,
    ``"again"`` (a first trial within ``band`` of ``min_speedup``: run the
    next pass's trial and decide on both), or ``None`` when nothing was
    measured.  The bar and the band default to the module's constants."""
    bar = TRIAL_MIN_SPEEDUP if min_speedup is None else min_speedup
    band = TRIAL_RETRY_BAND if band is None else band
    verdict = trial_verdict(times, cpu, plan, k, bar, passes)
    if verdict is None:
        return None, None
    keep, reason, measured = verdict
    if passes == 1 and abs(measured - bar) < band:
        return "again", f"trial again: {reason}"
    return ("threads" if keep else "serial"), reason
