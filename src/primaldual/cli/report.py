"""What a fit reports and writes: one summary, the text or JSON report, the files.

:func:`summarize` builds the one summary of a :class:`.core.Fitted` (the keys
of docs/cli.md; one-vs-rest adds ``classes`` and ``problems``), and
:func:`finish` writes the model (``.npz``, or LIBLINEAR's text format for
``train``), the trace and the plot, prints the report and returns the exit
code (130 after Ctrl-C, the results written being certified at the point
reached).  :func:`model_of` is the :class:`~primaldual.model_io.LinearModel`
of a fit; :func:`hint` is the advice of a fit that stopped before ``tol``.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .._util.lazy import lazy_attr, lazy_module
from .output import format_label, json_float, note


def summarize(req, fitted, data=None) -> dict:
    """The summary of a fit (a single problem's numbers, or the sums of the
    one-vs-rest problems with one entry per class in ``problems``)."""
    rs = fitted.results
    lam, W = fitted.lams[0], fitted.weight_totals[0]
    out = {"solver": rs[0].solver, "loss": req.loss_name,
           "lam": float(rs[0].lam), "l1": float(rs[0].l1),
           "C": 1.0 / (lam * W) if lam > 0 else None, "weight_total": W,
           "n": fitted.n, "d": fitted.d, "nnz": fitted.nnz,
           "epochs": float(sum(r.n_epochs for r in rs)), "time_s": fitted.time_s,
           "primal": json_float(sum(r.primal for r in rs)),
           "dual": json_float(sum(r.dual for r in rs)),
           "gap": json_float(sum(r.gap for r in rs)),
           "rel_gap": json_float(max(r.rel_gap for r in rs)),
           "converged": all(bool(r.converged) for r in rs),
           "stop_reason": rs[0].stop_reason, "tol": req.tol, "seed": req.seed,
           "bias": req.bias}
    if len(rs) == 1:
        out["time_s"] = rs[0].time
        legs = (getattr(rs[0], "extras", None) or {}).get("path")
        if legs:                     # solver="auto": every leg the supervisor ran
            out["path"] = [{k: (json_float(v) if isinstance(v, float) else v)
                            for k, v in leg.items()} for leg in legs]
    if fitted.storage is not None:
        out["storage"] = fitted.storage
    if fitted.one_vs_rest:
        out["classes"] = [format_label(c) for c in fitted.labels]
        out["problems"] = [
            {"class": format_label(c), "primal": json_float(r.primal),
             "dual": json_float(r.dual), "gap": json_float(r.gap),
             "rel_gap": json_float(r.rel_gap), "epochs": float(r.n_epochs),
             "converged": bool(r.converged)} for c, r in zip(fitted.labels, rs)]
    out.update(fitted.extra)
    if data is not None and data.Xt is not None:
        out.update(test_score(req, fitted, data.Xt, data.yt_raw))
    return out


def test_score(req, fitted, Xt, yt_raw):
    """``test_accuracy`` or ``test_rmse`` of the fit on (already scaled) test rows."""
    pred = lazy_attr("primaldual.cli.core", "predict_fitted")(fitted, Xt)
    if fitted.kind == "regressor":
        return {"test_rmse": float(np.sqrt(np.mean((pred - yt_raw) ** 2)))}
    return {"test_accuracy": float(np.mean(pred == yt_raw))}


def model_of(req, fitted, data):
    """The :class:`~primaldual.model_io.LinearModel` of a fit."""
    LinearModel = lazy_attr("primaldual.model_io", "LinearModel")
    single = fitted.results[0] if len(fitted.results) == 1 else None
    scale, offset = data.scale if data is not None and data.scale is not None \
        else (None, None)
    return LinearModel(
        kind=fitted.kind, coef=fitted.coef, intercept=fitted.intercept,
        classes=(np.asarray(fitted.classes, dtype=np.float64)
                 if fitted.classes is not None else np.zeros(0)),
        loss=req.loss_name, loss_params=dict(req.loss_params),
        lam=float(fitted.results[0].lam), l1=float(fitted.results[0].l1),
        fit_intercept=req.bias is not None,
        intercept_scaling=float(req.bias) if req.bias else 1.0,
        normalize_rows=bool(req.normalize),
        feature_index_base=None if data is None else data.index_base,
        primal=None if single is None else float(single.primal),
        dual=None if single is None else float(single.dual),
        gap=None if single is None else float(single.gap),
        column_scale=scale, column_offset=offset)


def save_model_file(req, fitted, data):
    """Write the model: ``.npz`` (:func:`primaldual.model_io.save_model`) or
    LIBLINEAR's text format (``train``); returns the path written."""
    model = model_of(req, fitted, data)
    if req.model_format != "liblinear":
        return lazy_attr("primaldual.model_io", "save_model")(model, req.model,
                                                              validate_loss=False)
    ll = lazy_module("primaldual.liblinear_format")
    text = ll.from_linear_model(model, req.solver_type, label_order=fitted.label_order)
    if req.bias is not None and req.bias == 0:       # -B 0: the bias feature stays
        text.bias = 0.0
    atomic_write = lazy_attr("primaldual._util.atomic", "atomic_write")
    with atomic_write(req.model, "w", make_dirs=False) as fh:
        ll.write_liblinear(fh, text)
    return req.model


