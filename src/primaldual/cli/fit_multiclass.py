"""``primaldual fit --loss multinomial | crammer_singer``: one multiclass problem
with a (d, K) weight matrix (docs/multiclass-models.md), trained with
:class:`primaldual.LinearClassifier`; the model file holds one coefficient row
per class.
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._util.interrupts import sigint_as_flag
from ..estimators import LinearClassifier
from ..model_io import save_model
from .files import density, nnz_of, plot_trace, write_trace_csv
from .output import format_label, json_float, note
from .prepare import lam_of, sample_weights

__all__ = ["fit_multiclass"]


def fit_multiclass(req, data, classes, cw):
    """Train, report (text or ``--json``), write the model, trace and plot."""
    if req.checkpoint or req.resume:
        raise ValueError("--checkpoint/--resume are not available for the multiclass "
                         "losses from the command line; use primaldual.solve(..., "
                         "checkpoint=...)")
    X, y_raw, Xt, yt_raw = data.X, data.y_raw, data.Xt, data.yt_raw
    note(req, f"{classes.size} classes in {req.train} "
              f"({', '.join(format_label(v) for v in classes[:10])}"
              f"{', ...' if classes.size > 10 else ''}): loss={req.loss.name}, one problem")
    weights = sample_weights(req, y_raw, classes, cw)
    lam, W = lam_of(req, X.shape[0], weights)
    est = LinearClassifier(loss=req.loss.name, alpha=lam, tol=req.tol,
                           max_iter=req.max_epochs, fit_intercept=req.bias is not None,
                           intercept_scaling=req.bias if req.bias is not None else 1.0,
                           class_weight=cw, random_state=req.seed, solver=req.solver,
                           solver_options=dict(req.options) or None)
    with sigint_as_flag() as interrupt, warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y_raw)
    trace = est.trace_[0]
    last = trace[-1]
    n, d = X.shape
    nnz = nnz_of(X)
    summary = {"solver": est.solver_, "loss": req.loss.name, "lam": float(lam),
               "l1": 0.0, "C": 1.0 / (lam * W), "weight_total": W, "n": int(n),
               "d": int(d), "nnz": int(nnz), "storage": data.storage,
               "classes": [format_label(c) for c in classes],
               "epochs": float(last["epoch"]), "time_s": float(last["time"]),
               "primal": json_float(est.primal_), "dual": json_float(est.dual_),
               "gap": json_float(est.gap_), "rel_gap": json_float(est.rel_gap_),
               "converged": bool(est.converged_), "tol": req.tol, "seed": req.seed,
               "bias": req.bias}
    if Xt is not None:
        summary["test_accuracy"] = float(np.mean(est.predict(Xt) == yt_raw))
    if req.model:
        written = save_model(est, req.model, normalize_rows=req.normalize,
                             feature_index_base=data.index_base)
        note(req, f"model written to {written}")
    if req.trace:
        write_trace_csv(trace, req.trace)
        note(req, f"trace ({len(trace)} rows) written to {req.trace}")
    if req.plot:
        plot_trace(trace, req.plot, title=f"{Path(req.train).name}: {est.solver_}, "
                                          f"{req.loss.name}, lam={lam:g}")
        note(req, f"plot written to {req.plot}")
    code = 130 if interrupt.is_set() else 0
    if not est.converged_ and not code:
        note(req, f"stopped before reaching tol: relative gap {est.rel_gap_:.3e} > tol "
                  f"{req.tol:.1e}; raise --max-epochs or tol")
    if req.json:
        print(json.dumps(summary))
        return code
    print(f"data      {req.train}: n={n}, d={d}, nnz={nnz}, {data.storage} (density "
          f"{density(X):.3g}), {classes.size} classes")
    print(f"problem   loss={req.loss.name}, lam={lam:g} (C={summary['C']:g})"
          + (f", bias={req.bias:g}" if req.bias is not None else ""))
    print(f"solver    {est.solver_}: {summary['epochs']:g} epochs in "
          f"{summary['time_s']:.3f} s")
    print(f"primal    {est.primal_:.12g}")
    print(f"dual      {est.dual_:.12g}")
    print(f"gap       {est.gap_:.3e} (relative {est.rel_gap_:.3e}, tol {req.tol:.1e}, "
          f"{'converged' if est.converged_ else 'NOT converged'})")
    if "test_accuracy" in summary:
        print(f"test      accuracy {summary['test_accuracy']:.6f} on {req.test}")
    return code
