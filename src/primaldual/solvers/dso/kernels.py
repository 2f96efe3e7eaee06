"""DSO's compiled block updates: stochastic saddle-point steps (8) over the
nonzeros of one block Omega^(q, r) (Matsushima, Yun, Zhang & Vishwanathan,
Section 2.1 and Algorithm 1, line 8; the saddle function (6) and the method are
in :class:`~primaldual.solvers.dso.DSOSolver`'s docstring).  For one nonzero
``(i, j)``, both partial (sub)gradients at the current ``(w_j, alpha_i)``::

    g_w = r_j'(w_j) / |Omega-bar_j| - (c_i/W) alpha_i x_ij
    g_a = (c_i/W) (H_i'(alpha_i) / |Omega_i| - w_j x_ij)
    w_j     <- Proj_[-R, R](w_j - eta_w g_w)
    alpha_i <- Proj_dom_i(alpha_i + eta_a g_a)

Steps are a scalar ``eta`` or diagonal AdaGrad (the paper's Appendix A), scaled
by ``w_scale w_len[j]`` on the ``w`` side and ``a_scale`` on the ``alpha`` side.
``DSOSpec.extrap`` places the ``alpha`` step's coupling term: 0 at the current
pair (update (8) as printed), 1 at the new ``w_j'`` (sequential), 2 at PDHG's
extrapolated point.  With ``svrg=True`` each gradient is replaced by the SVRG
estimate (Johnson & Zhang 2013; Palaniappan & Bach 2016)
``g(w_j, alpha_i) - g(wbar_j, abar_i) + F / |Omega|`` at the snapshot
``(wbar, abar)`` with full gradient ``(Fw, Fa)`` (:func:`svrg_full_gradient`); it
touches only ``w_j`` and ``alpha_i``, so DSO stays serializable (Lemma 2).

Arrays are local: row arrays are indexed by the row's position in partition
``q``, column arrays by the column's position in block ``r``; the driver draws
the processing order from partition ``q``'s stream.  The kernels allocate
nothing and return status codes.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ...losses import dispatch as L
from ...losses.registry import CODES
from ...kernels.prefetch import prefetch

from ...kernels.status import STATUS_NONFINITE, STATUS_OK  # noqa: F401

STEP_SCALAR = 0     # eta given (eta0/sqrt(t) or constant)
STEP_ADAGRAD = 1


#: the losses the default-form kernels are also compiled for with the loss fixed
HINGE = CODES["hinge"]
LOGISTIC = CODES["logistic"]


@njit(cache=True, nogil=True)
def reg_subgrad(lam, l1, w):
    """r'(w) = lam w + l1 sign(w), with sign(0) = 0."""
    g = lam * w
    if l1 != 0.0:
        if w > 0.0:
            g += l1
        elif w < 0.0:
            g -= l1
    return g


@njit(cache=True, nogil=True, inline="always")
def w_descent(wj, gw, eta_w, l1_prox, l1_share):
    """The ``w`` half of update (8) before the projection: descent, with the L1
    prox at threshold ``eta_w * l1_share`` when ``l1_prox``.  The caller tests it
    for a finite value, then projects it on ``|w_j| <= R`` (Appendix A)."""
    nw = wj - eta_w * gw
    if l1_prox:
        thr = eta_w * l1_share
        if nw > thr:
            nw -= thr
        elif nw < -thr:
            nw += thr
        else:
            nw = 0.0
    return nw


@njit(cache=True, nogil=True, inline="always")
def coupling_w(wj, nwc, extrap):
    """Where the ``alpha`` step takes ``w_j`` (``DSOSpec.extrap``): the current
    ``wj`` (0), the new projected ``nwc`` itself (1, the sequential order) or
    ``wj + extrap (nwc - wj)``."""
    if extrap == 1.0:
        return nwc
    if extrap == 0.0:
        return wj
    return wj + extrap * (nwc - wj)


class Nonzeros(NamedTuple):
    """A block's stored nonzeros as triplets: row ``rows[e]``, column
    ``cols[e]``, value ``vals[e]``."""
    rows: object
    cols: object
    vals: object


