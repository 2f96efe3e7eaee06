"""``primaldual fit``: one model (two labels or a regression), one-vs-rest for
more labels, or a fit on a running Dask cluster from part files.

It reads as LIBLINEAR's ``train.c``: the request is parsed and checked
(:mod:`.request`), the data read and checked (:mod:`.prepare`), the model
trained (:func:`primaldual.solve`) and the results saved (:func:`finish_fit`).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import primaldual

from .._extras import require
from .._util import encode_pm1
from .._util.scales import scale_spread_note
from .._util.interrupts import sigint_as_flag
from ..distributed.partitioned import PartitionedProblem
from ..estimators import LinearClassifier
from ..model_io import LinearModel, save_model
from ..solvers import SOLVERS, load_state
from .fit_multiclass import fit_multiclass
from .files import (density, nnz_of, plot_ovr_traces, plot_trace,
                    read_libsvm, split_libsvm, write_trace_csv)
from .output import format_label, json_float, note
from .prepare import (check_test_labels, class_weight_for, classes_of, lam_of,
                      read_training_data, sample_weights, split_bias, with_bias)


def cmd_fit(req) -> int:
    if req.scheduler is not None:
        return _fit_on_cluster(req)
    data = read_training_data(req)                                  # read
    classes, weights, y, yt = None, None, data.y_raw, data.yt_raw   # check
    if req.loss.classification:
        classes = classes_of(data.y_raw, req.loss.name, req.train)
        if data.Xt is not None:
            check_test_labels(req, classes, data.yt_raw)
        cw = class_weight_for(req.class_weight, classes, req.train)
        if getattr(req.loss, "multiclass", False):      # one (d, K) problem
            return fit_multiclass(req, data, classes, cw)
        if classes.size > 2:
            return _fit_one_vs_rest(req, data, classes, cw)
        note(req, f"labels of {req.train}: {format_label(classes[0])} -> -1, "
                  f"{format_label(classes[1])} -> +1")
        y = encode_pm1(data.y_raw, classes[1], classes[0], source=req.train)
        yt = None if data.Xt is None else encode_pm1(data.yt_raw, classes[1], classes[0],
                                                     source=req.test)
        weights = sample_weights(req, data.y_raw, classes, cw)
    lam, W = lam_of(req, data.X.shape[0], weights)
    Xb, Xtb = with_bias(data.X, req.bias), with_bias(data.Xt, req.bias)
    res = primaldual.solve(Xb, y, loss=req.loss.name, lam=lam, solver=req.solver,  # train
                           tol=req.tol, max_epochs=req.max_epochs,
                           random_state=req.seed, sample_weight=weights, l1=req.l1,
                           loss_params=req.solve_loss_params,
                           eval_set=(Xtb, yt) if data.Xt is not None else None,
                           n_jobs=req.n_jobs, **req.options)
    coef, intercept = split_bias(res.coef, req.bias)
    return finish_fit(req, res, data.X, data.Xt, yt, coef, intercept, classes,  # save
                      W=W, index_base=data.index_base)


def _summary(req, res, n, d, nnz, W):
    return {"solver": res.solver, "loss": res.loss, "lam": res.lam, "l1": res.l1,
            "C": 1.0 / (res.lam * W) if res.lam > 0 else None, "weight_total": W,
            "n": int(n), "d": int(d), "nnz": int(nnz), "epochs": res.n_epochs,
            "time_s": res.time, "primal": json_float(res.primal),
            "dual": json_float(res.dual), "gap": json_float(res.gap),
            "rel_gap": json_float(res.rel_gap), "converged": bool(res.converged),
            "stop_reason": res.stop_reason, "tol": res.tol, "seed": req.seed,
            "bias": req.bias}


def _c_text(summary):
    return f" (C={summary['C']:g})" if summary.get("C") is not None else ""


def finish_fit(req, res, X, Xt, yt, coef, intercept, classes, *, W, index_base,
               nnz=None, extra=None):
    """Summary, model, trace, plot and the printed report of a single-problem fit."""
    n, d = X.shape
    nnz = nnz_of(X) if nnz is None else nnz
    summary = _summary(req, res, n, d, nnz, W)
    storage = None if extra and "scheduler" in extra else (
        "dense" if isinstance(X, np.ndarray) else "sparse")
    if storage is not None:
        summary["storage"] = storage
    if extra:
        summary.update(extra)
    if Xt is not None:
        score = np.asarray(Xt @ coef, dtype=np.float64).ravel() + intercept
        if req.loss.classification:
            pred = np.where(score > 0, 1.0, -1.0)
            summary["test_accuracy"] = float(np.mean(pred == yt))
        else:
            summary["test_rmse"] = float(np.sqrt(np.mean((score - yt) ** 2)))
    if req.model:
        loss = req.loss
        model = LinearModel(
            kind="classifier" if loss.classification else "regressor",
            coef=coef.reshape(1, -1), intercept=np.array([intercept]),
            classes=(np.asarray(classes, dtype=np.float64) if loss.classification
                     else np.zeros(0)),
            loss=loss.name, loss_params=loss.params, lam=float(res.lam), l1=float(res.l1),
            fit_intercept=req.bias is not None,
            intercept_scaling=float(req.bias) if req.bias is not None else 1.0,
            normalize_rows=bool(req.normalize),
            feature_index_base=index_base, primal=float(res.primal),
            dual=float(res.dual), gap=float(res.gap))
        written = save_model(model, req.model)
        note(req, f"model written to {written}")
    if req.trace:
        write_trace_csv(res.trace, req.trace)
        note(req, f"trace ({len(res.trace)} rows) written to {req.trace}")
    if req.plot:
        plot_trace(res.trace, req.plot,
                   title=f"{Path(req.train).name}: {res.solver}, {res.loss}, "
                         f"lam={res.lam:g}")
        note(req, f"plot written to {req.plot}")
    code = 0
    if res.stop_reason == "interrupted":
        note(req, f"interrupted at epoch {res.n_epochs:g}: the results written are "
                  f"certified at the point reached")
        if req.checkpoint:
            note(req, f"the checkpoint in {req.checkpoint} is the last scheduled one "
                      f"(epoch {load_state(req.checkpoint).epoch:g}); continue with "
                      f"--resume --checkpoint {req.checkpoint}")
        code = 130
    elif not res.converged:
        scales = "" if req.normalize or storage is None else scale_spread_note(X)
        note(req, f"stopped ({res.stop_reason}) before reaching tol: relative gap "
                  f"{res.rel_gap:.3e} > tol {res.tol:.1e}; "
                  + (f"{scales}; otherwise " if scales else "")
                  + "raise --max-epochs or tol")
    if req.json:
        print(json.dumps(summary))
        return code
    stored = (f", {storage} (density {nnz / (n * d):.3g})" if storage and n * d else "")
    print(f"data      {req.train}: n={n}, d={d}, nnz={nnz}{stored}")
    print(f"problem   loss={res.loss}, lam={res.lam:g}{_c_text(summary)}, l1={res.l1:g}"
          + (f", bias={req.bias:g}" if req.bias is not None else ""))
    where = f" on {req.scheduler}" if req.scheduler else ""
    print(f"solver    {res.solver}{where}: {res.n_epochs:g} epochs in {res.time:.3f} s "
          f"({res.stop_reason})")
    print(f"primal    {res.primal:.12g}")
    print(f"dual      {res.dual:.12g}")
    print(f"gap       {res.gap:.3e} (relative {res.rel_gap:.3e}, tol {res.tol:.1e}, "
          f"{'converged' if res.converged else 'NOT converged'})")
    if "test_accuracy" in summary:
        print(f"test      accuracy {summary['test_accuracy']:.6f} on {req.test}")
    if "test_rmse" in summary:
        print(f"test      rmse {summary['test_rmse']:.6g} on {req.test}")
    return code


def _fit_one_vs_rest(req, data, classes, cw):
    """More than two labels: one-vs-rest with :class:`primaldual.LinearClassifier`."""
    import time
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    if req.checkpoint or req.resume:
        raise ValueError(f"--checkpoint/--resume hold one solver state, but {req.train} "
                         f"has {classes.size} classes (one-vs-rest trains {classes.size} "
                         f"problems); drop --checkpoint for multiclass data")
    note(req, f"{classes.size} classes in {req.train} "
              f"({', '.join(format_label(v) for v in classes[:10])}"
              f"{', ...' if classes.size > 10 else ''}): one-vs-rest, one problem per class")
    X, y_raw, Xt, yt_raw = data.X, data.y_raw, data.Xt, data.yt_raw
    weights = sample_weights(req, y_raw, classes, cw)
    lam, W = lam_of(req, X.shape[0], weights)
    est = LinearClassifier(loss=req.loss.name, alpha=lam, l1=req.l1,
                           loss_params=req.solve_loss_params, tol=req.tol,
                           max_iter=req.max_epochs, fit_intercept=req.bias is not None,
                           intercept_scaling=req.bias if req.bias is not None else 1.0,
                           class_weight=cw, random_state=req.seed, solver=req.solver,
                           solver_options=dict(req.options) or None, n_jobs=req.jobs)
    t0 = time.perf_counter()
    # one Ctrl-C stops every class's fit (they share this flag, also on threads)
    with sigint_as_flag() as interrupt, warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y_raw)
    elapsed = time.perf_counter() - t0
    problems = []
    for k, cl in enumerate(classes):
        last = est.trace_[k][-1]
        problems.append({"class": format_label(cl), "primal": json_float(last["primal"]),
                         "dual": json_float(last["dual"]), "gap": json_float(est.gap_[k]),
                         "rel_gap": json_float(est.rel_gap_[k]),
                         "epochs": float(last["epoch"]),
                         "converged": bool(est.converged_[k])})
    n, d = X.shape
    nnz = nnz_of(X)
    storage = data.storage
    summary = {"solver": est.solver_, "loss": req.loss.name, "lam": float(lam),
               "l1": float(req.l1), "C": 1.0 / (lam * W), "weight_total": W,
               "n": int(n), "d": int(d), "nnz": nnz, "storage": storage,
               "classes": [sub["class"] for sub in problems],
               "epochs": float(sum(sub["epochs"] for sub in problems)), "time_s": elapsed,
               "primal": json_float(sum(last["primal"] for last in
                                        (t[-1] for t in est.trace_))),
               "dual": json_float(sum(t[-1]["dual"] for t in est.trace_)),
               "gap": json_float(float(np.sum(est.gap_))),
               "rel_gap": json_float(float(np.max(est.rel_gap_))),
               "converged": bool(np.all(est.converged_)), "tol": req.tol,
               "seed": req.seed, "bias": req.bias, "problems": problems}
    if Xt is not None:
        summary["test_accuracy"] = float(np.mean(est.predict(Xt) == yt_raw))
    if req.model:
        written = save_model(est, req.model, normalize_rows=req.normalize,
                             feature_index_base=data.index_base)
        note(req, f"model written to {written}")
    if req.trace:
        rows = [{"class": sub["class"], **rec} for sub, tr in zip(problems, est.trace_)
                for rec in tr]
        write_trace_csv(rows, req.trace)
        note(req, f"trace ({len(rows)} rows, column 'class') written to {req.trace}")
    if req.plot:
        plot_ovr_traces(est.trace_, [sub["class"] for sub in problems], req.plot,
                        title=f"{Path(req.train).name}: one-vs-rest, {est.solver_}, "
                              f"{req.loss.name}, lam={lam:g}")
        note(req, f"plot written to {req.plot}")
    bad = [sub["class"] for sub in problems if not sub["converged"]]
    code = 0
    if interrupt.is_set():
        note(req, "interrupted: every class's fit stopped; the results written are "
                  "certified at the points reached")
        code = 130
    elif bad:
        note(req, f"{len(bad)} of {len(problems)} problems stopped before reaching tol "
                  f"(classes {', '.join(bad[:10])}); raise --max-epochs or tol")
    if req.json:
        print(json.dumps(summary))
        return code
    print(f"data      {req.train}: n={n}, d={d}, nnz={nnz}, {storage} (density "
          f"{density(X):.3g}), {classes.size} classes")
    print(f"problem   loss={req.loss.name}, lam={lam:g}{_c_text(summary)}, l1={req.l1:g}"
          + (f", bias={req.bias:g}" if req.bias is not None else "")
          + ", one-vs-rest")
    print(f"solver    {est.solver_}: {summary['epochs']:g} epochs in total, "
          f"{elapsed:.3f} s")
    print(f"{'class':>10} {'primal':>16} {'dual':>16} {'gap':>10} {'rel gap':>10} "
          f"{'epochs':>7}  converged")
    for sub in problems:
        print(f"{sub['class']:>10} {sub['primal']:16.10g} {sub['dual']:16.10g} {sub['gap']:10.3e} "
              f"{sub['rel_gap']:10.3e} {sub['epochs']:7g}  {'yes' if sub['converged'] else 'NO'}")
    print(f"gap       {summary['gap']:.3e} in total (largest relative {summary['rel_gap']:.3e}, "
          f"tol {req.tol:.1e}, {'converged' if summary['converged'] else 'NOT converged'})")
    if "test_accuracy" in summary:
        print(f"test      accuracy {summary['test_accuracy']:.6f} on {req.test}")
    return code


_DASK_SOLVERS = ("cocoa", "minibatch_sdca")


def _fit_on_cluster(req):
    """``--scheduler``: part files on disk, one partition each, read by the workers."""
    solver = "cocoa" if req.solver == "auto" else req.solver
    if solver not in _DASK_SOLVERS:
        raise ValueError(f"--scheduler trains with {' or '.join(_DASK_SOLVERS)}; "
                         f"--solver {req.solver} does not run on Dask")
    for flag, bad in (("--class-weight", req.class_weight is not None),
                      ("--checkpoint", req.checkpoint is not None)):
        if bad:
            raise ValueError(f"{flag} is not available with --scheduler (the rows stay on "
                             f"the workers); train locally to use it")
    train = Path(req.train)
    existing = train.is_dir()
    if existing:
        if req.normalize:
            raise ValueError(f"--normalize cannot rescale the existing part files in "
                             f"{train}; give the LIBSVM file instead of the directory")
        parts = sorted(f for f in train.iterdir() if f.is_file()
                       and not f.name.startswith("."))
        if not parts:
            raise ValueError(f"{train} is a directory without part files")
        if req.partitions is not None and req.partitions != len(parts):
            raise ValueError(f"{train} holds {len(parts)} part files but --partitions "
                             f"{req.partitions} was given; drop --partitions")
    elif not train.is_file():
        raise FileNotFoundError(f"data file not found: {train}")

    opts = dict(req.options)
    Client = require("distributed", "--scheduler").Client
    try:
        client = Client(req.scheduler, timeout=opts.pop("connect_timeout", 30))
    except (OSError, TimeoutError) as e:
        raise OSError(f"--scheduler {req.scheduler}: cannot connect to the Dask scheduler "
                      f"({e}); start one with 'dask scheduler' and workers with "
                      f"'dask worker {req.scheduler}'") from None
    index_base = None
    try:
        n_workers = len(client.scheduler_info()["workers"])
        if n_workers == 0:
            raise ValueError(f"the Dask scheduler {req.scheduler} has no workers")
        n_features = None
        if not existing:
            k = req.partitions or n_workers
            out_dir = Path(req.parts_dir) if req.parts_dir else \
                train.with_name(train.name + ".parts")
            parts, n_features, index_base = split_libsvm(
                train, k, out_dir, normalize=req.normalize, with_base=True)
            note(req, f"{k} part files written to {out_dir}")
        if solver == "minibatch_sdca":
            opts.setdefault("sampling", "distributed")
        if req.time_limit is not None:
            opts["time_limit"] = req.time_limit
        try:
            pp = PartitionedProblem.from_files(
                client, [str(path.resolve()) for path in parts], loss=req.loss.name,
                lam=req.lam, l1=req.l1, loss_params=req.solve_loss_params,
                n_features=n_features, intercept_scaling=req.bias,
                round_timeout=float(opts.get("round_timeout", 120.0)))
        except ValueError as e:
            if "more than two label values" in str(e) or "parts hold the labels" in str(e):
                raise ValueError(f"{req.train}: more than two label values; --scheduler "
                                 f"trains binary classification and regression. Train "
                                 f"one-vs-rest locally (drop --scheduler)") from None
            raise
        opts.setdefault("n_partitions", pp.n_parts)
        res = SOLVERS[solver].create(pp, tol=req.tol, max_epochs=req.max_epochs,
                                     random_state=req.seed, **opts).run()
        classes = np.array(pp.label_map) if pp.label_map is not None else None
        if classes is not None:
            note(req, f"labels: {format_label(classes[0])} -> -1, "
                      f"{format_label(classes[1])} -> +1")
        d = pp.n_data_features
    finally:
        client.close()

    class _Shape:                       # what finish_fit reads of the training data
        shape = (pp.n, d)

    Xt = yt = None
    if req.test:
        ((Xt, yt_raw),) = read_libsvm([req.test], n_features=d,
                                      zero_based="auto" if index_base is None
                                      else index_base == 0)
        if req.normalize:
            from sklearn.preprocessing import normalize
            Xt = normalize(Xt, norm="l2")
        yt = yt_raw
        if classes is not None:
            unknown = np.setdiff1d(np.unique(yt_raw), classes)
            if unknown.size:
                raise ValueError(f"{req.test}: labels {[format_label(v) for v in unknown[:5]]}"
                                 f" do not occur in the training parts")
            yt = encode_pm1(yt_raw, classes[1], classes[0], source=req.test)
    coef, intercept = split_bias(res.coef, req.bias)
    return finish_fit(req, res, _Shape(), Xt, yt, coef, intercept, classes, W=float(pp.n),
                      index_base=index_base,
                      nnz=pp.nnz - (pp.n if req.bias is not None else 0),
                      extra={"partitions": int(pp.n_parts), "scheduler": req.scheduler})
