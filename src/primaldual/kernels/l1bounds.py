"""Kernels of the L1 path's certificate with screened columns bounded, not read
(:mod:`primaldual.solvers.sparse.path`, docs/sparse-models.md).

Every column ``j`` keeps ``vref[j]``, its correlation ``v_j = -x_j . gu^ref``
read at the loss derivatives of reference slot ``ref_of[j]`` of a ring of kept
``gu`` vectors, and ``vabs[j] >= |v_j^ref|``; by Cauchy-Schwarz in the
weighted norm, at any ``gu``

    |v_j(gu)| <= upper_j = vabs[j] + colnorm[j] * dist[ref_of[j]],
    dist[t]^2 = sum_i (gu_i - ring[t, i])^2 / cw_i.

``exact[j]``: ``vref[j]`` was read at the current ``gu``.  ``screened[j]``:
Gap Safe screening removed ``j`` at this point (empty columns are screened
from the start).  The kernels take these arrays as one :class:`ColBounds`;
each loop is over the ``d`` flags once, with no allocation, and reads a column
only when the certificate needs it.  The ``(1 + SLACK)`` factors keep rounding
from ever shrinking a bound.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .views import row_dot

__all__ = ["ColBounds", "new_reference", "read_unscreened", "read_bounded",
           "screen_columns", "cols_to_rows", "filter_rows", "row_counts", "screen_features",
           "unsure_screened"]

#: relative slack on bounds and radii, here and in
#: :mod:`primaldual.solvers.sparse.screening`: rounding never shrinks a bound
#: or the safe sphere
SLACK = 1e-9


class ColBounds(NamedTuple):
    """Per column (d): ``colnorm`` (weighted norms), ``vref``, ``vabs``, ``ref_of``
    (int64), ``exact``, ``screened`` (bool); ``dist`` (one per ring slot)."""
    colnorm: object
    vref: object
    vabs: object
    ref_of: object
    exact: object
    screened: object
    dist: object


@njit(cache=True, nogil=True)
def _distance(ring, t, gu, inv_cw):
    s = 0.0
    for i in range(gu.shape[0]):
        e = gu[i] - ring[t, i]
        s += e * e * inv_cw[i]
    return np.sqrt(s)


@njit(cache=True, nogil=True)
def new_reference(ring, filled, slot, held, gu, inv_cw, b):
    """``gu`` becomes reference ``slot`` of the ring (``filled`` slots in use,
    this one included).  When the slot ``held`` an older ``gu^old``, the columns
    that referred to it keep a valid bound: ``vabs += colnorm ||gu - gu^old||``
    (triangle inequality).  Then ``b.dist[t] = sqrt(sum_i (gu_i - ring[t, i])^2
    inv_cw_i)`` for the slots ``t`` a screened column refers to, ``+inf`` for the
    others: at a new ``gu`` only the screened columns are left unread
    (:func:`read_unscreened`), so only their slots are looked up (an
    ``+inf`` bound only ever makes a column read)."""
    if held:
        step = _distance(ring, slot, gu, inv_cw) * (1.0 + SLACK)
        for j in range(b.ref_of.shape[0]):
            if b.ref_of[j] == slot:
                b.vabs[j] += b.colnorm[j] * step
    ring[slot, :] = gu
    used = b.dist
    used[:] = 0.0
    for j in range(b.ref_of.shape[0]):
        if b.screened[j]:
            used[b.ref_of[j]] = 1.0
    for t in range(used.shape[0]):
        if t == slot:
            b.dist[t] = 0.0
        elif t >= filled or used[t] == 0.0:
            b.dist[t] = np.inf
        else:
            b.dist[t] = _distance(ring, t, gu, inv_cw)


@njit(cache=True, nogil=True, inline="always")
def _read(cols, gu, b, j, slot):
    s = row_dot(cols.data, cols.indices, cols.indptr[j], cols.indptr[j + 1], 0, gu)
    b.vref[j] = -s
    b.vabs[j] = abs(s)
    b.ref_of[j] = slot
    b.exact[j] = True
    return cols.indptr[j + 1] - cols.indptr[j]


@njit(cache=True, nogil=True)
def read_unscreened(cols, gu, b, slot):
    """A new ``gu``: every column becomes inexact, then every unscreened one is
    read (its correlation becomes its reference, in ``slot``).  Returns
    ``(entries read, max |v_j| read)``."""
    acc = 0
    vmax = 0.0
    for j in range(b.exact.shape[0]):
        b.exact[j] = False
        if not b.screened[j]:
            acc += _read(cols, gu, b, j, slot)
            vmax = max(vmax, b.vabs[j])
    return acc, vmax


@njit(cache=True, nogil=True)
def read_bounded(cols, gu, b, slot, l1, pure):
    """Reads the inexact columns whose bound ``upper_j`` exceeds ``thr = l1``, or
    for pure L1 (``pure``) ``thr = max(l1, max |v_j| over the exact columns)``:
    every other inexact column has ``|v_j| <= thr``, so it changes neither the
    dual scaling nor ``(|v_j| - l1)_+``.  Returns ``(entries read, max |v_j|
    over the exact columns)``."""
    vmax = 0.0
    for j in range(b.exact.shape[0]):
        if b.exact[j]:
            vmax = max(vmax, b.vabs[j])
    thr = max(l1, vmax) if pure else l1
    acc = 0
    for j in range(b.exact.shape[0]):
        if not b.exact[j]:
            up = (b.vabs[j] + b.colnorm[j] * b.dist[b.ref_of[j]]) * (1.0 + SLACK)
            if up > thr:
                acc += _read(cols, gu, b, j, slot)
                vmax = max(vmax, b.vabs[j])
    return acc, vmax


@njit(cache=True, nogil=True)
def screen_columns(cols, gu, b, slot, scale, radius, l1, v, w):
    """Gap Safe screening of every unscreened column at the certificate with
    dual scaling ``scale`` and safe radius ``radius``: a column is removed
    (``screened``, ``w_j = 0``) when ``|v_j| / scale + radius colnorm_j <
    l1``, with ``|v_j|`` exact where read and else bounded by ``upper_j``; an
    inexact column the bound does not remove is read (``v[j] = vref[j] /
    scale``).  Returns ``(entries read, columns removed)``."""
    acc = 0
    removed = 0
    lim = l1 * (1.0 - SLACK)
    for j in range(b.exact.shape[0]):
        if b.screened[j]:
            continue
        r = radius * b.colnorm[j]
        if not b.exact[j]:
            up = (b.vabs[j] + b.colnorm[j] * b.dist[b.ref_of[j]]) * (1.0 + SLACK)
            if up / scale + r >= lim:
                acc += _read(cols, gu, b, j, slot)
                v[j] = b.vref[j] / scale
        if b.exact[j] and abs(b.vref[j]) / scale + r >= lim:
            continue
        b.screened[j] = True
        w[j] = 0.0
        removed += 1
    return acc, removed


@njit(cache=True, nogil=True)
def cols_to_rows(cols, ws, n, out_data, out_idx, out_ptr):
    """The working set ``ws`` (sorted) by rows, from its columns: row ``i`` holds
    ``out_data[out_ptr[i]:out_ptr[i+1]]`` at local columns ``out_idx[...]`` (the
    position in ``ws``, increasing).  Reads only the working set's entries;
    returns their number."""
    out_ptr[:] = 0
    for k in range(ws.shape[0]):
        j = ws[k]
        for p in range(cols.indptr[j], cols.indptr[j + 1]):
            out_ptr[cols.indices[p] + 1] += 1
    for i in range(n):
        out_ptr[i + 1] += out_ptr[i]
    for k in range(ws.shape[0]):
        j = ws[k]
        for p in range(cols.indptr[j], cols.indptr[j + 1]):
            i = cols.indices[p]
            q = out_ptr[i]
            out_data[q] = cols.data[p]
            out_idx[q] = k
            out_ptr[i] = q + 1
    for i in range(n, 0, -1):
        out_ptr[i] = out_ptr[i - 1]
    out_ptr[0] = 0
    return out_ptr[n]


@njit(cache=True, nogil=True)
def filter_rows(data, indices, indptr, local, out_data, out_idx, out_ptr):
    """The working set by rows, as :func:`cols_to_rows` makes it, from the rows
    of the data (CSR ``data``, ``indices``, ``indptr``; sorted indices): the
    entries of column ``j`` with ``local[j] >= 0`` are kept, at local column
    ``local[j]``, in the order of the row.  Reads every entry once, in order,
    and writes in order (cheaper than the scattered writes of
    :func:`cols_to_rows` when the working set holds most entries); returns the
    entries read."""
    n = indptr.shape[0] - 1
    q = 0
    out_ptr[0] = 0
    for i in range(n):
        for p in range(indptr[i], indptr[i + 1]):
            k = local[indices[p]]
            # written always, kept when k >= 0: no branch to mispredict (the
            # write lands at or before p, inside the output)
            out_data[q] = data[p]
            out_idx[q] = k
            q += k >= 0
        out_ptr[i + 1] = q
    return indptr[n] - indptr[0]


@njit(cache=True, nogil=True)
def row_counts(cols, ws, counts):
    """``counts[i]`` = the entries of row ``i`` in the working set ``ws`` (from
    its columns); returns ``(sum_i counts[i]^2, entries read)``, the cost of the
    working set's dense Hessian without building its rows."""
    counts[:] = 0
    acc = 0
    for k in range(ws.shape[0]):
        j = ws[k]
        for p in range(cols.indptr[j], cols.indptr[j + 1]):
            counts[cols.indices[p]] += 1
        acc += cols.indptr[j + 1] - cols.indptr[j]
    sq = 0.0
    for i in range(counts.shape[0]):
        sq += float(counts[i]) * counts[i]
    return sq, acc


