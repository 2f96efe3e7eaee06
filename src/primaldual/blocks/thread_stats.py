"""The data statistics SDCA's thread cost model predicts from
(:mod:`primaldual.blocks.sdca_threads`, docs/solvers.md "Threads"): the column
overlap, the mean row cosine, and the column counts of a sample of rows
(grouped by value for the sums over columns), and the distinct columns of
``S`` random rows; and the atomic additions one shared ``v`` takes
(:func:`auto_atomic`).  Each reads at most a few hundred thousand stored entries
but :func:`column_overlap`, which counts every column exactly.
"""
from __future__ import annotations

import numpy as np

__all__ = ["ATOMIC_OVERLAP", "ATOMIC_SHARE", "COSINE_SAMPLE", "SAMPLE_ENTRIES",
           "atomic_columns", "auto_atomic", "column_overlap", "distinct_columns",
           "grouped_column_counts", "mean_row_cosine", "sampled_column_counts"]


def _dot(a, b) -> float:
    """``a . b`` in numpy's own loop (``einsum``), not BLAS: OpenBLAS runs a
    long dot product on its threads, which then spin for about 0.1 s on the
    cores that a threaded pass, or the first-pass trial timing it, is about
    to use."""
    return float(np.einsum("i,i->", a, b))


def column_overlap(rows, omega=None) -> float:
    """``sum_j omega_j^2 / (n nnz)``, ``omega_j`` the rows with an entry in column
    j: the share of the rows that hold the column of a random stored entry.
    Concurrent steps write the same entry of ``v`` at about this rate.
    ``omega``: the counts (e.g. :func:`sampled_column_counts`); by default the
    exact ones, a pass over the indices."""
    omega = rows.column_counts() if omega is None else omega
    nnz = float(omega.sum())
    return _dot(omega, omega) / (rows.n * nnz) if nnz > 0 else 0.0


#: mean_row_cosine reads at most this many rows (evenly spaced)
COSINE_SAMPLE = 5_000


def mean_row_cosine(rows, sample=COSINE_SAMPLE, entries=None) -> float:
    """The mean cosine ``x_i . x_j / (||x_i|| ||x_j||)`` over pairs ``i != j`` of
    non-zero rows: ``(||s||^2 - m) / (m (m - 1))`` with ``s`` the sum of the
    ``m`` normalized rows, over at most ``sample`` evenly spaced rows (exact
    when ``n <= sample``).  A step that misses ``S`` updates of other threads
    has a margin error of about ``sqrt(S)`` times this (random signs).
    ``entries``: the sample's :func:`_sampled_entries`, if already read."""
    idx, owner, cols, vals = entries or _sampled_entries(rows, sample)
    sq = rows.sqnorm[idx]
    m = int(np.count_nonzero(sq > 0))
    if m < 2:
        return 0.0
    inv = np.divide(1.0, np.sqrt(sq), out=np.zeros_like(sq), where=sq > 0)
    s = np.bincount(cols, weights=vals * inv[owner], minlength=rows.d)
    return max(_dot(s, s) - m, 0.0) / (m * (m - 1.0))


#: the cost model's sample holds at most about this many stored entries (fewer
#: rows than COSINE_SAMPLE where rows are long: a few milliseconds)
SAMPLE_ENTRIES = 250_000