class DSOSpec(NamedTuple):
    """The constants of update (8): loss ``kind`` and parameter ``param``, ``lam``,
    ``l1`` (``l1_prox``: as a proximal step), ``R`` the radius of the box on
    ``w``, the step (``step_mode``; ``eta`` for the scalar steps, ``eta0`` for
    AdaGrad, whose ``w`` steps are multiplied by ``w_scale`` and ``alpha``
    steps by ``a_scale``), ``svrg`` and ``extrap``, where the ``alpha`` step takes
    ``w_j`` (see the module docstring)."""
    kind: int
    param: float
    lam: float
    l1: float
    l1_prox: bool
    R: float
    step_mode: int
    eta: float
    eta0: float
    svrg: bool
    w_scale: float
    a_scale: float = 1.0
    extrap: float = 0.0


class RowSide(NamedTuple):
    """The rows' arrays: ``alpha`` (updated), its domain ``[a_lo, a_hi]``,
    ``y``, ``cw[i] = c_i / W``, ``row_cnt[i] = |Omega_i|``, AdaGrad's sums
    ``Ga`` (updated), the SVRG snapshot ``a_snap`` and its full gradient ``Fa``."""
    alpha: object
    a_lo: object
    a_hi: object
    y: object
    cw: object
    row_cnt: object
    Ga: object
    a_snap: object
    Fa: object


#: ``ColSide.w_len`` when every column's AdaGrad length factor is 1
NO_COL_FACTOR = np.ones(0)


class ColSide(NamedTuple):
    """The columns' arrays: ``w`` (updated), ``col_cnt[j] = |Omega-bar_j|``,
    AdaGrad's sums ``Gw`` (updated), the SVRG snapshot ``w_snap`` and its full
    gradient ``Fw``; ``w_len[j]`` multiplies AdaGrad's ``w_j`` steps (empty: 1
    for every column)."""
    w: object
    col_cnt: object
    Gw: object
    w_snap: object
    Fw: object
    w_len: object = NO_COL_FACTOR


@njit(cache=True, nogil=True)
def dso_block_kernel(nz, perm, start, stop, rs, cs, spec):
    """Apply update (8) to the nonzeros ``perm[start:stop]`` of one block.

    ``nz`` (:class:`Nonzeros`) holds the block's triplets, ``rs``
    (:class:`RowSide`) and ``cs`` (:class:`ColSide`) the rows' and columns'
    arrays, ``spec`` (:class:`DSOSpec`) the constants.  Returns ``(status,
    pos)``: ``pos`` is where processing stopped (``stop`` on success, the
    offending position on a non-finite value).
    """
    rows, cols, vals = nz.rows, nz.cols, nz.vals
    alpha, a_lo, a_hi, y, cw, row_cnt = rs.alpha, rs.a_lo, rs.a_hi, rs.y, rs.cw, rs.row_cnt
    Ga, a_snap, Fa = rs.Ga, rs.a_snap, rs.Fa
    w, col_cnt, Gw, w_snap, Fw = cs.w, cs.col_cnt, cs.Gw, cs.w_snap, cs.Fw
    w_len = cs.w_len
    per_col = w_len.shape[0] > 0
    kind, param, lam, l1, l1_prox, R = spec.kind, spec.param, spec.lam, spec.l1, spec.l1_prox, spec.R
    step_mode, eta, eta0, svrg, w_scale = (spec.step_mode, spec.eta, spec.eta0, spec.svrg,
                                           spec.w_scale)
    a_scale, extrap = spec.a_scale, spec.extrap
    for pos in range(start, stop):
        e = perm[pos]
        i = rows[e]
        j = cols[e]
        x = vals[e]
        wj = w[j]
        ai = alpha[i]
        ci = cw[i]
        yi = y[i]
        inv_cc = 1.0 / col_cnt[j]
        inv_rc = 1.0 / row_cnt[i]
        l1g = 0.0 if l1_prox else l1
        gw = reg_subgrad(lam, l1g, wj) * inv_cc - ci * ai * x
        if svrg:
            gw -= reg_subgrad(lam, l1g, w_snap[j]) * inv_cc - ci * a_snap[i] * x
            gw += Fw[j] * inv_cc
        if step_mode == STEP_ADAGRAD:
            Gw[j] += gw * gw
            len_w = w_scale * eta0 * w_len[j] if per_col else w_scale * eta0
            eta_w = len_w / math.sqrt(Gw[j]) if Gw[j] > 0.0 else 0.0
        else:
            eta_w = eta
        nw = w_descent(wj, gw, eta_w, l1_prox, l1 * inv_cc)
        nwc = min(max(nw, -R), R)            # Appendix A's box
        wt = coupling_w(wj, nwc, extrap)
        ga = ci * (L.neg_conjugate_grad(kind, param, ai, yi) * inv_rc - wt * x)
        if svrg:
            as_ = a_snap[i]
            ga -= ci * (L.neg_conjugate_grad(kind, param, as_, yi) * inv_rc - w_snap[j] * x)
            ga += Fa[i] * inv_rc
        if step_mode == STEP_ADAGRAD:
            Ga[i] += ga * ga
            eta_a = a_scale * eta0 / math.sqrt(Ga[i]) if Ga[i] > 0.0 else 0.0
        else:
            eta_a = eta
        na = ai + eta_a * ga
        if not (math.isfinite(nw) and math.isfinite(na)):
            return STATUS_NONFINITE, pos
        w[j] = nwc
        alpha[i] = min(max(na, a_lo[i]), a_hi[i])
    return STATUS_OK, stop


