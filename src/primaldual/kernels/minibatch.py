"""Compiled kernels of mini-batch SDCA (Takac, Richtarik & Srebro, Algorithm 1)
and of CoCoA+ with local SDCA (Ma et al. 2015, Algorithm 1 with LocalSDCA).

All kernels are pure: plain arrays in, a status code and counters out, no
allocation inside the iterations (every scratch array is passed in).  Rows
are read through the one access path of :mod:`primaldual.rows`: row ``i``
holds ``data[indptr[i]:indptr[i+1]]`` at columns
``indices[k + iptr[i] - indptr[i]]``; column indices of a row are sorted
(CSR in canonical format, or ``arange(d)`` for dense rows), which the
column-chunked parallel update relies on.

Notation: ``v = (1/W) sum_i c_i alpha_i x_i`` is the dual image (``w = v /
lam``), ``curv[i]`` the ESO weight ``v_i`` of the paper (update (2)), and the
coordinate step is the shared :func:`dual_step` with
``s = c_i curv_i / (lam W)``.

Random subsets are drawn from a stream of uniforms ``u`` in [0, 1) produced by
the Python driver (so that the generator state is explicit): a subset of size
``tau`` of ``{0..m-1}`` is the first ``tau`` entries of a partial
Fisher-Yates shuffle of a scratch permutation that is at rest the identity;
the swaps are undone afterwards, so each draw costs O(tau) and consumes
exactly ``tau`` uniforms.

The three run kernels take a few structured arguments (NamedTuples, compiled
by Numba into structs): the rows (:class:`~primaldual.kernels.views.RowsView`;
``data``, ``indices``, ``indptr``, ``iptr``, ``y`` and the weights ``cw``), the
coordinate problem (:class:`~primaldual.kernels.views.StepSpec`; ``kind``,
``param``, ``lam`` and ``inv_W``, ``l1`` unused), the iterates
(:class:`DualState`), the batch or round constants (:class:`MiniBatch`,
:class:`RoundSpec`), work arrays (:class:`SerialWork`, :class:`ThreadWork`,
:class:`RoundWork`), a thread's team (:class:`ThreadTeam`) and the rounds'
output (:class:`RoundOut`); they return a :class:`RunResult`.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ..losses import dispatch as L
from ..losses._scalar import clip as _clip
from .threadsync import barrier

from .status import STATUS_ABORTED, STATUS_NONFINITE, STATUS_OK  # noqa: F401

MODE_MSDCA = 0
MODE_COCOA = 1


class DualState(NamedTuple):
    """The iterates, updated in place: ``alpha`` (n) and the dual image ``v`` (d)."""
    alpha: object
    v: object


class MiniBatch(NamedTuple):
    """mSDCA's constants: the ESO weights ``curv`` (n), the batch size ``b`` and
    the combination ``scale`` (1 for the safe and naive steps, ``1/b`` averaging)."""
    curv: object
    b: int
    scale: float


class SerialWork(NamedTuple):
    """Scratch of :func:`msdca_serial`: ``perm`` (n, the identity at rest),
    ``swaps``, ``batch`` (b, int), ``news``, ``coefs`` (b)."""
    perm: object
    swaps: object
    batch: object
    news: object
    coefs: object


class ThreadWork(NamedTuple):
    """A thread's private scratch in :func:`msdca_thread`: ``perm`` (n, its own
    copy, the identity at rest), ``swaps``, ``batch`` (b, int), ``coefs`` (b)."""
    perm: object
    swaps: object
    batch: object
    coefs: object


class ThreadTeam(NamedTuple):
    """Who a thread of :func:`msdca_thread` is and what the team shares:
    ``tid`` of ``nthreads``, the barrier ``flags``
    (:func:`~primaldual.kernels.threadsync.make_flags`), ``pdot`` (2, T, b),
    ``news`` (2, b), ``olds`` (2, b) and the row ``splits`` (:func:`row_splits`)."""
    tid: int
    nthreads: int
    flags: object
    pdot: object
    news: object
    olds: object
    splits: object


class RoundSpec(NamedTuple):
    """The constants of :func:`partition_rounds`: the partitions ``part_ptr``,
    the curvatures ``curv`` (n), ``mode`` (``MODE_MSDCA``/``MODE_COCOA``), ``m``
    (rows per partition and round), ``sigma_dot`` (sigma'), ``gamma`` and
    whether to add the changes to ``v`` (``apply_v``)."""
    part_ptr: object
    curv: object
    mode: int
    m: int
    sigma_dot: float
    gamma: float
    apply_v: bool


class RoundWork(NamedTuple):
    """Scratch of :func:`partition_rounds`: ``dalpha`` (n), ``dv`` (d), the marks
    ``colmark`` (d), ``rowmark`` (n), ``perm`` (n, the identity on entry, restored),
    ``swaps`` (m) and ``rows`` (the touched rows)."""
    dalpha: object
    dv: object
    colmark: object
    rowmark: object
    perm: object
    swaps: object
    rows: object


class RoundOut(NamedTuple):
    """The sparse ``Delta v_k`` of the last round: ``cols``/``vals[ptr[k]:ptr[k+1]]``."""
    cols: object
    vals: object
    ptr: object


class RunResult(NamedTuple):
    """Status code (:mod:`.status`), iterations (rounds) done, feature
    accesses, and the index of the row with a non-finite value (or -1)."""
    status: int
    done: int
    accesses: int
    bad: int


# ------------------------------------------------------------- sampling
@njit(cache=True, nogil=True)
def draw_subset(u, u_off, m, tau, perm, p_off, swaps, out, out_off):
    """Uniform random subset of size ``tau`` of ``{0..m-1}`` (no replacement).

    ``perm[p_off:p_off+m]`` must hold ``p_off..p_off+m-1`` (identity) and is
    restored on return; ``out[out_off:out_off+tau]`` receives the subset as
    global indices ``p_off + j``.  Uses ``u[u_off:u_off+tau]``.
    """
    for j in range(tau):
        q = j + int(u[u_off + j] * (m - j))
        if q >= m:                      # u rounds to 1 - 2^-53 * m: stay in range
            q = m - 1
        swaps[j] = q
        tmp = perm[p_off + j]
        perm[p_off + j] = perm[p_off + q]
        perm[p_off + q] = tmp
        out[out_off + j] = perm[p_off + j]
    for j in range(tau - 1, -1, -1):
        q = swaps[j]
        tmp = perm[p_off + j]
        perm[p_off + j] = perm[p_off + q]
        perm[p_off + q] = tmp


# ------------------------------------------------- one coordinate step
@njit(cache=True, nogil=True, inline="always")
def _partial_dot(data, indices, lo, hi, off, v):
    """``sum_k data[k] v[indices[k + off]]`` over ``lo <= k < hi``: a row's
    inner product with ``v``, or its part over one thread's column range."""
    dot = 0.0
    for k in range(lo, hi):
        dot += data[k] * v[indices[k + off]]
    return dot


@njit(cache=True, nogil=True)
def _row_dot(data, indices, indptr, iptr, i, v):
    return _partial_dot(data, indices, indptr[i], indptr[i + 1], iptr[i] - indptr[i], v)


@njit(cache=True, nogil=True)
def _first_at_least(indices, lo_k, hi_k, off, col):
    """Smallest k in [lo_k, hi_k) with indices[k + off] >= col (binary search)."""
    lo = lo_k
    hi = hi_k
    while lo < hi:
        mid = (lo + hi) >> 1
        if indices[mid + off] < col:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _batch_new(data, indices, indptr, iptr, y, cw, curv, kind, param, inv_lam, inv_W,
               alpha, v, i):
    """Update (2) for coordinate ``i`` with ``w = v / lam`` held fixed: the new
    value of ``alpha_i`` (NaN when a non-finite value appears)."""
    a = _row_dot(data, indices, indptr, iptr, i, v) * inv_lam
    s = cw[i] * curv[i] * inv_W * inv_lam
    new = L.dual_step(kind, param, alpha[i], y[i], a, s)
    if not (math.isfinite(new) and math.isfinite(a)):
        return np.nan
    return new


@njit(cache=True, nogil=True)
def _combine(old, new, gamma):
    """``old + gamma (new - old)``, exactly ``new`` for ``gamma = 1`` and kept
    between ``old`` and ``new`` (so inside a convex dual domain) despite rounding."""
    if gamma == 1.0:
        return new
    x = old + gamma * (new - old)
    return _clip(x, old, new) if old < new else _clip(x, new, old)


@njit(cache=True, nogil=True)
def _scatter_columns(data, indices, indptr, iptr, batch, coefs, b, col_lo, col_hi, v):
    """v[j] += coefs[q] x_{batch[q], j} for the columns j in [col_lo, col_hi),
    rows taken in batch order (so the sum for each j is formed in the same
    order whatever the column chunking)."""
    for q in range(b):
        c = coefs[q]
        if c == 0.0:
            continue
        i = batch[q]
        rs = indptr[i]
        re = indptr[i + 1]
        off = iptr[i] - rs
        k = _first_at_least(indices, rs, re, off, col_lo)
        while k < re:
            col = indices[k + off]
            if col >= col_hi:
                break
            v[col] += c * data[k]
            k += 1


@njit(cache=True, nogil=True)
def row_splits(indices, indptr, iptr, col_bounds, out):
    """``out[i, g - 1]`` = offset within row ``i`` of its first stored column
    ``>= col_bounds[g]``, for the inner bounds ``g = 1 .. G-1`` (rows sorted).

    Lets each thread of :func:`msdca_thread` find its column range of a row
    without a binary search per row and iteration.
    """
    n = indptr.shape[0] - 1
    G = col_bounds.shape[0] - 1
    for i in range(n):
        rs = indptr[i]
        re = indptr[i + 1]
        off = iptr[i] - rs
        for g in range(1, G):
            out[i, g - 1] = _first_at_least(indices, rs, re, off, col_bounds[g]) - rs


# ------------------------------------------- mSDCA, one shared memory
@njit(cache=True, nogil=True)
def _msdca_prepare(u, t, b, n, perm, swaps, batch):
    draw_subset(u, t * b, n, b, perm, 0, swaps, batch, 0)


@njit(cache=True, nogil=True)
def _msdca_finish(indptr, cw, inv_W, scale, alpha, batch, news, coefs, b):
    """alpha_i <- alpha_i + scale (new_i - alpha_i) (:func:`_combine`) and the
    scatter coefficients ``c_i (change of alpha_i) / W``; returns
    ``(-1 - q, 0)`` for a non-finite new value at batch position q."""
    acc = 0
    for q in range(b):
        if not math.isfinite(news[q]):
            return -1 - q, acc
    for q in range(b):
        i = batch[q]
        old = alpha[i]
        alpha[i] = _combine(old, news[q], scale)
        coefs[q] = cw[i] * (alpha[i] - old) * inv_W
        acc += indptr[i + 1] - indptr[i]
    return 0, acc


@njit(cache=True, nogil=True)
def msdca_serial(rows, spec, mb, state, u, n_iter, work):
    """``n_iter`` iterations of Algorithm 1 (mSDCA) with a uniform b-subset
    per iteration (standard sampling; b = 1 is serial SDCA), one thread.

    ``rows`` (:class:`~primaldual.kernels.views.RowsView`), ``spec``
    (:class:`~primaldual.kernels.views.StepSpec`), ``mb`` (:class:`MiniBatch`:
    ``curv``, ``b``, ``scale``), ``state`` (:class:`DualState`, updated in place),
    the uniforms ``u`` (``n_iter * b``), ``work`` (:class:`SerialWork`).

    Iteration t: draw ``S_t`` from ``u[t*b:(t+1)*b]``, compute every
    ``Delta_i`` of update (2) with ``w = v / lam`` fixed, then set
    ``alpha_i += scale Delta_i`` and ``v += sum_i (c_i scale Delta_i / W) x_i``
    (``scale`` is 1 for the safe and naive steps, ``1/b`` for averaging).
    Returns a :class:`RunResult` ``(status, iterations done, feature accesses,
    bad index)``.
    """
    data, indices, indptr, iptr = rows.data, rows.indices, rows.indptr, rows.iptr
    y, cw = rows.y, rows.cw
    kind, param, inv_lam, inv_W = spec.kind, spec.param, 1.0 / spec.lam, spec.inv_W
    curv, b, scale = mb.curv, mb.b, mb.scale
    alpha, v = state.alpha, state.v
    perm, swaps, batch, news, coefs = work.perm, work.swaps, work.batch, work.news, work.coefs
    n = alpha.shape[0]
    d = v.shape[0]
    acc = 0
    for t in range(n_iter):
        _msdca_prepare(u, t, b, n, perm, swaps, batch)
        for q in range(b):
            news[q] = _batch_new(data, indices, indptr, iptr, y, cw, curv, kind, param,
                                   inv_lam, inv_W, alpha, v, batch[q])
        st, a = _msdca_finish(indptr, cw, inv_W, scale, alpha, batch, news, coefs, b)
        if st < 0:
            return RunResult(STATUS_NONFINITE, t, acc, batch[-1 - st])
        acc += a
        _scatter_columns(data, indices, indptr, iptr, batch, coefs, b, 0, d, v)
    return RunResult(STATUS_OK, n_iter, acc, -1)


@njit(cache=True, nogil=True, inline="always")
def _share(indptr, splits, i, tid, nthreads):
    """Positions ``[lo, hi)`` of row ``i``'s entries in column range ``tid``."""
    rs = indptr[i]
    lo = rs if tid == 0 else rs + splits[i, tid - 1]
    hi = indptr[i + 1] if tid == nthreads - 1 else rs + splits[i, tid]
    return lo, hi


@njit(cache=True, nogil=True)
def msdca_thread(team, rows, spec, mb, state, u, n_iter, work):
    """Thread ``team.tid`` of ``team.nthreads`` running mSDCA (:func:`msdca_serial`)
    together, each owning one column range of ``v`` (``team.splits``).

    ``team`` (:class:`ThreadTeam`: ``tid``, ``nthreads``, ``flags`` and the
    shared ``pdot``, ``news``, ``olds``, ``splits``); ``rows``, ``spec``, ``mb``,
    ``state``, ``u``, ``n_iter`` as in :func:`msdca_serial`; ``work``
    (:class:`ThreadWork`, the thread's private ``perm``, ``swaps``, ``batch``,
    ``coefs``).

    Every ``v[j]`` is read and written by one thread only, so ``v`` never
    moves between cores' caches; only the ``b`` partial inner products per
    thread and the ``b`` new dual values cross.  The driver starts one OS
    thread per ``tid`` with the same ``u``, ``alpha``, ``v`` and the shared
    ``pdot`` (2, T, b), ``news`` (2, b), ``olds`` (2, b) and a fresh ``flags``
    (:func:`threadsync.make_flags`); ``perm``, ``swaps``, ``batch``, ``coefs``
    are private.  Iteration t (buffers indexed by ``t % 2``):

    1. every thread draws the same ``S_t`` from ``u`` (its own copy of the
       scratch permutation) and computes, for every i in ``S_t``, the part of
       ``<x_i, v>`` over its columns;
    2. barrier; each thread takes its share of the batch (Algorithm 1, line 6:
       "for i in S_t in parallel"), sums the partial products in thread order
       and computes update (2), recording the new and the old ``alpha_i``;
    3. barrier; if any new value is non-finite every thread returns the same
       status, with ``alpha`` and ``v`` as they were at the start of t;
       otherwise each forms all ``b`` scatter coefficients, writes ``alpha_i``
       for its share and adds the changes to its columns of ``v``, rows in
       batch order.

    The next iteration's first barrier keeps a fast thread from reading an
    ``alpha_i`` that a slow one has yet to write, and the double buffers keep
    it from overwriting products or new values still being read.  Results
    are deterministic for a given ``nthreads``; against the serial kernel
    only the association of each inner product's sum differs (rounding).
    Returns a :class:`RunResult` ``(status, iterations done, feature accesses
    of this thread's column range, bad index)``; status ``STATUS_ABORTED`` when
    the abort slot of ``flags`` was set.
    """
    tid, nthreads, flags = team.tid, team.nthreads, team.flags
    pdot, news, olds, splits = team.pdot, team.news, team.olds, team.splits
    data, indices, indptr, iptr = rows.data, rows.indices, rows.indptr, rows.iptr
    y, cw = rows.y, rows.cw
    kind, param, inv_lam, inv_W = spec.kind, spec.param, 1.0 / spec.lam, spec.inv_W
    curv, b, scale = mb.curv, mb.b, mb.scale
    alpha, v = state.alpha, state.v
    perm, swaps, batch, coefs = work.perm, work.swaps, work.batch, work.coefs
    n = alpha.shape[0]
    q_lo = (tid * b) // nthreads
    q_hi = ((tid + 1) * b) // nthreads
    acc = 0
    k = 0
    for t in range(n_iter):
        par = t & 1
        _msdca_prepare(u, t, b, n, perm, swaps, batch)
        for q in range(b):
            i = batch[q]
            lo, hi = _share(indptr, splits, i, tid, nthreads)
            acc += hi - lo
            pdot[par, tid, q] = _partial_dot(data, indices, lo, hi, iptr[i] - indptr[i], v)
        k += 1
        if not barrier(flags, tid, nthreads, k):
            return RunResult(STATUS_ABORTED, t, acc, -1)
        for q in range(q_lo, q_hi):
            i = batch[q]
            dot = 0.0
            for g in range(nthreads):
                dot += pdot[par, g, q]
            a = dot * inv_lam
            s = cw[i] * curv[i] * inv_W * inv_lam
            old = alpha[i]
            new = L.dual_step(kind, param, old, y[i], a, s)
            if not (math.isfinite(new) and math.isfinite(a)):
                new = np.nan
            olds[par, q] = old
            news[par, q] = new
        k += 1
        if not barrier(flags, tid, nthreads, k):
            return RunResult(STATUS_ABORTED, t, acc, -1)
        for q in range(b):
            if not math.isfinite(news[par, q]):
                return RunResult(STATUS_NONFINITE, t, acc, batch[q])
        for q in range(b):
            i = batch[q]
            old = olds[par, q]
            new = _combine(old, news[par, q], scale)
            coefs[q] = cw[i] * (new - old) * inv_W
            if q_lo <= q < q_hi:
                alpha[i] = new
        for q in range(b):
            c = coefs[q]
            if c == 0.0:
                continue
            i = batch[q]
            lo, hi = _share(indptr, splits, i, tid, nthreads)
            off = iptr[i] - indptr[i]
            for kk in range(lo, hi):
                v[indices[kk + off]] += c * data[kk]
    return RunResult(STATUS_OK, n_iter, acc, -1)


# ------------------------------------------------ partitioned rounds
@njit(cache=True, nogil=True, inline="always")
def _msdca_steps(rows, spec, curv, alpha, v, dalpha, rbuf, nrows):
    """Update (2) for the rows ``rbuf[:nrows]`` of a round of distributed mSDCA,
    into ``dalpha``; returns ``(bad row or -1, feature accesses)``."""
    data, indices, indptr, iptr = rows.data, rows.indices, rows.indptr, rows.iptr
    acc = 0
    for q in range(nrows):
        i = rbuf[q]
        nw = _batch_new(data, indices, indptr, iptr, rows.y, rows.cw, curv, spec.kind,
                        spec.param, 1.0 / spec.lam, spec.inv_W, alpha, v, i)
        if not math.isfinite(nw):
            return i, acc
        dalpha[i] = nw
        acc += indptr[i + 1] - indptr[i]
    return -1, acc


@njit(cache=True, nogil=True, inline="always")
def _scatter_dv(rows, i, coef, dv, colmark, out_cols, nout, ncols):
    """``dv += coef x_i``, listing each newly touched column in ``out_cols``
    after ``nout + ncols``; returns the new ``ncols``."""
    data, indices, indptr, iptr = rows.data, rows.indices, rows.indptr, rows.iptr
    rs = indptr[i]
    off = iptr[i] - rs
    for kk in range(rs, indptr[i + 1]):
        col = indices[kk + off]
        if colmark[col] == 0:
            colmark[col] = 1
            out_cols[nout + ncols] = col
            ncols += 1
        dv[col] += coef * data[kk]
    return ncols


@njit(cache=True, nogil=True, inline="always")
def _commit_partition(state, work, out, gamma, nrows, nout, ncols):
    """End of a partition's part of a round: ``alpha`` combined with the local
    values of its touched rows, its ``Delta v_k`` copied to ``out.vals``, and
    the work arrays cleared."""
    alpha, dalpha, rowmark, rbuf = state.alpha, work.dalpha, work.rowmark, work.rows
    dv, colmark, out_cols, out_vals = work.dv, work.colmark, out.cols, out.vals
    for q in range(nrows):
        i = rbuf[q]
        alpha[i] = _combine(alpha[i], dalpha[i], gamma)
        dalpha[i] = 0.0
        rowmark[i] = 0
    for q in range(ncols):
        col = out_cols[nout + q]
        out_vals[nout + q] = dv[col]
        dv[col] = 0.0
        colmark[col] = 0


@njit(cache=True, nogil=True)
def partition_rounds(rows, spec, rounds, state, u, n_rounds, work, out):
    """Rounds of distributed mSDCA or CoCoA+ over the partitions ``part_ptr``.

    ``rows`` (:class:`~.views.RowsView`), ``spec`` (:class:`~.views.StepSpec`),
    ``rounds`` (:class:`RoundSpec`), ``state``
    (:class:`DualState`, updated in place), the uniforms ``u`` (K, n_rounds * m),
    ``work`` (:class:`RoundWork`) and ``out`` (:class:`RoundOut`, below).

    In a round every partition ``k`` (rows ``part_ptr[k]..part_ptr[k+1]-1``)
    works against the same ``v`` and produces a local change ``Delta alpha_[k]``
    and ``Delta v_k = (1/W) sum_{i in P_k} c_i Delta alpha_i x_i``; then
    ``alpha_[k] += gamma Delta alpha_[k]`` and (``apply_v``)
    ``v += gamma sum_k Delta v_k``, added partition by partition.

    ``mode == MODE_MSDCA`` ((C,b)-distributed sampling, Algorithm 1): a uniform
    ``m``-subset of ``P_k`` (``m = b / C``), each ``Delta alpha_i`` from update (2)
    with ``w = v / lam`` fixed.  ``mode == MODE_COCOA`` (CoCoA+ LocalSDCA): ``m = H``
    steps, each on ``i`` uniform in ``P_k`` (with replacement), maximizing the
    local subproblem ``G_k^{sigma'}``: the margin is
    ``x_i . (v + sigma' Delta v_k) / lam`` (``sigma_dot = sigma'``) and the
    curvature ``s = c_i curv_i / (lam W)`` with ``curv = sigma' ||x_i||^2``.

    ``dalpha[i]`` holds the local value of a touched row; the new ``alpha_i``
    is :func:`_combine` of the old and local values (the local value for
    ``gamma = 1``, so it stays dual feasible).  Partition k uses ``u[k,
    r*m:(r+1)*m]`` in round r.  On return ``out_cols/out_vals[out_ptr[k]:
    out_ptr[k+1]]`` hold the sparse ``Delta v_k`` of the last round (columns in
    first-touch order).  ``perm`` must be the identity on entry (it is
    restored).  Returns a :class:`RunResult` ``(status, rounds, accesses, bad row)``.
    """
    data, indices, indptr, iptr = rows.data, rows.indices, rows.indptr, rows.iptr
    y, cw = rows.y, rows.cw
    kind, param, inv_lam, inv_W = spec.kind, spec.param, 1.0 / spec.lam, spec.inv_W
    part_ptr, curv, mode, m = rounds.part_ptr, rounds.curv, rounds.mode, rounds.m
    sigma_dot, gamma, apply_v = rounds.sigma_dot, rounds.gamma, rounds.apply_v
    alpha, v = state.alpha, state.v
    dalpha, dv, colmark, rowmark = work.dalpha, work.dv, work.colmark, work.rowmark
    perm, swaps, rbuf, out_cols, out_ptr = work.perm, work.swaps, work.rows, out.cols, out.ptr
    K = part_ptr.shape[0] - 1
    acc = 0
    for r in range(n_rounds):
        nout = 0
        for k in range(K):
            s0 = part_ptr[k]
            nk = part_ptr[k + 1] - s0
            out_ptr[k] = nout
            if nk == 0:
                continue
            nrows = 0
            ncols = 0
            if mode == MODE_MSDCA:
                nrows = m if m < nk else nk
                draw_subset(u[k], r * m, nk, nrows, perm, s0, swaps, rbuf, 0)
                bad, a_k = _msdca_steps(rows, spec, curv, alpha, v, dalpha, rbuf, nrows)
                acc += a_k
                if bad >= 0:
                    return RunResult(STATUS_NONFINITE, r, acc, bad)
                for q in range(nrows):
                    i = rbuf[q]
                    coef = cw[i] * (dalpha[i] - alpha[i]) * inv_W
                    ncols = _scatter_dv(rows, i, coef, dv, colmark, out_cols, nout, ncols)
            else:
                for h in range(m):
                    j = int(u[k, r * m + h] * nk)
                    if j >= nk:
                        j = nk - 1
                    i = s0 + j
                    rs = indptr[i]
                    re = indptr[i + 1]
                    off = iptr[i] - rs
                    dot_v = 0.0
                    dot_dv = 0.0
                    for kk in range(rs, re):
                        col = indices[kk + off]
                        dot_v += data[kk] * v[col]
                        dot_dv += data[kk] * dv[col]
                    a = (dot_v + sigma_dot * dot_dv) * inv_lam
                    cur = dalpha[i] if rowmark[i] else alpha[i]
                    s = cw[i] * curv[i] * inv_W * inv_lam
                    new = L.dual_step(kind, param, cur, y[i], a, s)
                    if not (math.isfinite(new) and math.isfinite(a)):
                        return RunResult(STATUS_NONFINITE, r, acc, i)
                    acc += re - rs
                    delta = new - cur
                    if rowmark[i] == 0:
                        rowmark[i] = 1
                        rbuf[nrows] = i
                        nrows += 1
                    dalpha[i] = new
                    coef = cw[i] * delta * inv_W
                    if coef != 0.0:
                        ncols = _scatter_dv(rows, i, coef, dv, colmark, out_cols, nout, ncols)
            _commit_partition(state, work, out, gamma, nrows, nout, ncols)
            nout += ncols
        out_ptr[K] = nout
        if apply_v:
            for q in range(nout):
                v[out_cols[q]] += gamma * out.vals[q]
    return RunResult(STATUS_OK, n_rounds, acc, -1)


# --------------------------------------------------------- ESO helpers
@njit(cache=True, nogil=True)
def column_counts(indices, indptr, iptr, d, out):
    """out[j] += number of rows with a stored entry in column j (omega_j)."""
    n = indptr.shape[0] - 1
    for i in range(n):
        rs = indptr[i]
        off = iptr[i] - rs
        for k in range(rs, indptr[i + 1]):
            out[indices[k + off]] += 1


@njit(cache=True, nogil=True)
def sparse_eso_weights(data, indices, indptr, iptr, omega, b, n, out):
    """out[i] = sum_j x_ij^2 (1 + (b-1)(omega_j - 1)/max(1, n-1)): the ESO of a
    uniform b-subset for f(alpha) = ||X^T alpha||^2 (Richtarik & Takac 2012,
    partially separable f; omega_j = rows using column j)."""
    rows = indptr.shape[0] - 1
    den = float(max(1, n - 1))
    for i in range(rows):
        rs = indptr[i]
        off = iptr[i] - rs
        s = 0.0
        for k in range(rs, indptr[i + 1]):
            x = np.float64(data[k])   # float() keeps float32 in Numba: x*x overflows
            s += x * x * (1.0 + (b - 1.0) * (omega[indices[k + off]] - 1.0) / den)
        out[i] = s


@njit(cache=True, nogil=True)
def omega_ratio_max(data, indices, indptr, iptr, omega):
    """max_i sum_j omega_j x_ij^2 / ||x_i||^2 over non-zero rows (Fercoq et al.
    2014, Lemma 5.4: an upper bound on lambda_max(D^-1/2 X X^T D^-1/2))."""
    rows = indptr.shape[0] - 1
    best = 0.0
    for i in range(rows):
        rs = indptr[i]
        off = iptr[i] - rs
        num = 0.0
        den = 0.0
        for k in range(rs, indptr[i + 1]):
            x = np.float64(data[k])   # float() keeps float32 in Numba: x*x overflows
            num += omega[indices[k + off]] * x * x
            den += x * x
        if den > 0.0 and num / den > best:
            best = num / den
    return best


@njit(cache=True, nogil=True)
def normalized_gram_matvec(data, indices, indptr, iptr, sqnorm, z, out):
    """out += X^T D^-1 X z with D = diag(||x_i||^2) (zero rows skipped): the
    d x d matrix with the same non-zero spectrum as D^-1/2 X X^T D^-1/2."""
    rows = indptr.shape[0] - 1
    for i in range(rows):
        if sqnorm[i] == 0.0:
            continue
        rs = indptr[i]
        off = iptr[i] - rs
        dot = 0.0
        for k in range(rs, indptr[i + 1]):
            dot += data[k] * z[indices[k + off]]
        c = dot / sqnorm[i]
        for k in range(rs, indptr[i + 1]):
            out[indices[k + off]] += c * data[k]