@njit(cache=True, nogil=True)
def screen_features(v, colnorm, r, lim, screened, w, bound):
    """Gap Safe screening of ``l1cd``'s check (:mod:`primaldual.solvers.sparse.solver`):
    each unscreened ``j`` with ``|v_j| + r colnorm_j < lim`` (``r`` the safe
    radius, ``lim = l1 (1 - SLACK)``) is screened, ``w_j`` set to 0 and
    ``bound_j = |v_j| (1 + SLACK) + r colnorm_j`` recorded; one loop over the
    features, the sums of :func:`~primaldual.solvers.sparse.screening.gap_safe_mask`.
    Returns the number screened."""
    count = 0
    for j in range(v.shape[0]):
        if screened[j]:
            continue
        a = abs(v[j])
        if a + r * colnorm[j] < lim:
            screened[j] = True
            w[j] = 0.0
            bound[j] = a * (1.0 + SLACK) + r * colnorm[j]
            count += 1
    return count


@njit(cache=True, nogil=True)
def unsure_screened(screened, bound, colnorm, r, lim, out):
    """The screened features ``j`` with ``bound_j + r colnorm_j >= lim`` into
    ``out`` (increasing); returns how many (``l1cd``'s ``_confirm``)."""
    k = 0
    for j in range(screened.shape[0]):
        if screened[j] and bound[j] + r * colnorm[j] >= lim:
            out[k] = j
            k += 1
    return k
