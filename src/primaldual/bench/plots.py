"""Plots in the papers' style (matplotlib, Agg backend, PNG).

One figure per (experiment, plot kind); one panel per (dataset, lam) laid
out as the SDCA paper's figures (rows: lam, columns: data sets); one line
per solver (and loss, when an experiment has several), peers dashed; a
single legend to the right of the panels.  Time axes are logarithmic (points
at time 0 are left out).  Gap and sub-optimality use a log scale; values at or
below zero (reached the reference within rounding) are dropped, and the
reference's certified accuracy is drawn as a dotted floor.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .._extras import require

__all__ = ["plot_experiments", "plot_experiment", "plot_overview", "panel_grid", "save_figure",
           "METRICS", "line_style"]

#: plot kind prefix -> (trace key, axis label, log scale)
METRICS = {
    "gap": ("rel_gap", "relative duality gap", True),
    "subopt": ("rel_subopt", "relative primal sub-optimality", True),
    "certified": ("certified_subopt", "certified relative sub-optimality", True),
    "test_error": ("test_error", "test error", False),
}
AXES = {"epochs": ("epoch", "epochs"), "time": ("time", "seconds")}

_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#aec7e8"]
_MARKERS = ["o", "s", "^", "v", "D", "x", "+", "*", "<", ">", "p", "h"]


def _plt():
    matplotlib = require("matplotlib", "the figures (--no-plots goes without)")
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


_DASHES = ["-", "--", ":", "-."]


def line_style(i, group=0):
    """Colour and marker of the i-th line (stable across panels and figures);
    ``group`` (e.g. the loss) picks the dash pattern."""
    return {"color": _COLORS[i % len(_COLORS)], "marker": _MARKERS[i % len(_MARKERS)],
            "markersize": 3, "linewidth": 1.3, "markevery": 0.1,
            "linestyle": _DASHES[group % len(_DASHES)]}


def panel_grid(n_rows, n_cols, *, row_labels=None, col_labels=None, title="",
               width=3.3, height=2.5):
    """A figure with an (n_rows x n_cols) grid of panels; returns (fig, axes 2-D array)."""
    plt = _plt()
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(width * n_cols + 0.6,
                                                      height * n_rows + 1.0),
                             squeeze=False)
    if col_labels:
        for j, lab in enumerate(col_labels):
            axes[0, j].set_title(lab, fontsize=10)
    if row_labels:
        for i, lab in enumerate(row_labels):
            axes[i, 0].annotate(lab, xy=(-0.34, 0.5), xycoords="axes fraction",
                                rotation=90, va="center", ha="center", fontsize=10)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig, axes


def save_figure(fig, path, *, handles=None, labels=None, dpi=80):
    """Put one legend to the right of the panels (outside every axis) and write a PNG.

    The figure is saved with a tight bounding box, so the legend never
    overlaps a panel, an axis label or a tick label.
    """
    plt = _plt()
    fig.tight_layout(rect=(0.02, 0.02, 1, 0.97))
    extra = []
    if handles:
        ncol = 1 if len(handles) <= 14 else 2
        extra.append(fig.legend(handles, labels, loc="upper left",
                                bbox_to_anchor=(1.0, 0.93), ncol=ncol, fontsize=8,
                                frameon=False))
    if fig._suptitle is not None:
        extra.append(fig._suptitle)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight", bbox_extra_artists=extra,
                pad_inches=0.15)
    plt.close(fig)
    return path


def _series(trace, xkey, ykey, log, xlog=False):
    xs, ys = [], []
    for rec in trace:
        y = rec.get(ykey)
        if y is None or not np.isfinite(y) or (log and y <= 0):
            continue
        if xlog and not rec[xkey] > 0:
            continue
        xs.append(rec[xkey])
        ys.append(y)
    return np.asarray(xs), np.asarray(ys)


def plot_experiment(result, exp, kind, path, *, dpi=80):
    """Draw one figure of ``kind`` ("gap-epochs", ...) for experiment ``exp``."""
    metric, axis = kind.rsplit("-", 1)
    ykey, ylabel, log = METRICS[metric]
    xkey, xlabel = AXES[axis]
    runs = [r for r in result.runs_of(exp.name) if r.status == "ok" and r.trace
            and r.seed == result.config.seeds[0]]
    runs = [r for r in runs if any(ykey in rec for rec in r.trace)]
    if not runs:
        return None
    datasets = list(dict.fromkeys(r.dataset for r in runs))
    lams = sorted({r.lam for r in runs}, reverse=True)
    losses = list(dict.fromkeys(r.loss for r in runs))
    multi_loss = len(losses) > 1
    labels = list(dict.fromkeys((f"{r.solver}, {r.loss}" if multi_loss else r.solver)
                                for r in runs))
    title = exp.title or f"{exp.name}: {ylabel} vs {xlabel}"
    if len(lams) > 1:          # the papers' layout: rows lam, columns data sets
        fig, axes = panel_grid(len(lams), len(datasets), col_labels=datasets,
                               row_labels=[f"λ = {lam:g}" for lam in lams], title=title)
        where = {(lam, ds): axes[i, j] for i, lam in enumerate(lams)
                 for j, ds in enumerate(datasets)}
    else:                      # one lam: wrap the data sets into rows of at most 5
        ncol = min(5, len(datasets))
        nrow = -(-len(datasets) // ncol)
        fig, axes = panel_grid(nrow, ncol, title=f"{title} (λ = {lams[0]:g})")
        where = {}
        for k, ds in enumerate(datasets):
            ax = axes[k // ncol, k % ncol]
            ax.set_title(ds, fontsize=9)
            where[(lams[0], ds)] = ax
        for k in range(len(datasets), nrow * ncol):
            axes[k // ncol, k % ncol].set_visible(False)
    handles = {}
    for r in runs:
        ax = where[(r.lam, r.dataset)]
        lab = f"{r.solver}, {r.loss}" if multi_loss else r.solver
        x, y = _series(r.trace, xkey, ykey, log, xlog=(axis == "time"))
        if x.size == 0:
            continue
        style = line_style(labels.index(lab), losses.index(r.loss))
        if getattr(r, "kind", "ours") == "peer" and not multi_loss:
            style["linestyle"] = "--"           # peers dashed, our solvers solid
        (h,) = ax.plot(x, y, label=lab, **style)
        handles.setdefault(lab, h)
        if metric == "subopt" and r.reference is not None and r.reference.rel_gap > 0:
            ax.axhline(r.reference.rel_gap, color="0.6", linestyle=":", linewidth=0.8)
    for ax in axes.ravel():
        if not ax.get_visible():
            continue
        if log:
            ax.set_yscale("log")
        if axis == "time" and ax.lines:
            ax.set_xscale("log")                # points at t <= 0 are left out
        ax.grid(True, which="major", alpha=0.3)
        ax.tick_params(labelsize=8)
    for ax in axes.ravel():
        if ax.get_visible():
            ax.set_xlabel(xlabel, fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel(ylabel, fontsize=8)
    hl = [handles[k] for k in labels if k in handles]
    return save_figure(fig, path, handles=hl, labels=[k for k in labels if k in handles],
                       dpi=dpi)


def plot_experiments(result):
    """Every plot of every experiment, under ``out_dir/plots``."""
    out = []
    for exp in result.config.experiments:
        for kind in exp.plots:
            p = plot_experiment(result, exp, kind,
                                result.out_dir / "plots" / f"{exp.name}_{kind}.png")
            if p is not None:
                out.append(p)
    return out


#: our solvers: solid lines in cool hues; peers: dashed lines in warm hues and black
OURS_COLORS = ["#1f4e9c", "#2ca02c", "#17becf", "#9467bd", "#6baed6", "#006d2c"]
PEER_COLORS = ["#d62728", "#ff7f0e", "#000000", "#e377c2", "#8c564b", "#bcbd22"]


def plot_overview(result, loss, path, *, ours, peers, metric="subopt", axis="time",
                  title=None, dpi=90, target=None):
    """One panel per data set for one loss: the named solvers against the peers.

    ``ours`` and ``peers`` are lists of solver labels (as in the runs); our
    solvers are drawn solid in cool colours, the peers dashed in warm colours
    and black, with one legend outside the panels, headed by group.  Log
    axes drop non-positive values, so no tick is negative.  The axes span
    the drawn points only; ``target`` (a value of the metric) is marked by a
    thin dotted line in the panels whose points reach across it.  Returns the
    path, or None when no run has points.
    """
    ykey, ylabel, log = METRICS[metric]
    xkey, xlabel = AXES[axis]
    runs = [r for r in result.runs if r.status == "ok" and r.trace and r.loss == loss
            and r.seed == result.config.seeds[0] and r.solver in set(ours) | set(peers)]
    if not runs:
        return None
    datasets = list(dict.fromkeys(r.dataset for r in runs))
    ncol = 2 if len(datasets) in (2, 4) else min(3, len(datasets))
    nrow = -(-len(datasets) // ncol)
    plt = _plt()
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.3 * ncol, 3.3 * nrow), squeeze=False)
    where = {}
    for k, ds in enumerate(datasets):
        ax = axes[k // ncol, k % ncol]
        ax.set_title(ds, fontsize=10)
        where[ds] = ax
    for k in range(len(datasets), nrow * ncol):
        axes[k // ncol, k % ncol].set_visible(False)
    style = {}
    for i, name in enumerate(ours):
        style[name] = dict(color=OURS_COLORS[i % len(OURS_COLORS)], linestyle="-",
                           linewidth=1.8, marker=_MARKERS[i % len(_MARKERS)], markersize=3,
                           markevery=0.15)
    for i, name in enumerate(peers):
        style[name] = dict(color=PEER_COLORS[i % len(PEER_COLORS)], linestyle="--",
                           linewidth=1.4, marker=_MARKERS[(i + 5) % len(_MARKERS)],
                           markersize=3, markevery=0.15)
    handles = {}
    for r in runs:
        x, y = _series(r.trace, xkey, ykey, log, xlog=(axis == "time"))
        if x.size == 0:
            continue
        (h,) = where[r.dataset].plot(x, y, label=r.solver, **style[r.solver])
        handles.setdefault(r.solver, h)
    for ds, ax in where.items():
        if log:
            ax.set_yscale("log")
        if axis == "time" and ax.lines:
            ax.set_xscale("log")
        ys = [v for line in ax.get_lines() for v in np.asarray(line.get_ydata(), float)]
        if target is not None and ys and min(ys) <= target <= max(ys):
            ax.axhline(target, color="0.55", linestyle=":", linewidth=0.9, zorder=0)
        ax.grid(True, which="major", alpha=0.3)
        ax.tick_params(labelsize=8)
        ax.set_xlabel(xlabel, fontsize=9)
    for ax in axes[:, 0]:
        ax.set_ylabel(ylabel, fontsize=9)
    fig.suptitle(title or f"{loss} loss: {ylabel} against {xlabel}", fontsize=11)
    from matplotlib.lines import Line2D
    blank = Line2D([], [], linestyle="none")
    hl, labels = [], []
    for head, names in (("primaldual (solid)", ours), ("peers (dashed)", peers)):
        present = [n for n in names if n in handles]
        if present:
            hl += [blank] + [handles[n] for n in present]
            labels += [head] + present
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    leg = fig.legend(hl, labels, loc="upper left", bbox_to_anchor=(1.0, 0.92), fontsize=9,
                     frameon=False)
    for text, lab in zip(leg.get_texts(), labels):
        if lab in ("primaldual (solid)", "peers (dashed)"):
            text.set_fontweight("bold")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight", bbox_extra_artists=[leg],
                pad_inches=0.1)
    plt.close(fig)
    return path
