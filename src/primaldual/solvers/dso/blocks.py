"""DSO's per-block maths: the block layout of the nonzeros, the schedule
``sigma``, a row partition, a column block of ``w`` and the update of one
block (Matsushima et al. 2014, Algorithm 1; see :mod:`primaldual.solvers.dso`
for the method).

This is the part both the serial solver (:mod:`.solver`) and the Dask ring
(:class:`.ring.DSOPartitionActor`, one actor per row partition) run; it
imports only :mod:`.kernels` and ``primaldual._util``.  The package
re-exports every public name here.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from ..._util import make_rng, seed_entropy, spawn_streams
from .kernels import (CHUNK, NO_COL_FACTOR, PA_STRIDE, PW_STRIDE, STEP_ADAGRAD, ColSide,
                           DSOSpec, Nonzeros, RowSide, chunks_kernel, fill_identity,
                           layout_block_counts, layout_counts, layout_fill, pack_block,
                           packed_kernel, permute_block, snapshot_products, unpack_block)

__all__ = ["BlockLayout", "RowPartition", "WBlock", "DSOParams", "build_layout", "sigma",
           "dso_block", "snapshot_partials", "shuffle_layout", "partition_streams", "row_bounds",
           "col_bounds"]


# ------------------------------------------------------------------ layout
def sigma(q, r, p):
    """Column block owned by partition ``q`` in inner iteration ``r`` (0-based)."""
    return (q + r) % p


def row_bounds(n, p):
    """Contiguous row parts of (almost) equal size: ``I_q = [b[q], b[q+1])``."""
    return np.array([(k * n) // p for k in range(p + 1)], dtype=np.int64)


def col_bounds(col_cnt, p):
    """Contiguous column parts with (almost) equal numbers of nonzeros.

    Bounds are placed at the quantiles ``k |Omega| / p`` of the cumulative column
    counts, then made strictly increasing so that every part is non-empty.
    """
    d = col_cnt.shape[0]
    cum = np.cumsum(col_cnt)
    total = cum[-1] if d else 0
    b = np.zeros(p + 1, dtype=np.int64)
    b[p] = d
    for k in range(1, p):
        b[k] = int(np.searchsorted(cum, k * total / p, side="left")) + 1
    for k in range(1, p):                      # strictly increasing, room left for the rest
        b[k] = min(max(b[k], b[k - 1] + 1), d - (p - k))
    return b


@dataclass
class BlockLayout:
    """The p x p partition of Omega, stored block by block (memory O(nnz)).

    Entries are sorted by (row part q, column block r) and, inside a block, by
    row.  ``rows`` are local to the row part (``i - row_bounds[q]``), ``cols``
    local to the column block (``j - col_bounds[r]``).  Block ``(q, r)`` is
    ``slice(block_ptr[q*p + r], block_ptr[q*p + r + 1])``; the blocks of row part
    ``q`` are contiguous, which is what worker ``q`` holds.
    """

    p: int
    n: int
    d: int
    row_bounds: np.ndarray
    col_bounds: np.ndarray
    block_ptr: np.ndarray
    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    row_cnt: np.ndarray      # |Omega_i| (float64)
    col_cnt: np.ndarray      # |Omega-bar_j| (float64)

    @property
    def nnz(self) -> int:
        return int(self.block_ptr[-1])

    def block(self, q, r):
        k = q * self.p + r
        return slice(int(self.block_ptr[k]), int(self.block_ptr[k + 1]))

    def block_sizes(self):
        return np.diff(self.block_ptr).reshape(self.p, self.p)


def build_layout(rows, p) -> BlockLayout:
    """Build the block partition from the row view of the data (dense or CSR).

    ``Omega`` holds the entries with ``x_ij != 0`` (explicit stored zeros are not
    part of it).  Row and column counts come from one compiled pass, the block
    order from a counting sort (``kernels.layout_fill``) that keeps CSR
    order inside each block: O(nnz) time, and no nnz-length temporary beyond
    the layout itself (16 bytes per nonzero with int32 indices).
    """
    n, d = rows.n, rows.d
    args = (rows.data, rows.indices, rows.indptr, rows.iptr)
    row_cnt = np.zeros(n)
    col_cnt = np.zeros(d)
    layout_counts(*args, row_cnt, col_cnt)
    rb = row_bounds(n, p)
    cb = col_bounds(col_cnt, p)
    col_block = (np.searchsorted(cb, np.arange(d), side="right") - 1).astype(np.int32)
    block_ptr = np.zeros(p * p + 1, dtype=np.int64)
    layout_block_counts(*args, p, rb, col_block, block_ptr[1:])
    nnz = int(block_ptr.sum())
    idx_t = np.int32 if max(n, d) < 2 ** 31 - 1 else np.int64
    out_rows = np.empty(nnz, dtype=idx_t)
    out_cols = np.empty(nnz, dtype=idx_t)
    out_vals = np.empty(nnz, dtype=np.float64)
    layout_fill(*args, p, rb, col_block, cb, block_ptr, out_rows, out_cols, out_vals)
    return BlockLayout(
        p=p, n=n, d=d, row_bounds=rb, col_bounds=cb, block_ptr=block_ptr,
        rows=out_rows, cols=out_cols, vals=out_vals, row_cnt=row_cnt, col_cnt=col_cnt)


# ------------------------------------------------------- worker-side pieces
@dataclass
class DSOParams:
    """Scalars every block update needs (picklable, sent once to workers)."""

    kind: int
    loss_param: float
    lam: float
    l1: float
    l1_prox: bool
    R: float
    step_mode: int
    eta0: float
    svrg: bool
    chunk_order: bool = True
    w_scale: float = 1.0     # AdaGrad's w steps are w_scale * eta0 / sqrt(G)
    a_scale: float = 1.0     # ... and its alpha steps a_scale * eta0 / sqrt(G)
    col_factor: np.ndarray = None   # w_j's steps also times col_factor[j] (None: 1)
    extrap: float = 0.0      # alpha's coupling at w_j + extrap (new w_j - w_j)

    def col_factors(self, col_start, d_block):
        """The w block's slice of ``col_factor`` (empty: 1 for every column)."""
        if self.col_factor is None:
            return NO_COL_FACTOR
        return self.col_factor[col_start:col_start + d_block]

    def spec(self, eta=0.0) -> DSOSpec:
        """The kernels' constants (:class:`~primaldual.solvers.dso.kernels.DSOSpec`) with
        the scalar step ``eta``."""
        return DSOSpec(self.kind, self.loss_param, self.lam, self.l1, self.l1_prox,
                       self.R, self.step_mode, float(eta), self.eta0, self.svrg,
                       self.w_scale, self.a_scale, self.extrap)