@njit(cache=True, nogil=True)
def svrg_full_gradient(rs, cs, margins, v, spec):
    """Full gradient of (6) at the snapshot ``(cs.w_snap, rs.a_snap)`` into ``cs.Fw``
    and ``rs.Fa``: ``Fw_j = r'(wbar_j) - v_j`` for the columns with nonzeros (0
    elsewhere) and ``Fa_i = (c_i/W)(H_i'(abar_i) - x_i . wbar)`` for the rows with
    nonzeros (0 elsewhere).  ``margins = X wbar`` and ``v = (1/W) sum_i c_i abar_i
    x_i`` are computed by the caller.  ``rs`` (:class:`RowSide`) and ``cs``
    (:class:`ColSide`) may carry empty arrays on the side that is not wanted (the
    Dask ring computes ``Fa`` on each worker and ``Fw`` on the client); ``r'``
    leaves out the L1 term under ``spec.l1_prox`` (prox-SVRG)."""
    alpha_s, y, cw, row_cnt, Fa = rs.a_snap, rs.y, rs.cw, rs.row_cnt, rs.Fa
    w_s, col_cnt, Fw = cs.w_snap, cs.col_cnt, cs.Fw
    kind, param, lam = spec.kind, spec.param, spec.lam
    l1 = 0.0 if spec.l1_prox else spec.l1
    for i in range(alpha_s.shape[0]):
        if row_cnt[i] > 0:
            Fa[i] = cw[i] * (L.neg_conjugate_grad(kind, param, alpha_s[i], y[i]) - margins[i])
        else:
            Fa[i] = 0.0
    for j in range(w_s.shape[0]):
        if col_cnt[j] > 0:
            Fw[j] = reg_subgrad(lam, l1, w_s[j]) - v[j]
        else:
            Fw[j] = 0.0


@njit(cache=True, nogil=True)
def snapshot_products(nz, block_ptr, col_bounds, wbar, cwa, margins, v):
    """One row partition's share of the SVRG snapshot's products, added in the
    partition's stored order (blocks ``s = 0..p-1``, each in layout order):
    ``margins[i] += x_ij wbar_j`` (local rows) and ``v_j += x_ij cwa_i`` (global
    columns, ``cwa = (c/W) abar``).  The serial solver and every ring actor
    call it on the same arrays, so both get the same bits."""
    rows, cols, vals = nz.rows, nz.cols, nz.vals
    for s in range(block_ptr.shape[0] - 1):
        j0 = col_bounds[s]
        for e in range(block_ptr[s], block_ptr[s + 1]):
            i = rows[e]
            j = j0 + cols[e]
            x = vals[e]
            margins[i] += x * wbar[j]
            v[j] += x * cwa[i]


CHUNK = 1024         # nonzeros per chunk of the "chunks" order


@njit(cache=True, nogil=True)
def fill_chunk_order(chunks, k, m, out):
    """The processing order of the "chunks" schedule: the chunks
    ``[c CHUNK, min(m, (c+1) CHUNK))`` for ``c`` in ``chunks[:k]`` (a random
    order of ``0..k-1``), each in stored order.  Returns the count written."""
    pos = 0
    for s in range(k):
        lo = chunks[s] * CHUNK
        hi = min(m, lo + CHUNK)
        for e in range(lo, hi):
            out[pos] = e
            pos += 1
    return pos


