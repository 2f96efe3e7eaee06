"""LIBLINEAR's text model format, read and written, and its solver types.

A LIBLINEAR model file (``train`` writes it, ``predict`` reads it) is::

    solver_type L2R_L2LOSS_SVC_DUAL
    nr_class 2
    label 1 -1                  (classification only; integer labels)
    nr_feature 13
    bias -1                     (>= 0: a constant feature of this value was appended)
    w
    0.1234 ...                  (one line per feature, then the bias feature when
                                 bias >= 0; nr_w values a line: 1 for two classes,
                                 nr_class for more and for Crammer-Singer)

Scores are ``dec_k = sum_j w[j, k] x_j (+ w[bias, k] * bias)``.  Two classes:
``label[0]`` where ``dec_0 > 0``, else ``label[1]``; more: the label of the
largest score.  :func:`to_linear_model` and :func:`from_linear_model` convert
to and from :class:`primaldual.model_io.LinearModel`, so a model moves both
ways between the two libraries.  The table :data:`SOLVER_TYPES` maps LIBLINEAR's
``-s`` numbers to names, losses and penalties.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

__all__ = ["SOLVER_TYPES", "SolverType", "LiblinearModel", "is_liblinear_model",
           "read_liblinear", "write_liblinear", "to_linear_model", "from_linear_model"]


class SolverType(NamedTuple):
    number: int
    name: str             # as in the model file
    title: str            # as in train's help
    loss: str             # primaldual's loss
    penalty: str          # "l2" or "l1"
    eps: float            # LIBLINEAR's default -e


SOLVER_TYPES = {t.number: t for t in (
    SolverType(0, "L2R_LR", "L2-regularized logistic regression (primal)", "logistic",
               "l2", 0.01),
    SolverType(1, "L2R_L2LOSS_SVC_DUAL", "L2-regularized L2-loss support vector "
               "classification (dual)", "squared_hinge", "l2", 0.1),
    SolverType(2, "L2R_L2LOSS_SVC", "L2-regularized L2-loss support vector "
               "classification (primal)", "squared_hinge", "l2", 0.01),
    SolverType(3, "L2R_L1LOSS_SVC_DUAL", "L2-regularized L1-loss support vector "
               "classification (dual)", "hinge", "l2", 0.1),
    SolverType(4, "MCSVM_CS", "support vector classification by Crammer and Singer",
               "crammer_singer", "l2", 0.1),
    SolverType(5, "L1R_L2LOSS_SVC", "L1-regularized L2-loss support vector "
               "classification", "squared_hinge", "l1", 0.01),
    SolverType(6, "L1R_LR", "L1-regularized logistic regression", "logistic", "l1", 0.01),
    SolverType(7, "L2R_LR_DUAL", "L2-regularized logistic regression (dual)", "logistic",
               "l2", 0.1),
    SolverType(11, "L2R_L2LOSS_SVR", "L2-regularized L2-loss support vector regression "
               "(primal)", "squared_epsilon_insensitive", "l2", 0.0001),
    SolverType(12, "L2R_L2LOSS_SVR_DUAL", "L2-regularized L2-loss support vector "
               "regression (dual)", "squared_epsilon_insensitive", "l2", 0.1),
    SolverType(13, "L2R_L1LOSS_SVR_DUAL", "L2-regularized L1-loss support vector "
               "regression (dual)", "epsilon_insensitive", "l2", 0.1),
    SolverType(21, "ONECLASS_SVM", "one-class support vector machine (dual)", "",
               "l2", 0.01),
)}
_BY_NAME = {t.name: t for t in SOLVER_TYPES.values()}
REGRESSION_TYPES = (11, 12, 13)


@dataclass
class LiblinearModel:
    """The content of a LIBLINEAR model file."""

    solver_type: SolverType
    nr_class: int
    label: list | None            # None for regression
    nr_feature: int
    bias: float
    w: np.ndarray                 # (nr_feature [+1 with bias >= 0], nr_w)
    rho: float | None = None

    @property
    def nr_w(self) -> int:
        return 1 if self.nr_class == 2 and self.solver_type.number != 4 else self.nr_class


class LiblinearFormatError(ValueError):
    """A file is not a readable LIBLINEAR model (the message names the line)."""


def is_liblinear_model(path) -> bool:
    """Whether the file at ``path`` starts as a LIBLINEAR model file does."""
    try:
        with open(path, "rb") as fh:
            return fh.read(12) == b"solver_type "
    except OSError:
        return False


def read_liblinear(path) -> LiblinearModel:
    """Parse a LIBLINEAR text model file (as LIBLINEAR's ``load_model`` does)."""
    where = f"LIBLINEAR model file {path}"
    with open(path, "r", encoding="ascii", errors="replace") as fh:
        lines = fh.read().splitlines()
    head = {}
    row = 0
    for row, text in enumerate(lines):
        parts = text.split()
        if not parts:
            continue
        key = parts[0]
        if key == "w":
            break
        if key not in ("solver_type", "nr_class", "label", "nr_feature", "bias", "rho"):
            raise LiblinearFormatError(f"{where}, line {row + 1}: unknown text "
                                       f"{key!r} in the header")
        head[key] = parts[1:]
    else:
        raise LiblinearFormatError(f"{where}: no 'w' line (the weights) found")
    try:
        stype = _BY_NAME[head["solver_type"][0]]
        nr_class = int(head["nr_class"][0])
        nr_feature = int(head["nr_feature"][0])
        bias = float(head["bias"][0])
        label = [int(v) for v in head["label"]] if "label" in head else None
        rho = float(head["rho"][0]) if "rho" in head else None
    except (KeyError, IndexError, ValueError) as e:
        raise LiblinearFormatError(f"{where}: a bad or missing header entry ({e}); "
                                   f"it needs solver_type, nr_class, nr_feature, bias") \
            from None
    if label is not None and len(label) != nr_class:
        raise LiblinearFormatError(f"{where}: nr_class {nr_class} but {len(label)} labels")
    model = LiblinearModel(stype, nr_class, label, nr_feature, bias, np.zeros((0, 0)), rho)
    n = nr_feature + (1 if bias >= 0 else 0)
    body = [text.split() for text in lines[row + 1:] if text.strip()]
    if len(body) != n or any(len(r) != model.nr_w for r in body):
        raise LiblinearFormatError(f"{where}: expected {n} weight lines of {model.nr_w} "
                                   f"value(s) after 'w', got {len(body)} line(s)")
    try:
        model.w = np.array(body, dtype=np.float64).reshape(n, model.nr_w)
    except ValueError as e:
        raise LiblinearFormatError(f"{where}: a weight is not a number ({e})") from None
    return model


def write_liblinear(fh, model: LiblinearModel):
    """Write ``model`` to the text file ``fh`` in LIBLINEAR's format (%.17g)."""
    out = [f"solver_type {model.solver_type.name}", f"nr_class {model.nr_class}"]
    if model.label is not None:
        out.append("label " + " ".join(str(int(v)) for v in model.label))
    out += [f"nr_feature {model.nr_feature}", f"bias {_g17(model.bias)}"]
    if model.rho is not None:
        out.append(f"rho {_g17(model.rho)}")
    out.append("w")
    out += ["".join(_g17(v) + " " for v in row) for row in model.w]
    fh.write("\n".join(out) + "\n")


def _g17(v) -> str:
    """C's ``%.17g``."""
    v = float(v)
    if v == 0:
        return "-0" if math.copysign(1.0, v) < 0 else "0"
    return f"{v:.17g}"


def _integer_labels(classes, what):
    out = []
    for v in np.asarray(classes, dtype=np.float64):
        if not (float(v).is_integer() and abs(v) < 2 ** 31):
            raise ValueError(f"LIBLINEAR's model format stores integer labels; {what} has "
                             f"the label {float(v)!r}. Save the model as .npz instead")
        out.append(int(v))
    return out


def from_linear_model(m, solver_type: int, *, label_order=None) -> LiblinearModel:
    """The LIBLINEAR model of a :class:`~primaldual.model_io.LinearModel`.

    ``label_order`` (classification): the labels in LIBLINEAR's order (first
    occurrence in the training file, +1 before -1); default the model's classes.
    A model with an intercept needs ``fit_intercept`` with a scaling B > 0: the
    intercept is ``w_bias * B``.
    """
    stype = SOLVER_TYPES[solver_type]
    coef = np.asarray(m.coef, dtype=np.float64)
    intercept = np.asarray(m.intercept, dtype=np.float64)
    if m.fit_intercept and m.intercept_scaling > 0:
        bias = float(m.intercept_scaling)
        coef = np.hstack([coef, (intercept / bias)[:, None]])
    elif np.any(intercept != 0):
        raise ValueError("this model has an intercept without a bias feature, which "
                         "LIBLINEAR's format cannot hold")
    else:
        bias = -1.0
    d = m.coef.shape[1]
    if m.kind == "regressor":
        return LiblinearModel(stype, 2, None, d, bias, coef.T.copy())
    classes = [int(v) for v in _integer_labels(m.classes, "the model")]
    order = classes if label_order is None else _integer_labels(label_order, "the data")
    if sorted(order) != sorted(classes):
        raise ValueError(f"label order {order} is not a permutation of {classes}")
    if coef.shape[0] == 1 and stype.number != 4:
        # ours: score > 0 -> classes[1]; LIBLINEAR's: dec > 0 -> label[0]
        sign = 1.0 if order[0] == classes[1] else -1.0
        return LiblinearModel(stype, 2, order, d, bias, sign * coef.T)
    rows = [classes.index(v) for v in order]
    return LiblinearModel(stype, len(order), order, d, bias, coef[rows].T.copy())


def to_linear_model(ll: LiblinearModel, model_cls):
    """``model_cls`` (:class:`~primaldual.model_io.LinearModel`) of a LIBLINEAR model.

    The strength of the fit is not in LIBLINEAR's file (``lam`` is 0 here); the
    loss is the solver type's.
    """
    if ll.solver_type.number == 21:
        raise ValueError("one-class SVM models (ONECLASS_SVM) are not supported")
    n_w = ll.w.shape[0]
    has_bias = ll.bias >= 0
    W = ll.w[: ll.nr_feature].T                        # (nr_w, d)
    b = ll.w[ll.nr_feature] * ll.bias if has_bias else np.zeros(ll.nr_w)
    assert n_w == ll.nr_feature + has_bias
    common = dict(loss=ll.solver_type.loss, loss_params={}, lam=0.0, l1=0.0,
                  fit_intercept=has_bias,
                  intercept_scaling=float(ll.bias) if has_bias else 1.0,
                  liblinear_solver_type=ll.solver_type.number)
    if ll.solver_type.number in REGRESSION_TYPES:
        return model_cls(kind="regressor", coef=np.ascontiguousarray(W),
                         intercept=np.asarray(b, dtype=np.float64), classes=np.zeros(0),
                         **common)
    labels = np.array(ll.label, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if ll.nr_w == 1:
        # LIBLINEAR: dec > 0 -> label[0]; ours: score > 0 -> classes[1] (the larger)
        sign = 1.0 if labels[0] > labels[1] else -1.0
        return model_cls(kind="classifier", coef=sign * W, intercept=sign * b,
                         classes=np.sort(labels), label_order=labels, **common)
    rows = np.argsort(labels, kind="stable")
    return model_cls(kind="classifier", coef=np.ascontiguousarray(W[rows]),
                     intercept=b[rows], classes=labels[rows], label_order=labels, **common)
