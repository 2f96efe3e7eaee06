"""L1 logistic regression on row partitions and on Dask (``solver="l1_newton"``;
docs/sparse-models.md, "Partitions and Dask").

On a9a, reuters and news20 (made binary, unit-norm rows, as
``bench_models.py`` loads them through :mod:`primaldual.datasets`) at ``l1 =
l1_max/10`` and ``/100``, ``lam = 0``, ``tol = 1e-6``: the serial ``l1cd``
(``solve(..., solver="l1cd")``), ``l1_newton`` on two partitions in process
(``n_partitions=2``) and on a 2-worker LocalCluster (processes, one thread
each; ``client=``).  Reported: wall seconds of the public call (the best of
three), passes, Newton
steps, the certified relative gap, and for Dask the calls made, their mean
milliseconds and the bytes moved per Newton step (sent to the workers /
returned to the client).  The Dask seconds include placing the rows on the
workers (the public call's wall time, after one warm-up fit on each path).

Writes ``benchmarks/results/dask-l1.md`` with the load (``uptime``) in the
header: the machine is shared, times are loaded-machine times.

    python benchmarks/bench_dask_l1.py [--sets a9a,reuters,news20]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import write_result  # noqa: E402
from bench_models import load_set  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "dask-l1.md"
#: fits per cell; the table shows the fastest
REPEAT = 3


def _row(name, X, div, how, **kw):
    import primaldual
    from primaldual.regpath import lam_max
    l1 = lam_max(X, _row.y, "logistic", penalty="l1") / div
    sec = float("inf")
    for _ in range(REPEAT):          # the best of REPEAT (the machine is shared)
        t = time.perf_counter()
        res = primaldual.solve(X, _row.y, loss="logistic", lam=0.0, l1=l1, tol=1e-6, **kw)
        sec = min(sec, time.perf_counter() - t)
    last = res.trace[-1]
    steps = last.get("newton_iter", "")
    dask = ""
    if "bytes_sent" in last:
        per = max(int(steps), 1)
        dask = (f"{last['calls']} x {last['call_ms']:.1f} ms; "
                f"{last['bytes_sent'] / per / 1e6:.3f} / {last['bytes_received'] / per / 1e6:.3f}")
    return (f"| {name} ({X.shape[0]} x {X.shape[1]}) | /{div} | {how} | {sec:.2f} | {res.n_epochs:.1f} | {steps} | "
            f"{np.count_nonzero(res.coef)} | {res.rel_gap:.1e} | {dask} |"), sec


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="a9a,reuters,news20")
    args = ap.parse_args(argv)
    from distributed import Client, LocalCluster
    import primaldual
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "log", "-1", "--format=%h"], capture_output=True,
                            text=True, cwd=ROOT).stdout.strip()
    lines = ["# L1 logistic on partitions and on Dask (bench_dask_l1.py)", "",
             f"Written {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, commit "
             f"{commit}; `uptime` at the start: `{up}` (2 cores, shared). `lam = 0`, "
             f"`tol = 1e-6`, every other option at its default; seconds: the best of "
             f"{REPEAT} fits; Dask: a 2-worker "
             f"LocalCluster (processes, one thread each).", "",
             "| set | l1_max/ | run | seconds | passes | Newton | support | rel. gap | "
             "Dask calls; MB sent / returned per Newton step |",
             "|---|---:|---|---:|---:|---:|---:|---:|---|"]
    ratios = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.wait_for_workers(2, timeout=120)
        for name in args.sets.split(","):
            data = load_set(name)
            if data is None:
                lines.append(f"| {name} | absent | | | | | | | |")
                continue
            X, y = data
            _row.y = y
            for kw in ({"n_partitions": 2}, {"client": client}):         # compile
                primaldual.solve(X[:300], y[:300], loss="logistic", lam=0, l1=1e-2,
                                 solver="l1_newton", **kw)
            for div in (10, 100):
                row, serial = _row(name, X, div, "l1cd, serial", solver="l1cd")
                lines.append(row)
                row, part = _row(name, X, div, "l1_newton, K = 2 in process",
                                 n_partitions=2)
                lines.append(row)
                row, dask = _row(name, X, div, "l1_newton, K = 2 on Dask", client=client)
                lines.append(row)
                ratios.append((name, div, part / serial, dask / serial))
                print("\n".join(lines[-3:]), flush=True)
    lines += ["", "Time over the serial `l1cd` time:", "",
              "| set | l1_max/ | K = 2 in process | K = 2 on Dask |", "|---|---:|---:|---:|"]
    lines += [f"| {n} | /{d} | {a:.2f} | {b:.2f} |" for n, d, a, b in ratios]
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    lines += ["", f"`uptime` at the end: `{up}`."]
    write_result(RESULTS, lines)


if __name__ == "__main__":
    main()
