"""A cluster model: the wall time to certify on K machines, from in-process runs
(issue 34, item 4).

1. **Rounds** (``rounds`` phase): in-process runs on K = 1, 2, 4, ..., 64
   contiguous row partitions of a row sample (``--rows``, default 10,000) of
   the text, CCAT and covtype shapes (covtype's columns scaled to [-1, 1]) at
   ``lam n`` in {1, 10, 100} (``lam = lam_n / rows``; logistic, certified
   relative gap 1e-6), for ``newton``, ``disco`` (``preconditioner="first"``),
   ``disco_avg`` (``"average"``), ``cocoa`` (``aggregation="line_search"``)
   and ``dso`` (``n_workers = K``); once a method fails to certify within its
   cap at some K, larger K are not run.  Recorded: rounds to certify, round trips, compute
   per round in passes over the data, certified or not within the cap.  The
   round counts depend on K, the shape and ``lam n``, not on the machine's
   load; the model assumes they do not depend on ``n`` at fixed ``lam n``
   (SDCA's epochs and CG's steps are functions of ``R^2 / (lam n)``).
2. **Costs**: the seconds per stored entry of one pass of each method in
   this process (fixed-pass runs, K = 1, on larger samples), and the Dask
   overhead of one round on a 2-worker LocalCluster: a call to every
   worker's actor sending and returning a ``d``-vector, timed at d = 1,000
   and 100,000 (fixed cost plus bytes over the loopback's rate).
3. **Model**: on K machines at ``L`` s latency and ``B`` bytes/s,

       T(K) = sum over rounds [ compute_round * nnz / K ]
              + serial driver work (DiSCO "first": its preconditioner and
                its evaluation at each new point, on partition 0's rows)
              + trips * (L + K * dask_fixed / 2)
              + rounds * bytes_round * (1 / B + 1 / loopback rate)

   with ``bytes_round = 16 d K`` through the client (a d-vector to and from
   each worker; a d x d matrix for Newton's explicit Hessian; DSO: ``8 d``
   per worker per epoch, ``K`` trips per epoch): the client sends and
   receives the K messages of a round in turn, so their fixed cost and
   copies grow with K (measured: a 2-worker call costs twice a 1-worker
   call).  One machine's time: the best of serial SDCA, serial Newton and
   CoCoA+ on one partition (no Dask).  Per-entry costs: the quiet-machine
   ones of solvers/_distributed_auto.py (the load here inflates the
   measured ones unevenly; those are reported too); Dask's fixed cost of a
   round trip to 2 workers and the loopback rate: the last round-cost run's
   (the calls straight to the workers, as the engines make them; loaded, so
   an upper bound), or ``--dask-fixed``.  Printed for the full
   shapes (text 300,000 x 100,000; CCAT 781,265 x 47,236; covtype 581,012
   x 54) at 10 Gb/s and 0.5 ms.
4. **Check** (``--validate``, or ``--validate-only`` alone: 1.9 minutes on
   an idle machine, 3.9 at a load of 8-10 on 2 cores): real 2-worker LocalCluster fits (disco and newton)
   of ``--validate-rows`` rows of the text shape at ``lam n`` = 1 and 10,
   and of the CCAT shape at ``lam n`` = 1, against the model of
   :mod:`_cluster_calls` (every call of the engine and the driver's work
   timed by micro-benchmarks on another sample, just before and after each
   fit).

Writes ``benchmarks/results/cluster-model.md``, ``cluster-model.jsonl`` (one
record per run, reused by later invocations: ``--fresh`` redoes them) and
``docs/figures/cluster-model.png``.

    python benchmarks/bench_cluster_model.py                   # everything
    python benchmarks/bench_cluster_model.py --shapes text --lamn 1 --validate
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from primaldual import solve  # noqa: E402
from primaldual.datasets import make_synthetic  # noqa: E402
from primaldual.datasets.regimes import load_shared_regime, make_shared_vocab_text  # noqa: E402

OUT = ROOT / "benchmarks" / "results"
FIG = ROOT / "docs" / "figures" / "cluster-model.png"
KS = (1, 2, 4, 8, 16, 32, 64)
LAMN = (1.0, 10.0, 100.0)
METHODS = ("newton", "disco", "disco_avg", "cocoa", "dso")
#: the full shapes the model predicts for: (n, d, nnz)
FULL = {"text": (300_000, 100_000, 17_200_000), "ccat": (781_265, 47_236, 59_000_000),
        "covtype": (581_012, 54, 6_901_775)}
#: CoCoA+ round trips per round (the round, the line search's scalar
#: reductions, the step; solvers/_distributed_auto.py)
COCOA_TRIPS = 9
CAP = {"sdca": 1000, "newton": 2000, "disco": 2000, "disco_avg": 2000, "cocoa": 300,
       "dso": 100}


def sample(shape, rows, seed=0):
    """A row sample of a shape, with the full shape's columns and row profile."""
    if shape == "text":
        n, d, _ = FULL["text"]
        return make_shared_vocab_text(n_samples=rows, n_features=d, random_state=seed)
    if shape == "ccat":
        X, y = make_synthetic("CCAT", n_samples=rows, random_state=seed)[:2]
        return X, y
    X, y = load_shared_regime("covtype")
    idx = np.sort(np.random.default_rng(seed).choice(X.shape[0], rows, replace=False))
    X = X[idx].tocsr() if hasattr(X, "tocsr") else X[idx]
    scale = abs(X).max(axis=0)
    scale = np.asarray(scale.todense()).ravel() if hasattr(scale, "todense") else scale
    X = X.multiply(1.0 / np.maximum(scale, 1e-300)).tocsr()   # columns to [-1, 1]
    return X, y[idx]


