"""``primaldual demo`` (``make demo``): the main job on the data the project ships or generates.

It needs no data folder: the rcv1-shaped synthetic set (generated), scikit-learn's
bundled breast-cancer set, and up to six real LIBSVM sets that
:mod:`primaldual.datasets` finds locally (a9a, reuters, covtype and mushrooms when
found, then the smallest; the first 5,000 rows and 2,500 test rows of the big ones;
``--max-datasets``; ``--quick`` keeps the synthetic set, breast-cancer and the two
smallest local sets, with fewer rows).

On each, for the hinge, the squared hinge and the logistic loss at one ``lam``, it
runs every registered solver that works without a Dask client against every
installed peer, all measured with the same objective and certificate
(:mod:`primaldual.bench`) and timed by one rule: a fresh fit for each budget of 1,
2, 3, 4, 6, 8, 12, ... epochs (LIBLINEAR: a tolerance ``-e`` of 1, 10^-0.5, ...),
after a warm-up fit that compiles the kernels; a run's fits stop growing once one
takes 1 s (0.5 s with ``--quick``).  It writes ``demo/``: ``report.md`` and the
self-contained ``report.html`` (first screen :func:`glance_table`: per data set and
loss, the time of primaldual's fastest solver to a certified sub-optimality of
:data:`TARGET`, and each peer's time to the same target and ratio), ``full_table.md``,
``summary.md``, traces and ``meta.json`` (docs/benchmarks.md, "make demo").
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import primaldual

from . import datasets as D
from ._extras import require
from .bench.config import (BenchConfig, DatasetSpec, Experiment, LossSpec, ReferenceSettings,
                           SolverSpec)
from .bench.harness import run_bench
from .bench.peers import PEERS
from .bench.plots import plot_overview
from .bench.report import markdown_table
from .solvers import ipm_pays

__all__ = ["main", "build_config", "demo_datasets"]

LAM = 1e-4
#: the hinge, the squared hinge (LinearSVC's default) and the logistic loss
LOSSES = ("hinge", "squared_hinge", "logistic")
#: wall-time cap of one run: its budgets stop growing once a fit takes this long
#: (so that slow solvers cannot stretch the demo; capped runs show their progress
#: so far, and their epochs depend on the machine)
RUN_SECONDS = 1.0
RUN_SECONDS_QUICK = 0.5


#: local LIBSVM sets the demo takes (the smallest files first)
MAX_SETS = 6
MAX_SETS_QUICK = 2
#: local sets the full demo takes first, when found
PREFERRED = ("a9a", "reuters", "covtype", "mushrooms")


def demo_datasets(quick: bool, max_rows=None, max_sets=None):
    """The demo's data sets (DatasetSpec list) and the real sets left out, with why."""
    rows = max_rows or (1000 if quick else 5000)
    n_syn = max_rows if max_rows else (2000 if quick else None)
    specs = [DatasetSpec(name="rcv1", source="synthetic", n=n_syn,
                         n_test=500 if quick else 4000, label="rcv1 (synthetic)"),
             DatasetSpec(name="breast_cancer", source="sklearn", scale="maxabs+unit",
                         test_fraction=0.25, label="breast_cancer (sklearn)")]
    found, seen = [], set()
    for name in D.available_real():
        if D.REGISTRY[name].task != "binary":      # the demo's losses are binary
            continue
        try:
            path = D.find(name)
        except (FileNotFoundError, ValueError):
            continue
        if path in seen:                    # two registry names for one file
            continue
        seen.add(path)
        found.append((path.stat().st_size, name))
    found.sort()
    if not quick:       # the well-known sets first, then the smallest files
        rank = {name: k for k, name in enumerate(PREFERRED)}
        found.sort(key=lambda t: (rank.get(t[1], len(rank)), t[0]))
    keep = max_sets if max_sets is not None else (MAX_SETS_QUICK if quick else MAX_SETS)
    skipped = [(name, f"the demo uses {keep} local sets (--max-datasets)")
               for _, name in found[keep:]]
    found = found[:keep]
    for _, name in found:
        has_test = D.REGISTRY[name].test is not None
        specs.append(DatasetSpec(name=name, n=rows, subsample="head",
                                 n_test=(rows // 2 if has_test else None),
                                 test_fraction=None if has_test else 0.2,
                                 scale="maxabs+unit", label=name))
    return specs, skipped


def demo_solvers():
    """Our solvers that run without a client (SolverSpec list, sdca first), then peers."""
    ours, left_out = [], []
    for name in sorted(primaldual.SOLVERS, key=lambda s: (s != "sdca", s)):
        cls = primaldual.SOLVERS[name]
        if getattr(cls, "requires_client", False):
            left_out.append((name, "needs a Dask client"))
            continue
        ours.append(SolverSpec(name=name, label=name))
    peers = [SolverSpec(name=peer, kind="peer", label=PEERS[peer].label) for peer in PEERS]
    return ours + peers, left_out


#: why a run is left out by :func:`affordable`
UNAFFORDABLE = ("one interior-point iteration costs more here than solver='auto' allows, "
                "see primaldual.solvers.ipm_pays")


def affordable(data, lspec, lam, sspec):
    """None, or why the demo leaves a run out: the interior-point method where one
    of its iterations is unaffordable (:func:`primaldual.solvers.ipm_pays`, e.g. on
    rcv1's 47,236 features and 20,242 rows), since no time limit can stop an
    iteration half-way."""
    if sspec.kind == "ours" and sspec.name == "ipm":
        prob = primaldual.Problem(data.X, data.y, loss=lspec.name,
                                  loss_params=lspec.params_dict or None, lam=lam)
        if prob.loss.box_qp_dual and not ipm_pays(prob):
            return UNAFFORDABLE
    return None


def build_config(quick=False, max_rows=None, max_epochs=None, max_sets=None):
    """The demo as a :class:`~primaldual.bench.config.BenchConfig`."""
    data, skipped = demo_datasets(quick, max_rows, max_sets)
    solvers, left_out = demo_solvers()
    epochs = max_epochs or 60
    exps = [Experiment(name=loss, datasets=data, losses=[LossSpec(name=loss)], lams=[LAM],
                       solvers=solvers, max_epochs=epochs, tol=1e-8,
                       time_limit=RUN_SECONDS_QUICK if quick else RUN_SECONDS,
                       timing="refit",
                       plots=["subopt-epochs", "subopt-time", "gap-epochs",
                              "test_error-epochs"],
                       title=f"{loss} loss")
            for loss in LOSSES]
    cfg = BenchConfig(name="demo", experiments=exps, seeds=[0],
                      reference=ReferenceSettings(tol=1e-12,
                                                  max_epochs=300),
                      description=f"primaldual demo{' (quick)' if quick else ''}: "
                                  f"{', '.join(LOSSES)} at lam={LAM:g}")
    return cfg, skipped, left_out


#: the accuracy the first screen compares: a certified sub-optimality
#: ``(P(w) - D) / |P(w)|`` with ``D`` primaldual's best certified dual value
#: (the trace key ``certified_subopt``, :mod:`primaldual.bench.harness`), the same
#: bound for our models and the peers'
TARGET = 1e-4
#: at most this many of our solvers are drawn in a plot besides the ones that hold
#: a row of the first screen (sdca and the fastest ones)
PLOT_OURS = 4


def warm_up(losses=LOSSES, quiet=True):
    """One tiny fit per (solver, loss) so that Numba compiles before the timed runs.

    Solvers that refuse a loss or need a Dask client are skipped; the compiled
    kernels land in Numba's cache, so later runs and processes reuse them.
    Returns the number of warm-up fits that ran.
    """
    import warnings

    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = sp.random(64, 16, density=0.3, random_state=rng, format="csr")
    X.data = rng.standard_normal(X.data.size)
    y = np.where(rng.standard_normal(64) > 0, 1.0, -1.0)
    ran = 0
    for name, cls in sorted(primaldual.SOLVERS.items()):
        if getattr(cls, "requires_client", False):
            continue
        for loss in losses:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    primaldual.solve(X, y, loss=loss, lam=1e-2, solver=name, tol=1e-3,
                                     max_epochs=2, random_state=0)
                    ran += 1
                except ValueError:           # the solver does not take this loss
                    continue
    if not quiet:
        print(f"primaldual demo: warm-up: {ran} tiny fits compiled the kernels",
              file=sys.stderr)
    return ran


def _hit_time(summary, kind="certified", target=TARGET):
    """Seconds of the first trace point at or below ``target`` of ``kind``, or None."""
    cell = summary.get("targets", {}).get(f"{target:g}", {}).get(kind)
    return cell["time"] if isinstance(cell, dict) else None


def _sci(x):
    """1e-4 rather than 0.0001."""
    mant, exp = f"{x:.0e}".split("e")
    return f"{mant}e{int(exp)}"


def _pct(x):
    return "—" if x is None else f"{100 * x:.1f}%"


def _secs(t):
    if t is None:
        return "—"
    return f"{t * 1e3:.3g} ms" if t < 1 else f"{t:.3g} s"


#: relative gaps below this are rounding (a computed gap can even come out
#: negative): shown as "<1e-15"
ROUNDING = 1e-15


def _gap(x, digits=1):
    if x is None:
        return "—"
    return f"<{_sci(ROUNDING)}" if x < ROUNDING else f"{x:.{digits}e}"


def glance(result):
    """The first screen as data: ``(rows, peers)``, one row per (data set, loss).

    A row's primaldual side comes from one solver, the one that *holds the
    certificate*: the first of ours to reach a certified sub-optimality of
    :data:`TARGET` (the ``certified`` target of the run summaries), or, when none
    does, the one whose last model is certified closest to the optimum.  Its
    entries: ``time`` (None when not reached), ``solver``, ``gap`` (the relative
    duality gap its last fit proves on its own), ``test_error`` (of that model)
    and ``certified`` (that model's certified sub-optimality).  ``peers[name]``
    is None when the peer does not fit the loss, else ``{"time", "ratio",
    "certified"}``: its time to the same target (None when not reached), peer
    time / primaldual time, and the certified sub-optimality of its last model.
    """
    ok = [s for s in result.summaries if s["status"] == "ok"]
    peers = list(dict.fromkeys(s["solver"] for s in ok if s["kind"] == "peer"))
    datasets = list(dict.fromkeys(r.dataset for r in result.runs))
    losses = list(dict.fromkeys(r.loss for r in result.runs))
    rows = []
    for ds in datasets:
        for loss in losses:
            cell = [s for s in ok if s["dataset"] == ds and s["loss"] == loss]
            ours = [s for s in cell if s["kind"] == "ours"]
            if not ours:
                continue
            timed = [(t, s) for s in ours if (t := _hit_time(s)) is not None]
            if timed:
                time_, holder = min(timed, key=lambda ts: ts[0])
            else:
                time_ = None
                holder = min(ours, key=lambda s: _or_inf(s.get("final_certified_subopt")))
            row = {"dataset": ds, "loss": loss, "time": time_, "solver": holder["solver"],
                   "gap": holder.get("final_rel_gap"),
                   "test_error": holder.get("final_test_error"),
                   "certified": holder.get("final_certified_subopt"), "peers": {}}
            for peer in peers:
                ps = [s for s in cell if s["solver"] == peer]
                if not ps:
                    row["peers"][peer] = None          # not run (does not take this loss)
                    continue
                t = _hit_time(ps[0])
                row["peers"][peer] = {"time": t,
                                      "ratio": (t / time_) if (t is not None and time_)
                                      else None,
                                      "certified": ps[0].get("final_certified_subopt")}
            rows.append(row)
    return rows, peers


def _or_inf(x):
    return float("inf") if x is None else x


def _peer_cell(c):
    if c is None:
        return "n/a"
    last = f"; {_gap(c['certified'], 0)}" if c["certified"] is not None else ""
    if c["time"] is None:
        return "not reached" + last
    ratio = f" (×{c['ratio']:.2g})" if c["ratio"] is not None else ""
    return _secs(c["time"]) + ratio + last


def glance_table(rows, peers):
    """(header, body) of the first-screen table as plain strings.

    Columns: data set, loss, ``primaldual to <TARGET>`` (time and, in brackets,
    the solver holding the certificate), ``certified gap`` and ``test error`` of
    that solver's last model, then one column per peer: ``time (×ratio);
    certified sub-optimality of its last model``, ``not reached; ...`` or
    ``n/a``."""
    head = ["data set", "loss", f"primaldual to {_sci(TARGET)}", "certified gap",
            "test error"] + peers
    body = []
    for r in rows:
        ours = (f"{_secs(r['time'])} ({r['solver']})" if r["time"] is not None
                else f"not reached ({r['solver']})")
        body.append([r["dataset"], r["loss"], ours, _gap(r["gap"]), _pct(r["test_error"])]
                    + [_peer_cell(r["peers"][peer]) for peer in peers])
    return head, body


def _md_table(head, body, right_from=2, right_to=None):
    right_to = len(head) if right_to is None else right_to
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join("---:" if right_from <= i < right_to else "---"
                            for i in range(len(head))) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    return "\n".join(lines)


def _data_rows(result):
    seen = {}
    for r in result.runs:
        seen.setdefault(r.dataset, r.data)
    return [[ds, f"{d['n']:,}", f"{d['d']:,}", f"{d['n_test']:,}" if d.get("n_test") else "—",
             d["note"]] for ds, d in seen.items()]


def plot_choice(result, loss, rows):
    """Our solvers drawn for ``loss``: sdca, every solver that holds a row of the
    first screen for that loss, then the fastest others to the target, up to
    :data:`PLOT_OURS` (the holders are drawn even past it); and every peer that
    ran."""
    ours = ["sdca"]
    for r in rows:
        if r["loss"] == loss and r["solver"] not in ours:
            ours.append(r["solver"])
    ok = [s for s in result.summaries if s["status"] == "ok" and s["loss"] == loss]
    speed = {}
    for s in ok:
        if s["kind"] == "ours" and (t := _hit_time(s)) is not None:
            speed.setdefault(s["solver"], []).append(t)
    for name in sorted(speed, key=lambda k: sum(speed[k]) / len(speed[k])):
        if name not in ours and len(ours) < PLOT_OURS:
            ours.append(name)
    peers = list(dict.fromkeys(s["solver"] for s in ok if s["kind"] == "peer"))
    return ours, peers


#: the demo's figures: (metric, axis, what), one figure of each per loss
PLOTS = (("certified", "time", "certified sub-optimality against seconds"),
         ("gap", "epochs", "certified relative duality gap against epochs"))


def _plots(result, rows):
    out = []
    losses = list(dict.fromkeys(r.loss for r in result.runs))
    for loss in losses:
        ours, peers = plot_choice(result, loss, rows)
        for metric, axis, what in PLOTS:
            png = plot_overview(result, loss, result.out_dir / "plots" /
                                f"{loss}_{metric}-{axis}.png", ours=ours, peers=peers,
                                metric=metric, axis=axis,
                                target=TARGET if metric == "certified" else None,
                                title=f"{loss} loss, lam = {_sci(LAM)}: {what}")
            if png is not None:
                out.append(png)
    return out


def _report_texts(epochs, cap):
    """The first screen's introduction, legend and timing rule."""
    t = _sci(TARGET)
    intro = (f"Binary classification with the hinge loss (linear SVM), the squared hinge "
             f"(scikit-learn's LinearSVC default) and the logistic loss, L2 penalty lam = "
             f"{_sci(LAM)}: primaldual's fastest solver against every installed peer, each "
             f"timed by the same rule to the same certified accuracy, {t}.")
    legend = (f"A model's **certified sub-optimality** is (P(w) - D)/|P(w)|, where D is the "
              f"highest dual value primaldual's certificate computed for that data set and "
              f"loss: D is at most the optimum, so this bounds how far the model is from "
              f"the optimum, whichever library fitted it. **primaldual to {t}**: the time "
              f"of primaldual's fastest solver to a certified sub-optimality of {t}, and in "
              f"brackets that solver, which holds the certificate. **certified gap**: the "
              f"relative duality gap (P - D)/|P| that this solver's last fit proves by "
              f"itself; **test error**: of that model on held-out rows. **Each peer**: its "
              f"time to the same target with, in brackets, the ratio peer time / "
              f"primaldual time (above 1: primaldual is faster); after the semicolon, the "
              f"certified sub-optimality of the peer's last model. *not reached*: not within "
              f"the budget ({epochs:g} epochs, or until a fit takes {cap:g} s); *n/a*: the "
              f"peer does not fit this loss.")
    rule = ("**The timing rule**, the same for primaldual's solvers and the peers: a fresh "
            "fit for each budget of 1, 2, 3, 4, 6, 8, 12, 16, ... epochs (LIBLINEAR, whose "
            "iteration cap is fixed in C: a stopping tolerance -e of 1, 10^-0.5, 10^-1, "
            "...), each timed from the call to its return; a solver's time is that of its "
            "first fit whose model is certified to the target. primaldual's fits are whole "
            "primaldual.solve calls, their own gap checks and certificate included (each "
            "also stops once it has taken the time cap, where a peer's fit runs on); the "
            "certificate of a peer's model and every test error are computed outside the "
            "timing, and so is LIBLINEAR's conversion of the data to its own format.")
    return intro, legend, rule


def _left_out_lines(result, skipped, left_out):
    """The report's "Left out:" paragraph (none when nothing was left out)."""
    not_ok = sorted({(s["solver"], s["reason"]) for s in result.summaries
                     if s["status"] != "ok" and "not installed" in s["reason"]})
    costly = {}
    for s in result.summaries:
        if s["status"] == "skipped" and s["reason"] == UNAFFORDABLE:
            costly.setdefault(s["solver"], []).append(s["dataset"])
    if not (not_ok or left_out or skipped or costly):
        return []
    return ["Left out: " + "; ".join(
        [f"{name} ({why})" for name, why in not_ok]
        + [f"{name} on {', '.join(dict.fromkeys(sets))} ({UNAFFORDABLE})"
           for name, sets in costly.items()]
        + [f"solver {name} ({why})" for name, why in left_out]
        + ([f"local data sets {', '.join(n for n, _ in skipped)} ({skipped[0][1]})"]
           if skipped else [])) + ".", ""]


def _report(result, skipped, left_out, elapsed, plots, quick):
    """demo/report.md (and report.html): first screen, plots, full table."""
    cfg = result.config
    meta = result.meta
    out = result.out_dir
    rows, peers = glance(result)
    head, body = glance_table(rows, peers)
    t = _sci(TARGET)
    intro, legend, rule = _report_texts(cfg.experiments[0].max_epochs,
                                        RUN_SECONDS_QUICK if quick else RUN_SECONDS)
    versions = meta["versions"]
    lines = ["# primaldual demo", "", intro, "", _md_table(head, body), "", legend, "",
             rule, "",
             f"Times are wall seconds on {meta['machine']['cpu_model']} "
             f"({meta['machine']['cpu_count']} CPUs), one thread, after a warm-up fit that "
             f"compiled primaldual's kernels; primaldual {versions.get('primaldual')}, "
             f"LIBLINEAR {versions.get('liblinear')}, scikit-learn {versions.get('sklearn')}. "
             f"Whole demo: {elapsed:.0f} s.", "",
             "## Data", "",
             "Every set is scaled as stated (features that span different ranges, such "
             "as breast_cancer's, are divided by their largest absolute training value; "
             "every row is then scaled to unit L2 norm).", "",
             _md_table(["data set", "train rows", "features", "test rows", "how"],
                       _data_rows(result), right_from=1, right_to=4), "",
             "The synthetic set has rcv1's shape: its labels come from a planted model "
             "on a random fifth of 47,236 Zipf-distributed features with 5% of the "
             "labels flipped, which the training rows here cannot recover; every solver and "
             "peer reaches the same optimum and so the same test error there. It "
             "measures optimization speed, not accuracy.", ""]
    lines += _left_out_lines(result, skipped, left_out)
    lines += ["## Plots", "",
              "One panel per data set. primaldual's solvers are solid lines in cool "
              "colours (sdca, every solver that holds a row above, and the fastest "
              "others; every solver is in the full table), the peers dashed in warm "
              "colours and black; each point is one timed fit. The dotted line marks "
              f"the target {t} of the first screen.", ""]
    for png in plots:
        rel = Path(png).relative_to(out)
        lines += [f"![{rel.stem}]({rel.as_posix()})", ""]
    ok = [s for s in result.summaries if s["status"] == "ok"]
    full = markdown_table(ok, cfg.targets, columns=("gap", "certified"))
    (out / "full_table.md").write_text(
        "# primaldual demo: every run\n\n`seconds/epochs` to reach a relative duality gap "
        "of the run's own (`gap`) or a certified sub-optimality (`certified`, as on the "
        "first screen) at or below the target; `—` not reached within the budget. "
        "`final rel subopt` is measured against the lowest primal value seen, "
        "`final certified subopt` against the best certified dual value.\n\n"
        + full + "\n")
    lines += ["## Every run", "",
              "[full_table.md](full_table.md): time and epochs of every solver and peer "
              "to each target; [summary.md](summary.md): the reference optima and how "
              "each data set was cut; traces/: one JSON line per timed fit.", ""]
    (out / "report.md").write_text("\n".join(lines))
    write_html(out / "report.html", intro, head, body, _data_rows(result), plots, full,
               lines)


def write_html(path, intro, head, body, data_rows, plots, full_md, md_lines):
    """A self-contained HTML report: inline CSS, PNGs embedded as base64, no links out."""
    import base64
    import html as H
    import re

    def table(h, rows, right_from, right_to=None):
        right_to = len(h) if right_to is None else right_to
        th = "".join(f"<th>{H.escape(c)}</th>" for c in h)
        trs = []
        for row in rows:
            tds = "".join(f"<td class='{'r' if right_from <= i < right_to else 'l'}'>"
                          f"{H.escape(c)}</td>" for i, c in enumerate(row))
            trs.append(f"<tr>{tds}</tr>")
        return f"<table><thead><tr>{th}</tr></thead><tbody>{''.join(trs)}</tbody></table>"

    def md_inline(text):
        t = H.escape(text)
        t = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", t)
        t = re.sub(r"\*(.+?)\*", r"<i>\1</i>", t)
        return re.sub(r"`(.+?)`", r"<code>\1</code>", t)

    def md_table_to_html(md):
        rows = [ln.strip().strip("|").split("|") for ln in md.strip().splitlines()]
        rows = [[c.strip() for c in r] for r in rows]
        return table(rows[0], rows[2:], 6)

    paras = [ln for ln in md_lines if ln and not ln.startswith(("#", "|", "!["))]
    body_parts = [f"<h1>primaldual demo</h1><p>{md_inline(intro)}</p>",
                  table(head, body, 2)]
    for para in paras[1:]:
        if para.startswith("[full_table.md]"):
            continue
        if para.startswith("One panel per data set"):
            body_parts.append("<h2>Plots</h2>")
        body_parts.append(f"<p>{md_inline(para)}</p>")
        if para.startswith("Every set is scaled"):
            body_parts.insert(-1, "<h2>Data</h2>")
            body_parts.append(table(["data set", "train rows", "features", "test rows",
                                     "how"], data_rows, 1, 4))
    for png in plots:
        b64 = base64.b64encode(Path(png).read_bytes()).decode("ascii")
        body_parts.append(f"<p><img alt='{H.escape(Path(png).stem)}' "
                          f"src='data:image/png;base64,{b64}'></p>")
    body_parts.append("<h2>Every run</h2>" + md_table_to_html(full_md))
    css = ("body{font-family:sans-serif;max-width:1400px;margin:2em auto;padding:0 1em;"
           "color:#222}table{border-collapse:collapse;font-size:13px;margin:1em 0}"
           "th,td{border:1px solid #ccc;padding:3px 7px}th{background:#f0f0f0}"
           "td.r{text-align:right;white-space:nowrap}img{max-width:100%}")
    doc = ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
           f"<title>primaldual demo</title><style>{css}</style></head><body>"
           + "\n".join(body_parts) + "</body></html>\n")
    Path(path).write_text(doc)


