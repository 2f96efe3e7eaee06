"""The ``primaldual`` command line (docs/conventions.md §6).

::

    primaldual fit TRAIN [--test TEST] [--loss NAME] [--loss-param KEY=VALUE] [--lam X]
                   [--l1 X] [--bias B] [--class-weight SPEC] [--jobs 1] [--solver NAME]
                   [--option KEY=VALUE ...] [--tol X] [--max-epochs N] [--time-limit S]
                   [--seed N] [--normalize] [--model OUT.npz] [--trace OUT.csv]
                   [--plot OUT.png] [--checkpoint DIR] [--checkpoint-every K] [--resume]
                   [--scheduler ADDRESS [--partitions K] [--parts-dir DIR]]
                   [--json] [--quiet]
    primaldual cv TRAIN [--folds K] [--lam X | --lams X,Y,... | --n-lams N]
                   [--lam-ratio EPS] ... [--json] [--quiet]
    primaldual predict MODEL DATA [--json]
    primaldual info DATA [--json]
    primaldual bench ...     (dispatches to primaldual.bench.cli.main)
    primaldual demo ...      (dispatches to primaldual.demo.main)

Two labels are mapped to -1/+1; more than two train one-vs-rest with
:class:`primaldual.LinearClassifier` (same seeds, same result).  ``--bias B``
is LIBLINEAR's ``-B``: a constant feature of value B with a regularized
weight.  ``--class-weight`` is ``balanced`` or ``LABEL:W,...`` (LIBLINEAR's
``-wi``).  ``--scheduler`` trains ``cocoa``/``minibatch_sdca`` on a running
Dask cluster from part files that the workers read themselves.  ``cv`` is
k-fold cross-validation over one ``lam`` or a warm-started decreasing grid, as
:class:`primaldual.LinearClassifierCV` runs it.

Data files are LIBSVM/svmlight text, plain or compressed (gzip, bzip2, xz, or a
zip holding one file; recognised by content), parsed by
:func:`primaldual.datasets.load_svmlight_files`, whose errors name the file and
the line.  ``fit`` calls :func:`primaldual.solve`
with exactly the arguments given, so its JSON summary equals ``solve()`` run
on the same data with the same seed.  Errors go to stderr as
``primaldual <command>: error: <message>`` with exit code 1 (2 for usage
errors, as argparse does).  See ``docs/cli.md``.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import math
import sys
from pathlib import Path

import numpy as np

import primaldual

from ._extras import MissingExtraError, have, require
from ._util import atomic_write, encode_pm1, resolve_n_jobs
from .datasets import DataFormatError, load_svmlight_files
from .distributed.partitioned import PartitionedProblem
from .estimators import (LinearClassifier, LinearRegressor, add_intercept_column,
                         combined_weights)
from .losses import make_loss
from .model_io import LinearModel, read_model, save_model
from .penalties import make_penalty
from .regpath import LinearClassifierCV, LinearRegressorCV
from .solvers import SOLVERS, check_solver_name, option_classes
from .solvers._options import CommonOptions, Rule

__all__ = ["main", "build_parser", "parse_value", "parse_option", "read_libsvm", "encode_binary_labels"]

#: solve() options that have their own flag; ``--option`` may not set them
_FLAG_OPTIONS = {"time_limit": "--time-limit", "checkpoint": "--checkpoint",
                 "checkpoint_every": "--checkpoint-every", "resume": "--resume",
                 "warm_start": None}

#: ``--option`` keys that are the command line's, not a solver's
_CLI_OPTIONS = {"connect_timeout": Rule(number=True, low=0.0)}   # --scheduler: seconds


# ------------------------------------------------------------------ parsing
def parse_value(text: str):
    """``--loss-param KEY=VALUE`` values: int, then float, then bool/None
    words, else the string.  (``--option`` values are read by the type of the
    solver's option instead, :func:`parse_option`.)"""
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


def parse_option(solver, key, text):
    """The value of ``--option key=text`` for ``--solver solver``: read as the
    type of the solver's option ``key`` (for ``auto``, of the first solver
    ``auto`` may pick that has it): an integer, a float, a bool word
    (true/false/yes/no/on/off), a None word (none/null), one of the choices,
    or ``auto`` | a number.  A bad value is a ValueError naming the option and
    what it takes; an unknown key one listing the solver's options."""
    if key in _CLI_OPTIONS:
        rule = _CLI_OPTIONS[key]
        return rule.validate(key, rule.parse(key, text))
    classes = option_classes(solver)
    for cls in classes:
        if key in cls.names():
            return cls.parse(key, text)
    raise classes[0].unknown_error([key])


def _key_value(text: str, flag: str):
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"{flag} expects KEY=VALUE, got {text!r} (for example "
                         f"{'--loss-param gamma=0.5' if flag == '--loss-param' else '--option sampling=uniform'})")
    return key.replace("-", "_"), value


