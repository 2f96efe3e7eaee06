"""SDCA's pass planner: which coordinates the next pass visits, in what order.

One planner serves the serial in-kernel loop (:func:`sdca_passes`) and the
threaded driver (``SDCASolver._threaded_pass``).  Its state is one record of
:data:`PLAN_DTYPE` (:func:`new_plan`):

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

import numpy as np
from numba import njit

from ..status import STATUS_NEED_UNIFORMS, STATUS_NONFINITE, STATUS_OK
from .epoch import Averaging, Shrinking, sdca_epoch

#: sample orders
ORDER_UNIFORM = 0
ORDER_PERMUTATION = 1
ORDER_CYCLIC = 2

PLAN_DTYPE = np.dtype([("shrink_up", np.float64), ("shrink_down", np.float64),
                       ("pass_up", np.float64), ("pass_down", np.float64),
                       ("eps", np.float64)])
#: the record's fields in the order checkpoints store them (a float array)
PLAN_FIELDS = PLAN_DTYPE.names


def new_plan(eps, shrink_up=math.inf, shrink_down=math.inf, pass_up=0.0, pass_down=0.0):
    """A planner state (a 1-element array of :data:`PLAN_DTYPE`)."""
    plan = np.zeros(1, dtype=PLAN_DTYPE)
    plan[0] = (shrink_up, shrink_down, pass_up, pass_down, eps)
    return plan


def plan_from_floats(values, eps0):
    """The planner state stored as floats in PLAN_FIELDS order (four: no eps, ``eps0``)."""
    v = [float(x) for x in values]
    return new_plan(*(v[4:5] or [eps0]), *v[:4])


def plan_to_floats(plan):
    return np.array([plan[0][f] for f in PLAN_FIELDS], dtype=np.float64)


class Passes(NamedTuple):
    """The pass bookkeeping of one run (arrays updated in place): ``base`` the
    coordinates the run owns, in the order passes are built from; ``active``
    the ones not shrunk when the current pass began; ``order`` the current
    pass; ``cursor = [n_active, n_order, pos]`` (int64); ``plan`` the
    planner state (:data:`PLAN_DTYPE`)."""
    base: object
    active: object
    order: object
    cursor: object
    plan: object


@njit(cache=True, nogil=True)
def next_pass(passes, shrunk, sampling, u, ui, shrinking):
    """Plan the pass after the current one (module docstring); ``passes.cursor``
    is updated (``pos = 0``).  Returns ``(status, uniforms used up to now)``:
    ``STATUS_NEED_UNIFORMS`` when ``u[ui:]`` is too short (call again with
    fresh uniforms), else ``STATUS_OK``; ``n_active = 0``: everything shrunk."""
    p = passes.plan[0]
    active, order, cursor, base = passes.active, passes.order, passes.cursor, passes.base
    n_active, n_order = cursor[0], cursor[1]
    n_all = base.shape[0]
    if shrinking and n_order > 0 and p.pass_up + p.pass_down <= p.eps:
        p.eps *= 0.1
        if n_active < n_all:
            for q in range(n_all):
                shrunk[base[q]] = 0
                active[q] = base[q]
            n_active = n_all
            p.pass_up = 0.0
            p.pass_down = 0.0
    k = 0
    for q in range(n_active):
        a = active[q]
        if shrunk[a] == 0:
            active[k] = a
            k += 1
    n_active = k
    cursor[0] = n_active
    if n_active == 0:
        return STATUS_OK, ui
    need = n_active if sampling == ORDER_UNIFORM else (
        n_active - 1 if sampling == ORDER_PERMUTATION else 0)
    if u.shape[0] - ui < need:
        return STATUS_NEED_UNIFORMS, ui
    p.shrink_up = p.pass_up if p.pass_up > 0.0 else math.inf
    p.shrink_down = p.pass_down if p.pass_down > 0.0 else math.inf
    p.pass_up = 0.0
    p.pass_down = 0.0
    _draw(active, n_active, order, sampling, u, ui)
    cursor[1] = n_active
    cursor[2] = 0
    return STATUS_OK, ui + need


@njit(cache=True, nogil=True)
def _draw(active, n_active, order, sampling, u, ui):
    """``order[:n_active]`` drawn from ``active[:n_active]`` with ``u[ui:]``."""
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
    """Fold a slice's largest one-sided violations into the pass's."""
    p = plan[0]
    if up > p.pass_up:
        p.pass_up = up
    if down > p.pass_down:
        p.pass_down = down


@njit(cache=True, nogil=True)
def sdca_passes(rows, spec, state, passes, sampling, u, step0, target, shrinking, prox):
    """SDCA passes over ``passes.base`` from step ``step0`` to ``target``, the
    passes planned by :func:`next_pass` here in the kernel (with shrinking the
    active set can get small and passes short: a driver round trip per pass
    would dominate).  The steps are :func:`~primaldual.kernels.sdca.epoch.sdca_epoch`'s.

    Returns ``(status, t, uniforms used, feature accesses)``;
    ``STATUS_NEED_UNIFORMS``: call again with fresh uniforms.  Everything
    shrunk: returns with ``n_active = 0`` and ``t = target``.
    """
    cursor, plan = passes.cursor, passes.plan
    t = step0
    ui = 0
    acc = 0
    no_avg = Averaging(False, u[:0], passes.base[:0], 0)
    status = STATUS_OK
    while t < target:
        if cursor[2] >= cursor[1]:
            status, ui = next_pass(passes, state.shrunk, sampling, u, ui, shrinking)
            if status == STATUS_NEED_UNIFORMS:
                break
            if cursor[0] == 0:
                t = target
                break
        pos, n_order = cursor[2], cursor[1]
        stop = n_order if n_order - pos <= target - t else pos + (target - t)
        p = plan[0]
        status, pos, t, a1, up, down = sdca_epoch(
            rows, spec, state, passes.order, pos, stop, t, -1,
            Shrinking(shrinking, p.shrink_up, p.shrink_down), no_avg, prox)
        cursor[2] = pos
        acc += a1
        record_violations(plan, up, down)
        if status == STATUS_NONFINITE:
            break
    return status, t, ui, acc
