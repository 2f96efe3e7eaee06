"""DSO's defaults against its former defaults on the small real sets of ../shared/data,
as given and with unit-norm rows, at lam n = 0.5, 5 and 50, hinge and logistic.

For every cell: the reference optimum ``P*`` certified by a duality gap (Newton for
logistic, SDCA for hinge, to a relative gap of 1e-10; cells whose reference is not
certified to 1e-8 are reported as such), then DSO (``n_workers=1``, 200 epochs,
``tol=0``, the gap checked every 10 epochs) with the defaults and with the former
defaults (``primal_weight=1, fallback=None``); the relative sub-optimality ``(P(w) -
P*)/P*`` of the ``w`` that ``solve`` returns.  Accuracy does not depend on the machine's
load.  ``--seeds`` repeats every DSO run with other ``random_state`` values.

Run:  PYTHONPATH=src python benchmarks/bench_dso_survey.py [--out benchmarks/results/dso-survey.md]
"""
from __future__ import annotations

import argparse
import time

from sklearn.preprocessing import normalize

from primaldual.datasets import load
from primaldual.solvers import solve

from _common import write_result  # benchmarks/, the script's folder

SETS = ("splice", "mushrooms", "phishing", "a8a")
FORMER = {"primal_weight": 1.0, "fallback": None}


def reference(X, y, loss, lam):
    if loss == "logistic":
        r = solve(X, y, loss=loss, lam=lam, solver="newton", tol=1e-12, max_epochs=500)
    else:
        r = solve(X, y, loss=loss, lam=lam, solver="sdca", tol=1e-10, max_epochs=5000)
    return r.primal, r.rel_gap


def sub(X, y, loss, lam, p_star, seed, **opts):
    r = solve(X, y, loss=loss, lam=lam, solver="dso", tol=0.0, max_epochs=200,
              check_every=10, random_state=seed, **opts)
    return (r.primal - p_star) / p_star


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--lam-n", default="0.5,5,50")
    ap.add_argument("--seeds", default="0")
    ap.add_argument("--out", default="benchmarks/results/dso-survey.md")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    rows = []
    t0 = time.perf_counter()
    for name in args.sets.split(","):
        X0, y = load(name, download=False, parsed_cache=True)
        for scaling in ("raw", "unit rows"):
            X = X0 if scaling == "raw" else normalize(X0)
            for loss in ("hinge", "logistic"):
                for lam_n in (float(v) for v in args.lam_n.split(",")):
                    lam = lam_n / X.shape[0]
                    p_star, ref_gap = reference(X, y, loss, lam)
                    new = [sub(X, y, loss, lam, p_star, s) for s in seeds]
                    old = [sub(X, y, loss, lam, p_star, s, **FORMER) for s in seeds]
                    rows.append((name, scaling, loss, lam_n, ref_gap, new, old))
                    print(f"{name} {scaling} {loss} lam_n={lam_n:g}: ref gap {ref_gap:.0e} "
                          f"new {' '.join(f'{v:.1e}' for v in new)} "
                          f"former {' '.join(f'{v:.1e}' for v in old)}", flush=True)
    write(args, rows, seeds, time.perf_counter() - t0)


def cell(vals):
    worst = max(vals)
    s = " / ".join(f"{v:.1e}" for v in vals)
    return f"**{s}**" if worst > 1e-3 else s


def write(args, rows, seeds, elapsed):
    lines = [
        "# DSO's defaults on the small real sets: survey over lam n",
        "",
        "Written by `benchmarks/bench_dso_survey.py` (serial DSO, `n_workers=1`, 200 epochs, "
        f"the gap checked every 10; `random_state` {', '.join(map(str, seeds))}; "
        f"{elapsed:.0f} s in all). Relative sub-optimality `(P(w) - P*)/P*` of the `w` that "
        "`solve` returns (one value per seed), with the defaults and with the former "
        "defaults (`primal_weight=1, fallback=None`); in bold where a seed misses 1e-3. "
        "`P*`: Newton (logistic) or SDCA (hinge), certified to the relative gap in "
        "column `ref gap`. Accuracy does not depend on the machine's load.",
        "",
        "| set | rows | loss | lam n | ref gap | defaults | former defaults |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for name, scaling, loss, lam_n, ref_gap, new, old in rows:
        lines.append(f"| {name} | {scaling} | {loss} | {lam_n:g} | {ref_gap:.0e} | "
                     f"{cell(new)} | {cell(old)} |")
    met_new = sum(max(r[5]) <= 1e-3 for r in rows)
    met_old = sum(max(r[6]) <= 1e-3 for r in rows)
    lines += ["", f"Cells meeting 1e-3 on every seed: defaults {met_new} of {len(rows)}, "
                  f"former defaults {met_old} of {len(rows)}."]
    write_result(args.out, lines)


if __name__ == "__main__":
    main()