def main(argv=None) -> int:
    """Entry point of ``primaldual demo``; returns the exit code."""
    parser = argparse.ArgumentParser(prog="primaldual demo", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="small version for CI: fewer data sets, rows and epochs")
    parser.add_argument("--out", default="demo", help="output directory (default: demo/)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar and no table")
    parser.add_argument("--max-rows", type=int, default=None,
                        help="rows taken from each real data set and the synthetic one "
                             "(default: 5000 real / full synthetic; quick 1000 / 2000)")
    parser.add_argument("--max-epochs", type=float, default=None,
                        help="epoch budget per run (default 60; every run also stops at its time cap)")
    parser.add_argument("--max-datasets", type=int, default=None,
                        help=f"local LIBSVM sets used: {', '.join(PREFERRED)}, then the smallest (default "
                             f"{MAX_SETS}, quick {MAX_SETS_QUICK})")
    parser.add_argument("--no-plots", action="store_true", help="skip the plots")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.max_rows is not None and args.max_rows < 10:
        print("primaldual demo: error: --max-rows must be >= 10", file=sys.stderr)
        return 2
    if args.max_epochs is not None and not args.max_epochs > 0:
        print("primaldual demo: error: --max-epochs must be > 0", file=sys.stderr)
        return 2
    if not args.no_plots:
        require("matplotlib", "the demo's figures (--no-plots goes without)")
    t0 = time.perf_counter()
    if args.max_datasets is not None and args.max_datasets < 0:
        print("primaldual demo: error: --max-datasets must be >= 0", file=sys.stderr)
        return 2
    cfg, skipped, left_out = build_config(args.quick, args.max_rows, args.max_epochs,
                                          args.max_datasets)
    out = Path(args.out)
    if not args.quiet:
        n_data = len(cfg.experiments[0].datasets)
        print(f"primaldual demo: {n_data} data sets x {len(LOSSES)} losses x "
              f"{len(cfg.experiments[0].solvers)} solvers/peers -> {out}/", file=sys.stderr)
    warm_up(quiet=args.quiet)
    result = run_bench(cfg, out, quiet=args.quiet, plots=False, admit=affordable,
                       argv=["primaldual", "demo", *(argv or [])])
    rows, _ = glance(result)
    plots = [] if args.no_plots else _plots(result, rows)
    elapsed = time.perf_counter() - t0
    _report(result, skipped, left_out, elapsed, plots, args.quick)
    if not args.quiet:
        head, body = glance_table(*glance(result))
        print(_md_table(head, body))
        print(f"\nwrote {out}/report.md and {out}/report.html ({len(plots)} plots) "
              f"in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
