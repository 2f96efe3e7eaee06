"""``primaldual train`` and LIBLINEAR's ``predict`` order: LIBLINEAR's command lines.

``train [options] TRAIN [MODEL]`` reads LIBLINEAR's flags as its ``train.c``
does (``-s -c -p -e -B -wi -v -C -q``; ``-R`` and ``-n`` are refused with a
reason) into the same :class:`.request.FitRequest` as ``fit``: ``-s`` picks the
loss and penalty (:data:`primaldual.liblinear_format.SOLVER_TYPES`), ``-c C``
sets lam = 1/(C W) (for the L1 types 5 and 6, l1 = 1/(C W) and lam = 0),
``-wi`` weighs the positive class of each problem as LIBLINEAR does, and the
model goes to MODEL, default ``TRAIN.model`` in the current directory, in
LIBLINEAR's text format.  ``-e EPS`` sets the stopping tolerance: our
relative duality gap (LIBLINEAR's criteria differ by solver type; the gap
is certified).  Without ``-e`` the tolerance is 1e-6.  ``-v K`` prints
``Cross Validation Accuracy = ...%`` (or the MSE lines), ``-C`` searches C as
LIBLINEAR does (warm-started, doubling from its start value up to 1024).

``predict [-b 1] [-q] TEST MODEL OUT`` is recognised by content: when the
first file is not a model file and the second is, the order is LIBLINEAR's.
"""
from __future__ import annotations

import math
import os
from types import MappingProxyType

from .._util.lazy import lazy_attr, lazy_module
from .request import FitRequest, PredictRequest, check_loss

DEFAULT_TOL = 1e-6

TRAIN_USAGE = ("usage: primaldual train [-s type] [-c cost] [-p epsilon] [-e epsilon] "
               "[-B bias] [-wi weight] [-v n] [-C] [-q] training_set_file [model_file]")
PREDICT_USAGE = ("usage: primaldual predict [-b 0|1] [-q] test_file model_file output_file"
                 "\n   or: primaldual predict MODEL DATA [OUTPUT] [--proba] [--json]")


class UsageError(ValueError):
    """A LIBLINEAR command line that cannot be read (exit code 2)."""


def _number(flag, text, kind=float):
    try:
        value = kind(text)
    except ValueError:
        raise UsageError(f"-{flag} expects a{'n integer' if kind is int else ' number'}, "
                         f"got {text!r}") from None
    if kind is float and not math.isfinite(value):
        raise UsageError(f"-{flag} expects a finite number, got {text!r}")
    return value


def parse_train(argv):
    """``(flags, train, model)`` of LIBLINEAR's ``train`` command line."""
    flags = {"w": {}}
    i = 0
    while i < len(argv) and argv[i].startswith("-") and len(argv[i]) > 1:
        tok = argv[i]
        letter = tok[1]
        if tok in ("-q", "-C", "-R"):
            flags[letter] = True
            i += 1
            continue
        if i + 1 >= len(argv):
            raise UsageError(f"{tok} needs a value")
        value = argv[i + 1]
        if letter == "w":
            label = _number("w", tok[2:]) if len(tok) > 2 else None
            if label is None:
                raise UsageError("-wi weight: the label goes right after -w (e.g. -w1 2)")
            flags["w"][label] = _number(tok[1:], value)
        elif letter in "sv" and len(tok) == 2:
            flags[letter] = _number(letter, value, int)
        elif letter in "cpeBn" and len(tok) == 2:
            flags[letter] = _number(letter, value)
        else:
            raise UsageError(f"unknown option: {tok}")
        i += 2
    rest = argv[i:]
    if not rest or len(rest) > 2:
        raise UsageError("give the training file, and optionally the model file")
    model = rest[1] if len(rest) == 2 else os.path.basename(rest[0]) + ".model"
    return flags, rest[0], model


def _solver_type(flags):
    """The ``-s`` type (``-C`` alone picks 2, as LIBLINEAR does), checked
    against what this primaldual can train."""
    types = lazy_attr("primaldual.liblinear_format", "SOLVER_TYPES")
    number = flags.get("s", 2 if flags.get("C") else 1)
    if number not in types:
        raise UsageError(f"-s {number} is not a LIBLINEAR solver type (0-7, 11-13, 21)")
    stype = types[number]
    if flags.get("C") and number not in (0, 2, 11):
        raise UsageError("Warm-start parameter search only available for -s 0, -s 2 and "
                         "-s 11")
    missing = _unavailable(stype)
    if missing:
        raise ValueError(missing)
    return stype


#: for a type this primaldual cannot train: the nearest one it can
_NEAREST = {4: 1, 5: 2, 6: 0, 21: None}


#: the losses every primaldual has (docs/conventions.md §1)
_CORE_LOSSES = ("hinge", "squared_hinge", "logistic", "epsilon_insensitive",
                "squared_epsilon_insensitive")


def _unavailable(stype, reason=None):
    """None when ``stype`` can be trained here; else a one-line error naming
    the nearest type that can.  The loss registry is consulted only for the
    losses that are not always there (Crammer-Singer)."""
    types = lazy_attr("primaldual.liblinear_format", "SOLVER_TYPES")
    if stype.number == 21:
        reason = "one-class SVM is not a model primaldual trains"
    elif (reason is None and stype.loss not in _CORE_LOSSES
          and stype.loss not in lazy_attr("primaldual.losses", "LOSS_NAMES")
          and stype.loss not in lazy_attr("primaldual.multiclass", "MULTICLASS_LOSSES")):
        reason = f"it needs the loss {stype.loss!r}, which this primaldual does not have"
    if reason is None:
        return None
    near = _NEAREST.get(stype.number)
    hint = (f"; the nearest type available is -s {near} ({types[near].title})"
            if near is not None else "")
    return f"-s {stype.number} ({stype.title}): {reason}{hint}"


