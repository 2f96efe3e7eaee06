"""The request: what one command line asks for, as one frozen object.

:func:`make_request` reads the argparse namespace once and checks everything
that needs no data (loss, strengths, solver, ``--option`` values, threads,
bias, class weights, flags that go together); the commands read the request
and never the namespace.  ``primaldual train`` (:mod:`.liblinear`) builds the
same :class:`FitRequest` from LIBLINEAR's flags.  Checks that need the loss
or solver registries import them only when a flag names something they
decide (``--solver sdca``, ``--option``, a loss with parameters), so a
default command stays light.
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

from .._extras import have, require
from .._util.lazy import lazy_attr
from .._util.threads import resolve_n_jobs
from ..direct_newton import LOSSES as DIRECT_LOSSES, PARAMS as DIRECT_PARAMS
from .parser import (FLAG_OPTIONS, key_value, parse_class_weight, parse_number_list,
                     parse_option, parse_pairs)

#: ``fit``'s C when neither --lam nor -c is given: LIBLINEAR's default ``-c 1``
DEFAULT_C = 1.0


@dataclass(frozen=True)
class TrainRequest:
    """What ``fit``, ``train`` and ``cv`` share: the data, the problem, the solver."""

    command: str
    train: str
    loss_name: str
    loss_params: Mapping             # --loss-param, read-only
    classification: bool
    lam: float | None                # --lam; None when -c gives C instead
    C: float | None                  # LIBLINEAR's C (-c); lam = 1/(C W) once W is known
    l1: float
    bias: float | None
    class_weight: Any                # None, "balanced" or {label: weight}
    jobs: int
    solver: str
    options: Mapping                 # --option values and the run options, read-only
    tol: float
    max_epochs: float | None
    seed: int
    normalize: bool
    json: bool
    quiet: bool
    scale: bool = False
    #: "l2": C sets lam; "l1" (LIBLINEAR's -s 5, 6): C sets l1 and lam = 0
    penalty: str = "l2"
    #: "sample": a sample keeps its class weight in every one-vs-rest problem (the
    #: estimators); "liblinear": only the positive class of each problem (-wi)
    weight_rule: str = "sample"

    @property
    def solve_loss_params(self):
        """``loss_params`` as :func:`primaldual.solve` takes it (a dict or None)."""
        return dict(self.loss_params) or None

    @property
    def n_jobs(self):
        """``n_jobs`` for :func:`primaldual.solve` (None for one thread)."""
        return None if self.jobs == 1 else self.jobs

    def lam_for(self, weight_total: float) -> float:
        """The strength of the fit: --lam, or 1/(C W) for -c C, W the total sample
        weight: LIBLINEAR minimizes ``||w||^2/2 + C sum_i c_i phi_i``, which is
        ``C W`` times ``(1/W) sum_i c_i phi_i + ||w||^2/(2 C W)``."""
        if self.C is None:
            return float(self.lam)
        return 1.0 / (self.C * float(weight_total))


@dataclass(frozen=True)
class FitRequest(TrainRequest):
    """``primaldual fit`` and ``primaldual train``."""

    test: str | None = None
    time_limit: float | None = None
    model: str | None = None
    #: "npz" (fit --model) or "liblinear" (train: LIBLINEAR's text format)
    model_format: str = "npz"
    solver_type: int | None = None     # train: LIBLINEAR's -s
    trace: str | None = None
    plot: str | None = None
    checkpoint: str | None = None
    checkpoint_every: float = 1.0
    resume: bool = False
    scheduler: str | None = None
    partitions: int | None = None
    parts_dir: str | None = None
    folds: int | None = None           # train -v K: cross-validation, no model
    find_c: bool = False               # train -C: a C search by cross-validation
    C_given: bool = False              # train: -c was on the command line
    p_given: bool = False              # train: -p was on the command line
    liblinear_lines: bool = False      # print LIBLINEAR's lines (train)


@dataclass(frozen=True)
class CVRequest(TrainRequest):
    """``primaldual cv``: ``lams`` or ``Cs`` given, or a searched lam grid."""

    folds: int = 5
    lams: tuple | None = None        # --lam / --lams, largest first
    Cs: tuple | None = None          # -c / --Cs, smallest first (largest lam first)
    n_lams: int = 10
    lam_ratio: float = 1e-3


@dataclass(frozen=True)
class PredictRequest:
    command: str
    model: str
    data: str
    output: str | None
    proba: bool
    json: bool
    quiet: bool = False
    liblinear: bool = False          # LIBLINEAR's order and output lines


@dataclass(frozen=True)
class InfoRequest:
    command: str
    data: str
    json: bool


@dataclass(frozen=True)
class SolversRequest:
    command: str
    name: str | None
    json: bool


# ------------------------------------------------------------------ build
def make_request(args):
    """The request of the parsed command line ``args`` (a ValueError names
    the first problem found)."""
    if args.command == "predict":
        return PredictRequest(args.command, args.model, args.data, args.output,
                              bool(args.proba), bool(args.json))
    if args.command == "info":
        return InfoRequest(args.command, args.data, bool(args.json))
    if args.command == "solvers":
        return SolversRequest(args.command, args.name, bool(args.json))
    if args.command == "fit":
        return _fit_request(args)
    if args.command == "cv":
        return _cv_request(args)
    raise ValueError(f"unknown command {args.command!r}")


def _plain_param(name, params):
    """``params`` is exactly the loss's one parameter, a finite number >= 0
    (anything else goes to the registry, which names the problem)."""
    key = DIRECT_PARAMS.get(name, (None,))[0]
    value = params.get(key) if len(params) == 1 else None
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0)


def check_loss(name, params):
    """Whether loss ``name`` (with ``params``) is a classification loss; an
    unknown loss or parameter is a ValueError.  The losses the command line
    solves itself are known without importing the loss registry."""
    if name in DIRECT_LOSSES and (not params or _plain_param(name, params)):
        return DIRECT_LOSSES[name]
    return bool(lazy_attr("primaldual.multiclass", "make_any_loss")(name, params or None)
                .classification)


def check_strengths(lam, l1):
    for name, val, low in (("lam", lam, "> 0"), ("l1", l1, ">= 0")):
        if val is None:
            continue
        if not math.isfinite(val):
            raise ValueError(f"{name} must be finite, got {val!r}; pass a finite number "
                             f"such as {'1e-4' if name == 'lam' else '0'}")
        if val < 0 or (name == "lam" and val == 0 and not l1):
            raise ValueError(f"{name} must be {low}, got {name}={val!r}"
                             + ("; use l1=0 for no L1 term" if name == "l1" else ""))


def check_solver(solver):
    if solver != "auto":
        lazy_attr("primaldual.solvers", "check_solver_name")(solver)


def _solver_options(args):
    """The ``--option`` pairs, each read by the type of the solver's option,
    after the refusals of the options that have their own flags."""
    keys = [key_value(text, "--option")[0] for text in args.option or ()]
    for key, flag in FLAG_OPTIONS.items():
        if key in keys:
            hint = f"use {flag}" if flag else "it is not available from the command line"
            raise ValueError(f"--option {key} is not accepted here: {hint}")
    solver = args.solver
    if solver == "auto" and getattr(args, "scheduler", None):
        # what --scheduler runs for auto
        solver = "l1_newton" if args.penalty == "l1" or args.l1 > 0 else "cocoa"
    return parse_pairs(args.option, "--option", lambda k, v: parse_option(solver, k, v))


def _train_fields(args, lam, C):
    """The checks ``fit`` and ``cv`` share, and the fields of TrainRequest."""
    loss_params = parse_pairs(args.loss_param, "--loss-param")
    classification = check_loss(args.loss, loss_params)
    if C is not None and not (math.isfinite(C) and C > 0):
        raise ValueError(f"-c/--C must be a finite number > 0 (LIBLINEAR's C), got {C}")
    check_strengths(lam, args.l1)
    if args.penalty == "l1" and args.l1 != 0:
        raise ValueError(f"--penalty l1 takes its strength from --lam or -c; drop "
                         f"--l1 {args.l1:g}")
    check_solver(args.solver)
    options = _solver_options(args) if args.option else {}
    resolve_n_jobs(args.jobs)            # --jobs 0 or garbage: a clear error now
    if args.bias is not None and not (math.isfinite(args.bias) and args.bias > 0):
        raise ValueError(f"--bias must be a finite number > 0 (the value of the constant "
                         f"feature), got {args.bias}")
    spec = ",".join(args.class_weight) if args.class_weight else None
    if spec is not None and not classification:
        raise ValueError(f"--class-weight needs a classification loss; loss={args.loss!r} "
                         f"is a regression loss")
    if args.normalize and getattr(args, "scale", False):
        raise ValueError("give --scale (each column, as svm-scale) or --normalize (each "
                         "row to unit norm), not both")
    if "progress" not in options:
        options["progress"] = (sys.stdout.isatty() and not args.quiet
                               and have("tqdm"))
    return dict(command=args.command, train=args.train, loss_name=args.loss,
                loss_params=MappingProxyType(loss_params), classification=classification,
                lam=lam, C=C, l1=args.l1, penalty=args.penalty, bias=args.bias,
                class_weight=parse_class_weight(spec), jobs=args.jobs,
                solver=args.solver, options=options, tol=args.tol,
                max_epochs=args.max_epochs, seed=args.seed,
                normalize=bool(args.normalize), scale=bool(getattr(args, "scale", False)),
                json=bool(args.json), quiet=bool(args.quiet))


def _fit_request(args):
    if args.lam is not None and args.C is not None:
        raise ValueError(f"give either --lam {args.lam:g} or -c {args.C:g} (LIBLINEAR's C, "
                         f"which sets lam = 1/(C W)), not both")
    C = DEFAULT_C if args.lam is None and args.C is None else args.C
    fields = _train_fields(args, args.lam, C)
    if args.max_epochs is not None and not args.max_epochs > 0:
        raise ValueError(f"max_epochs must be > 0, got {args.max_epochs}")
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
    elif args.C is not None:
        raise ValueError("-c/--C needs the number of samples, which the Dask workers hold "
                         "with --scheduler; give --lam 1/(C n) instead")
    elif args.partitions is not None and args.partitions < 1:
        raise ValueError(f"--partitions must be >= 1, got {args.partitions}")
    if args.scheduler is not None and args.scale:
        raise ValueError("--scale is not available with --scheduler (the rows stay on "
                         "the workers); scale the part files, or train locally")
    if args.plot and args.scheduler is None:
        require("matplotlib", "--plot")        # before the fit, not after it
    options = fields.pop("options")
    if args.scheduler is None:           # the cluster path sets its own
        if args.checkpoint:
            options["checkpoint"] = args.checkpoint
            options["checkpoint_every"] = args.checkpoint_every
        if args.resume:
            options["resume"] = args.checkpoint
        if args.time_limit is not None:
            options["time_limit"] = args.time_limit
    return FitRequest(**fields, options=MappingProxyType(options), test=args.test,
                      time_limit=args.time_limit, model=args.model, trace=args.trace,
                      plot=args.plot, checkpoint=args.checkpoint,
                      checkpoint_every=args.checkpoint_every, resume=bool(args.resume),
                      scheduler=args.scheduler, partitions=args.partitions,
                      parts_dir=args.parts_dir)


def _cv_request(args):
    given = [f for f, v in (("--lam", args.lam), ("--lams", args.lams), ("-c", args.C),
                            ("--Cs", args.Cs)) if v is not None]
    if len(given) > 1:
        raise ValueError(f"give either --lam X (one value), --lams X,Y,... (a list), -c C "
                         f"or --Cs C1,C2,... (LIBLINEAR's C), not both {' and '.join(given)}")
    if args.penalty != "l2":
        raise ValueError("cv searches the L2 strength; --penalty l1 is for fit (a path "
                         "over l1 is primaldual.regpath.l1_path)")
    fields = _train_fields(args, args.lam, args.C)
    if args.folds < 2:
        raise ValueError(f"--folds must be >= 2, got {args.folds}")
    if args.n_lams < 1:
        raise ValueError(f"--n-lams must be >= 1, got {args.n_lams}")
    if not (0 < args.lam_ratio < 1):
        raise ValueError(f"--lam-ratio must be in (0, 1), got {args.lam_ratio}")
    lams = Cs = None
    if args.lam is not None:
        if not (math.isfinite(args.lam) and args.lam > 0):
            raise ValueError(f"every lam must be a finite number > 0, got {args.lam}")
        lams = (args.lam,)
    elif args.lams is not None:
        lams = tuple(sorted(parse_number_list(args.lams, "--lams", "lam"), reverse=True))
    elif args.C is not None:
        Cs = (args.C,)
    elif args.Cs is not None:
        Cs = tuple(sorted(parse_number_list(args.Cs, "--Cs", "C")))
    options = fields.pop("options")
    options["progress"] = False
    return CVRequest(**fields, options=MappingProxyType(options), folds=args.folds,
                     lams=lams, Cs=Cs, n_lams=args.n_lams, lam_ratio=args.lam_ratio)


__all__ = ["CVRequest", "DEFAULT_C", "FitRequest", "InfoRequest", "PredictRequest",
           "SolversRequest", "TrainRequest", "check_loss", "check_solver",
           "check_strengths", "make_request"]