@njit(cache=True, nogil=True)
def permute_block(rows, cols, vals, perm, tmp_i, tmp_f):
    """Reorder one block's triplets in place by ``perm`` (x_new[k] = x[perm[k]])."""
    m = perm.shape[0]
    for k in range(m):
        tmp_i[k] = rows[perm[k]]
    for k in range(m):
        rows[k] = tmp_i[k]
    for k in range(m):
        tmp_i[k] = cols[perm[k]]
    for k in range(m):
        cols[k] = tmp_i[k]
    for k in range(m):
        tmp_f[k] = vals[perm[k]]
    for k in range(m):
        vals[k] = tmp_f[k]


@njit(cache=True, nogil=True)
def fill_identity(out):
    """out[k] = k (the canonical order a block is shuffled from)."""
    for k in range(out.shape[0]):
        out[k] = k


@njit(cache=True, nogil=True)
def layout_counts(data, indices, indptr, iptr, row_cnt, col_cnt):
    """Count the nonzeros (x_ij != 0) of every row and column (|Omega_i|, |Omega-bar_j|)."""
    n = indptr.shape[0] - 1
    for i in range(n):
        rs = indptr[i]
        off = iptr[i] - rs
        for k in range(rs, indptr[i + 1]):
            if data[k] != 0.0:
                row_cnt[i] += 1.0
                col_cnt[indices[k + off]] += 1.0


@njit(cache=True, nogil=True)
def layout_fill(data, indices, indptr, iptr, p, row_bounds, col_block, col_bounds,
                block_ptr, rows_out, cols_out, vals_out):
    """Counting sort of the nonzeros into the p x p blocks (q = row part,
    r = column block), keeping CSR order inside each block: the same order as a
    stable argsort by block key, without any nnz-length temporary.

    ``block_ptr`` must hold the block counts in ``block_ptr[1:]`` on entry; it
    holds the offsets on return.
    """
    n = indptr.shape[0] - 1
    nb = p * p
    for b in range(nb):
        block_ptr[b + 1] += block_ptr[b]
    cursor = block_ptr[:nb].copy()
    q = 0
    for i in range(n):
        while i >= row_bounds[q + 1]:
            q += 1
        rs = indptr[i]
        off = iptr[i] - rs
        for k in range(rs, indptr[i + 1]):
            x = data[k]
            if x != 0.0:
                j = indices[k + off]
                r = col_block[j]
                b = q * p + r
                pos = cursor[b]
                cursor[b] = pos + 1
                rows_out[pos] = i - row_bounds[q]
                cols_out[pos] = j - col_bounds[r]
                vals_out[pos] = x


@njit(cache=True, nogil=True)
def layout_block_counts(data, indices, indptr, iptr, p, row_bounds, col_block, counts):
    """counts[q * p + r] = number of nonzeros in block (q, r)."""
    n = indptr.shape[0] - 1
    q = 0
    for i in range(n):
        while i >= row_bounds[q + 1]:
            q += 1
        rs = indptr[i]
        off = iptr[i] - rs
        for k in range(rs, indptr[i + 1]):
            if data[k] != 0.0:
                counts[q * p + col_block[indices[k + off]]] += 1


# ------------------------------------------------------------------ packed form
# Row-side fields of the packed kernel (one 128-byte record per row, its 9
# fields on two cache lines) and column-side fields (one 64-byte record per
# column, one line when the buffer is line-aligned): every update touches two
# records instead of 18 separate arrays, and the kernels prefetch them PF_NZ
# nonzeros ahead.  With SVRG the records hold the
# snapshot's part of the estimator that stays fixed over the epoch, per row
# and per column (PA_SNAP = (c_i/W) abar_i, PA_F = (Fa_i - (c_i/W) H_i'(abar_i)) /
# |Omega_i|; PW_F = (Fw_j - r_j'(wbar_j)) / |Omega-bar_j|), so an update
# evaluates H' and r' once, at the current pair.
PA_ALPHA, PA_G, PA_SNAP, PA_F, PA_CW, PA_Y, PA_INVRC, PA_LO, PA_HI = range(9)
PA_STRIDE = 16
PW_W, PW_G, PW_SNAP, PW_F, PW_INVCC, PW_LEN = range(6)
PW_STRIDE = 8