def run_one(X, y, method, K, lam):
    kw = dict(loss="logistic", lam=lam, tol=1e-6, random_state=0, max_epochs=CAP[method])
    if method == "dso":
        if K > min(X.shape):
            return None
        kw.update(solver="dso", n_workers=K)
    elif method == "sdca":
        kw.update(solver="sdca")
    elif method.startswith("disco"):
        kw.update(solver="disco", n_partitions=K,
                  preconditioner="average" if method == "disco_avg" else "first")
    else:
        kw.update(solver=method, n_partitions=K)
    t = time.perf_counter()
    r = solve(X, y, **kw)
    secs = time.perf_counter() - t
    tr = r.trace[-1]
    passes = float(r.n_epochs)
    if method in ("newton", "disco", "disco_avg"):
        rounds = int(tr.get("reductions", passes))
        trips = int(tr.get("calls", rounds))
    elif method == "cocoa":
        rounds, trips = int(round(passes)), COCOA_TRIPS * int(round(passes))
    elif method == "dso":
        rounds, trips = int(round(passes)), K * int(round(passes))
    else:
        rounds, trips = 0, 0
    return {"method": method, "K": K, "lam": lam, "seconds": secs, "passes": passes,
            "rounds": rounds, "trips": trips, "converged": bool(r.converged),
            "rel_gap": float(r.rel_gap), "explicit": bool(tr.get("cg_iter", 1) == 0
                                                         and method == "newton"),
            "precond_passes": float(tr.get("precond_passes", 0.0)),
            "newton_iter": int(tr.get("newton_iter", 0)), "cg_iter": int(tr.get("cg_iter", 0)),
            "preconditioner": kw.get("preconditioner")}


def rounds_phase(args, records, jsonl):
    done = {(r["shape"], r["lamn"], r["method"], r["K"]) for r in records
            if "lamn" in r and r["method"] not in args.redo}
    for shape in args.shapes:
        X, y = sample(shape, args.rows)
        nnz = int(X.nnz)
        solve(X[:200], y[:200], loss="logistic", lam=1e-2, solver="disco",
              n_partitions=2)                                   # compile
        for lamn in args.lamn:
            lam = lamn / X.shape[0]
            for method in ("sdca",) + tuple(args.methods):
                failed = False
                for K in ((1,) if method == "sdca" else args.Ks):
                    if (shape, lamn, method, K) in done:
                        continue
                    if failed:      # rounds grow with K: a larger K is not run
                        rec = {"method": method, "K": K, "lam": lam, "seconds": 0.0,
                               "passes": 0.0, "rounds": 0, "trips": 0, "converged": False,
                               "skipped": True}
                    else:
                        rec = run_one(X, y, method, K, lam)
                    if rec is None:
                        continue
                    failed = not rec["converged"]
                    rec.update(shape=shape, lamn=lamn, rows=X.shape[0], d=X.shape[1],
                               nnz=nnz, load=os.getloadavg()[0])
                    records.append(rec)
                    jsonl.write(json.dumps(rec) + "\n")
                    jsonl.flush()
                    print(rec, flush=True)


