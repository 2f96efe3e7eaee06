"""Reading the command line text: the argument parser (:func:`build_parser`,
:func:`parse_args`), ``KEY=VALUE`` pairs, each ``--option`` value read by its
option's type, class weights and number lists.  What the values mean together
is checked in :mod:`.request`."""
from __future__ import annotations

import argparse
import math
import re

from .._util.lazy import lazy_attr
from ..losses.registry import NAMES as LOSS_NAMES


#: solve() options that have their own flag (None: no flag, Python only);
#: ``--option`` may not set them
FLAG_OPTIONS = {"time_limit": "--time-limit", "checkpoint": "--checkpoint",
                 "checkpoint_every": "--checkpoint-every", "resume": "--resume",
                 "n_jobs": "--jobs", "client": "--scheduler", "warm_start": None}

#: ``--option`` keys that are the command line's, not a solver's
CLI_OPTIONS = ("connect_timeout",)                             # --scheduler: seconds


def _cli_option_rule(key):
    Rule = lazy_attr("primaldual.solvers._options", "Rule")
    return {"connect_timeout": Rule(number=True, low=0.0)}[key]


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
    if key in CLI_OPTIONS:
        rule = _cli_option_rule(key)
        return rule.validate(key, rule.parse(key, text))
    classes = lazy_attr("primaldual.solvers", "option_classes")(solver)
    for cls in classes:
        if key in cls.names():
            return cls.parse(key, text)
    raise classes[0].unknown_error([key])


def key_value(text: str, flag: str):
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ValueError(f"{flag} expects KEY=VALUE, got {text!r} (for example "
                         f"{'--loss-param gamma=0.5' if flag == '--loss-param' else '--option sampling=uniform'})")
    return key.replace("-", "_"), value


def parse_pairs(items, flag, parse=None):
    """``{key: value}`` of the ``KEY=VALUE`` items; ``parse(key, text)`` reads
    a value (default :func:`parse_value`)."""
    out = {}
    for text in items or ():
        key, value = key_value(text, flag)
        if key in out:
            raise ValueError(f"{flag} {key} is given twice; give it once")
        out[key] = parse_value(value) if parse is None else parse(key, value)
    return out


def parse_class_weight(spec):
    """``None``, ``"balanced"`` or ``{label: weight}`` from ``--class-weight``
    (the text of every ``--class-weight`` and ``-wLABEL W`` joined by commas)."""
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


def parse_number_list(text, flag, noun):
    """The finite numbers > 0 of ``X,Y,...`` (``--lams``, ``--Cs``; each a
    ``noun``), no repeats."""
    try:
        values = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise ValueError(f"{flag} expects numbers separated by commas, got "
                         f"{text!r}") from None
    if not values or not all(math.isfinite(v) and v > 0 for v in values):
        raise ValueError(f"every {noun} must be a finite number > 0, got {text}")
    if len(set(values)) != len(values):
        raise ValueError(f"{flag} has repeated values: {text}")
    return tuple(values)


# --------------------------------------------------------------- argv
#: flags whose value may start with '-' (a negative label: --class-weight -1:5)
_DASH_VALUE_FLAGS = ("--class-weight", "--lams", "--Cs")
#: LIBLINEAR's -wLABEL W (the label glued to -w, as train.c reads it)
_LIBLINEAR_WEIGHT = re.compile(r"^-w([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)$")


