"""The measured inputs of the scaling model in docs/distributed.md (issue 14).

On this machine (2 cores) it measures, on the CCAT shape and on covtype:

- ``t_nnz(1)``: one thread's SDCA epoch, ns per stored entry;
- ``t_nnz(2)``: the same per thread while two threads run their slices of one
  pass at once, each on its own copy of ``v`` synced every ``sync_every``
  updates (the solver's default; the syncs are inside the time), and, for
  comparison, with every step writing the one shared ``v`` (PASSCoDe), plain
  and atomic;
- ``t_atomic``: one thread's epoch with atomic additions (the price of a
  locked instruction per entry);
- ``t_sync``: one sync of a thread's copy, ns per column;
- ``t_cert(k)``: the certificate pass on ``k`` threads;
- ``t_wake``: waking the thread pool for one pass and waiting for it (empty
  tasks), in microseconds;
- Dask: one CoCoA+ round on a 2-worker LocalCluster (time per round, its
  compute part, so the rest is scheduling and transfer).

Writes ``benchmarks/results/scaling.json`` and ``scaling.md``; the projection
in docs/distributed.md reads these numbers.
"""
from __future__ import annotations

import json
import math
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import primaldual  # noqa: E402
from primaldual._util.threads import run_threads  # noqa: E402
from primaldual.bench.config import DatasetSpec  # noqa: E402
from primaldual.bench.splits import load_data  # noqa: E402
from primaldual.bench.report import cpu_model  # noqa: E402
from primaldual.kernels.sdca import prox_work_arrays  # noqa: E402
from primaldual.kernels.sdca import (Averaging, SDCAState, Shrinking,  # noqa: E402
                                     sdca_epoch, start_copy, sync_copy)
from primaldual.blocks import sdca_threads  # noqa: E402

REPS = 5


#: the ways k threads run one pass: (label, threads, mode, atomic); mode "copy"
#: is the solver's default (a v per thread, synced every sync_every updates),
#: "shared" every step writing the one v (PASSCoDe)
MODES = (("1 thread", 1, "serial", False),
         ("2 threads, copies", 2, "copy", None),
         ("2 threads, shared v", 2, "shared", False),
         ("1 thread atomic", 1, "shared", True),
         ("2 threads, shared v atomic", 2, "shared", True))


def epoch_costs(prob):
    """ns per stored entry per thread for one pass run each way of MODES (the
    syncs of the copies included)."""
    rows, spec = prob.rows_view(), prob.step_spec()
    n, nnz = prob.n, prob.nnz
    no_shrink = Shrinking(False, np.inf, np.inf)
    no_avg = Averaging(False, np.zeros(0), np.zeros(0, np.int64), 0)
    every = sdca_threads.auto_sync_every(prob.rows)
    max_row = int(prob.rows.row_nnz.max(initial=1))
    # thread copies need no atomic additions; the shared-v rows below set
    # atomic explicitly
    atomic_auto = False
    rng = np.random.default_rng(0)
    out = {}
    for label, K, mode, atomic in MODES:
        atomic = atomic_auto if atomic is None else atomic
        times = []
        for _ in range(REPS):
            alpha, v = np.zeros(n), np.zeros(prob.d)
            logit = np.full(n if prob.loss.name == "logistic" else 0, np.nan)
            st = SDCAState(alpha, v, logit, np.zeros(n, np.uint8))
            order = rng.permutation(n).astype(np.int64)
            cuts = np.linspace(0, n, K + 1).round().astype(np.int64)
            prox = [prox_work_arrays(prob.rows, 0.0) for _ in range(K)]
            warm = np.zeros(prob.d)
            sdca_epoch(rows, spec, st._replace(v=warm), order, 0, min(n, 100), 0, -1,
                       no_shrink, no_avg, prox[0], atomic)        # compile / warm caches
            one = sdca_threads.ThreadWork(prob.d, 1, every, False, max_row)
            sdca_epoch(rows, spec, st._replace(v=one.local[0]), order, 0, min(n, 100), 0, -1,
                       no_shrink, no_avg, prox[0], atomic, one.copy(0, warm))
            work = sdca_threads.ThreadWork(prob.d, K, every, False, max_row)
            alpha[:] = 0.0
            logit[:] = np.nan

            def task(k, stop):
                if mode != "copy":
                    return sdca_epoch(rows, spec, st, order, cuts[k], cuts[k + 1], 0, -1,
                                      no_shrink, no_avg, prox[k], atomic and mode == "shared")
                copy = work.copy(k, v)
                local = st._replace(v=work.local[k])
                start_copy(local.v, copy)
                res = sdca_epoch(rows, spec, local, order, cuts[k], cuts[k + 1], 0, -1,
                                 no_shrink, no_avg, prox[k], False, copy)
                sync_copy(local.v, copy)
                return res
            t = time.perf_counter()
            run_threads(task, K)
            work.fold(v)
            times.append(time.perf_counter() - t)
        # each thread handled nnz / K entries in the wall time
        out[label] = 1e9 * float(np.median(times)) * K / nnz
    out["sync_every"] = every
    out["atomic_auto"] = bool(atomic_auto)
    return out


