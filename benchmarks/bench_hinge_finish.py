"""Default fits of the hinge family that SDCA alone left uncertified, before and
after the ``box_newton`` candidate of ``solver="auto"`` (issue 31).

Each cell is a default estimator fit (``LinearClassifier(loss, alpha=1/(C n))``,
solver="auto", tol 1e-6; one-vs-rest on the multiclass sets) run in a fresh
process per version: ``--before`` a source tree without box_newton (e.g. ``git
archive <base> src``), and this tree.  Each process first makes a tiny fit so
that compilation is not timed.  Reported: wall and CPU seconds, the worst
relative gap at the end (over the classes), and the methods of the legs.

    python benchmarks/bench_hinge_finish.py --before /tmp/before/src \
        --out benchmarks/results/hinge-finish.md
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import write_result as write_report  # noqa: E402
CELLS = [("reuters.bz2", "standardized", "hinge", 0.01),
         ("reuters.bz2", "standardized", "hinge", 1.0),
         ("reuters.bz2", "standardized", "hinge", 100.0),
         ("reuters.bz2", "standardized", "squared_hinge", 1.0),
         ("reuters.bz2", "standardized", "squared_hinge", 100.0),
         ("letter.scale", "standardized", "hinge", 1.0),
         ("news20.bz2", "as given", "hinge", 1.0),
         ("news20.bz2", "as given", "squared_hinge", 1.0),
         ("news20.bz2", "as given", "squared_hinge", 100.0),
         ("news20.bz2", "standardized", "squared_hinge", 1.0)]

CHILD = r"""
import json, sys, time
sys.path.insert(0, {bench!r})
import numpy as np
from bench_auto_real import load, standardize, ours
import primaldual
name, scaling, loss, C = {cell!r}
X, y, Xt, yt = load(name, 0)
if scaling == "standardized":
    X, Xt = standardize(X, Xt)
primaldual.solve(np.eye(4), np.array([1., -1, 1, -1]), loss=loss, lam=0.1)
est = ours(loss, C, X.shape[0], False)
t0, c0 = time.perf_counter(), time.process_time()
est.fit(X, y)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
paths = est.solver_path_
paths = paths if paths and isinstance(paths[0], list) else [paths]
gaps = [p[-1]["gap"] if p else float("nan") for p in paths]
methods = sorted({{" > ".join(leg["method"] for leg in p) for p in paths}})
# the classes whose fit ran more than one leg: legs, seconds, gap at the end
detail = [[k, " > ".join(leg["method"] for leg in p),
           [round(leg["seconds"], 3) for leg in p], p[-1]["gap"]]
          for k, p in enumerate(paths) if len(p) > 1 or p[-1]["gap"] > 1e-6]
print(json.dumps({{"wall": wall, "cpu": cpu, "gap": max(gaps), "classes": len(paths),
                  "uncertified": int(sum(g > 1e-6 for g in gaps)),
                  "paths": methods, "detail": detail,
                  "accuracy": float(np.mean(est.predict(Xt) == yt))}}))
"""


def run(cell, src, timeout):
    env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1",
               NUMBA_CACHE_DIR=str(Path(src).parent / ".numba_cache"))
    code = CHILD.format(bench=str(HERE), cell=cell)
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:g} s"}
    if out.returncode:
        return {"error": out.stderr.strip().splitlines()[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def fmt(r):
    if "error" in r:
        return f"— ({r['error']}) | — | — | — | —"
    return (f"{r['wall']:.2f} | {r['cpu']:.2f} | {r['gap']:.1e} | "
            f"{r['uncertified']}/{r['classes']} | {'; '.join(r['paths'])}")


def report(rows, header):
    """The markdown table of the jsonl rows (one before and one after per cell)."""
    lines = header + ["", "| set | scaling | loss | C | version | wall s | CPU s | worst gap "
                      "| uncertified / fits | paths | test accuracy | load |",
                      "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        name, scaling, loss, C = r["cell"]
        acc = f"{r['accuracy']:.4f}" if "accuracy" in r else "—"
        lines.append(f"| {name} | {scaling} | {loss} | {C:g} | {r['version']} | {fmt(r)} "
                     f"| {acc} | {r['load']:.1f} |")
    lines += ["", "Fits with more than one leg or uncertified (class, legs, seconds per "
              "leg, gap at the end):", ""]
    for r in rows:
        for k, path, secs, gap in r.get("detail", []):
            lines.append(f"- {r['cell'][0]} {r['cell'][1]} {r['cell'][2]} C={r['cell'][3]:g} "
                         f"{r['version']}: class {k}: {path}, {secs} s, gap {gap:.1e}")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="src folder of the version before")
    ap.add_argument("--after", default=str(HERE.parent / "src"))
    ap.add_argument("--cells", nargs="*", type=int, default=list(range(len(CELLS))))
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--jsonl", default=None)
    ap.add_argument("--out", default=None, help="markdown report of --jsonl")
    ap.add_argument("--header", default="", help="text above the table (load, commits)")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()
    if args.report_only:
        rows = [json.loads(x) for x in open(args.jsonl)]
        write_report(args.out, report(rows, args.header.split("\n")))
        return
    for k in args.cells:
        cell = CELLS[k]
        for version, src in (("before", args.before), ("after", args.after)):
            load = os.getloadavg()[0]
            r = run(cell, src, args.timeout)
            r.update(version=version, cell=list(cell), load=load)
            print(json.dumps(r), flush=True)
            if args.jsonl:
                with open(args.jsonl, "a") as f:
                    f.write(json.dumps(r) + "\n")


if __name__ == "__main__":
    main()