def liblinear_argv(argv):
    """``argv`` with the LIBLINEAR spellings argparse cannot read rewritten:
    ``--class-weight -1:5`` (a value that starts with '-', which argparse takes
    for a flag) becomes ``--class-weight=-1:5``, and ``-wLABEL W`` becomes
    ``--class-weight=LABEL:W``.  Everything after ``--`` is left alone."""
    out, i = [], 0
    argv = list(argv)
    while i < len(argv):
        tok = argv[i]
        if tok == "--":
            out.extend(argv[i:])
            break
        m = _LIBLINEAR_WEIGHT.match(tok)
        if m and (i + 1 >= len(argv) or argv[i + 1].startswith("--")):
            raise ValueError(f"{tok} needs a weight after it (LIBLINEAR's -wLABEL W, e.g. "
                             f"{tok} 5), got {argv[i + 1] if i + 1 < len(argv) else 'nothing'}")
        if m:
            out.append(f"--class-weight={m.group(1)}:{argv[i + 1]}")
            i += 2
            continue
        if tok in _DASH_VALUE_FLAGS and i + 1 < len(argv) and argv[i + 1].startswith("-"):
            out.append(f"{tok}={argv[i + 1]}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


# ------------------------------------------------------------- parser
def _add_model_flags(parser):
    """--bias, --class-weight and --jobs: shared by fit and cv."""
    parser.add_argument("--bias", type=float, default=None, metavar="B",
                        help="append a constant feature of value B > 0 to every row; its "
                             "weight is the intercept (regularized, as LIBLINEAR's -B)")
    parser.add_argument("--class-weight", action="append", default=None, metavar="SPEC",
                        help="'balanced' or LABEL:W[,LABEL:W...] (e.g. -1:5,1:1): multiply "
                             "the weight of the samples of a class (LIBLINEAR's -wi, which "
                             "is also accepted as -wLABEL W; unnamed classes keep 1)")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="threads (n_jobs): 1 (default) one, -1 all cores; for "
                              "solvers that run on several (sdca, minibatch_sdca) and for "
                              "one-vs-rest")


def _add_problem_flags(parser):
    """The flags that define the problem and the solver: shared by fit and cv."""
    parser.add_argument("--loss", default="squared_hinge", metavar="NAME",
                        help=f"{', '.join(LOSS_NAMES)}; or a multiclass loss, "
                             "multinomial or crammer_singer (default squared_hinge, as "
                             "LIBLINEAR's train)")
    parser.add_argument("--loss-param", action="append", metavar="KEY=VALUE",
                        help="loss parameter, e.g. gamma=0.5 or epsilon=0.1 (repeatable)")
    parser.add_argument("--l1", type=float, default=0.0, metavar="X",
                        help="L1 strength >= 0 (default 0)")
    parser.add_argument("--penalty", choices=("l2", "l1"), default="l2",
                        help="l1: a sparse model, the strength of --lam/-c goes to the L1 "
                             "term and lam = 0 (docs/sparse-models.md); default l2")
    parser.add_argument("--solver", default="auto", metavar="NAME",
                        help="solver name, or auto (default)")
    parser.add_argument("--option", action="append", metavar="KEY=VALUE",
                        help="solver option, the value read as the option's type "
                             "(int, float, true/false, none, a choice; repeatable)")
    parser.add_argument("--tol", type=float, default=1e-6, metavar="X",
                        help="stop at relative duality gap <= X (default 1e-6)")
    parser.add_argument("--max-epochs", type=float, default=None, metavar="N",
                        help="passes over the data (default: the solver's, 1000 for sdca, "
                             "newton and ipm, 100 for the others)")
    parser.add_argument("--seed", type=int, default=0, metavar="N",
                        help="random seed (default 0)")
    parser.add_argument("--normalize", action="store_true",
                        help="scale every row to unit L2 norm (this changes the model: "
                             "it discards each row's length)")
    parser.add_argument("--scale", action="store_true",
                        help="scale every column as svm-scale does ([-1, 1] for a dense "
                             "file, by the largest |value| for a sparse one); the model "
                             "keeps the scaling and predict applies it")