def _pairs(items, flag, parse=None):
    """``{key: value}`` of the ``KEY=VALUE`` items; ``parse(key, text)`` reads
    a value (default :func:`parse_value`)."""
    out = {}
    for text in items or ():
        key, value = _key_value(text, flag)
        if key in out:
            raise ValueError(f"{flag} {key} is given twice; give it once")
        out[key] = parse_value(value) if parse is None else parse(key, value)
    return out


def _solver_options(args):
    """The ``--option`` pairs, each read by the type of the solver's option,
    after the refusals of the options that have their own flags."""
    keys = [_key_value(text, "--option")[0] for text in args.option or ()]
    for key, flag in _FLAG_OPTIONS.items():
        if key in keys:
            hint = f"use {flag}" if flag else "it is not available from the command line"
            raise ValueError(f"--option {key} is not accepted here: {hint}")
    for key in ("client", "n_jobs"):
        if key in keys:
            flag = "--scheduler" if key == "client" else "--jobs"
            raise ValueError(f"--option {key} is not accepted here: use {flag}")
    solver = args.solver
    if solver == "auto" and getattr(args, "scheduler", None):
        solver = "cocoa"                   # what --scheduler runs for auto
    return _pairs(args.option, "--option", lambda k, v: parse_option(solver, k, v))


def _add_model_flags(parser):
    """--bias, --class-weight and --jobs: shared by fit and cv."""
    parser.add_argument("--bias", type=float, default=None, metavar="B",
                        help="append a constant feature of value B > 0 to every row; its "
                             "weight is the intercept (regularized, as LIBLINEAR's -B)")
    parser.add_argument("--class-weight", default=None, metavar="SPEC",
                        help="'balanced' or LABEL:W[,LABEL:W...]: multiply the weight of the "
                             "samples of a class (LIBLINEAR's -wi; unnamed classes keep 1)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="threads (n_jobs): 1 (default) one, -1 all cores; for "
                              "solvers that run on several (sdca, minibatch_sdca) and for "
                              "one-vs-rest")


def _add_problem_flags(parser):
    """The flags that define the problem and the solver: shared by fit and cv."""
    parser.add_argument("--loss", default="hinge", metavar="NAME",
                        help="hinge, smooth_hinge, squared_hinge, logistic, squared, absolute, "
                             "epsilon_insensitive (default hinge)")
    parser.add_argument("--loss-param", action="append", metavar="KEY=VALUE",
                        help="loss parameter, e.g. gamma=0.5 or epsilon=0.1 (repeatable)")
    parser.add_argument("--l1", type=float, default=0.0, metavar="X",
                        help="L1 strength >= 0 (default 0)")
    parser.add_argument("--solver", default="auto", metavar="NAME",
                        help="solver name, or auto (default)")
    parser.add_argument("--option", action="append", metavar="KEY=VALUE",
                        help="solver option, the value read as the option's type "
                             "(int, float, true/false, none, a choice; repeatable)")
    parser.add_argument("--tol", type=float, default=1e-6, metavar="X",
                        help="stop at relative duality gap <= X (default 1e-6)")
    parser.add_argument("--max-epochs", type=float, default=None, metavar="N",
                        help="passes over the data (default: the solver's, 1000 for sdca "
                             "and newton, 100 for the others)")
    parser.add_argument("--seed", type=int, default=0, metavar="N",
                        help="random seed (default 0)")
    parser.add_argument("--normalize", action="store_true",
                        help="scale every row to unit L2 norm")


