"""n_jobs that never loses (issue 21): one thread against two, side by side.

For each cell (data set, loss) at lam 1e-5, in one process, after a warm-up
compile:

- ``primaldual.solve(X, y, loss, lam, solver=SOLVER, n_jobs=k, tol=1e-6)``
  (``--solver``: sdca, or auto, the default path) with ``k = 1`` and ``k =
  2``, and with ``--forced`` SDCA with ``threads="on"``, the whole public call (checks included,
  certified relative gap 1e-6), in interleaved repetitions (1, 2, 1, 2, ...);
  the median of each and their ratio; the threads used and the cost model's
  reason (``res.extras["threads"]``, ``res.extras["threads_reason"]``);
- Snap ML with ``n_jobs=2``: its whole ``fit`` at the loosest tolerance whose
  coefficients reach relative primal sub-optimality 1e-6 under our objective
  (as benchmarks/bench_parallel.py), when a reference run of ours certifies
  ``P*`` to 1e-9, and with ``n_jobs=1`` at the same tolerance (Snap ML's
  own two-thread scaling beside ours).

The data sets: text whose rows share a vocabulary (:func:`shared_vocabulary`:
Zipf-distributed words, raw term counts, ~57 stored entries per row, mean row
cosine ~0.5), at 300,000 x 100,000 and at 30,000 x 100,000; the CCAT shape
(:func:`primaldual.datasets.make_synthetic`); covtype from ../shared/data;
the regimes ``shared_vocab_text`` and ``orthogonal_text``
(:mod:`primaldual.datasets.regimes`).  ``--quick``: issue 34's check (the
two regimes, ``solver="auto"``, forced threads, Snap ML; about 4 minutes on
a quiet 2-core machine).  The header records the load average at the start
and the end.

Writes ``benchmarks/results/threads.md`` and ``threads.jsonl``.  Run
``python benchmarks/bench_threads.py --help``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import primaldual  # noqa: E402
from primaldual.bench.config import DatasetSpec  # noqa: E402
from primaldual.bench.report import cpu_model  # noqa: E402
from primaldual.bench.speed import certify_reference, summarize_times, timed  # noqa: E402
from primaldual.bench.splits import load_data  # noqa: E402
from primaldual.rows import as_rows  # noqa: E402
from primaldual.datasets.regimes import make_regime  # noqa: E402
from primaldual.blocks import sdca_threads  # noqa: E402
from primaldual.solvers import solver_path  # noqa: E402

from bench_parallel import snap, snapml_estimator, warm_up  # noqa: E402

TOL = 1e-6
LAM = 1e-5
REF_LIMIT = 60.0


def shared_vocabulary(n, d, tokens=70, exponent=1.03, seed=0):
    """Text whose rows share a vocabulary: each row draws Poisson(``tokens``)
    words from a Zipf law ``p_j ~ 1 / j^exponent`` over ``d`` words (columns
    in random order), the values are raw term counts; labels from a planted
    model on the unit-norm rows.  The defaults give ~57
    stored entries per row and a mean row cosine of ~0.5."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, d + 1) ** exponent
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    lens = rng.poisson(tokens, n).clip(1)
    rows = np.repeat(np.arange(n), lens)
    cols = np.minimum(np.searchsorted(cdf, rng.random(rows.shape[0])), d - 1)
    X = sp.csr_matrix((np.ones(rows.shape[0]), (rows, rng.permutation(d)[cols])),
                      shape=(n, d))
    X.sum_duplicates()
    X.sort_indices()
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    m = (X @ rng.standard_normal(d)) / np.maximum(norms, 1e-12)
    y = np.where(m > np.median(m), 1.0, -1.0)
    return X, y


def datasets(names, scale=1.0):
    out = {}
    for name in names:
        if name == "shared-vocab 300k":
            out[name] = lambda: shared_vocabulary(300_000, 100_000)
        elif name == "shared-vocab 30k":
            out[name] = lambda: shared_vocabulary(30_000, 100_000, seed=1)
        elif name in ("shared_vocab_text", "orthogonal_text"):
            out[name] = (lambda nm: lambda: make_regime(nm, scale=scale, random_state=0))(name)
        elif name == "CCAT shape":
            out[name] = lambda: _load(DatasetSpec(name="CCAT", source="synthetic"))
        elif name == "covtype":
            out[name] = lambda: _load(DatasetSpec(name="covtype"))
        else:
            raise SystemExit(f"unknown set {name!r}")
    return out


