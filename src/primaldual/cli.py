"""The ``primaldual`` command line (GUIDE §4).

::

    primaldual fit TRAIN [--test TEST] [--loss NAME] [--loss-param KEY=VALUE] [--lam X]
                   [--l1 X] [--solver NAME] [--option KEY=VALUE ...] [--tol X]
                   [--max-epochs N] [--time-limit S] [--seed N] [--normalize]
                   [--model OUT.npz] [--trace OUT.csv] [--plot OUT.png]
                   [--checkpoint DIR] [--checkpoint-every K] [--resume] [--json] [--quiet]
    primaldual predict MODEL DATA [--json]
    primaldual info DATA [--json]
    primaldual bench ...     (dispatches to primaldual.bench.cli.main)
    primaldual demo ...      (dispatches to primaldual.demo.main)

Data files are LIBSVM/svmlight text, plain or compressed (``.gz``, ``.bz2``,
``.xz``), parsed by :func:`primaldual.datasets.load_svmlight_files`, whose
errors name the file and the line.  ``fit`` calls :func:`primaldual.solve`
with exactly the arguments given, so its JSON summary equals ``solve()`` run
on the same data with the same seed.  Errors go to stderr as
``primaldual <command>: error: <message>`` with exit code 1 (2 for usage
errors, as argparse does).  See ``docs/cli.md``.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
from pathlib import Path

import numpy as np

__all__ = ["main", "build_parser", "parse_value", "read_libsvm", "encode_binary_labels"]

#: solve() options that have their own flag; ``--option`` may not set them
_FLAG_OPTIONS = {"time_limit": "--time-limit", "checkpoint": "--checkpoint",
                 "checkpoint_every": "--checkpoint-every", "resume": "--resume",
                 "warm_start": None}


# ------------------------------------------------------------------ parsing
def parse_value(text: str):
    """``KEY=VALUE`` values: int, then float, then bool/None words, else the string."""
    low = text.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _key_value(text: str, flag: str):
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"{flag} expects KEY=VALUE, got {text!r} (for example "
                         f"{'--loss-param gamma=0.5' if flag == '--loss-param' else '--option sampling=uniform'})")
    return key.replace("-", "_"), parse_value(value)


def _pairs(items, flag):
    out = {}
    for text in items or ():
        key, value = _key_value(text, flag)
        if key in out:
            raise ValueError(f"{flag} {key} is given twice; give it once")
        out[key] = value
    return out


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="primaldual",
        description="Certified stochastic primal-dual solvers for regularized linear "
                    "models. Every fit reports the exact primal, dual and duality gap.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    f = sub.add_parser("fit", help="fit a model on a LIBSVM file",
                       description="Minimize (1/n) sum_i phi(x_i.w; y_i) + lam/2 ||w||^2 "
                                   "+ l1 ||w||_1 and report the certificate.")
    f.add_argument("train", metavar="TRAIN", help="training data (LIBSVM, .gz/.bz2 ok)")
    f.add_argument("--test", metavar="TEST", help="test data: adds test_accuracy or "
                   "test_rmse to the summary and test_error/test_rmse to the trace")
    f.add_argument("--loss", default="hinge", metavar="NAME",
                   help="hinge, smooth_hinge, squared_hinge, logistic, squared, absolute, "
                        "epsilon_insensitive (default hinge)")
    f.add_argument("--loss-param", action="append", metavar="KEY=VALUE",
                   help="loss parameter, e.g. gamma=0.5 or epsilon=0.1 (repeatable)")
    f.add_argument("--lam", type=float, default=1e-4, metavar="X",
                   help="L2 strength lam > 0 (default 1e-4)")
    f.add_argument("--l1", type=float, default=0.0, metavar="X",
                   help="L1 strength >= 0 (default 0)")
    f.add_argument("--solver", default="auto", metavar="NAME",
                   help="solver name, or auto (default)")
    f.add_argument("--option", action="append", metavar="KEY=VALUE",
                   help="solver option, value parsed as int/float/bool/str (repeatable)")
    f.add_argument("--tol", type=float, default=1e-6, metavar="X",
                   help="stop at relative duality gap <= X (default 1e-6)")
    f.add_argument("--max-epochs", type=float, default=100, metavar="N",
                   help="passes over the data (default 100)")
    f.add_argument("--time-limit", type=float, default=None, metavar="S",
                   help="wall-clock limit in seconds")
    f.add_argument("--seed", type=int, default=0, metavar="N",
                   help="random seed (default 0)")
    f.add_argument("--normalize", action="store_true",
                   help="scale every row (train and test) to unit L2 norm")
    f.add_argument("--model", metavar="OUT.npz", help="write the model file")
    f.add_argument("--trace", metavar="OUT.csv", help="write one CSV row per gap check")
    f.add_argument("--plot", metavar="OUT.png",
                   help="plot primal, dual and gap against epochs and seconds")
    f.add_argument("--checkpoint", metavar="DIR",
                   help="write the solver state to DIR/state.npz (atomically)")
    f.add_argument("--checkpoint-every", type=float, default=1.0, metavar="K",
                   help="epochs between checkpoints (default 1)")
    f.add_argument("--resume", action="store_true",
                   help="continue from the checkpoint in --checkpoint DIR")
    f.add_argument("--json", action="store_true",
                   help="print the summary as one JSON object (last stdout line)")
    f.add_argument("--quiet", action="store_true",
                   help="no progress bar and no notes on stderr")

    pr = sub.add_parser("predict", help="predict with a model file",
                        description="Print one prediction per line (original label "
                                    "values for classifiers).")
    pr.add_argument("model", metavar="MODEL", help="model file written by fit --model")
    pr.add_argument("data", metavar="DATA", help="LIBSVM file")
    pr.add_argument("--json", action="store_true",
                    help="end with a JSON line: n and accuracy or rmse")

    i = sub.add_parser("info", help="describe a LIBSVM file")
    i.add_argument("data", metavar="DATA", help="LIBSVM file")
    i.add_argument("--json", action="store_true", help="print one JSON object")

    sub.add_parser("bench", help="benchmarks: solvers and peers side by side "
                                 "(primaldual bench --help)", add_help=False)
    sub.add_parser("demo", help="the main job on shipped or generated data "
                                "(primaldual demo --help)", add_help=False)
    return p


# --------------------------------------------------------------------- data
def read_libsvm(paths, n_features=None):
    """Parse LIBSVM files into CSR matrices with one shared column count.

    Returns ``[(X, y_raw), ...]``.  Non-finite values are refused with the
    file and sample named; an empty file is refused.
    """
    from .datasets import load_svmlight_files

    parts = load_svmlight_files([str(p) for p in paths], n_features=n_features)
    out = []
    for path, X, y in zip(paths, parts[0::2], parts[1::2]):
        if X.shape[0] == 0:
            raise ValueError(f"{path}: the file has no samples (empty input); give a "
                             f"LIBSVM file with at least one 'label index:value ...' line")
        if not np.isfinite(y).all():
            i = int(np.flatnonzero(~np.isfinite(y))[0])
            raise ValueError(f"{path}: the label of sample {i + 1} is {float(y[i])!r}; labels "
                             f"must be finite numbers, fix that line of the file")
        if not np.isfinite(X.data).all():
            k = int(np.flatnonzero(~np.isfinite(X.data))[0])
            i = int(np.searchsorted(X.indptr, k, side="right") - 1)
            raise ValueError(f"{path}: sample {i + 1} has the value {float(X.data[k])!r} at "
                             f"feature {int(X.indices[k]) + 1}; feature values must be "
                             f"finite, fix or remove that entry")
        out.append((X, y))
    return out


def encode_binary_labels(y_raw, loss_name, source):
    """Map two distinct labels to -1/+1 (the larger becomes +1).

    Returns ``(y, classes)`` with ``classes = [negative, positive]``.
    """
    values = np.unique(y_raw)
    if values.size == 1:
        raise ValueError(f"{source}: every sample has the label {values[0]:g}, a single "
                         f"class; loss={loss_name!r} is a classification loss and needs "
                         f"two classes. Use data with both classes (or a regression loss "
                         f"such as --loss squared)")
    if values.size > 2:
        shown = ", ".join(f"{v:g}" for v in values[:6]) + (", ..." if values.size > 6
                                                           else "")
        raise ValueError(f"{source}: {values.size} distinct labels ({shown}) but "
                         f"loss={loss_name!r} is a binary classification loss that needs "
                         f"two; keep two classes, or use LinearClassifier (one-vs-rest) "
                         f"from Python, or a regression loss such as --loss squared")
    neg, pos = float(values[0]), float(values[1])
    return np.where(y_raw == pos, 1.0, -1.0), np.array([neg, pos])


def _format_label(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 2 ** 53 else repr(float(v))


def _finite(v):
    """JSON-safe float: non-finite values become None."""
    v = float(v)
    return v if math.isfinite(v) else None


def _atomic_write_text(path, text):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "w", newline="") as fh:
        fh.write(text)
    os.replace(tmp, path)


# ---------------------------------------------------------- trace and plot
def write_trace_csv(trace, path):
    """One row per gap check; the columns are every key of every record, in order."""
    import io

    keys = []
    for rec in trace:
        for k in rec:
            if k not in keys:
                keys.append(k)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=keys, lineterminator="\n")
    w.writeheader()
    for rec in trace:
        w.writerow({k: rec.get(k, "") for k in keys})
    _atomic_write_text(path, buf.getvalue())


def plot_trace(trace, path, title=""):
    """PNG with two panels: primal, dual and gap against epochs and against seconds.

    The y axes are logarithmic; values <= 0 (e.g. the dual at alpha = 0) are
    left out of the log scale by matplotlib.  Uses the Agg canvas directly
    (no pyplot, no global backend change).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    epochs = np.array([r["epoch"] for r in trace], dtype=float)
    secs = np.array([r["time"] for r in trace], dtype=float)
    series = {"primal P(w)": np.array([r["primal"] for r in trace], dtype=float),
              "dual D(alpha)": np.array([r["dual"] for r in trace], dtype=float),
              "gap P - D": np.array([r["gap"] for r in trace], dtype=float)}
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2)
    for ax, x, label in ((axes[0], epochs, "epochs"), (axes[1], secs, "seconds")):
        for name, vals in series.items():
            keep = vals > 0
            style = "--" if name.startswith("gap") else "-"
            ax.plot(x[keep], vals[keep], style, marker=".", label=name)
        ax.set_yscale("log")
        ax.set_xlabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("objective (log scale)")
    axes[0].legend()
    if title:
        fig.suptitle(title)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}.png")
    fig.savefig(tmp, format="png", dpi=100)
    os.replace(tmp, path)


