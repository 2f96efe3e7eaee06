"""The files the command line reads and writes: LIBSVM data as matrices
(:mod:`.libsvm`; dense rows into a dense array), labels to -1/+1, part files
for a Dask cluster, prediction files, trace CSVs and plots.  Every output is
written by :func:`primaldual._util.atomic.atomic_write` without creating
directories: a regular file atomically, ``-``, devices and FIFOs through."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from .._extras import require
from .._util import atomic_write, encode_pm1
from .libsvm import DENSE_MIN_DENSITY, read_files
from .prepare import classes_of


# --------------------------------------------------------------------- data
def density(X) -> float:
    """The share of the cells of ``X`` that are stored (CSR) or nonzero (dense)."""
    n, d = X.shape
    return float(nnz_of(X)) / (n * d) if n * d else 0.0


def nnz_of(X) -> int:
    """Stored values of a CSR matrix, nonzeros of a dense array."""
    return int(np.count_nonzero(X)) if isinstance(X, np.ndarray) else int(X.nnz)


def read_libsvm(paths, n_features=None, *, zero_based="auto", with_base=False,
                dense="auto"):
    """Parse LIBSVM files with one shared column count (:func:`.libsvm.read_files`).

    Returns ``[(X, y_raw), ...]`` (with ``with_base``: ``(list, base)``, the
    index base used, 0 or 1).  ``X`` is a CSR matrix, or a dense array when
    ``dense`` is True or, for ``dense="auto"``, when the file's density is at
    least :data:`DENSE_MIN_DENSITY`; each file is judged on its own.  With
    ``n_features``, features beyond it are ignored (as LIBLINEAR does).
    """
    base = None if zero_based == "auto" else (0 if zero_based else 1)
    rows = read_files(paths, base=base, n_features=n_features)
    out = [(r.matrix(dense), r.y) for r in rows]
    return (out, rows[0].base) if with_base else out


def encode_binary_labels(y_raw, loss_name, source):
    """Map two distinct labels to -1/+1 (the larger becomes +1).

    Returns ``(y, classes)`` with ``classes = [negative, positive]``.
    """
    values = classes_of(y_raw, loss_name, source)
    if values.size > 2:
        shown = ", ".join(f"{v:g}" for v in values[:6]) + (", ..." if values.size > 6
                                                           else "")
        raise ValueError(f"{source}: {values.size} distinct labels ({shown}) but "
                         f"loss={loss_name!r} is a binary classification loss that needs "
                         f"two; keep two classes, or a regression loss such as "
                         f"--loss squared")
    neg, pos = float(values[0]), float(values[1])
    return encode_pm1(y_raw, pos, neg, source=source), np.array([neg, pos])


def _atomic_write_text(path, text):
    with atomic_write(path, "w", newline="", make_dirs=False) as fh:
        fh.write(text)


# ------------------------------------------------------------ predictions
def write_lines(path, lines):
    """Write ``lines`` (each ended by a newline) to ``path`` atomically."""
    _atomic_write_text(path, "".join(line + "\n" for line in lines))


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
    with atomic_write(path, make_dirs=False) as fh:
        fig.savefig(fh, format="png", dpi=100)


def split_libsvm(path, k, out_dir, *, normalize=False, with_base=False):
    """Split a LIBSVM file into ``k`` contiguous part files in ``out_dir``.

    The rows are divided as :func:`numpy.array_split` divides them (the
    partitions the local ``cocoa``/``minibatch_sdca`` use); the parts are
    written with :func:`sklearn.datasets.dump_svmlight_file` (1-based indices,
    labels and values at full precision).  Returns ``(paths, n_features)``, and
    the index base of ``path`` as a third item with ``with_base``.
    """
    from sklearn.datasets import dump_svmlight_file

    ((X, y),), base = read_libsvm([path], with_base=True, dense=False)
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
    return (paths, int(X.shape[1]), base) if with_base else (paths, int(X.shape[1]))


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
