"""The front ends' training data (primaldual.fitdata): the intercept column."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from primaldual import LinearClassifier
from primaldual.fitdata import add_intercept_column
from primaldual.validation import check_sparse_structure


def _unsorted_csr(dtype, itype):
    """A CSR matrix with an empty row, unsorted indices within a row, and the
    given data and index dtypes."""
    data = np.array([1.5, -2.0, 3.25, 4.0, 0.5], dtype=dtype)
    indices = np.array([3, 0, 1, 2, 0], dtype=itype)
    indptr = np.array([0, 2, 2, 4, 5], dtype=itype)
    X = sp.csr_matrix((4, 5), dtype=dtype)
    X.data, X.indices, X.indptr = data, indices, indptr
    return X


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
@pytest.mark.parametrize("itype", [np.int32, np.int64])
def test_intercept_column_appends_one_entry_per_row(dtype, itype):
    """Each row's stored entries in their order, then ``(d, value)`` in X's
    dtype (written out row by row here), for the compiled path (float data)
    and the other (int); the same matrix as scipy's hstack."""
    X = _unsorted_csr(dtype, itype)
    got = add_intercept_column(X, 2.5)
    data, indices, indptr = [], [], [0]
    for i in range(4):
        lo, hi = X.indptr[i], X.indptr[i + 1]
        data += list(X.data[lo:hi]) + [dtype(2.5)]
        indices += list(X.indices[lo:hi]) + [5]
        indptr.append(len(data))
    assert got.shape == (4, 6) and got.dtype == X.dtype
    np.testing.assert_array_equal(got.indptr, indptr)
    np.testing.assert_array_equal(got.indices, indices)
    np.testing.assert_array_equal(got.data, np.array(data, dtype=dtype))
    ref = sp.hstack([X, np.full((4, 1), 2.5).astype(dtype)], format="csr")
    assert (got != ref).nnz == 0


@pytest.mark.parametrize("bad", [5, 7, -1])
def test_intercept_column_refuses_an_index_outside_x(bad):
    """A stored column index outside [0, d) is refused before the column is
    added: an index d would otherwise become a second entry in the new column
    (summed into it by the duplicate handling, silently)."""
    X = _unsorted_csr(np.float64, np.int32)
    X.indices[1] = bad
    with pytest.raises(ValueError, match="malformed CSR .* column index"):
        add_intercept_column(X, 1.0)
    y = np.array([0, 1, 0, 1])
    with pytest.raises(ValueError, match="malformed CSR"):
        LinearClassifier(penalty="l1", C=1.0).fit(X, y)


def test_negative_index_found_beyond_the_signed_range():
    """A negative 32-bit index in a matrix of more than 2^32 columns: read as
    unsigned it would be inside the columns, so the one-pass check of the
    index range must not be used there."""
    X = sp.csr_matrix((2, 3))
    X._shape = (2, 2 ** 32 + 5)
    X.data = np.array([1.0])
    X.indices = np.array([-1], dtype=np.int32)
    X.indptr = np.array([0, 1, 1], dtype=np.int32)
    with pytest.raises(ValueError, match="column index -1"):
        check_sparse_structure(X)