class _Echo:
    """A Dask actor that returns what it is sent (a round's transport)."""

    def echo(self, v):
        return v


def dask_round_costs(n_rounds=20):
    """``(fixed seconds, bytes per second, raw)`` of one round to 2 LocalCluster
    workers' actors (a d-vector to and from each), the calls sent straight to
    the workers as the engines send them (``direct_calls``); ``raw`` also has
    the round to one worker at d = 100,000."""
    from distributed import Client, LocalCluster
    from primaldual.distributed.partition_set import direct_calls
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    client = Client(cluster)
    try:
        client.wait_for_workers(2, timeout=60)
        workers = list(client.scheduler_info()["workers"])
        actors = [direct_calls(client.submit(_Echo, actor=True, workers=[w]).result(), client)
                  for w in workers]
        out = {}
        for d, group in ((1_000, actors), (100_000, actors), ("100000 one", actors[:1])):
            v = np.ones(d if isinstance(d, int) else 100_000)
            for a in group:
                a.echo(v).result()
            ts = []
            for _ in range(n_rounds):
                t = time.perf_counter()
                [f.result() for f in [a.echo(v) for a in group]]
                ts.append(time.perf_counter() - t)
            out[d] = statistics.median(ts)
    finally:
        client.close()
        cluster.close()
    fixed = out[1_000]
    per_byte = max(out[100_000] - out[1_000], 1e-9) / (16.0 * 99_000 * 2)
    return fixed, 1.0 / per_byte, out


CALIB_ROWS = {"text": 60_000, "ccat": 60_000, "covtype": 200_000}
CALIB_PASSES = {"sdca": 4, "newton": 8, "disco": 12, "disco_avg": 12, "cocoa": 4, "dso": 3}


def calibrate(args, records, jsonl):
    """Seconds per stored entry of one pass of each method, K = 1, on a larger
    sample of each shape (``CALIB_ROWS``: the vector work of size ``d`` a round
    weighs about as at full size), ``lam n = 10``, a fixed number of passes."""
    done = {(r["shape"], r["method"]) for r in records if "calib" in r}
    for shape in args.shapes:
        if all((shape, m) in done for m in ("sdca",) + tuple(args.methods)):
            continue
        X, y = sample(shape, CALIB_ROWS[shape], seed=2)
        for m in ("sdca",) + tuple(args.methods):
            if (shape, m) in done:
                continue
            kw = dict(loss="logistic", lam=10.0 / X.shape[0], tol=0.0, random_state=0,
                      max_epochs=CALIB_PASSES[m], check_every=CALIB_PASSES[m])
            kw.update({"sdca": dict(solver="sdca"), "dso": dict(solver="dso", n_workers=1),
                       "disco_avg": dict(solver="disco", n_partitions=1,
                                         preconditioner="average")}
                      .get(m, dict(solver=m, n_partitions=1)))
            solve(X[:300], y[:300], **kw)                       # compile
            t = time.perf_counter()
            r = solve(X, y, **kw)
            secs = time.perf_counter() - t
            rec = {"calib": True, "shape": shape, "method": m, "rows": X.shape[0],
                   "nnz": int(X.nnz), "seconds": secs, "passes": float(r.n_epochs),
                   "per_entry": secs / (float(r.n_epochs) * X.nnz), "load": os.getloadavg()[0]}
            records.append(rec)
            jsonl.write(json.dumps(rec) + "\n")
            jsonl.flush()
            print(rec, flush=True)


#: ns per stored entry of a pass on one quiet core (solvers/_distributed_auto.py:
#: SDCA_EPOCH_NS for an SDCA epoch, CoCoA+'s local pass; NEWTON_PASS_NS for a
#: Newton pass, which DiSCO's passes, its preconditioner's included, also are)
QUIET_NS = {"sdca": 7.5, "cocoa": 7.5, "newton": 2.5, "disco": 2.5, "disco_avg": 2.5}


