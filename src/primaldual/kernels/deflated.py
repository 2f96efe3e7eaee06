"""The local SDCA pass of CoCoA+ with a deflated coupling.

Partition ``k`` of a CoCoA+ round maximizes a local subproblem whose
quadratic coupling term is ``(1/(2 lam)) Dv_k^T M Dv_k`` with

    M = sig_rest I + (sig_top - sig_rest) U U^T,

``U`` (d, r) orthonormal (the shared directions of the data), ``sig_top = K``
(safe on span U by Cauchy-Schwarz) and ``sig_rest`` the factor on the rest.
With ``u = v + sig_rest Dv_k`` and ``z = U^T Dv_k`` the local image
``v + M Dv_k`` is read as ``x_i . u + extra b_i . z`` (``b_i = U^T x_i``,
``extra = sig_top - sig_rest``) and a coordinate step is the loss's exact
``dual_step`` with margin ``a = (x_i . u + extra b_i . z) / lam`` and curvature
``s = c_i (sig_rest ||x_i||^2 + extra ||b_i||^2) / (lam W)``.
"""
from __future__ import annotations

import math
from typing import NamedTuple

from numba import njit

from ..losses import dispatch as LD
from .status import STATUS_NONFINITE, STATUS_OK
from .views import row_axpy, row_dot

__all__ = ["LowRank", "deflated_pass"]


class LowRank(NamedTuple):
    """The shared directions as the rows see them: ``B = X U`` (n, r), ``bsq``
    the squared row norms of ``B``, ``z = U^T Dv_k`` (r,) updated in place."""
    B: object
    bsq: object
    z: object


@njit(cache=True, nogil=True)
def deflated_pass(rows, spec, low, alpha, u, order, start, stop, sig_rest, extra):
    """Coordinate steps for ``i in order[start:stop]`` on the local subproblem
    of the module docstring; ``alpha``, ``u`` and ``low.z`` are updated in place.
    Returns ``(status, pos, feature_accesses)``."""
    data, indices, indptr, iptr = rows.data, rows.indices, rows.indptr, rows.iptr
    sqnorm, y, cw = rows.sqnorm, rows.y, rows.cw
    kind, param, inv_W = spec.kind, spec.param, spec.inv_W
    B, bsq, z = low.B, low.bsq, low.z
    r = z.shape[0]
    inv_lam = 1.0 / spec.lam
    acc = 0
    for pos in range(start, stop):
        i = order[pos]
        rs = indptr[i]
        re = indptr[i + 1]
        off = iptr[i] - rs
        dot = row_dot(data, indices, rs, re, off, u)
        low_dot = 0.0
        for j in range(r):
            low_dot += B[i, j] * z[j]
        a = (dot + extra * low_dot) * inv_lam
        acc += re - rs + r
        ai = alpha[i]
        s = cw[i] * (sig_rest * sqnorm[i] + extra * bsq[i]) * inv_W * inv_lam
        new = LD.dual_step(kind, param, ai, y[i], a, s)
        if not (math.isfinite(new) and math.isfinite(a)):
            return STATUS_NONFINITE, pos, acc
        delta = new - ai
        if delta != 0.0:
            alpha[i] = new
            coef = cw[i] * delta * inv_W
            row_axpy(coef * sig_rest, data, indices, rs, re, off, u)
            for j in range(r):
                z[j] += coef * B[i, j]
    return STATUS_OK, stop, acc
