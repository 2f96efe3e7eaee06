"""The ``primaldual`` command line (docs/cli.md).

::

    primaldual fit TRAIN [--test TEST] [--loss NAME] [--lam X | -c C] [--scale] ...
    primaldual train [LIBLINEAR's options] TRAIN [MODEL]
    primaldual predict MODEL DATA [OUTPUT] [--proba] [--json]
    primaldual predict [-b 1] [-q] TEST MODEL OUTPUT        (LIBLINEAR's order)
    primaldual cv TRAIN [--folds K] [--lam X | --lams ... | -c C | --Cs ...] ...
    primaldual info DATA [--json]
    primaldual solvers [NAME] [--json]
    primaldual bench ... | primaldual demo ...

A command reads as LIBLINEAR's ``train.c``: parse (:mod:`.parser`, or
:mod:`.liblinear` for LIBLINEAR's flags) into one frozen request
(:mod:`.request`), read the data once (:mod:`.prepare`, :mod:`.libsvm`), fit
through the one fit core (:mod:`.core`), report and save (:mod:`.report`).
A command imports only what it uses: ``--help`` loads the parser alone, and a
small fit runs in numpy (:mod:`primaldual.direct_newton`) without loading compiled kernels.

Errors go to stderr as ``primaldual <command>: error: <message>`` with exit
code 1 (2 for usage errors).  Ctrl-C at any moment -- while modules load, during
a fit, after the last write -- ends the command with exit code 130 and one
line on stderr, never a traceback.
"""
from __future__ import annotations

import os
import signal
import sys

from .._extras import MissingExtraError
from .._util.lazy import lazy_attr, lazy_module
from .parser import build_parser, parse_args, parse_option, parse_value

#: command -> its function, imported when the command runs (literal names, so
#: that tests/test_layers.py sees every one)
_COMMAND_MODULES = {
    "fit": lambda: lazy_attr("primaldual.cli.fit", "cmd_fit"),
    "train": lambda: lazy_attr("primaldual.cli.liblinear", "cmd_train"),
    "cv": lambda: lazy_attr("primaldual.cli.cv", "cmd_cv"),
    "predict": lambda: lazy_attr("primaldual.cli.predict", "cmd_predict"),
    "info": lambda: lazy_attr("primaldual.cli.describe", "cmd_info"),
    "solvers": lambda: lazy_attr("primaldual.cli.describe", "cmd_solvers"),
}
_FILES_NAMES = ("encode_binary_labels", "read_libsvm", "split_libsvm", "write_trace_csv")


def __getattr__(name):
    if name in _FILES_NAMES:
        return lazy_attr("primaldual.cli.files", name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _command(name):
    return _COMMAND_MODULES[name]()


__all__ = ["main", "build_parser", "parse_value", "parse_option", "read_libsvm",
           "encode_binary_labels", "split_libsvm", "write_trace_csv"]


def _dispatch(command, rest) -> int:
    """``bench`` and ``demo`` hand their arguments to their own parsers."""
    module = "primaldual.bench.cli" if command == "bench" else "primaldual.demo"
    try:
        mod = (lazy_module("primaldual.bench.cli") if command == "bench"
               else lazy_module("primaldual.demo"))
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


def _request(argv):
    """``(command, request)``, or ``(command, exit code)`` for usage errors and --help."""
    command = argv[0] if argv else None
    liblinear = lazy_module("primaldual.cli.liblinear")
    try:
        if command == "train":
            if len(argv) == 1 or argv[1] in ("-h", "--help"):
                print(liblinear.TRAIN_USAGE)
                return command, 0 if len(argv) > 1 else 2
            return command, liblinear.train_request(argv[1:])
        if command == "predict":
            req = liblinear.liblinear_predict_request(argv[1:])
            if req is not None:
                return command, req
    except liblinear.UsageError as e:
        usage = liblinear.TRAIN_USAGE if command == "train" else liblinear.PREDICT_USAGE
        print(f"primaldual {command}: error: {e}\n{usage}", file=sys.stderr)
        return command, 2
    try:
        args = parse_args(argv)
    except SystemExit as e:          # usage errors and --help: argparse's code
        return command, int(e.code or 0)
    return args.command, lazy_attr("primaldual.cli.request", "make_request")(args)


def _interrupted(exc) -> bool:
    """Whether ``exc`` is, or was raised while handling, a KeyboardInterrupt (an
    extension module interrupted while loading reports an ImportError)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _run(argv) -> int:
    command, req = (argv[0] if argv else "primaldual"), None
    try:
        if argv and argv[0] in ("bench", "demo"):
            return _dispatch(argv[0], argv[1:])
        command, req = _request(argv)
        if isinstance(req, int):
            return req
        return _command(req.command)(req)
    except KeyboardInterrupt:
        checkpoint = getattr(req, "checkpoint", None)
        hint = f"; continue with --resume --checkpoint {checkpoint}" if checkpoint else ""
        print(f"primaldual {command}: interrupted{hint}", file=sys.stderr)
        return 130
    except (ValueError, OSError, FloatingPointError, MemoryError, MissingExtraError,
            ImportError, SystemError) as e:
        if _interrupted(e):
            print(f"primaldual {command}: interrupted", file=sys.stderr)
            return 130
        if isinstance(e, (ImportError, SystemError)) and not isinstance(e, MissingExtraError):
            raise
        print(f"primaldual {command}: error: {e}", file=sys.stderr)
        return 1


def _exit_130_on_sigint(signum, frame):
    """After the last write: a Ctrl-C ends the process with 130, not by the signal."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(130)


def main(argv=None) -> int:
    """Run the command line; returns the exit code (0 on success, 130 after Ctrl-C).

    Called as the program (``argv`` None), a Ctrl-C that arrives after the
    command returned (while the interpreter shuts down) also exits with 130.
    """
    program = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        code = _run(argv)
    except KeyboardInterrupt:        # between the handlers above (a Ctrl-C arriving late)
        print("primaldual: interrupted", file=sys.stderr)
        code = 130
    if program and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _exit_130_on_sigint)
    return code
