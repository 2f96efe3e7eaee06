"""When the check loop certifies: the adaptive interval between exact checks
(:func:`next_check_interval`, from the measured rate of the gap) and the
budget that keeps checks a small share of the time (:func:`check_budget_interval`).
"""
from __future__ import annotations

import math

__all__ = ["next_check_interval", "check_budget_interval", "check_pass_cost"]

#: the adaptive schedule's constants (tuned on recorded gap traces of SDCA on
#: a9a, reuters, covtype and the rcv1 shape, 3 losses x lam 1e-4..1e-6)
CHECK_FIRST = 1.5        # epochs before the first check (no rate known yet)
CHECK_MIN = 0.5          # shortest interval
CHECK_SLACK = 1.05       # aim 5% past the predicted crossing
CHECK_ANCHOR = 2.0 / 3.0  # the rate is measured from the last check before 2/3 e
CHECK_PASS_COST = 0.4    # a certificate pass costs ~0.4 of an epoch of SDCA steps
                         # touching the same nonzeros (measured: 1.5-1.8 ns/nnz
                         # against 2.5-10 ns/nnz for an epoch)
CHECK_SHARE = 0.07       # checks may take about this share of the time
#: on wide data a certificate access costs more: its reads of w and v are
#: random accesses into d-vectors as an SDCA step's are, and miss the cache
#: alike.  check_pass_cost counts the bytes of w and v beyond CHECK_CACHE_FREE
#: against CHECK_CACHE_BYTES (fixed sizes, not this machine's caches: the
#: schedule stays reproducible); measured, one certificate pass over one SDCA
#: epoch: a9a (d 123) 0.37 hinge / 0.26 logistic; an rcv1 shape (d 47k)
#: 0.61 / 0.52; the shared-vocabulary text (100k) 0.61 / 0.47; the orthogonal
#: text (200k) 0.92 / 0.71; one-hot (829k, 26 entries a row) 0.67 / 0.58
CHECK_CACHE_FREE = 256 * 1024
CHECK_CACHE_BYTES = 1024 * 1024


def check_pass_cost(d):
    """A certificate pass's cost in epochs of steps over the same entries, from
    the data's width ``d`` alone: ``CHECK_PASS_COST`` while ``w`` and ``v``
    (16 d bytes) fit in ``CHECK_CACHE_FREE``, rising towards one epoch as they
    outgrow it (``f = excess / (excess + CHECK_CACHE_BYTES)``; 0.59 at d = 47k,
    0.74 at 100k, 0.84 at 200k)."""
    excess = max(16.0 * float(d) - CHECK_CACHE_FREE, 0.0)
    return CHECK_PASS_COST + (1.0 - CHECK_PASS_COST) * excess / (excess + CHECK_CACHE_BYTES)


def check_budget_interval(nnz, accesses_per_epoch, pass_cost=CHECK_PASS_COST):
    """The interval at which exact checks cost about ``CHECK_SHARE`` of the work.

    A check is one pass over all ``nnz`` stored entries; an epoch of the solver
    touches ``accesses_per_epoch`` of them (fewer with shrinking), each at about
    ``1 / pass_cost`` the cost of a certificate access (:func:`check_pass_cost`).
    The estimate is from counts, not clocks, so the schedule (and hence a run)
    is reproducible.
    """
    if not nnz > 0:                 # no stored entries: a check costs next to nothing
        return CHECK_MIN
    if not accesses_per_epoch > 0:
        accesses_per_epoch = nnz
    return max(CHECK_MIN, pass_cost * nnz / (CHECK_SHARE * accesses_per_epoch))


def next_check_interval(points, tol, budget=math.inf, floor=CHECK_MIN):
    """Epochs until the next exact gap check for ``check_every="auto"``.

    ``points`` are the exact checks so far, ``(epoch, relative gap)``.  The
    gap of a linearly convergent method falls geometrically, so the rate
    ``r = log(g_a / g_last) / (e_last - e_a)`` predicts the crossing of
    ``tol`` after ``log(g_last / tol) / r`` more epochs; the next check goes
    5% past it.  The anchor ``a`` is the latest check at or before two thirds
    of ``e_last`` (other than the cold start at epoch 0, whose first epoch is
    atypically fast), else the previous check: the gap of the last iterate
    fluctuates from epoch to epoch, and a longer baseline steadies the rate.

    A prediction further away than ``budget`` epochs (see
    :func:`check_budget_interval`), a stalled or a rising gap give ``budget``:
    checks then cost a bounded share of the time, a wrong prediction costs at
    most ``budget`` epochs, and a gap that plateaus and fluctuates (hinge) is
    still sampled.  Never below ``floor`` (at least half an epoch; the
    solvers pass the cost of a check in epochs, :func:`check_pass_cost`, so
    that a gap hovering just above ``tol`` is not checked more often than
    checks cost).  The schedule only decides
    *when* to check: every check is the exact certificate, and convergence is
    declared on it alone.
    """
    low = max(CHECK_MIN, float(floor))
    pts = [(float(e), float(g)) for e, g in points if g > 0.0 and math.isfinite(g)]
    if len(pts) < 2 or pts[-1][0] <= pts[-2][0]:
        return max(low, min(CHECK_FIRST, budget))
    e1, g1 = pts[-1]
    last = e1 - pts[-2][0]
    if math.isfinite(budget):
        cap = stall = budget
    else:                       # no budget given: at most double, a stall doubles
        cap, stall = max(2.0 * last, e1, 1.0), 2.0 * last
    anchors = [(e, g) for e, g in pts[:-1] if 0.0 < e <= CHECK_ANCHOR * e1]
    e0, g0 = anchors[-1] if anchors else pts[-2]
    rate = (math.log(g0) - math.log(g1)) / (e1 - e0)
    if not rate > 0.0:
        return max(low, stall)
    ahead = CHECK_SLACK * (math.log(g1) - math.log(max(tol, 1e-300))) / rate
    return max(low, min(ahead, cap))
