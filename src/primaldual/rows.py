"""The one row-access path for dense and CSR data (validation: :mod:`primaldual.validation`).

Kernels read rows through four plain arrays ``(data, indices, indptr, iptr)``:
row ``i`` holds the values ``data[indptr[i]:indptr[i+1]]`` and their column
indices ``indices[iptr[i] + k - indptr[i]]``.  For CSR ``iptr is indptr``
(the same array, no copy); for a C-contiguous dense matrix ``data`` is the
flattened matrix (a view), ``indices = arange(d)`` and ``iptr`` is all zeros,
so a dense row is presented as a CSR-shaped view without copying the data
(the approach of lightning's row datasets).  Every kernel therefore has one
code path for both kinds of input.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .kernels.minibatch import column_counts, normalized_gram_matvec, omega_ratio_max
from .kernels.objective import row_sqnorms
from ._util.threads import run_ranges

__all__ = ["Rows", "as_rows"]


@dataclass
class Rows:
    """Row access for the kernels, plus the original matrix for BLAS products."""

    X: object                    # the validated matrix (ndarray or csr_matrix)
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    iptr: np.ndarray
    n: int
    d: int
    sqnorm: np.ndarray = field(repr=False)   # ||x_i||^2 (float64)
    row_nnz: np.ndarray = field(repr=False)  # stored entries per row (int64)
    is_sparse: bool = False

    @property
    def nnz(self) -> int:
        return int(self.indptr[-1])

    @property
    def dtype(self):
        return self.data.dtype

    def matvec(self, w):
        """X @ w as float64."""
        return np.asarray(self.X @ w, dtype=np.float64).ravel()

    def rmatvec(self, u):
        """X.T @ u as float64."""
        return np.asarray(self.X.T @ u, dtype=np.float64).ravel()

    @property
    def n_zero_rows(self) -> int:
        return int(np.count_nonzero(self.sqnorm == 0.0))

    # The three passes over the data that mini-batch SDCA's ESO needs
    # (Takac, Richtarik & Srebro, Section 4.3); a distributed partition block
    # answers the same calls for its rows.
    def gram_matvec(self, z):
        """X^T D^-1 X z with D = diag(||x_i||^2) (rows of zeros skipped)."""
        out = np.zeros(self.d)
        normalized_gram_matvec(self.data, self.indices, self.indptr, self.iptr,
                               self.sqnorm, np.ascontiguousarray(z, dtype=np.float64),
                               out)
        return out

    def column_counts(self):
        """omega_j: the number of rows with a stored entry in column j."""
        out = np.zeros(self.d)
        column_counts(self.indices, self.indptr, self.iptr, self.d, out)
        return out

    def omega_ratio(self, omega):
        """max_i of the omega-weighted row ratio used by the sigma^2 bound."""
        return float(omega_ratio_max(self.data, self.indices, self.indptr, self.iptr,
                                     np.ascontiguousarray(omega, dtype=np.float64)))


def _row_sqnorms(data, indptr, n_threads=1):
    """The rows' squared norms; on ranges of rows (:func:`run_ranges`, on up to
    ``n_threads`` threads on large data), the same sums, row by row, as on one."""
    n = indptr.shape[0] - 1
    sq = np.empty(n)
    interrupted, _ = run_ranges(n, int(indptr[-1]), n_threads,
                                lambda a, b: row_sqnorms(data, indptr[a:b + 1], sq[a:b]))
    if interrupted:
        raise KeyboardInterrupt
    return sq


def as_rows(X, n_threads=1) -> Rows:
    """Build the kernel row view of a validated X (see module docstring);
    ``n_threads``: the row norms' threads on large data."""
    n, d = X.shape
    if sp.issparse(X):
        indptr = X.indptr
        data = X.data
        sq = _row_sqnorms(data, indptr, n_threads)
        return Rows(X=X, data=data, indices=X.indices, indptr=indptr, iptr=indptr,
                    n=n, d=d, sqnorm=sq, row_nnz=np.diff(indptr).astype(np.int64),
                    is_sparse=True)
    data = X.reshape(-1)
    indices = np.arange(d, dtype=np.int64)
    indptr = np.arange(0, n * d + 1, d, dtype=np.int64) if d else np.zeros(n + 1, np.int64)
    iptr = np.zeros(n + 1, dtype=np.int64)
    # the kernel of the CSR path: the same sums in the same order, so that dense
    # and CSR data give identical iterates (tests/test_sdca.py)
    sq = _row_sqnorms(data, indptr, n_threads)
    return Rows(X=X, data=data, indices=indices, indptr=indptr, iptr=iptr, n=n, d=d,
                sqnorm=sq, row_nnz=np.full(n, d, dtype=np.int64), is_sparse=False)