def unit_costs(records, shape, anchored=True):
    """Seconds per stored entry of one pass of each method on a shape.
    ``anchored``: the quiet-machine costs :data:`QUIET_NS`, and DSO's epoch at
    its cost measured here relative to CoCoA+'s local pass (the two measured
    one after the other, at the same load); otherwise the calibration runs as
    measured (the load inflates them, unevenly between runs)."""
    out = {r["method"]: r["per_entry"] for r in records
           if r.get("calib") and r["shape"] == shape}
    if anchored:
        raw = out
        out = {m: QUIET_NS[m] * 1e-9 for m in raw if m in QUIET_NS}
        if "dso" in raw and "cocoa" in raw:
            out["dso"] = QUIET_NS["cocoa"] * 1e-9 * raw["dso"] / raw["cocoa"]
    for a, b in (("disco", "disco_avg"), ("disco_avg", "disco")):
        if a not in out and b in out:      # the same passes, per entry
            out[a] = out[b]
    return out


def predict(rec, full, unit, latency, bandwidth, dask_fixed, rate=None):
    """``(seconds, compute, communication)`` on ``rec['K']`` machines for the
    full shape (module docstring).  DiSCO with ``preconditioner="first"``: the
    driver's preconditioner (``precond_passes``, already over partition 0's
    share of the rows) and its evaluation at each new point run on the client
    alone, not divided by K.  A round trip costs ``latency`` plus, per worker
    message, half of ``dask_fixed`` (the client handles the K messages in turn)
    and, per d-vector a message carries, its bytes at the loopback ``rate``
    (the client's copies) and on the wire at ``bandwidth``."""
    n, d, nnz = full
    K, m = rec["K"], rec["method"]
    passes = rec["passes"]
    serial = 0.0
    if m == "disco" and K > 1:            # partition 0 on the driver (preconditioner="first")
        pre = rec.get("precond_passes", 0.0)
        points = rec.get("newton_iter", 0)
        passes -= pre
        serial = unit[m] * (pre + points / K) * nnz
    compute = unit[m] * passes * nnz / K + serial
    msg = 0.5 * dask_fixed
    if m == "dso":
        comm = rec["trips"] * (latency + msg) + rec["rounds"] * 8.0 * d / bandwidth
    else:
        vec = 8.0 * (d * d if rec.get("explicit") else d)
        per_byte = 1.0 / bandwidth + (1.0 / rate if rate else 0.0)
        comm = rec["trips"] * (latency + K * msg) + rec["rounds"] * 2.0 * vec * K * per_byte
    if K == 1:
        comm = 0.0
    return compute + comm, compute, comm


def serial_best(records, shape, lamn, full, unit):
    """One machine, no Dask: the fastest of serial SDCA, serial Newton and
    CoCoA+ on one partition (serial SDCA with a line search, labelled sdca)."""
    best = None
    for m in ("sdca", "newton", "cocoa"):     # CoCoA+ at K = 1: serial SDCA, line search
        rs = [r for r in records if r.get("shape") == shape and r.get("lamn") == lamn
              and r["method"] == m and r["K"] == 1 and r["converged"]]
        if rs and m in unit:
            t = unit[m] * rs[-1]["passes"] * full[2]
            if best is None or t < best[0]:
                best = (t, "sdca" if m == "cocoa" else m)
    return best


# ------------------------------------------------------------------ report
def _fmt(t):
    return "" if t is None else (f"{t:.3g}" if t < 100 else f"{t:.0f}")


def model_tables(records, costs, args):
    lines, grid = [], {}
    for shape in args.shapes:
        full = FULL[shape]
        unit = unit_costs(records, shape)
        lines += [f"### {shape} ({full[0]:,} x {full[1]:,}, {full[2] / 1e6:.1f} M nonzeros)", "",
                  "Predicted seconds to a certified 1e-6 on K machines (10 Gb/s, "
                  f"{1e3 * args.latency:g} ms latency, Dask's fixed cost "
                  f"{1e3 * costs['fixed']:.1f} ms a round trip); in brackets the rounds "
                  "to certify in process; `-`: not certified within the cap "
                  f"({', '.join(f'{m} {c}' for m, c in CAP.items())} passes).", "",
                  "| lam n | method | one machine | " + " | ".join(f"K={K}" for K in args.Ks)
                  + " |", "|---|---|---|" + "---|" * len(args.Ks)]
        for lamn in args.lamn:
            best = serial_best(records, shape, lamn, full, unit)
            for m in args.methods:
                cells = []
                for K in args.Ks:
                    rs = [r for r in records if r.get("shape") == shape and r.get("lamn") == lamn
                          and r["method"] == m and r["K"] == K]
                    if not rs or m not in unit:
                        cells.append("n/a")
                        continue
                    r = rs[-1]
                    if not r["converged"]:
                        cells.append("-" if r.get("skipped") else f"- ({r['rounds']})")
                        continue
                    t, _, _ = predict(r, full, unit, args.latency, args.bandwidth,
                                      costs["fixed"], costs.get("rate"))
                    grid.setdefault((shape, lamn, m), []).append((K, t))
                    cells.append(f"{_fmt(t)} ({r['rounds']})")
                one = f"{_fmt(best[0])} ({best[1]})" if best else "n/a"
                lines.append(f"| {lamn:g} | {m} | {one} | " + " | ".join(cells) + " |")
            if best:
                grid[(shape, lamn, "one machine")] = best[0]
        lines.append("")
    return lines, grid


