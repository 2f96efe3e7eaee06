"""The ``primaldual`` command line (docs/conventions.md §6).

::

    primaldual fit TRAIN [--test TEST] [--loss NAME] [--loss-param KEY=VALUE]
                   [--lam X | -c C] [--l1 X] [--bias B] [--class-weight SPEC] [--jobs 1] [--solver NAME]
                   [--option KEY=VALUE ...] [--tol X] [--max-epochs N] [--time-limit S]
                   [--seed N] [--normalize] [--model OUT.npz] [--trace OUT.csv]
                   [--plot OUT.png] [--checkpoint DIR] [--checkpoint-every K] [--resume]
                   [--scheduler ADDRESS [--partitions K] [--parts-dir DIR]]
                   [--json] [--quiet]
    primaldual cv TRAIN [--folds K] [--lam X | --lams X,Y,... | -c C | --Cs C1,C2,...
                   | --n-lams N --lam-ratio EPS] ... [--json] [--quiet]
    primaldual predict MODEL DATA [OUTPUT] [--proba] [--json]
    primaldual info DATA [--json]
    primaldual solvers [NAME] [--json]
    primaldual bench ...     (dispatches to primaldual.bench.cli.main)
    primaldual demo ...      (dispatches to primaldual.demo.main)

Two labels are mapped to -1/+1; more than two train one-vs-rest with
:class:`primaldual.LinearClassifier` (same seeds, same result).  ``--bias B``
is LIBLINEAR's ``-B``: a constant feature of value B with a regularized
weight; ``-c C`` is LIBLINEAR's C (lam = 1/(C W)).  ``--class-weight`` is
``balanced`` or ``LABEL:W,...`` (LIBLINEAR's ``-wi``, also accepted).  ``--scheduler`` trains ``cocoa``/``minibatch_sdca`` on a running
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

A command reads as LIBLINEAR's ``train.c``: parse (:mod:`.parser` reads the
text, :mod:`.request` builds one frozen request and checks what needs no
data), read and check the data (:mod:`.prepare`), train (one module per
command group: :mod:`.fit`, :mod:`.cv`, :mod:`.describe` for predict, info and
solvers), save (:mod:`.files`: data, part, prediction, trace and plot files).
:mod:`.output` writes notes, labels and JSON numbers; :func:`main` is here.
"""
from __future__ import annotations

import importlib
import sys

from .._extras import MissingExtraError
from .parser import build_parser, parse_args, parse_option, parse_value

# A command's module (and what it needs: solvers, kernels, scikit-learn) is
# imported when the command runs, so that ``--help`` loads only the parser.
_COMMAND_MODULES = {"fit": ("fit", "cmd_fit"), "cv": ("cv", "cmd_cv"),
                    "predict": ("describe", "cmd_predict"),
                    "info": ("describe", "cmd_info"),
                    "solvers": ("describe", "cmd_solvers")}
_FILES_NAMES = ("encode_binary_labels", "read_libsvm", "split_libsvm", "write_trace_csv")


def __getattr__(name):
    if name in _FILES_NAMES:
        return getattr(importlib.import_module(f"{__name__}.files"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _command(name):
    module, function = _COMMAND_MODULES[name]
    return getattr(importlib.import_module(f"{__name__}.{module}"), function)

__all__ = ["main", "build_parser", "parse_value", "parse_option", "read_libsvm",
           "encode_binary_labels", "split_libsvm", "write_trace_csv"]


def _dispatch(command, rest) -> int:
    """``bench`` and ``demo`` hand their arguments to their own parsers (imported
    here, by name: they sit in the same layer, and a missing one is reported)."""
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


def main(argv=None) -> int:
    """Run the command line; returns the exit code (0 on success)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("bench", "demo"):
        return _dispatch(argv[0], argv[1:])
    try:
        args = parse_args(argv)
    except SystemExit as e:          # usage errors and --help: argparse's code
        return int(e.code or 0)
    try:
        # the request module (dataclasses) is loaded after parsing: --help stays light
        request = importlib.import_module(f"{__name__}.request").make_request(args)
        return _command(request.command)(request)
    except (ValueError, OSError, FloatingPointError, MemoryError, MissingExtraError) as e:
        print(f"primaldual {args.command}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        hint = (f"; continue with --resume --checkpoint {args.checkpoint}"
                if getattr(args, "checkpoint", None) else "")
        print(f"primaldual {args.command}: interrupted{hint}", file=sys.stderr)
        return 130
