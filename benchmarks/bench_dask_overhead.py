"""The fixed cost of a Dask round at d = 100,000 on a 2-worker LocalCluster
(issue 34, item 5).

Synthetic sparse data with 100,000 columns (4,000 rows of 50 nonzeros, unit
rows): a local pass touches most columns, so every round moves a d-vector
each way per worker, while its compute is about a millisecond.  Measured, each
as the median over ``--repeats`` fits of the engine's own per-round timers
(``round_ms``: the wall time of a round at the client; ``round_compute_ms``:
the slower worker's compute in it):

* ``ping``: a bare actor call to both workers (the latency floor);
* CoCoA+ rounds, ``aggregation="adding"`` (one call a round),
  ``"line_search"`` and ``"subspace"`` (a call for the local passes, then two
  a Newton step on the coefficients) for the hinge (quadratic dual) and the
  logistic loss;
* DSO's ring: one inner iteration (a call a partition, the column block
  passed worker to worker).

The overhead of a round is ``round_ms - round_compute_ms``.  Run once per code
version with ``--label`` (``before``/``after``); the records go to
``benchmarks/results/dask-overhead.jsonl`` and the table of every label to
``dask-overhead.md``.  The machine is shared (load average in the table):
the times are loaded-machine times.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import normalize

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results"


def make_data(n=4000, d=100_000, k=50, seed=0):
    rng = np.random.default_rng(seed)
    cols = np.sort(rng.integers(0, d, size=(n, k)), axis=1)
    X = sp.csr_matrix((rng.standard_normal(n * k), cols.ravel(), np.arange(0, n * k + 1, k)),
                      shape=(n, d))
    X.sum_duplicates()
    X = normalize(X).tocsr()
    y = np.sign(X @ rng.standard_normal(d) + 0.1 * rng.standard_normal(n))
    return X, y


def ping_ms(client, X, y, n_calls=200):
    from primaldual.distributed.partition_set import place_problem
    from primaldual.problem import Problem
    prob = Problem(X, y, loss="hinge", lam=1e-4)
    pset = place_problem(prob, np.array([0, X.shape[0] // 2, X.shape[0]]), client, 600.0)
    pset.call_all("ping")
    t0 = time.perf_counter()
    for _ in range(n_calls):
        pset.call_all("ping")
    return 1e3 * (time.perf_counter() - t0) / n_calls


def fit_round(client, X, y, **kw):
    from primaldual import solve
    res = solve(X, y, client=client, tol=0, round_timeout=600, **kw)
    tr = res.trace[-1]
    return tr["round_ms"], tr["round_compute_ms"]


CASES = {
    "CoCoA+ adding (hinge)": dict(loss="hinge", lam=1e-4, solver="cocoa", aggregation="adding",
                                  n_partitions=2, max_epochs=30, check_every=30),
    "CoCoA+ line_search (hinge)": dict(loss="hinge", lam=1e-4, solver="cocoa",
                                       aggregation="line_search", n_partitions=2,
                                       max_epochs=30, check_every=30),
    "CoCoA+ line_search (logistic)": dict(loss="logistic", lam=1e-4, solver="cocoa",
                                          aggregation="line_search", n_partitions=2,
                                          max_epochs=30, check_every=30),
    "CoCoA+ subspace (hinge)": dict(loss="hinge", lam=1e-4, solver="cocoa",
                                    aggregation="subspace", n_partitions=2,
                                    max_epochs=30, check_every=30),
    "CoCoA+ subspace (logistic)": dict(loss="logistic", lam=1e-4, solver="cocoa",
                                       aggregation="subspace", n_partitions=2,
                                       max_epochs=30, check_every=30),
    "DSO ring (hinge)": dict(loss="hinge", lam=1e-4, solver="dso", n_workers=2,
                             max_epochs=15, check_every=15),
}


def run(label, repeats):
    sys.path.insert(0, str(ROOT / "src"))
    from distributed import Client, LocalCluster
    X, y = make_data()
    records = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.wait_for_workers(2, timeout=60)
        fit_round(client, X, y, **{**CASES["CoCoA+ adding (hinge)"], "max_epochs": 1})
        fit_round(client, X, y, **{**CASES["DSO ring (hinge)"], "max_epochs": 1})
        pings = [ping_ms(client, X, y) for _ in range(repeats)]
        records.append({"label": label, "case": "ping (both workers)",
                        "round_ms": statistics.median(pings), "compute_ms": 0.0,
                        "load": os.getloadavg()[0]})
        for name, kw in CASES.items():
            rs = [fit_round(client, X, y, **kw) for _ in range(repeats)]
            records.append({"label": label, "case": name,
                            "round_ms": statistics.median(r[0] for r in rs),
                            "compute_ms": statistics.median(r[1] for r in rs),
                            "load": os.getloadavg()[0]})
            print(records[-1], flush=True)
    with (OUT / "dask-overhead.jsonl").open("a") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")


def render():
    records = [json.loads(line) for line in (OUT / "dask-overhead.jsonl").open()]
    labels = list(dict.fromkeys(r["label"] for r in records))
    cases = list(dict.fromkeys(r["case"] for r in records))
    by = {(r["label"], r["case"]): r for r in records}
    loads = [r["load"] for r in records]
    lines = ["# Dask's fixed cost of a round, d = 100,000 (2-worker LocalCluster)", "",
             "`python benchmarks/bench_dask_overhead.py --label L` (one run per code "
             "version), 4,000 x 100,000 sparse rows of 50 nonzeros: each round moves a "
             "d-vector each way per worker.  Median of the engine's per-round timers "
             "over the repeats; overhead = round - slower worker's compute.",
             f"Machine: 2 cores shared with other work, load average {min(loads):.1f} to "
             f"{max(loads):.1f} during the runs (`load` column): loaded-machine times; "
             "compare the labels' ratios, not the absolute numbers.", "",
             "| case | " + " | ".join(f"{lb}: round ms (overhead ms, load)" for lb in labels)
             + " |", "|---|" + "---|" * len(labels)]
    for c in cases:
        cells = []
        for lb in labels:
            r = by.get((lb, c))
            cells.append("-" if r is None else
                         f"{r['round_ms']:.1f} ({r['round_ms'] - r['compute_ms']:.1f}, "
                         f"{r['load']:.0f})")
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    (OUT / "dask-overhead.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default=None)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    if args.label:
        run(args.label, args.repeats)
    render()


if __name__ == "__main__":
    main()