def _load(spec):
    d = load_data(spec)
    return d.X, d.y


def ours_interleaved(X, y, loss, reps, forced, solver="sdca"):
    """Interleaved runs of n_jobs=1 and n_jobs=2; with ``forced`` also n_jobs=2
    with the threads forced on (``MIN_SPEEDUP = 0`` and no trial pass: what the
    cost model's threaded alternative would have taken), as key "2f"."""
    keys = (1, 2, "2f") if forced else (1, 2)
    runs = {k: [] for k in keys}
    last = {}
    for _ in range(reps):
        for k in keys:
            # "2f": SDCA with threads="on", the plan's threads with no veto or trial
            kw = (dict(solver="sdca", n_jobs=2, threads="on") if k == "2f"
                  else dict(solver=solver, n_jobs=k))
            res, secs = timed(primaldual.solve, X, y, loss=loss, lam=LAM, tol=TOL, **kw)
            runs[k].append(secs)
            last[k] = res
    out = {}
    for k in keys:
        r = last[k]
        out[k] = {**summarize_times(runs[k]), "epochs": float(r.n_epochs),
                  "threads": max(p["threads"] for p in solver_path(r)),
                  "reason": (r.extras.get("threads_reason") if solver == "sdca" else
                             " -> ".join(f"{p['method']} x{p['threads']} "
                                         f"{p['seconds']:.2f}s ({p['reason']})"
                                         for p in solver_path(r))
                             + (f"; {r.extras['threads_reason']}"
                                if r.extras.get("threads_reason") else "")),
                  "converged": bool(r.converged), "primal": r.primal, "dual": r.dual,
                  "rel_gap": r.rel_gap}
    return out


