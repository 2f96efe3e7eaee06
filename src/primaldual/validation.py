"""Input validation: X, y and sample weights checked once, at the public entry points.

:func:`check_X` (dense or CSR, finite, real, within the memory cap on the
number of features; sparse index arrays checked by :func:`check_sparse_structure`
before anything reads them), :func:`check_Xy`, :func:`check_sample_weight` and
:func:`check_binary_labels`.  The validated matrix is handed to
:func:`primaldual.rows.as_rows`, the one row-access path of the kernels.
"""
from __future__ import annotations

import contextlib
import math
import os
import threading
import warnings

import numpy as np
import scipy.sparse as sp

from ._util.threads import run_ranges

__all__ = ["check_X", "check_Xy", "check_sample_weight", "check_binary_labels",
           "check_sparse_structure", "warn_extreme_rows", "raise_nonfinite", "finite_checked"]

#: id -> the matrix a front end has already checked for finite values (while
#: :func:`finite_checked` runs): check_X does not scan it again
_FINITE = {}
_FINITE_LOCK = threading.Lock()


@contextlib.contextmanager
def finite_checked(X):
    """While the block runs, :func:`check_X` given this very object (``is``, not
    an equal copy) skips its scan for NaN and inf: the caller (an estimator,
    after scikit-learn's ``check_array``) has made it and checked it, and no
    code of the user's runs in between.  Every other check still runs."""
    key = id(X)
    with _FINITE_LOCK:
        count = _FINITE[key][1] if key in _FINITE else 0
        _FINITE[key] = (X, count + 1)
    try:
        yield X
    finally:
        with _FINITE_LOCK:
            count = _FINITE[key][1] - 1
            if count:
                _FINITE[key] = (X, count)
            else:
                del _FINITE[key]


def _finite_known(X) -> bool:
    entry = _FINITE.get(id(X))
    return entry is not None and entry[0] is X


def _all_finite(arr, n_threads=1) -> bool:
    """``np.isfinite(arr).all()``, on up to ``n_threads`` threads where each
    gets at least ``MIN_VALUES_PER_THREAD`` values (numpy's loops release the GIL)."""
    flat = arr.ravel(order="K")
    interrupted, found = run_ranges(flat.size, flat.size, n_threads,
                                    lambda a, b: bool(np.isfinite(flat[a:b]).all()))
    if interrupted:
        raise KeyboardInterrupt
    return all(found)


def _check_finite(arr, name, n_threads=1):
    if arr.size and not _all_finite(arr, n_threads):
        bad = np.flatnonzero(~np.isfinite(arr.ravel()))
        kind = "NaN" if np.isnan(arr.ravel()[bad[0]]) else "inf"
        raise ValueError(f"{name} contains {kind} values ({bad.size} non-finite entries); "
                         f"remove or impute them before fitting")


#: a fit refuses sparse input whose coefficient vector (d float64 values) would
#: take more than this fraction of the machine's physical memory; the solvers
#: keep several d-vectors (w, v, and up to four per coordinate for SPDC)
MAX_COEF_MEMORY_FRACTION = 1.0 / 8.0


