"""Benchmark bookkeeping: environment facts, per-run summaries, tables, files."""
from __future__ import annotations

import json
import math
import os
import platform
import sys
import time
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import primaldual

from .peers import peer_status

__all__ = ["environment", "summarize_run", "markdown_table", "write_outputs",
           "TIME_KEYS", "deterministic_view"]

_PACKAGES = {"numpy": "numpy", "scipy": "scipy", "numba": "numba",
             "sklearn": "scikit-learn", "liblinear": "liblinear-official",
             "matplotlib": "matplotlib", "tqdm": "tqdm",
             "lightning": "sklearn-contrib-lightning", "snapml": "snapml",
             "primaldual": "primaldual"}


def _version(dist):
    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def cpu_model():
    """The CPU model name from /proc/cpuinfo (Linux), else platform.processor()."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def environment(config, argv=None) -> dict:
    """Versions, machine facts, seeds and the command: stored as meta.json."""
    versions = {"python": sys.version.split()[0]}
    versions.update({k: _version(v) for k, v in _PACKAGES.items()})
    if versions["primaldual"] == "not installed":
        versions["primaldual"] = primaldual.__version__
    return {
        "config": config.name, "description": config.description,
        "command": list(argv) if argv is not None else None,
        "seeds": list(config.seeds), "targets": list(config.targets),
        "versions": versions,
        "machine": {"platform": platform.platform(), "machine": platform.machine(),
                    "cpu_count": os.cpu_count(), "cpu_model": cpu_model(),
                    "numba_threads": _numba_threads()},
        "peers": peer_status({s.name for e in config.experiments for s in e.solvers
                              if s.kind == "peer"}),
        "solvers": sorted(primaldual.SOLVERS),
        "started_unix": time.time(),
    }


def _numba_threads():
    try:
        import numba
        return int(numba.config.NUMBA_NUM_THREADS)
    except Exception:               # numba missing or misconfigured: not fatal for a record
        return None


# ----------------------------------------------------------------- summary
TIME_KEYS = ("time", "total_time", "ref_time")


def _first(trace, key, target):
    for rec in trace:
        v = rec.get(key)
        if v is not None and v <= target:
            return rec
    return None


def summarize_run(run, targets) -> dict:
    """Seconds and epochs to each target, final gap, sub-optimality and test error.

    ``targets[t]`` holds, for each kind, the first trace point at or below ``t``
    (``{"epoch", "time"}``, None when never): ``gap`` the run's own relative
    duality gap, ``subopt`` the relative primal sub-optimality against the
    reference's primal value (``"below reference accuracy"`` when the reference
    is not certified to ``t``), ``certified`` the relative gap against the best
    certified dual value (:func:`~primaldual.bench.harness.certified_subopt`)."""
    ref = run.reference
    out = {"run_id": run.run_id, "experiment": run.experiment, "dataset": run.dataset,
           "loss": run.loss, "lam": run.lam, "solver": run.solver, "kind": run.kind,
           "seed": run.seed, "status": run.status, "reason": run.reason,
           "n": run.data.get("n"), "nnz": run.data.get("nnz"),
           "ref_method": None if ref is None else ref.method,
           "ref_rel_gap": None if ref is None else ref.rel_gap,
           "targets": {}}
    tr = run.trace
    if not tr:
        return out
    last = tr[-1]
    out.update({"epochs": last["epoch"], "total_time": last["time"],
                "final_primal": last["primal"], "final_dual": last["dual"],
                "final_rel_gap": last["rel_gap"],
                "final_rel_subopt": last.get("rel_subopt"),
                "final_certified_subopt": last.get("certified_subopt"),
                "final_test_error": last.get("test_error"),
                "final_test_rmse": last.get("test_rmse")})
    for t in targets:
        cell = {}
        hit = _first(tr, "rel_gap", t)
        cell["gap"] = None if hit is None else {"epoch": hit["epoch"], "time": hit["time"]}
        if ref is not None:
            # certified by the best dual value: needs no guard, a loose dual only
            # makes the target harder to reach
            hit = _first(tr, "certified_subopt", t)
            cell["certified"] = None if hit is None else {"epoch": hit["epoch"],
                                                          "time": hit["time"]}
            if t < ref.rel_gap:
                cell["subopt"] = "below reference accuracy"
            else:
                hit = _first(tr, "rel_subopt", t)
                cell["subopt"] = None if hit is None else {"epoch": hit["epoch"],
                                                           "time": hit["time"]}
        out["targets"][f"{t:g}"] = cell
    return out


def deterministic_view(summaries) -> list:
    """The summaries without wall-clock fields (what must repeat exactly)."""
    def strip(obj):
        if isinstance(obj, dict):
            return {k: strip(v) for k, v in obj.items() if k not in TIME_KEYS}
        if isinstance(obj, list):
            return [strip(v) for v in obj]
        return obj
    return strip(summaries)


def _fmt_hit(cell):
    if cell is None:
        return "—"
    if isinstance(cell, str):
        return "n/a"
    return f"{cell['time']:.3g}s/{cell['epoch']:.4g}ep"


def _fmt(x, spec=".2e"):
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "—"
    return format(x, spec)


def markdown_table(summaries, targets, *, columns=("gap", "subopt")) -> str:
    """The summary as a Markdown table: time/epochs to each target, final values.

    ``columns`` are target kinds of :func:`summarize_run` (``gap``, ``subopt``,
    ``certified``); the last two need a reference."""
    has_subopt = any(s.get("ref_method") for s in summaries)
    has_test = any(s.get("final_test_error") is not None for s in summaries)
    head = ["experiment", "dataset", "loss", "lam", "solver", "seed"]
    for kind in columns:
        if kind in ("subopt", "certified") and not has_subopt:
            continue
        head += [f"{kind} {t:g}" for t in targets]
    head += ["final rel gap"]
    if has_subopt:
        head += ["final rel subopt"]
    certified = "certified" in columns and has_subopt
    if certified:
        head += ["final certified subopt"]
    if has_test:
        head += ["test error"]
    head += ["epochs", "time (s)"]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join("---" if i < 6 else "---:" for i in range(len(head))) + "|"]
    for s in summaries:
        row = [s["experiment"], s["dataset"], s["loss"], f"{s['lam']:g}", s["solver"],
               str(s["seed"])]
        if s["status"] != "ok":
            why = s["reason"] if len(s["reason"]) < 60 else s["reason"][:57] + "..."
            row += [f"{s['status']}: {why}"] + [""] * (len(head) - len(row) - 1)
            lines.append("| " + " | ".join(row) + " |")
            continue
        for kind in columns:
            if kind in ("subopt", "certified") and not has_subopt:
                continue
            for t in targets:
                cell = s["targets"].get(f"{t:g}", {})
                row.append(_fmt_hit(cell.get(kind)) if kind in cell else "n/a")
        row.append(_fmt(s.get("final_rel_gap")))
        if has_subopt:
            row.append(_fmt(s.get("final_rel_subopt")))
        if certified:
            row.append(_fmt(s.get("final_certified_subopt")))
        if has_test:
            row.append(_fmt(s.get("final_test_error"), ".4f"))
        row += [_fmt(s.get("epochs"), ".4g"), _fmt(s.get("total_time"), ".3g")]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def references_table(references) -> str:
    lines = ["| dataset | loss | lam | P* | certified rel. width | method | SDCA epochs | time (s) |",
             "|---|---|---|---:|---:|---|---:|---:|"]
    for ref in references.values():
        lines.append(f"| {ref.dataset} | {ref.loss} | {ref.lam:g} | {ref.primal:.12g} | "
                     f"{ref.rel_gap:.1e} | {ref.method} | {ref.epochs:.4g} | {ref.time:.3g} |")
    return "\n".join(lines)


def _dump(path, obj):
    with open(path, "w") as fh:
        json.dump(obj, fh, indent=1, default=_default, allow_nan=True)
        fh.write("\n")


def _default(o):
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if hasattr(o, "to_dict"):
        return o.to_dict()
    return str(o)


def summary_markdown(result) -> str:
    cfg = result.config
    meta = result.meta
    v = meta["versions"]
    m = meta["machine"]
    parts = [f"# Benchmark `{cfg.name}`", ""]
    if cfg.description:
        parts += [cfg.description, ""]
    parts += [
        f"Command: `{' '.join(meta['command']) if meta.get('command') else '(API call)'}`  ",
        f"Machine: {m['cpu_model']}, {m['cpu_count']} CPUs, {m['platform']}  ",
        "Versions: " + ", ".join(f"{k} {val}" for k, val in v.items()) + "  ",
        "Peers: " + ", ".join(f"{k}: {s}" for k, s in meta["peers"].items()) + "  ",
        f"Seeds: {meta['seeds']}; wall time {meta.get('wall_seconds', 0):.1f} s", "",
        "Cells give `seconds/epochs` to reach a relative duality gap (`gap`) or a relative "
        "primal sub-optimality `(P(w) - P*)/|P*|` (`subopt`) at or below the target; "
        "`—` not reached, `n/a` target below the reference's certified accuracy.  Peers' "
        "gaps use the dual point alpha_i = -phi'(x_i.w), which for non-smooth losses stays "
        "loose even at the optimum.", "",
        markdown_table(result.summaries, cfg.targets), ""]
    if result.references:
        parts += ["## Reference optima", "", references_table(result.references), ""]
    data = {}
    for r in result.runs:
        data.setdefault(r.dataset, r.data)
    parts += ["## Data", "", "| dataset | n | d | nnz | n_test | how |", "|---|---:|---:|---:|---:|---|"]
    for name, dd in data.items():
        parts.append(f"| {name} | {dd['n']} | {dd['d']} | {dd['nnz']} | "
                     f"{dd['n_test'] if dd['n_test'] is not None else '—'} | {dd['note']} |")
    return "\n".join(parts) + "\n"


def write_outputs(result):
    out = result.out_dir
    _dump(out / "meta.json", result.meta)
    _dump(out / "config.json", result.config.to_dict())
    _dump(out / "references.json", [r.to_dict() for r in result.references.values()])
    with open(out / "runs.jsonl", "w") as fh:
        for s in result.summaries:
            fh.write(json.dumps(s, default=_default) + "\n")
    _dump(out / "summary.json", result.summaries)
    with open(out / "summary.md", "w") as fh:
        fh.write(summary_markdown(result))
