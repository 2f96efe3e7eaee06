"""Read and check what a ``fit`` or ``cv`` request trains on: the data files,
the classes and the test labels, the sample weights, lam (from -c C), and the
bias column.  Nothing here trains."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..fitdata import add_intercept_column, combined_weights
from .files import encode_binary_labels, read_libsvm
from .output import format_label, note


@dataclass(frozen=True)
class TrainingData:
    """The training (and test) rows and raw labels of a request."""

    X: Any
    y_raw: np.ndarray
    Xt: Any                       # None without --test
    yt_raw: np.ndarray | None
    index_base: int               # the feature index base of the training file

    @property
    def storage(self) -> str:
        """``dense`` or ``sparse`` (CSR): how the training file was read."""
        return "sparse" if sp.issparse(self.X) else "dense"


def read_training_data(req) -> TrainingData:
    """TRAIN (and TEST), read together; rows scaled with --normalize.  A file
    of density >= DENSE_MIN_DENSITY is read into a dense array (the summary
    says which: ``storage``)."""
    paths = [req.train] + ([req.test] if getattr(req, "test", None) else [])
    parts, index_base = read_libsvm(paths, with_base=True)
    X, y_raw = parts[0]
    Xt, yt_raw = parts[1] if len(parts) > 1 else (None, None)
    if req.normalize:
        from sklearn.preprocessing import normalize
        X = normalize(X, norm="l2")
        Xt = normalize(Xt, norm="l2") if Xt is not None else None
    return TrainingData(X, y_raw, Xt, yt_raw, index_base)


# ----------------------------------------------------------------- labels
def classes_of(y_raw, loss_name, source):
    """The sorted classes of ``y_raw``: a clear error for one class, or for
    many labels that are not whole numbers (a regression target)."""
    values = np.unique(y_raw)
    if values.size == 1:
        encode_binary_labels(y_raw, loss_name, source)      # raises the single-class error
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


def check_test_labels(req, classes, yt_raw):
    """The labels of --test must be among the training file's classes."""
    unknown = np.setdiff1d(np.unique(yt_raw), classes)
    if unknown.size:
        shown = ", ".join(format_label(v) for v in classes[:10])
        raise ValueError(f"{req.test}: labels {[format_label(v) for v in unknown[:5]]} do "
                         f"not occur in {req.train} (labels {shown}); use a test file "
                         f"with the same labels")


def class_weight_for(class_weight, classes, source):
    """The request's class weight, its labels checked against ``classes``."""
    if isinstance(class_weight, dict):
        unknown = [k for k in class_weight if k not in set(classes.tolist())]
        if unknown:
            raise ValueError(f"--class-weight names label {format_label(unknown[0])}, "
                             f"which does not occur in {source} (labels "
                             f"{', '.join(format_label(v) for v in classes[:10])})")
    return class_weight


def sample_weights(req, y_raw, classes, class_weight):
    """``c_i`` from the class weights (None without them); stderr lists them."""
    if class_weight is None:
        return None
    weights = combined_weights(y_raw, classes, np.ones(y_raw.shape[0]), class_weight)
    note(req, "class weights: " + ", ".join(
        f"{format_label(c)} -> {weights[y_raw == c][0]:.6g}" for c in classes))
    return weights


def lam_of(req, n, weights):
    """The fit's lam: --lam, or 1/(C W) for -c C (stderr shows the conversion)."""
    W = float(n) if weights is None else float(np.sum(weights))
    lam = req.lam_for(W)
    if req.C is not None:
        what = "n" if weights is None else "the total sample weight"
        note(req, f"-c {req.C:g}: lam = 1/(C W) = 1/({req.C:g} * {W:g}) = {lam:.6g} "
                  f"(W = {what})")
    return lam, W


# ------------------------------------------------------------------- bias
def with_bias(X, bias):
    """``X`` with the constant column of --bias B appended (``X`` without it)."""
    if bias is None or X is None:
        return X
    return add_intercept_column(X, float(bias))


def split_bias(coef_full, bias):
    """``(coef, intercept)`` of a solution over ``with_bias`` rows."""
    if bias is None:
        return np.asarray(coef_full, dtype=np.float64), 0.0
    return np.asarray(coef_full[:-1], dtype=np.float64), float(bias) * float(coef_full[-1])
