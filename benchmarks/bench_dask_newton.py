"""Distributed Newton-CG, DiSCO and CoCoA+ on a 2-worker Dask LocalCluster
against serial SDCA (issues 23 and 34).

Logistic, lam = 1e-5, to a certified relative gap of 1e-6, on the CCAT shape
and the shared-vocabulary text of the regimes (full size by default;
``--rows`` takes the first rows).  Runs, interleaved ``--repeats`` times:
serial SDCA, serial Newton, Newton on the cluster (K = 2, one partition per
worker, one thread each) and CoCoA+ (``aggregation="line_search"``, K = 2) on
the cluster, stopped at ``--cap`` seconds (``--no-cocoa`` leaves it out), and
``solver="disco"`` (Newton-CG preconditioned by the partitions' local
Hessians) and its GIANT step (local CG or local SDCA) in process and on the
cluster.  The cluster runs include placing
the rows on the workers, as a user's call does.  The medians and their
ratios to serial SDCA's are reported, with the solver ``solver="auto"``
picks on the cluster and its reason.  The machine is shared with other work:
the times are loaded-machine times; the ratios are side by side.

Writes ``benchmarks/results/dask-newton.md`` and ``dask-newton.jsonl`` (every
run appended with its batch; the table shows each set's latest batch, and
runs of earlier batches that it did not repeat, marked).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from primaldual import Problem, solve  # noqa: E402
from primaldual.datasets import make_synthetic  # noqa: E402
from primaldual.datasets.regimes import make_shared_vocab_text  # noqa: E402
from primaldual.solvers import resolve_distributed_solver  # noqa: E402

OUT = ROOT / "benchmarks" / "results"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--cap", type=float, default=120.0, help="seconds for CoCoA+")
    ap.add_argument("--sets", default="ccat,text")
    ap.add_argument("--no-cocoa", action="store_true")
    ap.add_argument("--runs", default=None,
                    help="only these runs, ';'-separated names (the table keeps the "
                         "others from earlier batches)")
    ap.add_argument("--passes", action="store_true",
                    help="no cluster: in-process passes to 1e-6 of DiSCO (PCG) and "
                         "GIANT at K = 2, 4, 8 on the text, a9a and reuters "
                         "(dask-newton-passes.jsonl), and rewrite the table")
    ap.add_argument("--auto-only", action="store_true",
                    help="recompute auto's choice for the recorded runs of "
                         "dask-newton.jsonl and rewrite the table (no runs)")
    args = ap.parse_args()
    if args.auto_only:
        return rewrite_auto(args)
    if args.passes:
        from bench_disco_passes import run_passes
        run_passes(args)
        return write_table(read_all(), args)
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    client = Client(cluster)
    client.wait_for_workers(2, timeout=60)
    makers = {"ccat": ("CCAT shape", lambda: make_synthetic(
                  "CCAT", n_samples=args.rows, random_state=0)[:2]),
              "text": ("shared-vocabulary text", lambda: make_shared_vocab_text(
                  **({"n_samples": args.rows} if args.rows else {}), random_state=0))}
    kw = dict(loss="logistic", lam=1e-5, tol=1e-6, random_state=0)
    runs = [("serial SDCA", dict(solver="sdca")),
            ("serial Newton", dict(solver="newton")),
            ("Newton on Dask, K = 2", dict(solver="newton", n_partitions=2, client=client)),
            ("DiSCO in process, K = 2", dict(solver="disco", n_partitions=2)),
            ("DiSCO on Dask, K = 2", dict(solver="disco", n_partitions=2, client=client)),
            ("GIANT in process, K = 2", dict(solver="disco", direction="giant",
                                             local_solver="cg", n_partitions=2)),
            ("GIANT on Dask, K = 2", dict(solver="disco", direction="giant", n_partitions=2,
                                          local_solver="cg", client=client)),
            ("GIANT, local SDCA, in process, K = 2", dict(
                solver="disco", direction="giant", local_solver="sdca", n_partitions=2)),
            ("GIANT, local SDCA, on Dask, K = 2", dict(
                solver="disco", direction="giant", local_solver="sdca", n_partitions=2,
                client=client)),
            ("CoCoA+ on Dask, K = 2", dict(solver="cocoa", n_partitions=2, client=client,
                                           time_limit=args.cap, max_epochs=10_000))]
    if args.no_cocoa:
        runs = runs[:-1]
    if args.runs:
        keep = set(args.runs.split(";"))
        runs = [r for r in runs if r[0] in keep]
    batch = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=ROOT).stdout.strip()
    records = []
    warm = make_synthetic("rcv1", n_samples=2000, random_state=0)[:2]
    for _, opts in runs:                       # compile every kernel once
        solve(*warm, **kw, **opts)
    with (OUT / "dask-newton.jsonl").open("a") as fh:
        for key in args.sets.split(","):
            name, make = makers[key]
            X, y = make()
            label = f"{name} ({X.shape[0]:,} x {X.shape[1]:,}, {X.nnz / 1e6:.1f} M nonzeros)"
            prob = Problem(X, y, loss="logistic", lam=1e-5)
            auto, reason = resolve_distributed_solver(prob, {"n_partitions": 2}, client)
            print(label, "auto:", auto, reason, flush=True)
            for rep in range(args.repeats):
                for run, opts in runs:
                    t = time.perf_counter()
                    r = solve(X, y, **kw, **opts)
                    rec = {"set": label, "run": run, "repeat": rep,
                           "seconds": time.perf_counter() - t, "fit_seconds": float(r.time),
                           "epochs": float(r.n_epochs),
                           "converged": bool(r.converged), "rel_gap": float(r.rel_gap),
                           "reductions": r.trace[-1].get("reductions"),
                           "precond_passes": r.trace[-1].get("precond_passes"),
                           "cg_iter": r.trace[-1].get("cg_iter"), "batch": batch,
                           "call_ms": r.trace[-1].get("call_ms"),
                           "auto": auto, "auto_reason": reason, "commit": commit,
                           "load": os.getloadavg()[0]}
                    records.append(rec)
                    fh.write(json.dumps(rec) + "\n")
                    fh.flush()
                    print(rec, flush=True)
    client.close()
    cluster.close()
    write_table(read_all(), args)


def read_all():
    """Every recorded run; for each set its latest batch, and the runs of
    earlier batches that the latest did not repeat (marked ``earlier``)."""
    records = [json.loads(line) for line in (OUT / "dask-newton.jsonl").open()]
    out = []
    for s in dict.fromkeys(r["set"] for r in records):
        rs = [r for r in records if r["set"] == s]
        batches = list(dict.fromkeys(r.get("batch", "") for r in rs))
        seen = set()
        for b in reversed(batches):
            runs = {r["run"] for r in rs if r.get("batch", "") == b}
            own = [r for r in rs if r.get("batch", "") == b and r["run"] == "serial SDCA"]
            for r in rs:
                if r.get("batch", "") == b and r["run"] not in seen:
                    # an earlier batch's run is compared with its own batch's SDCA
                    out.append(dict(r, earlier=b != batches[-1], base=(
                        statistics.median(o["seconds"] for o in own) if own else None),
                        base_epochs=(statistics.median(o["epochs"] for o in own)
                                     if own else None)))
            seen |= runs
    return out


def rewrite_auto(args):
    """The table of the recorded runs with auto's choice of this rule (a 2-worker
    cluster), for each set regenerated to price it."""
    records = read_all()

    class TwoWorkers:            # the rule needs only the number of workers
        def scheduler_info(self, **kw):
            return {"workers": {"a": None, "b": None}}
    for key, (X, y) in [("CCAT shape", make_synthetic("CCAT", n_samples=args.rows,
                                                      random_state=0)[:2]),
                        ("shared-vocabulary text", make_shared_vocab_text(
                            **({"n_samples": args.rows} if args.rows else {}),
                            random_state=0))]:
        prob = Problem(X, y, loss="logistic", lam=1e-5)
        auto, reason = resolve_distributed_solver(prob, {"n_partitions": 2}, TwoWorkers())
        for r in records:
            if r["set"].startswith(key):
                r["auto"], r["auto_reason"] = auto, reason
    write_table(records, args)


def write_table(records, args):
    lines = ["# Distributed Newton, DiSCO and CoCoA+ on a 2-worker LocalCluster against "
             "serial SDCA",
             "",
             "`benchmarks/bench_dask_newton.py` (issues 23, 34).  Logistic, lam = 1e-5, certified "
             "relative gap 1e-6; a LocalCluster of 2 worker processes with one thread each, "
             "K = 2 partitions (one a worker); cluster times include placing the rows on the "
             f"workers; CoCoA+ (`line_search`) stopped at {args.cap:g} s.  Medians of "
             f"{args.repeats} interleaved repeats.",
             "",
             "**The machine was shared with other work while this ran** (2 cores, 1-minute "
             f"load average {min(r['load'] for r in records):.0f} to "
             f"{max(r['load'] for r in records):.0f} at the runs' ends, the `load` column of "
             "`dask-newton.jsonl`): absolute times are inflated and noisy, and two worker "
             "processes cannot run at once on two busy cores; compare the ratios, measured "
             "side by side.  `fit s` leaves out placing the rows on the workers (the "
             "solver's own clock); `call ms` is the mean wall time of one call to all "
             "workers (a reduction, a line-search evaluation, a certificate).  Passes: a "
             "pass reads every row once, as an SDCA epoch does (an evaluation of f and "
             "grad f, a Hessian-vector product: one distributed product with X and X^T "
             "each); `+ N local` is the work each partition does on its own rows "
             "between rounds (DiSCO's preconditioner: 4 passes over the rows it runs "
             "on an application; GIANT's local CG or local SDCA epochs), in passes over the "
             "partition's "
             "rows, the partitions at once; `x SDCA's epochs` compares the passes, and "
             "in parentheses the passes with the local ones; `reductions` counts the "
             "rounds that gather a vector from every worker.",
             ""]
    for s in dict.fromkeys(r["set"] for r in records):
        rs = [r for r in records if r["set"] == s]
        auto = rs[0]["auto"]
        batches = sorted({(r.get("batch") or "issue 23",
                           r.get("commit") or "not recorded") for r in rs})
        runs_of = "; ".join(f"{b} (commit {c})" for b, c in batches)
        lines += [f"## {s}", "", f"`solver=\"auto\"` with the client picks **{auto}**: "
                  f"{rs[0]['auto_reason']}.  Batches shown: {runs_of}.", "",
                  "| run | median s | x serial SDCA | fit s | epochs (passes) | x SDCA's "
                  "epochs (with local) | reductions | call ms | certified |",
                  "|---|---|---|---|---|---|---|---|---|"]
        latest = [r for r in rs if not r.get("earlier")]
        base = statistics.median(r["seconds"] for r in latest if r["run"] == "serial SDCA")
        base_ep = statistics.median(r["epochs"] for r in latest if r["run"] == "serial SDCA")
        for run in dict.fromkeys(r["run"] for r in rs):
            rr = [r for r in rs if r["run"] == run]
            mark = f" (earlier run, {rr[0].get('batch') or 'issue 23'})" \
                if rr[0].get("earlier") else ""
            t = statistics.median(r["seconds"] for r in rr)
            conv = all(r["converged"] for r in rr)
            ep = statistics.median(r["epochs"] for r in rr)
            red = rr[0]["reductions"]
            gap = max(r["rel_gap"] for r in rr)
            fit = statistics.median(r["fit_seconds"] for r in rr)
            cm = [r["call_ms"] for r in rr if r.get("call_ms") is not None]
            call = f"{statistics.median(cm):.1f}" if cm else ""
            if rr[0].get("earlier") and rr[0].get("base"):
                t_base, ep_base = rr[0]["base"], rr[0]["base_epochs"]
            else:
                t_base, ep_base = base, base_ep
            pp = rr[0].get("precond_passes") or 0.0
            passes = f"{ep - pp:.1f}" + (f" + {pp:.0f} local" if pp else "")
            ratio = f"{(ep - pp) / ep_base:.1f}" + (f" ({ep / ep_base:.1f})" if pp else "")
            lines.append(f"| {run}{mark} | {t:.2f} | {'>= ' if not conv else ''}"
                         f"{t / t_base:.2f} | {fit:.2f} | {passes} | {ratio} | "
                         f"{red if red is not None else ''} | "
                         f"{call} | {'yes' if conv else f'no (gap {gap:.1e})'} |")
        lines.append("")
    from bench_disco_passes import passes_section
    lines += passes_section()
    (OUT / "dask-newton.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