def sync_cost(prob):
    """ns per column of one :func:`sync_copy` that publishes every column (one
    thread: the sweep refresh)."""
    d = prob.d
    work = sdca_threads.ThreadWork(d, 1, 1, False, d)
    shared = np.random.default_rng(2).standard_normal(d)
    copy = work.copy(0, shared)
    mine = work.local[0]
    start_copy(mine, copy)
    times = []
    for _ in range(50):
        mine += 1e-3
        copy.touched[:d] = np.arange(d)
        copy.mark[:] = 1
        copy.counts[0] = d
        t = time.perf_counter()
        sync_copy(mine, copy)
        times.append(time.perf_counter() - t)
    return {"sync": 1e9 * float(np.median(times)) / d}


def cert_costs(prob):
    rng = np.random.default_rng(1)
    alpha = rng.uniform(0, 1, prob.n) * prob.y if prob.loss.name != "squared" else \
        rng.standard_normal(prob.n)
    w = rng.standard_normal(prob.d) * 1e-3
    out = {}
    for k in (1, 2):
        prob.certificate(w, alpha, n_threads=k)
        times = []
        for _ in range(REPS):
            t = time.perf_counter()
            prob.certificate(w, alpha, n_threads=k)
            times.append(time.perf_counter() - t)
        out[f"{k} thread{'s' if k > 1 else ''}"] = 1e9 * float(np.median(times)) / prob.nnz
    return out


def wake_cost():
    def task(k, stop):
        return k
    run_threads(task, 2)
    times = []
    for _ in range(2000):
        t = time.perf_counter()
        run_threads(task, 2)
        times.append(time.perf_counter() - t)
    return 1e6 * float(np.median(times))


def dask_round(X, y):
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        t = time.perf_counter()
        res = primaldual.solve(X, y, loss="logistic", lam=1e-5, solver="cocoa",
                               n_partitions=2, client=client, tol=0.0, max_epochs=4,
                               check_every=4)
        total = time.perf_counter() - t
        last = res.trace[-1]
        return {"round_ms": last.get("round_ms"), "round_compute_ms":
                last.get("round_compute_ms"), "whole_call_s": total,
                "rounds": last.get("rounds"), "d": X.shape[1]}


# ------------------------------------------------------------- the model
#: assumptions of the projection (docs/distributed.md states them)
BANDWIDTH = 200e9          # bytes/s a 64-core socket streams from memory
BYTES_PER_ENTRY = 12.0     # one stored entry: 8 bytes of value, 4 of column index
NET = 1.25e9               # bytes/s into the Dask client (10 Gbit/s)
LATENCY = 0.02             # s per Dask round beyond compute (measured: LocalCluster)
SHAPES = {"CCAT shape": {"n": 781_265, "d": 47_236, "nnz": 59_046_639},
          "criteo-like": {"n": 45_000_000, "d": 1_000_000, "nnz": 45_000_000 * 40}}


def sync_every_for(sh):
    """sync_every="auto" for a projected shape: the solver's cost rule only (a shape has
    no rows to measure the mean row cosine on; text-like rows, as the CCAT shape,
    are far below the staleness bound)."""
    return min(sdca_threads.SYNC_MAX, max(sdca_threads.SYNC_MIN, int(np.ceil(
        sdca_threads.SYNC_COST_RATIO * sh["d"] * sh["n"] / sh["nnz"]))))