# --------------------------------------------------------------- commands
def _note(args, msg):
    if not getattr(args, "quiet", False):
        print(f"primaldual {args.command}: {msg}", file=sys.stderr)


def cmd_fit(args) -> int:
    import primaldual
    from .losses import make_loss
    from .penalties import make_penalty
    from .solvers import KNOWN_SOLVERS, SOLVERS

    loss_params = _pairs(args.loss_param, "--loss-param")
    # validate what needs no data before reading it
    loss = make_loss(args.loss, loss_params or None)
    make_penalty(args.lam, args.l1, allow_pure_l1=True)
    if args.solver not in KNOWN_SOLVERS and args.solver not in SOLVERS:
        raise ValueError(f"unknown solver {args.solver!r}; choose one of "
                         f"{', '.join(sorted(set(SOLVERS) | {'auto'}))}")
    options = _pairs(args.option, "--option")
    for key, flag in _FLAG_OPTIONS.items():
        if key in options:
            hint = f"use {flag}" if flag else "it is not available from the command line"
            raise ValueError(f"--option {key} is not accepted here: {hint}")
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

    paths = [args.train] + ([args.test] if args.test else [])
    parts = read_libsvm(paths)
    X, y_raw = parts[0]
    Xt, yt_raw = parts[1] if args.test else (None, None)
    if args.normalize:
        from sklearn.preprocessing import normalize
        X = normalize(X, norm="l2")
        Xt = normalize(Xt, norm="l2") if Xt is not None else None
    classes = None
    y, yt = y_raw, yt_raw
    if loss.classification:
        y, classes = encode_binary_labels(y_raw, loss.name, args.train)
        _note(args, f"labels of {args.train}: {_format_label(classes[0])} -> -1, "
                    f"{_format_label(classes[1])} -> +1")
        if Xt is not None:
            unknown = np.setdiff1d(np.unique(yt_raw), classes)
            if unknown.size:
                raise ValueError(
                    f"{args.test}: labels {[_format_label(v) for v in unknown[:5]]} do not "
                    f"occur in {args.train} (labels {_format_label(classes[0])}, "
                    f"{_format_label(classes[1])}); use a test file with the same labels")
            yt = np.where(yt_raw == classes[1], 1.0, -1.0)

    if "progress" not in options:
        options["progress"] = sys.stdout.isatty() and not args.quiet
    if args.checkpoint:
        options["checkpoint"] = args.checkpoint
        options["checkpoint_every"] = args.checkpoint_every
    if args.resume:
        options["resume"] = args.checkpoint
    if args.time_limit is not None:
        options["time_limit"] = args.time_limit

    res = primaldual.solve(X, y, loss=loss.name, lam=args.lam, solver=args.solver,
                           tol=args.tol, max_epochs=args.max_epochs,
                           random_state=args.seed, l1=args.l1,
                           loss_params=loss_params or None,
                           eval_set=(Xt, yt) if Xt is not None else None, **options)

    n, d = X.shape
    summary = {"solver": res.solver, "loss": res.loss, "lam": res.lam, "l1": res.l1,
               "n": int(n), "d": int(d), "nnz": int(X.nnz), "epochs": res.n_epochs,
               "time_s": res.time, "primal": _finite(res.primal), "dual": _finite(res.dual),
               "gap": _finite(res.gap), "rel_gap": _finite(res.rel_gap),
               "converged": bool(res.converged), "stop_reason": res.stop_reason,
               "tol": res.tol, "seed": args.seed}
    if Xt is not None:
        score = np.asarray(Xt @ res.coef, dtype=np.float64).ravel()
        if loss.classification:
            pred = np.where(score > 0, 1.0, -1.0)
            summary["test_accuracy"] = float(np.mean(pred == yt))
        else:
            summary["test_rmse"] = float(np.sqrt(np.mean((score - yt) ** 2)))

    if args.model:
        from .model_io import save_model
        written = save_model(res, args.model, classes=classes,
                             loss_params=loss.params, normalize_rows=args.normalize)
        _note(args, f"model written to {written}")
    if args.trace:
        write_trace_csv(res.trace, args.trace)
        _note(args, f"trace ({len(res.trace)} rows) written to {args.trace}")
    if args.plot:
        plot_trace(res.trace, args.plot,
                   title=f"{Path(args.train).name}: {res.solver}, {res.loss}, "
                         f"lam={res.lam:g}")
        _note(args, f"plot written to {args.plot}")
    if not res.converged:
        _note(args, f"stopped ({res.stop_reason}) before reaching tol: relative gap "
                    f"{res.rel_gap:.3e} > tol {res.tol:.1e}; raise --max-epochs or tol")

    if args.json:
        print(json.dumps(summary))
    else:
        print(f"data      {args.train}: n={n}, d={d}, nnz={X.nnz}")
        print(f"problem   loss={res.loss}, lam={res.lam:g}, l1={res.l1:g}")
        print(f"solver    {res.solver}: {res.n_epochs:g} epochs in {res.time:.3f} s "
              f"({res.stop_reason})")
        print(f"primal    {res.primal:.12g}")
        print(f"dual      {res.dual:.12g}")
        print(f"gap       {res.gap:.3e} (relative {res.rel_gap:.3e}, tol {res.tol:.1e}, "
              f"{'converged' if res.converged else 'NOT converged'})")
        if "test_accuracy" in summary:
            print(f"test      accuracy {summary['test_accuracy']:.6f} on {args.test}")
        if "test_rmse" in summary:
            print(f"test      rmse {summary['test_rmse']:.6g} on {args.test}")
    return 0


