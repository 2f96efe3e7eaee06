"""The default estimators' fit time against scikit-learn's defaults (issue 31).

For each set (loaded as :mod:`bench_auto_real` loads it: at most ``--rows``
training rows, dense when at least 30% filled) and each loss ({hinge,
squared_hinge, logistic} on classification sets, {squared, absolute,
epsilon_insensitive} on the regression sets cadata, abalone, housing_scale),
this times ``LinearClassifier(loss=L).fit`` / ``LinearRegressor(loss=L).fit``
(``C = 1``: ``lam = 1/n``) and scikit-learn's default estimator for the
same loss (``LinearSVC(loss="hinge")``, ``LinearSVC()``,
``LogisticRegression()``, ``Ridge()``, ``LinearSVR(epsilon=0 | 0.1)``) in
this process, interleaved (ours, theirs, theirs, ours, ...: a load spike
hits both), after one warm-up fit each.  A cell reports the median of each,
the ratio of the medians, the median of the ratios of the pairs of
neighbouring fits (less sensitive to a load that drifts), the ratio of the
fastest fits, the ratio of the median CPU times (``time.process_time``, all
of the process's threads: steadier than wall time on a loaded machine, but it
counts a multithreaded BLAS's helpers too), and the path of our fit; the header states the load
average (``uptime``) before and after, since the machine is shared.

    python benchmarks/bench_estimator_overhead.py                 # the default sets
    python benchmarks/bench_estimator_overhead.py --sets heart_scale --repeats 50

Writes benchmarks/results/estimator-overhead.md (``--out``) and a .jsonl beside it.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import primaldual

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write_result  # noqa: E402
from bench_auto_real import CLASS_LOSSES, REG_LOSSES, REGRESSION, load, peer  # noqa: E402

SETS = ("heart_scale", "australian", "breast-cancer", "ionosphere_scale", "sonar_scale",
        "german.numer_scale", "fourclass", "svmguide1", "a1a", "splice", "dna.scale",
        "mushrooms", "phishing", "magic04", "cadata", "abalone", "housing_scale")


def _load():
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def cell(X, y, loss, regression, repeats, budget):
    """Interleaved fits of ours and the peer: a dict of medians and the path."""
    cls = primaldual.LinearRegressor if regression else primaldual.LinearClassifier
    mine = lambda: cls(loss=loss)              # noqa: E731
    theirs = lambda: peer(loss, 1.0)          # noqa: E731
    est = mine().fit(X, y)
    theirs().fit(X, y)
    ours_s, peer_s, ours_cpu, peer_cpu = [], [], [], []
    t_end = time.perf_counter() + budget
    for k in range(repeats):
        order = ((mine, ours_s, ours_cpu), (theirs, peer_s, peer_cpu))
        for make, out, cpu in (order if k % 2 == 0 else order[::-1]):
            t0, c0 = time.perf_counter(), time.process_time()
            make().fit(X, y)
            out.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        if k >= 2 and time.perf_counter() > t_end:
            break
    path = "+".join(leg["method"] for leg in (est.solver_path_[0]
                                               if isinstance(est.solver_path_[0], list)
                                               else est.solver_path_))
    ours_m, peer_m = statistics.median(ours_s), statistics.median(peer_s)
    paired = statistics.median(a / b for a, b in zip(ours_s, peer_s))
    return {"ours_s": ours_m, "peer_s": peer_m, "ratio": ours_m / peer_m, "paired": paired,
            "ours_min": min(ours_s), "peer_min": min(peer_s),
            "cpu": statistics.median(ours_cpu) / max(statistics.median(peer_cpu), 1e-9),
            "repeats": len(ours_s), "path": path,
            "converged": bool(np.all(est.converged_))}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--losses", default=None, help="comma list (default: all of the set's kind)")
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--budget", type=float, default=20.0,
                    help="seconds per cell after which repeats stop (at least 3)")
    ap.add_argument("--note", default="")
    ap.add_argument("--out", default="benchmarks/results/estimator-overhead.md")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    load_start, started = _load(), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rows = []
    for name in args.sets.split(","):
        X, y, _, _ = load(name, args.rows)
        regression = name in REGRESSION
        losses = args.losses.split(",") if args.losses else (
            REG_LOSSES if regression else CLASS_LOSSES)
        for loss in losses:
            if (loss in REG_LOSSES) != regression:
                continue
            r = cell(X, y, loss, regression, args.repeats, args.budget)
            r.update(set=name, loss=loss, n=X.shape[0], d=X.shape[1], load=os.getloadavg()[0])
            rows.append(r)
            print(f"{name:20s} {loss:20s} ours {r['ours_s'] * 1e3:9.2f} ms  sklearn "
                  f"{r['peer_s'] * 1e3:9.2f} ms  {r['ratio']:5.2f}x  paired {r['paired']:5.2f}x"
                  f"  fastest {r['ours_min'] / r['peer_min']:5.2f}x  cpu {r['cpu']:5.2f}x  "
                  f"{r['path']}", flush=True)
    out = Path(args.out)
    out.with_suffix(".jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ratios = [r["ratio"] for r in rows]
    paired = [r["paired"] for r in rows]
    fastest = [r["ours_min"] / r["peer_min"] for r in rows]
    cpu = [r["cpu"] for r in rows]
    lines = [
        "# Default estimators' fit time against scikit-learn's defaults (issue 31)", "",
        f"Written by `python benchmarks/bench_estimator_overhead.py "
        f"{' '.join(argv if argv is not None else sys.argv[1:])}` ({started}). Machine: 2 cores "
        f"shared with other work; load average at the start {load_start}, at the end "
        f"{_load()} (`uptime`): read the ratios, which are taken in one process with the "
        f"fits interleaved. C = 1, at most {args.rows:,} training rows, median of up to "
        f"{args.repeats} interleaved fits after a warm-up fit each.", "",
    ] + ([args.note, ""] if args.note else []) + [
        f"- cells: {len(rows)}; ours / scikit-learn (ratio of medians): median "
        f"**{statistics.median(ratios):.2f}x**, best {min(ratios):.2f}x, worst "
        f"{max(ratios):.2f}x; at most 1x in {sum(x <= 1 for x in ratios)} cells",
        f"- median over the cells of the paired ratio: **{statistics.median(paired):.2f}x**; "
        f"of the fastest fits' ratio: **{statistics.median(fastest):.2f}x**; of the CPU-time "
        f"ratio: **{statistics.median(cpu):.2f}x**", "",
        "| set | n x d | loss | ours ms | sklearn ms | ours / sklearn | paired | fastest "
        "| CPU | path | fits | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ] + [f"| {r['set']} | {r['n']:,} x {r['d']:,} | {r['loss']} | {r['ours_s'] * 1e3:.2f} | "
         f"{r['peer_s'] * 1e3:.2f} | {r['ratio']:.2f} | {r['paired']:.2f} | "
         f"{r['ours_min'] / r['peer_min']:.2f} | {r['cpu']:.2f} | {r['path']}"
         f"{'' if r['converged'] else ' (not converged)'} | {r['repeats']} | "
         f"{r['load']:.2f} |" for r in rows]
    write_result(out, lines)


if __name__ == "__main__":
    main()