def project(meas, epochs_serial, epochs_2, checks, epochs_cocoa2):
    """Time to a certified 1e-6 for k threads and W Dask workers (see the
    module docstring and docs/distributed.md)."""
    e1 = meas["epoch_ns_per_nnz"]["1 thread"] * 1e-9
    ec = meas["epoch_ns_per_nnz"]["2 threads, copies"] * 1e-9
    contention = ec / e1                        # per-thread slow-down at 2 threads
    t_sync = meas["sync_ns_per_column"]["sync"] * 1e-9
    cert = meas["cert_ns_per_nnz"]["1 thread"] * 1e-9
    wake = meas["wake_us"] * 1e-6
    growth = epochs_2 / epochs_serial           # epochs, 2 threads over 1
    rows = []
    for shape, sh in SHAPES.items():
        n, nnz, d = sh["n"], sh["nnz"], sh["d"]
        S = sync_every_for(sh)
        for how in ("threads", "threads, epochs as 1 thread"):
            for k in (1, 2, 4, 8, 16, 32, 64):
                if k == 1:
                    compute, syncs, traffic = nnz * e1, 0.0, nnz * BYTES_PER_ENTRY
                else:
                    n_syncs = n / S                 # all threads together, per epoch
                    compute = nnz * e1 * contention / k
                    syncs = n_syncs * d * t_sync / k
                    traffic = nnz * BYTES_PER_ENTRY + n_syncs * d * 24.0
                epoch = max(compute + syncs, traffic / BANDWIDTH) + wake * k / 2
                check = max(nnz * cert / k, nnz * BYTES_PER_ENTRY / BANDWIDTH)
                E = epochs_serial * (growth ** math.log2(k) if how == "threads" else 1.0)
                rows.append({"shape": shape, "how": how, "k": k, "seconds":
                             E * epoch + checks * check, "epochs": E,
                             "sync_share": syncs / max(compute + syncs, 1e-30)})
        for W in (2, 4, 8, 16, 32, 64):
            epochs = epochs_cocoa2 * W / 2.0     # sigma' = W damps every local step
            per_round = nnz * e1 / W + LATENCY + 16.0 * d * W / NET
            t = epochs * per_round + checks * (nnz * cert / W + LATENCY + 8.0 * d * W / NET)
            rows.append({"shape": shape, "how": "dask cocoa", "k": W, "seconds": t,
                         "epochs": epochs})
    return rows


def res_dir_path():
    return ROOT / "benchmarks" / "results"