def cmd_predict(args) -> int:
    from .datasets import DataFormatError
    from .model_io import read_model

    model = read_model(args.model)
    try:
        ((X, y),) = read_libsvm([args.data], n_features=model.n_features)
    except DataFormatError as e:
        raise DataFormatError(f"{e} [the model {args.model} has {model.n_features} "
                              f"features; DATA must use feature indices 1..{model.n_features}]",
                              path=e.path, lineno=e.lineno) from None
    pred = model.predict(X)
    fmt = _format_label if model.kind == "classifier" else (lambda v: repr(float(v)))
    sys.stdout.write("".join(fmt(v) + "\n" for v in pred))
    if args.json:
        out = {"n": int(X.shape[0])}
        if model.kind == "classifier":
            out["accuracy"] = float(np.mean(pred == y))
            unknown = np.setdiff1d(np.unique(y), model.classes)
            if unknown.size:
                out["unknown_labels"] = [float(v) for v in unknown]
        else:
            out["rmse"] = float(np.sqrt(np.mean((pred - y) ** 2)))
        print(json.dumps(out))
    return 0


def cmd_info(args) -> int:
    ((X, y),) = read_libsvm([args.data])
    n, d = X.shape
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel())
    values, counts = np.unique(y, return_counts=True)
    out = {"file": str(args.data), "n": int(n), "d": int(d), "nnz": int(X.nnz),
           "density": float(X.nnz) / (n * d) if n * d else 0.0,
           "labels": {_format_label(v): int(c) for v, c in zip(values, counts)},
           "zero_rows": int(np.count_nonzero(norms == 0.0)),
           "min_row_norm": float(norms.min()), "max_row_norm": float(norms.max())}
    if args.json:
        print(json.dumps(out))
        return 0
    print(f"file          {out['file']}")
    print(f"samples n     {n}")
    print(f"features d    {d}")
    print(f"nonzeros      {out['nnz']}")
    print(f"density       {out['density']:.6g}")
    print("labels        " + ", ".join(f"{k} ({v})" for k, v in out["labels"].items()))
    print(f"zero rows     {out['zero_rows']}")
    print(f"row norm      min {out['min_row_norm']:.6g}, max {out['max_row_norm']:.6g}")
    return 0


def _dispatch(command, rest) -> int:
    """``bench`` and ``demo`` hand their arguments to their own parsers."""
    import importlib
    module = "primaldual.bench.cli" if command == "bench" else "primaldual.demo"
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name is not None and module.startswith(e.name):
            print(f"primaldual {command}: error: {module} is not installed in this "
                  f"version of primaldual", file=sys.stderr)
            return 1
        raise
    return int(mod.main(list(rest)) or 0)


_COMMANDS = {"fit": cmd_fit, "predict": cmd_predict, "info": cmd_info}


def main(argv=None) -> int:
    """Run the command line; returns the exit code (0 on success)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("bench", "demo"):
        return _dispatch(argv[0], argv[1:])
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:          # usage errors and --help: argparse's code
        return int(e.code or 0)
    try:
        return _COMMANDS[args.command](args)
    except (ValueError, OSError, FloatingPointError, MemoryError) as e:
        print(f"primaldual {args.command}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        hint = (f"; continue with --resume --checkpoint {args.checkpoint}"
                if getattr(args, "checkpoint", None) else "")
        print(f"primaldual {args.command}: interrupted{hint}", file=sys.stderr)
        return 130