@njit(cache=True, nogil=True)
def pack_block(rs, cs, adagrad, svrg, PA, PW, spec):
    """Copy a partition's row arrays (:class:`RowSide`) into ``PA`` and a w
    block (:class:`ColSide`) into ``PW``; with ``svrg``, the snapshot's fixed
    part of the estimator per row and column (``spec``: :class:`DSOSpec`); each
    column's AdaGrad length ``w_scale eta0 w_len[j]``."""
    alpha, a_lo, a_hi, y, cw, row_cnt = rs.alpha, rs.a_lo, rs.a_hi, rs.y, rs.cw, rs.row_cnt
    Ga, a_snap, Fa = rs.Ga, rs.a_snap, rs.Fa
    w, col_cnt, Gw, w_snap, Fw, w_len = cs.w, cs.col_cnt, cs.Gw, cs.w_snap, cs.Fw, cs.w_len
    per_col = w_len.shape[0] > 0
    kind, param, lam = spec.kind, spec.param, spec.lam
    l1g = 0.0 if spec.l1_prox else spec.l1
    len_w = spec.w_scale * spec.eta0
    for i in range(alpha.shape[0]):
        inv_rc = 1.0 / row_cnt[i] if row_cnt[i] > 0 else 0.0
        PA[i, PA_ALPHA] = alpha[i]
        PA[i, PA_CW] = cw[i]
        PA[i, PA_Y] = y[i]
        PA[i, PA_INVRC] = inv_rc
        PA[i, PA_LO] = a_lo[i]
        PA[i, PA_HI] = a_hi[i]
        PA[i, PA_G] = Ga[i] if adagrad else 0.0
        if svrg:
            PA[i, PA_SNAP] = cw[i] * a_snap[i]
            PA[i, PA_F] = (Fa[i] - cw[i] * L.neg_conjugate_grad(kind, param, a_snap[i], y[i])
                           ) * inv_rc
        else:
            PA[i, PA_SNAP] = 0.0
            PA[i, PA_F] = 0.0
    for j in range(w.shape[0]):
        inv_cc = 1.0 / col_cnt[j] if col_cnt[j] > 0 else 0.0
        PW[j, PW_W] = w[j]
        PW[j, PW_INVCC] = inv_cc
        PW[j, PW_LEN] = len_w * w_len[j] if per_col else len_w
        PW[j, PW_G] = Gw[j] if adagrad else 0.0
        PW[j, PW_SNAP] = w_snap[j] if svrg else 0.0
        PW[j, PW_F] = (Fw[j] - reg_subgrad(lam, l1g, w_snap[j])) * inv_cc if svrg else 0.0


@njit(cache=True, nogil=True)
def unpack_block(PA, PW, alpha, Ga, w, Gw, adagrad):
    """Copy the iterates (and AdaGrad sums) back from the packed records."""
    for i in range(alpha.shape[0]):
        alpha[i] = PA[i, PA_ALPHA]
        if adagrad:
            Ga[i] = PA[i, PA_G]
    for j in range(w.shape[0]):
        w[j] = PW[j, PW_W]
        if adagrad:
            Gw[j] = PW[j, PW_G]


