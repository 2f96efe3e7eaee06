"""solver="auto" against each single candidate on chosen cells of the real-data
grid, in CPU time (``time.process_time``) as well as wall time: on a loaded
machine a short fit's wall time is often a 20 ms time slice of another
process, while its CPU time is its own.

    # auto and the single candidates with the sources on PYTHONPATH
    python benchmarks/bench_auto_cpu.py run --out after.jsonl \\
        "dna.scale:as given:hinge:1" "cadata:standardized:absolute:100"
    # auto alone, with another source tree (the commit before a change)
    PYTHONPATH=old/src python benchmarks/bench_auto_cpu.py run --auto-only \\
        --out before.jsonl "dna.scale:as given:hinge:1" ...
    python benchmarks/bench_auto_cpu.py report --before before.jsonl \\
        --after after.jsonl --out benchmarks/results/auto-real-cells.md --note ...

A cell is ``set:scaling:loss:C`` as in benchmarks/bench_auto_cells.py.  Each
cell: a warm-up fit of every method on 300 rows, then auto's default
estimator ``--repeats`` times and each single candidate up to ``--repeats``
times (once past a second), capped at 10x auto's time; the minimum of the
repeats.  The report divides auto's CPU time by the fastest single
candidate's that certified (of the ``--after`` run).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_auto_real as B  # noqa: E402
from _common import write_result  # noqa: E402


def _fit(make, X, y):
    est = make()
    wall, cpu = time.perf_counter(), time.process_time()
    est.fit(X, y)
    return est, time.perf_counter() - wall, time.process_time() - cpu


def _path(est):
    path = est.solver_path_
    path = path[0] if path and isinstance(path[0], list) else path
    return " > ".join(f"{p['method']} {p['epochs']:.0f} ep ({p['reason'].split(':')[0]})"
                      for p in path)


def measure(spec, repeats, singles):
    name, scaling, loss, C = spec.split(":")
    C, regression = float(C), name in B.REGRESSION
    X, y, Xt, _ = B.load(name, 0)
    if scaling == "standardized":
        X, Xt = B.standardize(X, Xt)
    n = X.shape[0]
    out = {"spec": spec, "n": n, "d": X.shape[1]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pick = np.random.default_rng(0).permutation(n)[:300]
        for kw in [dict()] + [dict(solver=s, max_iter=2) for s in B.SINGLES
                              if B.applies(s, loss)]:
            B.ours(loss, 1.0, 300, regression, **kw).fit(X[pick], y[pick])
        runs = [_fit(lambda: B.ours(loss, C, n, regression), X, y) for _ in range(repeats)]
        est = runs[0][0]
        out["auto"] = {"wall": min(r[1] for r in runs), "cpu": min(r[2] for r in runs),
                       "ok": bool(np.all(est.converged_)), "path": _path(est)}
        cap = max(1.0, 10 * out["auto"]["wall"])
        for s in (B.SINGLES if singles else ()):
            if not B.applies(s, loss):
                continue
            runs = []
            for _ in range(repeats):
                runs.append(_fit(lambda: B.ours(loss, C, n, regression, solver=s,
                                                solver_options={"time_limit": cap}), X, y))
                if runs[-1][1] > 1.0:
                    break
            out[s] = {"wall": min(r[1] for r in runs), "cpu": min(r[2] for r in runs),
                      "ok": bool(np.all(runs[0][0].converged_))}
    out["load"] = os.getloadavg()[0]
    return out


def _best(row):
    ok = [(row[s]["cpu"], row[s]["wall"], s) for s in B.SINGLES if s in row and row[s]["ok"]]
    return min(ok) if ok else (math.nan, math.nan, "—")


def report(before, after, note):
    old = {r["spec"]: r for r in before}
    lines, rb, ra = [], [], []
    for r in after:
        cpu, wall, who = _best(r)
        b = old.get(r["spec"], {}).get("auto", {"cpu": math.nan, "wall": math.nan, "ok": True})
        a = r["auto"]
        if math.isfinite(cpu):
            rb.append(b["cpu"] / cpu)
            ra.append(a["cpu"] / cpu)
        name, scaling, loss, C = r["spec"].split(":")
        star = lambda x: "" if x["ok"] else " *"  # noqa: E731
        lines.append(f"| {name} | {scaling} | {loss} | {C} | {who} {cpu:.3f} ({wall:.3f}) | "
                     f"{b['cpu']:.3f}{star(b)} ({b['wall']:.3f}) | **{b['cpu'] / cpu:.2f}** | "
                     f"{a['cpu']:.3f}{star(a)} ({a['wall']:.3f}) | **{a['cpu'] / cpu:.2f}** | "
                     f"{a['path']} |")
    head = ["## Summary", "",
            f"- {len(ra)} cells; auto / best single candidate (CPU): median "
            f"{statistics.median(rb):.2f}x before, **{statistics.median(ra):.2f}x** after; "
            f"worst {max(rb):.2f}x before, **{max(ra):.2f}x** after; cells above 3x: "
            f"{sum(x > 3 for x in rb)} before, **{sum(x > 3 for x in ra)}** after", "",
            "## Cells", "",
            "| set | scaling | loss | C | best single: CPU s (wall) | before: auto CPU s (wall) "
            "| before / best | after: auto CPU s (wall) | after / best | after: path (first "
            "problem) |", "|---|---|---|---|---|---|---|---|---|---|"]
    return ["# solver=\"auto\" on chosen cells of the real-data grid, before and after "
            "(CPU time)", "", note, ""] + head + lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run")
    run.add_argument("cells", nargs="+")
    run.add_argument("--out", required=True)
    run.add_argument("--repeats", type=int, default=3)
    run.add_argument("--auto-only", action="store_true")
    rep = sub.add_parser("report")
    rep.add_argument("--before", nargs="+", required=True)
    rep.add_argument("--after", nargs="+", required=True,
                     help=".jsonl files; a later file's row replaces an earlier one's")
    rep.add_argument("--out", required=True)
    rep.add_argument("--note", default="")
    args = ap.parse_args(argv)
    if args.cmd == "run":
        with open(args.out, "w") as log:
            for spec in args.cells:
                row = measure(spec, args.repeats, not args.auto_only)
                log.write(json.dumps(row) + "\n")
                log.flush()
                print(spec, f"auto {row['auto']['cpu']:.3f} s CPU", row["auto"]["path"],
                      flush=True)
        return
    read = lambda f: [json.loads(x) for x in Path(f).read_text().splitlines() if x.strip()]  # noqa: E731
    def merged(files):          # a later file's row replaces an earlier one's
        rows = {}
        for f in files:
            rows.update((r["spec"], r) for r in read(f))
        return list(rows.values())
    write_result(Path(args.out), report(merged(args.before), merged(args.after), args.note))


if __name__ == "__main__":
    main()