def _add_cv_parser(sub):
    c = sub.add_parser(
        "cv", help="k-fold cross-validation, optionally over a warm-started lam grid",
        description="k-fold cross-validation (LIBLINEAR's -v), and with no --lam a "
                    "search over a decreasing lam grid, each fold warm-started from "
                    "the previous lam (LIBLINEAR's -C). Classification is scored by "
                    "accuracy, regression by mean squared error.")
    c.add_argument("train", metavar="TRAIN", help="training data (LIBSVM, .gz/.bz2 ok)")
    c.add_argument("--folds", type=int, default=5, metavar="K",
                   help="number of folds, >= 2 (default 5; stratified for classification)")
    c.add_argument("--lam", type=float, default=None, metavar="X",
                   help="cross-validate this one lam (no search)")
    c.add_argument("--lams", default=None, metavar="X,Y,...",
                   help="cross-validate these lams (searched from the largest down)")
    c.add_argument("--n-lams", type=int, default=10, metavar="N",
                   help="grid size of the search (default 10)")
    c.add_argument("--lam-ratio", type=float, default=1e-3, metavar="EPS",
                   help="smallest grid lam = EPS * lam_max (default 1e-3)")
    _add_problem_flags(c)
    _add_model_flags(c)
    c.add_argument("--json", action="store_true",
                   help="print the result as one JSON object (last stdout line)")
    c.add_argument("--quiet", action="store_true", help="no progress on stderr")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="primaldual",
        description="Certified stochastic primal-dual solvers for regularized linear "
                    "models. Every fit reports the exact primal, dual and duality gap.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    f = sub.add_parser("fit", help="fit a model on a LIBSVM file",
                       description="Minimize (1/n) sum_i phi(x_i.w; y_i) + lam/2 ||w||^2 "
                                   "+ l1 ||w||_1 and report the certificate.")
    f.add_argument("train", metavar="TRAIN", help="training data (LIBSVM, .gz/.bz2 ok)")
    f.add_argument("--test", metavar="TEST", help="test data: adds test_accuracy or "
                   "test_rmse to the summary and test_error/test_rmse to the trace")
    f.add_argument("--lam", type=float, default=1e-4, metavar="X",
                   help="L2 strength lam > 0 (default 1e-4)")
    _add_problem_flags(f)
    f.add_argument("--time-limit", type=float, default=None, metavar="S",
                   help="wall-clock limit in seconds")
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
    _add_model_flags(f)
    f.add_argument("--scheduler", metavar="ADDRESS",
                   help="train on a running Dask cluster (e.g. tcp://host:8786) with "
                        "cocoa or minibatch_sdca; the workers read the part files")
    f.add_argument("--partitions", type=int, default=None, metavar="K",
                   help="with --scheduler: split TRAIN into K part files (default: one "
                        "per worker)")
    f.add_argument("--parts-dir", metavar="DIR",
                   help="with --scheduler: where the part files are written (default "
                        "TRAIN.parts/ beside TRAIN); every worker must be able to read it")
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

    s = sub.add_parser("solvers", help="list the solvers, or one solver's --option keys",
                       description="Without NAME: every solver, what it needs of the loss "
                                   "and the penalty, and whether it runs on Dask. With NAME: "
                                   "the keys --option accepts for it, their defaults and "
                                   "what each takes.")
    s.add_argument("name", metavar="NAME", nargs="?", help="a solver name")
    s.add_argument("--json", action="store_true", help="print one JSON object")

    _add_cv_parser(sub)

    sub.add_parser("bench", help="benchmarks: solvers and peers side by side "
                                 "(primaldual bench --help)", add_help=False)
    sub.add_parser("demo", help="the main job on shipped or generated data "
                                "(primaldual demo --help)", add_help=False)
    return parser


