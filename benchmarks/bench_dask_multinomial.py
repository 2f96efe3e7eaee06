"""Multinomial logistic regression in process and on a 2-worker Dask
LocalCluster (``solver="multinomial_newton"``; docs/multiclass-models.md).

On every multiclass set of ``../shared/data`` that is present, at ``lam =
1/n`` (scikit-learn's ``C = 1``), ``tol = 1e-6``, the public call with its
defaults: ``primaldual.solve(X, y, loss="multinomial", lam=1/n)`` in process
(one partition, the dual start where it applies), the same on two
partitions in process (``n_partitions=2``: the start is zero), and on the
cluster (``client=``, two workers of one thread).  Reported: wall seconds,
passes, Newton steps, CG steps, and for Dask the calls made and their mean
milliseconds (a call is one round trip to both workers).  The ratio Dask /
in process says what the cluster costs on data that fits one machine; the
difference to ``n_partitions=2`` is the transport.

Writes ``benchmarks/results/dask-multinomial.md`` with ``uptime`` in the
header (the machine is shared: loaded-machine times).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import shared_file, write_result  # noqa: E402

SETS = ("dna.scale", "letter.scale", "usps.t.bz2", "shuttle", "news20.bz2")


def _load(name):
    path = shared_file(name)
    if path is None:
        return None
    X, y = load_svmlight_file(str(path))
    return X.tocsr(), np.unique(y, return_inverse=True)[1]


def _row(name, X, y, how, **kw):
    import primaldual
    t = time.perf_counter()
    res = primaldual.solve(X, y, loss="multinomial", lam=1.0 / X.shape[0], tol=1e-6, **kw)
    sec = time.perf_counter() - t
    last = res.trace[-1]
    calls = (f"{last['calls']} x {last['call_ms']:.1f} ms" if "call_ms" in last else "")
    return (f"| {name} | {X.shape[0]} x {X.shape[1]} | {int(y.max()) + 1} | {how} | "
            f"{sec:.2f} | {res.n_epochs:g} | {last['newton_iter']} | {last['cg_iter']} | "
            f"{res.rel_gap:.1e} | {calls} |"), sec


def main():
    from distributed import Client, LocalCluster
    import primaldual
    load = os.getloadavg()[0]
    lines = ["# Multinomial logistic in process and on Dask (bench_dask_multinomial.py)", "",
             f"Written {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; 1-minute "
             f"load {load:.1f} at the start on 2 cores. `lam = 1/n`, `tol = 1e-6`, "
             f"every other option at its default; a 2-worker LocalCluster (processes, "
             f"one thread each).", "",
             "| set | n x d | K | run | seconds | passes | Newton | CG | rel. gap | "
             "Dask calls |", "|---|---|---:|---|---:|---:|---:|---:|---:|---|"]
    ratios = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.wait_for_workers(2, timeout=120)
        for name in SETS:
            data = _load(name)
            if data is None:
                lines.append(f"| {name} | absent | | | | | | | | |")
                continue
            X, y = data
            primaldual.solve(X[:300], y[:300], loss="multinomial", lam=1e-2)   # compile
            row, serial = _row(name, X, y, "in process")
            lines.append(row)
            row, _ = _row(name, X, y, "2 partitions in process", n_partitions=2)
            lines.append(row)
            row, dask = _row(name, X, y, "Dask, 2 workers", client=client)
            lines.append(row)
            ratios.append(f"{name} {dask / serial:.2f}")
            print("\n".join(lines[-3:]), flush=True)
    lines += ["", "Dask / in process (wall): " + ", ".join(ratios) + ".",
              f"1-minute load at the end: {os.getloadavg()[0]:.1f}."]
    write_result(ROOT / "benchmarks" / "results" / "dask-multinomial.md", lines)


if __name__ == "__main__":
    main()
