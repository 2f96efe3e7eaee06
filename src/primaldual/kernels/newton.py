"""Passes over the data for the truncated Newton solver (serial and distributed).

All three read the rows through the shared ``(data, indices, indptr, iptr)``
view (see :mod:`primaldual.rows`), so dense and CSR input take one code path,
and float32 data is read as stored and accumulated in float64.

``fun_grad``    f, grad f and the curvatures ``c_i phi''(x_i . w)`` in one pass
``hess_vec``    ``sum_i D_i (x_i . v) x_i`` in one pass (rows with D_i = 0 skipped)
``hess_sparse`` the explicit ``sum_i D_i x_i x_i^T`` (cost ``sum_i nnz_i^2``)
``line_derivatives``  the slope and curvature of ``f`` along a step, from margins
``primal_dual_point`` ``alpha = -phi'(margins)`` and its dual sum (the certificate)
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..losses import dispatch as L
from .views import row_axpy, row_dot


@njit(cache=True, nogil=True)
def fun_grad(data, indices, indptr, iptr, y, cw, w, kind, param, margins, grad, curv):
    """One pass at ``w``.

    Writes ``margins[i] = x_i . w``, ``grad = sum_i c_i phi'(x_i . w) x_i`` and
    ``curv[i] = c_i phi''(x_i . w)``; returns ``sum_i c_i phi(x_i . w)``.
    The caller divides by ``W``.
    """
    n = indptr.shape[0] - 1
    for j in range(grad.shape[0]):
        grad[j] = 0.0
    loss_sum = 0.0
    for i in range(n):
        start = indptr[i]
        end = indptr[i + 1]
        off = iptr[i] - start
        a = row_dot(data, indices, start, end, off, w)
        margins[i] = a
        c = cw[i]
        loss_sum += c * L.value(kind, param, a, y[i])
        curv[i] = c * L.second_derivative(kind, param, a, y[i])
        g = c * L.derivative(kind, param, a, y[i])
        if g != 0.0:
            row_axpy(g, data, indices, start, end, off, grad)
    return loss_sum


@njit(cache=True, nogil=True)
def hess_vec(data, indices, indptr, iptr, curv, v, out):
    """``out = sum_i curv[i] (x_i . v) x_i`` (the data part of H v, times W)."""
    n = indptr.shape[0] - 1
    for j in range(out.shape[0]):
        out[j] = 0.0
    for i in range(n):
        c = curv[i]
        if c == 0.0:
            continue
        start = indptr[i]
        end = indptr[i + 1]
        off = iptr[i] - start
        t = c * row_dot(data, indices, start, end, off, v)
        if t != 0.0:
            row_axpy(t, data, indices, start, end, off, out)


@njit(cache=True, nogil=True)
def hess_sparse(data, indices, indptr, iptr, curv, H):
    """``H = sum_i curv[i] x_i x_i^T`` (dense d x d output, full, symmetric)."""
    d = H.shape[0]
    for j in range(d):
        for k in range(d):
            H[j, k] = 0.0
    n = indptr.shape[0] - 1
    for i in range(n):
        c = curv[i]
        if c == 0.0:
            continue
        start = indptr[i]
        end = indptr[i + 1]
        off = iptr[i] - start
        for k in range(start, end):
            jk = indices[k + off]
            t = c * np.float64(data[k])
            for l in range(start, end):
                H[jk, indices[l + off]] += t * data[l]


@njit(cache=True, nogil=True)
def row_nnz_squares(indptr):
    """``sum_i nnz_i^2``: the work of one explicit sparse Hessian."""
    s = 0
    for i in range(indptr.shape[0] - 1):
        m = indptr[i + 1] - indptr[i]
        s += m * m
    return s


@njit(cache=True, nogil=True)
def line_derivatives(y, cw, margins, trial_margins, t, kind, param):
    """The data part of ``d/dt`` and ``d^2/dt^2`` of ``f(w + t s)``: with
    ``z = trial_margins - margins`` (``X s``) and ``a = margins + t z``,
    returns ``(sum_i c_i phi'(a_i) z_i, sum_i c_i phi''(a_i) z_i^2)``.
    The caller divides by ``W`` and adds the penalty's part."""
    d1 = 0.0
    d2 = 0.0
    for i in range(margins.shape[0]):
        z = trial_margins[i] - margins[i]
        if z == 0.0:
            continue
        a = margins[i] + t * z
        d1 += cw[i] * L.derivative(kind, param, a, y[i]) * z
        d2 += cw[i] * L.second_derivative(kind, param, a, y[i]) * z * z
    return d1, d2


@njit(cache=True, nogil=True)
def primal_dual_point(y, cw, margins, kind, param, alpha):
    """The certificate of a primal method from its margins: writes ``alpha_i =
    -phi'(x_i . w)`` and returns ``sum_i c_i (-phi*(-alpha_i))`` (``-inf`` when a
    term is not finite)."""
    conj = 0.0
    for i in range(margins.shape[0]):
        a = -L.derivative(kind, param, margins[i], y[i])
        alpha[i] = a
        conj += cw[i] * L.neg_conjugate(kind, param, a, y[i])
    if not np.isfinite(conj):
        return -np.inf
    return conj