#: how many nonzeros ahead the packed kernels prefetch the row and column records
#: (both cache lines of a row record, fields 0 to PA_HI: 72 bytes): 32 covers the
#: latency of memory when the row records exceed the caches (covtype: 74 MB) and
#: costs nothing when they fit (benchmarks/results/dso-epoch-cost.md)
PF_NZ = 32


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _packed_updates(nz, perm, use_perm, start, stop, PA, PW, spec, fixed, kind):
    """Update (8) on the nonzeros ``perm[start:stop]`` (``use_perm``) or
    ``start:stop`` in stored order, on the packed records; ``(status, pos)``.

    ``fixed`` (a constant at every call site, so the compiler removes the
    branches on it): the spec is the solver's default form, AdaGrad with SVRG,
    the sequential order (``extrap`` 1) and no L1 term; the loop then has no
    branch on the options.  The arithmetic is the same either way, operation by
    operation, so both forms give the same bits.  With ``extrap`` 1 the alpha
    step takes the new ``w_j`` itself (``w_j + 1 (w_j' - w_j)`` can differ from it
    in the last bit).  ``error_model="numpy"``: a
    division by zero gives inf or nan, which the finiteness test reports, instead of
    a branch to raise per division.  Positions and indices are unsigned, which
    spares the code for negative indices (none occur)."""
    rows, cols, vals = nz.rows, nz.cols, nz.vals
    param, lam, R = spec.param, spec.lam, spec.R
    eta, eta0 = spec.eta, spec.eta0
    if fixed:
        adagrad, svrg, extrap, l1, l1_prox = True, True, 1.0, 0.0, False
    else:
        adagrad, svrg, extrap = spec.step_mode == STEP_ADAGRAD, spec.svrg, spec.extrap
        l1, l1_prox = spec.l1, spec.l1_prox
    len_a = spec.a_scale * eta0
    l1g = 0.0 if l1_prox else l1
    pa_flat = PA.reshape(PA.size)        # views, for the prefetch hints
    pw_flat = PW.reshape(PW.size)
    sa, sw = np.uint64(PA.shape[1]), np.uint64(PW.shape[1])
    ustop, ahead = np.uint64(stop), np.uint64(PF_NZ)
    for pos in range(np.uint64(start), ustop):
        if pos + ahead < ustop:
            e_pf = np.uint64(perm[pos + ahead]) if use_perm else pos + ahead
            r_pf = np.uint64(rows[e_pf]) * sa
            prefetch(pa_flat, r_pf)                    # a row record's two cache lines
            prefetch(pa_flat, r_pf + np.uint64(PA_HI))
            prefetch(pw_flat, np.uint64(cols[e_pf]) * sw)
        e = np.uint64(perm[pos]) if use_perm else pos
        i = np.uint64(rows[e])
        j = np.uint64(cols[e])
        x = vals[e]
        wj = PW[j, PW_W]
        ai = PA[i, PA_ALPHA]
        ci = PA[i, PA_CW]
        gw = reg_subgrad(lam, l1g, wj) * PW[j, PW_INVCC] - ci * ai * x
        if svrg:       # the snapshot's terms, their fixed part packed per row / column
            gw += PA[i, PA_SNAP] * x + PW[j, PW_F]
        if adagrad:
            gwa = PW[j, PW_G] + gw * gw
            PW[j, PW_G] = gwa
            eta_w = PW[j, PW_LEN] / math.sqrt(gwa) if gwa > 0.0 else 0.0
        else:
            eta_w = eta
        nw = w_descent(wj, gw, eta_w, l1_prox, l1 * PW[j, PW_INVCC])
        nwc = min(max(nw, -R), R)            # Appendix A's box
        wt = coupling_w(wj, nwc, extrap)
        ga = ci * (L.neg_conjugate_grad(kind, param, ai, PA[i, PA_Y]) * PA[i, PA_INVRC] - wt * x)
        if svrg:
            ga += ci * PW[j, PW_SNAP] * x + PA[i, PA_F]
        if adagrad:
            gaa = PA[i, PA_G] + ga * ga
            PA[i, PA_G] = gaa
            eta_a = len_a / math.sqrt(gaa) if gaa > 0.0 else 0.0
        else:
            eta_a = eta
        na = ai + eta_a * ga
        if not (math.isfinite(nw) and math.isfinite(na)):
            return STATUS_NONFINITE, np.int64(pos)
        PW[j, PW_W] = nwc
        PA[i, PA_ALPHA] = min(max(na, PA[i, PA_LO]), PA[i, PA_HI])
    return STATUS_OK, stop


def is_default_form(spec):
    """True when ``spec`` (:class:`DSOSpec`) is the solver's default form, AdaGrad
    with SVRG, the sequential order (``extrap`` 1) and no L1 term, for which
    :func:`chunks_kernel` and :func:`packed_kernel` return loops compiled without
    branches on the options."""
    return (spec.step_mode == STEP_ADAGRAD and bool(spec.svrg) and spec.extrap == 1.0
            and spec.l1 == 0.0)


@njit(cache=True, nogil=True, inline="always")
def _chunk_updates(nz, chunks, k, PA, PW, spec, fixed, kind):
    """:func:`_packed_updates` over the chunks ``chunks[:k]`` (see
    :func:`dso_block_kernel_chunks`)."""
    m = nz.rows.shape[0]
    done = 0
    for s in range(k):
        lo = chunks[s] * CHUNK
        hi = min(m, lo + CHUNK)
        status, pos = _packed_updates(nz, chunks, False, lo, hi, PA, PW, spec, fixed, kind)
        if status != STATUS_OK:
            return status, done + pos - lo
        done += hi - lo
    return STATUS_OK, done


