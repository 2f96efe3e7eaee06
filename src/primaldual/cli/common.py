"""Helpers shared by ``fit`` and ``cv``: notes on stderr, labels and class
weights, the bias column, the train/test files and the solver arguments."""
from __future__ import annotations

import sys

import numpy as np

from .._extras import have
from ..estimators import add_intercept_column
from .files import _format_label, encode_binary_labels, read_libsvm
from .parser import _parse_class_weight


# --------------------------------------------------------------- commands
def _note(args, msg):
    if not getattr(args, "quiet", False):
        print(f"primaldual {args.command}: {msg}", file=sys.stderr)


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
    if values.size > 2:
        frac = values[values != np.round(values)]
        if frac.size:
            shown = ", ".join(_format_label(v) for v in frac[:5])
            raise ValueError(f"{source}: {values.size} distinct labels, some not whole "
                             f"numbers ({shown}); loss={loss_name!r} trains classes "
                             f"(one-vs-rest for more than two), which need class labels. "
                             f"For real-valued targets use a regression loss such as "
                             f"--loss squared")
    return values


def _with_bias(X, bias):
    if bias is None or X is None:
        return X
    return add_intercept_column(X, float(bias))


def _read_train_test(args):
    paths = [args.train] + ([args.test] if getattr(args, "test", None) else [])
    parts, args.index_base = read_libsvm(paths, with_base=True)
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


def _split_bias(coef_full, bias):
    if bias is None:
        return np.asarray(coef_full, dtype=np.float64), 0.0
    return np.asarray(coef_full[:-1], dtype=np.float64), float(bias) * float(coef_full[-1])