def _sampled_entries(rows, sample):
    """The stored entries of at most ``sample`` evenly spaced rows, and of
    fewer where rows are long (about ``SAMPLE_ENTRIES`` entries, at least 100
    rows; all rows when ``n`` is within that), read through the row view:
    ``(rows, row of each entry, its column, its value)``, gathered in O(their
    number)."""
    r = rows.nnz / max(rows.n, 1)
    sample = int(min(sample, max(100, SAMPLE_ENTRIES // max(r, 1.0))))
    idx = np.unique(np.linspace(0, rows.n - 1, min(rows.n, sample)).astype(np.int64))
    start, stop = rows.indptr[idx], rows.indptr[idx + 1]
    length = stop - start
    owner = np.repeat(np.arange(idx.shape[0]), length)
    offset = np.arange(owner.shape[0]) - np.repeat(np.cumsum(length) - length, length)
    pos = start[owner] + offset
    cols = rows.indices[rows.iptr[idx][owner] + offset]
    return idx, owner, cols, np.asarray(rows.data[pos], dtype=np.float64)


def _sampled_counts(rows, sample, entries):
    """The sampled rows' count of stored nonzeros per column, and the scale
    ``n / (rows sampled)`` that makes them estimates of ``omega``."""
    idx, _, cols, vals = entries or _sampled_entries(rows, sample)
    return (np.bincount(cols[vals != 0], minlength=rows.d),
            rows.n / max(idx.shape[0], 1))


def sampled_column_counts(rows, sample=COSINE_SAMPLE, entries=None) -> np.ndarray:
    """``omega_j`` (the rows with an entry in column ``j``) estimated from at
    most ``sample`` evenly spaced rows, scaled to ``n`` (exact when ``n <=
    sample`` and no row stores a zero): the cost model's input, a few
    milliseconds where the exact count is a pass over every stored entry."""
    counts, scale = _sampled_counts(rows, sample, entries)
    return counts.astype(np.float64) * scale


#: threads writing one shared v (sync_every=0), atomic="auto": every addition
#: atomic where the column overlap is at least ATOMIC_OVERLAP (covtype 0.86,
#: a9a 0.45); below it, for a loss with a box dual (the hinge family, whose
#: steps a lost addition misleads: docs/solvers.md, "Threads"), atomic on the
#: columns held by at least ATOMIC_SHARE of the rows, plain on the others;
#: plain everywhere for the other losses
ATOMIC_OVERLAP, ATOMIC_SHARE = 0.3, 0.005


def auto_atomic(rows, sync_every, box_dual):
    """``atomic="auto"``: True (every addition atomic), False (none) or the
    uint8 mask of the atomic columns (:func:`atomic_columns`), by the rule of
    ATOMIC_OVERLAP and ATOMIC_SHARE, from the sampled column counts (a few ms;
    the exact :func:`column_overlap` is a pass over the indices, 26 ms on the
    orthogonal text).  With copies (``sync_every > 0``) the threads write their
    own copies and the value does not matter: True."""
    if sync_every:
        return True
    omega = sampled_column_counts(rows)
    if column_overlap(rows, omega) >= ATOMIC_OVERLAP:
        return True
    return atomic_columns(rows, ATOMIC_SHARE, omega) if box_dual else False


def atomic_columns(rows, share, omega=None) -> np.ndarray:
    """The columns whose additions threads writing one shared ``v`` make
    atomic: a uint8 mask over the ``d`` columns (1: atomic), those held by at
    least ``share`` of the rows (by :func:`sampled_column_counts`).  Two
    threads lose an addition to column ``j`` at a rate of about ``omega_j^2``
    (both write it within the same few hundred nanoseconds), and a lost
    addition to a column many rows hold misleads many later steps, so the most
    held columns take the damaging losses with a minority of the writes
    (docs/solvers.md, "Threads").  ``omega``: the sampled counts, if at hand."""
    omega = sampled_column_counts(rows) if omega is None else omega
    return (omega >= max(share * rows.n, 1.0)).astype(np.uint8)


def grouped_column_counts(rows, sample=COSINE_SAMPLE, entries=None):
    """:func:`sampled_column_counts` grouped by value: ``(omega values,
    how many columns have each)``, the columns with no sampled entry left out.
    A sample of ``m`` rows has at most ``m`` distinct counts, so the cost
    model's sums run over those instead of ``d`` (a bincount, no sort)."""
    counts, scale = _sampled_counts(rows, sample, entries)
    multiplicity = np.bincount(counts)
    seen = np.flatnonzero(multiplicity[1:]) + 1
    return seen.astype(np.float64) * scale, multiplicity[seen].astype(np.float64)


def distinct_columns(omega, n, S, multiplicity=None) -> float:
    """Expected number of distinct columns among ``S`` rows drawn at random:
    ``sum_j 1 - (1 - omega_j / n)^S`` (``omega_j``: the rows holding column j),
    the columns a flush after ``S`` updates adds.  ``multiplicity[k]``, if
    given, is how many columns have the count ``omega[k]`` (the counts
    grouped: a sample's few hundred distinct counts instead of ``d``)."""
    keep = omega > 0
    p = omega[keep] / float(max(n, 1))
    terms = -np.expm1(S * np.log1p(-np.minimum(p, 1.0 - 1e-16)))
    if multiplicity is not None:
        terms = terms * multiplicity[keep]
    return float(np.sum(terms))
