"""In-process passes to a certified 1e-6 of the distributed Newton variants
(issue 34, item 3), a part of ``bench_dask_newton.py --passes``.

Logistic, lam = 1e-5, on the shared-vocabulary text (full size, or
``--rows``) and on a9a and reuters as given, for serial SDCA and serial
Newton and, at K = 2, 4, 8 contiguous partitions, DiSCO (PCG preconditioned
by partition 0's local Hessian) and GIANT (the partitions' local Newton
directions averaged) with its local systems solved by CG
(``local_solver="cg"``) and by dual coordinate ascent (``"sdca"``).  Passes count the reads of all rows (evaluations and
Hessian-vector products); the partitions' local work is counted apart, in
passes over a partition's rows.  The counts do not depend on the machine's
load.  Appends to ``results/dask-newton-passes.jsonl``.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from pathlib import Path

from primaldual import solve
from primaldual.datasets.regimes import load_shared_regime, make_shared_vocab_text

OUT = Path(__file__).resolve().parents[1] / "benchmarks" / "results"
FILE = OUT / "dask-newton-passes.jsonl"
KS = (2, 4, 8)
LAM = 1e-5


def _sets(args):
    X, y = make_shared_vocab_text(**({"n_samples": args.rows} if args.rows else {}),
                                  random_state=0)
    yield f"shared-vocabulary text ({X.shape[0]:,} x {X.shape[1]:,})", X, y
    for name in ("a9a", "reuters"):
        try:
            X, y = load_shared_regime(name)
        except Exception as e:        # no shared data on this machine
            print(f"{name} skipped: {e}", flush=True)
            continue
        yield f"{name} ({X.shape[0]:,} x {X.shape[1]:,})", X, y


def _runs():
    yield "serial SDCA", None, dict(solver="sdca", random_state=0)
    yield "serial Newton", None, dict(solver="newton")
    for K in KS:
        yield "DiSCO (PCG)", K, dict(solver="disco", n_partitions=K)
        yield "GIANT, local CG", K, dict(solver="disco", direction="giant",
                                         local_solver="cg", n_partitions=K)
        yield "GIANT, local SDCA", K, dict(solver="disco", direction="giant",
                                           local_solver="sdca", n_partitions=K,
                                           random_state=0)


def run_passes(args):
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=OUT).stdout.strip()
    batch = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with FILE.open("a") as fh:
        for label, X, y in _sets(args):
            for run, K, opts in _runs():
                t = time.perf_counter()
                r = solve(X, y, loss="logistic", lam=LAM, tol=1e-6, max_epochs=20_000, **opts)
                tr = r.trace[-1]
                local = float(tr.get("precond_passes") or 0.0)
                rec = {"set": label, "run": run, "K": K, "passes": float(r.n_epochs) - local,
                       "local": local, "newton_iter": tr.get("newton_iter"),
                       "cg_iter": tr.get("cg_iter"), "converged": bool(r.converged),
                       "rel_gap": float(r.rel_gap), "seconds": time.perf_counter() - t,
                       "load": os.getloadavg()[0], "batch": batch, "commit": commit}
                fh.write(json.dumps(rec) + "\n")
                fh.flush()
                print(rec, flush=True)


def passes_section():
    """The markdown of the latest batch of ``dask-newton-passes.jsonl``."""
    if not FILE.exists():
        return []
    recs = [json.loads(line) for line in FILE.open()]
    batch = recs[-1]["batch"]
    recs = [r for r in recs if r["batch"] == batch]
    loads = [r["load"] for r in recs]
    lines = ["## Passes in process: DiSCO and GIANT (local CG or local SDCA) at "
             "K = 2, 4, 8", "",
             f"`bench_dask_newton.py --passes` (batch {batch}, commit {recs[0]['commit']}, "
             f"1-minute load {min(loads):.1f} to {max(loads):.1f}; the counts do not depend "
             "on it).  Logistic, lam = 1e-5, certified relative gap 1e-6, K contiguous "
             "partitions in this process (a Dask run over the same partitions makes the "
             "same passes: tested).  `passes`: reads of all rows (evaluations of f and "
             "grad f, Hessian-vector products), `x SDCA`: passes / serial SDCA's epochs "
             "(the issue's target: at most 2 on the text); `local`: the partitions' own "
             "work between rounds, in passes over a partition's rows (DiSCO: partition "
             "0's preconditioner, in passes over all rows; GIANT: every partition's local "
             "CG, or its local SDCA epochs (`local SDCA`), at once, and the first "
             "round's 3 SDCA passes); `total x SDCA`: passes and local passes together "
             "over serial SDCA's epochs (a local pass counted as a pass); `s`: this machine's seconds for the whole fit in one process "
             "(the partitions one after another).", ""]
    for s in dict.fromkeys(r["set"] for r in recs):
        rs = [r for r in recs if r["set"] == s]
        base = statistics.median(r["passes"] for r in rs if r["run"] == "serial SDCA")
        lines += [f"### {s}", "",
                  "| run | K | passes | x SDCA | local | total x SDCA | Newton steps | "
                  "CG steps (local SDCA: epochs) | s | certified |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in rs:
            lines.append(f"| {r['run']} | {r['K'] or ''} | {r['passes']:.1f} | "
                         f"{r['passes'] / base:.2f} | {r['local']:.0f} | "
                         f"{(r['passes'] + r['local']) / base:.1f} | "
                         f"{r['newton_iter'] if r['newton_iter'] is not None else ''} | "
                         f"{r['cg_iter'] if r['cg_iter'] is not None else ''} | "
                         f"{r['seconds']:.1f} | "
                         f"{'yes' if r['converged'] else 'no (%.1e)' % r['rel_gap']} |")
        lines.append("")
    return lines
