"""Per-row kernels of the projected Newton method on the Crammer-Singer dual
(:mod:`primaldual.solvers.crammer_singer_newton`).

Row ``i``'s feasible set is ``{b in R^K : sum_m b_m = 0, b_m <= cap_im}``
with ``cap_im = C_i 1[m = y_i]``.  The face fixes the ``(i, m)`` at their
bound; the free variables of a row move in the null space of their sum
(:func:`cs_face_project`), and a step is brought back onto the row's set by
the Euclidean projection (:func:`cs_project_rows`), which is the sequential
dual method's row subproblem :func:`~primaldual.kernels.multiclass.cs_subproblem`
with ``A = 1`` and ``B = -v``: ``min 1/2 ||b||^2 - v . b = 1/2 ||b - v||^2 + const``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .multiclass import cs_subproblem
from .status import STATUS_NONFINITE, STATUS_OK

__all__ = ["cs_face_project", "cs_project_rows"]


@njit(cache=True, nogil=True)
def cs_face_project(v, free, scale):
    """In place: each row of ``v`` (R x K) minus its mean over its free
    classes, zero on the fixed ones, then times ``scale[r]`` (the orthogonal
    projection onto the face's directions ``sum_{m free} d_rm = 0``, ``d_rm =
    0`` at a bound, and a per-row scaling, which commutes with it)."""
    K = v.shape[1]
    for r in range(v.shape[0]):
        s = 0.0
        c = 0
        for m in range(K):
            if free[r, m]:
                s += v[r, m]
                c += 1
        mean = s / c if c > 0 else 0.0
        for m in range(K):
            v[r, m] = (v[r, m] - mean) * scale[r] if free[r, m] else 0.0


@njit(cache=True, nogil=True)
def cs_project_rows(beta, rows, direction, t, C, y, out, B, D, new, cap):
    """``out[r] = `` the projection of ``beta[rows[r]] + t direction[r]`` onto
    row ``rows[r]``'s feasible set (module docstring; ``B, D, new, cap``: work
    arrays of length K).  Returns a status (non-finite input)."""
    K = beta.shape[1]
    for r in range(rows.shape[0]):
        i = rows[r]
        for m in range(K):
            B[m] = -(beta[i, m] + t * direction[r, m])
            cap[m] = C[i] if m == y[i] else 0.0
        cs_subproblem(1.0, K, 0.0, B, D, new, cap)
        for m in range(K):
            if not np.isfinite(new[m]):
                return STATUS_NONFINITE
            out[r, m] = new[m]
    return STATUS_OK