def snap_one_thread(X, y, loss, tol, reps):
    """Snap ML's whole ``fit`` with ``n_jobs=1`` at the tolerance its two-thread
    fit needed (its own scaling from a second thread, beside ours)."""
    times = []
    for _ in range(reps):
        est = snapml_estimator(loss, LAM, X.shape[0], tol=tol, max_iter=10_000, n_jobs=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            est.fit(X, y)
            times.append(time.perf_counter() - t)
    return summarize_times(times)


def fmt(x, nd=3):
    return "—" if x is None else f"{x:.{nd}g}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--sets", default="shared-vocab 300k,shared-vocab 30k,CCAT shape,covtype")
    ap.add_argument("--losses", default="hinge,logistic")
    ap.add_argument("--no-snap", action="store_true")
    ap.add_argument("--solver", default="sdca",
                    help="sdca (its own thread plan) or auto (the supervisor measures "
                         "one thread against two on the data)")
    ap.add_argument("--forced", action="store_true",
                    help="also n_jobs=2 with the threads forced on (MIN_SPEEDUP = 0)")
    ap.add_argument("--name", default="threads")
    ap.add_argument("--from-jsonl", default=None,
                    help="comma-separated jsonl files of earlier runs: write NAME.md "
                         "from their records instead of running")
    ap.add_argument("--note", default="")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="the regimes' rows, as a share of their default size")
    ap.add_argument("--quick", action="store_true",
                    help="the issue-34 check in about 4 minutes on a quiet machine: "
                         "--solver auto --forced --reps 2 on shared_vocab_text and "
                         "orthogonal_text, hinge and logistic, Snap ML beside it, a "
                         "30 s cap on the reference fit; writes threads-quick.md")
    args = ap.parse_args(argv)
    if args.quick:
        global REF_LIMIT
        REF_LIMIT = 30.0
        args.solver, args.forced, args.reps = "auto", True, 2
        args.sets, args.losses = "shared_vocab_text,orthogonal_text", "hinge,logistic"
        if args.name == "threads":
            args.name = "threads-quick"
    args.loads = [_load_note()]
    out_dir = ROOT / "benchmarks" / "results"
    out_dir.mkdir(parents=True, exist_ok=True)
    jsonl = out_dir / f"{args.name}.jsonl"
    if args.from_jsonl:
        records = [json.loads(line) for f in args.from_jsonl.split(",")
                   for line in Path(f).read_text().splitlines() if line.strip()]
        write_md(records, out_dir / f"{args.name}.md", args, None)
        return
    costs = sdca_threads.measured_thread_costs()
    print(f"measured costs: {costs}", flush=True)
    records = []
    for name, make in datasets(args.sets.split(","), args.scale).items():
        X, y = make()
        rows = as_rows(X)
        cos = sdca_threads.mean_row_cosine(rows)
        print(f"{name}: {X.shape}, nnz={X.nnz}, mean row cosine {cos:.2f}", flush=True)
        for loss in args.losses.split(","):
            warm_up(X, y, loss)
            prob = primaldual.Problem(X, y, loss=loss, lam=LAM)
            rec = {"set": name, "n": X.shape[0], "d": X.shape[1], "nnz": int(X.nnz),
                   "cosine": cos, "loss": loss, "lam": LAM, "costs": costs._asdict()}
            t0 = time.perf_counter()
            o = ours_interleaved(X, y, loss, args.reps, args.forced, args.solver)
            rec["solver"] = args.solver
            rec["sdca_1"], rec["sdca_2"] = o[1], o[2]
            if args.forced:
                rec["sdca_2_forced"] = o["2f"]
                f = o["2f"]
                print(f"    threads forced: {fmt(f['median'])} s ({f['epochs']:.1f} ep, "
                      f"{f['threads']} threads, ratio "
                      f"{fmt(f['median'] / o[1]['median'])})", flush=True)
            s1, s2 = o[1], o[2]
            rec["ratio_2_over_1"] = (s2["median"] / s1["median"]
                                     if s1["converged"] and s2["converged"] else None)
            print(f"  {loss:8s}: 1 thread {fmt(s1['median'])} s ({s1['epochs']:.1f} ep), "
                  f"n_jobs=2 {fmt(s2['median'])} s ({s2['epochs']:.1f} ep, "
                  f"{s2['threads']} threads) ratio {fmt(rec['ratio_2_over_1'])} "
                  f"[{time.perf_counter() - t0:.0f} s]\n    {s2['reason']}", flush=True)
            if not args.no_snap:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ref = primaldual.solve(X, y, loss=loss, lam=LAM, solver="sdca",
                                           n_jobs=2, tol=1e-10, max_epochs=3000,
                                           time_limit=REF_LIMIT)
                reference = certify_reference(
                    {"ref": ref.primal, "1": s1["primal"], "2": s2["primal"]},
                    {"ref": ref.dual, "1": s1["dual"], "2": s2["dual"]}, 1e-9)
                rec["reference"] = reference
                rec["snap_2"] = snap(X, y, loss, LAM, 2, prob, reference, args.reps)
                sn = rec["snap_2"]
                if sn.get("reached"):
                    rec["snap_1"] = snap_one_thread(X, y, loss, sn["tol"], args.reps)
                    rec["snap_2_over_1"] = sn["median"] / rec["snap_1"]["median"]
                rec["ratio_2_over_snap2"] = (s2["median"] / sn["median"]
                                             if sn.get("reached") and s2["converged"]
                                             else None)
                print(f"    Snap ML n_jobs=2: {fmt(sn.get('median'))} s "
                      f"({sn.get('status')}, reached {sn.get('reached')})", flush=True)
            records.append(rec)
            with open(jsonl, "a") as fh:
                fh.write(json.dumps(rec, default=float) + "\n")
        del X, y
    args.loads.append(_load_note())
    write_md(records, out_dir / f"{args.name}.md", args, costs)


def _load_note():
    """``HH:MM UTC, load average a / b / c`` (the machine's state, for the header)."""
    try:
        load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "unknown"
    return f"{time.strftime('%H:%M', time.gmtime())} UTC, load average {load}"