def breakeven_table(records, costs, args):
    """From which size Dask beats one machine: per shape, ``lam n`` and K, the
    fewest rows (at the shape's ``d`` and nonzeros a row) at which the best
    method on K machines is predicted faster than the best serial method:
    ``compute_K * nnz / K + comm_K < compute_1 * nnz``."""
    lines = ["### From which size Dask wins", "",
             "Fewest rows (the shape's columns and nonzeros a row) from which K machines "
             "beat one, and the method that gets there first; `never`: no method's "
             "compute saving covers its communication at any size.", "",
             "| shape | lam n | " + " | ".join(f"K={K}" for K in args.Ks if K > 1) + " |",
             "|---|---|" + "---|" * sum(1 for K in args.Ks if K > 1)]
    for shape in args.shapes:
        n_full, d, nnz_full = FULL[shape]
        per_row = nnz_full / n_full
        unit = unit_costs(records, shape)
        for lamn in args.lamn:
            best = serial_best(records, shape, lamn, (1, d, 1.0), unit)
            if not best:
                continue
            one = best[0]                       # seconds per stored entry, one machine
            cells = []
            for K in args.Ks:
                if K == 1:
                    continue
                found = None
                for m in args.methods:
                    rs = [r for r in records if r.get("shape") == shape
                          and r.get("lamn") == lamn and r["method"] == m and r["K"] == K
                          and r["converged"]]
                    if not rs or m not in unit:
                        continue
                    _, comp, comm = predict(rs[-1], (1, d, 1.0), unit, args.latency,
                                            args.bandwidth, costs["fixed"], costs.get("rate"))
                    gain = one - comp               # per stored entry
                    if gain > 0:
                        rows = comm / gain / per_row
                        if found is None or rows < found[0]:
                            found = (rows, m)
                cells.append("never" if found is None else
                             f"{found[0]:,.0f} ({found[1]})")
            lines.append(f"| {shape} | {lamn:g} | " + " | ".join(cells) + " |")
    return lines + [""]


def plot(grid, args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(args.shapes), len(args.lamn),
                             figsize=(4 * len(args.lamn), 3.2 * len(args.shapes)),
                             squeeze=False)
    for i, shape in enumerate(args.shapes):
        for j, lamn in enumerate(args.lamn):
            ax = axes[i][j]
            for c, m in enumerate(args.methods):
                pts = grid.get((shape, lamn, m))
                if pts:
                    ax.plot([k for k, _ in pts], [t for _, t in pts], marker="o", label=m,
                            color=f"C{c}")
            one = grid.get((shape, lamn, "one machine"))
            if one:
                ax.axhline(one, color="k", ls="--", label="one machine")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{shape}, lam n = {lamn:g}", fontsize=9)
            ax.set_xlabel("K machines", fontsize=8)
            ax.set_ylabel("predicted s", fontsize=8)
    handles = {}
    for ax in fig.axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.legend(handles.values(), handles.keys(), loc="upper center", ncol=len(handles),
               fontsize=8)
    FIG.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(FIG, dpi=90)


