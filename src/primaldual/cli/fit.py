"""``primaldual fit``: one model (two labels or a regression), one-vs-rest for
more labels, or a fit on a running Dask cluster from part files."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

import primaldual

from .._extras import have, require
from .._util import encode_pm1
from .._util.scales import scale_spread_note
from .._util.interrupts import sigint_as_flag
from ..distributed.partitioned import PartitionedProblem
from ..estimators import LinearClassifier, combined_weights
from ..model_io import LinearModel, save_model
from ..solvers import SOLVERS, load_state
from .common import (_class_weight_for, _classes_of, _note, _read_train_test,
                     _run_options, _split_bias, _with_bias)
from .files import (_finite, _format_label, plot_ovr_traces, plot_trace, read_libsvm,
                    split_libsvm, write_trace_csv)
from .parser import _check_common


def cmd_fit(args) -> int:
    loss, loss_params, options = _check_common(args)
    if args.resume and not args.checkpoint:
        raise ValueError("--resume needs --checkpoint DIR (the directory holding "
                         "state.npz)")
    if args.checkpoint_every <= 0 or not math.isfinite(args.checkpoint_every):
        raise ValueError(f"--checkpoint-every must be > 0, got {args.checkpoint_every}")
    if args.resume:
        state = Path(args.checkpoint) / "state.npz"
        if not state.is_file():
            raise FileNotFoundError(f"--resume: no checkpoint {state}; run once with "
                                    f"--checkpoint {args.checkpoint} (without --resume)")
    if args.scheduler is None:
        for flag, val in (("--partitions", args.partitions), ("--parts-dir", args.parts_dir)):
            if val is not None:
                raise ValueError(f"{flag} is used with --scheduler ADDRESS (training on a "
                                 f"Dask cluster); give --scheduler too, or drop {flag}")
    else:
        return _fit_on_cluster(args, loss, loss_params, options)
    if args.plot:
        require("matplotlib", "--plot")        # before the fit, not after it

    X, y_raw, Xt, yt_raw = _read_train_test(args)
    classes, weights, y, yt = None, None, y_raw, yt_raw
    if loss.classification:
        classes = _classes_of(y_raw, loss.name, args.train)
        if Xt is not None:
            unknown = np.setdiff1d(np.unique(yt_raw), classes)
            if unknown.size:
                shown = ", ".join(_format_label(v) for v in classes[:10])
                raise ValueError(
                    f"{args.test}: labels {[_format_label(v) for v in unknown[:5]]} do not "
                    f"occur in {args.train} (labels {shown}); use a test file with the "
                    f"same labels")
        cw = _class_weight_for(args.class_weight, classes, args.train)
        if classes.size > 2:
            return _fit_one_vs_rest(args, loss, loss_params, options, X, y_raw, Xt,
                                    yt_raw, classes, cw)
        _note(args, f"labels of {args.train}: {_format_label(classes[0])} -> -1, "
                    f"{_format_label(classes[1])} -> +1")
        y = encode_pm1(y_raw, classes[1], classes[0], source=args.train)
        yt = None if Xt is None else encode_pm1(yt_raw, classes[1], classes[0],
                                                source=args.test)
        if cw is not None:
            weights = combined_weights(y_raw, classes, np.ones(y_raw.shape[0]), cw)
            _note(args, "class weights: " + ", ".join(
                f"{_format_label(c)} -> {weights[y_raw == c][0]:.6g}" for c in classes))

    options = _run_options(args, options)
    Xb, Xtb = _with_bias(X, args.bias), _with_bias(Xt, args.bias)
    res = primaldual.solve(Xb, y, loss=loss.name, lam=args.lam, solver=args.solver,
                           tol=args.tol, max_epochs=args.max_epochs,
                           random_state=args.seed, sample_weight=weights, l1=args.l1,
                           loss_params=loss_params or None,
                           eval_set=(Xtb, yt) if Xt is not None else None,
                           n_jobs=None if args.jobs == 1 else args.jobs, **options)
    coef, intercept = _split_bias(res.coef, args.bias)
    return _finish_fit(args, loss, res, X, Xt, yt, coef, intercept, classes)


def _summary(args, res, n, d, nnz):
    return {"solver": res.solver, "loss": res.loss, "lam": res.lam, "l1": res.l1,
            "n": int(n), "d": int(d), "nnz": int(nnz), "epochs": res.n_epochs,
            "time_s": res.time, "primal": _finite(res.primal), "dual": _finite(res.dual),
            "gap": _finite(res.gap), "rel_gap": _finite(res.rel_gap),
            "converged": bool(res.converged), "stop_reason": res.stop_reason,
            "tol": res.tol, "seed": args.seed, "bias": args.bias}


def _finish_fit(args, loss, res, X, Xt, yt, coef, intercept, classes, extra=None):
    """Summary, model, trace, plot and the printed report of a single-problem fit."""

    n, d = X.shape
    summary = _summary(args, res, n, d, X.nnz)
    if extra:
        summary.update(extra)
    if Xt is not None:
        score = np.asarray(Xt @ coef, dtype=np.float64).ravel() + intercept
        if loss.classification:
            pred = np.where(score > 0, 1.0, -1.0)
            summary["test_accuracy"] = float(np.mean(pred == yt))
        else:
            summary["test_rmse"] = float(np.sqrt(np.mean((score - yt) ** 2)))
    if args.model:
        model = LinearModel(
            kind="classifier" if loss.classification else "regressor",
            coef=coef.reshape(1, -1), intercept=np.array([intercept]),
            classes=(np.asarray(classes, dtype=np.float64) if loss.classification
                     else np.zeros(0)),
            loss=loss.name, loss_params=loss.params, lam=float(res.lam), l1=float(res.l1),
            fit_intercept=args.bias is not None,
            intercept_scaling=float(args.bias) if args.bias is not None else 1.0,
            normalize_rows=bool(args.normalize),
            feature_index_base=getattr(args, "index_base", None), primal=float(res.primal),
            dual=float(res.dual), gap=float(res.gap))
        written = save_model(model, args.model)
        _note(args, f"model written to {written}")
    if args.trace:
        write_trace_csv(res.trace, args.trace)
        _note(args, f"trace ({len(res.trace)} rows) written to {args.trace}")
    if args.plot:
        plot_trace(res.trace, args.plot,
                   title=f"{Path(args.train).name}: {res.solver}, {res.loss}, "
                         f"lam={res.lam:g}")
        _note(args, f"plot written to {args.plot}")
    code = 0
    if res.stop_reason == "interrupted":
        _note(args, f"interrupted at epoch {res.n_epochs:g}: the results written are "
                    f"certified at the point reached")
        if getattr(args, "checkpoint", None):
            _note(args, f"the checkpoint in {args.checkpoint} is the last scheduled one "
                        f"(epoch {load_state(args.checkpoint).epoch:g}); continue with "
                        f"--resume --checkpoint {args.checkpoint}")
        code = 130
    elif not res.converged:
        scales = "" if getattr(args, "normalize", False) else scale_spread_note(X)
        _note(args, f"stopped ({res.stop_reason}) before reaching tol: relative gap "
                    f"{res.rel_gap:.3e} > tol {res.tol:.1e}; "
                    + (f"{scales}; otherwise " if scales else "")
                    + "raise --max-epochs or tol")
    if args.json:
        print(json.dumps(summary))
        return code
    print(f"data      {args.train}: n={n}, d={d}, nnz={X.nnz}")
    print(f"problem   loss={res.loss}, lam={res.lam:g}, l1={res.l1:g}"
          + (f", bias={args.bias:g}" if args.bias is not None else ""))
    where = f" on {args.scheduler}" if getattr(args, "scheduler", None) else ""
    print(f"solver    {res.solver}{where}: {res.n_epochs:g} epochs in {res.time:.3f} s "
          f"({res.stop_reason})")
    print(f"primal    {res.primal:.12g}")
    print(f"dual      {res.dual:.12g}")
    print(f"gap       {res.gap:.3e} (relative {res.rel_gap:.3e}, tol {res.tol:.1e}, "
          f"{'converged' if res.converged else 'NOT converged'})")
    if "test_accuracy" in summary:
        print(f"test      accuracy {summary['test_accuracy']:.6f} on {args.test}")
    if "test_rmse" in summary:
        print(f"test      rmse {summary['test_rmse']:.6g} on {args.test}")
    return code


def _fit_one_vs_rest(args, loss, loss_params, options, X, y_raw, Xt, yt_raw, classes, cw):
    """More than two labels: one-vs-rest with :class:`primaldual.LinearClassifier`."""
    import time
    import warnings

    from sklearn.exceptions import ConvergenceWarning


    if args.checkpoint or args.resume:
        raise ValueError(f"--checkpoint/--resume hold one solver state, but {args.train} "
                         f"has {classes.size} classes (one-vs-rest trains {classes.size} "
                         f"problems); drop --checkpoint for multiclass data")
    _note(args, f"{classes.size} classes in {args.train} "
                f"({', '.join(_format_label(v) for v in classes[:10])}"
                f"{', ...' if classes.size > 10 else ''}): one-vs-rest, one problem per class")
    if cw is not None:
        w = combined_weights(y_raw, classes, np.ones(y_raw.shape[0]), cw)
        _note(args, "class weights: " + ", ".join(
            f"{_format_label(c)} -> {w[y_raw == c][0]:.6g}" for c in classes))
    options = _run_options(args, options)
    est = LinearClassifier(loss=loss.name, alpha=args.lam, l1=args.l1,
                           loss_params=loss_params or None, tol=args.tol,
                           max_iter=args.max_epochs, fit_intercept=args.bias is not None,
                           intercept_scaling=args.bias if args.bias is not None else 1.0,
                           class_weight=cw, random_state=args.seed, solver=args.solver,
                           solver_options=options or None, n_jobs=args.jobs)
    t0 = time.perf_counter()
    # one Ctrl-C stops every class's fit (they share this flag, also on threads)
    with sigint_as_flag() as interrupt, warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y_raw)
    elapsed = time.perf_counter() - t0
    problems = []
    for k, cl in enumerate(classes):
        last = est.trace_[k][-1]
        problems.append({"class": _format_label(cl), "primal": _finite(last["primal"]),
                         "dual": _finite(last["dual"]), "gap": _finite(est.gap_[k]),
                         "rel_gap": _finite(est.rel_gap_[k]),
                         "epochs": float(last["epoch"]),
                         "converged": bool(est.converged_[k])})
    n, d = X.shape
    summary = {"solver": est.solver_, "loss": loss.name, "lam": float(args.lam),
               "l1": float(args.l1), "n": int(n), "d": int(d), "nnz": int(X.nnz),
               "classes": [sub["class"] for sub in problems],
               "epochs": float(sum(sub["epochs"] for sub in problems)), "time_s": elapsed,
               "primal": _finite(sum(last["primal"] for last in
                                     (t[-1] for t in est.trace_))),
               "dual": _finite(sum(t[-1]["dual"] for t in est.trace_)),
               "gap": _finite(float(np.sum(est.gap_))),
               "rel_gap": _finite(float(np.max(est.rel_gap_))),
               "converged": bool(np.all(est.converged_)), "tol": args.tol,
               "seed": args.seed, "bias": args.bias, "problems": problems}
    if Xt is not None:
        summary["test_accuracy"] = float(np.mean(est.predict(Xt) == yt_raw))
    if args.model:
        written = save_model(est, args.model, normalize_rows=args.normalize,
                             feature_index_base=args.index_base)
        _note(args, f"model written to {written}")
    if args.trace:
        rows = [{"class": sub["class"], **rec} for sub, tr in zip(problems, est.trace_)
                for rec in tr]
        write_trace_csv(rows, args.trace)
        _note(args, f"trace ({len(rows)} rows, column 'class') written to {args.trace}")
    if args.plot:
        plot_ovr_traces(est.trace_, [sub["class"] for sub in problems], args.plot,
                        title=f"{Path(args.train).name}: one-vs-rest, {est.solver_}, "
                              f"{loss.name}, lam={args.lam:g}")
        _note(args, f"plot written to {args.plot}")
    bad = [sub["class"] for sub in problems if not sub["converged"]]
    code = 0
    if interrupt.is_set():
        _note(args, "interrupted: every class's fit stopped; the results written are "
                    "certified at the points reached")
        code = 130
    elif bad:
        _note(args, f"{len(bad)} of {len(problems)} problems stopped before reaching tol "
                    f"(classes {', '.join(bad[:10])}); raise --max-epochs or tol")
    if args.json:
        print(json.dumps(summary))
        return code
    print(f"data      {args.train}: n={n}, d={d}, nnz={X.nnz}, {classes.size} classes")
    print(f"problem   loss={loss.name}, lam={args.lam:g}, l1={args.l1:g}"
          + (f", bias={args.bias:g}" if args.bias is not None else "")
          + ", one-vs-rest")
    print(f"solver    {est.solver_}: {summary['epochs']:g} epochs in total, "
          f"{elapsed:.3f} s")
    print(f"{'class':>10} {'primal':>16} {'dual':>16} {'gap':>10} {'rel gap':>10} "
          f"{'epochs':>7}  converged")
    for sub in problems:
        print(f"{sub['class']:>10} {sub['primal']:16.10g} {sub['dual']:16.10g} {sub['gap']:10.3e} "
              f"{sub['rel_gap']:10.3e} {sub['epochs']:7g}  {'yes' if sub['converged'] else 'NO'}")
    print(f"gap       {summary['gap']:.3e} in total (largest relative {summary['rel_gap']:.3e}, "
          f"tol {args.tol:.1e}, {'converged' if summary['converged'] else 'NOT converged'})")
    if "test_accuracy" in summary:
        print(f"test      accuracy {summary['test_accuracy']:.6f} on {args.test}")
    return code


_DASK_SOLVERS = ("cocoa", "minibatch_sdca")


def _fit_on_cluster(args, loss, loss_params, options):
    """``--scheduler``: part files on disk, one partition each, read by the workers."""

    solver = "cocoa" if args.solver == "auto" else args.solver
    if solver not in _DASK_SOLVERS:
        raise ValueError(f"--scheduler trains with {' or '.join(_DASK_SOLVERS)}; "
                         f"--solver {args.solver} does not run on Dask")
    for flag, bad in (("--class-weight", args.class_weight is not None),
                      ("--checkpoint", args.checkpoint is not None)):
        if bad:
            raise ValueError(f"{flag} is not available with --scheduler (the rows stay on "
                             f"the workers); train locally to use it")
    if args.partitions is not None and args.partitions < 1:
        raise ValueError(f"--partitions must be >= 1, got {args.partitions}")
    train = Path(args.train)
    existing = train.is_dir()
    if existing:
        if args.normalize:
            raise ValueError(f"--normalize cannot rescale the existing part files in "
                             f"{train}; give the LIBSVM file instead of the directory")
        parts = sorted(f for f in train.iterdir() if f.is_file()
                       and not f.name.startswith("."))
        if not parts:
            raise ValueError(f"{train} is a directory without part files")
        if args.partitions is not None and args.partitions != len(parts):
            raise ValueError(f"{train} holds {len(parts)} part files but --partitions "
                             f"{args.partitions} was given; drop --partitions")
    elif not train.is_file():
        raise FileNotFoundError(f"data file not found: {train}")

    Client = require("distributed", "--scheduler").Client
    try:
        client = Client(args.scheduler, timeout=options.pop("connect_timeout", 30))
    except (OSError, TimeoutError) as e:
        raise OSError(f"--scheduler {args.scheduler}: cannot connect to the Dask scheduler "
                      f"({e}); start one with 'dask scheduler' and workers with "
                      f"'dask worker {args.scheduler}'") from None
    try:
        n_workers = len(client.scheduler_info()["workers"])
        if n_workers == 0:
            raise ValueError(f"the Dask scheduler {args.scheduler} has no workers")
        n_features = None
        if not existing:
            k = args.partitions or n_workers
            out_dir = Path(args.parts_dir) if args.parts_dir else \
                train.with_name(train.name + ".parts")
            parts, n_features, args.index_base = split_libsvm(
                train, k, out_dir, normalize=args.normalize, with_base=True)
            _note(args, f"{k} part files written to {out_dir}")
        opts = dict(options)
        if solver == "minibatch_sdca":
            opts.setdefault("sampling", "distributed")
        opts["progress"] = opts.get("progress", sys.stdout.isatty() and not args.quiet
                                    and have("tqdm"))
        if args.time_limit is not None:
            opts["time_limit"] = args.time_limit
        try:
            pp = PartitionedProblem.from_files(
                client, [str(path.resolve()) for path in parts], loss=loss.name, lam=args.lam,
                l1=args.l1, loss_params=loss_params or None, n_features=n_features,
                intercept_scaling=args.bias,
                round_timeout=float(opts.get("round_timeout", 120.0)))
        except ValueError as e:
            if "more than two label values" in str(e) or "parts hold the labels" in str(e):
                raise ValueError(f"{args.train}: more than two label values; --scheduler "
                                 f"trains binary classification and regression. Train "
                                 f"one-vs-rest locally (drop --scheduler)") from None
            raise
        opts.setdefault("n_partitions", pp.n_parts)
        res = SOLVERS[solver].create(pp, tol=args.tol, max_epochs=args.max_epochs,
                                     random_state=args.seed, **opts).run()
        classes = np.array(pp.label_map) if pp.label_map is not None else None
        if classes is not None:
            _note(args, f"labels: {_format_label(classes[0])} -> -1, "
                        f"{_format_label(classes[1])} -> +1")
        d = pp.n_data_features
    finally:
        client.close()

    class _Shape:                       # what _finish_fit reads of the training data
        shape = (pp.n, d)
        nnz = pp.nnz - (pp.n if args.bias is not None else 0)

    Xt = yt = None
    if args.test:
        base = getattr(args, "index_base", None)
        ((Xt, yt_raw),) = read_libsvm([args.test], n_features=d,
                                      zero_based="auto" if base is None else base == 0)
        if args.normalize:
            from sklearn.preprocessing import normalize
            Xt = normalize(Xt, norm="l2")
        yt = yt_raw
        if classes is not None:
            unknown = np.setdiff1d(np.unique(yt_raw), classes)
            if unknown.size:
                raise ValueError(f"{args.test}: labels {[_format_label(v) for v in unknown[:5]]}"
                                 f" do not occur in the training parts")
            yt = encode_pm1(yt_raw, classes[1], classes[0], source=args.test)
    coef, intercept = _split_bias(res.coef, args.bias)
    return _finish_fit(args, loss, res, _Shape(), Xt, yt, coef, intercept, classes,
                       extra={"partitions": int(pp.n_parts), "scheduler": args.scheduler})
