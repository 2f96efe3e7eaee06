"""The certificate pass: one sweep over the rows that yields everything the
exact primal, dual and gap need.

For a primal point ``w`` and a dual point ``alpha`` it computes, in one pass
over the data,

* ``margins[i] = x_i . w``
* ``loss_sum = sum_i c_i phi(x_i . w; y_i)``
* ``conj_sum = sum_i c_i (-phi*(-alpha_i; y_i))``
* ``v_out = sum_i c_i alpha_i x_i``   (the caller divides by W)

so that ``P(w) = loss_sum / W + g(w)`` and ``D(alpha) = conj_sum / W - g*(v)``
are exact for the returned pair, whatever drift the incremental ``w`` of a
solver may have accumulated (weak duality holds for any ``w`` and any feasible
``alpha``).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..losses import dispatch as L
from .views import row_axpy


@njit(cache=True, nogil=True)
def certificate_pass(data, indices, indptr, iptr, y, cw, alpha, w, kind, param,
                     v_out, margins, margins_given=False):
    """One pass for ``(w, alpha)``: fills ``margins`` with ``X @ w`` and ``v_out``
    with ``sum_i c_i alpha_i x_i``; returns ``(loss_sum, conj_sum)``.

    A row's dot product and its addition into ``v`` are one loop over its
    entries, on ``w`` and ``v`` interleaved in one work array (``w_j`` and
    ``v_j`` side by side: on wide data, where both are random accesses, an
    entry costs one cache miss instead of two); the sums run in the order of
    two separate loops, so the result is bitwise theirs.

    ``margins_given=True``: ``margins`` already holds ``X @ w`` (the caller made
    the product, e.g. with scipy); the rows are then read only where ``c_i
    alpha_i != 0`` (for ``v``), and the sums run in the same order, so given
    the same margins the result is bitwise the same."""
    n = indptr.shape[0] - 1
    d = v_out.shape[0]
    for j in range(d):
        v_out[j] = 0.0
    wv = np.empty((0 if margins_given else d, 2))
    for j in range(wv.shape[0]):
        wv[j, 0] = w[j]
        wv[j, 1] = 0.0
    loss_sum = 0.0
    conj_sum = 0.0
    for i in range(n):
        start = indptr[i]
        end = indptr[i + 1]
        off = iptr[i] - start
        coef = cw[i] * alpha[i]
        if margins_given:
            a = margins[i]
            if coef != 0.0:
                row_axpy(coef, data, indices, start, end, off, v_out)
        elif coef != 0.0:
            a = 0.0
            for k in range(start, end):
                j = indices[k + off]
                x = data[k]
                a += x * wv[j, 0]
                wv[j, 1] += coef * x
            margins[i] = a
        else:
            a = 0.0
            for k in range(start, end):
                a += data[k] * wv[indices[k + off], 0]
            margins[i] = a
        loss_sum += cw[i] * L.value(kind, param, a, y[i])
        conj_sum += cw[i] * L.neg_conjugate(kind, param, alpha[i], y[i])
    for j in range(wv.shape[0]):
        v_out[j] = wv[j, 1]
    return loss_sum, conj_sum


@njit(cache=True, nogil=True)
def row_sqnorms(data, indptr, out):
    """out[i] = ||x_i||^2 accumulated in float64 (float32 input included)."""
    n = indptr.shape[0] - 1
    for i in range(n):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            x = np.float64(data[k])   # float() keeps float32 in Numba: x*x overflows
            s += x * x
        out[i] = s


# Vector reductions used by the objectives, from Python.  numpy's 1-D ``a @ b``
# goes through BLAS ddot, which OpenBLAS runs multithreaded for long vectors; on
# a loaded machine its spinning threads made one dot product of a 47k-vector
# take ~50 ms.  ``einsum`` without ``optimize`` uses numpy's own single-threaded
# loops (no BLAS) and needs no compilation (a compiled loop here cost every
# fresh process a compile: benchmarks/bench_startup.py).
def sum_squares(v):
    """sum_j v_j^2."""
    return float(np.einsum("i,i->", v, v))


def sum_abs(v):
    """sum_j |v_j|."""
    return float(np.abs(v).sum())


def sum_squares_excess(v, t):
    """sum_j max(|v_j| - t, 0)^2 (the elastic-net conjugate's numerator)."""
    r = np.abs(v) - t
    np.maximum(r, 0.0, out=r)
    return float(np.einsum("i,i->", r, r))


def weighted_sum(c, x):
    """sum_i c_i x_i."""
    return float(np.einsum("i,i->", c, x))


@njit(cache=True, nogil=True)
def add_masked_product(data, indices, indptr, iptr, mask, dw, margins):
    """``margins[i] += sum_j x_ij dw_j`` over the columns ``j`` with ``mask[j]``:
    ``X @ w`` brought to ``w + dw`` where ``dw`` is zero outside the mask, one
    read of the indices and a byte of ``mask`` per stored entry (the rows'
    values and ``dw`` only where the mask holds).  Returns the rows changed."""
    changed = 0
    for i in range(indptr.shape[0] - 1):
        start = indptr[i]
        off = iptr[i] - start
        s = 0.0
        hit = False
        for k in range(start, indptr[i + 1]):
            j = indices[k + off]
            if mask[j]:
                s += data[k] * dw[j]
                hit = True
        if hit:
            margins[i] += s
            changed += 1
    return changed
