"""Sums over the rows of a ``(K, d)`` array of threads' partial vectors, on
column blocks: each thread adds a range of columns over every row, in row
order, so the result is the same bit for bit on any number of threads, and
no ``K d`` loop is left on the main thread (the threaded certificate's
partial images, the threaded SDCA's thread copies).
"""
from __future__ import annotations

import numpy as np

from . import threads as _threads

__all__ = ["fold_rows", "on_column_blocks", "sum_rows"]


def sum_rows(parts, out, n_threads=1):
    """``out[:] = parts[0] + parts[1] + ...`` (``parts`` of shape ``(K, d)``), the
    rows added in order, so the result is the same bit for bit on any number of
    threads (:func:`on_column_blocks`).  One thread adds ``K d`` values: with 64
    threads' partial images of a million columns, 64 M additions on the main
    thread at every check.  Returns whether a KeyboardInterrupt arrived (the
    sum is complete either way)."""
    def block(a, b):
        out[a:b] = parts[0, a:b]
        for j in range(1, parts.shape[0]):
            out[a:b] += parts[j, a:b]
    return on_column_blocks(parts.size, parts.shape[1], n_threads, block)


def fold_rows(parts, out, n_threads=1):
    """``out += parts[0] + parts[1] + ...`` in that order, then ``parts[:] = 0``:
    the threads' partial images folded into the shared one, on column blocks
    (:func:`on_column_blocks`).  Returns whether a KeyboardInterrupt arrived."""
    def block(a, b):
        for j in range(parts.shape[0]):
            out[a:b] += parts[j, a:b]
        parts[:, a:b] = 0.0
    return on_column_blocks(parts.size, parts.shape[1], n_threads, block)


def on_column_blocks(n_values, d, n_threads, block):
    """``block(a, b)`` over contiguous column ranges covering ``0..d``: one
    range on this thread, or one per thread on up to ``n_threads`` threads
    where each gets at least ``MIN_VALUES_PER_THREAD`` of the ``n_values``
    values the blocks read (numpy's loops release the GIL).  Every block runs;
    returns whether a KeyboardInterrupt arrived meanwhile
    (:func:`~primaldual._util.threads.run_threads`), for the caller to raise
    or report."""
    k = min(int(n_threads), int(n_values) // _threads.MIN_VALUES_PER_THREAD, d)
    if k <= 1:
        block(0, d)
        return False
    cuts = np.linspace(0, d, k + 1).round().astype(np.int64)
    return _threads.run_threads(lambda t, stop: block(int(cuts[t]), int(cuts[t + 1])), k)[1]