def write_outputs(req, fitted, data):
    """Model, trace and plot files, each announced on stderr."""
    if req.model:
        written = save_model_file(req, fitted, data)
        if not getattr(req, "liblinear_lines", False):      # LIBLINEAR's train is silent
            note(req, f"model written to {written}")
    files = lazy_module("primaldual.cli.files")
    if req.trace:
        rows = [rec for r in fitted.results for rec in r.trace] if not fitted.one_vs_rest \
            else [{"class": format_label(c), **rec}
                  for c, r in zip(fitted.labels, fitted.results) for rec in r.trace]
        files.write_trace_csv(rows, req.trace)
        note(req, f"trace ({len(rows)} rows{', column class' if fitted.one_vs_rest else ''})"
                  f" written to {req.trace}")
    if req.plot:
        title = (f"{Path(req.train).name}: {fitted.results[0].solver}, {req.loss_name}, "
                 f"lam={fitted.lams[0]:g}")
        if fitted.one_vs_rest:
            files.plot_ovr_traces([r.trace for r in fitted.results],
                                  [format_label(c) for c in fitted.labels], req.plot,
                                  title="one-vs-rest " + title)
        else:
            files.plot_trace(fitted.results[0].trace, req.plot, title=title)
        note(req, f"plot written to {req.plot}")


def hint(req, fitted, data):
    """The advice of a fit that stopped before tol: ``--scale`` when the
    columns' scales differ widely (never row normalization, which discards
    what a column such as an ID or a count carries)."""
    if data is None or data.X is None or data.scale is not None or req.normalize:
        return "raise --max-epochs or tol"
    scales = lazy_attr("primaldual._util.scales", "column_scales")(data.X)
    nz = np.flatnonzero(scales > 0)
    if nz.size >= 2:
        hi, lo = nz[np.argmax(scales[nz])], nz[np.argmin(scales[nz])]
        spread = float(scales[hi] / scales[lo])
        if spread > lazy_attr("primaldual._util.scales", "SCALE_SPREAD_LIMIT"):
            return (f"the features' scales differ by a factor of {spread:.3g} (feature "
                    f"{int(hi) + data.index_base} reaches {float(scales[hi]):.4g}, feature "
                    f"{int(lo) + data.index_base} only {float(scales[lo]):.4g}): rerun "
                    f"with --scale (each column to [-1, 1], as svm-scale; the model keeps "
                    f"the scaling); otherwise raise --max-epochs or tol")
    return "raise --max-epochs or tol"