@dataclass
class RowPartition:
    """What partition (worker) ``q`` owns: its rows' nonzeros grouped by column
    block, its part of alpha and the per-row constants.  Never moves."""

    q: int
    p: int
    row_start: int
    block_ptr: np.ndarray    # (p+1,) local offsets of blocks (q, 0..p-1)
    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    perm: np.ndarray         # work buffer for the processing order
    y: np.ndarray
    cw: np.ndarray           # c_i / W
    row_cnt: np.ndarray
    a_lo: np.ndarray
    a_hi: np.ndarray
    alpha: np.ndarray
    Ga: np.ndarray           # AdaGrad accumulators (size 0 unless adagrad)
    a_snap: np.ndarray       # SVRG snapshot and full gradient (size 0 unless svrg)
    Fa: np.ndarray
    segs: np.ndarray = None  # work buffer of chunk indices (order="chunks")


@dataclass
class WBlock:
    """Column block ``r`` of w and what travels with it around the ring."""

    r: int
    col_start: int
    w: np.ndarray
    col_cnt: np.ndarray
    Gw: np.ndarray
    w_snap: np.ndarray
    Fw: np.ndarray


def dso_block(q, r, part: RowPartition, wblk: WBlock, rng: np.random.Generator,
              params: DSOParams, eta: float):
    """Inner iteration ``r`` of partition ``q``: process block ``(q, sigma_r(q))``.

    The order is drawn from ``rng`` (partition ``q``'s stream): with
    ``params.chunk_order`` (``order="chunks"``) the block's chunks of
    ``CHUNK`` stored nonzeros in a uniformly random order (the solver stores
    each block's nonzeros in a random order once, :func:`shuffle_layout`);
    otherwise a uniform random permutation of the block's nonzeros; the updates are
    :func:`~primaldual.solvers.dso.kernels.dso_block_kernel`.  Only ``part.alpha`` (and
    its accumulators) and ``wblk.w`` (and its accumulators) change.  Returns
    ``(status, n_processed)``.
    """
    s = sigma(q, r, part.p)
    if part.q != q or wblk.r != s:
        raise ValueError(f"partition {part.q} / w block {wblk.r} do not match the schedule "
                         f"(q={q}, r={r}, sigma_r(q)={s})")
    lo, hi = int(part.block_ptr[s]), int(part.block_ptr[s + 1])
    if params.chunk_order:
        k = -(-(hi - lo) // CHUNK)
        segs = part.segs
        if segs is None or segs.shape[0] < k:
            segs = part.segs = np.empty(k, dtype=np.int64)
        fill_identity(segs[:k])
        rng.shuffle(segs[:k])
    else:
        seg = part.perm[lo:hi]
        fill_identity(seg)
        rng.shuffle(seg)
    # the packed kernel: one record per row and per column (see .kernels)
    nq, dr = part.alpha.shape[0], wblk.w.shape[0]
    PA, PW = _packed_buffers(nq, dr)
    adagrad = params.step_mode == STEP_ADAGRAD
    spec = params.spec(eta)
    pack_block(RowSide(part.alpha, part.a_lo, part.a_hi, part.y, part.cw, part.row_cnt,
                       part.Ga, part.a_snap, part.Fa),
               ColSide(wblk.w, wblk.col_cnt, wblk.Gw, wblk.w_snap, wblk.Fw,
                       params.col_factors(wblk.col_start, dr)),
               adagrad, params.svrg, PA, PW, spec)
    nz = Nonzeros(part.rows[lo:hi], part.cols[lo:hi], part.vals[lo:hi])
    if params.chunk_order:
        status, pos = chunks_kernel(spec)(nz, segs, k, PA, PW, spec)
    else:
        status, pos = packed_kernel(spec)(nz, seg, 0, hi - lo, PA, PW, spec)
    unpack_block(PA, PW, part.alpha, part.Ga, wblk.w, wblk.Gw, adagrad)
    return status, pos


def snapshot_partials(part: RowPartition, col_bounds, wbar):
    """Partition ``part``'s share of the SVRG snapshot at ``(wbar, part.a_snap)``:
    ``(X_q wbar, sum_{i in I_q} (c_i/W) abar_i x_i)`` (lengths ``n_q`` and ``d``),
    summed in the partition's stored order.  The serial solver adds the ``v``
    parts in partition order, as the ring's client does, so a serial and a Dask
    run take bitwise the same snapshot: the first AdaGrad step of a coordinate
    whose snapshot gradient is zero in exact arithmetic has the sign of its
    rounding, so a different summation order changes the iterates."""
    margins = np.zeros(part.y.shape[0])
    v = np.zeros(int(col_bounds[-1]))
    snapshot_products(Nonzeros(part.rows, part.cols, part.vals), part.block_ptr,
                      np.asarray(col_bounds, dtype=np.int64), wbar, part.cw * part.a_snap,
                      margins, v)
    return margins, v


_BUFFERS = threading.local()


def _packed_buffers(nq, dr):
    """Work buffers of the packed kernel for ``nq`` rows and ``dr`` columns: the
    leading rows of one row buffer and one column buffer kept per thread, grown
    when a call needs more, so every epoch reuses them (the contents are rebuilt
    by every call)."""
    rows_buf = getattr(_BUFFERS, "rows", None)
    if rows_buf is None or rows_buf.shape[0] < nq:
        rows_buf = _BUFFERS.rows = _line_aligned((nq, PA_STRIDE))
    cols_buf = getattr(_BUFFERS, "cols", None)
    if cols_buf is None or cols_buf.shape[0] < dr:
        cols_buf = _BUFFERS.cols = _line_aligned((dr, PW_STRIDE))
    return rows_buf[:nq], cols_buf[:dr]


def _line_aligned(shape, line=64):
    """An uninitialized float64 C array whose rows start on cache-line boundaries
    (with a row length that is a multiple of the line): a column record is one
    line, a row record's fields two."""
    n = shape[0] * shape[1]
    raw = np.empty(n + line // 8)
    skip = (-raw.ctypes.data % line) // 8
    return raw[skip:skip + n].reshape(shape)


def shuffle_layout(layout, seed):
    """Store every block's nonzeros in a uniformly random order (in place),
    drawn from ``make_rng(seed)`` block by block."""
    rng = make_rng(seed)
    sizes = np.diff(layout.block_ptr)
    m = int(sizes.max()) if sizes.size else 0
    tmp_i = np.empty(m, dtype=layout.rows.dtype)
    tmp_f = np.empty(m)
    for b in range(sizes.size):
        lo, hi = int(layout.block_ptr[b]), int(layout.block_ptr[b + 1])
        if hi - lo > 1:
            perm = rng.permutation(hi - lo)
            permute_block(layout.rows[lo:hi], layout.cols[lo:hi], layout.vals[lo:hi], perm,
                          tmp_i, tmp_f)


def partition_streams(random_state, fallback_rng, p):
    """``p`` independent generators: ``SeedSequence(random_state).spawn(p)``.

    An int ``random_state`` seeds the SeedSequence directly (so the Dask version
    reproduces the streams from the same seed); otherwise an entropy value is
    drawn from ``fallback_rng`` (the solver's generator).
    """
    return spawn_streams(seed_entropy(random_state, fallback_rng), p)