def _physical_memory():
    """Bytes of physical memory, or None where the OS does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def _check_n_features(X, name):
    """Refuse a column count whose d-vectors cannot fit in memory (a LIBSVM file
    with one index near 2^31 declares two billion features)."""
    d = X.shape[1]
    mem = _physical_memory()
    env = os.environ.get("PRIMALDUAL_MAX_FEATURES")
    limit = int(env) if env else (int(mem * MAX_COEF_MEMORY_FRACTION) // 8 if mem else None)
    if limit is None or d <= limit:
        return
    used = int(np.unique(X.indices).size) if X.nnz else 0
    source = ("set by PRIMALDUAL_MAX_FEATURES" if env else
              f"1/8 of this machine's {mem / 1e9:.0f} GB of memory")
    raise MemoryError(
        f"{name} has {d:,} columns but only {used:,} of them hold a nonzero; one "
        f"float64 coefficient vector would take {d * 8 / 1e9:.1f} GB, over the limit of "
        f"{limit:,} columns ({source}). Drop the empty columns "
        f"(X[:, X.getnnz(axis=0) > 0]), hash the features into fewer columns, or raise "
        f"PRIMALDUAL_MAX_FEATURES if the memory is really there.")


def _first(mask):
    return int(np.flatnonzero(mask)[0])


def _out_of_range(indices, size) -> bool:
    """Some entry of the integer array ``indices`` is outside ``[0, size)``.  One
    pass where the signed indices, read as unsigned, put every negative one at
    ``2^(bits - 1)`` or more, past ``size``; else their min and max."""
    if not indices.size:
        return False
    if indices.dtype.kind == "i" and size <= 2 ** (8 * indices.itemsize - 1):
        return int(indices.view(f"u{indices.itemsize}").max()) >= size
    return int(indices.min()) < 0 or int(indices.max()) >= size


def _check_compressed(X, name):
    """The structure of a CSR (or CSC) matrix, in O(nnz) time and O(n) memory,
    before anything reads it: scipy accepts index arrays it never checked
    (``csr_matrix((data, indices, indptr))`` or assigning ``X.indices``), and a
    kernel reading a column index outside ``[0, d)`` or a decreasing ``indptr``
    reads or writes outside its arrays."""
    major, minor = ("row", "column") if X.format == "csr" else ("column", "row")
    n_major, n_minor = X.shape if X.format == "csr" else X.shape[::-1]
    indptr, indices, data = X.indptr, X.indices, X.data
    for arr, what in ((indptr, "indptr"), (indices, "indices")):
        if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"{name} is a malformed {X.format.upper()} matrix: {what} must be "
                             f"a 1-D integer array, got dtype={arr.dtype}, shape {arr.shape}")
    if data.ndim != 1:
        raise ValueError(f"{name} is a malformed {X.format.upper()} matrix: data must be 1-D, "
                         f"got shape {data.shape}")
    bad = f"{name} is a malformed {X.format.upper()} matrix of shape {X.shape}"
    if indptr.shape[0] != n_major + 1:
        raise ValueError(f"{bad}: indptr has {indptr.shape[0]} entries, expected "
                         f"{n_major} {major}s + 1 = {n_major + 1}")
    if indptr[0] != 0:
        raise ValueError(f"{bad}: indptr[0] is {int(indptr[0])}, must be 0")
    steps = np.diff(indptr)
    if (steps < 0).any():
        i = _first(steps < 0)
        raise ValueError(f"{bad}: indptr decreases at {major} {i} (indptr[{i}] = "
                         f"{int(indptr[i])} > indptr[{i + 1}] = {int(indptr[i + 1])}); it "
                         f"must be non-decreasing")
    if not int(indptr[-1]) == indices.shape[0] == data.shape[0]:
        raise ValueError(f"{bad}: indptr[-1] = {int(indptr[-1])} stored entries, but "
                         f"indices has {indices.shape[0]} and data {data.shape[0]}; the "
                         f"three must agree")
    if _out_of_range(indices, n_minor):
        k = _first((indices < 0) | (indices >= n_minor))
        i = int(np.searchsorted(indptr, k, side="right")) - 1
        raise ValueError(f"{bad}: {major} {i} has {minor} index {int(indices[k])}, outside "
                         f"[0, {n_minor}) (stored entry {k}); every {minor} index must be "
                         f"in range (negative indices are not allowed)")


def _check_coo(X, name):
    for arr, what, size in ((X.row, "row", X.shape[0]), (X.col, "column", X.shape[1])):
        if arr.size and (int(arr.min()) < 0 or int(arr.max()) >= size):
            k = _first((arr < 0) | (arr >= size))
            raise ValueError(f"{name} is a malformed COO matrix of shape {X.shape}: entry "
                             f"{k} has {what} index {int(arr[k])}, outside [0, {size})")


def check_sparse_structure(X, name="X"):
    """Refuse a sparse matrix whose index arrays are inconsistent (see
    :func:`_check_compressed`); CSR, CSC and COO are checked, the other formats
    are built by scipy's own constructors, which check them."""
    if X.format in ("csr", "csc"):
        _check_compressed(X, name)
    elif X.format == "coo":
        _check_coo(X, name)


def check_X(X, name="X", n_threads=1):
    """Validate X without densifying or copying more than needed.

    Dense input is kept as is when already C-contiguous float32/float64;
    sparse input is converted to CSR (CSR input is not copied unless it has
    duplicate entries, which are summed on a copy so that row norms are exact).
    ``n_threads``: the finite check's threads on large data (:func:`_all_finite`).
    """
    if np.iscomplexobj(X):
        raise ValueError(f"{name} has a complex dtype ({X.dtype}); the models are real: "
                         f"pass the real part (X.real) or the magnitudes (abs(X)) "
                         f"explicitly")
    if sp.issparse(X):
        if X.ndim != 2:
            raise ValueError(f"{name} must be 2-D, got shape {X.shape}")
        check_sparse_structure(X, name)
        X = X.tocsr() if X.format != "csr" else X
        if X.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
        if not X.has_canonical_format:
            # sum duplicate entries (on a copy: the caller's matrix is untouched)
            X = X.copy()
            X.sum_duplicates()
        if not _finite_known(X):            # a sum of duplicates may overflow
            _check_finite(X.data, name, n_threads)
        _check_n_features(X, name)
        if not isinstance(X, sp.csr_matrix):
            X = sp.csr_matrix(X)
        return X
    X = np.asarray(X)
    if X.dtype == object:
        raise ValueError(f"{name} must be numeric, got dtype=object")
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_samples, n_features), got "
                         f"shape {X.shape}; reshape a single sample with X.reshape(1, -1)")
    if X.dtype not in (np.float32, np.float64):
        if not (np.issubdtype(X.dtype, np.number) or X.dtype == np.bool_):
            raise ValueError(f"{name} must be numeric, got dtype={X.dtype}")
        X = X.astype(np.float64)
    elif _finite_known(X):
        return np.ascontiguousarray(X)
    _check_finite(X, name, n_threads)
    return np.ascontiguousarray(X)


