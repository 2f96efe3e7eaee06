"""The Crammer-Singer SVM serially, on partitions in process and on a 2-worker
Dask LocalCluster (``solver="crammer_singer_cocoa"``; docs/multiclass-models.md).

On dna.scale, letter.scale and usps.t (``../shared/data``), at ``lam = 1/n``
(LIBLINEAR's ``-s 4`` default ``C = 1``) and at ``lam = 100/n`` (``C =
0.01``), each run to ``tol = 1e-6`` under a cap of ``CAP_EPOCHS`` epochs and
``CAP_S`` seconds, every other option at its default:

* serial: ``solve(..., solver="crammer_singer_dual")`` (shrinking, averaging);
* ``n_partitions=2`` and ``4`` in process (CoCoA+, adding, sigma' = K);
* ``client=`` with two workers of one thread (``n_partitions=2``).

Reported: epochs (rounds for the partitions) and wall seconds at the first
check whose certified relative gap is at most 1e-3 and 1e-6 (blank: not
reached in the cap), the gap at the end, and for Dask its calls and their
mean milliseconds.  Writes ``benchmarks/results/dask-crammer-singer.md``
with ``uptime`` in the header (the machine is shared: loaded-machine times).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_svmlight_file

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import shared_file, write_result  # noqa: E402

SETS = ("dna.scale", "letter.scale", "usps.t.bz2")
STRENGTHS = (1.0, 100.0)          # lam = s / n
CAP_EPOCHS = 3000
CAP_S = 60.0


def _load(name):
    path = shared_file(name)
    if path is None:
        return None
    X, y = load_svmlight_file(str(path))
    return X.tocsr(), np.unique(y, return_inverse=True)[1]


def _first(trace, tol):
    for r in trace:
        if r["rel_gap"] <= tol:
            return r
    return None


def _cell(rec):
    return ("" if rec is None else f"{rec['epoch']:g} / {rec['time']:.2f}")


def _row(name, X, y, s, how, **kw):
    import primaldual
    t = time.perf_counter()
    res = primaldual.solve(X, y, loss="crammer_singer", lam=s / X.shape[0], tol=1e-6,
                           max_epochs=CAP_EPOCHS, time_limit=CAP_S, random_state=0, **kw)
    sec = time.perf_counter() - t
    last = res.trace[-1]
    calls = (f"{last['calls']} x {last['call_ms']:.1f} ms" if "call_ms" in last else "")
    return (f"| {name} | {s:g}/n | {how} | {_cell(_first(res.trace, 1e-3))} | "
            f"{_cell(_first(res.trace, 1e-6))} | {res.n_epochs:g} | {sec:.2f} | "
            f"{res.rel_gap:.1e} | {calls} |")


def main():
    from distributed import Client, LocalCluster
    import primaldual
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    lines = ["# Crammer-Singer serially, on partitions and on Dask "
             "(bench_dask_crammer_singer.py)", "",
             f"Written {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; `uptime` at "
             f"the start: `{up}` (2 cores, shared). `tol = 1e-6`, at most "
             f"{CAP_EPOCHS} epochs and {CAP_S:g} s a run, `random_state=0`, every other "
             f"option at its default; a 2-worker LocalCluster (processes, one thread "
             f"each). Cells `a / b`: epochs (a partitioned epoch is a round) / wall "
             f"seconds at the first check certifying that relative gap; blank: not "
             f"reached within the cap.", "",
             "| set | lam | run | to 1e-3 | to 1e-6 | epochs | seconds | rel. gap | "
             "Dask calls |", "|---|---|---|---|---|---:|---:|---:|---|"]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.wait_for_workers(2, timeout=120)
        for name in SETS:
            data = _load(name)
            if data is None:
                lines.append(f"| {name} | absent | | | | | | | |")
                continue
            X, y = data
            primaldual.solve(X[:300], y[:300], loss="crammer_singer", lam=1e-2,
                             n_partitions=2)                                 # compile
            for s in STRENGTHS:
                runs = [("serial", dict(solver="crammer_singer_dual")),
                        ("2 partitions", dict(n_partitions=2)),
                        ("4 partitions", dict(n_partitions=4)),
                        ("Dask, 2 workers", dict(client=client, n_partitions=2))]
                for how, kw in runs:
                    lines.append(_row(name, X, y, s, how, **kw))
                    print(lines[-1], flush=True)
    up = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    lines += ["", f"`uptime` at the end: `{up}`."]
    write_result(ROOT / "benchmarks" / "results" / "dask-crammer-singer.md", lines)


if __name__ == "__main__":
    main()
