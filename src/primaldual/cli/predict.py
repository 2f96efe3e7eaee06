"""``primaldual predict``: the predictions of a model file on a LIBSVM file.

Two argument orders, told apart by content: ours, ``MODEL DATA [OUT]``
(``--proba``, ``--json``), and LIBLINEAR's, ``[-b 1] [-q] TEST MODEL OUT``,
whose output file and ``Accuracy = 84.4444% (228/270)`` line are LIBLINEAR's
own.  A model is a ``.npz`` file (``fit --model``) or a LIBLINEAR text model
(``train``, or LIBLINEAR itself).  DATA is read with the model's index base;
features the training file never had are ignored, as LIBLINEAR does.  The
scores are computed from the parsed file directly (no matrix, no SciPy).
"""
from __future__ import annotations

import json
import sys

import numpy as np

from .._util.atomic import atomic_write
from .._util.lazy import lazy_attr
from .libsvm import DENSE_MIN_DENSITY, read_files
from .prepare import normalize_rows
from .output import format_label, note


def _read(req):
    read_model = lazy_attr("primaldual.model_io", "read_model")
    model = read_model(req.model, validate_loss=False)
    base = model.feature_index_base
    (rows,) = read_files([req.data], base=base, n_features=model.n_features)
    if rows.dropped and not req.json:
        note(req, f"{req.data} uses features beyond the model's {model.n_features}; "
                  f"they are ignored, as LIBLINEAR does")
    if base is None and not req.liblinear and model.liblinear_solver_type is None:
        note(req, f"note: the model file {req.model} does not record the index base of "
                  f"its training data; {req.data} was read as "
                  f"{'zero' if rows.base == 0 else 'one'}-based (it "
                  f"{'uses' if rows.base == 0 else 'does not use'} index 0). Re-save the "
                  f"model with 'primaldual fit --model' to record the base")
    return model, rows


def scores_of(model, rows):
    """The decision scores of every row, (n, K): a dense file through its dense
    array (the products ``fit`` computes for ``--test``), a sparse one straight
    from its CSR arrays."""
    coef, intercept = model.folded()
    if rows.density >= DENSE_MIN_DENSITY:
        X = rows.matrix(dense=True)
        if model.normalize_rows:
            X = normalize_rows(X)
        return np.asarray(X @ coef.T, dtype=np.float64) + intercept
    scores = rows.scores(coef)
    if model.normalize_rows:
        norms = np.sqrt(np.bincount(rows.row_of_entry(), weights=rows.data ** 2,
                                    minlength=rows.n))
        scores /= np.where(norms > 0, norms, 1.0)[:, None]
    return scores + intercept


def probabilities(model, scores, req):
    """LIBLINEAR's probabilities of a logistic model: the logistic of each
    score, normalized over the classes for more than two (its ``-b 1``)."""
    if not (model.kind == "classifier" and model.loss == "logistic"):
        what = f"loss={model.loss!r}" if model.kind == "classifier" else "a regressor"
        if req.liblinear:
            raise ValueError("probability output is only supported for logistic "
                             f"regression; {req.model} is {what}")
        raise ValueError(f"--proba needs a model fit with --loss logistic (the only loss "
                         f"whose scores are probabilities); {req.model} is {what}")
    p = 0.5 * (1.0 - np.tanh(-0.5 * scores))           # 1 / (1 + exp(-s))
    if scores.shape[1] == 1:
        return np.hstack([1.0 - p, p])                 # columns: classes[0], classes[1]
    return p / p.sum(axis=1, keepdims=True)


def cmd_predict(req) -> int:
    model, rows = _read(req)
    scores = scores_of(model, rows)
    pred = model.labels_of(model.finish_scores(scores))
    if req.liblinear:
        lines = _liblinear_lines(model, scores, pred, req)
    else:
        lines = _our_lines(model, scores, pred, req)
    y = rows.y
    out = {"n": rows.n}
    if model.kind == "classifier":
        out["accuracy"] = float(np.mean(pred == y))
        unknown = np.setdiff1d(np.unique(y), model.classes)
        if unknown.size:
            out["unknown_labels"] = [float(v) for v in unknown]
    else:
        out["rmse"] = float(np.sqrt(np.mean((pred - y) ** 2)))
    if req.output is None:
        sys.stdout.write("".join(line + "\n" for line in lines))
    else:
        with atomic_write(req.output, "w", newline="", make_dirs=False) as fh:
            fh.write("".join(line + "\n" for line in lines))
        out["output"] = str(req.output)
        if not req.json and not req.quiet:      # as LIBLINEAR's predict reports
            print(_accuracy_lines(model, pred, y))
    if req.json:
        print(json.dumps(out))
    return 0


def _our_lines(model, scores, pred, req):
    fmt = format_label if model.kind == "classifier" else (lambda v: repr(float(v)))
    if not req.proba:
        return [fmt(v) for v in pred]
    proba = probabilities(model, scores, req)
    lines = ["labels " + " ".join(format_label(c) for c in model.classes)]
    return lines + [" ".join([fmt(v)] + [repr(float(p)) for p in row])
                    for v, row in zip(pred, proba)]


def _liblinear_lines(model, scores, pred, req):
    """LIBLINEAR's output file: ``%.17g`` labels, or with ``-b 1`` a ``labels``
    header in the model's label order and ``%g`` probabilities."""
    if not req.proba:
        return [f"{float(v):.17g}" for v in pred]
    proba = probabilities(model, scores, req)
    order = model.label_order if model.label_order is not None else model.classes
    cols = [int(np.flatnonzero(model.classes == c)[0]) for c in order]
    lines = ["labels " + " ".join(format_label(c) for c in order)]
    return lines + [" ".join([f"{float(v):g}"] + [f"{row[j]:g}" for j in cols])
                    for v, row in zip(pred, proba)]


def _accuracy_lines(model, pred, y):
    if model.kind == "classifier":
        hits = int(np.sum(pred == y))
        return f"Accuracy = {100.0 * hits / y.shape[0]:g}% ({hits}/{y.shape[0]})"
    n = y.shape[0]
    err = float(np.sum((pred - y) ** 2))
    sp, st = float(np.sum(pred)), float(np.sum(y))
    spp, stt, spt = float(pred @ pred), float(y @ y), float(pred @ y)
    r2 = ((n * spt - sp * st) ** 2) / ((n * spp - sp * sp) * (n * stt - st * st)) \
        if (n * spp - sp * sp) * (n * stt - st * st) else float("nan")
    return (f"Mean squared error = {err / n:g} (regression)\n"
            f"Squared correlation coefficient = {r2:g} (regression)")
