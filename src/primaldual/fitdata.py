"""The training data of a linear model, as every front end builds it.

The estimators, the command line, the Dask estimator and the model files share
these helpers; they sit in the model layer so that none of those front ends
imports another for them:

* :func:`add_intercept_column`: ``[X, intercept_scaling]`` (CSR stays CSR);
* :func:`combined_weights`: ``c_i = sample_weight_i * class_weight[y_i]``;
* :func:`spawn_seeds`: one integer seed per subproblem from ``random_state``;
* :func:`label_array`: class labels as a plain numeric or unicode array (what a
  model file stores, without pickle).

SciPy and scikit-learn are imported by the functions that use them, so that a
command line that only reads a model pays for neither.
"""
from __future__ import annotations

import numpy as np

from ._util import seed_entropy
from ._util import spawn_seeds as _spawn_seeds
from ._util.lazy import lazy_attr

__all__ = ["add_intercept_column", "combined_weights", "label_array", "spawn_seeds"]


def add_intercept_column(X, intercept_scaling):
    """``[X, intercept_scaling * 1]``: CSR stays CSR (no densifying)."""
    import scipy.sparse as sp

    n = X.shape[0]
    if sp.issparse(X) and X.format == "csr":
        return _csr_with_column(X, intercept_scaling)
    if sp.issparse(X):
        col = sp.csr_matrix(np.full((n, 1), intercept_scaling, dtype=X.dtype))
        return sp.hstack([X, col], format="csr")
    return np.hstack([X, np.full((n, 1), intercept_scaling, dtype=X.dtype)])


def _csr_with_column(X, value):
    """``sp.hstack([X, value * ones((n, 1))], format="csr")`` for CSR ``X``, built
    directly: each row's entries, then the new one (scipy's general stacking
    costs a millisecond on a small matrix).  Float data by
    :func:`~primaldual.kernels.csr.append_column` (one ordered pass; a
    quarter to a half of the time of the masked copies below), after ``X``'s
    index arrays are checked (:func:`~primaldual.validation.check_sparse_structure`:
    the kernel trusts them, and a column index of ``d`` would meet the new
    column's).  32-bit indices where they fit, as scipy's."""
    import scipy.sparse as sp

    n, d = X.shape
    fast = X.dtype in (np.float32, np.float64)
    if fast:
        lazy_attr("primaldual.validation", "check_sparse_structure")(X)
    nnz = int(X.indptr[-1])
    big = max(nnz + n, d + 1) > np.iinfo(np.int32).max
    itype = np.int64 if big else np.int32
    indptr = X.indptr.astype(itype) + np.arange(n + 1, dtype=itype)
    data = np.empty(nnz + n, dtype=X.dtype)
    indices = np.empty(nnz + n, dtype=itype)
    if fast:
        lazy_attr("primaldual.kernels.csr", "append_column")(
            X.data, X.indices, X.indptr, X.dtype.type(value), d, data, indices, indptr)
    else:
        last = indptr[1:] - 1                   # where each row's new entry goes
        old = np.ones(nnz + n, dtype=bool)
        old[last] = False
        data[old], indices[old] = X.data[:nnz], X.indices[:nnz]
        data[last], indices[last] = value, d
    return sp.csr_matrix((data, indices, indptr), shape=(n, d + 1))


def spawn_seeds(random_state, k):
    """``k`` independent integer seeds from one ``random_state``.

    The children of ``SeedSequence(entropy)`` are used, so the seed of each
    one-vs-rest problem depends only on ``random_state`` and the class
    index, never on thread scheduling.
    """
    return _spawn_seeds(seed_entropy(random_state), k)


def combined_weights(y, classes, sample_weight, class_weight):
    """``c_i = sample_weight_i * class_weight[y_i]`` (``classes`` sorted, as np.unique).

    "balanced" is ``W / (K W_k)`` computed over the samples of positive
    ``sample_weight`` (``W_k`` their weighted count in class k, K the number
    of classes among them), so that zero weights mean "absent".
    """
    if class_weight is None:
        return sample_weight
    from sklearn.utils.class_weight import compute_class_weight

    if isinstance(class_weight, str) and class_weight == "balanced":
        pos = sample_weight > 0
        present = np.unique(y[pos])
        cw = np.zeros(classes.size)
        cw[np.searchsorted(classes, present)] = compute_class_weight(
            "balanced", classes=present, y=y[pos], sample_weight=sample_weight[pos])
    else:
        cw = compute_class_weight(class_weight, classes=classes, y=y)
    cw = np.asarray(cw, dtype=np.float64)
    if np.any(cw < 0) or not np.all(np.isfinite(cw)):
        raise ValueError(f"class_weight values must be finite and >= 0, got "
                         f"{cw.tolist()} for classes {classes.tolist()}")
    return sample_weight * cw[np.searchsorted(classes, y)]


def label_array(classes, where="classes"):
    """Class labels as a 1-D float64 array (numbers, booleans) or unicode array (strings).

    These are the labels ``fit`` accepts: numbers, or strings (also as an
    ``object`` array of ``str``, as pandas gives them).  Anything else (mixed
    kinds, arbitrary Python objects) raises a ValueError naming the kinds.
    """
    arr = np.asarray(classes).ravel()
    if arr.dtype == np.bool_ or np.issubdtype(arr.dtype, np.number):
        return arr.astype(np.float64)
    if arr.dtype.kind == "U":
        return arr
    if arr.dtype.kind == "S":
        return arr.astype(str)
    if arr.dtype == object and all(isinstance(v, str) for v in arr):
        return arr.astype(str)
    kinds = sorted({type(v).__name__ for v in arr})
    raise ValueError(f"{where}: labels must be all numbers or all strings to be stored "
                     f"without pickle; got {', '.join(kinds)} "
                     f"({[v.item() if isinstance(v, np.generic) else v for v in arr[:3]]})")