# --------------------------------------------------------------------- data
def read_libsvm(paths, n_features=None):
    """Parse LIBSVM files into CSR matrices with one shared column count.

    Returns ``[(X, y_raw), ...]``.  Non-finite values are refused with the
    file and sample named; an empty file is refused.
    """

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
    return encode_pm1(y_raw, pos, neg, source=source), np.array([neg, pos])


def _format_label(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 2 ** 53 else repr(float(v))


def _finite(v):
    """JSON-safe float: non-finite values become None."""
    v = float(v)
    return v if math.isfinite(v) else None


def _atomic_write_text(path, text):
    with atomic_write(path, "w", newline="") as fh:
        fh.write(text)


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
    require("matplotlib", "--plot")
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
    _save_figure(fig, path, title)


def _save_figure(fig, path, title=None):
    """Write ``fig`` as a PNG atomically (a temporary file renamed over ``path``)."""
    if title:
        fig.suptitle(title)
    with atomic_write(path) as fh:
        fig.savefig(fh, format="png", dpi=100)


# --------------------------------------------------------------- commands
def _note(args, msg):
    if not getattr(args, "quiet", False):
        print(f"primaldual {args.command}: {msg}", file=sys.stderr)


def _check_common(args):
    """Validate what needs no data: loss, penalty, solver, options, jobs, bias, weights.

    Returns ``(loss, loss_params, options)``.
    """

    loss_params = _pairs(args.loss_param, "--loss-param")
    loss = make_loss(args.loss, loss_params or None)
    lam = getattr(args, "lam", None)
    make_penalty(lam if lam is not None else 1.0, args.l1, allow_pure_l1=True)
    check_solver_name(args.solver)
    options = _solver_options(args)
    resolve_n_jobs(args.jobs)            # --jobs 0 or garbage: a clear error now
    if args.bias is not None and not (math.isfinite(args.bias) and args.bias > 0):
        raise ValueError(f"--bias must be a finite number > 0 (the value of the constant "
                         f"feature), got {args.bias}")
    if args.class_weight is not None and not loss.classification:
        raise ValueError(f"--class-weight needs a classification loss; loss={loss.name!r} "
                         f"is a regression loss")
    _parse_class_weight(args.class_weight)          # syntax only; labels checked later
    return loss, loss_params, options


def _parse_class_weight(spec):
    """``None``, ``"balanced"`` or ``{label: weight}`` from ``--class-weight``."""
    if spec is None:
        return None
    text = spec.strip()
    if text == "balanced":
        return "balanced"
    out = {}
    for item in text.split(","):
        label, sep, weight = item.partition(":")
        try:
            if not sep:
                raise ValueError
            lab, w = float(label), float(weight)
        except ValueError:
            raise ValueError(f"--class-weight expects 'balanced' or LABEL:W[,LABEL:W...] "
                             f"(e.g. 1:5,-1:1), got {spec!r}") from None
        if not (math.isfinite(w) and w > 0):
            raise ValueError(f"--class-weight: the weight of label {label.strip()} must be "
                             f"a finite number > 0, got {weight.strip()}")
        if lab in out:
            raise ValueError(f"--class-weight names label {label.strip()} twice")
        out[lab] = w
    return out


def _class_weight_for(spec, classes, source):
    """The parsed --class-weight, its labels checked against ``classes``."""
    cw = _parse_class_weight(spec)
    if isinstance(cw, dict):
        unknown = [k for k in cw if k not in set(classes.tolist())]
        if unknown:
            raise ValueError(f"--class-weight names label {_format_label(unknown[0])}, which "
                             f"does not occur in {source} (labels "
                             f"{', '.join(_format_label(v) for v in classes[:10])})")
    return cw


def _classes_of(y_raw, loss_name, source):
    values = np.unique(y_raw)
    if values.size == 1:
        encode_binary_labels(y_raw, loss_name, source)      # raises the single-class error
    return values


def _with_bias(X, bias):
    if bias is None or X is None:
        return X
    return add_intercept_column(X, float(bias))


def _read_train_test(args):
    paths = [args.train] + ([args.test] if getattr(args, "test", None) else [])
    parts = read_libsvm(paths)
    X, y_raw = parts[0]
    Xt, yt_raw = parts[1] if len(parts) > 1 else (None, None)
    if args.normalize:
        from sklearn.preprocessing import normalize
        X = normalize(X, norm="l2")
        Xt = normalize(Xt, norm="l2") if Xt is not None else None
    return X, y_raw, Xt, yt_raw


def _run_options(args, options):
    if "progress" not in options:
        options["progress"] = sys.stdout.isatty() and not args.quiet and have("tqdm")
    if getattr(args, "checkpoint", None):
        options["checkpoint"] = args.checkpoint
        options["checkpoint_every"] = args.checkpoint_every
    if getattr(args, "resume", False):
        options["resume"] = args.checkpoint
    if getattr(args, "time_limit", None) is not None:
        options["time_limit"] = args.time_limit
    return options


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


def _split_bias(coef_full, bias):
    if bias is None:
        return np.asarray(coef_full, dtype=np.float64), 0.0
    return np.asarray(coef_full[:-1], dtype=np.float64), float(bias) * float(coef_full[-1])


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
            normalize_rows=bool(args.normalize), primal=float(res.primal),
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
        _note(args, "interrupted: the results written are certified at the point reached")
        code = 130
    elif not res.converged:
        _note(args, f"stopped ({res.stop_reason}) before reaching tol: relative gap "
                    f"{res.rel_gap:.3e} > tol {res.tol:.1e}; raise --max-epochs or tol")
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
    with warnings.catch_warnings():
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
        written = save_model(est, args.model, normalize_rows=args.normalize)
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
    if bad:
        _note(args, f"{len(bad)} of {len(problems)} problems stopped before reaching tol "
                    f"(classes {', '.join(bad[:10])}); raise --max-epochs or tol")
    if args.json:
        print(json.dumps(summary))
        return 0
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
    return 0


_DASK_SOLVERS = ("cocoa", "minibatch_sdca")


def split_libsvm(path, k, out_dir, *, normalize=False):
    """Split a LIBSVM file into ``k`` contiguous part files in ``out_dir``.

    The rows are divided as :func:`numpy.array_split` divides them (the
    partitions the local ``cocoa``/``minibatch_sdca`` use); the parts are
    written with :func:`sklearn.datasets.dump_svmlight_file` (1-based indices,
    labels and values at full precision).  Returns ``(paths, n_features)``.
    """
    from sklearn.datasets import dump_svmlight_file

    ((X, y),) = read_libsvm([path])
    if normalize:
        from sklearn.preprocessing import normalize as _normalize
        X = _normalize(X, norm="l2")
    n = X.shape[0]
    if k > n:
        raise ValueError(f"--partitions {k} is larger than the {n} samples of {path}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    bounds = np.concatenate([[0], np.cumsum([len(a) for a in
                                              np.array_split(np.arange(n), k)])])
    paths = []
    for j in range(k):
        p = out / f"part-{j:05d}-of-{k:05d}.svm"
        with atomic_write(p) as fh:
            dump_svmlight_file(X[bounds[j]:bounds[j + 1]], y[bounds[j]:bounds[j + 1]], fh,
                               zero_based=False)
        paths.append(p)
    return paths, int(X.shape[1])


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
            parts, n_features = split_libsvm(train, k, out_dir, normalize=args.normalize)
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
        res = SOLVERS[solver](pp, tol=args.tol, max_epochs=args.max_epochs,
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
        ((Xt, yt_raw),) = read_libsvm([args.test], n_features=d)
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


def cmd_cv(args) -> int:
    """k-fold cross-validation over one lam or a warm-started decreasing grid."""
    import time
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import KFold, StratifiedKFold


    loss, loss_params, options = _check_common(args)
    if args.folds < 2:
        raise ValueError(f"--folds must be >= 2, got {args.folds}")
    given = [f for f, v in (("--lam", args.lam), ("--lams", args.lams)) if v is not None]
    if len(given) > 1:
        raise ValueError("give either --lam X (one value) or --lams X,Y,... (a list), "
                         "not both")
    if args.n_lams < 1:
        raise ValueError(f"--n-lams must be >= 1, got {args.n_lams}")
    if not (0 < args.lam_ratio < 1):
        raise ValueError(f"--lam-ratio must be in (0, 1), got {args.lam_ratio}")
    lams = None
    if args.lam is not None:
        lams = [args.lam]
    elif args.lams is not None:
        try:
            lams = [float(t) for t in args.lams.split(",") if t.strip()]
        except ValueError:
            raise ValueError(f"--lams expects numbers separated by commas, got "
                             f"{args.lams!r}") from None
    if lams is not None:
        if not lams or not all(math.isfinite(v) and v > 0 for v in lams):
            raise ValueError(f"every lam must be a finite number > 0, got "
                             f"{args.lam if args.lam is not None else args.lams}")
        if len(set(lams)) != len(lams):
            raise ValueError(f"--lams has repeated values: {args.lams}")

    X, y, _, _ = _read_train_test(args)
    n = X.shape[0]
    if args.folds > n:
        raise ValueError(f"--folds {args.folds} is larger than the {n} samples of "
                         f"{args.train}")
    options = _run_options(args, options)
    options["progress"] = False
    common = dict(loss=loss.name, l1=args.l1, loss_params=loss_params or None,
                  tol=args.tol, max_iter=args.max_epochs,
                  fit_intercept=args.bias is not None,
                  intercept_scaling=args.bias if args.bias is not None else 1.0,
                  random_state=args.seed, solver=args.solver,
                  solver_options=options or None)
    if loss.classification:
        classes = _classes_of(y, loss.name, args.train)
        cw = _class_weight_for(args.class_weight, classes, args.train)
        counts = np.unique(y, return_counts=True)[1]
        if counts.min() < args.folds:
            cl = classes[int(np.argmin(counts))]
            raise ValueError(f"class {_format_label(cl)} has {counts.min()} samples, fewer "
                             f"than --folds {args.folds}; lower --folds")
        base = LinearClassifier(class_weight=cw, n_jobs=args.jobs, **common)
        splitter = StratifiedKFold(args.folds, shuffle=True, random_state=args.seed)
        grid_est = LinearClassifierCV(class_weight=cw, n_alphas=args.n_lams,
                                      eps=args.lam_ratio, **{k: v for k, v in common.items()
                                                             if k not in ("tol",)})
        c = combined_weights(y, classes, np.ones(n), cw)
        metric = "accuracy"
    else:
        base = LinearRegressor(**common)
        splitter = KFold(args.folds, shuffle=True, random_state=args.seed)
        grid_est = LinearRegressorCV(n_alphas=args.n_lams, eps=args.lam_ratio,
                                     **{k: v for k, v in common.items() if k != "tol"})
        c = np.ones(n)
        metric = "mse"
    if lams is None:
        lams = [float(v) for v in grid_est._alpha_grid(X, y, c)]
        _note(args, f"lam grid: {len(lams)} values from lam_max {lams[0]:.4g} down to "
                    f"{lams[-1]:.4g}")
    else:
        lams = sorted(lams, reverse=True)
    score_w = None if np.all(c == 1.0) else c

    scores = np.zeros((args.folds, len(lams)))
    epochs = np.zeros(len(lams))
    unconverged = 0
    t0 = time.perf_counter()
    for f, (tr, te) in enumerate(splitter.split(X, y)):
        est = base.__class__(**base.get_params()).set_params(warm_start=True)
        tf = time.perf_counter()
        for j, lam in enumerate(lams):
            est.set_params(alpha=float(lam))
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                est.fit(X[tr], y[tr])
            unconverged += sum(issubclass(w.category, ConvergenceWarning) for w in caught)
            epochs[j] += float(np.sum(est.n_iter_))
            pred = est.predict(X[te])
            w = None if score_w is None else score_w[te]
            if metric == "accuracy":
                scores[f, j] = float(np.average(pred == y[te], weights=w))
            else:
                scores[f, j] = float(np.average((pred - y[te]) ** 2, weights=w))
        _note(args, f"fold {f + 1}/{args.folds}: {len(lams)} lam(s) in "
                    f"{time.perf_counter() - tf:.2f} s, {metric} at the last lam "
                    f"{scores[f, -1]:.4f}")
    elapsed = time.perf_counter() - t0
    mean, std = scores.mean(axis=0), scores.std(axis=0)
    best = int(np.argmax(mean)) if metric == "accuracy" else int(np.argmin(mean))
    if unconverged:
        _note(args, f"{unconverged} of {args.folds * len(lams)} fits stopped before "
                    f"reaching tol {args.tol:g}; raise --max-epochs")
    out = {"metric": metric, "folds": args.folds, "n": int(n), "d": int(X.shape[1]),
           "loss": loss.name, "l1": float(args.l1), "bias": args.bias, "seed": args.seed,
           "lams": lams, "scores": scores.tolist(), "mean": mean.tolist(),
           "std": std.tolist(), "epochs": epochs.tolist(), "best_lam": lams[best],
           "best_score": float(mean[best]), "unconverged_fits": int(unconverged),
           "time_s": elapsed}
    if args.json:
        print(json.dumps(out))
        return 0
    label = "accuracy" if metric == "accuracy" else "MSE"
    print(f"{args.folds}-fold cross-validation of {args.train}: n={n}, loss={loss.name}")
    print(f"{'lam':>12} {'C = 1/(lam n)':>14} {label + ' mean':>14} {'std':>9} "
          f"{'epochs (all folds)':>19}")
    for j, lam in enumerate(lams):
        mark = "  <- best" if j == best else ""
        print(f"{lam:12.4g} {1.0 / (lam * n):14.4g} {mean[j]:14.6f} {std[j]:9.4f} "
              f"{epochs[j]:19g}{mark}")
    print(f"best      lam={lams[best]:g}: cross-validation {label} {mean[best]:.6f} "
          f"({elapsed:.2f} s)")
    return 0


def plot_ovr_traces(traces, labels, path, title=""):
    """PNG: the relative gap of every one-vs-rest problem against epochs and seconds."""
    require("matplotlib", "--plot")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 2)
    for ax, key, xlabel in ((axes[0], "epoch", "epochs"), (axes[1], "time", "seconds")):
        for lab, tr in zip(labels, traces):
            x = np.array([r[key] for r in tr], dtype=float)
            g = np.array([r["gap"] / max(abs(r["primal"]), 1e-12) for r in tr], dtype=float)
            keep = g > 0
            ax.plot(x[keep], g[keep], marker=".", label=f"class {lab}")
        ax.set_yscale("log")
        ax.set_xlabel(xlabel)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("relative duality gap (log scale)")
    fig.legend(*axes[0].get_legend_handles_labels(), loc="outside right upper")
    _save_figure(fig, path, title)


