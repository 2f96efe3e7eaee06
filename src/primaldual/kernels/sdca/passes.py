"""SDCA's pass planner: which coordinates the next pass visits, in what order.

One planner serves the serial in-kernel loop (:func:`sdca_passes`) and the
threaded driver (``SDCASolver._threaded_pass``).  Its state is a
:class:`PassPlan`, passed in and returned:

``shrink_up``, ``shrink_down``  the current pass's one-sided shrinking thresholds
``pass_up``, ``pass_down``      the largest one-sided violations seen in it
``eps``                         the tolerance on ``pass_up + pass_down`` below which
                                the active set counts as solved

When a pass ends, :func:`next_pass`, with shrinking: if the pass's violation
range is at most ``eps`` every coordinate comes back (``active = base``) and
``eps`` is divided by 10 -- LIBLINEAR's re-activation when its active set
meets the stopping tolerance, with a tolerance that tightens.  Then the pass's
largest violations become the thresholds (infinite when zero, as LIBLINEAR's
``PGmax_old`` / ``PGmin_old``), ``active`` drops the coordinates shrunk during
the pass (keeping its order), and the next pass is drawn from the uniforms
``u``: ``ORDER_PERMUTATION`` shuffles ``active`` (Fisher-Yates, one uniform per
position but the first), ``ORDER_UNIFORM`` draws ``n_active`` coordinates with
replacement, ``ORDER_CYCLIC`` keeps ``active`` as it is.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from numba import njit

from ..status import STATUS_NEED_UNIFORMS, STATUS_NONFINITE, STATUS_OK
from .epoch import Averaging, Shrinking, sdca_epoch

#: sample orders
ORDER_UNIFORM = 0
ORDER_PERMUTATION = 1
ORDER_CYCLIC = 2

class PassPlan(NamedTuple):
    """The planner's state (module docstring); checkpoints store its five floats."""
    shrink_up: float
    shrink_down: float
    pass_up: float
    pass_down: float
    eps: float


def new_plan(eps):
    """The state before the first pass: no thresholds, nothing seen."""
    return PassPlan(math.inf, math.inf, 0.0, 0.0, float(eps))


def plan_from_floats(values, eps0):
    """A :class:`PassPlan` from its stored floats (four, without eps: ``eps0``)."""
    v = [float(x) for x in values]
    return PassPlan(*v[:4], v[4] if len(v) > 4 else float(eps0))


class Passes(NamedTuple):
    """The pass bookkeeping of one run (arrays updated in place): ``base`` the
    coordinates the run owns, in the order passes are built from; ``active``
    the ones not shrunk when the current pass began; ``order`` the current
    pass; ``cursor = [n_active, n_order, pos]`` (int64)."""
    base: object
    active: object
    order: object
    cursor: object


@njit(cache=True, nogil=True)
def next_pass(passes, plan, shrunk, sampling, u, shrinking):
    """Plan the pass after the current one (module docstring); ``passes.cursor``
    is updated (``pos = 0``).  Returns ``(status, uniforms of u used, the new
    plan)``: ``STATUS_NEED_UNIFORMS`` when ``u`` is too short (call again with
    fresh uniforms), else ``STATUS_OK``; ``n_active = 0``: everything shrunk."""
    active, order, cursor, base = passes.active, passes.order, passes.cursor, passes.base
    n_active, n_order = cursor[0], cursor[1]
    n_all = base.shape[0]
    up, down, eps = plan.pass_up, plan.pass_down, plan.eps
    if shrinking and n_order > 0 and up + down <= eps:
        eps *= 0.1
        if n_active < n_all:
            for q in range(n_all):
                shrunk[base[q]] = 0
                active[q] = base[q]
            n_active = n_all
            up = 0.0
            down = 0.0
    k = 0
    for q in range(n_active):
        a = active[q]
        if shrunk[a] == 0:
            active[k] = a
            k += 1
    n_active = k
    cursor[0] = n_active
    if n_active == 0:
        return STATUS_OK, 0, PassPlan(plan.shrink_up, plan.shrink_down, up, down, eps)
    need = n_active if sampling == ORDER_UNIFORM else (
        n_active - 1 if sampling == ORDER_PERMUTATION else 0)
    if u.shape[0] < need:
        return STATUS_NEED_UNIFORMS, 0, PassPlan(plan.shrink_up, plan.shrink_down, up,
                                                  down, eps)
    _draw(active, n_active, order, sampling, u)
    cursor[1] = n_active
    cursor[2] = 0
    return STATUS_OK, need, PassPlan(up if up > 0.0 else math.inf,
                                          down if down > 0.0 else math.inf, 0.0, 0.0, eps)


@njit(cache=True, nogil=True, inline="always")
def _draw(active, n_active, order, sampling, u):
    """``order[:n_active]`` drawn from ``active[:n_active]`` with the uniforms ``u``."""
    ui = 0
    if sampling == ORDER_UNIFORM:
        for q in range(n_active):
            r = int(u[ui] * n_active)
            ui += 1
            order[q] = active[r if r < n_active else n_active - 1]
        return
    for q in range(n_active):
        order[q] = active[q]
    if sampling == ORDER_PERMUTATION:
        for q in range(n_active - 1, 0, -1):
            r = int(u[ui] * (q + 1))
            ui += 1
            if r > q:
                r = q
            tmp = order[q]
            order[q] = order[r]
            order[r] = tmp


@njit(cache=True, nogil=True)
def record_violations(plan, up, down):
    """The plan with a slice's largest one-sided violations folded into the pass's."""
    return PassPlan(plan.shrink_up, plan.shrink_down, up if up > plan.pass_up else plan.pass_up,
                    down if down > plan.pass_down else plan.pass_down, plan.eps)


@njit(cache=True, nogil=True)
def sdca_passes(rows, spec, state, passes, plan, sampling, u, step0, target, shrinking, prox):
    """SDCA passes over ``passes.base`` from step ``step0`` to ``target``, the
    passes planned by :func:`next_pass` here in the kernel (with shrinking the
    active set can get small and passes short: a driver round trip per pass
    would dominate).  The steps are :func:`~primaldual.kernels.sdca.epoch.sdca_epoch`'s.

    Returns ``(status, t, uniforms used, feature accesses, plan)``;
    ``STATUS_NEED_UNIFORMS``: call again with fresh uniforms.  Everything
    shrunk: returns with ``n_active = 0`` and ``t = target``.
    """
    cursor = passes.cursor
    t = step0
    ui = 0
    acc = 0
    no_avg = Averaging(False, u[:0], passes.base[:0], 0)
    status = STATUS_OK
    while t < target:
        if cursor[2] >= cursor[1]:
            status, used, plan = next_pass(passes, plan, state.shrunk, sampling, u[ui:],
                                           shrinking)
            ui += used
            if status == STATUS_NEED_UNIFORMS:
                break
            if cursor[0] == 0:
                t = target
                break
        pos, n_order = cursor[2], cursor[1]
        stop = n_order if n_order - pos <= target - t else pos + (target - t)
        status, pos, t, a1, up, down = sdca_epoch(
            rows, spec, state, passes.order, pos, stop, t, -1,
            Shrinking(shrinking, plan.shrink_up, plan.shrink_down), no_avg, prox)
        cursor[2] = pos
        acc += a1
        plan = record_violations(plan, up, down)
        if status == STATUS_NONFINITE:
            break
    return status, t, ui, acc, plan