@njit(cache=True, nogil=True, error_model="numpy")
def dso_block_kernel_packed(nz, perm, start, stop, PA, PW, spec):
    """:func:`dso_block_kernel` on the packed records ``PA`` (rows) and ``PW``
    (columns) of :func:`pack_block` (same update (8), same SVRG estimator and
    steps; ``1/|Omega_i|`` and ``1/|Omega-bar_j|`` are stored as reciprocals).
    Any spec; :func:`packed_kernel` picks the loop compiled for it.  Returns
    ``(status, pos)``."""
    return _packed_updates(nz, perm, True, start, stop, PA, PW, spec, False, spec.kind)


@njit(cache=True, nogil=True, error_model="numpy")
def dso_block_kernel_chunks(nz, chunks, k, PA, PW, spec):
    """:func:`dso_block_kernel_packed` in the "chunks" order: the chunks
    ``chunks[:k]`` of ``CHUNK`` stored nonzeros, each in stored order (the order
    :func:`fill_chunk_order` writes out, read here without it).  Any spec;
    :func:`chunks_kernel` picks the loop compiled for it.  Returns ``(status,
    pos)``, ``pos`` counted along that order."""
    return _chunk_updates(nz, chunks, k, PA, PW, spec, False, spec.kind)


# The default form's loops (is_default_form), without option branches; hinge and
# logistic also with the loss fixed.  Each is its own compiled function, compiled
# on its first call only.
@njit(cache=True, nogil=True, error_model="numpy")
def _chunks_default(nz, chunks, k, PA, PW, spec):
    return _chunk_updates(nz, chunks, k, PA, PW, spec, True, spec.kind)


@njit(cache=True, nogil=True, error_model="numpy")
def _chunks_default_hinge(nz, chunks, k, PA, PW, spec):
    return _chunk_updates(nz, chunks, k, PA, PW, spec, True, HINGE)


@njit(cache=True, nogil=True, error_model="numpy")
def _chunks_default_logistic(nz, chunks, k, PA, PW, spec):
    return _chunk_updates(nz, chunks, k, PA, PW, spec, True, LOGISTIC)


@njit(cache=True, nogil=True, error_model="numpy")
def _packed_default(nz, perm, start, stop, PA, PW, spec):
    return _packed_updates(nz, perm, True, start, stop, PA, PW, spec, True, spec.kind)


@njit(cache=True, nogil=True, error_model="numpy")
def _packed_default_hinge(nz, perm, start, stop, PA, PW, spec):
    return _packed_updates(nz, perm, True, start, stop, PA, PW, spec, True, HINGE)


@njit(cache=True, nogil=True, error_model="numpy")
def _packed_default_logistic(nz, perm, start, stop, PA, PW, spec):
    return _packed_updates(nz, perm, True, start, stop, PA, PW, spec, True, LOGISTIC)


def chunks_kernel(spec):
    """The compiled :func:`dso_block_kernel_chunks` for ``spec``: same arguments,
    same iterates (bit for bit), the loop without option branches for the
    default form (:func:`is_default_form`)."""
    if not is_default_form(spec):
        return dso_block_kernel_chunks
    return {HINGE: _chunks_default_hinge,
            LOGISTIC: _chunks_default_logistic}.get(int(spec.kind), _chunks_default)


def packed_kernel(spec):
    """The compiled :func:`dso_block_kernel_packed` for ``spec`` (see
    :func:`chunks_kernel`)."""
    if not is_default_form(spec):
        return dso_block_kernel_packed
    return {HINGE: _packed_default_hinge,
            LOGISTIC: _packed_default_logistic}.get(int(spec.kind), _packed_default)


@njit(cache=True, nogil=True)
def column_abs_max(data, indices, indptr, iptr, out):
    """out[j] = max_i |x_ij| (the rows given as in :mod:`primaldual.rows`; out zeroed
    by the caller)."""
    n = indptr.shape[0] - 1
    for i in range(n):
        rs = indptr[i]
        off = iptr[i] - rs
        for k in range(rs, indptr[i + 1]):
            a = abs(data[k])
            j = indices[k + off]
            if a > out[j]:
                out[j] = a


@njit(cache=True, nogil=True)
def scaled_row_sqnorms(data, indices, indptr, iptr, col_scale, out):
    """out[i] = ||x_i / col_scale||^2 (columns with ``col_scale == 0`` hold no nonzero)."""
    n = indptr.shape[0] - 1
    for i in range(n):
        rs = indptr[i]
        off = iptr[i] - rs
        s = 0.0
        for k in range(rs, indptr[i + 1]):
            x = data[k]
            if x != 0.0:
                z = x / col_scale[indices[k + off]]
                s += z * z
        out[i] = s