def cmd_predict(args) -> int:

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


#: what a solver's ``requires`` flags mean, for ``primaldual solvers``
_REQUIRES_TEXT = {"smooth": "smooth losses", "classification": "classification losses",
                  "generalized_hessian": "losses with a (generalized) Hessian"}

#: options the command line sets with a flag of its own, not with --option
_OPTION_FLAGS = {**{k: v for k, v in _FLAG_OPTIONS.items() if v}, "n_jobs": "--jobs",
                 "client": "--scheduler"}


def _option_rows(cls):
    """One dict per option of solver class ``cls``: key, default, what it takes."""
    oc = cls.options_class
    rows = []
    for f in dataclasses.fields(oc):
        rule = f.metadata["rule"]
        if f.name in _FLAG_OPTIONS and not _FLAG_OPTIONS[f.name]:
            continue                                  # warm_start: Python only
        default = f.default
        rows.append({"option": f.name, "default": default if _jsonable(default) else repr(default),
                     "takes": rule.allowed(), "flag": _OPTION_FLAGS.get(f.name),
                     "doc": f.metadata.get("doc", "")})
    return rows


def _jsonable(v):
    return v is None or isinstance(v, (bool, int, float, str))


def cmd_solvers(args) -> int:
    if args.name is None:
        rows = [{"solver": n, "summary": c.summary,
                 "losses": ", ".join(_REQUIRES_TEXT.get(r, r) for r in c.requires) or "all",
                 "l1": bool(c.supports_l1), "dask": bool(getattr(c, "supports_client", False))}
                for n, c in sorted(SOLVERS.items())]
        if args.json:
            print(json.dumps({"solvers": rows, "auto": "sdca or newton, chosen from the "
                              "data and lam (docs/cli.md)"}))
            return 0
        width = max(len(r["solver"]) for r in rows)
        for r in rows:
            tags = [r["losses"] if r["losses"] != "all" else "all losses"]
            tags += ["l1"] if r["l1"] else []
            tags += ["dask"] if r["dask"] else []
            print(f"{r['solver']:<{width}}  {r['summary']} [{', '.join(tags)}]")
        print(f"{'auto':<{width}}  sdca or newton, chosen from the data and lam (the default)")
        print("\nprimaldual solvers NAME lists the --option keys of one solver.")
        return 0
    check_solver_name(args.name)
    if args.name == "auto":
        raise ValueError("auto is not a solver of its own: it picks sdca or newton; "
                         "run `primaldual solvers sdca` or `primaldual solvers newton`")
    cls = SOLVERS[args.name]
    rows = _option_rows(cls)
    if args.json:
        print(json.dumps({"solver": args.name, "summary": cls.summary, "options": rows}))
        return 0
    print(f"{args.name}: {cls.summary}\n")
    width = max(len(r["option"]) for r in rows)
    for r in rows:
        how = f"set with {r['flag']}" if r["flag"] else f"takes {r['takes']}"
        doc = f"; {r['doc']}" if r["doc"] else ""
        print(f"  {r['option']:<{width}}  default {r['default']!r}; {how}{doc}")
    own = [r for r in rows if not r["flag"] and r["option"] not in CommonOptions.names()]
    if own:
        print(f"\nexample: primaldual fit TRAIN --solver {args.name} --option "
              f"{own[0]['option']}=VALUE")
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
    try:
        return int(mod.main(list(rest)) or 0)
    except MissingExtraError as e:
        print(f"primaldual {command}: error: {e}", file=sys.stderr)
        return 1


_COMMANDS = {"fit": cmd_fit, "cv": cmd_cv, "predict": cmd_predict, "info": cmd_info,
             "solvers": cmd_solvers}


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
    except (ValueError, OSError, FloatingPointError, MemoryError, MissingExtraError) as e:
        print(f"primaldual {args.command}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        hint = (f"; continue with --resume --checkpoint {args.checkpoint}"
                if getattr(args, "checkpoint", None) else "")
        print(f"primaldual {args.command}: interrupted{hint}", file=sys.stderr)
        return 130