_C_HELP = ("LIBLINEAR's C (-c): the fit uses lam = 1/(C W), W the total sample weight "
           "(n without class weights)")


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
    c.add_argument("-c", "--C", dest="C", type=float, default=None, metavar="C",
                   help="cross-validate this one C (LIBLINEAR's -v K -c C): each fold "
                        "fits lam = 1/(C W_fold), W_fold its training weight")
    c.add_argument("--Cs", default=None, metavar="C1,C2,...",
                   help="cross-validate these Cs (searched from the smallest up, each "
                        "fold with lam = 1/(C W_fold))")
    c.add_argument("--n-lams", type=int, default=10, metavar="N",
                   help="grid size of the search (default 10)")
    c.add_argument("--lam-ratio", type=float, default=1e-3, metavar="EPS",
                   help="smallest grid lam = EPS * lam_max (default 1e-3)")
    _add_problem_flags(c)
    _add_model_flags(c)
    c.add_argument("--json", action="store_true",
                   help="print the result as one JSON object (last stdout line)")
    c.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _add_describe_parsers(sub):
    """predict, info and solvers."""
    pr = sub.add_parser("predict", help="predict with a model file (also LIBLINEAR's "
                                        "order: [-b 1] [-q] TEST MODEL OUTPUT)",
                        description="Print one prediction per line (original label "
                                    "values for classifiers), or write them to OUTPUT "
                                    "and print the accuracy, as LIBLINEAR's predict does. "
                                    "LIBLINEAR's order, 'predict [-b 1] [-q] TEST MODEL "
                                    "OUTPUT', is recognised by content (the second file "
                                    "is the model). Features the training file never had "
                                    "are ignored.")
    pr.add_argument("model", metavar="MODEL", help="model file written by fit --model, "
                    "or a LIBLINEAR text model (train, or LIBLINEAR itself)")
    pr.add_argument("data", metavar="DATA", help="LIBSVM file")
    pr.add_argument("output", metavar="OUTPUT", nargs="?", default=None,
                    help="write the predictions here, one per line, and print the "
                         "accuracy (classification) or mean squared error instead")
    pr.add_argument("--proba", action="store_true",
                    help="logistic models: a header 'labels L1 L2 ...', then per sample "
                         "the predicted label and the probability of each class "
                         "(LIBLINEAR's -b 1)")
    pr.add_argument("--json", action="store_true",
                    help="end with a JSON line: n and accuracy or rmse")

    i = sub.add_parser("info", help="describe a LIBSVM file")
    i.add_argument("data", metavar="DATA", help="LIBSVM file")
    i.add_argument("--json", action="store_true", help="print one JSON object")

    s = sub.add_parser("solvers", help="list the solvers, or one solver's --option keys",
                       description="Without NAME: every solver, what it needs of the loss "
                                   "and the penalty, and whether it runs on Dask. With NAME: "
                                   "the keys --option accepts for it, their defaults, what "
                                   "each takes and what it means.")
    s.add_argument("name", metavar="NAME", nargs="?", help="a solver name")
    s.add_argument("--json", action="store_true", help="print one JSON object")



def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="primaldual",
        description="Certified stochastic primal-dual solvers for regularized linear "
                    "models. Every fit reports the exact primal, dual and duality gap.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    f = sub.add_parser("fit", help="fit a model on a LIBSVM file",
                       description="Minimize (1/W) sum_i c_i phi(x_i.w; y_i) + lam/2 "
                                   "||w||^2 + l1 ||w||_1 and report the certificate.")
    f.add_argument("train", metavar="TRAIN", help="training data (LIBSVM, .gz/.bz2 ok)")
    f.add_argument("--test", metavar="TEST", help="test data: adds test_accuracy or "
                   "test_rmse to the summary and test_error/test_rmse to the trace")
    f.add_argument("--lam", type=float, default=None, metavar="X",
                   help="L2 strength lam > 0 (default: 1/W, LIBLINEAR's C = 1)")
    f.add_argument("-c", "--C", dest="C", type=float, default=None, metavar="C",
                   help=_C_HELP + "; instead of --lam")
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

    _add_describe_parsers(sub)
    _add_cv_parser(sub)

    sub.add_parser("train", help="LIBLINEAR's train: its flags (-s -c -p -e -B -wi -v -C "
                                 "-q), defaults, text model file and output lines "
                                 "(primaldual train -h)", add_help=False)

    sub.add_parser("bench", help="benchmarks: solvers and peers side by side "
                                 "(primaldual bench --help)", add_help=False)
    sub.add_parser("demo", help="the main job on shipped or generated data "
                                "(primaldual demo --help)", add_help=False)
    return parser


def parse_args(argv):
    """The argparse namespace of ``argv`` (LIBLINEAR spellings rewritten by
    :func:`liblinear_argv`); usage errors and ``--help`` raise SystemExit."""
    return build_parser().parse_args(liblinear_argv(argv))