def check_Xy(X, y, *, name_X="X", name_y="y", n_threads=1):
    """Validate X and y together: shapes, emptiness, finiteness."""
    X = check_X(X, name_X, n_threads)
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        raise ValueError(f"{name_y} must be 1-D, got shape {y.shape}; use y.ravel()")
    if y.ndim != 1:
        raise ValueError(f"{name_y} must be 1-D, got shape {y.shape}")
    n, d = X.shape
    if n == 0:
        raise ValueError(f"{name_X} is empty: it has 0 samples; at least 1 is required")
    if d == 0:
        raise ValueError(f"{name_X} has 0 features; at least 1 is required")
    if y.shape[0] != n:
        raise ValueError(f"{name_X} and {name_y} have mismatched shapes: {name_X} has {n} "
                         f"rows but {name_y} has {y.shape[0]} entries; pass one label per row")
    if not np.issubdtype(y.dtype, np.number) and y.dtype != np.bool_:
        raise ValueError(f"{name_y} must be numeric, got dtype={y.dtype}")
    if np.iscomplexobj(y):
        raise ValueError(f"{name_y} has a complex dtype ({y.dtype}); labels and targets "
                         f"must be real")
    y = np.ascontiguousarray(y, dtype=np.float64)
    _check_finite(y, name_y)
    return X, y


def check_binary_labels(y, loss_name):
    """Classification losses need y in {-1, +1}; nothing is remapped silently."""
    bad = (y != 1.0) & (y != -1.0)
    if bad.any():
        vals = np.unique(y[bad])[:5]
        raise ValueError(
            f"loss={loss_name!r} is a binary classification loss and needs labels y in "
            f"{{-1, +1}}; found other values such as {vals.tolist()}. Map your labels "
            f"to -1/+1 (LinearClassifier does this for you, one-vs-rest for more classes)")


def check_sample_weight(sample_weight, n):
    """Return float64 weights c_i > 0 (ones when None)."""
    if sample_weight is None:
        return np.ones(n)
    c = np.asarray(sample_weight, dtype=np.float64)
    if c.ndim == 0:
        c = np.full(n, float(c))
    if c.shape != (n,):
        raise ValueError(f"sample_weight has shape {c.shape} but X has {n} rows; "
                         f"pass one weight per sample")
    _check_finite(c, "sample_weight")
    if (c < 0).any():
        raise ValueError(f"sample_weight has {int((c < 0).sum())} negative values; "
                         f"weights must be > 0: pass positive weights (drop the rows "
                         f"you want to ignore)")
    if (c == 0).any():
        raise ValueError(f"sample_weight has {int((c == 0).sum())} zero weights; weights "
                         f"must be > 0 (drop those rows instead)")
    total = float(c.sum())
    if not (math.isfinite(total) and math.isfinite(1.0 / total)):
        raise ValueError(f"sample_weight sums to {total:.3g}, beyond double precision "
                         f"(its reciprocal, which scales every loss term, is not finite); "
                         f"only the ratios of the weights matter: multiply them all by "
                         f"one constant (e.g. divide by their maximum)")
    return c


def warn_extreme_rows(sqnorm, name="X"):
    """Warn when a squared row norm overflows double precision: the step of
    every coordinate method is then zero and the iterates stay at 0 (finite
    entries up to 1e154 are fine)."""
    bad = ~np.isfinite(sqnorm)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        warnings.warn(f"{name} has {int(bad.sum())} row(s) whose squared norm overflows "
                      f"double precision (row {i} first); the solvers cannot take steps "
                      f"along them and the fit will not move from 0. Scale the rows "
                      f"(--normalize, or divide X by its largest entry)",
                      RuntimeWarning, stacklevel=3)


def raise_nonfinite(lam, row):
    """The error of a dual step that produced a non-finite value at sample
    ``row`` (a kernel's ``STATUS_NONFINITE``; raised by the drivers of SDCA,
    mini-batch SDCA and the partition engines)."""
    raise FloatingPointError(
        f"non-finite value in the dual step at sample {int(row)} (lam={lam!r}); the data "
        f"or lam is too extreme for double precision: scale the rows (e.g. --normalize) "
        f"or increase lam")