VALIDATE_COMMAND = "python benchmarks/bench_cluster_model.py --validate-only"
#: the checks: (shape, lam n, methods, Client(direct_to_workers=...), role); the
#: held-out ones were not looked at while the model's terms were chosen; the
#: last sends the actors' calls through the scheduler (Dask's route for a
#: client made with direct_to_workers=False; the engine's before issue 34)
VALIDATE = (("text", 1.0, ("disco", "newton"), None, "model"),
            ("text", 10.0, ("disco", "newton"), None, "held out"),
            ("ccat", 1.0, ("disco", "newton"), None, "held out"),
            ("text", 1.0, ("disco", "newton"), False, "held out"))


def validate(args):
    """Real 2-worker LocalCluster fits against the model of
    :mod:`_cluster_calls`, every cost measured just before on another sample."""
    from distributed import Client, LocalCluster
    from _cluster_calls import validate_one
    out = []
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    try:
        samples = {}
        for shape, lamn, methods, direct, role in VALIDATE:
            if shape not in args.validate_shapes:
                continue
            if shape not in samples:
                rows = args.validate_rows if shape == "text" else args.validate_rows_ccat
                samples[shape] = (sample(shape, rows, seed=1), sample(shape, rows, seed=3))
            (Xv, yv), (Xc, yc) = samples[shape]
            with Client(cluster, direct_to_workers=direct) as client:
                client.wait_for_workers(2, timeout=60)
                route = ", through the scheduler" if direct is False else ""
                tag = f"{shape}, lam n = {lamn:g}{route} ({role})"
                out += validate_one(client, Xv, yv, Xc, yc, lamn, methods, CAP, tag)
    finally:
        cluster.close()
    return out


def render(records, costs, checks, args):
    loads = [r["load"] for r in records if "load" in r]
    lines = ["# Cluster model: predicted wall time to certify on K machines", "",
             "`benchmarks/bench_cluster_model.py` (issue 34, item 4).  Logistic, certified "
             f"relative gap 1e-6.  Rounds from in-process runs on {args.rows:,}-row samples "
             "of each shape (K contiguous partitions, `lam = lam_n / rows`); compute per "
             "entry from fixed-pass runs on larger samples in the same process; Dask's "
             "cost of a round measured on a 2-worker LocalCluster; the network stated "
             "below.", "",
             f"**Machine load**: 2 cores shared by 8 helpers; 1-minute load average "
             f"{min(loads, default=0):.0f} to {max(loads, default=0):.0f} during the "
             "in-process runs (the `load` field of `cluster-model.jsonl`).  The round "
             "counts do not depend on the load; the per-entry costs and Dask's round cost "
             "do, by a large and uneven factor here.  So the tables use quiet-machine "
             "per-entry costs (`solvers/_distributed_auto.py`: 7.5 ns an entry of an SDCA "
             "epoch or a CoCoA+ local pass, 2.5 ns of a Newton or DiSCO pass; DSO's epoch "
             "at its cost measured here relative to CoCoA+'s pass), and "
             f"Dask's fixed cost of a round trip to 2 workers at {1e3 * costs['fixed']:.1f} "
             f"ms and its loopback rate as measured below (load {costs.get('load', 0):.0f}: "
             "an upper bound on an idle machine's); the check against a real LocalCluster "
             "below measures its own costs.", "",
             "Per-entry costs measured here (ns, loaded): " + "; ".join(
                 f"{sh}: " + ", ".join(f"{m} {1e9 * v:.0f}" for m, v in
                                       unit_costs(records, sh, anchored=False).items())
                 for sh in args.shapes) + ".", "",
             "Dask round on a 2-worker LocalCluster here (a d-vector to and from each "
             f"worker's actor): {1e3 * costs.get('measured_fixed', costs['fixed']):.1f} ms "
             f"at d = 1,000, {1e3 * costs['t100k']:.1f} ms at d = 100,000 (loopback rate "
             f"{costs['rate'] / 1e6:.0f} MB/s"
             + (f"; to one worker {1e3 * costs['t100k_one']:.1f} ms at d = 100,000: the "
                "client handles the messages in turn" if "t100k_one" in costs else "")
             + ").", "",
             "Model: `T(K) = sum over rounds [compute_round * nnz / K] + DiSCO's driver work "
             "(its preconditioner and its evaluation at each new point, on partition 0's rows, "
             "on the client alone: not divided by K) + trips * (latency + K * dask_fixed / 2) "
             "+ rounds * bytes_round * (1 / bandwidth + 1 / loopback rate)`, bytes through "
             "the client (16 d K a round; 16 d^2 K for Newton's explicit Hessian; DSO 8 d per "
             "epoch and K trips an epoch): the client handles a round's K messages in turn, "
             "so their fixed cost and copies grow with K; `one machine` is the fastest of serial SDCA, serial Newton and CoCoA+ "
             "with one partition (serial SDCA with its line search), without Dask.", ""]
    tab, grid = model_tables(records, costs, args)
    lines += breakeven_table(records, costs, args)
    lines += tab
    if checks:
        from _cluster_calls import render_checks
        lines += render_checks(checks, VALIDATE_COMMAND, getattr(args, "earlier_checks", []))
    OUT.joinpath(args.out).write_text("\n".join(lines) + "\n")
    plot(grid, args)


