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

from numba import njit

from .loss_kernels import loss_value, neg_conjugate


@njit(cache=True, nogil=True)
def certificate_pass(data, indices, indptr, iptr, y, cw, alpha, w, kind, p,
                     v_out, margins):
    n = indptr.shape[0] - 1
    for j in range(v_out.shape[0]):
        v_out[j] = 0.0
    loss_sum = 0.0
    conj_sum = 0.0
    for i in range(n):
        start = indptr[i]
        end = indptr[i + 1]
        off = iptr[i] - start
        a = 0.0
        for k in range(start, end):
            a += data[k] * w[indices[k + off]]
        margins[i] = a
        loss_sum += cw[i] * loss_value(kind, p, a, y[i])
        conj_sum += cw[i] * neg_conjugate(kind, p, alpha[i], y[i])
        coef = cw[i] * alpha[i]
        if coef != 0.0:
            for k in range(start, end):
                v_out[indices[k + off]] += coef * data[k]
    return loss_sum, conj_sum


@njit(cache=True, nogil=True)
def row_sqnorms(data, indptr, out):
    """out[i] = ||x_i||^2 accumulated in float64 (float32 input included)."""
    n = indptr.shape[0] - 1
    for i in range(n):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            x = float(data[k])
            s += x * x
        out[i] = s
