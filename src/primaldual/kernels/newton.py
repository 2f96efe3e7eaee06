"""Passes over the data for the trust-region Newton solver.

All three read the rows through the shared ``(data, indices, indptr, iptr)``
view (see :mod:`primaldual.rows`), so dense and CSR input take one code path,
and float32 data is read as stored and accumulated in float64.

``fun_grad``    f, grad f and the curvatures ``c_i phi''(x_i . w)`` in one pass
``hess_vec``    ``sum_i D_i (x_i . v) x_i`` in one pass (rows with D_i = 0 skipped)
``hess_sparse`` the explicit ``sum_i D_i x_i x_i^T`` (cost ``sum_i nnz_i^2``)
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .loss_kernels import loss_derivative, loss_second_derivative, loss_value
from .views import row_axpy, row_dot


@njit(cache=True, nogil=True)
def fun_grad(data, indices, indptr, iptr, y, cw, w, kind, param, margins, grad, curv, dphi):
    """One pass at ``w``.

    Writes ``margins[i] = x_i . w``, ``grad = sum_i c_i phi'(x_i . w) x_i``,
    ``curv[i] = c_i phi''(x_i . w)`` and ``dphi[i] = phi'(x_i . w)`` (the
    certificate's dual point is ``-dphi``); returns ``sum_i c_i phi(x_i . w)``.
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
        loss_sum += c * loss_value(kind, param, a, y[i])
        curv[i] = c * loss_second_derivative(kind, param, a, y[i])
        p = loss_derivative(kind, param, a, y[i])
        dphi[i] = p
        g = c * p
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