def unavailable_l1(req, err):
    """The one-line error of an L1 type (-s 5, 6) that no solver here runs."""
    stype = lazy_attr("primaldual.liblinear_format", "SOLVER_TYPES")[req.solver_type]
    return _unavailable(stype, f"the pure L1 problem (lam = 0) is not solved here ({err})")


def train_request(argv):
    """The :class:`.request.FitRequest` of ``primaldual train ARGV``."""
    flags, train, model = parse_train(argv)
    if flags.get("R"):
        raise UsageError("-R (an unregularized bias) is not available: primaldual "
                         "regularizes the bias feature, as LIBLINEAR does by default")
    if "n" in flags:
        raise UsageError("-n nu is for one-class SVM (-s 21), which primaldual does not "
                         "train")
    stype = _solver_type(flags)
    C = flags.get("c", 1.0)
    if not C > 0:
        raise ValueError(f"C <= 0 (-c {C:g}); give a C > 0")
    p = flags.get("p", 0.1)
    if p < 0:
        raise ValueError(f"p < 0 (-p {p:g}); give an epsilon >= 0")
    tol = flags.get("e", DEFAULT_TOL)
    if not tol > 0:
        raise ValueError(f"eps <= 0 (-e {tol:g}); give a tolerance > 0")
    if "v" in flags and flags["v"] < 2:
        raise UsageError("n-fold cross validation: n must >= 2")
    regression = stype.number in (11, 12, 13)
    loss_params = {"epsilon": p} if regression else {}
    classification = check_loss(stype.loss, loss_params)
    bias = flags.get("B", -1.0)
    folds = flags.get("v", 5 if flags.get("C") else None)
    return FitRequest(
        command="train", train=train, loss_name=stype.loss,
        loss_params=MappingProxyType(loss_params), classification=classification,
        lam=None, C=C, l1=0.0, bias=bias if bias >= 0 else None,
        class_weight=dict(flags["w"]) or None, jobs=1, solver="auto",
        options=MappingProxyType({"progress": False}), tol=tol, max_epochs=None,
        seed=0, normalize=False, json=False, quiet=bool(flags.get("q")),
        penalty=stype.penalty, weight_rule="liblinear",
        model=None if folds or flags.get("C") else model, model_format="liblinear",
        solver_type=stype.number, folds=folds, find_c=bool(flags.get("C")),
        C_given="c" in flags, p_given="p" in flags, liblinear_lines=True)


# ------------------------------------------------------------------ predict
def is_model_file(path) -> bool:
    """A primaldual ``.npz`` model or a LIBLINEAR text model, by content."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(12)
    except OSError:
        return False
    return head[:4] in (b"PK\x03\x04", b"PK\x05\x06") or head == b"solver_type "


def liblinear_predict_request(argv):
    """The :class:`.request.PredictRequest` of LIBLINEAR's ``predict`` order,
    or None when ``argv`` is in ours (``MODEL DATA [OUT]``)."""
    flags, i = {}, 0
    while i < len(argv) and argv[i] in ("-b", "-q"):
        if argv[i] == "-q":
            flags["q"] = True
            i += 1
            continue
        if i + 1 >= len(argv) or argv[i + 1] not in ("0", "1"):
            raise UsageError("-b expects 0 or 1 (probability estimates)")
        flags["b"] = argv[i + 1] == "1"
        i += 2
    rest = argv[i:]
    liblinear_flags = bool(flags)
    if any(a.startswith("-") and a != "-" for a in rest):
        if liblinear_flags:
            raise UsageError(f"unknown option among {rest}; " + PREDICT_USAGE)
        return None                          # ours: argparse reads it
    if len(rest) == 3 and not is_model_file(rest[0]) and is_model_file(rest[1]):
        test, model, out = rest
    elif liblinear_flags and len(rest) == 3:
        test, model, out = rest              # LIBLINEAR's flags: LIBLINEAR's order
    else:
        if liblinear_flags:
            raise UsageError(PREDICT_USAGE)
        return None
    return PredictRequest("predict", model, test, out, bool(flags.get("b")), False,
                          quiet=bool(flags.get("q")), liblinear=True)


def cmd_train(req) -> int:
    """Train (or cross-validate, or search C) as LIBLINEAR's ``train`` does."""
    try:
        if req.find_c:
            return lazy_attr("primaldual.cli.crossval", "find_c")(req)
        if req.folds:
            return lazy_attr("primaldual.cli.crossval", "liblinear_cv")(req)
        prepare = lazy_module("primaldual.cli.prepare")
        data = prepare.read_training_data(req)
        fitted = lazy_attr("primaldual.cli.core", "fit_model")(req, data, quiet_labels=True)
    except ValueError as e:
        if req.penalty != "l1" or "lam" not in str(e):
            raise
        raise ValueError(unavailable_l1(req, e)) from None
    return lazy_attr("primaldual.cli.report", "finish")(req, fitted, data)