def finish(req, fitted, data) -> int:
    """Write the files, print the report; the exit code."""
    summary = summarize(req, fitted, data)
    write_outputs(req, fitted, data)
    code = 0
    if fitted.interrupted or any(r.stop_reason == "interrupted" for r in fitted.results):
        note(req, "interrupted: the results written are certified at the point reached")
        if getattr(req, "checkpoint", None):
            state = lazy_attr("primaldual.solvers", "load_state")(req.checkpoint)
            note(req, f"the checkpoint in {req.checkpoint} is the last scheduled one "
                      f"(epoch {state.epoch:g}); continue with --resume --checkpoint "
                      f"{req.checkpoint}")
        code = 130
    elif not summary["converged"]:
        bad = [r for r in fitted.results if not r.converged]
        which = "" if not fitted.one_vs_rest else \
            f"{len(bad)} of {len(fitted.results)} problems "
        worst = max(bad, key=lambda r: r.rel_gap)
        note(req, f"{which}stopped ({worst.stop_reason}) before reaching tol: relative gap "
                  f"{worst.rel_gap:.3e} > tol {req.tol:.1e}; {hint(req, fitted, data)}")
    if req.json:
        print(json.dumps(summary))
    elif getattr(req, "liblinear_lines", False):
        if not req.quiet:
            print(liblinear_line(summary))
    else:
        print_text(req, fitted, summary)
    return code


def liblinear_line(s) -> str:
    """``train``'s one line in place of LIBLINEAR's solver log."""
    return (f"primaldual: {s['solver']}, {s['epochs']:g} passes, {s['time_s']:.3f} s, "
            f"relative duality gap {s['rel_gap']:.3g} "
            f"({'converged' if s['converged'] else 'NOT converged'}, tol {s['tol']:g})")


def print_text(req, fitted, s):
    """The human report of ``fit``."""
    density = f" (density {s['nnz'] / (s['n'] * s['d']):.3g})" if s["n"] * s["d"] else ""
    stored = f", {s['storage']}{density}" if "storage" in s else ""
    classes = f", {len(fitted.labels)} classes" if fitted.one_vs_rest else ""
    print(f"data      {req.train}: n={s['n']}, d={s['d']}, nnz={s['nnz']}{stored}{classes}")
    c_text = f" (C={s['C']:g})" if s.get("C") is not None else ""
    print(f"problem   loss={s['loss']}, lam={s['lam']:g}{c_text}, l1={s['l1']:g}"
          + (f", bias={req.bias:g}" if req.bias is not None else "")
          + (", scaled columns" if req.scale else "")
          + (", one-vs-rest" if fitted.one_vs_rest else ""))
    where = f" on {req.scheduler}" if getattr(req, "scheduler", None) else ""
    print(f"solver    {s['solver']}{where}: {s['epochs']:g} epochs in {s['time_s']:.3f} s "
          f"({s['stop_reason']})")
    if len(s.get("path", ())) > 1:   # auto handed over: say from what and why
        print("path      " + " -> ".join(
            f"{leg['method']}" + (f" x{leg['threads']}" if leg.get("threads", 1) > 1 else "")
            + f" ({leg['reason']}, {leg['seconds']:.3g} s)" for leg in s["path"]))
    if fitted.one_vs_rest:
        print(f"{'class':>10} {'primal':>16} {'dual':>16} {'gap':>10} {'rel gap':>10} "
              f"{'epochs':>7}  converged")
        for p in s["problems"]:
            print(f"{p['class']:>10} {p['primal']:16.10g} {p['dual']:16.10g} "
                  f"{p['gap']:10.3e} {p['rel_gap']:10.3e} {p['epochs']:7g}  "
                  f"{'yes' if p['converged'] else 'NO'}")
    else:
        print(f"primal    {s['primal']:.12g}")
        print(f"dual      {s['dual']:.12g}")
    what = "in total (largest relative" if fitted.one_vs_rest else "(relative"
    print(f"gap       {max(s['gap'], 0.0):.3e} {what} {s['rel_gap']:.3e}, tol {req.tol:.1e}, "
          f"{'converged' if s['converged'] else 'NOT converged'})")
    if "test_accuracy" in s:
        print(f"test      accuracy {s['test_accuracy']:.6f} on {req.test}")
    if "test_rmse" in s:
        print(f"test      rmse {s['test_rmse']:.6g} on {req.test}")
