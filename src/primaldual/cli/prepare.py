"""Read and check what a ``fit``, ``train`` or ``cv`` request trains on.

:func:`read_training_data` reads TRAIN (and TEST) once (:mod:`.libsvm`),
scales rows (``--normalize``) or columns (``--scale``) and returns
:class:`TrainingData`.  The helpers below give the classes, the sample
weights of each problem (class weights as the estimators apply them, or as
LIBLINEAR's ``-wi`` does), lam from ``-c C``, and the bias column.  Nothing
here trains.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from .libsvm import read_files
from .output import format_label, note


@dataclass(frozen=True)
class TrainingData:
    """The training (and test) rows and raw labels of a request."""

    X: Any                        # dense array or CSR, scaled as asked
    y_raw: np.ndarray
    Xt: Any                       # None without --test
    yt_raw: np.ndarray | None
    index_base: int               # the feature index base of the training file
    nnz: int                      # stored values of the training file
    scale: Any = None             # (column_scale, column_offset) with --scale

    @property
    def storage(self) -> str:
        """``dense`` or ``sparse`` (CSR): how the training file was read."""
        return "dense" if isinstance(self.X, np.ndarray) else "sparse"


def read_training_data(req) -> TrainingData:
    """TRAIN, and TEST cut to TRAIN's features (as LIBLINEAR reads a test file);
    rows scaled with --normalize, columns with --scale."""
    (train,) = read_files([req.train])
    X = train.matrix()
    Xt = yt = None
    if getattr(req, "test", None):
        (test,) = read_files([req.test], base=train.base, n_features=train.n_features)
        if test.dropped:
            note(req, f"{req.test} uses features beyond the last one of {req.train} "
                      f"({train.n_features}); they are ignored, as LIBLINEAR does")
        Xt, yt = test.matrix(dense=isinstance(X, np.ndarray)), test.y
    scale = None
    if req.normalize:
        X, Xt = normalize_rows(X), (None if Xt is None else normalize_rows(Xt))
    elif getattr(req, "scale", False):
        scale = column_scaling(X)
        X, Xt = apply_scaling(X, scale), (None if Xt is None else apply_scaling(Xt, scale))
    return TrainingData(X, train.y, Xt, yt, train.base, train.nnz, scale)


# ---------------------------------------------------------------- scaling
def normalize_rows(X):
    """Every row scaled to unit L2 norm (zero rows stay zero), computed as
    :func:`sklearn.preprocessing.normalize` does, to the last bit."""
    if isinstance(X, np.ndarray):
        norms = np.sqrt(np.einsum("ij,ij->i", X, X))
        return X / np.where(norms > 0, norms, 1.0)[:, None]
    import scipy.sparse as sp
    counts = np.diff(X.indptr)
    sq = np.zeros(X.shape[0])
    full = counts > 0
    if X.data.size:
        sq[full] = np.add.reduceat(X.data * X.data, X.indptr[:-1][full])
    norms = np.sqrt(sq)
    norms = np.where(norms > 0, norms, 1.0)
    return sp.csr_matrix((X.data / np.repeat(norms, np.diff(X.indptr)), X.indices,
                          X.indptr), shape=X.shape)


def column_scaling(X):
    """``(scale, offset)`` of ``--scale``, as svm-scale computes it from the
    training rows: a dense file maps each column's [min, max] onto [-1, 1]
    (svm-scale's default); a sparse file divides each column by its largest
    absolute value, which keeps every zero a zero (svm-scale's advice for
    sparse data, ``-l 0`` on non-negative columns).  A constant column is
    set to 0, as svm-scale drops it."""
    if isinstance(X, np.ndarray):
        lo, hi = X.min(axis=0), X.max(axis=0)
        span = hi - lo
        ok = span > 0
        scale = np.where(ok, 2.0 / np.where(ok, span, 1.0), 0.0)
        offset = np.where(ok, -1.0 - lo * scale, 0.0)
        return scale, offset
    top = np.zeros(X.shape[1])
    np.maximum.at(top, X.indices, np.abs(X.data))
    return np.where(top > 0, 1.0 / np.where(top > 0, top, 1.0), 0.0), np.zeros(X.shape[1])


def apply_scaling(X, scaling):
    """``x_j * scale_j + offset_j`` for every column (CSR stays CSR: its offsets are 0)."""
    scale, offset = scaling
    if isinstance(X, np.ndarray):
        return X * scale + offset
    import scipy.sparse as sp
    out = sp.csr_matrix((X.data * scale[X.indices], X.indices, X.indptr), shape=X.shape)
    out.eliminate_zeros()
    return out


# ----------------------------------------------------------------- labels
def classes_of(y_raw, loss_name, source):
    """The sorted classes of ``y_raw``: a clear error for one class, or for
    many labels that are not whole numbers (a regression target)."""
    values = np.unique(y_raw)
    if values.size == 1:
        raise ValueError(f"{source}: every sample has the label {format_label(values[0])}, "
                         f"a single class; loss={loss_name!r} is a classification loss and "
                         f"needs two classes. Use data with both classes (or a regression "
                         f"loss such as --loss squared)")
    if values.size > 2:
        frac = values[values != np.round(values)]
        if frac.size:
            shown = ", ".join(format_label(v) for v in frac[:5])
            raise ValueError(f"{source}: {values.size} distinct labels, some not whole "
                             f"numbers ({shown}); loss={loss_name!r} trains classes "
                             f"(one-vs-rest for more than two), which need class labels. "
                             f"For real-valued targets use a regression loss such as "
                             f"--loss squared")
    return values


def first_occurrence_order(y_raw, classes):
    """LIBLINEAR's label order: first occurrence in the file, +1 before -1."""
    _, first = np.unique(y_raw, return_index=True)
    order = classes[np.argsort(first, kind="stable")]
    if order.size == 2 and order[0] == -1 and order[1] == 1:
        order = order[::-1]
    return order


def check_test_labels(req, classes, yt_raw):
    """The labels of --test must be among the training file's classes."""
    unknown = np.setdiff1d(np.unique(yt_raw), classes)
    if unknown.size:
        shown = ", ".join(format_label(v) for v in classes[:10])
        raise ValueError(f"{req.test}: labels {[format_label(v) for v in unknown[:5]]} do "
                         f"not occur in {req.train} (labels {shown}); use a test file "
                         f"with the same labels")


def class_weights(req, classes):
    """``{class: weight}`` of the request (1 for unnamed classes); None without."""
    cw = req.class_weight
    if cw is None:
        return None
    if isinstance(cw, str):                     # "balanced": n / (K n_k)
        return cw
    known = set(classes.tolist())
    out = {}
    for label, w in cw.items():
        if label not in known:
            if req.command == "train":          # LIBLINEAR warns and goes on
                print(f"WARNING: class label {format_label(label)} specified in weight "
                      f"is not found", file=sys.stderr)
                continue
            raise ValueError(f"--class-weight names label {format_label(label)}, which "
                             f"does not occur in {req.train} (labels "
                             f"{', '.join(format_label(v) for v in classes[:10])})")
        out[label] = w
    return out


def weight_of_class(y_raw, classes, cw):
    """The weight of every sample's class (``cw`` a dict or "balanced")."""
    if isinstance(cw, str):
        counts = np.array([np.count_nonzero(y_raw == c) for c in classes], dtype=float)
        per = y_raw.shape[0] / (classes.size * counts)
    else:
        per = np.array([cw.get(float(c), 1.0) for c in classes])
    return per[np.searchsorted(classes, y_raw)]


def note_weights(req, y_raw, classes, weights):
    if weights is not None:
        note(req, "class weights: " + ", ".join(
            f"{format_label(c)} -> {weights[y_raw == c][0]:.6g}" for c in classes))


def lam_of(req, weight_total):
    """The fit's lam (or L1 strength): --lam, or 1/(C W) for -c C."""
    return req.lam_for(weight_total)


# ------------------------------------------------------------------- bias
def with_bias(X, bias):
    """``X`` with the constant column of --bias B appended (``X`` without it)."""
    if bias is None or X is None:
        return X
    if isinstance(X, np.ndarray):
        return np.hstack([X, np.full((X.shape[0], 1), float(bias))])
    import scipy.sparse as sp
    col = sp.csr_matrix(np.full((X.shape[0], 1), float(bias)))
    return sp.hstack([X, col], format="csr")


def split_bias(coef_full, bias):
    """``(coef, intercept)`` of a solution over ``with_bias`` rows."""
    coef_full = np.asarray(coef_full, dtype=np.float64)
    if bias is None:
        return coef_full, 0.0
    return coef_full[:-1], float(bias) * float(coef_full[-1])