def parse(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--shapes", default="text,ccat,covtype")
    ap.add_argument("--lamn", default="1,10,100")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--Ks", default=",".join(map(str, KS)))
    ap.add_argument("--latency", type=float, default=5e-4)
    ap.add_argument("--bandwidth", type=float, default=1.25e9, help="bytes per second")
    ap.add_argument("--validate", action="store_true")
    ap.add_argument("--validate-only", action="store_true",
                    help="only the check against a real LocalCluster (the rest from "
                         "cluster-model.jsonl)")
    ap.add_argument("--validate-rows", type=int, default=120_000)
    ap.add_argument("--validate-rows-ccat", type=int, default=100_000)
    ap.add_argument("--validate-shapes", default="text,ccat")
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--redo", default="", help="methods whose round records are run again "
                    "(the new records replace the old)")
    ap.add_argument("--dask-fixed", type=float, default=0.0,
                    help="seconds of Dask's fixed cost of a round trip to 2 workers in the "
                         "tables; 0 (default): the one measured by the last round-cost run "
                         "(cluster-model.jsonl)")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--round-costs", action="store_true",
                    help="measure Dask's round costs again (with --report-only)")
    ap.add_argument("--out", default="cluster-model.md")
    a = ap.parse_args(argv)
    a.shapes = a.shapes.split(",")
    a.lamn = [float(v) for v in a.lamn.split(",")]
    a.methods = a.methods.split(",")
    a.Ks = [int(v) for v in a.Ks.split(",")]
    a.validate_shapes = a.validate_shapes.split(",")
    a.redo = [m for m in a.redo.split(",") if m]
    return a


def main(argv=None):
    args = parse(argv)
    path = OUT / "cluster-model.jsonl"
    records = [] if args.fresh or not path.exists() else \
        [json.loads(line) for line in path.open()]
    for r in records:       # the first batch ran "disco" with the averaged preconditioner
        if r.get("method") == "disco" and "lamn" in r and "preconditioner" not in r:
            r["method"] = "disco_avg"
    if not args.report_only and not args.validate_only:
        with path.open("w" if args.fresh else "a") as fh:
            rounds_phase(args, records, fh)
            calibrate(args, records, fh)
    costs = next((dict(r["costs"], load=r.get("load", 0.0)) for r in reversed(records)
                  if "costs" in r), None)
    if costs is None or args.round_costs or (args.validate and not args.report_only
                                             and not args.validate_only):
        fixed, rate, raw = dask_round_costs()
        costs = {"fixed": fixed, "rate": rate, "t100k": raw[100_000],
                 "t100k_one": raw["100000 one"], "direct": True}
        load = os.getloadavg()[0]
        with path.open("a") as fh:
            fh.write(json.dumps({"costs": costs, "load": load}) + "\n")
        records.append({"costs": costs, "load": load})
        costs = dict(costs, load=load)
    checks = next((r["checks"] for r in reversed(records) if "checks" in r), [])
    if (args.validate or args.validate_only) and not args.report_only:
        checks = validate(args)
        with path.open("a") as fh:
            fh.write(json.dumps({"checks": checks}) + "\n")
    if args.dask_fixed:
        costs = dict(costs, measured_fixed=costs["fixed"], fixed=args.dask_fixed)
    # the earlier runs of this model's check (their records carry "config")
    args.earlier_checks = [r["checks"] for r in records if "checks" in r
                           and r["checks"] and "config" in r["checks"][0]][:-1]
    render([r for r in records if "shape" in r], costs, checks, args)


if __name__ == "__main__":
    main()
