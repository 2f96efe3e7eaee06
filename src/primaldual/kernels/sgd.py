"""SGD epoch kernel: the baseline of Section 8.6 of the SDCA paper.

    w^{(t+1)} = (1 - 1/t) w^{(t)} - (1 / (lam t)) g_i phi'(x_i . w^{(t)}) x_i

with ``i`` drawn by the driver and ``g_i = n c_i / W`` (1 without sample
weights), so that the step is an unbiased estimate of the gradient of the
weighted objective.  ``w = scale * u`` keeps each step O(nnz(x_i)).

With ``project=True`` (Pegasos, Shalev-Shwartz et al. 2011) ``w`` is then
projected onto the ball of radius ``1/sqrt(lam)``; the squared norm is tracked
incrementally so the projection is O(1) per step.

:func:`sgd_run` takes a few structured arguments (NamedTuples, compiled by
Numba into structs): the rows (:class:`~primaldual.kernels.views.RowsView`),
the problem (:class:`~primaldual.kernels.views.StepSpec`), the step options
(:class:`SGDOptions`) and the iterate (:class:`SGDState`); it returns an
:class:`SGDResult`.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from numba import njit

from ..losses import dispatch as L
from .prefetch import prefetch_row
from .status import STATUS_NONFINITE, STATUS_OK
from .views import RowsView, StepSpec  # noqa: F401  (the kernels' arguments)

_RESCALE_BELOW = 1e-8


class SGDOptions(NamedTuple):
    """The per-row gradient weights ``grad_w`` (``g_i = n c_i / W``) and whether
    to project onto the ball of radius ``1/sqrt(lam)`` (Pegasos)."""
    grad_w: object
    project: bool


class SGDState(NamedTuple):
    """The iterate ``w = scale[0] * u``, updated in place: ``u`` (d), ``scale``
    (1,) and ``sqnorm`` (1,), ``||u||^2`` (maintained only when projecting)."""
    u: object
    scale: object
    sqnorm: object


class SGDResult(NamedTuple):
    """Status code (:mod:`.status`), the position reached in ``order``, feature accesses."""
    status: int
    pos: int
    accesses: int


@njit(cache=True, nogil=True)
def sgd_run(rows, spec, opts, state, order, start, stop, t0):
    """Run SGD steps ``t0 + 1, ...`` for ``i in order[start:stop]``.

    ``rows`` (:class:`~primaldual.kernels.views.RowsView`; reads ``data``,
    ``indices``, ``indptr``, ``iptr`` and ``y``), ``spec``
    (:class:`~primaldual.kernels.views.StepSpec`; ``kind``, ``param``, ``lam``),
    ``opts`` (:class:`SGDOptions`: ``grad_w``, ``project``), ``state``
    (:class:`SGDState`: ``w = scale[0] * u``; ``sqnorm[0]`` holds ``||u||^2``,
    maintained only when ``project``).  Returns an :class:`SGDResult`
    ``(status, pos, accesses)``.
    """
    data, indices, indptr, iptr, y = rows.data, rows.indices, rows.indptr, rows.iptr, rows.y
    kind, param, lam = spec.kind, spec.param, spec.lam
    grad_w, project = opts.grad_w, opts.project
    u, scale_arr, sqnorm_arr = state.u, state.scale, state.sqnorm
    scale = scale_arr[0]
    unorm2 = sqnorm_arr[0]
    accesses = 0
    t = t0
    d = u.shape[0]
    for pos in range(start, stop):
        i = order[pos]
        if pos + 2 < stop:
            prefetch_row(data, indices, indptr, iptr, order[pos + 2])
        t += 1
        rs = indptr[i]
        re = indptr[i + 1]
        off = iptr[i] - rs
        dot = 0.0
        for k in range(rs, re):
            dot += data[k] * u[indices[k + off]]
        a = dot * scale
        accesses += re - rs
        g = L.derivative(kind, param, a, y[i])
        if not math.isfinite(a):
            scale_arr[0] = scale
            sqnorm_arr[0] = unorm2
            return SGDResult(STATUS_NONFINITE, pos, accesses)
        # shrink: w <- (1 - 1/t) w
        shrink = 1.0 - 1.0 / t
        if shrink <= 0.0:
            for j in range(d):
                u[j] = 0.0
            scale = 1.0
            unorm2 = 0.0
        else:
            scale *= shrink
        step = grad_w[i] * g / (lam * t)
        if step != 0.0:
            c = -step / scale
            for k in range(rs, re):
                j = indices[k + off]
                if project:
                    old = u[j]
                    new = old + c * data[k]
                    unorm2 += new * new - old * old
                    u[j] = new
                else:
                    u[j] += c * data[k]
        if project:
            wn2 = unorm2 * scale * scale
            if wn2 * lam > 1.0:
                scale *= 1.0 / math.sqrt(wn2 * lam)
        if scale < _RESCALE_BELOW:
            unorm2 = 0.0
            for j in range(d):
                u[j] *= scale
                unorm2 += u[j] * u[j]
            scale = 1.0
    scale_arr[0] = scale
    sqnorm_arr[0] = unorm2
    return SGDResult(STATUS_OK, stop, accesses)