def forced(r):
    f = r.get("sdca_2_forced")
    if f is None:
        return "—"
    return (f"{fmt(f['median'])} ({f['epochs']:.1f}) / "
            f"{fmt(f['median'] / r['sdca_1']['median'], 3)}")


def write_md(records, path, args, costs):
    reps = max((len(r["sdca_1"]["times"]) for r in records), default=0)
    lines = [
        "# n_jobs=2 against n_jobs=1 (benchmarks/bench_threads.py)", "",
        f"Machine: {cpu_model()}, {os.cpu_count()} logical cores, Python "
        f"{platform.python_version()}.  The machine's load is in the note at the "
        "end of this paragraph (on a machine shared with other work the absolute "
        "times are not quiet-machine times); the ratios come from interleaved repetitions "
        f"(1, 2, 1, 2, ...; {reps} each, medians) in one process.  "
        f"lam = {LAM:g}, `solve(..., solver='{records[0].get('solver', 'sdca') if records else 'sdca'}', "
        f"n_jobs=k, tol={TOL:g})` (auto: SDCA's first-pass trial times one thread "
        f"against two on the data; its legs and reason are listed below), the whole "
        "call, certified.  Snap ML: its whole `fit` with `n_jobs=2` at the loosest "
        "tolerance that reaches relative primal sub-optimality 1e-6 against the "
        "certified reference (no certificate).  'threads forced': n_jobs=2 with "
        "threads='on' (the plan's threads, no veto, no trial), i.e. what the "
        "threaded path takes on the same data."
        + (f"  Started {args.loads[0]}; ended {args.loads[-1]} (1, 5, 15 min)."
           if len(getattr(args, "loads", ())) > 1 else "")
        + (f"  {args.note}" if args.note else ""), "",
        "| set | n x d | nnz | row cosine | loss | n_jobs=1 s (epochs) | "
        "n_jobs=2 s (epochs, threads) | 2 / 1 | threads forced s (epochs) / 1 | "
        "Snap ML n_jobs=2 s | Snap 2 / Snap 1 | ours 2 / Snap 2 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in records:
        s1, s2 = r["sdca_1"], r["sdca_2"]
        sn = r.get("snap_2", {})
        snc = (fmt(sn["median"]) if sn.get("reached") else
               ("not reached" if sn.get("status") == "ok" else sn.get("status", "—")))
        lines.append(
            f"| {r['set']} | {r['n']} x {r['d']} | {r['nnz'] / 1e6:.1f}M | "
            f"{r['cosine']:.2f} | {r['loss']} | "
            f"{fmt(s1['median'])} ({s1['epochs']:.1f}){'' if s1['converged'] else ' not certified'} | "
            f"{fmt(s2['median'])} ({s2['epochs']:.1f}, {s2['threads']})"
            f"{'' if s2['converged'] else ' not certified'} | "
            f"{fmt(r['ratio_2_over_1'], 3)} | {forced(r)} | {snc} | "
            f"{fmt(r.get('snap_2_over_1'), 3)} | "
            f"{fmt(r.get('ratio_2_over_snap2'), 2)} |")
    lines += ["", "The decision for n_jobs=2 (`res.extras['threads_reason']`, or auto's legs) "
              "and the costs that process measured (its inputs: a serial step and a "
              "step on a thread copy per stored entry, a sync and a sweep per column, "
              "a wake-up, the speed-up of two threads over one on the same steps):", ""]
    for r in records:
        c = r["costs"]
        lines.append(f"- {r['set']}, {r['loss']}: {r['sdca_2']['reason']}; costs "
                     f"{c['step_entry'] * 1e9:.2f} / {c['buffered_entry'] * 1e9:.2f} ns, "
                     f"{c['flush_column'] * 1e9:.2f} / "
                     f"{c.get('sweep_column', float('nan')) * 1e9:.2f} ns, "
                     f"{c['wake'] * 1e6:.0f} us, two threads "
                     f"{c.get('two_threads', float('nan')):.2f}x one")
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