def main():
    out = {"machine": cpu_model(), "cores": os.cpu_count(),
           "python": platform.python_version()}
    for name, spec, loss in (("CCAT shape", DatasetSpec(name="CCAT", source="synthetic"),
                              "logistic"),
                             ("covtype", DatasetSpec(name="covtype", subsample="random"),
                              "hinge")):
        d = load_data(spec)
        prob = primaldual.Problem(d.X, d.y, loss=loss, lam=1e-5)
        rec = {"n": prob.n, "d": prob.d, "nnz": prob.nnz, "loss": loss,
               "epoch_ns_per_nnz": epoch_costs(prob), "cert_ns_per_nnz": cert_costs(prob),
               "sync_ns_per_column": sync_cost(prob)}
        if name == "CCAT shape":
            rec["dask_cocoa"] = dask_round(d.X, d.y)
        out[name] = rec
        print(name, json.dumps(rec, indent=1), flush=True)
    out["wake_us"] = wake_cost()
    print("wake", out["wake_us"], "us")
    # epochs and checks to a certified 1e-6 on the CCAT shape (logistic, lam 1e-5),
    # measured by benchmarks/bench_parallel.py when its results exist
    ep1, ep2, ep_c, checks = 5.6, 5.6, 30.0, 4
    pj = res_dir_path() / "parallel.jsonl"
    if pj.exists():
        for line in pj.read_text().splitlines():
            r = json.loads(line)
            if r["set"] == "CCAT shape" and r["loss"] == "logistic" and r["lam"] == 1e-5:
                ep1, checks = r["sdca_1"]["epochs"], r["sdca_1"]["checks"]
                ep2 = r["sdca_2"]["epochs"]
                co = r.get("cocoa on Dask, 2 workers")
                if co and co.get("converged"):
                    ep_c = co["epochs"]
    out["model_inputs"] = {"epochs_serial": ep1, "epochs_2_threads": ep2, "checks": checks,
                           "epochs_cocoa_2_workers": ep_c, "bandwidth": BANDWIDTH,
                           "bytes_per_entry": BYTES_PER_ENTRY, "net": NET,
                           "latency": LATENCY}
    out["projection"] = project(out["CCAT shape"] | {"wake_us": out["wake_us"]}, ep1,
                                ep2, checks, ep_c)
    res_dir = res_dir_path()
    (res_dir / "scaling.json").write_text(json.dumps(out, indent=1) + "\n")
    lines = ["# Inputs of the scaling model (benchmarks/bench_scaling.py)", "",
             f"Machine: {out['machine']}, {out['cores']} logical cores.  Per-thread costs "
             "in ns per stored entry (median of 5); the model is in docs/distributed.md.", "",
             "| set | 1 thread | per thread of 2, copies (default) | per thread of 2, "
             "shared v | 1 thread, atomic | per thread of 2, shared v, atomic | "
             "sync, ns per column (every column) | sync_every | certificate, 1 thread | "
             "certificate, 2 threads (wall per entry) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name in ("CCAT shape", "covtype"):
        e, c = out[name]["epoch_ns_per_nnz"], out[name]["cert_ns_per_nnz"]
        sc = out[name]["sync_ns_per_column"]
        lines.append(f"| {name} | {e['1 thread']:.2f} | {e['2 threads, copies']:.2f} | "
                     f"{e['2 threads, shared v']:.2f} | {e['1 thread atomic']:.2f} | "
                     f"{e['2 threads, shared v atomic']:.2f} | {sc['sync']:.2f} | "
                     f"{e['sync_every']} | "
                     f"{c['1 thread']:.2f} | {c['2 threads']:.2f} |")
    lines += ["", "A sync is timed as a call from Python, which costs about 1 us: on "
              "covtype (54 columns) that call, not the sync, is what the column measures."]
    dk = out["CCAT shape"]["dask_cocoa"]
    lines += ["", f"Waking the 2-thread pool for one pass and waiting for it: "
              f"{out['wake_us']:.1f} us.", "",
              f"CoCoA+ on a 2-worker Dask LocalCluster, CCAT shape (d = {dk['d']}): "
              f"{dk['round_ms']:.1f} ms per round, of which {dk['round_compute_ms']:.1f} ms "
              f"compute on the slower worker."]
    mi = out["model_inputs"]
    lines += ["", "## Projection (the model of docs/distributed.md)", "",
              f"Inputs: {mi['epochs_serial']:g} epochs (one thread; "
              f"{mi['epochs_2_threads']:g} on two) and {mi['checks']} checks to a "
              f"certified 1e-6 (CCAT shape, logistic, lam 1e-5), CoCoA+ "
              f"{mi['epochs_cocoa_2_workers']:g} epochs on 2 workers; memory "
              f"{mi['bandwidth'] / 1e9:g} GB/s, {mi['bytes_per_entry']:g} bytes per entry, "
              f"network {mi['net'] / 1e9:g} GB/s into the client, "
              f"{1e3 * mi['latency']:g} ms per round.", "",
              "| shape | how | 1 | 2 | 4 | 8 | 16 | 32 | 64 |", "|---|---|---|---|---|---|---|---|---|"]
    for shape in SHAPES:
        for how in ("threads", "threads, epochs as 1 thread", "dask cocoa"):
            cells = {r["k"]: r["seconds"] for r in out["projection"]
                     if r["shape"] == shape and r["how"] == how}
            lines.append(f"| {shape} | {how} | " + " | ".join(
                f"{cells[k]:.3g} s" if k in cells else "—"
                for k in (1, 2, 4, 8, 16, 32, 64)) + " |")
    (res_dir / "scaling.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
