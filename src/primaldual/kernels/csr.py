"""Compiled helpers that build CSR matrices for the front ends' training data
(:mod:`primaldual.fitdata`)."""
from __future__ import annotations

from numba import njit

__all__ = ["append_column"]


@njit(cache=True, nogil=True)
def append_column(data, indices, indptr, value, col, out_data, out_idx, out_ptr):
    """Row ``i`` of the CSR rows (``data``, ``indices``, ``indptr``; a structure
    checked by the caller) followed by one entry ``value`` in column ``col``,
    into ``out_*`` (``out_ptr`` given: ``indptr + arange(n + 1)``).  Reads and
    writes every entry once, in order."""
    n = indptr.shape[0] - 1
    for i in range(n):
        q = out_ptr[i]
        for p in range(indptr[i], indptr[i + 1]):
            out_data[q] = data[p]
            out_idx[q] = indices[p]
            q += 1
        out_data[q] = value
        out_idx[q] = col
